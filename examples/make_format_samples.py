"""Regenerate the slide, spreadsheet, table, e-book and mail samples in examples/docs.

    .venv/bin/python examples/make_format_samples.py

Needs python-pptx, openpyxl and ebooklib (the `parsers` extra). The texts are written for this
repository and are public domain (CC0). Fixed timestamps and identifiers keep the files
byte-stable enough that re-running the script changes only what the libraries stamp.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import openpyxl
import pptx
from ebooklib import epub
from pptx.util import Inches

DOCS = Path(__file__).resolve().parent / "docs"
STAMP = datetime(2026, 1, 15, 9, 30, tzinfo=UTC)

COMPOST_SLIDES: list[tuple[str, list[str], str]] = [
    (
        "Why Compost at Home",
        [
            "Kitchen scraps and garden waste make up a third of household rubbish",
            "A compost heap turns them into dark, crumbly soil in six to twelve months",
            "Finished compost feeds vegetable beds and holds water in sandy soil",
        ],
        "Open with a show of hands: who already keeps a compost bin?",
    ),
    (
        "Greens and Browns",
        [
            "Mix roughly three parts browns to one part greens by volume",
            "Too many greens make a wet, smelly heap; too many browns make a slow one",
        ],
        "Pass round a jar of finished compost so people can smell it: it should smell of "
        "forest floor, never of ammonia.",
    ),
    (
        "Turning and Moisture",
        [
            "Turn the heap every two weeks with a garden fork to let air in",
            "Keep it as damp as a wrung-out sponge",
            "A heap that is warm in the middle is working",
        ],
        "",
    ),
]
COMPOST_TABLE = [
    ["Material", "Kind", "Notes"],
    ["Vegetable peelings", "Green", "Chop large pieces"],
    ["Grass clippings", "Green", "Add in thin layers"],
    ["Dry leaves", "Brown", "Shred them for speed"],
    ["Cardboard", "Brown", "Tear up, remove tape"],
]

BIKE_ROWS = [
    ["Component", "Interval (km)", "Task"],
    ["Chain", 3000, "Replace the bicycle chain when it has stretched by half a percent"],
    ["Chain", 300, "Clean and lubricate the chain"],
    ["Brake pads", 2000, "Check pad wear; replace when the groove is gone"],
    ["Tyres", 5000, "Inspect for cuts and replace worn tyres"],
    ["Cables", 6000, "Replace gear and brake cables"],
    ["Bottom bracket", 15000, "Check for play and creaking"],
]
TYRE_ROWS = [
    ["Tyre width (mm)", "Pressure (psi)", "Pressure (bar)"],
    [25, 95],
    [28, 85],
    [32, 70],
    [40, 55],
]

HOUSEPLANTS = [
    ["Plant", "Light", "Watering", "Notes"],
    [
        "Snake plant",
        "Low to bright",
        "Water a snake plant every three weeks",
        "Rots if overwatered",
    ],
    ["Peace lily", "Shade", "Weekly, when the leaves droop", "Wipe dust off the leaves"],
    ["Spider plant", "Bright, indirect", "Every week in summer", "Easy to propagate from runners"],
    ["Fiddle-leaf fig", "Bright", "When the top 5 cm of soil is dry", "Dislikes being moved"],
    ["Cactus", "Full sun", "Once a month; not at all in winter", "Use gritty compost"],
]

KNOTS = [
    ["Knot", "Use", "Difficulty"],
    ["Bowline", "A fixed loop at the end of a line, for mooring or rescue", "Medium"],
    ["Cleat hitch", "Tie a boat to a cleat on the dock", "Easy"],
    ["Clove hitch", "Quickly fasten a fender line to a rail", "Easy"],
    ["Sheet bend", "Join two ropes of different thickness", "Medium"],
    ["Figure-eight", "A stopper knot so a line cannot run out through a block", "Easy"],
    ["Rolling hitch", "Take the strain off a jammed line along a spar", "Hard"],
]

LIGHTHOUSE_TITLE = "The Lighthouse Keeper's Handbook"
LIGHTHOUSE: list[tuple[str, str, list[str]]] = [
    (
        "lamp",
        "The Lamp",
        [
            "Every evening at sunset the keeper climbed to the lantern room, trimmed the wick "
            "and lit the lamp. A Fresnel lens of glass prisms gathered the flame's light into "
            "a beam that could be seen twenty miles out to sea.",
            "The lens turned on a bath of mercury, driven by a clockwork weight that the "
            "keeper wound by hand every few hours through the night.",
        ],
    ),
    (
        "fog",
        "Fog Signals",
        [
            "When fog hid the light, a fog signal warned ships by sound instead: a bell, a "
            "siren or a diaphone blasting a fixed pattern, so that a navigator who heard two "
            "long blasts every minute knew which headland lay ahead.",
            "The keeper watched a marker on the shore; once it vanished in the mist, the "
            "engine for the fog horn was started and kept running until the fog lifted.",
        ],
    ),
    (
        "log",
        "The Daily Log",
        [
            "The log book recorded the weather, the hours the lamp burned, the oil used and "
            "every ship that passed. Inspectors read it on their visits and a missing entry "
            "was a serious fault.",
        ],
    ),
]

MAIL_SUBJECT = "Office move to the fourth floor"
MAIL_BODY = """Hello everyone,

The office moves to the fourth floor on Friday 14 March. Please pack your desk into the
labelled crates by Thursday evening; the movers arrive at seven in the morning.

- Crates are stacked by the lifts on the second floor.
- Label every crate with your name and new desk number.
- Monitors and docking stations stay behind: the new desks already have them.

The new meeting rooms are named after rivers: Danube, Mekong and Amazon.

Thanks,
Facilities team
"""
MAIL_ATTACHMENT = """Parking during the move

The loading bay is closed to cars from Thursday noon to Friday evening. Staff who drive
should use the visitor car park on Mill Lane, where the barrier opens with the office pass.
"""


def make_pptx(path: Path) -> None:
    deck = pptx.Presentation()
    deck.core_properties.title = "Composting at Home"
    title_layout, body_layout, only_title = (deck.slide_layouts[i] for i in (0, 1, 5))
    cover = deck.slides.add_slide(title_layout)
    cover.shapes.title.text = "Composting at Home"
    cover.placeholders[1].text = "A talk for the community garden"
    for title, bullets, notes in COMPOST_SLIDES:
        slide = deck.slides.add_slide(body_layout)
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    table_slide = deck.slides.add_slide(only_title)
    table_slide.shapes.title.text = "What Goes In"
    rows, cols = len(COMPOST_TABLE), len(COMPOST_TABLE[0])
    shape = table_slide.shapes.add_table(rows, cols, Inches(0.5), Inches(1.6), Inches(9), Inches(3))
    for r, row in enumerate(COMPOST_TABLE):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    deck.core_properties.created = STAMP.replace(tzinfo=None)
    deck.core_properties.modified = STAMP.replace(tzinfo=None)
    deck.save(str(path))


def make_xlsx(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Maintenance"
    for row in BIKE_ROWS:
        sheet.append(row)
    tyres = book.create_sheet("Tyre Pressure")
    for index, row in enumerate(TYRE_ROWS, start=1):
        tyres.append(row)
        if index > 1:  # a formula with its cached value, as Excel would store it
            tyres.cell(index, 3).value = f"=ROUND(B{index}*0.0689476,1)"
    book.properties.title = "Bicycle maintenance"
    book.properties.created = STAMP.replace(tzinfo=None)
    book.properties.modified = STAMP.replace(tzinfo=None)
    book.save(str(path))
    _store_cached_values(path, tyres.title, TYRE_ROWS)


def _store_cached_values(path: Path, sheet_title: str, rows: list[list[object]]) -> None:
    """openpyxl writes formulas without a cached value; add the value Excel would have cached
    (a `<v>` after the `<f>`), so the sample shows the parser reading cached values."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    part = "xl/worksheets/sheet2.xml"
    xml = members[part].decode("utf-8")
    for index, row in enumerate(rows[1:], start=2):
        value = round(float(str(row[1])) * 0.0689476, 1)
        formula = f"<f>ROUND(B{index}*0.0689476,1)</f>"
        xml = xml.replace(f"{formula}<v></v>", f"{formula}<v>{value}</v>")
        xml = xml.replace(f"{formula}</c>", f"{formula}<v>{value}</v></c>")
    members[part] = xml.encode("utf-8")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(
                zipfile.ZipInfo(name, date_time=(2026, 1, 15, 9, 30, 0)),
                data,
                compress_type=zipfile.ZIP_DEFLATED,
            )
    del sheet_title


def make_delimited(path: Path, rows: list[list[str]], delimiter: str) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def make_epub(path: Path) -> None:
    book = epub.EpubBook()
    book.set_identifier("urn:uuid:7f1d3c2e-ragline-lighthouse")
    book.set_title(LIGHTHOUSE_TITLE)
    book.set_language("en")
    book.add_author("ragline examples")
    chapters = []
    for slug, title, paragraphs in LIGHTHOUSE:
        chapter = epub.EpubHtml(title=title, file_name=f"{slug}.xhtml", lang="en")
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        chapter.content = f"<html><body><h1>{title}</h1>{body}</body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    epub.write_epub(str(path), book)


def make_eml(path: Path) -> None:
    message = EmailMessage()
    message["From"] = "Facilities <facilities@example.org>"
    message["To"] = "All staff <staff@example.org>"
    message["Date"] = format_datetime(STAMP)
    message["Subject"] = MAIL_SUBJECT
    message["Message-ID"] = "<office-move-2026@example.org>"
    message.set_content(MAIL_BODY)
    html = "".join(f"<p>{line}</p>" for line in MAIL_BODY.split("\n\n"))
    message.add_alternative(f"<html><body>{html}</body></html>", subtype="html")
    message.add_attachment(
        MAIL_ATTACHMENT.encode("utf-8"),
        maintype="text",
        subtype="plain",
        filename="parking-during-the-move.txt",
    )
    path.write_bytes(bytes(message))


def main() -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    written = {
        "composting-at-home.pptx": lambda p: make_pptx(p),
        "bicycle-maintenance.xlsx": lambda p: make_xlsx(p),
        "houseplant-care.csv": lambda p: make_delimited(p, HOUSEPLANTS, ","),
        "sailing-knots.tsv": lambda p: make_delimited(p, KNOTS, "\t"),
        "lighthouse-keeper.epub": lambda p: make_epub(p),
        "office-move.eml": lambda p: make_eml(p),
    }
    for name, make in written.items():
        make(DOCS / name)
        print(f"wrote {DOCS / name}")


if __name__ == "__main__":
    main()
