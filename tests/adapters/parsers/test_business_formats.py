"""Slides, spreadsheets, delimited tables, e-books and mail: Markdown whose headings are the
format's own signals (slides, sheets, chapters, subjects), so the structure tree built from it
gives the right section paths; plus the hostile inputs each format invites."""

from __future__ import annotations

import csv
import io
import time
from email.message import EmailMessage
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from ebooklib import epub
from pptx.util import Inches, Pt

from ragline.adapters.parser.builtin.eml import MAX_DEPTH, shift_headings
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.adapters.parser.builtin.table_blocks import BLOCK_CHARS
from ragline.adapters.structure.markdown import LineScanStructureBuilder
from ragline.application.chunking import ChunkDocument
from ragline.application.ports.parser import (
    InvalidFileContent,
    ParsedDocument,
    ParseEngineFailed,
    ParseLimits,
    ParseOptions,
    UnsupportedFileType,
)
from ragline.testing.files.business_formats import (
    far_corner_xlsx,
    huge_dimension_xlsx,
    recursive_eml,
    small_epub,
    zip_bomb_xlsx,
)
from tests.adapters.parsers.conftest import headings

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "docs"
OPTIONS = ParseOptions()


def parse(path: Path) -> ParsedDocument:
    return ParserRegistry().parse(path, path.suffix[1:], OPTIONS)


def section_of(markdown: str, phrase: str) -> tuple[str, ...]:
    """The section path of the innermost section holding `phrase`, from the same structure
    builder the pipeline uses."""
    tree = LineScanStructureBuilder().build(markdown, blocks=False)
    at = markdown.index(phrase)
    inner = [s for s in tree.sections() if s.start <= at < s.end]
    return inner[-1].section_path if inner else ()


# -- pptx ----------------------------------------------------------------------------------
def test_pptx_sample_one_section_per_slide_with_notes_below() -> None:
    parsed = parse(SAMPLES / "composting-at-home.pptx")
    assert parsed.title == "Composting at Home"
    assert [h for h in headings(parsed.markdown) if h[0] == 1] == [
        (1, "Composting at Home"),
        (1, "Why Compost at Home"),
        (1, "Greens and Browns"),
        (1, "Turning and Moisture"),
        (1, "What Goes In"),
    ]
    md = parsed.markdown
    assert section_of(md, "three parts browns") == ("Greens and Browns",)
    assert section_of(md, "smell of forest floor") == ("Greens and Browns", "Speaker notes")
    assert "- Mix roughly three parts browns to one part greens by volume" in md
    assert "| Dry leaves | Brown | Shred them for speed |" in md
    assert section_of(md, "Dry leaves") == ("What Goes In",)
    assert md.count("Greens and Browns") == 1  # the title placeholder is the heading only


def test_pptx_reading_order_groups_pictures_and_escaped_text(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    low = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(4), Inches(1))
    low.text_frame.text = "# bottom text, not a heading"
    right = slide.shapes.add_textbox(Inches(5), Inches(1), Inches(4), Inches(1))
    right.text_frame.text = "top right"
    left = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1))
    left.text_frame.text = "top left"
    group = slide.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1))
    inner.text_frame.text = "grouped middle"
    image = tmp_path / "dot.png"
    _png(image)
    picture = slide.shapes.add_picture(str(image), Inches(6), Inches(3), Pt(20), Pt(20))
    picture._element.nvPicPr.cNvPr.set("descr", "a compost bin diagram")
    path = tmp_path / "order.pptx"
    deck.save(str(path))
    md = parse(path).markdown
    order = ["top left", "top right", "grouped middle", "compost bin diagram", "bottom text"]
    positions = [md.index(text) for text in order]
    assert positions == sorted(positions), md
    assert md.startswith("# Slide 1\n")  # untitled slide: numbered
    assert "[Image: a compost bin diagram]" in md
    assert [h[1] for h in headings(md)] == ["Slide 1"]  # '# bottom text' stayed text


def test_pptx_shape_of_a_kind_python_pptx_does_not_know_is_read_for_its_text(
    tmp_path: Path,
) -> None:
    from pptx.enum.shapes import MSO_SHAPE

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Odd shapes"
    shape = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(1), Inches(2), Inches(3), Inches(1))
    shape.text_frame.text = "text in a geometry-less shape"
    geometry = shape._element.spPr.find(
        "{http://schemas.openxmlformats.org/drawingml/2006/main}prstGeom"
    )
    shape._element.spPr.remove(geometry)  # now python-pptx's shape_type raises
    with pytest.raises(NotImplementedError):
        _ = shape.shape_type
    path = tmp_path / "odd.pptx"
    deck.save(str(path))
    md = parse(path).markdown
    assert section_of(md, "geometry-less shape") == ("Odd shapes",)


def _png(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4), (0, 128, 0)).save(path)


# -- xlsx ----------------------------------------------------------------------------------
def test_xlsx_sample_one_section_per_sheet_and_cached_formula_values() -> None:
    md = parse(SAMPLES / "bicycle-maintenance.xlsx").markdown
    assert [h for h in headings(md)] == [(1, "Maintenance"), (1, "Tyre Pressure")]
    assert "| 32 | 70 | 4.8 |" in md  # =ROUND(B4*0.0689476,1), by its cached value
    assert "ROUND(" not in md
    assert section_of(md, "Replace the bicycle chain") == ("Maintenance",)


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_every_child_chunk_of_a_long_sheet_keeps_the_header(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Orders"
    sheet.append(["Order", "Customer", "City", "Amount"])
    for n in range(400):
        sheet.append([n, f"customer number {n}", ["Lyon", "Oslo", "Kyoto"][n % 3], n * 1.5])
    path = tmp_path / "orders.xlsx"
    book.save(path)
    md = parse(path).markdown
    header = "| Order | Customer | City | Amount |"
    blocks = [b for b in md.split("\n\n") if b.startswith("|")]
    assert len(blocks) > 20
    assert all(b.startswith(header + "\n| --- |") for b in blocks)
    assert all(len(b) <= BLOCK_CHARS for b in blocks)
    result = ChunkDocument(LineScanStructureBuilder())(md)
    children = [c for p in result.parents for c in p.children]
    assert len(children) > 20
    for child in children:
        rows = _table_rows(child.text)
        assert rows and rows[0] == header, child.text
    assert {p.section_path for p in result.parents} == {("Orders",)}
    body = {r for c in children for r in _table_rows(c.text)} - {
        header,
        "| --- | --- | --- | --- |",
    }
    assert len(body) == 400  # every row in some child, none lost


def test_declared_dimension_of_a_billion_cells_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "huge-dimension.xlsx"
    path.write_bytes(huge_dimension_xlsx())
    with SandboxedParser(max_workers=1) as sandbox:
        parsed = sandbox.parse(path, "xlsx", ParseOptions(limits=ParseLimits(max_seconds=20)))
    assert parsed.markdown == "# Sheet\n\n| a | b |\n| --- | --- |\n"
    corner = tmp_path / "far-corner.xlsx"
    corner.write_bytes(far_corner_xlsx())
    parsed = ParserRegistry().parse(corner, "xlsx", OPTIONS)
    assert parsed.markdown == "# Sheet\n\n| a | b |\n| --- | --- |\n"
    assert parsed.warnings == ["sheet 'Sheet': columns beyond 512 dropped"]


def test_sparse_wide_sheet_is_trimmed_and_bounded(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet["A1"], sheet["B1"] = "name", "value"
    sheet["A2"], sheet["B2"] = "alpha", 1
    sheet.cell(3, 16000).value = "far away"
    path = tmp_path / "wide.xlsx"
    book.save(path)
    parsed = parse(path)
    assert "far away" not in parsed.markdown
    assert parsed.warnings == ["sheet 'Sheet': columns beyond 512 dropped"]
    assert "| alpha | 1 |" in parsed.markdown


def test_xlsx_output_limit_fails_while_streaming(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    for n in range(20_000):
        book.active.append([n, "row text"])
    path = tmp_path / "long.xlsx"
    book.save(path)
    options = ParseOptions(limits=ParseLimits(max_output_chars=100_000))
    with pytest.raises(ParseEngineFailed, match="output exceeds the limit of 100000"):
        ParserRegistry().parse(path, "xlsx", options)


# -- csv / tsv -----------------------------------------------------------------------------
def test_csv_sample_is_one_table_at_the_root() -> None:
    md = parse(SAMPLES / "houseplant-care.csv").markdown
    assert headings(md) == []
    assert section_of(md, "snake plant every three weeks") == ()
    blocks = [b for b in md.split("\n\n") if b.strip()]
    assert all(b.startswith("| Plant | Light | Watering | Notes |") for b in blocks)


def test_csv_dialects_encodings_and_escaping(tmp_path: Path) -> None:
    semicolons = tmp_path / "eu.csv"
    semicolons.write_bytes("Stadt;Einwohner\nMünchen;1500000\n# Köln;1000000\n".encode("utf-8-sig"))
    parsed = parse(semicolons)
    assert "| Stadt | Einwohner |" in parsed.markdown and "| # Köln | 1000000 |" in parsed.markdown
    assert parsed.warnings == [] and headings(parsed.markdown) == []
    chinese = tmp_path / "zh.csv"
    chinese.write_bytes("城市,人口\n北京,2189万\n".encode("gb18030"))
    parsed = parse(chinese)
    assert "| 北京 | 2189万 |" in parsed.markdown and parsed.warnings == ["decoded as gb18030"]
    pipes = tmp_path / "pipes.tsv"
    pipes.write_text('a\tb\nx | y\t"quoted\ttab"\nmulti\nline\t2\n', encoding="utf-8")
    md = parse(pipes).markdown
    assert "| x \\| y | quoted\ttab |".replace("\t", " ") in md.replace("\t", " ")
    assert headings(md) == []


def test_a_200k_row_csv_streams_in_header_repeating_blocks(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "sku", "qty"])
    writer.writerows([n, f"SKU-{n:06d}", n % 97] for n in range(200_000))
    path.write_text(buffer.getvalue(), encoding="utf-8")
    # Through a worker capped at 384 MiB of address space (the parse peaks near 120 MiB RSS).
    limits = ParseLimits(max_memory_bytes=384 * 1024**2, max_seconds=300)
    with SandboxedParser(max_workers=1) as sandbox:
        md = sandbox.parse(path, "csv", ParseOptions(limits=limits)).markdown
    assert md.count("| id | sku | qty |") == md.count("\n\n") + 1
    assert "| 199999 | SKU-199999 | 82 |" in md


# -- epub ----------------------------------------------------------------------------------
def test_epub_sample_chapters_in_spine_order() -> None:
    parsed = parse(SAMPLES / "lighthouse-keeper.epub")
    assert parsed.title == "The Lighthouse Keeper's Handbook"
    assert [h[1] for h in headings(parsed.markdown)] == ["The Lamp", "Fog Signals", "The Daily Log"]
    assert section_of(parsed.markdown, "two long blasts") == ("Fog Signals",)


def test_epub_spine_not_file_order_and_toc_title_for_headingless_chapter(tmp_path: Path) -> None:
    book = epub.EpubBook()
    book.set_identifier("urn:test")
    book.set_title("Order")
    first = epub.EpubHtml(title="Zebra Chapter", file_name="z.xhtml")
    first.content = "<html><body><p>zebra text without a heading</p></body></html>"
    second = epub.EpubHtml(title="Aardvark", file_name="a.xhtml")
    second.content = "<html><body><h2>Aardvark</h2><h3>Burrows</h3><p>deep burrow</p></body></html>"
    for item in (second, first):  # manifest order differs from the spine
        book.add_item(item)
    book.toc = [first, second]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", first, second]
    path = tmp_path / "order.epub"
    epub.write_epub(str(path), book)
    md = parse(path).markdown
    assert headings(md) == [(1, "Zebra Chapter"), (2, "Aardvark"), (3, "Burrows")]
    assert section_of(md, "zebra text") == ("Zebra Chapter",)
    assert section_of(md, "deep burrow") == ("Zebra Chapter", "Aardvark", "Burrows")


def test_epub_chapter_nesting_bomb_fails_alone(tmp_path: Path) -> None:
    import zipfile

    source = io.BytesIO(small_epub())
    out = io.BytesIO()
    deep = b"<html><body>" + b"<div>" * 5000 + b"x" + b"</div>" * 5000 + b"</body></html>"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = deep if item.filename.endswith("one.xhtml") else zin.read(item)
            zout.writestr(item, data)
    path = tmp_path / "deep.epub"
    path.write_bytes(out.getvalue())
    with pytest.raises(ParseEngineFailed, match="nesting deeper than 3000"):
        parse(path)


# -- eml -----------------------------------------------------------------------------------
def test_eml_sample_front_block_body_and_attachment() -> None:
    parsed = parse(SAMPLES / "office-move.eml")
    md = parsed.markdown
    assert parsed.title == "Office move to the fourth floor"
    assert md.startswith("# Office move to the fourth floor\n\nFrom: Facilities")
    assert "To: All staff <staff@example.org>" in md and "Date: Thu, 15 Jan 2026" in md
    assert section_of(md, "fourth floor on Friday") == ("Office move to the fourth floor",)
    assert section_of(md, "Mill Lane") == (
        "Office move to the fourth floor",
        "Attachment: parking-during-the-move.txt",
    )
    assert md.count("The office moves to the fourth floor") == 1  # plain part only


def _mail(subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Ana <ana@example.org>"
    message["To"] = "team@example.org"
    message["Subject"] = subject
    return message


def test_eml_html_body_is_sanitised_and_attachments_parse_by_type(tmp_path: Path) -> None:
    message = _mail("Quarterly report")
    message.set_content(
        "<html><head><script>alert('x')</script></head><body><h1>Summary</h1>"
        "<p>Sales rose in the north.</p><form><input value='secret'></form>"
        "<div hidden>tracking</div></body></html>",
        subtype="html",
    )
    report = docx.Document()
    report.add_heading("Figures", 1)
    report.add_paragraph("Revenue was flat in the south.")
    buffer = io.BytesIO()
    report.save(buffer)
    message.add_attachment(
        buffer.getvalue(),
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
        filename="report.docx",
    )
    message.add_attachment(b"\x89PNG\r\n\x1a\n....", maintype="image", subtype="png",
                           filename="chart.png")  # fmt: skip
    message.add_attachment(b"PK\x03\x04broken", maintype="application", subtype="zip",
                           filename="archive.zip")  # fmt: skip
    path = tmp_path / "report.eml"
    path.write_bytes(bytes(message))
    parsed = parse(path)
    md = parsed.markdown
    assert "alert" not in md and "secret" not in md and "tracking" not in md
    assert section_of(md, "Sales rose") == ("Quarterly report", "Summary")
    assert section_of(md, "Revenue was flat") == (
        "Quarterly report",
        "Attachment: report.docx",
        "Figures",
    )
    assert "Attachments: report.docx, chart.png, archive.zip" in md
    assert parsed.warnings == [
        # basic tier (the default options): an image attachment needs OCR, the quality tier
        "attachment 'chart.png' not parsed: NO_TEXT_LAYER: an image has no text layer: "
        "parse it at the quality tier (OCR)",
        "attachment 'archive.zip' not parsed: UNSUPPORTED_FILE_TYPE: no parser for file type .zip",
    ]


def test_eml_forwarded_messages_nest_and_are_bounded(tmp_path: Path) -> None:
    inner = _mail("Original question")
    inner.set_content("Where is the spare key kept?")
    outer = _mail("Fwd: Original question")
    outer.set_content("See below.")
    outer.add_attachment(inner)
    as_file = _mail("Second forward")
    as_file.set_content("And as a file.")
    as_file.add_attachment(bytes(outer), maintype="application", subtype="octet-stream",
                           filename="forwarded.eml")  # fmt: skip
    path = tmp_path / "fwd.eml"
    path.write_bytes(bytes(as_file))
    md = parse(path).markdown
    assert section_of(md, "spare key") == (
        "Second forward",
        "Fwd: Original question",
        "Original question",
    )
    hostile = tmp_path / "recursive.eml"
    hostile.write_bytes(recursive_eml(depth=MAX_DEPTH + 1))
    with pytest.raises(ParseEngineFailed, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse(hostile)
    fine = tmp_path / "fine.eml"
    fine.write_bytes(recursive_eml(depth=MAX_DEPTH))
    assert "the innermost message" in parse(fine).markdown


def test_eml_that_is_not_mail_and_malformed_mail(tmp_path: Path) -> None:
    binary = tmp_path / "x.eml"
    binary.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UnsupportedFileType, match="not a MIME message"):
        parse(binary)
    broken = tmp_path / "broken.eml"
    broken.write_bytes(
        b"From: =?utf-8?q?broken?=\r\nSubject: =?unknown-8bit?b?////?=\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'
        b"Content-Type: text/plain; charset=no-such-charset\r\n\r\nbody survives\r\n"
    )
    parsed = parse(broken)
    assert "body survives" in parsed.markdown


def test_html_paragraph_text_never_becomes_a_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<h1>Real</h1><p># 3 items left</p><ul><li>first<br>## not a heading</li></ul>"
        "<h2>Sub</h2><p>- dash text</p>",
        encoding="utf-8",
    )
    md = parse(page).markdown
    assert headings(md) == [(1, "Real"), (2, "Sub")]
    assert section_of(md, "3 items left") == ("Real",)
    assert section_of(md, "dash text") == ("Real", "Sub")


def test_shift_headings_leaves_fenced_code_alone() -> None:
    text = "# A\n\n```\n# not a heading\n```\n\n###### deep\n"
    assert shift_headings(text, 2) == "### A\n\n```\n# not a heading\n```\n\n###### deep\n"


@pytest.mark.parametrize("kind", ["pptx", "xlsx", "docx"])
def test_password_protected_office_files_say_so(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"locked.{kind}"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(4096))  # an OLE header
    with pytest.raises(InvalidFileContent, match=r"OLE compound file \(password-protected"):
        parse(path)


# -- every hostile file fails alone, through the sandbox, without stalling the next --------
def test_zip_bombs_are_refused_before_inflating(sandbox: SandboxedParser, tmp_path: Path) -> None:
    from ragline.testing.files.business_formats import zip_bomb_epub, zip_bomb_pptx

    for name, data in {
        "b.pptx": zip_bomb_pptx(),
        "b.xlsx": zip_bomb_xlsx(),
        "b.epub": zip_bomb_epub(),
    }.items():
        path = tmp_path / name
        path.write_bytes(data)
        started = time.process_time()
        with pytest.raises(InvalidFileContent, match="zip bomb suspected"):
            sandbox.parse(path, path.suffix[1:], OPTIONS)
        del started
    ok = tmp_path / "next.csv"
    ok.write_text("a,b\n1,2\n", encoding="utf-8")
    assert "| 1 | 2 |" in sandbox.parse(ok, "csv", OPTIONS).markdown
