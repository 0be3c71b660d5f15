"""The chunkers measured, each a function Markdown -> list of chunk sizes (characters).

Every peer is set to a ~512-character target. llama-index sizes in tokens (tiktoken), so
128 tokens (~512 characters of English) is used there.
"""

from __future__ import annotations

from collections.abc import Callable

Chunker = Callable[[str], dict[str, list[int]]]  # level name -> chunk sizes in characters
TARGET = 512


def ragline_default() -> Chunker:
    """ragline's default plan: structure parents (<= 2000) + recursive children (~512), with
    the structure tree built by the line-scan adapter (counted in the time)."""
    from ragline.adapters.structure.markdown import LineScanStructureBuilder
    from ragline.domain.chunking import DEFAULT_PLAN, chunk_document

    builder = LineScanStructureBuilder()

    def run(md: str) -> dict[str, list[int]]:
        result = chunk_document(md, DEFAULT_PLAN, tree=builder.build(md, blocks=False))
        # sizes from spans (text == markdown[start:end]): a child's text is a view that
        # would be sliced again on every read
        return {
            "parents": [p.end - p.start for p in result.parents],
            "children": [c.end - c.start for p in result.parents for c in p.children],
        }

    return run


def langchain_recursive() -> Chunker:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=TARGET, chunk_overlap=0)

    def run(md: str) -> dict[str, list[int]]:
        return {"chunks": [len(t) for t in splitter.split_text(md)]}

    return run


def langchain_header_recursive() -> Chunker:
    """The structure-aware two-level equivalent: header sections, then recursive pieces."""
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = [("#" * i, f"h{i}") for i in range(1, 7)]
    header = MarkdownHeaderTextSplitter(headers_to_split_on=headers, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter(chunk_size=TARGET, chunk_overlap=0)

    def run(md: str) -> dict[str, list[int]]:
        sections = header.split_text(md)
        pieces = recursive.split_documents(sections)
        return {
            "sections": [len(d.page_content) for d in sections],
            "chunks": [len(d.page_content) for d in pieces],
        }

    return run


def chonkie_recursive() -> Chunker:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(tokenizer="character", chunk_size=TARGET)

    def run(md: str) -> dict[str, list[int]]:
        return {"chunks": [len(c.text) for c in chunker.chunk(md)]}

    return run


def llama_sentence() -> Chunker:
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=TARGET // 4, chunk_overlap=0)

    def run(md: str) -> dict[str, list[int]]:
        return {"chunks": [len(t) for t in splitter.split_text(md)]}

    return run


def llama_hierarchical() -> Chunker:
    from llama_index.core import Document
    from llama_index.core.node_parser import HierarchicalNodeParser

    parser = HierarchicalNodeParser.from_defaults(
        chunk_sizes=[TARGET, TARGET // 4], chunk_overlap=0
    )

    def run(md: str) -> dict[str, list[int]]:
        nodes = parser.get_nodes_from_documents([Document(text=md)])
        return {"nodes": [len(n.get_content()) for n in nodes]}

    return run


PEERS: dict[str, Callable[[], Chunker]] = {
    "ragline default (parents+children)": ragline_default,
    "langchain RecursiveCharacterTextSplitter": langchain_recursive,
    "langchain MarkdownHeader->Recursive": langchain_header_recursive,
    "chonkie RecursiveChunker": chonkie_recursive,
    "llama-index SentenceSplitter": llama_sentence,
    "llama-index HierarchicalNodeParser": llama_hierarchical,
}
# Too slow for the whole corpus in a benchmark run: measured on its first SUBSET_CHARS.
SUBSET = {"llama-index SentenceSplitter", "llama-index HierarchicalNodeParser"}
SUBSET_CHARS = 1_000_000
