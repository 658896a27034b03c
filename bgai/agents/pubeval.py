"""Tesauro's public evaluation function (pubeval), vectorised over batches of afterstates.

pubeval is a linear function of a raw board encoding with one weight vector for contact positions and another
for races, published by Gerald Tesauro in 1993 (``pubeval.c``, posted to rec.games.backgammon) as a benchmark
opponent; GNU Backgammon ships the same figures in ``pub_eval.c``.  The weights live in
``bgai/data/pubeval_weights.json``.

Encoding (Tesauro's, restated on bgai's board layout, :mod:`bgai.core.board`): the afterstate is seen by the player
who moved ("the computer", row 0).  For each of its points 1..24 there are five inputs: opponent blot on the
point; own count == 1; own count >= 2; own count == 3; ``(own count - 3) / 2`` when >= 4.  Input 120 is the
opponent's checkers on the bar / 2, input 121 the computer's checkers borne off / 15.  The computer's own
checkers on the bar are not an input (as in the original).  An afterstate with all 15 checkers off scores
99999999.  Whether the race or the contact weights are used is decided by the position **before** the play
(Tesauro: "race ... should be set based on the INITIAL position BEFORE the move"), with GNU Backgammon's
definition of a race (:func:`is_race`).

Speed: with the ``fast`` extra (numba, :mod:`bgai.util.jit`) one compiled kernel scores every afterstate of a
batch and picks each position's best play in a single pass (the race test of the position before the play, the
table lookups, the all-off case), with no temporaries: about 5x faster than the numpy code below, which runs
without it (or with ``BGAI_NUMBA=0``) and stays the reference.  The kernel adds the 24 point values in float32 in
numpy's own order (eight running sums, then pairwise: numpy's ``sum`` over an axis of 24), so its scores are bit
for bit those of the numpy path and the plays chosen are the same.  Loading it costs about 0.2 s of CPU (plus
numba's import, shared with the other kernels), so it is loaded by :func:`use_compiled` (long runs: series,
benchmarks) or after :data:`LOAD_AFTER_S` seconds of work on the numpy path (the ski-rental rule of
:mod:`bgai.core.movegen`): a short command never pays it.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from importlib import resources

import numpy as np

from bgai.agents.base import Agent, Capabilities, best_per_input
from bgai.core.board import BAR, as_batch, starting_board
from bgai.core.movegen import afterstates
from bgai.util.jit import compile_kernel, note_loaded

#: Score of an afterstate with every checker borne off (Tesauro's constant).
WIN_SCORE = 99999999.0


@lru_cache(maxsize=1)
def weights() -> dict[str, np.ndarray]:
    """pubeval's weights: ``{'race': (122,) float64, 'contact': (122,) float64}`` in Tesauro's input order."""
    text = resources.files("bgai").joinpath("data/pubeval_weights.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    out = {k: np.asarray(raw[k], dtype=np.float64) for k in ("race", "contact")}
    for k, w in out.items():
        if w.shape != (122,):  # pragma: no cover - shipped data
            raise RuntimeError(f"pubeval {k} weights have shape {w.shape}, expected (122,)")
    return out


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """pubeval's weights as lookup tables for bgai's layout.

    The "checkers off / 15" input is folded into the point table: with ``w`` its weight,
    ``w * off / 15 = w - (w / 15) * (own checkers on points 1..24) - (w / 15) * (own checkers on the bar)``.

    Returns:
        ``(points, extra)``: ``points`` ``(2048,)`` float32 (float32 keeps the gathers cheap; Tesauro's and GNU
        Backgammon's code compute in float32 too), the contribution of one of the computer's points, indexed by
        ``weight set << 10 | column << 5 | blot << 4 | own`` where the weight set is 0 race / 1 contact, the
        column is the computer's (0 = its 1-point), ``blot`` says the opponent has a single checker there and
        ``own`` is the computer's checkers there (0..15); ``extra`` ``(2, 3)`` float64 = per weight set
        ``(w_off, w_bar / 2, -w_off / 15)``: the constant, the weight per opponent checker on the bar and per own
        checker on the bar.
    """
    points = np.zeros((2, 32, 32), dtype=np.float64)
    extra = np.zeros((2, 3), dtype=np.float64)
    n = np.arange(16, dtype=np.float64)
    for r, key in enumerate(("race", "contact")):
        w = weights()[key]
        own = w[:120].reshape(24, 5)[::-1]  # block k is the computer's point 24 - k; row c = column c
        contrib = (
            own[:, 1:2] * (n == 1)
            + own[:, 2:3] * (n >= 2)
            + own[:, 3:4] * (n == 3)
            + own[:, 4:5] * (np.maximum(n - 3, 0) / 2.0)
            - w[121] * n / 15.0
        )  # (24, 16)
        points[r, :24, :16] = contrib
        points[r, :24, 16:] = contrib + own[:, 0:1]  # opponent blot (only possible with 0 own checkers)
        extra[r] = w[121], w[120] / 2.0, -w[121] / 15.0
    return points.reshape(-1).astype(np.float32), extra


_COLUMNS = (np.arange(24, dtype=np.uint16) << 5)[None, :]


def _raw_scores(a: np.ndarray, contact: np.ndarray) -> np.ndarray:
    """``(M,)`` float64 pubeval scores of ``(M, 2, 25)`` int8 afterstates, without the all-off special case."""
    points, extra = _tables()
    key = np.bitwise_or(a[:, 0, :24].view(np.uint8), _COLUMNS)  # uint16
    key |= (a[:, 1, 23::-1] == 1).view(np.uint8) << np.uint8(4)  # opponent column 23 - c = computer column c
    key |= (contact.astype(np.uint16) << np.uint16(10))[:, None]
    score = points.take(key).sum(axis=1).astype(np.float64)
    ex = extra[contact.astype(np.intp)]
    score += ex[:, 0] + ex[:, 1] * a[:, 1, BAR] + ex[:, 2] * a[:, 0, BAR]
    return score


def is_race(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: no contact left, i.e. every checker of each side has passed every checker of the other.

    Same test as GNU Backgammon's ``ClassifyPosition(...) <= CLASS_RACE``: with ``a`` the column of the side to
    move's rearmost checker and ``b`` the opponent's (bar = column 24, -1 for none), contact iff ``a + b > 22``.
    Finished games count as races.
    """
    b = as_batch(boards)
    cols = np.arange(25)
    back0 = np.where(b[:, 0] > 0, cols, -1).max(axis=1)
    back1 = np.where(b[:, 1] > 0, cols, -1).max(axis=1)
    return (back0 + back1) <= 22


def pubeval_scores(afterstates: np.ndarray, race: np.ndarray | bool) -> np.ndarray:
    """pubeval score of each afterstate for the player who moved into it.

    Args:
        afterstates: ``(M, 2, 25)`` int8, row 0 the player who moved ("the computer").
        race: ``(M,)`` bool or one bool: use the race weights (decided by the position before the play).

    Returns:
        ``(M,)`` float64 scores, higher is better; :data:`WIN_SCORE` where all 15 checkers are off.
    """
    a = as_batch(afterstates)
    contact = ~np.broadcast_to(np.asarray(race, dtype=bool), (a.shape[0],))
    score = _raw_scores(a, contact)
    score[~a[:, 0].any(axis=1)] = WIN_SCORE
    return score


def _kernel(boards, after, src, points, extra, scores, best) -> None:  # pragma: no cover - compiled by numba
    """Score every afterstate and pick each position's best; the compiled twin of :func:`_raw_scores` (+ the
    all-off case) and :func:`bgai.agents.base.best_per_input`, in numba's subset of Python.

    Args (contiguous): ``boards`` ``(N, 2, 25)`` int8 positions before the play; ``after`` ``(M, 2, 25)`` int8;
    ``src`` ``(M,)`` int64 index into ``boards``; ``points``, ``extra`` from :func:`_tables`.  Fills ``scores``
    ``(M,)`` float64 and ``best`` ``(N,)`` int64 (index of the first highest score of each position; -1 for a
    position without afterstates).
    """
    n = boards.shape[0]
    contact = np.zeros(n, dtype=np.int32)
    top = np.empty(n, dtype=np.float64)
    for i in range(n):  # is_race: rearmost checker of each side (bar = 24, -1 for none); contact iff sum > 22
        back0 = -1
        back1 = -1
        for c in range(25):
            if boards[i, 0, c] > 0:
                back0 = c
            if boards[i, 1, c] > 0:
                back1 = c
        if back0 + back1 > 22:
            contact[i] = 1
        best[i] = -1
    key = np.empty(24, dtype=np.int32)
    for m in range(after.shape[0]):
        i = src[m]
        k = contact[i]
        base = k << 10
        own = np.int32(after[m, 0, 24])
        for c in range(24):  # the table index of each of the mover's points (see _tables)
            v = np.int32(after[m, 0, c])
            own += v
            key[c] = base | (c << 5) | (np.int32(after[m, 1, 23 - c] == 1) << 4) | v
        # numpy's sum of 24 float32 (pairwise summation): eight running sums of columns j, j + 8, j + 16, then a tree
        r0 = points[key[0]] + points[key[8]] + points[key[16]]
        r1 = points[key[1]] + points[key[9]] + points[key[17]]
        r2 = points[key[2]] + points[key[10]] + points[key[18]]
        r3 = points[key[3]] + points[key[11]] + points[key[19]]
        r4 = points[key[4]] + points[key[12]] + points[key[20]]
        r5 = points[key[5]] + points[key[13]] + points[key[21]]
        r6 = points[key[6]] + points[key[14]] + points[key[22]]
        r7 = points[key[7]] + points[key[15]] + points[key[23]]
        s32 = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        if own == 0:
            score = WIN_SCORE
        else:
            score = np.float64(s32) + (
                (extra[k, 0] + extra[k, 1] * np.float64(after[m, 1, 24])) + extra[k, 2] * np.float64(after[m, 0, 24])
            )
        scores[m] = score
        if best[i] < 0 or score > top[i]:
            best[i] = m
            top[i] = score


#: Seconds of work on the numpy path after which the compiled kernel is loaded (when numba is installed): a
#: process never spends more than about twice the cheaper choice (the ski-rental rule).
LOAD_AFTER_S = 0.3
_compiled = None  # the compiled kernel while in use
_auto = True  # load it after LOAD_AFTER_S seconds on the numpy path (until use_compiled decides)
_numpy_s = 0.0  # seconds spent so far scoring on the numpy path


@lru_cache(maxsize=None)
def _load_kernel():
    """The compiled kernel, loaded (numba imported; machine code read from numba's cache, or compiled and cached
    the first time), or ``None`` without compiled kernels (:func:`bgai.util.jit.compile_kernel`)."""
    kernel = compile_kernel(_kernel)
    if kernel is not None:
        board = starting_board()[None]
        kernel(board, board, np.zeros(1, dtype=np.int64), *_tables(), np.empty(1), np.empty(1, dtype=np.int64))
    return kernel


def use_compiled(on: bool = True) -> bool:
    """Turn pubeval's compiled kernel on (loading it now) or off, for the following scoring calls.

    ``on``: loads it (numba's import and the kernel's cached machine code, about 0.2 s of CPU besides the import,
    once per process; the first run ever compiles and caches it); long runs (an evaluation series, a benchmark)
    call it at start, before forking workers, which then inherit it.  ``off``: the numpy path (the reference; the
    same scores), e.g. to compare.  Without a call, scoring loads it after :data:`LOAD_AFTER_S` seconds of work.

    Returns:
        Whether the kernel is now in use: ``False`` when turned off or without compiled kernels (numba not
        installed, or ``BGAI_NUMBA=0``).
    """
    global _compiled, _auto
    _auto = False
    _compiled = _load_kernel() if on else None
    note_loaded(use_compiled, _compiled is not None)  # worker processes that start fresh load it too
    return _compiled is not None


def prepare_long_run() -> bool:
    """Load the compiled kernel now, unless :func:`use_compiled` turned it off: for a long run (an evaluation
    series of many games) about to fork its worker processes, which then inherit it instead of each loading it.

    Returns:
        Whether the kernel is in use.
    """
    if _auto and _compiled is None:
        return use_compiled()
    return _compiled is not None


def _kernel_in_use():
    """The compiled kernel when it is in use (loaded now if the numpy path has run long enough), else ``None``."""
    if _compiled is None and _auto and _numpy_s > LOAD_AFTER_S:
        use_compiled()
    return _compiled


def _kernel_scores(kernel, boards: np.ndarray, after: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(scores (M,) float64, best (N,) int64)`` through the compiled ``kernel`` (which reads unchecked: the
    shapes and ``src`` are checked here, raising what the numpy path raises: ValueError, IndexError)."""
    points, extra = _tables()
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    after = np.ascontiguousarray(after, dtype=np.int8)
    src = np.ascontiguousarray(src, dtype=np.int64)
    if src.shape != (after.shape[0],):
        raise ValueError(f"src has shape {src.shape}, expected ({after.shape[0]},): one per afterstate")
    if src.size and (src.min() < 0 or src.max() >= boards.shape[0]):
        raise IndexError(f"src holds indices outside 0..{boards.shape[0] - 1}")
    scores = np.empty(after.shape[0], dtype=np.float64)
    best = np.empty(boards.shape[0], dtype=np.int64)
    kernel(boards, after, src, points, extra, scores, best)
    return scores, best


class PubevalAgent(Agent):
    """Plays the afterstate with the highest pubeval score (ties: the first generated).

    The strength benchmark of the 1990s literature: GNU Backgammon 0-ply wins about +0.63 ppg against it.
    """

    name = "pubeval"
    capabilities = Capabilities(play_scores=True, ply=0)
    batch_invariant = True  # a score per afterstate: the same in any batch

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Scores of afterstates grouped by the position they come from.

        Args:
            boards: ``(N, 2, 25)`` positions before the play (choose the race or contact weights).
            afterstates: ``(M, 2, 25)`` afterstates, mover's view.
            src: ``(M,)`` int, index into ``boards`` of each afterstate.

        Returns:
            ``(M,)`` float64 pubeval scores (stand-in for equity; not in points per game).
        """
        boards = as_batch(boards)
        a = as_batch(afterstates)
        src = np.asarray(src)
        kernel = _kernel_in_use()
        if kernel is not None:
            return _kernel_scores(kernel, boards, a, src)[0]
        return self._numpy_scores(boards, a, src)

    def _numpy_scores(self, boards: np.ndarray, a: np.ndarray, src: np.ndarray) -> np.ndarray:
        global _numpy_s
        t = time.perf_counter()
        score = _raw_scores(a, ~is_race(boards)[src])
        # all 15 off: only possible when at most 4 checkers were left before the play
        maybe = np.flatnonzero((boards[:, 0].sum(axis=1, dtype=np.int16) <= 4)[src])
        score[maybe[~a[maybe, 0].any(axis=1)]] = WIN_SCORE
        _numpy_s += time.perf_counter() - t
        return score

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:

        boards = as_batch(boards)
        after, src = afterstates(boards, dice)
        kernel = _kernel_in_use()
        if kernel is not None:
            return after[_kernel_scores(kernel, boards, after, src)[1]]
        scores = self._numpy_scores(boards, after, src)
        return after[best_per_input(scores, src, len(boards))]
