"""Legal plays of backgammon: the batched afterstate generator and the single-position play list.

Two entry points:

* :func:`afterstates` -- the hot path.  Batched numpy: ``(N, 2, 25)`` boards and ``(N, 2)`` dice in, every
  distinct legal resulting position out (mover's view, rows not swapped) with the index of its input.
* :func:`legal_plays` -- one position, plain Python: the plays as :class:`Play` objects with single-die steps,
  resulting position and standard notation.  Not fast; for users, the CLI and notation parsing.

Board layout: :mod:`bgai.core.board` (row 0 side to move, columns 0..23 its points 1..24, column 24 its bar; the
opponent's point ``25 - p`` is the mover's point ``p``, i.e. ``board[1, 24 - p]``).

Rules (the standard rules of backgammon as implemented by GNU Backgammon's move generator, ``GenerateMoves``
in ``eval.c``; the rule cases with their answers are in ``tests/test_movegen_rules.py``):

* a double is played four times, a non-double in either order;
* a checker may land on an empty point, a point of its own, or an opponent blot (hitting it: the blot goes to
  the opponent's bar), never on a point held by two or more opponent checkers; a checker that uses both dice
  lands on the intermediate point too (and hits a blot there);
* while the mover has checkers on the bar the only legal step is entering one (on the opponent's home board:
  die ``d`` enters on the mover's point ``25 - d``);
* as many dice as possible must be used; when only one die of a non-double can be used, the higher one must be
  used when it can be;
* bearing off only when all the mover's remaining checkers are in the home board (points 1..6, nothing on the
  bar), re-checked after every step: exactly, or with a higher die from the highest occupied point;
* when nothing can be played, the position is unchanged (the turn passes).

Implementation of :func:`afterstates` (see its docstring): legality is computed on per-position 32-bit masks
(bit ``p`` = point ``p``, bit 25 = bar) of open points, occupied points and thermometer-coded checker counts,
never on full boards; doubles are generated in one canonical order (sources non-increasing), which gives each
resulting position exactly once; for non-doubles the low-die-first order only keeps plays the high-die-first
order cannot produce, and the few remaining possible duplicates (one checker using both dice, two checkers
both borne off) are removed by exact per-position keys and one (nearly sorted) stable sort.  Each play is
carried as its input index and two rows of a small table of board changes (one per single step of a
non-double, one per pair of steps of a double); the output boards are written once, each row its input row
plus the two table rows, gathered with ``np.take``, in blocks of :data:`_ROWS` rows through a small buffer that
stays in the CPU caches.  Batches are planned in chunks of :data:`_CHUNK` positions (this bounds the
temporaries' memory and keeps them in the caches), each chunk written into the one output array right after it
is planned.

Why the low-die-first order can drop a play whenever its second step (high die) could have been played first:
the two steps then commute -- the high-die step from that point was legal at the start, and playing it first
leaves the low-die step legal (it only adds checkers to the home board and does not change which points are
open).  Why doubles in non-increasing source order give each position once: a position fixes how many checkers
left each point, counted from the back; and any legal order can be rearranged into that one.  Both claims are
checked against GNU Backgammon on the reference positions (tests/test_movegen_reference.py).

Small batches (up to :data:`SMALL_BATCH` positions: one position for a user, a server or the CLI) skip the numpy
planner, whose few hundred numpy calls cost about 0.3 ms whatever the batch size: :func:`_plan_one` follows the
same steps on Python ints for one position and gives the same table rows in the same order, so the output is
bit for bit the same (tests/test_movegen_small_batch.py checks it against the numpy planner, the reference).

Compiled generator (numba, optional: the ``fast`` extra): :func:`bgai.core.movegen_jit.generate` does the whole
job in one kernel, one input after the other -- the masks, the same plan as :func:`_plan_one` (its plays kept as
single steps), and the output rows written straight from the input row with those steps applied -- so a call costs
a few us plus about 1 us a position, at batch 1 as at batch 16384.  It gives the same rows in the same order as
the numpy path, which stays the reference (tests/test_jit_movegen.py).  It is used once loaded: by
:func:`use_compiled`, or by :func:`afterstates` itself after :data:`LOAD_AFTER_S` seconds of work on the numpy
path (the loading rule of :mod:`bgai.util.jit`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from bgai.core.board import BAR, as_batch, validate
from bgai.core.dice import Dice
from bgai.core.movegen_jit import DEBRUIJN, generate
from bgai.core.notation import format_play, parse_moves
from bgai.core.position import Position
from bgai.errors import AmbiguousMoveError, IllegalMoveError, InvalidDiceError, InvalidPositionError
from bgai.util.jit import LazyKernel

__all__ = ["Step", "Play", "afterstates", "use_compiled", "legal_plays", "apply_steps", "parse_play"]

#: One single-die step: ``(from, to, hit)``; ``from`` 25 = bar, ``to`` 0 = borne off; mover's point numbers.
Step = tuple[int, int, bool]


@dataclass(frozen=True, eq=False)
class Play:
    """One legal play of a position and roll.

    Attributes:
        steps: the single-die steps in an order in which they can be played, ``((from, to, hit), ...)``, from the
            mover's view (``from`` 25 = bar, ``to`` 0 = off), as GNU Backgammon lists them: all dice the play
            uses, from the back of the board first, the higher die first when both orders reach the same
            position; ``hit`` on the step that first lands on a blot.  Empty when nothing can be played.
        afterstate: ``(2, 25)`` int8 read-only board after the play, mover's view (rows not swapped).
    """

    steps: tuple[Step, ...]
    afterstate: np.ndarray = field(repr=False)

    @property
    def notation(self) -> str:
        """Standard notation, e.g. ``'24/18 13/10'``, ``'bar/22*'``, ``'6/off'``, ``'8/2(2)'``, ``'24/18*/13'``;
        ``''`` for no play.  See :func:`bgai.core.notation.format_play`."""
        return format_play(self.steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Play) and np.array_equal(self.afterstate, other.afterstate)

    def __hash__(self) -> int:
        return hash(self.afterstate.tobytes())

    def __repr__(self) -> str:
        return f"Play({self.notation!r})"


# ----------------------------------------------------------------------------------------------------------
# single position, plain Python (also the readable statement of the rules)
# ----------------------------------------------------------------------------------------------------------


def _single_steps(me: list[int], opp: list[int], die: int) -> Iterable[tuple[int, int, bool]]:
    """Legal single steps with ``die`` for the mover; ``me``/``opp`` are 25-long count lists (bgai rows)."""
    if me[BAR] > 0:
        to = 25 - die
        if opp[24 - to] < 2:
            yield 25, to, opp[24 - to] == 1
        return
    all_home = sum(me[6:BAR]) == 0
    for p in range(24, 0, -1):
        if me[p - 1] == 0:
            continue
        to = p - die
        if to >= 1:
            if opp[24 - to] < 2:
                yield p, to, opp[24 - to] == 1
        elif all_home and (to == 0 or sum(me[p:24]) == 0):
            yield p, 0, False


def _apply(me: list[int], opp: list[int], step: tuple[int, int, bool]) -> tuple[list[int], list[int]]:
    frm, to, hit = step
    me = me.copy()
    me[frm - 1] -= 1
    if to >= 1:
        me[to - 1] += 1
        if hit:
            opp = opp.copy()
            opp[24 - to] = 0
            opp[BAR] += 1
    return me, opp


def apply_steps(board: np.ndarray, steps: Sequence[tuple[int, int]] | Sequence[Step]) -> np.ndarray:
    """Play single-die steps on one ``(2, 25)`` board without checking legality; returns a new int8 board.

    ``steps`` are ``(from, to)`` or ``(from, to, hit)`` in mover's point numbers (25 = bar, 0 = off).  A step
    landing on an opponent blot hits it (whatever ``hit`` says).

    Raises:
        IllegalMoveError: a step from an empty point or onto a point the opponent holds.
    """
    b = np.array(board, dtype=np.int16).reshape(2, 25)
    for st in steps:
        frm, to = int(st[0]), int(st[1])
        if not (1 <= frm <= 25 and 0 <= to <= 24 and to < frm):
            raise IllegalMoveError(f"step {frm}/{to} is not a forward step")
        if b[0, frm - 1] <= 0:
            raise IllegalMoveError(f"no checker on {'the bar' if frm == 25 else f'point {frm}'} for step {frm}/{to}")
        b[0, frm - 1] -= 1
        if to >= 1:
            if b[1, 24 - to] >= 2:
                raise IllegalMoveError(f"point {to} is held by the opponent (step {frm}/{to})")
            if b[1, 24 - to] == 1:
                b[1, 24 - to] = 0
                b[1, BAR] += 1
            b[0, to - 1] += 1
    return b.astype(np.int8)


def legal_plays(board, dice) -> list[Play]:
    """All distinct legal plays of one position and roll, one representative :class:`Play` per afterstate.

    Args:
        board: ``(2, 25)`` board (bgai layout, side to move in row 0) or a :class:`~bgai.core.position.Position`.
        dice: ``(d1, d2)``, each 1..6 (order does not matter).

    Returns:
        The plays, ordered as found: higher die first, sources from the back (bar, 24) to the front.  Exactly one
        entry with ``steps == ()`` (the unchanged board) when nothing can be played.  The set of afterstates is
        the same as :func:`afterstates` gives for this input.

    Raises:
        InvalidPositionError: bad board; InvalidDiceError: bad dice.
    """
    if isinstance(board, Position):
        b = board.board
    else:

        b = validate(board)[0]
    d1, d2 = Dice.parse(dice)
    hi, lo = max(d1, d2), min(d1, d2)
    me0, opp0 = [int(x) for x in b[0]], [int(x) for x in b[1]]
    # afterstate key -> (steps, first die used, mover row, opponent row); first found wins
    found: dict[tuple, tuple[tuple[Step, ...], int, list[int], list[int]]] = {}
    best_len = 0
    orders = [(hi,) * 4] if hi == lo else [(hi, lo), (lo, hi)]

    def rec(me, opp, order, k, steps, max_src):
        nonlocal best_len
        extended = False
        if k < len(order):
            for st in _single_steps(me, opp, order[k]):
                if st[0] > max_src:  # doubles: sources non-increasing (one canonical order)
                    continue
                extended = True
                me2, opp2 = _apply(me, opp, st)
                rec(me2, opp2, order, k + 1, steps + (st,), st[0] if hi == lo else 25)
        if not extended:
            n = len(steps)
            if n < best_len:
                return
            if n > best_len:
                best_len = n
                found.clear()
            key = (*me, *opp)
            if key not in found:
                found[key] = (steps, order[0], me, opp)

    for order in orders:
        rec(me0, opp0, order, 0, (), 25)
    plays = list(found.values())
    if hi != lo and best_len == 1 and any(p[1] == hi for p in plays):
        plays = [p for p in plays if p[1] == hi]  # only one die playable: the higher one when it can be
    boards = np.array([[me, opp] for _, _, me, opp in plays], dtype=np.int8)
    boards.setflags(write=False)
    # GNU Backgammon lists a play's steps from the back (stable: higher die first on the same point); that
    # order is always playable (a step never depends on one from a lower point)
    return [
        Play(steps=tuple(sorted(steps, key=_step_source_desc)), afterstate=boards[i])
        for i, (steps, _, _, _) in enumerate(plays)
    ]


def _step_source_desc(step: Step) -> int:
    return -step[0]


# ----------------------------------------------------------------------------------------------------------
# batched generator
# ----------------------------------------------------------------------------------------------------------


def _validate_dice(dice: np.ndarray, n: int) -> np.ndarray:
    d = np.asarray(dice)
    if d.shape == (2,) and n == 1:
        d = d[None]
    if d.shape != (n, 2):
        raise InvalidDiceError(f"dice must have shape ({n}, 2) to match the boards, got {d.shape}")
    if d.dtype.kind not in "iu":
        if d.dtype.kind == "f" and np.all(np.isfinite(d)) and np.all(d == np.round(d)):
            d = d.astype(np.int64)
        else:
            raise InvalidDiceError(f"dice must be integers, got dtype {d.dtype}")
    if d.size and (d.min() < 1 or d.max() > 6):
        bad = int(np.flatnonzero(((d < 1) | (d > 6)).any(axis=1))[0])
        raise InvalidDiceError(f"dice must be 1..6: input {bad} has {d[bad].tolist()}")
    return d


def afterstates(boards, dice, *, validate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct legal afterstate of a batch of positions and rolls.

    Args:
        boards: ``(N, 2, 25)`` int8 (or a single ``(2, 25)``), bgai layout, side to move in row 0.
        dice: ``(N, 2)`` integers 1..6 (either order).
        validate: check the boards (negative counts, more than 15 checkers, a point held by both sides; about
            2 ms at N = 16384); pass ``False`` for trusted batches, e.g. positions produced by this function.
            Shapes and dice are always checked.

    The work is done by a compiled generator (numba, the ``fast`` extra) once it is loaded (see
    :func:`use_compiled`: about 1 us a position in batches, under 10 us a call for one position), else by the numpy
    planner (about 0.3 ms a call plus 2-3 us a position), and batches of up to :data:`SMALL_BATCH` positions by a
    plain-Python planner (about 50-80 us a position); all three give the same rows in the same order.

    Returns:
        ``(after, src)``: ``after`` ``(M, 2, 25)`` int8, the resulting positions from the mover's view (rows NOT
        swapped; hit blots are on ``after[:, 1, 24]``); ``src`` ``(M,)`` int64, non-decreasing, the input index of
        each row.  Every input has at least one row (its unchanged board when nothing can be played); the rows of
        one input are distinct.  The order is deterministic.

    Raises:
        InvalidPositionError: wrong board shape, or (with ``validate``) an impossible board; the message (from
            :func:`bgai.core.board.validate`) names the first bad board and what is wrong with it.
        InvalidDiceError: wrong dice shape or values outside 1..6.
    """
    b = np.ascontiguousarray(as_batch(boards))
    n = b.shape[0]
    kernel = _GENERATOR.get()
    if kernel is not None:
        return _afterstates_compiled(kernel, b, dice, n, validate)
    t = time.perf_counter()
    res = _afterstates_numpy(b, _validate_dice(dice, n), validate)
    _GENERATOR.count(time.perf_counter() - t)
    return res


def _afterstates_numpy(b: np.ndarray, d: np.ndarray, validate: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`afterstates` by the numpy planner (plain Python for small batches): the reference implementation,
    used while the compiled generator is not loaded (or unavailable).  ``b`` contiguous ``(N, 2, 25)`` int8,
    ``d`` checked dice."""
    n = b.shape[0]
    # validation: counts 0..15 here; more than 15 checkers on a side, or a point held by both, in _plan's masks
    if validate and n and (b.min() < 0 or b.max() > 15):
        _invalid(b)
    if n <= SMALL_BATCH:
        return _afterstates_small(b, d, validate)
    # Each chunk is planned and then written at once, while its plan is still in the caches, into an output
    # with room for about 20 rows a position (more is made when needed); the pages past the rows written are
    # never touched, so the unused room costs no memory.
    cap = max(64, 20 * n)
    out = np.empty((cap, 50), dtype=np.int8)
    src_all = np.empty(cap, dtype=np.int64)
    table = _delta_table()
    buf = np.empty((_ROWS, 50), dtype=np.int8)
    lo = 0
    for i in range(0, n, _CHUNK):
        plan = _plan(b[i : i + _CHUNK], d[i : i + _CHUNK], validate)
        if plan is None:
            _invalid(b)
        src, ka, kb = plan
        hi = lo + len(src)
        if hi > cap:
            cap = max(hi, cap + cap // 2)
            out2 = np.empty((cap, 50), dtype=np.int8)
            out2[:lo] = out[:lo]
            src2 = np.empty(cap, dtype=np.int64)
            src2[:lo] = src_all[:lo]
            out, src_all = out2, src2
        np.add(src, i, out=src_all[lo:hi])
        rows = b[i : i + _CHUNK].reshape(-1, 50)
        # in blocks of _ROWS rows: the input rows gathered straight into the output, then the two table rows
        # added through a small buffer that stays in cache; 'clip' skips the index checks (valid indices)
        for j in range(0, hi - lo, _ROWS):
            k = min(j + _ROWS, hi - lo)
            o, t = out[lo + j : lo + k], buf[: k - j]
            np.take(rows, src[j:k], axis=0, out=o, mode="clip")
            o += np.take(table, ka[j:k], axis=0, out=t, mode="clip")
            o += np.take(table, kb[j:k], axis=0, out=t, mode="clip")
        lo = hi
    m = lo
    out, src_all = out[:m], src_all[:m]
    return out.reshape(m, 2, 25), src_all


def _invalid(b: np.ndarray) -> None:
    """Raise for a batch known to hold an invalid board, naming the first one (:func:`bgai.core.board.validate`)."""
    validate_boards = validate

    validate_boards(b)  # raises, naming the first bad board and what is wrong with it
    raise InvalidPositionError("invalid position in boards")  # pragma: no cover - validate raised


#: positions per internal chunk of :func:`afterstates`.  Measured on the 2-core benchmark machine with the output
#: written in blocks (scripts/bench_movegen.py, gnubg_nn.moves timed in between): chunks of 4096 make batch 16384
#: as fast per afterstate as batch 4096 (chunks of 16384 were about 20% slower there: their temporaries of
#: several MB fall out of the caches and are fresh pages from the OS each call); 2048 adds per-call overhead.
_CHUNK = 4096
#: output rows written per block by :func:`afterstates` (400 KB: the block and its buffer stay in cache)
_ROWS = 8192


def _afterstates_reference(b: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same contract as :func:`afterstates` by a per-position loop over :func:`legal_plays` (slow; tests)."""
    after = [p.afterstate for i in range(len(b)) for p in legal_plays(b[i], d[i])]
    src = [i for i in range(len(b)) for _ in legal_plays(b[i], d[i])]
    return np.array(after, dtype=np.int8).reshape(-1, 2, 25), np.array(src, dtype=np.int64)


_U32 = np.uint32
_ONE = _U32(1)
_BARBIT = _U32(1 << 25)
#: one-hot mask of a destination point ``t`` at index ``t + 8`` (``t`` -8..31); 0 for ``t <= 0`` (borne off)
_DEST = np.array([1 << t if 1 <= t <= 31 else 0 for t in range(-8, 32)], dtype=np.uint64).astype(_U32)
#: highest set bit (one-hot) of a 7-bit value: the highest occupied point of a home board (bits 1..6)
_HIGHEST7 = np.array([0] + [1 << (v.bit_length() - 1) for v in range(1, 128)], dtype=_U32)
#: the home-board sources that can bear off with a die, by ``die << 7 | occupied home points (bits 1..6)``: exactly
#: (a checker on the die's point), or with a higher die from the highest occupied point
_BEAR = np.array(
    [
        (h & (1 << die)) | (int(_HIGHEST7[h]) if _HIGHEST7[h] < (1 << die) else 0)
        for die in range(8)
        for h in range(128)
    ],
    dtype=_U32,
)
#: Output rows are built as ``input row + TABLE[kA] + TABLE[kB]`` (flattened ``(50,)`` int8 boards).  Rows
#: 0..300 of the table are single steps, code ``((from - 1) * 6 + (die - 1)) * 2 + hit`` (300 = no step); a
#: non-double play uses two of them.  Rows ``301 + (die - 1) * 2601 + c1 * 51 + c2`` are two steps of a double
#: with ``c = (from - 1) * 2 + hit`` (50 = no step); a double uses two of those.  The table is small (800 KB)
#: so that the gathers stay in cache.
_NULL = 300
_DNULL = 50


@functools.lru_cache(maxsize=None)
def _delta_table() -> np.ndarray:
    """The change of a flattened board made by one step code or a pair of double step codes (see above).

    A hit takes the (single) opponent checker off its point and puts it on the opponent's bar."""
    t1 = np.zeros((301, 50), dtype=np.int8)
    for frm in range(1, 26):
        for die in range(1, 7):
            for hit in (0, 1):
                row = t1[((frm - 1) * 6 + (die - 1)) * 2 + hit]
                row[frm - 1] -= 1
                to = frm - die
                if to >= 1:
                    row[to - 1] += 1
                    if hit:
                        row[25 + 24 - to] -= 1
                        row[49] += 1
    parts = [t1]
    for die in range(1, 7):
        one = np.zeros((51, 50), dtype=np.int8)
        for c in range(50):
            frm, hit = c // 2 + 1, c % 2
            one[c] = t1[((frm - 1) * 6 + (die - 1)) * 2 + hit]
        parts.append((one[:, None, :] + one[None, :, :]).reshape(-1, 50))
    table = np.concatenate(parts)
    table.setflags(write=False)
    return table



_BYTES02 = np.uint64(0x00FF00FF00FF00FF)


def _masks(b: np.ndarray, check: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per-position uint32 masks of ``(n, 2, 25)`` boards: ``levs`` ``(4, n)`` (bit p = the mover's point p, bit 25
    = its bar, with >= 1, 2, 3, 4 checkers), ``open_`` and ``blot`` ``(n,)`` (bit p = the mover's point p, 1..24,
    holds < 2, exactly 1 opponent checker); with ``check`` (counts known to be 0..15), whether a board has more
    than 15 checkers of a side or a point held by both sides.

    Both rows are first copied into zero-padded 32-column rows (point p at column p), so that the comparisons run
    over flat contiguous arrays and the flags are packed in one flat pass."""
    n = b.shape[0]
    P = np.empty((2, n, 32), dtype=np.int8)
    me, op = P[0], P[1]
    me[:, 0] = 0
    me[:, 26:] = 0
    me[:, 1:26] = b[:, 0, :]
    op[:, :25] = b[:, 1, ::-1]  # column j: the mover's point j (column 0, the opponent's bar, is masked below)
    op[:, 25:] = 0
    F = np.empty((7 if check else 6, n, 32), dtype=bool)
    for k in range(4):
        np.greater(me, k, out=F[k])
    np.less(op, 2, out=F[4])
    np.equal(op, 1, out=F[5])
    if check:
        np.greater(op, 0, out=F[6])
    W = np.packbits(F, bitorder="little").view("<u4").reshape(-1, n)
    points = _U32(0x01FFFFFE)  # bits 1..24
    bad = False
    if check:
        # checkers per side: the 32 bytes of a row as 4 uint64 summed bytewise (each byte <= 4 * 15, no carry),
        # then in 16-bit lanes, then the 4 lanes by a multiplication into the top lane
        x = P.view(np.uint64)
        x = x[..., 0] + x[..., 1] + x[..., 2] + x[..., 3]
        x = (x & _BYTES02) + ((x >> np.uint64(8)) & _BYTES02)
        total = (x * np.uint64(0x0001000100010001)) >> np.uint64(48)
        bad = bool((total > 15).any() or (W[0] & W[6] & points).any())
    return W[:4], W[4] & points, W[5] & points, bad


def _expand(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All set bits of ``(K,)`` uint32 masks: ``(row, bit)``; rows int64 ascending, bits uint32 ascending per row.

    Only the nonzero bytes of the masks are unpacked (a mask has a few bits set; scanning all 32 bits of every mask
    for the set ones cost twice as much)."""
    by = np.ascontiguousarray(masks, dtype="<u4").view(np.uint8)
    nzb = (by != 0).nonzero()[0]
    idx = np.unpackbits(by[nzb], bitorder="little").view(bool).nonzero()[0]  # (.nonzero(): less call overhead)
    b = nzb[idx >> 3]  # byte index: mask b // 4, byte b % 4 of it
    return b >> 2, ((b.astype(_U32) & _U32(3)) << _U32(3)) | (idx.astype(_U32) & _U32(7))


def _targets(open_: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``open_`` (points 1..24 the opponent does not hold) shifted to the sources: bit ``p`` set when ``p - d`` is
    an open point (``p - d >= 1``; the bar, bit 25, enters on ``25 - d``)."""
    return (open_ << d) & ~((_U32(2) << d) - _ONE)


def _legal(occ: np.ndarray, targets: np.ndarray, die7: np.ndarray) -> np.ndarray:
    """Mask of the sources that can move with a die (all ``(K,)`` uint32).

    ``occ``: occupied points (bit p = point p, bit 25 = bar); ``targets``: :func:`_targets` for the die;
    ``die7``: ``die << 7``.  Bit ``p`` of the result: a checker on ``p`` may move (to ``p - die``, or off).
    """
    res = occ & targets
    # (np.where is slow on unpredictable conditions: arithmetic masks instead)
    res &= ((occ >> _U32(25)) - _ONE) | _BARBIT  # on the bar (the highest bit): only the bar; else unchanged
    home = occ < _U32(128)  # nothing above point 6
    if home.any():
        res |= _BEAR[die7 | (occ & _U32(0x7F))] * home
    return res


def _plan(b: np.ndarray, dice: np.ndarray, check: bool = False):
    """The plays of a chunk of inputs as ``(src, ka, kb)``: output row ``j`` is ``b[src[j]] +
    TABLE[ka[j]] + TABLE[kb[j]]`` (flattened boards), ``src`` non-decreasing.
    ``None`` when ``check`` finds an invalid board (see :func:`_masks`)."""
    n = b.shape[0]
    levs, open_, blot, bad = _masks(b, check)
    if bad:
        return None
    d1 = dice[:, 0].astype(_U32)
    d2 = dice[:, 1].astype(_U32)
    hi = np.maximum(d1, d2)
    lo = np.minimum(d1, d2)
    dbl = hi == lo
    # groups of output rows: (input index, table row kA, table row kB); any order, sorted in _order
    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    J = (~dbl).nonzero()[0]
    if len(J):
        _nondoubles(J, levs, open_, blot, hi, lo, groups)
    J = dbl.nonzero()[0]
    if len(J):
        _doubles(J, levs, open_, blot, hi, groups)
    return _order(n, groups)


def _nondoubles(J, levs, open_, blot, hi, lo, groups) -> None:
    """Plays of the non-double inputs ``J``: two steps in either order, else one (the higher die if it can)."""
    occ, l2, op, bl = levs[0][J], levs[1][J], open_[J], blot[J]
    a, c = hi[J], lo[J]
    a64, c64 = a.astype(np.int64), c.astype(np.int64)
    ao, co = a64 * 2 - 14, c64 * 2 - 14  # die part of a single-step table row (see _delta_table)
    ta, tc = _targets(op, a), _targets(op, c)
    ba, bc = a << _U32(7), c << _U32(7)
    La = _legal(occ, ta, ba)
    Lb = _legal(occ, tc, bc)
    on_bar = (occ & _BARBIT) != 0
    # Low die first (below): outside the special cases (on the bar, or at most one occupied point above 6, so that
    # the first step may bring the mover home) only a checker that can move on with the high die matters, i.e. a
    # source p with p - lo open for the high die: bit p of ta << lo.  Filtered here, before expanding.
    above = occ >> _U32(7)
    special = on_bar | ((above & (above - _ONE)) == 0)
    Lb_chain = Lb & ((ta << c) | (special * _U32(0xFFFFFFFF)))
    has2 = np.zeros(len(J), dtype=bool)
    risky_parts = []
    for way, (first, second, f64, s64, fo, so, L1, drop, t2nd, b2nd) in enumerate(
        ((a, c, a64, c64, ao, co, La, None, tc, bc), (c, a, c64, a64, co, ao, Lb_chain, La, ta, ba))
    ):
        r1, s1 = _expand(L1)
        t1 = s1 - f64[r1]
        tb = _DEST[t1 + 8]
        sb = _ONE << s1
        o = occ[r1]
        if drop is None:
            L2 = _legal((o & ~(sb & ~l2[r1])) | tb, t2nd[r1], b2nd[r1])  # after the first step
        else:
            # Low die first: keep only what the high-die-first order cannot produce.  Unless the mover was on
            # the bar or is home after the first step, that is only the same checker moving on (every other
            # second step could have been played first).
            L2 = tb & t2nd[r1]
            sp = (on_bar[r1] | (((o & ~sb) >> _U32(7)) == 0)).nonzero()[0]
            if len(sp):
                rs, tbs = r1[sp], tb[sp]
                occ1 = (o[sp] & ~(sb[sp] & ~l2[rs])) | tbs
                L2[sp] = _legal(occ1, t2nd[rs], b2nd[rs]) & (~drop[rs] | tbs)
            nz = L2.nonzero()[0]
            r1, s1, t1, tb, sb, L2 = r1[nz], s1[nz], t1[nz], tb[nz], sb[nz], L2[nz]
        has2[r1[L2 != 0]] = True
        Jr1 = J[r1]
        sec = second[r1]
        blr = bl[r1]
        ka1 = s1 * 12 + fo[r1] + ((blr & tb) != 0)  # table row of the first step
        hs = (blr & ~tb) << sec  # bit p: the second step from p hits (a blot the first step did not hit)
        kb_off = so[r1]
        # plays that may duplicate another: the same checker again (chain), a step landing where the first
        # checker left (bit s1 + second), or both steps bearing off
        low = ((_U32(2) << sec) - _ONE) * (t1 <= 0)
        R = L2 & (tb | (sb << sec) | low)
        for mask, risky in ((L2 & ~R, False), (R, True)):
            r2, s2 = _expand(mask)
            if len(r2) == 0:
                continue
            kA = ka1[r2]
            kB = s2 * 12 + kb_off[r2] + ((hs[r2] >> s2) & _ONE)
            p = Jr1[r2]  # the input
            if risky:
                t2 = s2 - s64[r1[r2]]
                risky_parts.append((p, s1[r2], t1[r2], s2, t2, kA, kB, np.full(len(p), way + 1, dtype=np.int64)))
            else:
                groups.append((p, kA, kB))
    if risky_parts:
        p, s1, t1, s2, t2, kA, kB, way = (np.concatenate(x) for x in zip(*risky_parts))
        chain = s2 == t1
        land = t2 == s1
        # one checker from y: y * 3 + (0 no hit on the way, 1 hit after the high die, 2 after the low die);
        # two checkers borne off: 78 + the two points
        y = np.where(land, s2, s1)
        way = np.where(chain & ((kA & 1) != 0), way, 0)
        one = chain | land
        local = np.where(one, y * 3 + way, 78 + (np.maximum(s1, s2) - 1) * 6 + (np.minimum(s1, s2) - 1))
        key = p * 128 + local
        order = np.argsort(key, kind="stable")  # the first of equal keys wins (high die first)
        ks = key[order]
        first = np.empty(len(key), dtype=bool)
        first[0] = True
        np.not_equal(ks[1:], ks[:-1], out=first[1:])
        keep = order[first]
        groups.append((p[keep], kA[keep], kB[keep]))
    # one die only: the higher if it can be played, else the lower
    one_mask = (La | Lb * (La == 0)) * ~has2
    r, s = _expand(one_mask)
    if len(r):
        die = np.where(La[r] != 0, a64[r], c64[r])
        h = (bl[r] & _DEST[s - die + 8]) != 0
        groups.append((J[r], s * 12 + die * 2 - 14 + h, np.full(len(r), _NULL, dtype=np.int64)))
    stuck = (~has2 & (La == 0) & (Lb == 0)).nonzero()[0]
    if len(stuck):
        null = np.full(len(stuck), _NULL, dtype=np.int64)
        groups.append((J[stuck], null, null))


def _doubles(J, levs, open_, blot, hi, groups) -> None:
    """Plays of the double inputs ``J``: up to four steps, sources non-increasing (each play exactly once)."""
    st_d = hi[J]
    st_base = 301 + (st_d.astype(np.int64) - 1) * 2601  # table offset of the die's pair codes
    st_tg = _targets(open_[J], st_d)
    st_db = st_d << _U32(7)
    st_hs = blot[J] << st_d  # bit p: a step from p would hit (a blot not hit yet on p - d)
    levs = list(levs[:, J])  # counts >= 1, 2, 3, 4
    st_pos = np.arange(len(J))
    limit = None
    acc1 = acc2 = kA3 = cb3 = None  # table rows of the steps so far, carried from level to level
    nullpair = _DNULL * 51 + _DNULL
    for k in range(1, 5):
        m = _legal(levs[0], st_tg, st_db)
        if limit is not None:
            m &= limit
        r, s = _expand(m)
        # states of the previous level whose position has no longer play are final
        if k == 1:
            fin = (m == 0).nonzero()[0]
            if len(fin):
                null = np.full(len(fin), _NULL, dtype=np.int64)
                groups.append((J[fin], null, null))
        else:
            has = np.zeros(len(J), dtype=bool)
            has[st_pos[m != 0]] = True
            fin = (~has[st_pos]).nonzero()[0]
            if len(fin):
                base = st_base[fin]
                if k == 2:
                    kA, kB = base + acc1[fin] * 51 + _DNULL, base + nullpair
                elif k == 3:
                    kA, kB = acc2[fin], base + nullpair
                else:
                    kA, kB = kA3[fin], cb3[fin] + (_DNULL + 2)
                groups.append((J[st_pos[fin]], kA, kB))
        if len(r) == 0:
            break
        hs = st_hs[r]
        hit = (hs >> s) & _ONE
        if k == 4:
            # code = 2 s - 2 + hit; cb3 holds its pair offset minus 2
            groups.append((J[st_pos][r], kA3[r], cb3[r] + s * 2 + hit))
            break
        code = s * 2 - 2 + hit
        if k == 1:
            acc1 = code
        elif k == 2:
            acc2 = st_base[r] + acc1[r] * 51 + code
        else:
            kA3 = acc2[r]
            cb3 = st_base[r] + code * 51 - 2
        sb = _ONE << s
        st_d, st_db = st_d[r], st_db[r]
        tb = (sb >> st_d) & ~_ONE  # the destination (none when borne off)
        old = [x[r] for x in levs[: 5 - k]]  # count levels 1..(5-k) of the parents
        new = [(old[j] & ~sb) | (old[j + 1] & sb) for j in range(4 - k)]  # one fewer on the source
        for j in range(4 - k - 1, -1, -1):  # one more on the destination
            new[j] = new[j] | (tb if j == 0 else new[j - 1] & tb)
        levs = new
        limit = (sb << _ONE) - _ONE
        st_pos, st_tg, st_base = st_pos[r], st_tg[r], st_base[r]
        st_hs = hs & ~sb


def _order(n, groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ordered by input (stable: then by group and generation order) as ``(src, ka, kb)``.

    (The stable sort of int64 merges the groups' sorted runs; a 16-bit radix sort was twice as slow.)"""
    pos = np.concatenate([g[0] for g in groups])
    ka = np.concatenate([g[1] for g in groups])
    kb = np.concatenate([g[2] for g in groups])
    order = np.argsort(pos, kind="stable")  # a few sorted runs: cheap
    return np.take(pos, order, mode="clip"), np.take(ka, order, mode="clip"), np.take(kb, order, mode="clip")


# ----------------------------------------------------------------------------------------------------------
# small batches: the same plan, one input at a time in plain Python
# ----------------------------------------------------------------------------------------------------------

#: Batches up to this size are planned by :func:`_plan_one` (plain Python on int masks, about 20-60 us a position)
#: instead of the numpy :func:`_plan` (a fixed cost of about 300 us a call, from its few hundred numpy calls).
SMALL_BATCH = 8

_M32 = 0xFFFFFFFF
_BEAR_L = _BEAR.tolist()
_DEST_L = _DEST.tolist()


def _bits(m: int) -> list[int]:
    """Set bits of an int, ascending."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def _legal_one(occ: int, targets: int, die: int) -> int:
    """:func:`_legal` of one position (Python ints)."""
    res = occ & targets
    if occ >> 25:
        res &= 1 << 25
    if occ < 128:
        res |= _BEAR_L[(die << 7) | (occ & 0x7F)]
    return res


def _plan_one(me: list[int], opp: list[int], d1: int, d2: int, check: bool) -> tuple[list[int], list[int]] | None:
    """The table rows ``(ka, kb)`` of the plays of one position, in exactly the order :func:`_plan` gives them.

    ``me``/``opp``: the two rows of the board as int lists.  A line-by-line transcription of :func:`_masks`,
    :func:`_nondoubles`, :func:`_doubles` and :func:`_order` for a single input (so that small batches get the same
    rows in the same order, tested against the numpy planner); with ``check``, ``None`` for an invalid board
    (more than 15 checkers of a side, or a point held by both sides).
    """
    levs = [0, 0, 0, 0]
    open_ = blot = held = 0
    for j in range(25):
        c = me[j]
        if c > 0:
            bit = 1 << (j + 1)
            for k in range(min(c, 4)):
                levs[k] |= bit
    for j in range(1, 25):
        c = opp[24 - j]
        if c < 2:
            open_ |= 1 << j
            if c == 1:
                blot |= 1 << j
        if c > 0:
            held |= 1 << j
    if check and (sum(me) > 15 or sum(opp) > 15 or levs[0] & held):
        return None
    hi, lo = (d1, d2) if d1 >= d2 else (d2, d1)
    ka: list[int] = []
    kb: list[int] = []
    if hi == lo:
        _doubles_one(levs, open_, blot, hi, ka, kb)
    else:
        _nondoubles_one(levs, open_, blot, hi, lo, ka, kb)
    return ka, kb


def _nondoubles_one(levs, open_, blot, a, c, ka, kb) -> None:
    """:func:`_nondoubles` for one input; appends its table rows to ``ka``, ``kb``."""
    occ, l2, bl = levs[0], levs[1], blot
    ao, co = a * 2 - 14, c * 2 - 14
    ta = ((open_ << a) & ~((2 << a) - 1)) & _M32
    tc = ((open_ << c) & ~((2 << c) - 1)) & _M32
    La = _legal_one(occ, ta, a)
    Lb = _legal_one(occ, tc, c)
    on_bar = (occ >> 25) != 0
    above = occ >> 7
    special = on_bar or (above & (above - 1)) == 0
    Lb_chain = Lb & (_M32 if special else (ta << c))
    has2 = False
    plain: list[tuple[int, int]] = []
    risky = []
    for way, (first, second, fo, so, L1, drop, t2nd) in enumerate(
        ((a, c, ao, co, La, None, tc), (c, a, co, ao, Lb_chain, La, ta))
    ):
        safe_rows = []
        for s1 in _bits(L1):
            t1 = s1 - first
            tb = _DEST_L[t1 + 8]
            sb = 1 << s1
            if drop is None:
                L2 = _legal_one((occ & ~(sb & ~l2)) | tb, t2nd, second)
            else:
                L2 = tb & t2nd
                if on_bar or ((occ & ~sb) >> 7) == 0:
                    L2 = _legal_one((occ & ~(sb & ~l2)) | tb, t2nd, second) & (~drop | tb)
                if not L2:
                    continue
            if L2:
                has2 = True
            ka1 = s1 * 12 + fo + ((bl & tb) != 0)
            hs = (bl & ~tb) << second
            low = ((2 << second) - 1) if t1 <= 0 else 0
            R = L2 & (tb | (sb << second) | low)
            for s2 in _bits(L2 & ~R):
                safe_rows.append((ka1, s2 * 12 + so + ((hs >> s2) & 1)))
            for s2 in _bits(R):
                risky.append((s1, t1, s2, s2 - second, ka1, s2 * 12 + so + ((hs >> s2) & 1), way + 1))
        plain.extend(safe_rows)
    for x, y in plain:
        ka.append(x)
        kb.append(y)
    if risky:
        keyed = []
        for i, (s1, t1, s2, t2, kA, kB, way) in enumerate(risky):
            chain = s2 == t1
            land = t2 == s1
            y = s2 if land else s1
            w = way if (chain and (kA & 1)) else 0
            local = y * 3 + w if (chain or land) else 78 + (max(s1, s2) - 1) * 6 + (min(s1, s2) - 1)
            keyed.append((local, i))
        keyed.sort()  # stable by construction: equal keys ordered by their index
        last = None
        for local, i in keyed:
            if local != last:
                ka.append(risky[i][4])
                kb.append(risky[i][5])
                last = local
    if not has2:
        one = La | (Lb if La == 0 else 0)
        die = a if La != 0 else c
        for s in _bits(one):
            ka.append(s * 12 + die * 2 - 14 + ((bl & _DEST_L[s - die + 8]) != 0))
            kb.append(_NULL)
        if La == 0 and Lb == 0:
            ka.append(_NULL)
            kb.append(_NULL)


def _doubles_one(levs, open_, blot, d, ka, kb) -> None:
    """:func:`_doubles` for one input; appends its table rows to ``ka``, ``kb``."""
    base = 301 + (d - 1) * 2601
    tg = ((open_ << d) & ~((2 << d) - 1)) & _M32
    nullpair = _DNULL * 51 + _DNULL
    # a state: (count levels, limit, carried table data, hit mask)
    states = [(levs, _M32, 0, 0, blot << d)]
    for k in range(1, 5):
        nxt = []
        for lv, limit, acc, cb, hs in states:
            m = _legal_one(lv[0], tg, d) & limit
            for s in _bits(m):
                hit = (hs >> s) & 1
                if k == 4:
                    nxt.append((None, 0, acc, cb + s * 2 + hit, 0))
                    continue
                code = s * 2 - 2 + hit
                if k == 1:
                    acc2, cb2 = code, 0
                elif k == 2:
                    acc2, cb2 = base + acc * 51 + code, 0
                else:
                    acc2, cb2 = acc, base + code * 51 - 2
                sb = 1 << s
                tb = (sb >> d) & ~1
                new = [(lv[j] & ~sb) | (lv[j + 1] & sb) for j in range(4 - k)]
                for j in range(4 - k - 1, -1, -1):
                    new[j] = new[j] | (tb if j == 0 else new[j - 1] & tb)
                nxt.append((new, (sb << 1) - 1, acc2, cb2, hs & ~sb))
        if not nxt:  # the previous level's states are the plays
            for _, _, acc, cb, _ in states:
                if k == 1:
                    ka.append(_NULL)
                    kb.append(_NULL)
                elif k == 2:
                    ka.append(base + acc * 51 + _DNULL)
                    kb.append(base + nullpair)
                elif k == 3:
                    ka.append(acc)
                    kb.append(base + nullpair)
                else:
                    ka.append(acc)
                    kb.append(cb + (_DNULL + 2))
            return
        states = nxt
    for _, _, acc, cb, _ in states:
        ka.append(acc)
        kb.append(cb)


def _afterstates_small(b: np.ndarray, d: np.ndarray, check: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`afterstates` of a small batch through :func:`_plan_one` (same rows, same order)."""
    ka: list[int] = []
    kb: list[int] = []
    counts = []
    for board, (d1, d2) in zip(b.tolist(), d.tolist()):
        before = len(ka)
        plan = _plan_one(board[0], board[1], d1, d2, check)
        if plan is None:
            _invalid(b)
        ka.extend(plan[0])
        kb.extend(plan[1])
        counts.append(len(ka) - before)
    src = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    table = _delta_table()
    out = np.take(b.reshape(-1, 50), src, axis=0)
    out += np.take(table, ka, axis=0)
    out += np.take(table, kb, axis=0)
    return out.reshape(-1, 2, 25), src


# ----------------------------------------------------------------------------------------------------------
# compiled generator (numba): the same plays in the same order, one input at a time
# ----------------------------------------------------------------------------------------------------------

_BEAR64 = _BEAR.astype(np.int64)


#: Seconds of :func:`afterstates` work on the numpy/Python path after which :func:`afterstates` loads the compiled
#: generator itself (:class:`bgai.util.jit.LazyKernel`).  Loading costs about 0.6 s of CPU (importing numba, about
#: 0.3 s, and reading the kernel's cached machine code; the very first run compiles it, about 5 s, and caches it).
LOAD_AFTER_S = 0.5


def _prime(kernel) -> None:
    """One call of the compiled generator, which compiles it or loads its machine code from numba's cache."""
    one = np.zeros((1, 2, 25), dtype=np.int8)
    one[0, 0, 0] = one[0, 1, 0] = 1
    kernel(one, np.ones((1, 2), dtype=np.int64), True, _BEAR64, DEBRUIJN)


_GENERATOR = LazyKernel(generate, LOAD_AFTER_S, prime=_prime, owner=__name__)


def use_compiled(on: bool = True) -> bool:
    """Turn the compiled move generator on (loading it now; see :data:`LOAD_AFTER_S`) or off (the numpy path, the
    reference; the same output), for the following :func:`afterstates` calls (:meth:`bgai.util.jit.LazyKernel.use`).

    Returns:
        Whether the compiled generator is now in use: ``False`` when turned off, or without compiled kernels
        (numba not installed, or ``BGAI_NUMBA=0``; see :func:`bgai.util.jit.compile_kernel`).
    """
    return _GENERATOR.use(on)


def _afterstates_compiled(kernel, b: np.ndarray, dice, n: int, check: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`afterstates` through the compiled :func:`bgai.core.movegen_jit.generate` (same rows, same order as
    the numpy path); errors are raised as the numpy path raises them (the dice first)."""
    d = np.asarray(dice)
    if d.shape == (2,) and n == 1:
        d = d[None]
    if d.shape != (n, 2) or d.dtype.kind not in "iu":
        d = _validate_dice(d, n)  # raises, or converts integral floats
    after, src, status = kernel(b, np.ascontiguousarray(d, dtype=np.int64), check, _BEAR64, DEBRUIJN)
    if status:
        _validate_dice(dice, n)  # raises for bad dice (checked before the boards, as on the numpy path)
        _invalid(b)
    return after, src


def parse_play(text: str, board, dice):
    """Parse play notation and return the matching legal :class:`Play` of the position.

    Args:
        text: e.g. ``'24/18 13/10'``, ``'bar/22*'``, ``'b/22'``, ``'6/off'``, ``'6/o'``, ``'6/0'``, ``'8/2(2)'``,
            ``'24/18/13'``, ``'24/13'``; ``*`` is optional.  ``''`` is the empty play (only when nothing can be
            played).
        board: ``(2, 25)`` board or :class:`~bgai.core.position.Position` (side to move in row 0).
        dice: ``(d1, d2)``.

    A move over several dice (``24/13`` with 6-5) may take any legal route; the intermediate points written
    (``24/18/13``) must be landed on; a point marked ``*`` must be hit.  When the routes lead to different
    positions (a blot on one intermediate point), the play that hits no more than what is marked is chosen,
    as GNU Backgammon does (``9/off`` with 6-5 does not hit on the way).

    Raises:
        NotationError: unparsable text.
        IllegalMoveError: no legal play matches (wrong checkers, blocked points, too few dice used...).
        AmbiguousMoveError: several legal plays match (e.g. ``'24/13'`` when both routes hit a different blot).
    """
    plays = legal_plays(board, dice)
    if isinstance(text, str) and not text.strip():
        if len(plays) == 1 and not plays[0].steps:
            return plays[0]  # nothing can be played: the empty play
        raise IllegalMoveError(f"play {text!r} is empty, but a legal play exists (e.g. {plays[0].notation!r})")
    moves = parse_moves(text)
    b = board.board if isinstance(board, Position) else validate(board)[0]
    me0, opp0 = [int(x) for x in b[0]], [int(x) for x in b[1]]
    d1, d2 = int(dice[0]), int(dice[1])
    all_dice = [d1] * 4 if d1 == d2 else [d1, d2]
    by_key = {p.afterstate.tobytes(): p for p in plays}
    # legs: each written move split at its written points; a leg may take one or more dice, and the steps of
    # different legs may interleave (two checkers entering before either moves on)
    legs = tuple(
        (path[k], path[k + 1], path[k + 1] in marks) for path, marks in moves for k in range(len(path) - 1)
    )
    results: dict[bytes, frozenset] = {}
    seen: set = set()

    def search(me, opp, dice_left, legs, hits):
        state = (tuple(me), tuple(opp), tuple(sorted(dice_left)), tuple(sorted(legs)))
        if state in seen:
            return
        seen.add(state)
        if not legs:
            results.setdefault(bytes(x & 0xFF for x in me + opp), frozenset(hits))
            return
        for i, (cur, to, mark) in enumerate(legs):
            if (cur, to, mark) in legs[:i]:
                continue
            for die in set(dice_left):
                for st in _single_steps(me, opp, die):
                    land = st[1]
                    if st[0] != cur or land < to:
                        continue
                    hits2 = hits | {land} if st[2] else hits
                    if land == to:
                        if mark and land not in hits2:
                            continue  # a hit written with '*' that does not happen
                        legs2 = legs[:i] + legs[i + 1 :]
                    else:
                        legs2 = legs[:i] + ((land, to, mark),) + legs[i + 1 :]
                    rest = list(dice_left)
                    rest.remove(die)
                    me2, opp2 = _apply(me, opp, st)
                    search(me2, opp2, rest, legs2, hits2)

    search(me0, opp0, all_dice, legs, frozenset())
    matches = [(by_key[k], h) for k, h in results.items() if k in by_key]
    if not matches:
        if results:
            raise IllegalMoveError(
                f"play {text!r} is not legal with {d1}-{d2}: a play must use as many dice as possible "
                "(the higher die when only one can be used)"
            )
        raise IllegalMoveError(f"play {text!r} is not legal in this position with {d1}-{d2}")
    if len(matches) > 1:
        marked_all = {p for path, marks in moves for p in marks}
        exact = [m for m in matches if m[1] <= marked_all]
        if len(exact) == 1:
            return exact[0][0]
        options = ", ".join(sorted(m[0].notation for m in matches))
        raise AmbiguousMoveError(f"play {text!r} matches several legal plays: {options}")
    return matches[0][0]
