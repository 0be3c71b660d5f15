"""RECURSIVE: cut along the separator hierarchy (headings, blank lines, lines, sentence ends,
clause marks, spaces, characters) so that every piece fits `max_size`.

Greedy packing over cut offsets: from the current start, cut at the furthest cut position that
still fits; a segment too large on its own is split at the next finer level. Sizes are in
characters (offset arithmetic, no copies) or in tokens (through a TokenCounter).
"""

from __future__ import annotations

from ragline.domain.chunking.plan import SizeUnit, StepParams
from ragline.domain.chunking.separators import CutIndex, Level
from ragline.domain.chunking.sizing import TokenCounter

Span = tuple[int, int]
# the levels whose cut follows a fixed string: (that string, its length)
_NEEDLES = {Level.BLANK_LINE: ("\n\n", 2), Level.LINE: ("\n", 1), Level.SPACE: (" ", 1)}
_SEARCHED = frozenset(_NEEDLES)


class RecursiveSplitter:
    __slots__ = ("_count", "_index", "_max", "_min", "_overlap", "_tokens")

    def __init__(self, params: StepParams, counter: TokenCounter) -> None:
        self._index = CutIndex("")
        self._max = params.max_size
        self._min = params.min_size
        self._overlap = params.overlap
        self._tokens = params.unit is SizeUnit.TOKENS
        self._count = counter.count

    def size(self, start: int, end: int) -> int:
        if self._tokens:
            return self._count(self._index.slice(start, end))
        return end - start

    def fits(self, index: CutIndex, start: int, end: int) -> bool:
        if end - start <= self._max:
            return True  # a token never spans less than one character
        if not self._tokens:
            return False
        return self._count(index.slice(start, end)) <= self._max

    def _fits(self, start: int, end: int) -> bool:
        return self.fits(self._index, start, end)

    def split(
        self, index: CutIndex, start: int, end: int, level: int = Level.HEADING
    ) -> list[Span]:
        """Consecutive (or overlapping, with overlap) spans covering [start, end), which lies
        in `index`'s text."""
        self._index = index
        if end - start <= self._max or (self._tokens and self._fits(start, end)):
            return [(start, end)]
        out: list[Span] = []
        if level == Level.HEADING and index.without_headings():
            level = Level.BLANK_LINE  # the heading level would only hand the range down
        if self._tokens:
            self._split_tokens(start, end, level, out)
        else:
            self._split_chars(start, end, level, out)
        if self._min and len(out) > 1:
            out = self._merge_small(out)
        return out

    def _split_chars(self, s: int, e: int, level: int, out: list[Span]) -> None:
        mx, ov = self._max, self._overlap
        if e - s <= mx:
            out.append((s, e))
            return
        if level == Level.CHARACTER:
            a = s
            while True:
                b = min(a + mx, e)
                out.append((a, b))
                if b == e:
                    return
                a = b - ov
        if not ov and level in _SEARCHED:
            self._pack_searched(s, e, level, out)
            return
        index = self._index
        last_cut, first_cut = index.last_cut, index.first_cut
        cur = prev_end = s
        while e - cur > mx:
            c = last_cut(level, cur, cur + mx)
            if c > prev_end:
                out.append((cur, c))
                prev_end = cur = c
                if ov:
                    o = first_cut(level, max(cur - ov - 1, out[-1][0]), c)
                    if o > 0:
                        cur = o
            elif cur < prev_end:  # the overlap left no room: restart at the previous end
                cur = prev_end
            else:  # the next segment alone is too large: split it finer
                nxt = first_cut(level, cur, e)
                if nxt < 0:
                    nxt = e
                self._split_chars(cur, nxt, level + 1, out)
                cur = prev_end = nxt
                if cur >= e:
                    return
        out.append((cur, e))

    def _pack_searched(self, s: int, e: int, level: int, out: list[Span]) -> None:
        """`_split_chars` without overlap at a level whose cuts follow a fixed string (blank
        line, line, space): the same cuts, found by str.rfind / str.find right here (this
        loop runs once per child: no method call per cut)."""
        mx = self._max
        index = self._index
        text, base = index.text, index.base
        needle, width = _NEEDLES[level]
        back = width - 1  # a blank line may begin just before the piece: ("\n" + "\n...")
        cur = s
        while e - cur > mx:
            lo = cur - base - back
            p = text.rfind(needle, lo if lo > 0 else 0, cur + mx - base)
            if p >= 0:  # the furthest cut within max_size (it lies past `cur`)
                c = p + width + base
                out.append((cur, c))
                cur = c
                continue
            # the next segment alone is too large: split it finer. Its end is the first cut
            # past the window just searched (a separator there would have been found)
            p = text.find(needle, cur + mx - base - back, e - base - 1)
            nxt = e if p < 0 else p + width + base
            self._split_chars(cur, nxt, level + 1, out)
            cur = nxt
            if cur >= e:
                return
        out.append((cur, e))

    def _split_tokens(self, s: int, e: int, level: int, out: list[Span]) -> None:
        mx = self._max
        if self._fits(s, e):
            out.append((s, e))
            return
        if level == Level.CHARACTER:
            self._split_tokens_by_prefix(s, e, out)
            return
        arr, lo, hi = self._index.cuts(level, s, e)
        if lo >= hi:
            self._split_tokens(s, e, level + 1, out)
            return
        bounds = [s, *arr[lo:hi], e]
        sizes = [self.size(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1)]
        n = len(sizes)
        i = 0
        while i < n:
            if sizes[i] > mx:
                self._split_tokens(bounds[i], bounds[i + 1], level + 1, out)
                i += 1
                continue
            total, j = 0, i
            while j < n and sizes[j] <= mx and total + sizes[j] <= mx:
                total += sizes[j]
                j += 1
            out.append((bounds[i], bounds[j]))
            if j >= n:
                return
            back, k = 0, j
            while self._overlap and k - 1 > i and back + sizes[k - 1] <= self._overlap:
                k -= 1
                back += sizes[k]
            i = k

    def _split_tokens_by_prefix(self, s: int, e: int, out: list[Span]) -> None:
        """Unsplittable by any separator: binary-search the longest prefix within max_size."""
        a = s
        while a < e:
            if self._fits(a, e):
                out.append((a, e))
                return
            lo, hi = a + 1, e  # the answer b in [a+1, e)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.size(a, mid) <= self._max:
                    lo = mid
                else:
                    hi = mid - 1
            out.append((a, lo))
            a = lo

    def _merge_small(self, pieces: list[Span]) -> list[Span]:
        mn = self._min
        merged: list[Span] = [pieces[0]]
        if not self._tokens:  # the same rule with offset arithmetic only
            mx = self._max
            for a, b in pieces[1:]:
                pa, pb = merged[-1]
                if (b - a < mn or pb - pa < mn) and b - pa <= mx:
                    merged[-1] = (pa, b)
                else:
                    merged.append((a, b))
            return merged
        for a, b in pieces[1:]:
            pa, pb = merged[-1]
            small = self.size(a, b) < mn or self.size(pa, pb) < mn
            if small and self._fits(pa, b):
                merged[-1] = (pa, b)
            else:
                merged.append((a, b))
        return merged
