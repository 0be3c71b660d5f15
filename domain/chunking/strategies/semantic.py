"""SEMANTIC: cut where adjacent sentences stop being about the same thing.

Sentences of every piece are embedded in batches; a cut goes where the cosine distance between
neighbours exceeds the given percentile of that piece's distances (as the common "percentile"
breakpoint rule does). Pieces still too large are left to the caller's recursive refinement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragline.domain.chunking.models import SentenceEmbedder
from ragline.domain.chunking.separators import CutIndex

Span = tuple[int, int]


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (numpy's default method), for a non-empty sequence."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _cosine_distance(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 1.0
    return 1.0 - dot / (na * nb)


def semantic_groups(
    ranges: Sequence[tuple[CutIndex, int, int]],
    embedder: SentenceEmbedder,
    pct: float,
    batch_size: int,
) -> list[list[Span]]:
    """For each range, consecutive spans covering it, cut at semantic breakpoints.

    Raises whatever the embedder raises, or ValueError when it returns the wrong count; the
    engine then falls back to RECURSIVE.
    """
    per_range = [index.sentence_spans(s, e) for index, s, e in ranges]
    sentences = [
        index.slice(a, b).strip()
        for (index, _, _), spans in zip(ranges, per_range, strict=True)
        for a, b in spans
    ]
    vectors: list[Sequence[float]] = []
    for k in range(0, len(sentences), max(1, batch_size)):
        batch = sentences[k : k + batch_size]
        got = list(embedder.embed(batch))
        if len(got) != len(batch):
            raise ValueError(f"embedder returned {len(got)} vectors for {len(batch)} sentences")
        vectors.extend(got)
    groups: list[list[Span]] = []
    offset = 0
    for (_, s, e), spans in zip(ranges, per_range, strict=True):
        vecs = vectors[offset : offset + len(spans)]
        offset += len(spans)
        if len(spans) < 3:
            groups.append([(s, e)])
            continue
        distances = [_cosine_distance(vecs[i], vecs[i + 1]) for i in range(len(vecs) - 1)]
        threshold = percentile(distances, pct)
        out: list[Span] = []
        start = s
        for i, d in enumerate(distances):
            if d > threshold:
                cut = spans[i + 1][0]
                out.append((start, cut))
                start = cut
        out.append((start, e))
        groups.append(out)
    return groups
