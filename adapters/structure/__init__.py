"""The StructureBuilder port (Markdown to a section tree)."""
