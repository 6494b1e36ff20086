"""Turn codes: one sign bit per dimension of every turn vector, the compact form the turn
channel shortlists by once a vault holds many turns (docs/pipeline.md, "turns").

A code is the sign of each dimension of the vector minus a centre (the mean of the first
vectors coded: embedders put most vectors on one side of zero in many dimensions, and a bit
that is the same for every turn tells nothing apart), packed into 64-bit words: 48 bytes for
384 dimensions, 48 MB for a million turns where their float32 vectors take 1.5 GB. The number
of differing bits (the Hamming distance) between two codes falls as the angle between the
vectors narrows, so the turns nearest a query's code are the likely nearest turns; the caller
re-scores them with their exact vectors. `TurnCodes` holds the codes of every turn with a
vector, by index rowid, with each turn's session (a session filter selects its rows), and
grows by appending (`add`). Headless: numpy only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np

#: What the trace calls the code.
CODE_NAME = "sign bits"
#: The file beside the index the codes are kept in between processes (`index/vectors.py`,
#: "turn codes kept"): `<index>` + this suffix.
SIDE_SUFFIX = "-turncodes"
#: Words whose bit counts are added in uint8 (3 x 64 = 192 <= 255) before widening.
WORDS_IN_UINT8 = 3
#: Vectors the centre is the mean of (the first ones coded; the order of the index's rowids).
CENTRE_ROWS = 4096


def code_words(dim: int) -> int:
    """64-bit words per code of a `dim`-dimensional vector."""
    return (dim + 63) // 64


def encode(mat: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The codes of the rows of `mat` as a (words, rows) uint64 array: bit j of a row is set
    when its dimension j is above the centre's; dimensions past `dim` pad with zero bits."""
    rows, dim = mat.shape
    nbytes = code_words(dim) * 8
    packed = np.zeros((rows, nbytes), dtype=np.uint8)
    packed[:, : (dim + 7) // 8] = np.packbits(mat > centre, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


class TurnCodes:
    """The sign-bit codes of the turns with a vector, in the order they were added, with
    each one's index rowid and session. Grows by `add` (capacity doubles, so appending a few
    rows copies nothing most of the time)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.centre = np.zeros(dim, dtype=np.float32)
        self.n = 0
        self._words = np.zeros((code_words(dim), 0), dtype=np.uint64)
        self._rowids = np.zeros(0, dtype=np.int64)
        self._sessions = np.zeros(0, dtype=np.int32)
        self.session_ids: list[str] = []
        """Session ids, by the number `_sessions` holds."""
        self._session_no: dict[str, int] = {}
        # Scratch for `distances` (one query at a time: the owner's lock serialises them).
        self._scratch: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def rowids(self) -> np.ndarray:
        """Each coded turn's rowid in the index."""
        return self._rowids[: self.n]

    @property
    def words_per_code(self) -> int:
        """64-bit words per code."""
        return int(self._words.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes the codes, rowids and sessions take."""
        return int(self._words[:, : self.n].nbytes + self.n * (8 + 4))

    def add(self, rowids: np.ndarray, sessions: list[str], mat: np.ndarray) -> None:
        """Append the codes of `mat`'s rows (turn `rowids[i]` of session `sessions[i]`). The
        first rows added set the centre (the mean of up to CENTRE_ROWS of them)."""
        k = len(rowids)
        if k == 0:
            return
        if self.n == 0:
            head = np.asarray(mat[:CENTRE_ROWS], dtype=np.float64)
            self.centre = head.mean(axis=0).astype(np.float32)
        need = self.n + k
        if need > self._words.shape[1]:
            cap = max(need, 2 * self._words.shape[1], 1024)
            words = np.zeros((self._words.shape[0], cap), dtype=np.uint64)
            words[:, : self.n] = self._words[:, : self.n]
            self._words = words
            self._rowids = np.concatenate([self._rowids[: self.n],
                                           np.zeros(cap - self.n, np.int64)])
            self._sessions = np.concatenate([self._sessions[: self.n],
                                             np.zeros(cap - self.n, np.int32)])
            self._scratch = None
        self._words[:, self.n : need] = encode(np.asarray(mat, dtype=np.float32), self.centre)
        self._rowids[self.n : need] = rowids
        nos = self._session_no
        for i, s in enumerate(sessions):
            no = nos.get(s)
            if no is None:
                no = nos[s] = len(self.session_ids)
                self.session_ids.append(s)
            self._sessions[self.n + i] = no
        self.n = need

    def of_session(self, session_id: str) -> np.ndarray:
        """Positions of the coded turns of `session_id`."""
        no = self._session_no.get(session_id)
        if no is None:
            return np.zeros(0, dtype=np.intp)
        return np.flatnonzero(self._sessions[: self.n] == no)

    def distances(self, q: np.ndarray) -> np.ndarray:
        """The Hamming distance from `q`'s code to every coded turn (uint16, by position):
        one word at a time over contiguous rows, into reused buffers (at a million turns a
        temporary per word would cost as much as the counting). The counts of up to three
        words (at most 192) are added in uint8 and widened to uint16 once per three words:
        an add of uint8 counts into uint16 converts them first, on every word."""
        qw = encode(np.asarray(q, dtype=np.float32).reshape(1, -1), self.centre)[:, 0]
        n = self.n
        if self._scratch is None or len(self._scratch[0]) < n:
            self._scratch = (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint8),
                             np.empty(n, dtype=np.uint8))
        x, c, acc = self._scratch[0][:n], self._scratch[1][:n], self._scratch[2][:n]
        out = np.zeros(n, dtype=np.uint16)
        words = self._words.shape[0]
        for h in range(0, words, WORDS_IN_UINT8):
            for j in range(h, min(h + WORDS_IN_UINT8, words)):
                np.bitwise_xor(self._words[j, :n], qw[j], out=x)
                if j == h:
                    np.bitwise_count(x, out=acc)
                else:
                    np.bitwise_count(x, out=c)
                    np.add(acc, c, out=acc)
            if h == 0:
                np.copyto(out, acc)
            else:
                np.add(out, acc, out=out)
        return out

    def shortlist(self, q: np.ndarray, size: int, among: np.ndarray | None = None) -> np.ndarray:
        """Positions of the `size` coded turns (of `among`, when given) whose codes are
        nearest `q`'s, nearest first; equal distances by position. Chosen by counting the
        distances (at most dim + 1 values), not by sorting them."""
        dist = self.distances(q)
        if among is not None:
            pos = np.asarray(among, np.intp)
            dist = dist[pos]
            if size >= len(pos):
                return pos[np.lexsort((pos, dist))]
        elif size >= self.n:
            return np.lexsort((np.arange(self.n), dist))
        cum = np.cumsum(np.bincount(dist, minlength=self.dim + 1))
        cut = int(np.searchsorted(cum, size))  # the distance the size-th nearest is at
        # One pass over every distance (the shortlist's candidates, in position order), then
        # the rest on those few: those nearer than the cut, and the first at it.
        near = np.flatnonzero(dist <= cut)
        dnear = dist[near]
        inside = near[dnear < cut]
        at_cut = near[dnear == cut][: size - len(inside)]
        keep = np.concatenate([inside, at_cut])
        keep = keep[np.lexsort((keep, dist[keep]))]
        return keep if among is None else pos[keep]

    def agrees(self, positions: np.ndarray, sessions: Sequence[str], mat: np.ndarray) -> bool:
        """Whether the codes at `positions` are those of `mat`'s rows (coded with this
        centre) and belong to `sessions`: a spot check of codes kept from another process."""
        pos = np.asarray(positions, dtype=np.intp)
        if len(pos) != len(sessions) or len(pos) != len(mat) or (len(pos) and (
                int(pos.min()) < 0 or int(pos.max()) >= self.n)):
            return False
        if [self.session_ids[int(no)] for no in self._sessions[pos]] != list(sessions):
            return False
        return bool(np.array_equal(encode(np.asarray(mat, np.float32).reshape(len(pos), -1),
                                          self.centre), self._words[:, pos]))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The codes as named arrays (what `from_arrays` takes back): the saved form."""
        n = self.n
        return {"words": np.ascontiguousarray(self._words[:, :n]), "rowids": self._rowids[:n],
                "sessions": self._sessions[:n], "centre": self.centre,
                "session_ids": np.frombuffer(json.dumps(self.session_ids).encode(), np.uint8)}

    @classmethod
    def from_arrays(cls, dim: int, arrays: Mapping[str, np.ndarray]) -> TurnCodes:
        """The codes `to_arrays` gave; ValueError when the arrays do not fit together."""
        words = np.asarray(arrays["words"], dtype=np.uint64)
        rowids = np.asarray(arrays["rowids"], dtype=np.int64)
        sessions = np.asarray(arrays["sessions"], dtype=np.int32)
        centre = np.asarray(arrays["centre"], dtype=np.float32)
        ids = json.loads(bytes(np.asarray(arrays["session_ids"], np.uint8)).decode())
        n = len(rowids)
        if (words.shape != (code_words(dim), n) or len(sessions) != n or centre.shape != (dim,)
                or not isinstance(ids, list) or not all(isinstance(s, str) for s in ids)
                or (n and not 0 <= int(sessions.min()) <= int(sessions.max()) < len(ids))):
            raise ValueError("turn codes: arrays of unexpected shapes")
        codes = cls(dim)
        codes.centre, codes.n = centre, n
        codes._words = np.array(words, order="C")  # writable, owned (`add` may grow it)
        codes._rowids, codes._sessions = rowids.copy(), sessions.copy()
        codes.session_ids = ids
        codes._session_no = {s: i for i, s in enumerate(ids)}
        return codes
