"""Benchmark corpora: the CPython documentation as Markdown, and a Chinese Markdown document.

Both are real documents from Debian packages, converted from HTML with html2text (page main
bodies, links kept as text, code as fenced blocks) and concatenated:
- `python3.11-doc`: the CPython 3.11 documentation (/usr/share/doc/python3.11/html);
- `debian-reference-zh-cn`: the Debian Reference in Simplified Chinese (GPL, so it is not
  committed; it is converted on the machine like the CPython docs).
Results are cached under benchmarks/.cache/ (gitignored): the conversion is slower than
the benchmark. Install: `apt-get install -y python3.11-doc debian-reference-zh-cn`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HTML_ROOT = Path("/usr/share/doc/python3.11/html")
CACHE = Path(__file__).resolve().parents[1] / ".cache"
CPYTHON_MD = CACHE / "cpython-3.11-docs.md"
ZH_HTML_ROOT = Path("/usr/share/debian-reference")
CHINESE_MD = CACHE / "debian-reference-zh-cn.md"
_FENCE = re.compile(r"^[ \t]*\[/?code\][ \t]*$", re.M)
_SKIP = {"genindex", "search", "py-modindex", "contents"}


def _convert(html_files: list[Path], out: Path, package: str) -> str:
    if out.exists():
        return out.read_text(encoding="utf-8")
    if not html_files:
        raise SystemExit(f"no HTML found: run `apt-get install -y {package}`")
    import html2text
    from selectolax.lexbor import LexborHTMLParser

    pages = []
    for path in html_files:
        tree = LexborHTMLParser(path.read_text(encoding="utf-8", errors="replace"))
        body = tree.css_first("div.body") or tree.body
        if body is None:
            continue
        for node in body.css("a.headerlink, div.navheader, div.navfooter"):
            node.decompose()
        conv = html2text.HTML2Text()
        conv.body_width = 0
        conv.ignore_images = True
        conv.ignore_links = True
        conv.mark_code = True
        page = conv.handle(body.html or "").strip()
        pages.append(_FENCE.sub("```", page))
    text = "\n\n".join(pages) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text


def cpython_markdown() -> str:
    """The CPython docs as one Markdown string (converted once, then read from the cache)."""
    files = [
        p
        for p in sorted(HTML_ROOT.rglob("*.html"))
        if not p.relative_to(HTML_ROOT).parts[0].startswith("_")
        and p.stem.split("-")[0] not in _SKIP
    ]
    return _convert(files, CPYTHON_MD, "python3.11-doc")


def chinese_markdown() -> str:
    """The Debian Reference (Simplified Chinese) as one Markdown string."""
    return _convert(sorted(ZH_HTML_ROOT.glob("*.zh-cn.html")), CHINESE_MD, "debian-reference-zh-cn")


if __name__ == "__main__":
    for path, md in ((CPYTHON_MD, cpython_markdown()), (CHINESE_MD, chinese_markdown())):
        sys.stdout.write(f"{path}: {len(md.encode('utf-8')) / 1e6:.2f} MB, {len(md)} chars\n")
