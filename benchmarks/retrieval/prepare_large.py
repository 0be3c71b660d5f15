"""Prepare the large development corpus (>= 30,000 children) from Debian documentation packages.

    apt-get install -y --no-install-recommends debian-reference-en debian-reference-zh-cn \
        debian-handbook git-doc bash-doc debian-policy developers-reference debian-faq \
        debian-faq-zh-cn maint-guide maint-guide-zh-cn zsh-doc harden-doc \
        debian-edu-doc-en debian-edu-doc-zh-cn
    .venv/bin/python -m benchmarks.retrieval.prepare_large --out /work/wt/retrieval-data/corpus
    .venv/bin/ragline ingest /work/wt/retrieval-data/corpus --data-dir /work/wt/retrieval-data/data

The small sets (prepare.py: ~1k children a language) have no distractors; the held-out
paraphrases run over ~34k chunks, where the answer is often outside every retriever's top 40.
This corpus is of that size: English and Simplified Chinese manuals, one folder per package
(HTML as the packages ship it, nothing third-party committed), ingested as one dataset, so the
English questions meet ~30k English children and the Chinese ones ~6k Chinese children
plus all the English. Left out: the CPython and PostgreSQL docs and Debian's Chinese man pages
(the held-out corpora), single-page copies of split manuals (developers-reference.html,
debian-edu's bullseye manual), and plain-text duplicates of HTML pages.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "retrieval" / "large"
DOC = Path("/usr/share/doc")
# folder in the corpus -> (package, [(root, glob), ...]); globs are relative to root.
SOURCES: dict[str, tuple[str, list[tuple[Path, str]]]] = {
    "en/debian-reference": (
        "debian-reference-en",
        [(Path("/usr/share/debian-reference"), "ch*.en.html")],
    ),
    "en/debian-handbook": ("debian-handbook", [(DOC / "debian-handbook/html/en-US", "*.html")]),
    "en/git": ("git-doc", [(DOC / "git-doc", "**/*.html")]),
    "en/bash": ("bash-doc", [(DOC / "bash", "bashref.html")]),
    "en/debian-policy": ("debian-policy", [(DOC / "debian-policy", "**/*.html")]),
    "en/developers-reference": (
        "developers-reference",
        [(Path("/usr/share/developers-reference"), "[!di]*.html")],
    ),
    "en/debian-faq": ("debian-faq", [(DOC / "debian/FAQ", "*.en.html")]),
    "en/maint-guide": ("maint-guide", [(DOC / "maint-guide/html", "*.en.html")]),
    "en/zsh": ("zsh-doc", [(DOC / "zsh-doc/html", "*.html")]),
    "en/harden-doc": ("harden-doc", [(DOC / "harden-doc/html/en-US", "*.html")]),
    "en/debian-edu": ("debian-edu-doc-en", [(DOC / "debian-edu-doc-en", "*bookworm*.html")]),
    "zh/debian-reference": (
        "debian-reference-zh-cn",
        [(Path("/usr/share/debian-reference"), "ch*.zh-cn.html")],
    ),
    "zh/debian-handbook": ("debian-handbook", [(DOC / "debian-handbook/html/zh-CN", "*.html")]),
    "zh/harden-doc": ("harden-doc", [(DOC / "harden-doc/html/zh-CN", "*.html")]),
    "zh/debian-faq": ("debian-faq-zh-cn", [(DOC / "debian/FAQ/zh-cn", "*.html")]),
    "zh/maint-guide": ("maint-guide-zh-cn", [(DOC / "maint-guide-zh-cn/html", "*.html")]),
    "zh/debian-edu": (
        "debian-edu-doc-zh-cn",
        [(DOC / "debian-edu-doc-zh-cn", "*bookworm*.html")],
    ),
}


def prepare(out: Path = CACHE) -> dict[str, int]:
    """Copy each package's pages into `out/<lang>/<package>`; returns files per folder."""
    counts: dict[str, int] = {}
    missing: list[str] = []
    for folder, (package, globs) in SOURCES.items():
        pages = sorted({p for root, pattern in globs for p in root.glob(pattern) if p.is_file()})
        if not pages:
            missing.append(package)
            continue
        target = out / folder
        target.mkdir(parents=True, exist_ok=True)
        for page in pages:
            root = next(r for r, _ in globs if page.is_relative_to(r))
            name = "_".join(page.relative_to(root).parts)  # flat: howto/x.html -> howto_x.html
            shutil.copyfile(page, target / name)
        counts[folder] = len(pages)
    if missing:
        sys.exit(f"missing packages: apt-get install -y {' '.join(sorted(set(missing)))}")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=CACHE)
    args = ap.parse_args()
    for folder, count in prepare(args.out).items():
        print(f"{folder}: {count} files")


if __name__ == "__main__":
    main()
