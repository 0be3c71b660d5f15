"""Each action of the tenant campaign once, on a fresh world, with what it found: which
actions a broken build lets through, one by one (the campaign itself stops at the first).

    .venv/bin/python -m tests.tenancy.each_action                  # the build of this tree
    PYTHONPATH=<a mutant tree>:. .venv/bin/python -m tests.tenancy.each_action
    .venv/bin/python -m tests.tenancy.each_action parse_own enumerate_batch_ids

The world: three documents of three tenants (txt over the tenant's token, txt from the
service, docx with its picture on the broker) and a FAILED run of a second tenant; the
attacker is 1001. Prints one line per action: `ok`, or `FAIL` with the property (a
`Violation`) or the agreed answer it missed (`AssertionError`). Not a test: a look.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import NonInteractiveExampleWarning

from tests.tenancy.attacks import ATTACKS, victims_for
from tests.tenancy.world import World


def drawer(seed: int) -> Any:
    """A stand-in for Hypothesis' draw: a seeded choice for sampled_from and integers, an
    example for anything else."""
    rng = random.Random(seed)

    def draw(strategy: st.SearchStrategy[Any]) -> Any:
        elements = getattr(strategy, "elements", None)
        if elements is not None:
            return rng.choice(list(elements))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonInteractiveExampleWarning)
            return strategy.example()

    return draw


def main(names: list[str]) -> int:
    draw = drawer(1)
    found = 0
    for attack in ATTACKS:
        if names and attack.__name__ not in names:
            continue
        world = World(Path(tempfile.mkdtemp(prefix="ragline-each-action-")))
        world.start()
        try:
            for user, kind, via in (
                ("1001", "txt", "tenant"),
                ("2002", "txt", "service"),
                ("3003", "docx", "broker"),
            ):
                world.ingest(world.new_doc(user, "1", 1, ["tea", "leaf"], True, kind), via)
            world.ingest(world.new_doc("2002", "2", 2, ["kettle"], False, "txt"), "service")
            victim = draw(st.sampled_from(victims_for(world, attack, "1001")))
            started = time.monotonic()
            try:
                attack(world, draw, "1001", victim)
                print(f"ok   {attack.__name__} ({time.monotonic() - started:.2f} s)")
            except AssertionError as failure:
                found += 1
                text = " ".join(str(failure).split())[:240]
                print(f"FAIL {attack.__name__}: {type(failure).__name__}: {text}")
        finally:
            world.stop()
    print(f"{found} of the actions failed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
