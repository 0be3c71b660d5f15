"""Property kit for the re-embedding domain (needs hypothesis; the domain does not).

TestReembedding = ReembeddingMachine.TestCase
"""

from ragline.testing.reembedding.machine import ReembeddingMachine

__all__ = ["ReembeddingMachine"]
