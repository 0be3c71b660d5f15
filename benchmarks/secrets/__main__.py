"""Secret-mask benchmark: `.venv/bin/python -m benchmarks.secrets`.

Every failure reason, problem detail and log line passes the secret mask, and an error text
is the remote's: it may be long and hostile. This measures the mask on hostile texts of
growing size (one long word, a repeated `api_key=`, repeated `http://u:`, a long bearer
token) with 100 known secrets, and the unbounded patterns the log formatter used before
(`before`, on smaller sizes: they are quadratic). Best of 3. Writes
benchmarks/results/secret_mask.json and prints it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragline.application.secrets import SecretMask

RESULTS = Path(__file__).resolve().parents[1] / "results" / "secret_mask.json"

_OLD_URL = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)(?P<user>[^:/@\s]*):[^@/\s]*@")
_OLD_TOKEN = r"(?=[^\s\"',;&]*\d)[A-Za-z0-9._~+/=-]{8,}"
_OLD_KEY = re.compile(rf"(?i)(?P<lead>\b(?:x-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?){_OLD_TOKEN}")


def before(text: str) -> str:
    """The unbounded shapes (the log formatter's URL pattern and an unbounded api_key=)."""
    text = _OLD_URL.sub(lambda m: f"{m['scheme']}{m['user']}:***@", text)
    return _OLD_KEY.sub(lambda m: f"{m['lead']}***", text)


TEXTS: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: "a" * n,
    "repeated api_key=": lambda n: "api_key=" * (n // 8),
    "repeated http://u:": lambda n: "http://u:" * (n // 9),
    "a long bearer token": lambda n: "Bearer 1" + "a" * (n - 8),
}


def best(mask: Callable[[str], str], text: str, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        mask(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    mask = SecretMask(f"sk-known-{i:04d}-Zq8vW3nT6yB1" for i in range(100))
    rows: list[dict[str, Any]] = []
    for name, make in TEXTS.items():
        for size in (10_000, 100_000, 1_000_000):
            rows.append(
                {"text": name, "chars": size, "mask": "now", "seconds": best(mask, make(size))}
            )
        for size in (5_000, 10_000, 20_000):
            rows.append(
                {
                    "text": name,
                    "chars": size,
                    "mask": "before",
                    "seconds": best(before, make(size), 1),
                }
            )
    for row in rows:
        row["seconds"] = round(row["seconds"], 4)
        print(
            f"{row['mask']:>6}  {row['text']:<22} {row['chars']:>9,} chars  {row['seconds']:.4f} s"
        )
    report = {
        "rows": rows,
        "known_secrets": 100,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten {RESULTS}")


if __name__ == "__main__":
    main()
