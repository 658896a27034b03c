"""Input encodings of the value network, batched, by name.

Every encoder maps boards ``(N, 2, 25)`` int8 (bgai's layout, :mod:`bgai.core.board`; row 0 the side on roll) to
features ``(N, F)`` float32, from the view of the side on roll.  Encoders are looked up by name with
:func:`get_encoder`; each has a ``name``, a ``version`` and a ``size``, all recorded in checkpoints so that a
model is always fed the inputs it was trained on (:func:`check_encoding` refuses a mismatch).

``tesauro198`` (version 1)
    Tesauro's TD-Gammon encoding (G. Tesauro, "Practical issues in temporal difference learning", Machine
    Learning 8, 1992; the unit layout as in Sutton & Barto, *Reinforcement Learning*, 2nd ed., section 16.1):
    for each side (side on roll first), for each of its points 1..24, four units for ``n`` checkers:
    ``n >= 1``, ``n >= 2``, ``n >= 3``, ``(n - 3) / 2`` when ``n > 3``; then its bar ``n / 2`` and its
    checkers off ``n / 15``.  Then two side-to-move units, ``(1, 0)`` (always the side on roll here, since
    bgai evaluates positions from the side on roll).  98 + 98 + 2 = 198 units.

``extended`` (version 1)
    ``tesauro198`` followed by 21 expert features in the spirit of GNU Backgammon's contact-net inputs
    (gnubg ``eval.c``: ``I_BACKESCAPES``, ``I_ACONTAIN``, ``I_ENTER``, ``I_PIPLOSS``/``I_P1`` ...), computed
    cheaply in numpy.  For each side (side on roll first), 10 units:

    0. pip count / 100;
    1. blots (points with exactly one checker) / 5;
    2. home-board points made (points 1..6 holding >= 2 checkers) / 6;
    3. longest prime (run of consecutive made points, counted up to 8) / 6;
    4. rearmost checker's point / 25 (bar = 25; 0 when all are off);
    5. checkers back (on the bar or in the opponent's home board, points 19..24) / 15;
    6. back escapes: rolls (of 36, gnubg's definition: the end point ``d1 + d2`` is open and so is one of the
       intermediate points ``d1``, ``d2``; doubles counted once) with which the rearmost checker can pass the
       opponent's made points ahead of it, / 36; 1 when it has nothing ahead (no contact for it);
    7. containment: 1 - (the fewest such escapes of any of the side's checkers on its points 13..24 or the bar
       that has an opponent's made point within 12 pips ahead) / 36: how well the *opponent* blocks this side;
       0 when there is no such checker;
    8. shots: the share of the 36 rolls with which the opponent hits at least one of this side's blots, direct
       or combination (distances 1..24 reachable with the roll's dice, ignoring blocks in between), from
       its checkers on the board or the bar;
    9. dance: (opponent's closed home-board points / 6) ** 2 if this side has a checker on the bar, else 0
       (the chance that a roll cannot enter).

    and one shared unit: 1 when the position is a race (no contact: every checker of the side on roll is past
    every checker of the opponent), else 0.  198 + 20 + 1 = 219 units.

``extended-gnubg`` (version 1, 269 units)
    ``extended``'s 219 units followed by the 50 expert-feature units of ``contact`` (its units 200..249: gnubg's
    25 features of the side on roll, then the opponent's), so that a net on ``extended`` can be grown into one on
    these inputs with its values unchanged (new input weights zero, :meth:`bgai.model.nets.ValueNet.widened`;
    :attr:`Encoder.extends` names the encoding whose units come first).

``extended-race`` (version 1, 249 units)
    ``extended``'s 219 units followed by the 30 units of gnubg's race inputs (``race``) that are not per point:
    for each side, opponent first, its 14 borne-off units and ``NCROSS`` (``race``'s units 92..106 and 199..213).
    Races only, as ``race``; it extends ``extended`` as ``extended-gnubg`` does.

``extended-race-db`` (version 1, 271 units)
    ``extended-race``'s 249 units followed by 11 units per side (side on roll first) from the exact one-sided
    bear-off database (:mod:`bgai.model.bearoff`), so that a race net sees how many rolls a side that has all its
    checkers home needs, which decides most gammons of lopsided races:

    1. home: 1 if all the side's checkers are on its home points 1..6 or borne off (a position of the database),
       else 0;
    2. to 9. P(the side bears off all its checkers within k rolls) for k = 1..8 (the database's ``off``
       distribution, playing to bear off in the fewest expected rolls); 0 when the side is not home;
    10. and 11. P(the side bears off its first checker within k rolls) for k = 1, 2 (the ``first_off``
       distribution: 1 when a checker is off already); 0 when the side is not home.

    Races only, as ``race``; it extends ``extended-race``.  A new unit of information, not of GNU Backgammon's
    race net (whose inputs do not include the database's values).

``race`` (version 1, 214 units) and ``contact`` (version 1, 250 units)
    GNU Backgammon's race-net and contact-net inputs (4 units per point and side, and gnubg's expert features
    OFF1..BACKRESCAPES), laid out exactly as gnubg's ``eval.c`` lays them out: see
    :mod:`bgai.model.gnubg_inputs`.  ``race`` accepts race positions only (no checker on a 24-point or bar).

The encoders run on every afterstate of every self-play move, so they are numpy with fixed lookup tables and no
Python loop over positions; a batch goes through in chunks of a few thousand positions, both sides at once, so
that the temporaries stay in cache.  With numba installed (the ``fast`` extra, :mod:`bgai.util.jit`) each also has
a compiled kernel that writes a position's whole row in one pass with the same integer and float32 operations, so
its output is bit-identical; the numpy code stays the reference (``compiled=False``), and a process switches to
the kernel after a warm-up (:mod:`bgai.model.kernels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bgai.core.board import as_batch
from bgai.errors import CheckpointError, ConfigError, InvalidPositionError
from bgai.model.bearoff import get_database, position_index
from bgai.model.gnubg_inputs import CONTACT_SIZE, RACE_SIZE, contact_inputs, race_inputs
from bgai.model.kernels import PositionKernel

__all__ = [
    "Encoder",
    "ENCODERS",
    "get_encoder",
    "check_encoding",
    "tesauro198",
    "extended",
    "extended_gnubg",
    "extended_race",
    "extended_race_db",
    "bearoff_units",
    "escape_table",
]


# --- Tesauro's units ---------------------------------------------------------------------------------------

def _tesauro_table() -> np.ndarray:
    """``(16, 4)`` float32: the four point units for ``n = 0..15`` checkers."""
    t = np.zeros((16, 4), dtype=np.float32)
    for n in range(16):
        t[n, 0] = n >= 1
        t[n, 1] = n >= 2
        t[n, 2] = n >= 3
        t[n, 3] = (n - 3) / 2.0 if n > 3 else 0.0
    return t


_POINT_UNITS = _tesauro_table()


def _pair_table() -> np.ndarray:
    """``(4096,)`` 32-byte items: the 8 units of two neighbouring points with ``lo`` and ``hi`` checkers at index
    ``lo + 256 hi``, the little-endian uint16 of the two int8 counts (only ``lo <= 15`` is used)."""
    t = np.zeros((16, 256, 8), dtype=np.float32)
    t[:, :16, :4] = _POINT_UNITS[None, :, :]
    t[:, :16, 4:] = _POINT_UNITS[:, None, :]
    return t.reshape(4096, 8).view(np.dtype("V32"))[:, 0]


_POINT_PAIRS = _pair_table()

# Batches are encoded in chunks of this many positions, so that every temporary stays small (in cache, and
# reused by the allocator instead of fresh pages each call); only the output is as large as the batch.
_CHUNK = 2048

# Linear functions of a side's row (25 counts), one float32 matmul for all: pip count, checkers back (columns
# 18..24), checkers not borne off, checkers on the bar.  Exact: integer sums far below 2 ** 24.
_LINEAR = np.zeros((25, 4), dtype=np.float32)
_LINEAR[:, 0] = np.arange(1, 26)
_LINEAR[18:, 1] = 1.0
_LINEAR[:, 2] = 1.0
_LINEAR[24, 3] = 1.0


def _tesauro_into(b: np.ndarray, out: np.ndarray, lin: np.ndarray) -> None:
    """Write the 198 Tesauro units of a C-contiguous chunk ``b`` ``(n, 2, 25)`` int8 into ``out[:, :198]``.

    ``lin`` ``(2, n, 4)`` float32: per side (side-major) ``b[:, side] @ _LINEAR``.
    """
    n = b.shape[0]
    side = out[:, :196].reshape(n, 2, 98)
    # gather the 8 units of each pair of points (0-1, 2-3, ..., 22-23) as one 32-byte item, indexed by the
    # two counts read as one uint16 (counts are 0..15, checked), into a contiguous temporary (take into the
    # strided output would copy that in and out), then one copy into place
    pairs = np.ndarray((n, 2, 12), dtype="<u2", buffer=b, strides=(50, 25, 2))
    pts = np.take(_POINT_PAIRS, pairs, mode="wrap")
    side[:, :, :96] = pts.view(np.float32).reshape(n, 2, 96)
    for s in (0, 1):  # one side at a time: numpy loops innermost over a length-2 axis slowly
        np.multiply(lin[s, :, 3], np.float32(0.5), out=side[:, s, 96])
        np.subtract(np.float32(15.0), lin[s, :, 2], out=side[:, s, 97])
        side[:, s, 97] *= np.float32(1.0 / 15.0)
    out[:, 196] = 1.0
    out[:, 197] = 0.0


def _encode(boards: np.ndarray, size: int, compiled: bool | None = None) -> np.ndarray:
    """``tesauro198`` (``size`` 198) or ``extended`` (219) of a batch: the compiled kernel when
    :class:`~bgai.model.kernels.PositionKernel` says so, else numpy a chunk at a time (the reference)."""
    b = np.ascontiguousarray(as_batch(boards))
    kernel = _ENCODE_KERNEL.get(b.shape[0], compiled)
    if kernel is not None:
        out = np.empty((b.shape[0], size), dtype=np.float32)
        if kernel(b, size, out):
            _check_counts(b)
        return out
    _check_counts(b)
    n = b.shape[0]
    out = np.empty((n, size), dtype=np.float32)
    for lo in range(0, n, _CHUNK):
        bc, oc = b[lo : lo + _CHUNK], out[lo : lo + _CHUNK]
        m = bc.shape[0]
        lin = np.empty((2, m, 4), dtype=np.float32)
        for s in (0, 1):  # one matmul per side: small enough that BLAS keeps it on one thread
            np.matmul(bc[:, s].astype(np.float32), _LINEAR, out=lin[s])
        if size > 198:
            tail = _expert(bc, lin)
        _tesauro_into(bc, oc, lin)
        if size > 198:  # right after the rows' first units, while those cache lines are still at hand
            oc[:, 198:] = tail
    return out


_POP12 = np.array([bin(k).count("1") for k in range(4096)], dtype=np.int64)  # set bits of 12-bit values


def _encode_kernel(b, size, out):  # pragma: no cover - compiled by numba (the tests run it compiled and not)
    """``tesauro198`` (``size`` 198) or ``extended`` (219) of ``b`` ``(n, 2, 25)`` int8 into ``out`` ``(n, size)``
    float32, one pass per position; the same float32 operations as the numpy path (:func:`_encode`).

    Returns 0, or 1 when a count is outside 0..15 (``out`` is then partly written)."""
    n = b.shape[0]
    for i in range(n):
        for s in range(2):
            for c in range(25):
                v = b[i, s, c]
                if v < 0 or v > 15:
                    return 1
    f15 = np.float32(15.0)
    occ = np.zeros(2, dtype=np.int64)
    made = np.zeros(2, dtype=np.int64)
    pip = np.zeros(2, dtype=np.int64)
    back = np.zeros(2, dtype=np.int64)
    rear = np.zeros(2, dtype=np.int64)
    for i in range(n):
        for s in range(2):
            o = 98 * s
            tot = 0
            p = 0
            bk = 0
            oc = 0
            md = 0
            for c in range(24):
                v = b[i, s, c]
                out[i, o + 4 * c] = _POINT_UNITS[v, 0]
                out[i, o + 4 * c + 1] = _POINT_UNITS[v, 1]
                out[i, o + 4 * c + 2] = _POINT_UNITS[v, 2]
                out[i, o + 4 * c + 3] = _POINT_UNITS[v, 3]
                tot += v
                p += (c + 1) * v
                if c >= 18:
                    bk += v
                if v > 0:
                    oc |= 1 << c
                if v >= 2:
                    md |= 1 << c
            bar = b[i, s, 24]
            tot += bar
            p += 25 * bar
            bk += bar
            if bar > 0:
                oc |= 1 << 24
            out[i, o + 96] = np.float32(bar) * np.float32(0.5)
            out[i, o + 97] = (f15 - np.float32(tot)) * np.float32(1.0 / 15.0)
            occ[s] = oc
            made[s] = md  # points only: the bar is no point
            pip[s] = p
            back[s] = bk
            r = -1
            for c in range(24, -1, -1):
                if (oc >> c) & 1:
                    r = c
                    break
            rear[s] = r
        out[i, 196] = 1.0
        out[i, 197] = 0.0
        if size == 198:
            continue
        contact = rear[0] + rear[1] >= 24
        for s in range(2):
            o = 198 + 10 * s
            md, oc = made[s], occ[s]
            md_o, oc_o = made[1 - s], occ[1 - s]
            blot = (oc & ~md) & 0xFFFFFF
            out[i, o] = np.float32(pip[s]) * np.float32(0.01)
            out[i, o + 5] = np.float32(back[s]) * np.float32(1.0 / 15.0)
            out[i, o + 1] = np.float32(_POP12[blot & 0xFFF] + _POP12[blot >> 12]) * np.float32(0.2)
            out[i, o + 2] = np.float32(_POP12[md & 0x3F]) * np.float32(1.0 / 6.0)
            best = 0
            cur = 0
            for c in range(24):
                if (md >> c) & 1:
                    cur += 1
                    if cur > best:
                        best = cur
                else:
                    cur = 0
            if best > _MAX_PRIME:
                best = _MAX_PRIME
            out[i, o + 3] = np.float32(best) * np.float32(1.0 / 6.0)
            out[i, o + 4] = np.float32(rear[s] + 1) * np.float32(1.0 / 25.0)
            # back escapes (see _expert)
            bm = 0
            if contact:
                bm = (md_o >> (24 - rear[s])) & 0xFFF
            out[i, o + 6] = _BACK_UNITS[bm]
            # containment: the fewest escapes over the occupied columns 12..24 (36 when none)
            esc = 36
            for c in range(12, 25):
                if (oc >> c) & 1:
                    e = _ESCAPES[(md_o >> (24 - c)) & 0xFFF]
                    if e < esc:
                        esc = e
            out[i, o + 7] = np.float32(1.0) - np.float32(esc) * np.float32(1.0 / 36.0)
            # shots: bit d - 1 of hm >> 24 when some blot is d pips from some opponent checker
            hm = 0
            x = blot
            while x:
                low = x & -x
                x ^= low
                hm |= low * oc_o
            hm >>= 24
            rolls = _ROLLS_LOW[hm & 0xFFF] | _ROLLS_HIGH[hm >> 12]
            out[i, o + 8] = np.float32(_POP12[rolls & 0xFFF] + _POP12[(rolls >> 12) & 0xFFF] + _POP12[rolls >> 24]) * np.float32(1.0 / 36.0)
            if oc >= 1 << 24:
                t = np.float32(_POP12[md_o & 0x3F]) * np.float32(1.0 / 6.0)
                out[i, o + 9] = t * t
            else:
                out[i, o + 9] = 0.0
        out[i, 218] = 0.0 if contact else 1.0
    return 0


_ENCODE_KERNEL = PositionKernel(_encode_kernel)


def tesauro198(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """Tesauro's 198-unit encoding (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.
        compiled: ``True``: the compiled kernel when there is one (:mod:`bgai.util.jit`); ``False``: the numpy
            reference; ``None``: the kernel after a warm-up (:mod:`bgai.model.kernels`).  The output is
            bit-identical.

    Returns:
        ``(N, 198)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    return _encode(boards, 198, compiled)


# --- expert features ---------------------------------------------------------------------------------------

def escape_table() -> np.ndarray:
    """``(4096,)`` int16: escaping rolls (of 36) for a checker given the blocks ahead of it.

    Bit ``k`` of the index is set when the point ``k + 1`` pips ahead of the checker is made (>= 2 checkers)
    by the opponent.  A roll ``(d1, d2)`` escapes when the point ``d1 + d2`` ahead is open and at least one of
    the points ``d1``, ``d2`` ahead is open; non-doubles count 2, doubles 1 (GNU Backgammon's ``anEscapes``
    definition, ``eval.c``; a rough measure, doubles' four moves are not followed).
    """
    t = np.zeros(4096, dtype=np.int16)
    masks = np.arange(4096)
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            end_open = (masks >> (d1 + d2 - 1)) & 1 == 0
            mid_open = ((masks >> (d1 - 1)) & 1 == 0) | ((masks >> (d2 - 1)) & 1 == 0)
            t += np.where(end_open & mid_open, 1 if d1 == d2 else 2, 0).astype(np.int16)
    return t


_ESCAPES = escape_table()


def _roll_hit_tables() -> tuple[np.ndarray, np.ndarray]:
    """Which of the 36 rolls reach a set of distances: two ``(4096,)`` int64 tables of 36-bit roll masks.

    A non-double ``(a, b)`` reaches distances ``a``, ``b``, ``a + b``; a double ``d`` reaches ``d, 2d, 3d, 4d``
    (blocks on the way are ignored: an approximation).  Bit ``r`` of an entry is roll ``r`` (``6 (a - 1) +
    b - 1``); ``low[m]`` covers distance sets ``m`` of 1..12 (bit ``d - 1``), ``high[m]`` of 13..24 (bit
    ``d - 13``), so the rolls that reach any distance of a 24-bit set ``h`` are ``low[h & 0xFFF] | high[h >> 12]``.
    """
    reach = np.zeros((36, 24), dtype=bool)
    for a in range(1, 7):
        for b in range(1, 7):
            dists = {a, b, a + b} if a != b else {a, 2 * a, 3 * a, 4 * a}
            for d in dists:
                reach[6 * (a - 1) + b - 1, d - 1] = True
    masks = np.arange(4096)
    bits = ((masks[:, None] >> np.arange(12)[None, :]) & 1).astype(bool)  # (4096, 12)
    roll_bit = np.int64(1) << np.arange(36, dtype=np.int64)
    low = ((bits[:, None, :] & reach[None, :, :12]).any(axis=2) * roll_bit).sum(axis=1)
    high = ((bits[:, None, :] & reach[None, :, 12:]).any(axis=2) * roll_bit).sum(axis=1)
    return low.astype(np.int64), high.astype(np.int64)


_ROLLS_LOW, _ROLLS_HIGH = _roll_hit_tables()
_MAX_PRIME = 8  # primes longer than this count as 8


def _run_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three ``(4096,)`` int8 tables over 12-bit sets: the longest run of set bits, the run ending at the top
    (bit 11) and the run starting at the bottom (bit 0); the longest run of a 24-bit set with halves ``lo``,
    ``hi`` is ``max(run[lo], run[hi], top[lo] + bottom[hi])``."""
    bits = (np.arange(4096)[:, None] >> np.arange(12)[None, :]) & 1  # (4096, 12)
    cur = np.zeros(4096, dtype=np.int64)
    run = np.zeros(4096, dtype=np.int64)
    for k in range(12):
        cur = (cur + 1) * bits[:, k]
        run = np.maximum(run, cur)
    bottom = np.cumprod(bits, axis=1).sum(axis=1)
    return run.astype(np.int8), cur.astype(np.int8), bottom.astype(np.int8)


_RUN, _RUN_TOP, _RUN_BOTTOM = _run_tables()


def _contain_table() -> np.ndarray:
    """``(8 * 16384,)`` int8: the fewest escapes of checkers on three adjacent columns ``c - 2, c - 1, c``.

    Index ``occ << 14 | blocks``: bit ``i`` of ``occ`` when column ``c - 2 + i`` holds a checker; bit ``k``
    of ``blocks`` when the point ``k + 1`` pips ahead of column ``c`` is made by the opponent (so a checker
    on column ``c - 2 + i`` has the blocks ``(blocks >> (2 - i)) & 0xFFF`` ahead); 36 when no column holds one.
    """
    blocks = np.arange(16384)
    t = np.full((8, 16384), 36, dtype=np.int8)
    for occ in range(8):
        for i in range(3):
            if occ >> i & 1:
                t[occ] = np.minimum(t[occ], _ESCAPES[(blocks >> (2 - i)) & 0xFFF])
    return t.reshape(-1)


_CONTAIN3 = _contain_table()
# containment's column groups: top columns 14, 17, 20, 23 (each with the two below it) and the bar (24) alone
_GROUP_SHIFT = np.array([10, 7, 4, 1, 0], dtype=np.int64)[:, None, None]  # 24 - top column
_GROUP_LOW = np.array([12, 15, 18, 21, 22], dtype=np.int64)[:, None, None]  # top column - 2
_GROUP_OCC = np.array([7, 7, 7, 7, 4], dtype=np.int64)[:, None, None]  # the bar's group: only its own column

# Units are float32 counts times float32 constants, so they are exact products rounded once to float32 (the
# same as the old float64 products of int64 counts, rounded to float32).
_BACK_UNITS = _ESCAPES.astype(np.float32) * np.float32(1.0 / 36.0)  # 36 escapes (no block ahead) give 1.0
_COUNT_SCALES = np.array([0.2, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 25.0], dtype=np.float32)[:, None, None]  # units 1..4
_FIELD_SHIFT = np.arange(8, dtype=np.uint32)


def _masks(b: np.ndarray) -> np.ndarray:
    """``(2, 2, n)`` int64 bit masks of a chunk ``b`` ``(n, 2, 25)`` int8: its made columns (>= 2 checkers) and
    its occupied columns (> 0), per side (side-major), bit ``c`` = column ``c`` (the bar is bit 24)."""
    n = b.shape[0]
    m = -(-n // 4) * 4  # so that each kind's rows fill whole groups of 8 rows of 25 bits (25 bytes)
    flags = np.empty((2, m, 2, 25), dtype=np.bool_)
    np.greater_equal(b, 2, out=flags[0, :n])
    np.greater(b, 0, out=flags[1, :n])
    flags[:, n:] = False
    packed = np.packbits(flags.reshape(-1), bitorder="little")
    # row j of a group of 8 rows (25 bytes) starts at byte 3 j, bit j: one (unaligned) 4-byte read and a shift
    words = np.ndarray((packed.size // 25, 8), dtype="<u4", buffer=packed, strides=(25, 3))
    fields = words >> _FIELD_SHIFT
    fields &= 0x1FFFFFF
    masks = np.empty((2, 2, m), dtype=np.int64)
    np.copyto(masks, fields.reshape(2, m, 2).transpose(0, 2, 1))
    return masks[:, :, :n]


def _expert(b: np.ndarray, lin: np.ndarray) -> np.ndarray:
    """The 21 expert units ``(n, 21)`` float32 of a C-contiguous chunk ``b`` ``(n, 2, 25)`` int8.

    Both sides at once, side-major: arrays ``(2, n)``, the side on roll in row 0, so a side's opponent is the
    same array reversed.  Each side's columns are in its own numbering: its column ``c`` is the opponent's
    column ``23 - c``.  ``lin`` ``(2, n, 4)``: see :func:`_tesauro_into`.  Arrays are ``(2, n)`` and the units
    are written one side at a time because numpy loops slowly over a length-2 innermost axis.
    """
    n = b.shape[0]
    f = np.empty((n, 21), dtype=np.float32)  # the units in output order: side 0's 10, side 1's 10, race
    fs = (f[:, 0:10], f[:, 10:20])
    tmp = np.empty((2, n), dtype=np.float32)

    def put(j: int, units: np.ndarray) -> None:  # unit j of both sides from a (2, n) array
        fs[0][:, j] = units[0]
        fs[1][:, j] = units[1]

    made, occ = _masks(b)
    blot = occ ^ made  # exactly one checker: occupied, not made
    blot &= 0xFFFFFF  # the bar is no point
    made &= 0xFFFFFF
    made_o, occ_o = made[::-1], occ[::-1]  # the opponent's
    # rearmost column (24 = bar, -1 when all are off): the highest set bit of occ, the float64 exponent
    rear = occ.astype(np.float64).view(np.int64)
    rear >>= 52
    rear -= 1023
    np.maximum(rear, -1, out=rear)
    # me's column c is the opponent's 23 - c: contact when some checker of one side is behind one of the other
    contact = rear[0] + rear[1] >= 24

    for s in (0, 1):
        np.multiply(lin[s, :, 0], np.float32(0.01), out=fs[s][:, 0])  # pips
        np.multiply(lin[s, :, 1], np.float32(1.0 / 15.0), out=fs[s][:, 5])  # checkers back
    # units 1..4 are counts times a constant: blots, home-board points, longest prime, rearmost point
    count = np.empty((4, 2, n), dtype=np.float32)
    np.bitwise_count(blot, out=count[0])
    home = np.bitwise_count(made & 0x3F)
    count[1] = home
    # longest prime from the runs of the two 12-bit halves of the made points
    lo = made & 0xFFF
    hi = made >> 12
    best = _RUN_TOP[lo]
    best += _RUN_BOTTOM[hi]
    np.maximum(best, _RUN[lo], out=best)
    np.maximum(best, _RUN[hi], out=best)
    np.minimum(best, _MAX_PRIME, out=count[2])
    np.add(rear, 1, out=count[3])
    count *= _COUNT_SCALES
    for s in (0, 1):
        fs[s][:, 1:5] = count[:, s].T
    # back escapes: the point k + 1 pips ahead of me's column c is me's column c - 1 - k = opp column
    # 24 - c + k, so the 12-bit block mask is (made_o >> (24 - c)) & 0xFFF (columns below 0 are open: bits
    # above 23 are 0).  No contact (which includes a side with no checker left): mask 0, 36 escapes, unit 1.
    back = made_o >> (24 - rear)
    back &= 0xFFF
    back *= contact
    np.take(_BACK_UNITS, back, out=tmp, mode="wrap")
    put(6, tmp)
    # containment: the fewest escapes over me's occupied columns 12..24, three columns per lookup
    win = made_o[None] >> _GROUP_SHIFT  # (5, 2, n)
    win &= 0x3FFF
    occ3 = occ[None] >> _GROUP_LOW
    occ3 &= _GROUP_OCC
    occ3 <<= 14
    win |= occ3
    esc = np.take(_CONTAIN3, win, mode="wrap").min(axis=0)
    np.multiply(esc, np.float32(1.0 / 36.0), out=tmp)
    np.subtract(1.0, tmp, out=tmp)
    put(7, tmp)
    # shots: an opponent checker on its column j (bar 24) hits a blot on me's column c from distance
    # c - (23 - j) = c + j - 23, i.e. bit d - 1 of occ_o >> (24 - c) = (occ_o << c) >> 24.  That is symmetric
    # (bit d - 1 of (blot << j) >> 24), so add the shifted copies of one set for each element of the other,
    # the smaller set, lowest element first; OR-ing the products and shifting once is the same.
    n_blot, n_src = np.bitwise_count(blot), np.bitwise_count(occ_o)
    x = np.where(n_blot <= n_src, blot, occ_o)
    y = x ^ blot
    y ^= occ_o  # the other set
    hm = np.zeros_like(blot)
    low = np.empty_like(blot)
    for _ in range(int(np.minimum(n_blot, n_src).max(initial=0))):
        np.negative(x, out=low)
        low &= x  # the lowest element
        x ^= low
        low *= y
        hm |= low
    hm >>= 24  # bit d - 1: some blot is at distance d from some source
    rolls = np.take(_ROLLS_LOW, hm & 0xFFF, mode="wrap")
    hm >>= 12
    rolls |= np.take(_ROLLS_HIGH, hm, mode="wrap")  # 36-bit set of the rolls that hit
    np.multiply(np.bitwise_count(rolls), np.float32(1.0 / 36.0), out=tmp)
    put(8, tmp)
    # dance: the opponent's closed home-board points are its made columns 0..5; 0 when not on the bar
    np.multiply(home[::-1], np.float32(1.0 / 6.0), out=tmp)
    np.square(tmp, out=tmp)
    tmp *= occ >= 1 << 24
    put(9, tmp)
    f[:, 20] = ~contact
    return f


def extended(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """Tesauro's 198 units plus 21 expert features (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.
        compiled: ``True``: the compiled kernel when there is one (:mod:`bgai.util.jit`); ``False``: the numpy
            reference; ``None``: the kernel after a warm-up (:mod:`bgai.model.kernels`).  The output is
            bit-identical.

    Returns:
        ``(N, 219)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    return _encode(boards, 219, compiled)


#: Units of gnubg's contact inputs before its expert features (4 per point and bar, both sides).
_CONTACT_BOARD_UNITS = 200
#: The units of gnubg's race inputs that are not per point: each side's last 15 (14 borne-off units and NCROSS).
_RACE_EXTRA_UNITS = np.r_[RACE_SIZE // 2 - 15 : RACE_SIZE // 2, RACE_SIZE - 15 : RACE_SIZE]


def extended_gnubg(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """``extended``'s 219 units and gnubg's 50 expert-feature units (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.
        compiled: as :func:`extended` (both parts; bit-identical either way).

    Returns:
        ``(N, 269)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    b = as_batch(boards)
    out = np.empty((b.shape[0], 219 + CONTACT_SIZE - _CONTACT_BOARD_UNITS), dtype=np.float32)
    out[:, :219] = extended(b, compiled=compiled)
    out[:, 219:] = contact_inputs(b, compiled=compiled)[:, _CONTACT_BOARD_UNITS:]
    return out


def extended_race(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """``extended``'s 219 units and gnubg's 30 race units that are not per point (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0; races only.
        compiled: as :func:`extended` (both parts; bit-identical either way).

    Returns:
        ``(N, 249)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values, or not a race (a checker on a 24-point or bar).
    """
    b = as_batch(boards)
    race = race_inputs(b, compiled=compiled)  # first: it refuses a board that is not a race
    out = np.empty((b.shape[0], 219 + _RACE_EXTRA_UNITS.size), dtype=np.float32)
    out[:, :219] = extended(b, compiled=compiled)
    out[:, 219:] = race[:, _RACE_EXTRA_UNITS]
    return out


#: Rolls k of the units P(all off within k rolls) and P(first checker off within k rolls) of ``extended-race-db``.
BEAROFF_ALL_ROLLS = 8
BEAROFF_FIRST_ROLLS = 2
#: Units per side of :func:`bearoff_units`: home, then the two cumulative distributions.
BEAROFF_UNITS = 1 + BEAROFF_ALL_ROLLS + BEAROFF_FIRST_ROLLS


def bearoff_units(boards: np.ndarray) -> np.ndarray:
    """The 22 bear-off-database units of ``extended-race-db`` (module docstring), side on roll first.

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.

    Returns:
        ``(N, 22)`` float32: per side, home (0/1), P(all off within k rolls) for k = 1..8, P(first checker off
        within k rolls) for k = 1, 2; a side with a checker outside its home board has all 11 units 0.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    b = as_batch(boards)
    _check_counts(b)
    n = b.shape[0]
    out = np.zeros((n, 2, BEAROFF_UNITS), dtype=np.float32)
    home = b[:, :, 6:].sum(axis=2) == 0  # (N, 2): nothing on points 7..24 or the bar
    if home.any():
        db = get_database()  # built on first use (about 5 s) and cached
        rows, sides = np.nonzero(home)
        idx = position_index(b[rows, sides, :6])
        out[rows, sides, 0] = 1.0
        for lo, dist, k in ((1, db.off, BEAROFF_ALL_ROLLS), (1 + BEAROFF_ALL_ROLLS, db.first_off, BEAROFF_FIRST_ROLLS)):
            # P(within t rolls) for t = 1..k: the distribution over 0..k rolls summed up, t = 0 left out
            out[rows, sides, lo : lo + k] = np.minimum(np.cumsum(dist[idx, : k + 1], axis=1)[:, 1:], 1.0)
    return out.reshape(n, 2 * BEAROFF_UNITS)


def extended_race_db(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """``extended-race``'s 249 units and the 22 bear-off-database units (:func:`bearoff_units`).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0; races only.
        compiled: as :func:`extended` (the ``extended-race`` part; bit-identical either way).

    Returns:
        ``(N, 271)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values, or not a race (a checker on a 24-point or bar).
    """
    b = as_batch(boards)
    first = extended_race(b, compiled=compiled)  # first: it refuses a board that is not a race
    out = np.empty((b.shape[0], first.shape[1] + 2 * BEAROFF_UNITS), dtype=np.float32)
    out[:, : first.shape[1]] = first
    out[:, first.shape[1] :] = bearoff_units(b)
    return out


def _check_counts(b: np.ndarray) -> None:
    # cheap range check so the lookup tables cannot be indexed out of bounds (full validation is board.validate)
    if b.size and (b.min() < 0 or b.max() > 15):

        raise InvalidPositionError("checker counts must be in 0..15 for feature encoding")


@dataclass(frozen=True)
class Encoder:
    """A named, versioned input encoding: ``encode(boards (N, 2, 25) int8) -> (N, size) float32``."""

    name: str
    version: int
    size: int
    encode: Callable[[np.ndarray], np.ndarray]
    extends: str = ""
    """The encoding whose units are this one's first units (``''``: none)."""
    races_only: bool = False
    """Whether it encodes race positions only (no checker on a 24-point or bar; others raise)."""

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.encode(boards)

    def starts_with(self, name: str) -> bool:
        """Whether the units of the encoding ``name`` are this one's first units: itself, or an encoding it
        :attr:`extends`, directly or through others (``extended-gnubg`` starts with ``extended`` and
        ``tesauro198``)."""
        enc: Encoder | None = self
        while enc is not None:
            if enc.name == name:
                return True
            enc = ENCODERS.get(enc.extends)
        return False

    def describe(self) -> dict:
        """``{'name', 'version', 'size'}``, the form stored in checkpoints."""
        return {"name": self.name, "version": self.version, "size": self.size}


ENCODERS: dict[str, Encoder] = {
    "tesauro198": Encoder("tesauro198", 1, 198, tesauro198),
    "extended": Encoder("extended", 1, 219, extended, extends="tesauro198"),
    "race": Encoder("race", 1, RACE_SIZE, race_inputs, races_only=True),
    "contact": Encoder("contact", 1, CONTACT_SIZE, contact_inputs),
    "extended-gnubg": Encoder("extended-gnubg", 1, 269, extended_gnubg, extends="extended"),
    "extended-race": Encoder("extended-race", 1, 249, extended_race, extends="extended", races_only=True),
    "extended-race-db": Encoder("extended-race-db", 1, 249 + 2 * BEAROFF_UNITS, extended_race_db,
                                extends="extended-race", races_only=True),
}


def get_encoder(name: str) -> Encoder:
    """The encoder called ``name``.

    Raises:
        ConfigError: no such encoding (the message lists the known ones).
    """
    try:
        return ENCODERS[name]
    except KeyError:
        raise ConfigError(f"unknown encoding {name!r}; known: {', '.join(sorted(ENCODERS))}") from None


def check_encoding(desc: dict) -> Encoder:
    """The encoder matching a checkpoint's ``{'name', 'version', 'size'}`` record.

    Raises:
        CheckpointError: unknown name, or a version/size this bgai does not produce.
    """
    try:
        enc = ENCODERS[str(desc["name"])]
    except (KeyError, TypeError):
        raise CheckpointError(f"checkpoint uses an unknown input encoding {desc!r}") from None
    if int(desc.get("version", -1)) != enc.version or int(desc.get("size", -1)) != enc.size:
        raise CheckpointError(
            f"checkpoint encoding {desc!r} does not match this bgai's {enc.describe()!r}"
        )
    return enc
