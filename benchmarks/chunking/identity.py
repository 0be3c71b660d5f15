"""Output identity against an older commit: `python -m benchmarks.chunking.identity COMMIT`.

A speed change to the chunker must not change what it produces. For each preset checked and
both benchmark corpora this compares, field by field, every parent and child (text, spans,
anchors, source, order) and the cleanup report of the working tree's engine with the one at
COMMIT (loaded as the baseline benchmark loads it), and the line-scan tree the parents were
cut from. Exits 1 on the first difference, naming it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from itertools import zip_longest
from types import ModuleType
from typing import Any

from benchmarks.chunking.baseline import load_engine
from benchmarks.chunking.corpus import chinese_markdown, cpython_markdown

PRESETS = ("default", "fine", "coarse", "structure", "tokens")


def _plain(value: Any) -> Any:
    """Enums of two copies of the package compare unequal: compare their values."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return str(value) if hasattr(value, "value") else value


def _records(chunking: ModuleType, structure: ModuleType, md: str, name: str) -> Iterator[Any]:
    """Everything observable about one run, as plain values, in output order."""
    tree = structure.LineScanStructureBuilder().build(md, blocks=name == "structure")
    for node in tree.nodes:
        yield ("node", _plain(tuple(node)))
    result = chunking.chunk_document(md, chunking.preset(name), tree=tree)
    for p in result.parents:
        yield ("parent", _plain(tuple(p[:9])))
        for c in p.children:
            yield ("child", _plain(tuple(c[:8])), c.text)
    r = result.report
    yield ("report", str(r.parent_path), r.blank_dropped, r.duplicates_dropped)
    yield ("duplicate spans", r.duplicate_parent_spans, r.fallbacks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("commit")
    args = ap.parse_args()
    import ragline.adapters.structure.markdown as structure
    import ragline.domain.chunking as chunking

    old_chunking, old_structure = load_engine(args.commit)
    corpora = {"cpython-docs": cpython_markdown(), "chinese": chinese_markdown()}
    failed = False
    for corpus, md in corpora.items():
        for name in PRESETS:
            new = _records(chunking, structure, md, name)
            old = _records(old_chunking, old_structure, md, name)
            count, diff = 0, None
            for count, (a, b) in enumerate(zip_longest(new, old), 1):
                if a != b:
                    diff = f"record {count}:\n  new {a!r:.300}\n  old {b!r:.300}"
                    break
            if diff is not None:
                print(f"DIFF {corpus} {name} {diff}")
                failed = True
            else:
                print(f"same {corpus:13} {name:9} {count} records")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
