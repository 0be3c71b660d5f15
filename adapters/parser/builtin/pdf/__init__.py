"""PDF parsing: pypdfium2 text layer + layout recovery (naive), opendataloader-pdf, dispatch."""
