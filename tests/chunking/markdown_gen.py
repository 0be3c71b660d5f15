"""Hypothesis strategies for Markdown documents: headings, paragraphs (Latin and CJK), lists,
tables, fenced code (with '#' lines that are not headings), quotes, repeated paragraphs."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "x", "y2"]
CJK = list(
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年同工也能下过子说产种面而方后多定行学法所民得经"
)
LONG_WORD = st.integers(20, 90).map(lambda n: "w" * n)  # an unsplittable-looking token


@st.composite
def latin_sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.one_of(st.sampled_from(WORDS), LONG_WORD), min_size=1, max_size=14))
    end = draw(st.sampled_from([".", "!", "?", ";", ",", ""]))
    return " ".join(words) + end


@st.composite
def cjk_sentence(draw: st.DrawFn) -> str:
    chars = draw(st.lists(st.sampled_from(CJK), min_size=1, max_size=40))
    clause = draw(st.sampled_from(["", "，", "、"]))
    more = draw(st.lists(st.sampled_from(CJK), max_size=20))
    end = draw(st.sampled_from(["。", "！", "？", "；", ""]))
    return "".join(chars) + clause + "".join(more) + end


sentence = st.one_of(latin_sentence(), cjk_sentence())


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    sentences = draw(st.lists(sentence, min_size=1, max_size=8))
    sep = draw(st.sampled_from([" ", "", "\n"]))
    return sep.join(sentences)


@st.composite
def bullet_list(draw: st.DrawFn) -> str:
    items = draw(st.lists(sentence, min_size=1, max_size=6))
    marker = draw(st.sampled_from(["-", "*", "1."]))
    return "\n".join(f"{marker} {i}" for i in items)


@st.composite
def table(draw: st.DrawFn) -> str:
    rows = draw(
        st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(CJK)), min_size=1, max_size=5)
    )
    lines = ["| name | 值 |", "| --- | --- |", *(f"| {a} | {b} |" for a, b in rows)]
    return "\n".join(lines)


@st.composite
def code_fence(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(
            st.sampled_from(["# not a heading", "x = 1", "print(x)", "", "    return y"]),
            max_size=8,
        )
    )
    fence = draw(st.sampled_from(["```", "~~~"]))
    return "\n".join([fence + draw(st.sampled_from(["", "python"])), *lines, fence])


@st.composite
def quote(draw: st.DrawFn) -> str:
    return "> " + draw(sentence)


@st.composite
def heading(draw: st.DrawFn) -> str:
    level = draw(st.integers(1, 4))
    title = draw(
        st.one_of(
            st.sampled_from(WORDS),
            st.lists(st.sampled_from(CJK), min_size=1, max_size=6).map("".join),
        )
    )
    return "#" * level + " " + title


block = st.one_of(paragraph(), bullet_list(), table(), code_fence(), quote())


@st.composite
def markdown_document(draw: st.DrawFn) -> str:
    """A document; some paragraphs repeat (exercises duplicate cleanup)."""
    parts: list[str] = []
    if draw(st.booleans()):
        parts.append(draw(block))
    for _ in range(draw(st.integers(0, 8))):
        parts.append(draw(heading()))
        for _ in range(draw(st.integers(0, 4))):
            if parts and draw(st.integers(0, 9)) == 0:
                parts.append(parts[-1])  # a repeated block
            else:
                parts.append(draw(block))
    seps = draw(
        st.lists(
            st.sampled_from(["\n\n", "\n\n\n", "\n \n", "\n\n  "]),
            min_size=len(parts),
            max_size=len(parts),
        )
    )
    doc = "".join(p + s for p, s in zip(parts, seps, strict=True))
    return draw(st.sampled_from(["", "  \n", "\n"])) + doc
