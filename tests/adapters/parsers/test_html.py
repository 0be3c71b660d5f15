"""html/htm: readable Markdown, chrome dropped, hostile nesting bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ragline.adapters.parser.builtin.html import html_to_markdown
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.application.ports.parser import ParseEngineFailed
from tests.adapters.parsers.conftest import NAIVE, block_tokens, headings

PAGE = """<!doctype html><html><head><title>Tea guide</title>
<style>.x{color:red}</style><script>var secret = "script text";</script></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<h1>Brewing tea</h1>
<p>Use <b>fresh</b> water,
   not   reboiled.<br>Second line.</p>
<h2>Temperatures</h2>
<ul><li>Green: 80 C<ul><li>sencha</li><li>longjing</li></ul></li><li>Black: 95 C</li></ul>
<ol start="3"><li>Warm the pot</li><li>Add leaves</li></ol>
<table><caption>Steeping</caption>
<tr><th>Tea</th><th>Minutes</th></tr>
<tr><td>Green | jade</td><td>2</td></tr>
<tr><td colspan="2">varies</td></tr></table>
<h3>Code</h3>
<pre><code class="language-python">def brew(minutes):
    return minutes * 60
</code></pre>
<p>Call <code>brew(3)</code> inline.</p>
<blockquote><p>Tea is quiet.</p></blockquote>
<div hidden>hidden text</div>
<footer>Copyright footer</footer>
</body></html>"""


@pytest.fixture
def page(registry: ParserRegistry, tmp_path: Path) -> str:
    source = tmp_path / "page.html"
    source.write_text(PAGE, encoding="utf-8")
    parsed = registry.parse(source, "html", NAIVE)
    assert parsed.title == "Tea guide"
    return parsed.markdown


def test_headings_become_atx_levels(page: str) -> None:
    assert headings(page) == [(1, "Brewing tea"), (2, "Temperatures"), (3, "Code")]


def test_lists_keep_nesting_and_numbering(page: str) -> None:
    assert "- Green: 80 C\n  - sencha\n  - longjing\n- Black: 95 C" in page
    assert "3. Warm the pot\n4. Add leaves" in page


def test_tables_become_gfm(page: str) -> None:
    assert "| Tea | Minutes |\n| --- | --- |\n| Green \\| jade | 2 |\n| varies |  |" in page
    assert "table_open" in block_tokens(page)
    assert "Steeping" in page


def test_code_blocks_are_fenced(page: str) -> None:
    assert "```python\ndef brew(minutes):\n    return minutes * 60\n```" in page
    assert "Call `brew(3)` inline." in page


def test_whitespace_paragraphs_and_quotes(page: str) -> None:
    assert "Use fresh water, not reboiled.\nSecond line." in page
    assert "> Tea is quiet." in page


def test_chrome_scripts_and_hidden_content_are_dropped(page: str) -> None:
    for dropped in ("script text", "color:red", "About us", "hidden text", "Copyright footer"):
        assert dropped not in page


def test_main_element_is_preferred(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "site.htm"
    source.write_text(
        "<body><div class=menu>Menu junk</div><main><h1>Article</h1><p>Body.</p></main></body>"
    )
    assert registry.parse(source, "htm", NAIVE).markdown == "# Article\n\nBody.\n"


def test_declared_legacy_charset_is_honoured(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "legacy.html"
    source.write_bytes(
        '<meta charset="gbk"><h1>茶道</h1><p>一期一会</p>'.encode("gbk"),
    )
    assert registry.parse(source, "html", NAIVE).markdown == "# 茶道\n\n一期一会\n"


def test_nesting_just_under_the_bound_parses_iteratively(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = tmp_path / "deep.html"
    source.write_text("<section>" * 2500 + "<p>deep text</p>" + "</section>" * 2500)
    assert registry.parse(source, "html", NAIVE).markdown == "deep text\n"


def test_absurd_nesting_fails_before_tree_building(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = tmp_path / "bomb.html"
    source.write_text("<div>" * 200_000 + "x")
    with pytest.raises(ParseEngineFailed, match="nesting deeper than 3000"):
        registry.parse(source, "html", NAIVE)


def test_unclosed_paragraphs_do_not_count_as_nesting(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = tmp_path / "sloppy.html"
    source.write_text("<p>para " * 5000)
    markdown = registry.parse(source, "html", NAIVE).markdown
    assert markdown.count("para") == 5000


_TAGS = ["p", "div", "span", "b", "h1", "h3", "ul", "ol", "li", "table", "tr", "td", "th",
         "blockquote", "pre", "code", "section", "a", "br", "em"]  # fmt: skip
_WORDS = st.sampled_from(["tea", "press", "烹茶", "alpha", "beta", "gamma", "x1", "water"])


def _tree() -> st.SearchStrategy[str]:
    leaf = _WORDS
    return st.recursive(
        leaf,
        lambda children: st.tuples(st.sampled_from(_TAGS), st.lists(children, max_size=4)).map(
            lambda t: f"<{t[0]}>" + " ".join(t[1]) + f"</{t[0]}>"
        ),
        max_leaves=25,
    )


@given(_tree())
def test_random_markup_keeps_every_word_and_renders(markup: str) -> None:
    tree = LexborHTMLParser(f"<html><body>{markup}</body></html>")
    markdown, _ = html_to_markdown(tree)
    visible = tree.body.text(deep=True, separator=" ") if tree.body else ""
    for word in set(visible.split()):  # no word contains another, so counts are exact
        assert markdown.count(word) >= visible.split().count(word), word
    block_tokens(markdown)  # parses as Markdown without error
