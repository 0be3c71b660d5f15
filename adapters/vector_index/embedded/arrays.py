"""Vector blobs and the numpy arrays queries run on: whole batches at a time, never a Python
loop over stored points.

Blob layouts (little-endian): a dense vector is `dimension` float32, L2-normalised at write so
cosine similarity is a dot product; a sparse vector is `n` (uint32 term, float32 weight) pairs.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections.abc import Sequence

import attrs
import numpy as np
import numpy.typing as npt

from ragline.application.ports.sparse_encoder import SparseVector

FLOAT = np.dtype("<f4")
PAIR = np.dtype([("term", "<u4"), ("weight", "<f4")])
MAX_TERM = 2**32 - 1
FETCH = 4096  # rows per fetchmany while loading a scope

Ids = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


def dense_blobs(vectors: Sequence[Sequence[float]], dimension: int) -> list[bytes]:
    """One normalised float32 blob per vector (all of length `dimension`, checked by the
    caller). A zero vector stays zero (it then scores 0 against everything)."""
    count = len(vectors)
    flat = itertools.chain.from_iterable(vectors)
    matrix = np.fromiter(flat, dtype=FLOAT, count=count * dimension).reshape(count, dimension)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    matrix /= norms
    raw = matrix.tobytes()
    width = dimension * FLOAT.itemsize
    return [raw[i * width : (i + 1) * width] for i in range(count)]


def sparse_blobs(vectors: Sequence[SparseVector]) -> list[bytes]:
    """One (term, weight) pair blob per vector, converted for the whole batch at once."""
    lengths = [len(v.indices) for v in vectors]
    total = sum(lengths)
    terms = np.fromiter(
        itertools.chain.from_iterable(v.indices for v in vectors), dtype=np.int64, count=total
    )
    if total and (int(terms.min()) < 0 or int(terms.max()) > MAX_TERM):
        raise ValueError("sparse term ids must fit in uint32")
    pairs = np.empty(total, dtype=PAIR)
    pairs["term"] = terms
    weights = itertools.chain.from_iterable(v.values for v in vectors)
    pairs["weight"] = np.fromiter(weights, dtype=FLOAT, count=total)
    raw = pairs.tobytes()
    blobs: list[bytes] = []
    start = 0
    for length in lengths:
        end = start + length * PAIR.itemsize
        blobs.append(raw[start:end])
        start = end
    return blobs


def best(scores: npt.NDArray[np.floating], limit: int) -> npt.NDArray[np.intp]:
    """Positions of the `limit` highest scores, best first; ties keep storage order."""
    count = len(scores)
    everything = limit >= count
    chosen = np.arange(count) if everything else np.argpartition(-scores, limit - 1)[:limit]
    order = np.lexsort((chosen, -scores[chosen]))
    return chosen[order]


def _term_order(terms: npt.NDArray[np.uint32]) -> npt.NDArray[np.intp]:
    """A stable argsort of uint32 terms as two 16-bit passes: numpy sorts 16-bit keys stably
    with a radix sort, 2-3x faster here than one argsort of the 32-bit keys."""
    low = np.argsort((terms & 0xFFFF).astype(np.uint16), kind="stable")
    high = np.argsort((terms[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]


@attrs.frozen(eq=False)
class DenseMatrix:
    """One scope's dense vectors as a (points, dimension) float32 matrix; `ids` are the rows'
    ids in the points table."""

    ids: Ids
    vectors: npt.NDArray[np.float32]

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.vectors.nbytes)

    @classmethod
    def load(cls, connection: sqlite3.Connection, scope_id: int, dimension: int) -> DenseMatrix:
        """Read inside the caller's read transaction (count and rows from one snapshot) into
        a preallocated matrix: the peak stays one matrix plus one fetch."""
        where = "FROM points WHERE scope_id = ? AND dense IS NOT NULL"
        (count,) = connection.execute(f"SELECT count(*) {where}", (scope_id,)).fetchone()
        ids = np.empty(count, dtype=np.int64)
        vectors = np.empty((count, dimension), dtype=FLOAT)
        width = dimension * FLOAT.itemsize
        cursor = connection.execute(f"SELECT id, dense {where}", (scope_id,))
        filled = 0
        while rows := cursor.fetchmany(FETCH):
            end = filled + len(rows)
            raw = b"".join(row[1] for row in rows)
            if len(raw) != len(rows) * width or end > count:
                raise ValueError(f"stored dense vectors are not {count} of dimension {dimension}")
            ids[filled:end] = [row[0] for row in rows]
            vectors[filled:end] = np.frombuffer(raw, dtype=FLOAT).reshape(len(rows), dimension)
            filled = end
        return cls(ids=ids, vectors=vectors)

    def search(
        self, query: npt.ArrayLike, limit: int, allowed: Ids | None = None
    ) -> tuple[Ids, Scores]:
        """Cosine similarity (stored rows are unit length; the query is normalised here),
        among the rows whose ids are in `allowed` if given (a metadata filter)."""
        rows = None if allowed is None else np.flatnonzero(np.isin(self.ids, allowed))
        if not len(self.ids) or (rows is not None and not len(rows)):
            return self.ids[:0], np.empty(0)
        q = np.asarray(query, dtype=FLOAT)
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        ids = self.ids if rows is None else self.ids[rows]
        scores = (self.vectors if rows is None else self.vectors[rows]) @ q
        chosen = best(scores, limit)
        return ids[chosen], scores[chosen].astype(np.float64)


@attrs.frozen(eq=False)
class SparseColumns:
    """One scope's sparse vectors, sorted by term (posting lists side by side): a query term's
    postings are one searchsorted range, so a query touches only the postings of its terms.

    `rows[k]` is the position in `ids` of the point holding posting k; `points` counts every
    point with a sparse vector (even an empty one), the N of the IDF.
    """

    ids: Ids
    terms: npt.NDArray[np.uint32]
    rows: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float32]

    @property
    def points(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.terms.nbytes + self.rows.nbytes + self.weights.nbytes)

    @classmethod
    def load(cls, connection: sqlite3.Connection, scope_id: int) -> SparseColumns:
        """Read inside the caller's read transaction, then sort the postings by term."""
        id_parts: list[Ids] = []
        length_parts: list[npt.NDArray[np.int64]] = []
        pair_parts: list[npt.NDArray[np.void]] = []
        cursor = connection.execute(
            "SELECT id, sparse FROM points WHERE scope_id = ? AND sparse IS NOT NULL", (scope_id,)
        )
        while rows := cursor.fetchmany(FETCH):
            id_parts.append(np.array([row[0] for row in rows], dtype=np.int64))
            length_parts.append(np.array([len(row[1]) for row in rows], dtype=np.int64))
            pair_parts.append(np.frombuffer(b"".join(row[1] for row in rows), dtype=PAIR))
        if not id_parts:
            return cls(
                ids=np.empty(0, np.int64),
                terms=np.empty(0, np.uint32),
                rows=np.empty(0, np.int32),
                weights=np.empty(0, FLOAT),
            )
        ids = np.concatenate(id_parts)
        pairs = np.concatenate(pair_parts)
        pair_parts.clear()  # free as we go: loading peaks well above the arrays kept
        terms, weights = pairs["term"].copy(), pairs["weight"].copy()
        del pairs
        order = _term_order(terms)
        owners = np.repeat(
            np.arange(len(ids), dtype=np.int32), np.concatenate(length_parts) // PAIR.itemsize
        )
        return cls(ids=ids, terms=terms[order], rows=owners[order], weights=weights[order])

    def search(
        self, query: SparseVector, limit: int, allowed: Ids | None = None
    ) -> tuple[Ids, Scores]:
        """Qdrant's IDF modifier: score = sum over query terms t present in the point of
        q_t * w_t * ln((N - n_t + 0.5) / (n_t + 0.5) + 1), N = points with a sparse vector,
        n_t = those holding t. Only points sharing a term with the query are hits, and with
        `allowed` only those whose ids are in it (the IDF still counts every point)."""
        wanted = [
            (int(t), float(v))
            for t, v in zip(query.indices, query.values, strict=True)
            if 0 <= int(t) <= MAX_TERM
        ]
        if not wanted or not self.points:
            return self.ids[:0], np.empty(0)
        terms = np.array([t for t, _ in wanted], dtype=np.uint32)
        starts = np.searchsorted(self.terms, terms, side="left")
        ends = np.searchsorted(self.terms, terms, side="right")
        rows: list[npt.NDArray[np.int32]] = []
        parts: list[npt.NDArray[np.float64]] = []
        n = self.points
        for (_, value), start, end in zip(wanted, starts.tolist(), ends.tolist(), strict=True):
            if end == start:
                continue
            df = end - start
            weight = value * math.log((n - df + 0.5) / (df + 0.5) + 1)
            rows.append(self.rows[start:end])
            parts.append(self.weights[start:end].astype(np.float64) * weight)
        if not rows:
            return self.ids[:0], np.empty(0)
        hit_rows = np.concatenate(rows)
        totals: Scores = np.bincount(  # float64 with weights= (the stubs say int)
            hit_rows, weights=np.concatenate(parts), minlength=n
        ).astype(np.float64, copy=False)
        touched = np.zeros(n, dtype=bool)
        touched[hit_rows] = True
        if allowed is not None:
            touched &= np.isin(self.ids, allowed)
        candidates = np.flatnonzero(touched)
        chosen = candidates[best(totals[candidates], limit)]
        return self.ids[chosen], totals[chosen]
