"""Exact one-sided bear-off database (as GNU Backgammon's): how many rolls a side needs to bear off.

Positions
---------
A *one-sided bear-off position* is one side's checkers, 0 to 15 of them, all on its six home points (none on
points 7..24 or the bar); the others are borne off.  It is written as the per-point counts ``(c1, ..., c6)``
(``c1`` on the ace point), which are columns 0..5 of a row of a bgai board.  There are C(21, 6) = 54,264 of them
(:data:`NUM_POSITIONS`), the empty board (all 15 off) included.

Index
-----
Positions are numbered 0..54,263 (:func:`position_index`, :func:`position_from_index`): first by the number
``n`` of checkers on the board (the C(n + 5, 6) positions with fewer checkers come first), then by the sorted
list of the points the checkers stand on, in lexicographic order (so, equivalently, ``(c1, ..., c6)`` in
*decreasing* lexicographic order).  Index 0 is the empty board, 1..6 one checker on the 1..6 point, 7 two checkers
on the ace point, 8 one on the ace and one on the 2 point, 27 two on the 6 point, 54,263 fifteen on the 6 point.
In closed form, with ``r_i = n - c_1 - ... - c_(i-1)`` the checkers on points ``i..6``::

    index = C(n + 5, 6) + sum over i = 1..6 with r_i > c_i of C(r_i - c_i - 1 + 6 - i, 6 - i)

(the i-th term counts the positions that agree on points ``1..i-1`` and have more checkers on point ``i``).  This
is GNU Backgammon's numbering of its one-sided database (``PositionBearoff`` for 6 points and 15 checkers, the
ids of gnubg-nn's ``bearoff_id_2_pos``), so entries correspond one to one.

Distributions
-------------
For each position ``k`` the database holds two probability distributions over ``t = 0, 1, ..., max_rolls``:

* ``off[k, t]``: the probability that bearing off **all** the checkers takes exactly ``t`` rolls (turns), when
  the side plays every roll so that the resulting position has the smallest expected number of rolls left;
* ``first_off[k, t]``: the probability that the **first** checker is borne off on exactly the ``t``-th roll, when
  the side plays every roll to minimise the expected number of rolls until that happens (a separate choice of
  plays: the race to save the gammon).  A position with a checker already off has ``first_off[k] = [1, 0, ...]``.

This is the criterion and the pair of distributions of GNU Backgammon's one-sided database (``makebearoff.c``:
for each of the 21 rolls the play with the fewest expected rolls, chosen separately for the gammon
distribution; ``bearoff.c``), computed here in float64 instead of gnubg's 16-bit fixed point, so values differ
from gnubg's files by its rounding (about 1e-4 at most).  Plays come from :func:`bgai.core.movegen.afterstates`.  The
dynamic programme runs over positions in increasing pip count (every play lowers it, so the positions a roll
can lead to are done first), over the 21 distinct rolls (doubles with weight 1/36, the others 2/36).  Ties: among
plays whose expected number of rolls agree within 1e-9, the resulting position with the smallest index is taken.

Cache
-----
:func:`build` computes the database (a few seconds on one core) and writes it atomically as a compressed ``.npz`` to
:func:`database_path`: ``$BGAI_DATA_DIR/bearoff-os-6-15-v1.npz`` when ``BGAI_DATA_DIR`` is set, else
``$XDG_DATA_HOME/bgai/...``, else ``~/.local/share/bgai/...``.  :func:`get_database` loads it on first use (building
it when absent or unreadable) and keeps it in memory; :func:`bearoff_probabilities` and :func:`is_bearoff` use it.
Before building on demand it logs one line at ``INFO`` to the logger ``bgai.model.bearoff`` (:data:`BUILD_NOTICE`):
silent in a library (logging shows only warnings unless the application configures it); the ``bgai`` command line
shows it on stderr (:func:`bgai.cli.main`).

Two-sided evaluation
--------------------
:func:`bearoff_probabilities` combines both sides' distributions as GNU Backgammon's one-sided bear-off
evaluation does (``bearoff.c``, ``BearoffEvalOneSided``), for the side on roll, with ``P_me``/``P_opp`` the
``off`` distributions and ``G_me``/``G_opp`` the ``first_off`` ones::

    win          = sum_i P_me[i] * sum_{j >= i} P_opp[j]      (I finish on my i-th roll, the opponent needs >= i)
    win gammon   = sum_i P_me[i] * sum_{j >= i} G_opp[j]      (he has not borne a checker off in his i - 1 rolls)
    lose gammon  = sum_i P_opp[i] * sum_{j > i} G_me[j]       (he finishes on his i-th roll, I have had i rolls)
    backgammons  = 0                                          (no checker can be in the winner's home board)

A side with a checker already off cannot be gammoned (its ``G`` is all at 0 rolls).  Like gnubg's, this is the
one-sided approximation: each side plays to minimise its own expected rolls, not to maximise its winning chance.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
import zipfile
from dataclasses import dataclass
from math import comb
from pathlib import Path

import numpy as np

from bgai.core.board import as_batch
from bgai.core.movegen import afterstates
from bgai.errors import BgaiError, InvalidPositionError
from bgai.util.fileio import atomic_write, ensure_directory

__all__ = [
    "NUM_POSITIONS",
    "BearoffDatabase",
    "bearoff_probabilities",
    "build",
    "clear_cache",
    "compute",
    "database_path",
    "get_database",
    "is_bearoff",
    "load",
    "position_from_index",
    "position_index",
    "positions",
]

#: Home points of a side, and the most checkers it has.
NUM_HOME_POINTS = 6
MAX_CHECKERS = 15
#: Number of one-sided bear-off positions: C(15 + 6, 6).
NUM_POSITIONS = comb(MAX_CHECKERS + NUM_HOME_POINTS, NUM_HOME_POINTS)
#: Version of the stored file's content; a file of another version is rebuilt.
FORMAT_VERSION = 1
#: File name of the cached database in the data directory.
FILE_NAME = f"bearoff-os-{NUM_HOME_POINTS}-{MAX_CHECKERS}-v{FORMAT_VERSION}.npz"
#: Environment variable naming the data directory (overrides ``$XDG_DATA_HOME/bgai``).
DATA_DIR_ENV = "BGAI_DATA_DIR"

#: The line logged (``INFO``, logger ``bgai.model.bearoff``) when :func:`get_database` builds the database on
#: demand; ``%s`` is the data directory.
BUILD_NOTICE = "building the one-sided bear-off database (first use, about 5 s; cached in %s)"

log = logging.getLogger(__name__)

_FORMAT_TAG = "bgai one-sided bear-off database"
#: Length of the distributions during the computation (the longest bear-off needs fewer rolls; checked).
_WORK_ROLLS = 40
#: Expected numbers of rolls closer than this count as a tie (then the smallest resulting index wins).
_TIE = 1e-9
#: Rows per block in :meth:`BearoffDatabase.probabilities` (bounded temporaries).
_BLOCK = 16384

# _BINOM[a, b] = C(a, b) for the closed-form index
_BINOM = np.array([[comb(a, b) for b in range(NUM_HOME_POINTS + 1)] for a in range(32)], dtype=np.int64)


def _rolls() -> tuple[np.ndarray, np.ndarray]:
    """The 21 distinct rolls ``(21, 2)`` (larger die first) and their weights out of 36 ``(21,)``."""
    dice = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    weights = [1 if a == b else 2 for a, b in dice]
    return np.array(dice, dtype=np.int64), np.array(weights, dtype=np.float64)


_POSITIONS: np.ndarray | None = None


def positions() -> np.ndarray:
    """All one-sided bear-off positions in index order.

    Returns:
        ``(54264, 6)`` int8 (read-only): row ``k`` is the per-point counts ``(c1, ..., c6)`` of index ``k``.
    """
    global _POSITIONS
    if _POSITIONS is None:
        # enumerate by count n, then (c1, ..., c6) in decreasing lexicographic order, built point by point
        rows = []
        for n in range(MAX_CHECKERS + 1):
            block = np.zeros((1, 0), dtype=np.int8)
            left = np.array([n])
            for point in range(NUM_HOME_POINTS):
                if point == NUM_HOME_POINTS - 1:
                    block = np.concatenate([block, left[:, None].astype(np.int8)], axis=1)
                    break
                reps = left + 1  # choices c = left, left - 1, ..., 0 (decreasing)
                idx = np.repeat(np.arange(len(block)), reps)
                offs = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
                c = left[idx] - offs
                block = np.concatenate([block[idx], c[:, None].astype(np.int8)], axis=1)
                left = left[idx] - c
            rows.append(block)
        pos = np.concatenate(rows, axis=0)
        pos.setflags(write=False)
        _POSITIONS = pos
    return _POSITIONS


def position_index(counts) -> np.ndarray:
    """Indices of one-sided bear-off positions (see the module docstring for the numbering).

    Args:
        counts: ``(..., 6)`` integers, checkers on the 1..6 points (a bgai board row's columns 0..5).

    Returns:
        ``(...)`` int64 indices in ``0..54263``.

    Raises:
        InvalidPositionError: wrong last dimension, a negative count, or more than 15 checkers.
    """
    c = np.asarray(counts)
    if c.ndim == 0 or c.shape[-1] != NUM_HOME_POINTS:
        raise InvalidPositionError(f"bear-off positions must have shape (..., 6), got {c.shape}")
    if c.size and not np.issubdtype(c.dtype, np.integer):
        raise InvalidPositionError(f"bear-off checker counts must be integers, got dtype {c.dtype}")
    c = c.astype(np.int32)
    n = c.sum(axis=-1)
    if c.size and (c.min() < 0 or n.max() > MAX_CHECKERS):
        bad = np.flatnonzero(((c < 0).any(axis=-1) | (n > MAX_CHECKERS)).ravel())[0]
        raise InvalidPositionError(
            f"bear-off position {c.reshape(-1, 6)[bad].tolist()} (input {bad}) has negative counts or more than 15 "
            "checkers"
        )
    return _table_index(c)


def _table_index(c: np.ndarray) -> np.ndarray:
    """:func:`position_index` without its checks, for ``(..., 6)`` int32 counts known to be valid."""
    low, high = _index_tables()
    r4 = c[..., 3] + c[..., 4] + c[..., 5]
    a = ((c[..., 0] * 16 + c[..., 1]) * 16 + c[..., 2]) * 16 + r4
    b = (c[..., 3] * 16 + c[..., 4]) * 16 + c[..., 5]
    return low[a] + high[b]


def _index_formula(c: np.ndarray) -> np.ndarray:
    """The closed-form index of the module docstring, term by term, for ``(M, 6)`` int64 counts (no checks)."""
    n = c.sum(axis=1)
    index = _BINOM[n + NUM_HOME_POINTS - 1, NUM_HOME_POINTS].copy()
    rest = n.copy()
    for point in range(NUM_HOME_POINTS):
        k = NUM_HOME_POINTS - 1 - point  # points after this one
        t = rest - c[:, point] - 1
        index += np.where(t >= 0, _BINOM[np.maximum(t, 0) + k, k], 0)
        rest -= c[:, point]
    return index


_TABLES: tuple[np.ndarray, np.ndarray] | None = None


def _index_tables() -> tuple[np.ndarray, np.ndarray]:
    """Lookup tables splitting the closed form: index = low[c1, c2, c3, c4 + c5 + c6] + high[c4, c5, c6].

    The terms of points 4..6 depend on ``(c4, c5, c6)`` only; the base C(n + 5, 6) and the terms of points 1..3
    on ``(c1, c2, c3)`` and ``n``, i.e. on ``c4 + c5 + c6``.  Entries for more than 15 checkers are unused.
    """
    global _TABLES
    if _TABLES is None:
        grid = np.indices((16, 16, 16)).reshape(3, -1).T.astype(np.int64)  # (4096, 3) as c4, c5, c6 (or c1..c3)
        ok = grid.sum(axis=1) <= MAX_CHECKERS
        tail = np.zeros((len(grid), 6), dtype=np.int64)
        tail[:, 3:] = grid
        high = np.zeros(len(grid), dtype=np.int64)
        high[ok] = _index_formula(tail[ok]) - _BINOM[grid[ok].sum(axis=1) + 5, 6]
        # low[(c1, c2, c3), r]: the index of (c1, c2, c3, r, 0, 0) less high[(r, 0, 0)]
        full = np.zeros((len(grid), 16, 6), dtype=np.int64)
        full[:, :, :3] = grid[:, None, :]
        full[:, :, 3] = np.arange(16)[None, :]
        full = full.reshape(-1, 6)
        ok = full.sum(axis=1) <= MAX_CHECKERS
        low = np.zeros(len(full), dtype=np.int64)
        low[ok] = _index_formula(full[ok]) - high[full[ok, 3] * 256]
        low.setflags(write=False)
        high.setflags(write=False)
        _TABLES = (low, high)
    return _TABLES


def position_from_index(index) -> np.ndarray:
    """Per-point counts of one-sided bear-off positions given by index.

    Args:
        index: integer or integer array of indices in ``0..54263``.

    Returns:
        ``(..., 6)`` int8 counts ``(c1, ..., c6)`` (a new array).

    Raises:
        InvalidPositionError: an index outside ``0..54263`` or not an integer.
    """
    i = np.asarray(index)
    if i.size and not np.issubdtype(i.dtype, np.integer):
        raise InvalidPositionError(f"bear-off indices must be integers, got dtype {i.dtype}")
    if i.size and (i.min() < 0 or i.max() >= NUM_POSITIONS):
        bad = i.ravel()[np.flatnonzero(((i < 0) | (i >= NUM_POSITIONS)).ravel())[0]]
        raise InvalidPositionError(f"bear-off index {int(bad)} is outside 0..{NUM_POSITIONS - 1}")
    return positions()[i].copy()


def _expected(dist: np.ndarray) -> np.ndarray:
    """Expected number of rolls of ``(..., L)`` distributions over ``t = 0..L-1``."""
    return dist @ np.arange(dist.shape[-1], dtype=np.float64)


def _best(src: np.ndarray, value: np.ndarray, child: np.ndarray) -> np.ndarray:
    """For each group of equal ``src`` (non-decreasing, every group present): the ``child`` of least ``value``.

    Ties within :data:`_TIE` go to the smallest ``child``.  Returns one ``child`` per group, in group order.
    """
    key = np.rint(value / _TIE).astype(np.int64) * NUM_POSITIONS + child
    starts = np.flatnonzero(np.diff(src, prepend=-1))
    return np.minimum.reduceat(key, starts) % NUM_POSITIONS


def compute() -> BearoffDatabase:
    """Compute the database in memory (no file): the dynamic programme of the module docstring.

    Returns:
        A :class:`BearoffDatabase`.  Takes about 2.5 s on one core (9.2 million afterstates) and under 100 MB
        of temporary memory.
    """
    pos = positions()
    n_on = pos.sum(axis=1, dtype=np.int64)
    pips = pos.astype(np.int64) @ np.arange(1, NUM_HOME_POINTS + 1)
    dice, weights = _rolls()
    n_rolls = len(dice)
    length = _WORK_ROLLS
    off = np.zeros((NUM_POSITIONS, length), dtype=np.float64)
    first = np.zeros((NUM_POSITIONS, length), dtype=np.float64)
    off[0, 0] = 1.0
    first[n_on < MAX_CHECKERS, 0] = 1.0  # a checker is already off
    mean_off = np.zeros(NUM_POSITIONS)
    mean_first = np.zeros(NUM_POSITIONS)
    order = np.argsort(pips, kind="stable")
    bounds = np.searchsorted(pips[order], np.arange(pips.max() + 2))
    for p in range(1, int(pips.max()) + 1):
        level = order[bounds[p] : bounds[p + 1]]
        if not len(level):
            continue
        m = len(level)
        boards = np.zeros((m * n_rolls, 2, 25), dtype=np.int8)
        boards[:, 0, :NUM_HOME_POINTS] = np.repeat(pos[level], n_rolls, axis=0)
        boards[:, 1, 0] = MAX_CHECKERS  # the opponent, out of the way (no contact)
        after, src = afterstates(boards, np.tile(dice, (m, 1)), validate=False)
        child = position_index(after[:, 0, :NUM_HOME_POINTS])
        w = weights / 36.0
        best = _best(src, mean_off[child], child).reshape(m, n_rolls)
        dist = np.einsum("r,mrl->ml", w, off[best])
        off[level, 1:] = dist[:, :-1]
        if dist[:, -1].any():
            raise RuntimeError("bear-off distribution longer than the work length")  # pragma: no cover
        mean_off[level] = _expected(off[level])
        full = n_on[level] == MAX_CHECKERS
        if full.any():
            rows = np.flatnonzero(np.repeat(full, n_rolls)[src])
            best_g = _best(src[rows], mean_first[child[rows]], child[rows]).reshape(-1, n_rolls)
            dist_g = np.einsum("r,mrl->ml", w, first[best_g])
            first[level[full], 1:] = dist_g[:, :-1]
            mean_first[level[full]] = _expected(first[level[full]])
    support = int(np.flatnonzero(off.any(axis=0))[-1]) + 1
    return BearoffDatabase(off[:, :support], first[:, :support])


@dataclass(frozen=True, eq=False)
class BearoffDatabase:
    """The one-sided bear-off database (see the module docstring).

    Attributes:
        off: ``(54264, L)`` float64, ``off[k, t]`` = P(bearing off all checkers of position ``k`` takes exactly
            ``t`` rolls); ``L - 1`` is the most rolls any position can need.
        first_off: ``(54264, L)`` float64, ``first_off[k, t]`` = P(the first checker is borne off on exactly the
            ``t``-th roll); ``[1, 0, ...]`` when a checker is already off.
    """

    off: np.ndarray
    first_off: np.ndarray

    def __post_init__(self) -> None:
        for name in ("off", "first_off"):
            a = np.array(getattr(self, name), dtype=np.float64)  # a private read-only copy
            if a.ndim != 2 or a.shape[0] != NUM_POSITIONS or a.shape != np.shape(self.off):
                raise BgaiError(f"bear-off database: {name} has shape {a.shape}, expected ({NUM_POSITIONS}, L)")
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        # survival functions S[k, t] = P(T >= t), t = 0..L, float32 for the batched evaluation
        tails = {}
        for name in ("off", "first_off"):
            a = getattr(self, name)
            s = np.zeros((NUM_POSITIONS, a.shape[1] + 1), dtype=np.float64)
            s[:, :-1] = np.cumsum(a[:, ::-1], axis=1)[:, ::-1]
            tails[name] = s.astype(np.float32)
        object.__setattr__(self, "_tail_off", tails["off"])
        object.__setattr__(self, "_tail_first", tails["first_off"])
        object.__setattr__(self, "_off32", np.ascontiguousarray(self.off, dtype=np.float32))

    @property
    def max_rolls(self) -> int:
        """The most rolls any position needs to bear off (the distributions' last index)."""
        return self.off.shape[1] - 1

    def expected_rolls(self, index) -> np.ndarray:
        """Expected rolls to bear off all checkers, float64, shaped like ``index`` (0..54263)."""
        return _expected(self.off[_check_index(index)])

    def expected_rolls_first_off(self, index) -> np.ndarray:
        """Expected rolls until the first checker is borne off (0 if one is off), float64, shaped like ``index``."""
        return _expected(self.first_off[_check_index(index)])

    def probabilities(self, boards, validate: bool = True) -> np.ndarray:
        """See :func:`bearoff_probabilities` (this database's values).  ``validate=False`` skips the checks (for
        boards known to be bear-off positions, e.g. routed by :func:`bgai.model.routing.all_home`; about 3 us a
        board): a board outside the database then gives meaningless values or an IndexError."""
        b = as_batch(boards)
        if validate:
            _check_boards(b)
        n = b.shape[0]
        out = np.zeros((n, 5), dtype=np.float32)
        length = self.off.shape[1]
        for lo in range(0, n, _BLOCK):
            blk = b[lo : lo + _BLOCK, :, :NUM_HOME_POINTS]
            if validate:
                me = position_index(blk[:, 0])
                opp = position_index(blk[:, 1])
            else:  # routed boards (all_home): the same indices without position_index's checks
                idx = _table_index(blk.astype(np.int32))
                me, opp = idx[:, 0], idx[:, 1]
            p_me = self._off32[me]
            p_opp = self._off32[opp]
            out[lo : lo + _BLOCK, 0] = np.einsum("nl,nl->n", p_me, self._tail_off[opp, :length])
            out[lo : lo + _BLOCK, 1] = np.einsum("nl,nl->n", p_me, self._tail_first[opp, :length])
            out[lo : lo + _BLOCK, 3] = np.einsum("nl,nl->n", p_opp, self._tail_first[me, 1:])
        np.clip(out, 0.0, 1.0, out=out)
        np.minimum(out[:, 1], out[:, 0], out=out[:, 1])
        np.minimum(out[:, 3], 1.0 - out[:, 0], out=out[:, 3])
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the database to ``path`` as a compressed ``.npz``, atomically (:func:`bgai.util.fileio.atomic_write`).

        Raises:
            BgaiError: the file cannot be written (names the path).
        """
        arrays = {
            "format": np.array(_FORMAT_TAG),
            "version": np.array(FORMAT_VERSION, dtype=np.int64),
            "off": self.off,
            "first_off": self.first_off,
        }
        atomic_write(path, lambda fh: np.savez_compressed(fh, **arrays))


def _check_index(index) -> np.ndarray:
    i = np.asarray(index)
    if not np.issubdtype(i.dtype, np.integer) or (i.size and (i.min() < 0 or i.max() >= NUM_POSITIONS)):
        raise InvalidPositionError(f"bear-off indices must be integers in 0..{NUM_POSITIONS - 1}")
    return i


def _board_problems(b: np.ndarray) -> np.ndarray:
    """Per board: 0 ok, 1 bad counts, 2 a checker outside the home board, 3 game over."""
    counts = b.astype(np.int16)
    total = counts.sum(axis=2)
    bad = (counts < 0).any(axis=(1, 2)) | (total > MAX_CHECKERS).any(axis=1)
    outside = (counts[:, :, NUM_HOME_POINTS:] != 0).any(axis=(1, 2))
    over = (total == 0).any(axis=1)
    return np.select([bad, outside, over], [1, 2, 3], 0)


def _check_boards(b: np.ndarray) -> None:
    problems = _board_problems(b)
    if problems.any():
        i = int(np.flatnonzero(problems)[0])
        reason = {
            1: "is not a legal position (a negative count or more than 15 checkers on a side)",
            2: "is not a bear-off position: a side has a checker outside its home board or on the bar",
            3: "is a finished game: a side has borne off all its checkers",
        }[int(problems[i])]
        raise InvalidPositionError(f"board {i} {reason}")


def is_bearoff(boards) -> np.ndarray:
    """Which boards are in the bear-off database's domain.

    Args:
        boards: ``(N, 2, 25)`` (or one ``(2, 25)``) integer boards in bgai's layout.

    Returns:
        ``(N,)`` bool: True where both sides have all their checkers on their own home points (columns 0..5; none
        on points 7..24 or the bar), neither side has borne off all 15 (the game is not over), and the counts are
        legal (0..15 per side).  Such positions have no contact.

    Raises:
        InvalidPositionError: wrong shape, or values that do not fit ``int8``.
    """
    return _board_problems(as_batch(boards)) == 0


def bearoff_probabilities(boards) -> np.ndarray:
    """Outcome probabilities of bear-off positions for the side on roll, from the one-sided database.

    Combines both sides' distributions as GNU Backgammon's one-sided bear-off evaluation does (formulas in the
    module docstring; the database is :func:`get_database`, built on first use if not cached).

    Args:
        boards: ``(N, 2, 25)`` (or one ``(2, 25)``) integer boards in bgai's layout (row 0 on roll), all with
            :func:`is_bearoff` true.

    Returns:
        ``(N, 5)`` float32 ``[win, win gammon, win backgammon (0), lose gammon, lose backgammon (0)]`` (bgai's
        cumulative convention, :mod:`bgai.core.equity`).

    Raises:
        InvalidPositionError: wrong shape, illegal counts, or a board outside the database (a checker outside a
            home board or on the bar, or a finished game); the message names the first such board.
    """
    return get_database().probabilities(boards)


def database_path() -> Path:
    """Where the database is cached: ``$BGAI_DATA_DIR``, else ``$XDG_DATA_HOME/bgai``, else ``~/.local/share/bgai``,
    then :data:`FILE_NAME`.  (Empty variables count as unset; a leading ``~`` in ``$BGAI_DATA_DIR`` is the home
    folder.)"""
    directory = os.path.expanduser(os.environ.get(DATA_DIR_ENV) or "")
    if not directory:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg else Path.home() / ".local" / "share"
        directory = base / "bgai"
    return Path(directory) / FILE_NAME


def load(path: str | os.PathLike | None = None) -> BearoffDatabase:
    """Read a database written by :func:`build` / :meth:`BearoffDatabase.save`.

    Args:
        path: the ``.npz`` file; default :func:`database_path`.

    Returns:
        The :class:`BearoffDatabase`.

    Raises:
        BgaiError: the file is missing, unreadable, of another format or version, or its distributions are not
            probability distributions (message names the file).
    """
    path = Path(database_path() if path is None else path)
    try:
        with np.load(path, allow_pickle=False) as z:
            tag = str(z["format"]) if "format" in z.files else ""
            version = int(z["version"]) if "version" in z.files else -1
            if tag != _FORMAT_TAG or version != FORMAT_VERSION:
                raise BgaiError(f"{str(path)!r} is not a bgai bear-off database of version {FORMAT_VERSION}")
            off = np.asarray(z["off"], dtype=np.float64)
            first = np.asarray(z["first_off"], dtype=np.float64)
    except FileNotFoundError:
        raise BgaiError(f"bear-off database {str(path)!r} does not exist (run 'bgai bearoff build')") from None
    except BgaiError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # unreadable or damaged npz
        raise BgaiError(f"cannot read bear-off database {str(path)!r}: {type(exc).__name__}: {exc}") from None
    for name, a in (("off", off), ("first_off", first)):
        if (
            a.ndim != 2
            or a.shape[0] != NUM_POSITIONS
            or a.shape != off.shape
            or not np.isfinite(a).all()
            or a.min() < 0
            or np.abs(a.sum(axis=1) - 1.0).max() > 1e-9
        ):
            raise BgaiError(f"bear-off database {str(path)!r} is damaged ({name} is not a set of distributions)")
    return BearoffDatabase(off, first)


_LOCK = threading.Lock()
_DATABASE: BearoffDatabase | None = None


def build(path: str | os.PathLike | None = None, *, force: bool = False) -> BearoffDatabase:
    """Compute the database and write it (atomically) to ``path``, unless a valid one is there already.

    Args:
        path: the ``.npz`` file; default :func:`database_path` (its directory is created if needed).
        force: recompute and rewrite even if a valid file exists.

    Returns:
        The database (also kept as the one :func:`get_database` returns when ``path`` is the default).

    Raises:
        BgaiError: the directory cannot be created or the file cannot be written (names the path).
    """
    global _DATABASE
    default = path is None
    path = Path(database_path() if default else path)
    db = None
    if not force and path.exists():
        try:
            db = load(path)
        except BgaiError:
            db = None
    if db is None:
        ensure_directory(path.parent, "data directory")
        db = compute()
        db.save(path)
    if default:
        with _LOCK:
            _DATABASE = db
    return db


def get_database() -> BearoffDatabase:
    """The database, loaded from :func:`database_path` on first use and kept in memory.

    A missing, damaged or outdated file is rebuilt (:func:`build`), after logging :data:`BUILD_NOTICE` (``INFO``);
    if the data directory cannot be made or written the database is computed in memory only, with a
    :class:`RuntimeWarning` (and no notice when the folder cannot be made).
    """
    global _DATABASE
    with _LOCK:
        if _DATABASE is not None:
            return _DATABASE
        path = database_path()
        db = None
        if path.exists():
            try:
                db = load(path)
            except BgaiError:
                db = None
        if db is None:
            problem = None
            try:  # the folder first, so that the notice does not promise a cache that cannot be written
                ensure_directory(path.parent, "data directory")
                log.info(BUILD_NOTICE, path.parent)
            except BgaiError as exc:
                problem = exc
            db = compute()
            if problem is None:
                try:
                    db.save(path)
                except BgaiError as exc:
                    problem = exc
            if problem is not None:
                warnings.warn(f"bear-off database not cached: {problem}", RuntimeWarning, stacklevel=2)
        _DATABASE = db
        return db


def clear_cache() -> None:
    """Forget the in-memory database (tests; the next :func:`get_database` reads the file again)."""
    global _DATABASE
    with _LOCK:
        _DATABASE = None
