"""Generated input files: hostile files (zip bombs, broken PDFs, hostile business formats)
with the verdict each must get, and scanned pages without a text layer for OCR. Made at test
time so nothing big is committed; tests, campaigns and benchmarks share them."""
