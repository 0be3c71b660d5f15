"""Term-frequency sparse vectors over the keyword tokenizer's tokens.

Each token maps to a stable uint32 id: the first 4 bytes (big-endian) of blake2b(token).
The mapping needs no vocabulary, so documents indexed today and queries encoded tomorrow, in
another process, agree. Two different tokens may share an id (a hash collision): they then
count as one term: their weights add up in a document and match each other in a query. With
2**32 ids and a vocabulary of 10**5 terms a given term collides with another with probability
about 2e-5; the effect is a small score bonus on an unrelated term, never a lost match.

Document weights are the term-frequency part of BM25, saturated and length-normalised:
    w = tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))
Inverse document frequency is left to the index (Qdrant's `Modifier.IDF` on the sparse
vector), since only the index knows the corpus. A query vector holds each unique query term
with weight 1, so the score is sum(idf * w) over the shared terms: BM25.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.tokenizer import Tokenizer


@lru_cache(maxsize=1 << 18)
def term_id(token: str) -> int:
    """Stable uint32 id of a token (independent of process, platform and hash seed).

    Cached: a corpus reuses a small vocabulary, and hashing dominates encoding otherwise.
    """
    digest = blake2b(token.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big")


class TermSparseEncoder:
    """SparseEncoder built on a Tokenizer; pure CPU, deterministic, thread-safe."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        k1: float = 1.2,
        b: float = 0.75,
        avg_doc_length: float = 256.0,
    ) -> None:
        if k1 <= 0 or not 0 <= b <= 1 or avg_doc_length <= 0:
            raise ValueError("need k1 > 0, 0 <= b <= 1 and avg_doc_length > 0")
        self._tokenizer = tokenizer
        self._k1 = k1
        self._b = b
        self._avg = avg_doc_length

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [self.encode_tokens(self._tokenizer.tokenize(text)) for text in texts]

    def encode_token_lists(self, token_lists: Sequence[Sequence[str]]) -> list[SparseVector]:
        return [self.encode_tokens(tokens) for tokens in token_lists]

    def encode_tokens(self, tokens: Sequence[str]) -> SparseVector:
        """Document vector from already-tokenized text (lets PRETOKENIZE tokenize once)."""
        if not tokens:
            return SparseVector([], [])
        counts: dict[int, int] = {}
        get = counts.get
        for token, tf in Counter(tokens).items():
            term = term_id(token)
            counts[term] = get(term, 0) + tf
        norm = self._k1 * (1 - self._b + self._b * len(tokens) / self._avg)
        k1_plus_1 = self._k1 + 1
        indices = sorted(counts)
        values = [tf * k1_plus_1 / (tf + norm) for tf in map(counts.__getitem__, indices)]
        return SparseVector(indices, values)

    def encode_query(self, text: str) -> SparseVector:
        indices = sorted({term_id(token) for token in self._tokenizer.tokenize(text)})
        return SparseVector(indices, [1.0] * len(indices))
