"""Regenerate the binary samples in examples/docs (docx and pdf) from the text below.

    .venv/bin/python examples/make_samples.py

Needs python-docx (the `parsers` extra) and fpdf2 (the `dev` extra). The texts are written for
this repository and are public domain (CC0).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import docx
from fpdf import FPDF
from fpdf.enums import XPos, YPos

DOCS = Path(__file__).resolve().parent / "docs"

PRESS_TITLE = "The History of the Printing Press"
PRESS: list[tuple[str, list[str]]] = [
    (
        "Before Gutenberg",
        [
            "For most of history, every book was copied by hand. In medieval Europe the work "
            "was done in monastic scriptoria, where a single Bible could occupy a scribe for "
            "more than a year. Books were so costly that a library of a few hundred volumes "
            "counted as a great treasure, and most people never owned one.",
            "Printing itself was not new. Woodblock printing was practised in China by the "
            "seventh century, and the Diamond Sutra of 868 is the oldest dated printed book "
            "to survive. Around 1040 the Chinese artisan Bi Sheng made movable type from "
            "baked clay, and in 1377 Korean monks printed the Jikji with movable metal type. "
            "Because Chinese writing needs thousands of distinct characters, however, "
            "movable type did not displace woodblocks there.",
        ],
    ),
    (
        "Gutenberg's Invention",
        [
            "Johannes Gutenberg, a goldsmith from Mainz, combined several inventions into one "
            "practical system around 1440. The first was a hand mould that could cast large "
            "numbers of identical letters quickly from an alloy of lead, tin and antimony, "
            "which melted at a low temperature and hardened without shrinking. The second was "
            "an oil-based ink that clung to metal type far better than the water-based inks "
            "used for woodblocks. The third was a screw press, adapted from the presses that "
            "squeezed grapes for wine and olives for oil, which pressed paper evenly onto the "
            "inked type.",
            "Gutenberg's great Bible, finished around 1455, was printed in about 180 copies. "
            "Its pages were set in two columns of 42 lines, and its quality was so high that "
            "many buyers could not tell it from a manuscript. The business did not make "
            "Gutenberg rich: a lawsuit over a loan gave his partner Johann Fust much of the "
            "equipment.",
        ],
    ),
    (
        "The Spread of Printing",
        [
            "Printing spread with astonishing speed. By 1500, presses were working in more than "
            "250 European towns, and they had produced perhaps twenty million volumes. Venice "
            "became the capital of the trade; there Aldus Manutius introduced the italic "
            "typeface and small, portable editions of the Greek and Latin classics. William "
            "Caxton set up the first press in England at Westminster in 1476 and printed "
            "Chaucer's Canterbury Tales.",
            "The main milestones of the early centuries were:",
        ],
    ),
    (
        "Consequences",
        [
            "Cheap printed books changed European society. The Reformation was a printing "
            "event: Martin Luther's pamphlets and his German Bible sold hundreds of thousands "
            "of copies, and his ideas travelled faster than the authorities could suppress "
            "them. Scientists could publish identical copies of tables and diagrams, so errors "
            "were corrected rather than multiplied by copyists, which helped the scientific "
            "revolution. Spelling and grammar became more standard, and literacy rose as "
            "reading material became affordable.",
            "Later centuries improved the machine rather than the idea. The iron Stanhope "
            "press of 1800 doubled the size of the printed sheet, Friedrich Koenig's steam-"
            "powered press of 1814 printed The Times at more than a thousand sheets an hour, "
            "and the Linotype machine of 1886 cast whole lines of type from a keyboard. "
            "Offset lithography and, finally, digital printing replaced metal type in the "
            "twentieth century.",
        ],
    ),
]
PRESS_MILESTONES = [
    "868: the Diamond Sutra, the oldest dated printed book",
    "1040: Bi Sheng's clay movable type in China",
    "1455: Gutenberg's Bible in Mainz",
    "1476: William Caxton's press at Westminster",
    "1814: the steam-powered press prints The Times",
]

BREAD_TITLE = "Baking Sourdough Bread at Home"
BREAD_INTRO = (
    "Sourdough bread is leavened by a starter: a culture of wild yeasts and lactic acid bacteria "
    "living in a paste of flour and water. The yeasts make the gas that raises the dough, and the "
    "bacteria make the lactic and acetic acids that give sourdough its tang and help it keep for "
    "days. This guide walks through one loaf, from feeding the starter to cutting the crust."
)
BREAD_STARTER = (
    "A healthy starter doubles in volume within four to eight hours of a feeding and smells "
    "pleasantly sour, like yoghurt. To make one, mix equal weights of wholemeal flour and water, "
    "then discard half and feed it again every day for about a week until it rises reliably."
)
BREAD_INGREDIENTS = [
    ("Bread flour", "450 g", "100%"),
    ("Wholemeal flour", "50 g", "10%"),
    ("Water", "375 g", "75%"),
    ("Active starter", "100 g", "20%"),
    ("Salt", "10 g", "2%"),
]
BREAD_STEPS = [
    "Mix the flours and 350 g of the water and leave the dough to rest for 45 minutes. This "
    "rest, called autolyse, lets the flour absorb the water and gluten start to form.",
    "Add the starter, the salt and the rest of the water, and squeeze them through the dough.",
    "Bulk ferment for four to six hours at about 24 °C, folding the dough every half hour for "
    "the first two hours.",
    "Shape the dough into a tight round and place it seam side up in a floured basket.",
    "Proof overnight in the refrigerator; the cold slows the yeast and deepens the flavour.",
    "Bake in a preheated covered pot at 250 °C for 20 minutes, then uncovered at 230 °C for "
    "another 20 to 25 minutes, until the crust is deep brown.",
]
BREAD_PROBLEMS = [
    "Dense crumb: the starter was weak or the bulk fermentation too short.",
    "Flat loaf that spreads: over-proofed dough or too little tension when shaping.",
    "Pale crust: the oven or pot was not hot enough.",
]
BREAD_OUTRO = (
    "Let the loaf cool for at least an hour before slicing: the crumb is still setting as steam "
    "escapes, and a loaf cut hot turns gummy."
)


def make_docx(path: Path) -> None:
    document = docx.Document()
    document.core_properties.title = BREAD_TITLE
    document.core_properties.author = "ragline samples"
    document.add_paragraph(BREAD_TITLE, style="Title")
    document.add_paragraph(BREAD_INTRO)
    document.add_heading("The Starter", level=1)
    document.add_paragraph(BREAD_STARTER)
    document.add_heading("Ingredients", level=1)
    document.add_paragraph("Quantities for one loaf, with baker's percentages of total flour:")
    table = document.add_table(rows=1, cols=3)
    table.style = "Table Grid"
    for cell, text in zip(table.rows[0].cells, ("Ingredient", "Weight", "Baker's %"), strict=True):
        cell.text = text
    for row in BREAD_INGREDIENTS:
        for cell, text in zip(table.add_row().cells, row, strict=True):
            cell.text = text
    document.add_heading("Method", level=1)
    for step in BREAD_STEPS:
        document.add_paragraph(step, style="List Number")
    document.add_heading("Troubleshooting", level=2)
    for problem in BREAD_PROBLEMS:
        document.add_paragraph(problem, style="List Bullet")
    document.add_heading("Cooling", level=2)
    document.add_paragraph(BREAD_OUTRO)
    document.save(str(path))


class _Pdf(FPDF):
    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", "", 9)
        self.cell(0, 10, str(self.page_no()), align="C")


def make_pdf(path: Path) -> None:
    pdf = _Pdf(format="A4")
    pdf.set_title(PRESS_TITLE)
    pdf.set_author("ragline samples")
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=UTC))  # deterministic output
    pdf.set_auto_page_break(True, margin=22)
    pdf.set_margins(25, 25, 25)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 22)
    pdf.multi_cell(0, 10, PRESS_TITLE, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(6)
    for heading, paragraphs in PRESS:
        pdf.set_font("Helvetica", "B", 15)
        pdf.multi_cell(0, 8, heading, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(2)
        pdf.set_font("Times", "", 12)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(3)
        if heading == "The Spread of Printing":
            for item in PRESS_MILESTONES:
                pdf.multi_cell(0, 6, "- " + item, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(3)
    pdf.output(str(path))


def main() -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    make_docx(DOCS / "sourdough-bread.docx")
    make_pdf(DOCS / "printing-press-history.pdf")
    print(f"wrote {DOCS / 'sourdough-bread.docx'} and {DOCS / 'printing-press-history.pdf'}")


if __name__ == "__main__":
    main()
