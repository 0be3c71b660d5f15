"""Tokenizer adapter: rjieba for Han runs, Unicode words (casefolded) for everything else."""

from ragline.adapters.tokenizer.jieba.tokenizer import JiebaTokenizer

__all__ = ["JiebaTokenizer"]
