"""Gold files for `ragline eval` from the hand-written questions (benchmarks/retrieval/questions).

    .venv/bin/python -m benchmarks.retrieval.make_gold                  # paraphrased sets
    .venv/bin/python -m benchmarks.retrieval.make_gold --known en=DATA_DIR zh=DATA_DIR
    .venv/bin/python -m benchmarks.retrieval.make_gold --known large-en=DIR large-zh=DIR

The large sets (questions/large-<lang>.tsv -> gold/large-<lang>-{dev,test}.jsonl) are asked of
the ~34k-children corpus of prepare_large.py; their third column names the corpus folder
(= Debian package) whose pages hold the answer, and the snippets are copied from those pages.

questions/<lang>.tsv holds one question a line: the question as a user would ask it, a tab,
then the answer snippet quoted verbatim from the Debian Reference (debian-reference-en /
debian-reference-zh-cn, GPL-2+, Osamu Aoki). Every fifth question from the second and fourth
on goes to the test split (40 %), the rest to dev (60 %): tuning looks at dev only.

`--known` writes the easy known-item sets: a sentence of 8-20 words (or 12-40 Han characters)
taken from 60 children drawn with a fixed seed, asked as it stands; its snippet is itself.
`large-<lang>=DIR` draws them from the large corpus (gold/large-<lang>-known.jsonl): exact
look-ups among ~33k children, as the held-out known items are.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
from pathlib import Path

from benchmarks.retrieval.prepare_large import SOURCES as LARGE_CORPUS

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions"
GOLD = HERE / "gold"
SOURCES = {
    "en": "Debian Reference, English (debian-reference-en), chapters 1-8",
    "zh": "Debian Reference, Simplified Chinese (debian-reference-zh-cn)",
    "large-en": "the large corpus of benchmarks.retrieval.prepare_large (Debian packages)",
    "large-zh": "the large corpus of benchmarks.retrieval.prepare_large (Debian packages)",
}
LARGE_SOURCE = "Debian package {package} (folder {folder} of benchmarks.retrieval.prepare_large)"
LARGE_PACKAGES = {folder: package for folder, (package, _) in LARGE_CORPUS.items()}
TEST_SLOTS = {1, 3}  # question number % 5
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def split_of(number: int) -> str:
    return "test" if number % 5 in TEST_SLOTS else "dev"


def paraphrased(lang: str, large: bool = False) -> dict[str, list[dict[str, str]]]:
    sets: dict[str, list[dict[str, str]]] = {"dev": [], "test": []}
    name = f"large-{lang}" if large else lang
    lines = (QUESTIONS / f"{name}.tsv").read_text("utf-8").splitlines()
    for number, line in enumerate((x for x in lines if x.strip()), start=1):
        query, snippet, *folder = line.split("\t")
        source = SOURCES[lang]
        if large:
            package = LARGE_PACKAGES[folder[0]]
            source = LARGE_SOURCE.format(package=package, folder=folder[0])
        sets[split_of(number)].append(
            {
                "id": f"{name}-{number:03d}",
                "query": query.strip(),
                "relevant_snippet": snippet.strip(),
                "source": source,
            }
        )
    return sets


def known_items(name: str, data_dir: Path, count: int = 60) -> list[dict[str, str]]:
    lang = name.removeprefix("large-")
    db = sqlite3.connect(data_dir / "ragline.db")
    texts = [t for (t,) in db.execute("SELECT text FROM chunk WHERE parent_id IS NOT NULL")]
    rng = random.Random(13)
    rng.shuffle(texts)
    items: list[dict[str, str]] = []
    for text in texts:
        for sentence in (s.strip() for s in _SENTENCE.findall(text)):
            plain = not any(c in sentence for c in "`|*#[]")
            size = len(_HAN.findall(sentence)) if lang == "zh" else len(sentence.split())
            wanted = (12 <= size <= 40) if lang == "zh" else (8 <= size <= 20)
            if plain and wanted:
                number = len(items) + 1
                items.append(
                    {
                        "id": f"{name}-known-{number:03d}",
                        "query": sentence,
                        "relevant_snippet": sentence,
                        "source": SOURCES[name],
                    }
                )
                break
        if len(items) == count:
            break
    return items


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    print(f"{path.relative_to(HERE.parents[1])}: {len(rows)} questions")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--known", nargs="*", default=[], help="LANG=DATA_DIR of an ingested corpus")
    args = ap.parse_args()
    GOLD.mkdir(exist_ok=True)
    if not args.known:
        for lang in SOURCES:
            for split, rows in paraphrased(lang).items():
                _write(GOLD / f"{lang}-{split}.jsonl", rows)
            for split, rows in paraphrased(lang, large=True).items():
                _write(GOLD / f"large-{lang}-{split}.jsonl", rows)
    for pair in args.known:
        name, data_dir = pair.split("=", 1)
        _write(GOLD / f"{name}-known.jsonl", known_items(name, Path(data_dir)))


if __name__ == "__main__":
    main()
