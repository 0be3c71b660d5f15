"""Deterministic synthetic data for the scale benchmark: clustered unit vectors, 100 tenants.

Point i belongs to tenant i % tenants (so every tenant is spread over the whole build, as
ingest of many tenants interleaves them) and is the k-th point of that tenant, k = i //
tenants: document 1000 + k // 100, chunk `<doc>-c<k % 100>`, parent `<doc>-p<(k % 100) // 4>`,
the ids benchmarks/search/build.py gives, so the SQL rows of the queried tenant hydrate the
hits. Dense vectors are clustered (CLUSTERS centres, each point its centre plus Gaussian noise,
cosine to the centre about 0.7, as e5 vectors of related text are), not uniform: uniform
random vectors in 384 dimensions have no neighbours to find and are the worst case of an
approximate index, not a realistic one. Batch [start, stop) is the same whatever the batch
size. Texts and sparse vectors are synthetic words (Zipf over a made-up vocabulary): the
benchmark needs no document corpus on the machine.
"""

from __future__ import annotations

import numpy as np

from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import ChunkPayload, DensePoint, SparsePoint

DIMENSION = 384
CLUSTERS = 1000
NOISE = 0.05  # per dimension: |noise| ~ 0.05 * sqrt(384) ~ 1, cosine to the centre ~ 0.7
DATASET = "d"
QUERIED = 0  # the tenant every query is for
VOCABULARY = 20_000
WORDS_PER_TEXT = 70


def user(tenant: int) -> str:
    return f"u{tenant}"


class Layout:
    """Which tenant, document, parent and chunk id each point index has."""

    def __init__(self, points: int, tenants: int) -> None:
        self.points, self.tenants = points, tenants

    def tenant_points(self, tenant: int = QUERIED) -> np.ndarray:
        return np.arange(tenant, self.points, self.tenants)

    def payload(self, i: int) -> tuple[str, ChunkPayload]:
        k = i // self.tenants
        doc = str(1000 + k // 100)
        chunk_id = f"{doc}-c{k % 100}"
        parent = f"{doc}-p{(k % 100) // 4}"
        return chunk_id, ChunkPayload(user(i % self.tenants), DATASET, doc, parent)


class Vectors:
    """Clustered unit vectors: `block(start, stop)` is deterministic per point range."""

    def __init__(self, seed: int = 11) -> None:
        self.seed = seed
        centres = np.random.default_rng(seed).standard_normal((CLUSTERS, DIMENSION))
        self.centres = (centres / np.linalg.norm(centres, axis=1, keepdims=True)).astype(np.float32)

    def _draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        which = rng.integers(0, CLUSTERS, size=count)
        noise = rng.standard_normal((count, DIMENSION), dtype=np.float32) * NOISE
        matrix = self.centres[which] + noise
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix

    def block(self, start: int, stop: int, chunk: int = 4096) -> np.ndarray:
        parts = []
        for s in range(start - start % chunk, stop, chunk):
            rows = self._draw(np.random.default_rng((self.seed, 1, s)), chunk)
            parts.append(rows[max(start - s, 0) : min(stop - s, chunk)])
        return np.concatenate(parts)

    def rows(self, indices: np.ndarray, chunk: int = 4096) -> np.ndarray:
        """The vectors of arbitrary point indices (ground truth for one tenant)."""
        out = np.empty((len(indices), DIMENSION), dtype=np.float32)
        for s in np.unique(indices // chunk) * chunk:
            rows = self._draw(np.random.default_rng((self.seed, 1, int(s))), chunk)
            mask = (indices >= s) & (indices < s + chunk)
            out[mask] = rows[indices[mask] - s]
        return out

    def queries(self, count: int) -> np.ndarray:
        return self._draw(np.random.default_rng((self.seed, 3)), count)


class Texts:
    """Synthetic word texts, a Zipf draw over a made-up vocabulary."""

    def __init__(self, seed: int = 13) -> None:
        rng = np.random.default_rng(seed)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        lengths = rng.integers(3, 10, size=VOCABULARY)
        self.words = ["".join(rng.choice(letters, size=n)) for n in lengths]
        ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
        weights = 1.0 / (ranks + 5.0)
        self.cdf = np.cumsum(weights / weights.sum())
        self.seed = seed

    def _draw(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rng.random(shape)), VOCABULARY - 1)

    def text(self, i: int) -> str:
        row = self._draw(np.random.default_rng((self.seed, 1, i)), (1, WORDS_PER_TEXT))[0]
        return " ".join(self.words[w] for w in row)

    def sparse(self, start: int, stop: int) -> list[SparseVector]:
        """A ~60-term hashed sparse vector per point (cheap: no tokenizer), seeded by the
        point so any subset of points gets the same vectors."""
        out = []
        for i in range(start, stop):
            row = self._draw(np.random.default_rng((self.seed, 2, i)), (1, WORDS_PER_TEXT))[0]
            terms, counts = np.unique(row.astype(np.int64) * 2654435761 % 2**32, return_counts=True)
            out.append(SparseVector(indices=terms.tolist(), values=counts.astype(float).tolist()))
        return out

    def queries(self, count: int) -> list[str]:
        rng = np.random.default_rng((self.seed, 3))
        rows = self._draw(rng, (count, 4))
        return [" ".join(self.words[w] for w in row) for row in rows]


def dense_points(layout: Layout, vectors: Vectors, start: int, stop: int) -> list[DensePoint]:
    matrix = vectors.block(start, stop)
    points = []
    for k, row in enumerate(matrix.tolist()):
        chunk_id, payload = layout.payload(start + k)
        points.append(DensePoint(chunk_id, row, payload))
    return points


def sparse_points(
    layout: Layout, texts: Texts, start: int, stop: int, step: int = 1
) -> list[SparsePoint]:
    """Points start, start + step, ... below stop (step = tenants: the queried tenant's)."""
    points = []
    for i in range(start, min(stop, layout.points), step):
        chunk_id, payload = layout.payload(i)
        points.append(SparsePoint(chunk_id, texts.sparse(i, i + 1)[0], payload))
    return points
