"""Tokenizer adapter: rjieba for Han runs, Unicode words (casefolded) for everything else."""

from ragline.adapters.jieba_tokenizer.tokenizer import JiebaTokenizer

__all__ = ["JiebaTokenizer"]
