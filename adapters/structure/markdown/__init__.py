"""Markdown -> StructureNode tree, two ways.

`LineScanStructureBuilder`: one linear regex pass over heading and fence lines; fast enough for
the chunking hot path (ATX headings, fenced code; setext headings are not recognised).
`MarkdownItStructureBuilder`: markdown-it-py's CommonMark block parser (setext headings,
nested containers), several times slower.
"""

from ragline.adapters.structure.markdown.line_scan import LineScanStructureBuilder
from ragline.adapters.structure.markdown.markdown_it import MarkdownItStructureBuilder

__all__ = ["LineScanStructureBuilder", "MarkdownItStructureBuilder"]
