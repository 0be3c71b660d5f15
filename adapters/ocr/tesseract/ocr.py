"""tesseract as a child process: one page image in, its text out.

Chosen over rapidocr-onnxruntime after measuring both on rendered Chinese and English pages
(docs/parsing.md, benchmarks/results/ocr.json): the same accuracy there, about 14× the
pages/s on this machine, and no model files in a wheel. The CLI is called directly (pytesseract
only wraps it); one thread per process (OMP_THREAD_LIMIT=1) because the parse sandbox already
runs one parse per worker and the machine is shared.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess  # runs the tesseract CLI  # nosec B404
from functools import cache
from pathlib import Path

from ragline.application.ports.ocr import OcrFailed

DEFAULT_LANGUAGES = "chi_sim+eng"
_CJK = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_GAP = re.compile(rf"(?<={_CJK})[ \t]+(?={_CJK})")


@cache
def _installed_languages(binary: str) -> frozenset[str]:
    try:
        done = subprocess.run(  # fixed argv, no shell  # nosec B603
            [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.strip() for line in done.stdout.splitlines()[1:] if line.strip())


def tidy(text: str) -> str:
    """Drop the spaces tesseract puts between CJK characters, trim lines, keep paragraphs."""
    lines = [_CJK_GAP.sub("", line).strip() for line in text.replace("\f", "\n").splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class TesseractOcr:
    """PageOcr: ``tesseract IMAGE stdout -l LANGS --psm 3``."""

    def __init__(self, languages: str = DEFAULT_LANGUAGES, binary: str = "tesseract") -> None:
        self._languages = languages
        self._binary = binary

    @property
    def engine(self) -> str:
        return "tesseract"

    def available(self) -> bool:
        path = shutil.which(self._binary)
        if path is None:
            return False
        wanted = set(self._languages.split("+"))
        return wanted <= _installed_languages(path)

    def recognise(self, image: Path, timeout_seconds: float) -> str:
        if not self.available():
            raise OcrFailed(
                f"OCR engine unavailable: tesseract with languages {self._languages} "
                "is not installed (apt-get install tesseract-ocr tesseract-ocr-chi-sim)"
            )
        command = [self._binary, str(image), "stdout", "-l", self._languages, "--psm", "3"]
        try:
            done = subprocess.run(  # fixed argv, no shell  # nosec B603
                command,
                capture_output=True,
                timeout=timeout_seconds,
                check=False,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
            )
        except subprocess.TimeoutExpired:
            raise OcrFailed(f"OCR timed out after {timeout_seconds:g}s") from None
        except OSError as exc:
            raise OcrFailed(f"cannot run tesseract: {exc.strerror or exc}") from None
        if done.returncode != 0:
            stderr = done.stderr.decode("utf-8", "replace")
            last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no message")
            raise OcrFailed(f"tesseract failed (exit {done.returncode}): {last}"[:300])
        return tidy(done.stdout.decode("utf-8", "replace"))
