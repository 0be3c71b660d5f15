"""Hostile files campaign: every hostile file fails alone, within its limits.

    .venv/bin/python -m campaigns.hostile_files [--single-line-mb 50] [--no-ingest]

Part 1, per file: each case runs in its own child process (`--case NAME FOLDER`) that opens a
real SandboxedParser with the default options and limits, starts the worker, parses the
file, parses a good file after it with the same sandbox, closes it and reports the verdict,
the parse time and the sandbox worker's peak RSS (RUSAGE_CHILDREN of that child: only its
own worker, reaped). The verdict must be the one `EXPECTED` gives; time and memory must stay
under the limits.
Part 2: `ragline ingest` of one folder holding the sample documents and a few hostile files:
the hostile ones fail with their codes, every good one ends SUCCESS.
Writes benchmarks/results/hostile_files.json and prints the table for docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess  # the campaign runs itself and `ragline` as children  # nosec B404
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from campaigns.hostile_files.cases import CODE_OF, judge, run_case
from ragline.testing.files.hostile import EXPECTED, write_hostile_files

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "docs"
RESULTS = ROOT / "benchmarks" / "results" / "hostile_files.json"
INGESTED_HOSTILE = [
    "zip-bomb.docx",
    "random-bytes.pdf",
    "docx-named.pdf",
    "truncated.pdf",
    "encrypted.pdf",
    "binary-renamed.md",
    "deeply-nested.html",
    "single-line.txt",
]


def per_file(folder: Path) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(EXPECTED):
        done = subprocess.run(  # our interpreter, our module, no shell  # nosec B603
            [
                sys.executable,
                "-m",
                "campaigns.hostile_files",
                "--case",
                name,
                str(folder),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"case {name} crashed the campaign child:\n{done.stderr[-2000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row["expected"] = EXPECTED[name]
        row["problems"] = judge(row, EXPECTED[name])
        rows.append(row)
        print(f"{name:<22} {row['verdict']:<12} {row['seconds']:>8.3f} s "
              f"{row['worker_peak_rss_mib']:>7.1f} MiB  {'; '.join(row['problems']) or 'ok'}",
              file=sys.stderr)  # fmt: skip
    return rows


def ingest_folder(hostile: Path, work: Path) -> dict[str, Any]:
    """`ragline ingest` of samples + hostile files in one folder, on embedded defaults."""
    folder = work / "mixed"
    folder.mkdir()
    for sample in SAMPLES.iterdir():
        shutil.copy(sample, folder / sample.name)
    for name in INGESTED_HOSTILE:
        shutil.copy(hostile / name, folder / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLINE_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    started = time.perf_counter()
    done = subprocess.run(  # the installed CLI next to this interpreter  # nosec B603
        [str(Path(sys.executable).with_name("ragline")), "--data-dir", str(work / "data"),
         "ingest", str(folder), "--json"],
        capture_output=True, text=True, timeout=1800, env=env, cwd=work, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    summary = json.loads(done.stdout)
    files = {Path(str(f["file"])).name: f for f in summary["files"]}
    outcome = {}
    for name, entry in sorted(files.items()):
        code = entry.get("failure_code") or "-"
        outcome[name] = {"status": entry["status"], "code": code}
    expected_codes = {name: CODE_OF[EXPECTED[name]] for name in INGESTED_HOSTILE}
    problems = [
        f"{name}: {outcome.get(name)} (expected FAILED {code})"
        for name, code in expected_codes.items()
        if outcome.get(name, {}).get("code") != code
    ] + [
        f"{sample.name}: {outcome.get(sample.name)} (expected success)"
        for sample in SAMPLES.iterdir()
        if outcome.get(sample.name, {}).get("code") != "-"
    ]
    return {
        "exit_code": done.returncode,
        "seconds": round(seconds, 1),
        "files": outcome,
        "problems": problems,
    }


def markdown_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| file | size | outcome | time (s) | worker peak RSS (MiB) | next file parsed |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        size = row["bytes"]
        shown = f"{size / 1024**2:.1f} MB" if size >= 1024**2 else f"{size:,} B"
        lines.append(
            f"| {row['file']} | {shown} | {row['code']} | {row['seconds']:.3f} "
            f"| {row['worker_peak_rss_mib']:.0f} | {'yes' if row['next_file_parsed'] else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--single-line-mb", type=float, default=50.0)
    parser.add_argument("--no-ingest", action="store_true", help="skip part 2 (ragline ingest)")
    parser.add_argument("--case", nargs=2, metavar=("NAME", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        name, folder = args.case
        print(json.dumps(run_case(Path(folder) / name)))
        return
    with tempfile.TemporaryDirectory(prefix="hostile-campaign-") as temp:
        work = Path(temp)
        hostile = work / "hostile"
        write_hostile_files(hostile, int(args.single_line_mb * 1024**2))
        rows = per_file(hostile)
        ingest = None if args.no_ingest else ingest_folder(hostile, work)
    result = {
        "campaign": "hostile_files",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "single_line_mb": args.single_line_mb,
        "per_file": rows,
        "ingest": ingest,
        "all_as_expected": not any(r["problems"] for r in rows)
        and not (ingest and ingest["problems"]),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown_table(rows))
    if ingest:
        print(json.dumps(ingest, indent=2))
    if not result["all_as_expected"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
