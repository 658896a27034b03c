"""GNU Backgammon's neural-net inputs: the ``race`` and ``contact`` encodings, vectorised over batches.

These are the inputs of GNU Backgammon's race net and contact (and crashed) nets, as defined in gnubg's
``eval.c`` (``CalculateRaceInputs``, ``CalculateContactInputs``, ``CalculateHalfInputs`` and the escape tables
``anEscapes``/``anEscapes1``; Joseph Heled's gnubg-nn ``inputs.c``, the engine of the ``gnubg_nn`` package, has
the same definitions but for one detail of PIPLOSS, see ``hit_rule``).  The vector is laid
out exactly as gnubg lays it out, unit for unit, so that a net trained on gnubg's inputs (``gnubg.weights``)
reads these directly.  gnubg keeps the opponent in row 0 and the side on roll in row 1 (bgai's rows reversed),
so **the opponent's units come first**.  Each side's points are in its own numbering (column ``c`` = its point
``c + 1``; column 24 its bar), as in :mod:`bgai.core.board`.

``race`` (214 units)
    For each side, opponent first, 107 units: four for each of its points 1..23 (columns 0..22), for ``n``
    checkers ``n == 1``, ``n == 2``, ``n >= 3``, ``(n - 3) / 2`` when ``n > 3`` (else 0); 14 units, unit ``k``
    (0..13) being 1 when exactly ``k + 1`` checkers are borne off; and ``NCROSS``: the sum over its checkers
    outside its home board of the home-board boundaries still to cross (1 for points 7..12, 2 for 13..18, 3
    for 19..24) / 10.  In a race the 24-points and bars are empty, so :func:`race_inputs` refuses a board
    with a checker there.

``contact`` (250 units)
    Units 0..199: for each side, opponent first, four units for each of its points 1..24 (``n == 1``,
    ``n == 2``, ``n >= 3``, ``(n - 3) / 2`` when ``n > 3``), then four for its bar (``n >= 1``, ``n >= 2``,
    ``n >= 3``, ``(n - 3) / 2`` when ``n > 3``).  Units 200..224: the 25 expert features of the side on roll
    against the opponent; units 225..249: those of the opponent against the side on roll (names in
    :data:`HALF_FEATURES`, order as gnubg's ``I_OFF1`` ... ``I_BACKRESCAPES``).  gnubg fills OFF1..OFF3 of
    each block with the *other* side's borne-off count (a comment in ``eval.c`` says the sides were switched by
    accident when the net was trained); this encoding does the same, so units 200..202 count the opponent's
    checkers off.

    gnubg's ``eval.c`` uses the same layout for its crashed net, with OFF1..OFF3 in steps of 5 (``menOffAll``)
    and not switched (gnubg-nn's crashed net also replaces ACONTAIN2 by a containment estimate); bgai uses the
    contact encoding for crashed positions as well.

The 25 expert features of a side ``me`` against ``opp`` (gnubg's definitions; "index" is a column in the
numbering of the side named; ``opp_back`` = 23 minus ``opp``'s highest occupied index (24 = bar), i.e. the
index in ``me``'s numbering of the point where ``opp``'s rearmost checker stands, -1 when it is on the bar):

``OFF1``, ``OFF2``, ``OFF3``
    Checkers borne off, ``o``, by the *other* side of the block (see above), in three pieces: ``o <= 2``:
    ``(o / 3, 0, 0)``; ``3 <= o <= 5``: ``(1, (o - 3) / 3, 0)``; ``o >= 6``: ``(1, 1, (o - 6) / 3)``.
``BREAK_CONTACT``
    The pips ``me`` must still move to break contact: ``sum over me's indices i > opp_back (bar included) of
    (i + 1 - opp_back) * me[i]``, / 167.
``BACK_CHEQUER``
    ``me``'s highest occupied index (24 = bar, -1 when none) / 24.
``BACK_ANCHOR``
    ``me``'s highest index 0..23 holding 2 or more checkers (-1 when none) / 24.
``FORWARD_ANCHOR``
    ``me``'s anchor in ``opp``'s home board nearest ``opp``'s home: the lowest index 18..23 holding 2+
    checkers, else the highest index 12..17 holding 2+; the value is ``(24 - index) / 6``, or 2 when neither.
``PIPLOSS``, ``P1``, ``P2``
    ``me``'s shots at ``opp``'s blots: for each of the 21 rolls, the pips ``opp`` would lose from the most
    damaging hit (``PIPLOSS``: sum over the 36 rolls / 432) and whether at least one (``P1``, rolls / 36)
    or two (``P2``) checkers are hit.  gnubg's heuristic enumeration of direct and combination shots from
    ``me``'s checkers and bar, ignoring blots on ``opp``'s 23- and 24-points when ``me`` holds at most two
    home-board points, never hitting with a checker that would break a home-board point of exactly 2, and
    blocked by ``opp``'s points on the way; with one checker on the bar only hits compatible with entering
    count, with two or more only direct hits from the bar.  The details, quirks included, are gnubg's
    (``CalculateHalfInputs``) and are written out in the comments of :func:`_shots`.  gnubg counts
    ``me``'s home-board points as the points holding any checker; gnubg-nn (``inputs.c``, and so
    ``gnubg_nn``) counts those holding 2 or more (``hit_rule="gnubg-nn"``).
``BACKESCAPES``
    Escapes (see below) of ``opp``'s rearmost checker past ``me``'s points: ``E(me, 23 - opp_back)`` / 36.
``ACONTAIN``, ``ACONTAIN2``
    ``1 - min(E(me, k) for k in 15 .. 23 - opp_back) / 36`` (1 - 36/36 = 0 when the range is empty): how well
    ``me`` contains a checker of ``opp`` anywhere from ``opp``'s rearmost checker to ``me``'s 9-point; and its
    square.
``CONTAIN``, ``CONTAIN2``
    ``1 - min(E(me, k) for k in 15..23) / 36`` and its square: the same over ``me``'s 9-point to 1-point.
``MOBILITY``
    ``sum over me's indices i = 6..24 of (i - 5) * me[i] * E(opp, i)`` / 3600.
``MOMENT2``
    ``a`` = ceil(mean index of ``me``'s checkers, bar = 24); the mean of ``(i - a) ** 2`` over ``me``'s
    checkers with ``i > a``, rounded up; / 400 (0 when there are none).
``ENTER``
    When ``me`` is on the bar, the average pips lost by being shut out: gnubg's sum over ``opp``'s closed
    home-board points, ``loss = sum over closed i (index 0..5) of 4 (i + 1) + sum over j > i of (2 (i + j + 2)
    if j closed else 2 (i + 1) if me has 2+ on the bar)``, plus, with 2+ on the bar, ``2 (j + 1)`` for every
    open ``i`` and closed ``j > i``; / (36 * 49 / 6).  0 when ``me`` is not on the bar.
``ENTER2``
    ``(36 - (c - 6) ** 2) / 36`` with ``c`` = ``opp``'s closed home-board points (gnubg's formula, which is not
    the chance the comment in ``eval.c`` names).
``TIMING``
    gnubg's timing count: pips of ``me``'s checkers on the bar (24 each) and on indices 6..23 (index value,
    all checkers, except on indices 12..23 above ``opp_back`` where a point of 2 gives 0, a blot 1 and a
    point of ``n > 2`` gives ``n - 2`` checkers), then for indices 5 down to 0 the spares ``n - 2`` of a point
    are added and each point with fewer than 2 checkers, if the checkers counted so far can fill it, takes
    them away (``index * missing``); ``max(0, t) / 100``.
``BACKBONE``
    With ``top`` = ``me``'s highest index 1..23 holding 2+: ``1 - sum(c(top - j)) / (11 * count)`` over the
    indices ``j`` 1..``top - 1`` holding 2+ (``count`` of them), ``c(d)`` = 11 for ``d <= 6``, ``13 - d`` for
    ``d <= 11``, else 0; 0 when ``count`` is 0.
``BACKG``, ``BACKG1``
    With ``a`` = ``me``'s points of 2+ on indices 18..23 and ``t`` = its checkers on indices 18..24: ``BACKG``
    = ``(t - 3) / 4`` when ``a >= 2`` (else 0), ``BACKG1`` = ``t / 8`` when ``a == 1`` (else 0).
``FREEPIP``
    ``sum over me's indices i < opp_back of (i + 1) * me[i]`` / 100: the pips of checkers already past all of
    ``opp``'s checkers.
``BACKRESCAPES``
    As ``BACKESCAPES`` with the table ``E1``.

Escapes ``E(side, n)``: the rolls with which a checker of the other side standing on ``side``'s index
``23 - n`` (``n = 24``: entering from the bar) gets past ``side``'s points, judged on the 12 points ahead of it:
bit ``k`` (0..11) of a 12-bit mask is set when ``side``'s index ``24 - n + k`` (``k < n``) holds 2 or more
checkers, i.e. the point ``k + 1`` pips ahead is blocked.  ``E`` counts the rolls of 36 (non-doubles twice)
with which the landing point ``d1 + d2`` is open and at least one of the points ``d1``, ``d2`` is open (gnubg's
``anEscapes``); ``E1`` (``anEscapes1``) also requires ``d1 + d2`` to be beyond the first blocked point, and is 0
when nothing is blocked.

Both encoders are numpy and take the batch in chunks, both sides of a chunk at once; the table of shots is
computed with bit masks (one bit per point) and per-roll lookups.  With numba installed (:mod:`bgai.util.jit`)
each also has a compiled kernel, one pass per position with the same integer and float32 operations (output
bit-identical; the numpy code stays the reference, ``compiled=False``; see :mod:`bgai.model.kernels` for when a
process switches to it).
"""

from __future__ import annotations

import numpy as np

from bgai.core.board import as_batch
from bgai.errors import ConfigError, InvalidPositionError
from bgai.model.kernels import PositionKernel

__all__ = [
    "RACE_SIZE",
    "CONTACT_SIZE",
    "HALF_FEATURES",
    "RACE_INPUT_NAMES",
    "CONTACT_INPUT_NAMES",
    "HIT_RULES",
    "escapes_table",
    "race_inputs",
    "contact_inputs",
]

RACE_SIZE = 214
CONTACT_SIZE = 250

#: The 25 expert features of one side, in gnubg's order (``I_OFF1`` ... ``I_BACKRESCAPES``).
HALF_FEATURES = (
    "OFF1", "OFF2", "OFF3", "BREAK_CONTACT", "BACK_CHEQUER", "BACK_ANCHOR", "FORWARD_ANCHOR",
    "PIPLOSS", "P1", "P2", "BACKESCAPES", "ACONTAIN", "ACONTAIN2", "CONTAIN", "CONTAIN2", "MOBILITY",
    "MOMENT2", "ENTER", "ENTER2", "TIMING", "BACKBONE", "BACKG", "BACKG1", "FREEPIP", "BACKRESCAPES",
)  # fmt: skip

#: ``hit_rule`` values of :func:`contact_inputs`: which home-board points count for the PIPLOSS heuristic.
HIT_RULES = ("gnubg", "gnubg-nn")


def _names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    race: list[str] = []
    contact: list[str] = []
    for side in ("opp", "me"):
        for p in range(1, 24):
            race += [f"{side}.pt{p}.eq1", f"{side}.pt{p}.eq2", f"{side}.pt{p}.ge3", f"{side}.pt{p}.over3"]
        race += [f"{side}.off{k}" for k in range(1, 15)] + [f"{side}.NCROSS"]
    for side in ("opp", "me"):
        for p in range(1, 25):
            contact += [f"{side}.pt{p}.eq1", f"{side}.pt{p}.eq2", f"{side}.pt{p}.ge3", f"{side}.pt{p}.over3"]
        contact += [f"{side}.bar.ge1", f"{side}.bar.ge2", f"{side}.bar.ge3", f"{side}.bar.over3"]
    for side in ("me", "opp"):
        contact += [f"{side}.{f}" for f in HALF_FEATURES]
    return tuple(race), tuple(contact)


#: Names of the 214 race units / 250 contact units, e.g. ``'opp.pt6.ge3'``, ``'me.off3'``, ``'me.PIPLOSS'``
#: (``me`` = the side on roll).  In the contact vector, ``me.OFF1`` .. ``me.OFF3`` hold the opponent's checkers
#: off and ``opp.OFF1`` .. the side on roll's (gnubg's switch, see the module docstring).
RACE_INPUT_NAMES, CONTACT_INPUT_NAMES = _names()

_CHUNK = 2048  # positions per chunk (4096 rows of one side against the other)

# --- tables ---------------------------------------------------------------------------------------------------


def escapes_table(beyond_first_block: bool = False) -> np.ndarray:
    """``(4096,)`` int16: gnubg's escape counts (``anEscapes``, or ``anEscapes1`` with ``beyond_first_block``).

    Bit ``k`` (0..11) of the index: the point ``k + 1`` pips ahead is blocked (2+ opposing checkers).  A roll
    ``d1, d2`` escapes when the point ``d1 + d2`` ahead is open and at least one of ``d1``, ``d2`` ahead is open;
    non-doubles count 2, doubles 1 (doubles' further steps are not followed).  With ``beyond_first_block``
    ``d1 + d2`` must also be past the nearest blocked point, and the count of an empty mask is 0.
    """
    masks = np.arange(4096)
    blocked = (masks[:, None] >> np.arange(13)[None, :]) & 1  # column k: k + 1 pips ahead (12 = 13 pips: open)
    lowest = np.where(masks > 0, np.argmax(blocked[:, :12], axis=1), 99)
    t = np.zeros(4096, dtype=np.int64)
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            ok = (blocked[:, d1 + d2 - 1] == 0) & ((blocked[:, d1 - 1] == 0) | (blocked[:, d2 - 1] == 0))
            if beyond_first_block:
                ok &= d1 + d2 - 1 > lowest
            t += np.where(ok, 1 if d1 == d2 else 2, 0)
    if beyond_first_block:
        t[0] = 0
    return t.astype(np.int16)


_ESC = escapes_table(False)
_ESC1 = escapes_table(True)


def _point_units() -> np.ndarray:
    """``(32, 4)`` float32: the four units of a point (rows 0..15) and of a bar (rows 16..31) for n checkers."""
    t = np.zeros((32, 4), dtype=np.float32)
    for n in range(16):
        over3 = (n - 3) / 2.0 if n > 3 else 0.0
        t[n] = (n == 1, n == 2, n >= 3, over3)
        t[16 + n] = (n >= 1, n >= 2, n >= 3, over3)
    return t


_UNITS = _point_units()
_UNIT_ROW = np.zeros(25, dtype=np.int16)
_UNIT_ROW[24] = 16  # the bar's units are the table's second half


def _ways_and_rolls():
    """gnubg's ways to hit and the rolls that use them (``aIntermediate``/``aanCombination``/``aaRoll``).

    A way is ``(pips, faces, all_required, steps)``: a hit from ``pips`` away with ``faces`` dice faces; with one
    face it is direct; a non-double combination ``a + b`` needs one of the points ``a``, ``b`` on the way open
    (``all_required`` False, ``steps`` ``(a, b)``); a double ``k * d`` needs all of ``d, 2d, .. (k - 1) d`` open.
    Rolls are in gnubg's order 11, 21, 22, 31, 32, 33, ..., 66 (higher die first); a roll's ways: the smaller
    die's direct hit, the larger die's direct hit, then the sum (non-doubles); the die's direct hit then
    ``2d, 3d, 4d`` (doubles, distances up to 24).
    """
    ways: list[tuple[int, int, bool, tuple[int, ...]]] = []
    index: dict[tuple, int] = {}

    def way(key):
        if key not in index:
            index[key] = len(ways)
            ways.append(key)
        return index[key]

    rolls = []
    for hi in range(1, 7):
        for lo in range(1, hi + 1):
            if lo == hi:
                ids = [way((lo, 1, True, ()))]
                for k in (2, 3, 4):
                    if k * lo <= 24:
                        ids.append(way((k * lo, k, True, tuple(lo * s for s in range(1, k)))))
            else:
                ids = [way((lo, 1, True, ())), way((hi, 1, True, ())), way((lo + hi, 2, False, (lo, hi)))]
            rolls.append((lo, hi, ids))
    return ways, rolls


_WAYS, _ROLLS = _ways_and_rolls()
_NW = len(_WAYS)  # 39
_NR = len(_ROLLS)  # 21
_W_PIPS = np.array([w[0] for w in _WAYS], dtype=np.int64)
_W_DIRECT = np.array([w[1] == 1 for w in _WAYS])
_DIRECT_IDS = np.flatnonzero(_W_DIRECT)  # the 6 direct ways, die 1 to 6
assert [_WAYS[_w][0] for _w in _DIRECT_IDS] == [1, 2, 3, 4, 5, 6]

_ROLL_DOUBLE = np.array([lo == hi for lo, hi, _ in _ROLLS])
_ROLL_WEIGHT8 = np.where(_ROLL_DOUBLE, 1, 2).astype(np.int8)[:, None]  # of 36
_ROLL_WAYS = np.full((_NR, 4), _NW, dtype=np.int64)  # padded with a row of zeros
for _i, (_lo, _hi, _ids) in enumerate(_ROLLS):
    _ROLL_WAYS[_i, : len(_ids)] = _ids
# for each roll, its first two ways (the direct hits of a non-double; the direct hit and 2d of a double)
_ROLL_W0 = _ROLL_WAYS[:, 0]
_ROLL_W1 = _ROLL_WAYS[:, 1]
_IND_IDS = np.flatnonzero(~_W_DIRECT)
# the steps of each indirect way as sum(2 ** -step): see _shots
_IND_STEP_FRACTIONS = np.array([[sum(2.0 ** -s for s in _WAYS[_w][3])] for _w in _IND_IDS], dtype=np.float32)
# position among the direct ways (index = die - 1) of each roll's first and (non-doubles) second direct way
_ROLL_DIE0 = np.array([lo - 1 for lo, hi, _ in _ROLLS])
_ROLL_DIE1 = np.array([hi - 1 for lo, hi, _ in _ROLLS])
_NONDOUBLE = np.flatnonzero([lo != hi for lo, hi, _ in _ROLLS])
_DOUBLE = np.flatnonzero([lo == hi for lo, hi, _ in _ROLLS])
_PIPS_COL = np.zeros((_NW + 1, 1), dtype=np.int64)  # pips of each way as a column, 0 for the padding row
_PIPS_COL[:_NW, 0] = _W_PIPS
_PIPS_COL1 = (_PIPS_COL - 1).astype(np.int32)
# one checker on the bar: a roll's second direct way (the padding row for doubles), the opponent's index where
# the other die enters for the first and second direct way, the indirect ways (padded), and for each way the
# opponent's indices step + 1 of its steps as a bit mask (gnubg's intermediate-blot check from the bar)
_ROLL_D1 = np.where(_ROLL_DOUBLE, _NW, _ROLL_W1)
_ROLL_ENTER0 = _W_PIPS[_ROLL_W1] - 1
_ROLL_ENTER1 = _W_PIPS[_ROLL_W0] - 1
_ROLL_IND = np.full((_NR, 3), _NW, dtype=np.int64)
for _i, (_lo, _hi, _ids) in enumerate(_ROLLS):
    _ind = [w for w in _ids if not _W_DIRECT[w]]
    _ROLL_IND[_i, : len(_ind)] = _ind
_W_BAR_STEPS = np.zeros(_NW + 1, dtype=np.int64)
_W_BAR_STEPS[:_NW] = [sum(1 << (s + 1) for s in w[3]) for w in _WAYS]



def _enter_loss_table() -> np.ndarray:
    """``(2, 64)`` float32: ENTER for the opponent's closed home-board points (bit i = its index i closed)."""
    t = np.zeros((2, 64), dtype=np.float32)
    for two in (0, 1):
        for m in range(64):
            closed = [(m >> i) & 1 == 1 for i in range(6)]
            loss = 0
            for i in range(6):
                if closed[i]:
                    loss += 4 * (i + 1)  # any double of i + 1 fails
                    for j in range(i + 1, 6):
                        if closed[j]:
                            loss += 2 * (i + j + 2)  # both dice fail
                        elif two:
                            loss += 2 * (i + 1)  # one die enters, the other checker stays out
                elif two:
                    loss += sum(2 * (j + 1) for j in range(i + 1, 6) if closed[j])
            t[two, m] = np.float32(loss) / np.float32(36.0 * (49.0 / 6.0))
    return t


_ENTER = _enter_loss_table()
_CLOSED_COUNT = np.array([m.bit_count() for m in range(64)], dtype=np.int64)
_ENTER2 = ((36 - (_CLOSED_COUNT - 6) ** 2) / np.float32(36.0)).astype(np.float32)


def _low_high6() -> tuple[np.ndarray, np.ndarray]:
    m = np.arange(64)
    bits = (m[:, None] >> np.arange(6)) & 1
    low = np.where(m > 0, np.argmax(bits, axis=1), -1)
    high = np.where(m > 0, 5 - np.argmax(bits[:, ::-1], axis=1), -1)
    return low.astype(np.int64), high.astype(np.int64)


_LOW6, _HIGH6 = _low_high6()


def _backbone_table() -> np.ndarray:
    """``(2048,)`` int64: sum of ``c(d)`` over the set bits of an 11-bit window, bit k standing for d = 11 - k."""
    c = {d: (11 if d <= 6 else 13 - d) for d in range(1, 12)}
    w = np.arange(2048)
    return sum(((w >> k) & 1) * c[11 - k] for k in range(11)).astype(np.int64)


_BACKBONE = _backbone_table()

# --- helpers --------------------------------------------------------------------------------------------------


def _check(boards: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(as_batch(boards))
    if b.size:
        if b.min() < 0 or b.max() > 15:
            raise InvalidPositionError("checker counts must be in 0..15 for gnubg input encoding")
        if (b.sum(axis=2, dtype=np.int16) > 15).any():
            raise InvalidPositionError("a side has more than 15 checkers")
    return b


def _mask(flags: np.ndarray) -> np.ndarray:
    """``(R,)`` int32 bit masks of ``(R, K)`` bools, ``K`` = 8 or 25, bit k = column k."""
    packed = np.packbits(flags, axis=1, bitorder="little")
    if packed.shape[1] == 1:
        return packed[:, 0].astype(np.int32)
    return packed.view("<i4")[:, 0].copy()


def _reverse24(m: np.ndarray) -> np.ndarray:
    """Bits 0..23 of ``m`` in reverse order (bit k to bit 23 - k): a side's points in the other's numbering."""
    return (_REV8[m & 0xFF] << 16) | (_REV8[(m >> 8) & 0xFF] << 8) | _REV8[(m >> 16) & 0xFF]


_REV8 = np.array([int(f"{k:08b}"[::-1], 2) for k in range(256)], dtype=np.int32)


def _top(a: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of non-negative int64 ``a`` (< 2 ** 53), -1 where ``a`` is 0."""
    e = a.astype(np.float64).view(np.int64) >> 52
    e -= 1023
    np.maximum(e, -1, out=e)
    return e


_IDX = np.arange(25, dtype=np.int16)[:, None]  # point indices as a column, for (25, R) arrays
_MOB_WEIGHT = (_IDX[6:25] - 5).astype(np.int16)
_ESC_SHIFTS = np.arange(19, dtype=np.int32)[:, None]  # E(side, 24 - s) for s = 0..18
_S10 = np.arange(10, dtype=np.int32)[:, None]


class _Side:
    """Bit masks and escape counts of the rows of one chunk (each position twice: side on roll, opponent)."""

    def __init__(self, rows: np.ndarray):
        self.occ = _mask(rows > 0)
        self.made = _mask(rows >= 2) & 0xFFFFFF  # the bar is no point
        self.blot = self.occ & ~self.made & 0xFFFFFF
        self.pair_home = _mask(rows[:, :8] == 2) & 0x3F
        # E(side, 24 - s) for s = 0..18: the escapes of a checker of the other side past this side's points
        self.esc = _ESC[(self.made[None, :] >> _ESC_SHIFTS) & 0xFFF]  # (19, R) int16


def _swap(a: np.ndarray, m: int) -> np.ndarray:
    """The other side's values: the two halves of the last axis exchanged."""
    return np.concatenate([a[..., m:], a[..., :m]], axis=-1)


def _half_inputs(rows: np.ndarray, m: int, hit_rule: str) -> np.ndarray:
    """The 25 expert features ``(25, R)`` float32 of every row of ``rows`` ``(R, 25)`` int8 against its opponent.

    Rows ``0..m-1`` are one side of each position, rows ``m..2m-1`` the other side of the same positions, so
    a row's opponent is the row ``m`` away.  OFF1..OFF3 are those of the row's own borne-off count; the caller
    swaps them into gnubg's layout.  Arrays are feature- or point-major (``(25, R)``) so that sums over points
    are sums of rows.
    """
    r = rows.shape[0]
    f = np.empty((25, r), dtype=np.float32)
    x = np.ascontiguousarray(rows.T, dtype=np.int16)  # (25, R)
    me = _Side(rows)
    opp_made = _swap(me.made, m)
    opp_occ = _swap(me.occ, m)
    top_me = _top(me.occ)
    opp_back = 23 - _top(opp_occ)  # -1 (opponent on the bar) .. 24 (opponent has no checker)
    ob = opp_back.astype(np.int16)[None, :]
    total = x.sum(axis=0, dtype=np.int16)

    # OFF1..3 (of the row's own side; see the docstring for the switch)
    off = (15 - total).astype(np.float32)
    f[0] = np.minimum(off / np.float32(3.0), 1.0)
    f[1] = np.clip((off - 3) / np.float32(3.0), 0.0, 1.0)
    f[2] = np.maximum((off - 6) / np.float32(3.0), 0.0)

    # sums over the indices >= t of x, x * index, x * index ** 2: suffix[:, t], t = 0..25 (25: none)
    suffix = np.zeros((3, 26, r), dtype=np.int16)
    moments = suffix[:, :25]
    moments[0] = x
    np.multiply(x, _IDX, out=moments[1])
    np.multiply(moments[1], _IDX, out=moments[2])
    for t in range(23, -1, -1):
        moments[:, t] += moments[:, t + 1]

    def above(t):  # (3, R): the sums over indices > t, for t = -1..24 per row
        return np.take_along_axis(suffix, (t + 1)[None, None, :], axis=1)[:, 0]

    # BREAK_CONTACT: sum over i > opp_back of (i + 1 - opp_back) x[i]; FREEPIP: over i < opp_back of (i + 1) x[i]
    ob1 = opp_back.astype(np.int16)
    s0, s1, _ = above(ob1)
    f[3] = (s1 + (1 - ob1) * s0) / np.float32(167.0)
    s0, s1, _ = above(np.maximum(ob1, 0) - 1)
    f[23] = (suffix[1, 0] + suffix[0, 0] - s1 - s0) / np.float32(100.0)

    # TIMING
    mid = x[6:24]
    pair_or_more = (_IDX[12:24] > ob) & (mid[6:] >= 2)  # 12..23 above opp_back: 2 checkers fewer
    counted = mid.copy()
    counted[6:] -= pair_or_more
    counted[6:] -= pair_or_more
    t = (counted * _IDX[6:24]).sum(axis=0, dtype=np.int16) + 24 * x[24]
    no = counted.sum(axis=0, dtype=np.int16) + x[24]
    for i in range(5, -1, -1):
        n = x[i]
        spare = np.maximum(n - 2, 0)
        t += i * spare
        no += spare
        missing = np.maximum(2 - n, 0)
        fill = np.where(no >= missing, missing, 0)
        t -= i * fill
        no -= fill
    f[19] = np.maximum(t, 0) / np.float32(100.0)

    # BACK_CHEQUER, BACK_ANCHOR, FORWARD_ANCHOR
    f[4] = top_me / np.float32(24.0)
    f[5] = _top(me.made) / np.float32(24.0)
    fwd = _LOW6[(me.made >> 18) & 0x3F]
    fwd = np.where(fwd >= 0, 18 + fwd, 12 + _HIGH6[(me.made >> 12) & 0x3F])  # 11 when neither
    f[6] = np.where(fwd >= 12, (24 - fwd) / np.float32(6.0), 2.0)

    # PIPLOSS, P1, P2
    home = (me.made if hit_rule == "gnubg-nn" else me.occ) & 0x3F
    pips, n1, n2 = _shots(x, me, m, home)
    f[7] = pips / np.float32(432.0)
    f[8] = n1 / np.float32(36.0)
    f[9] = n2 / np.float32(36.0)

    # BACKESCAPES, BACKRESCAPES: the opponent's rearmost checker against the row's points
    window = (me.made >> (opp_back + 1)) & 0xFFF
    f[10] = _ESC[window] / np.float32(36.0)
    f[24] = _ESC1[window] / np.float32(36.0)

    # ACONTAIN, CONTAIN: E(me, 24 - s) for s = 0..9
    esc = me.esc[:10]
    acontain = np.where(_S10 > opp_back, esc, 36).min(axis=0)
    contain = esc[1:].min(axis=0)
    a = (36 - acontain) / np.float32(36.0)
    c = (36 - contain) / np.float32(36.0)
    f[11] = a
    f[12] = a * a
    f[13] = c
    f[14] = c * c

    # MOBILITY: E(opp, i) for the row's indices i = 6..24, i.e. opp's esc at s = 24 - i = 18..0
    esc_opp = _swap(me.esc, m)[::-1]  # (19, R): row k = E(opp, 6 + k)
    mob = (esc_opp * (x[6:25] * _MOB_WEIGHT)).sum(axis=0, dtype=np.int16)
    f[15] = mob / np.float32(3600.0)

    # MOMENT2: over i > mean, sum x (i - mean)^2 = sum x i^2 - 2 mean sum x i + mean^2 sum x
    mean = (suffix[1, 0] + total - 1) // np.maximum(total, 1)
    cnt, s1, s2 = above(mean)
    sq = s2 - 2 * mean * s1 + mean * mean * cnt
    f[16] = np.where(cnt > 0, (sq + cnt - 1) // np.maximum(cnt, 1), 0) / np.float32(400.0)

    # ENTER, ENTER2
    closed = opp_made & 0x3F
    f[17] = np.where(x[24] > 0, _ENTER[(x[24] > 1).astype(np.intp), closed], 0.0)
    f[18] = _ENTER2[closed]

    # BACKBONE
    pts = (me.made & 0xFFFFFE).astype(np.int64)  # indices 1..23
    topc = np.maximum(_top(pts), 0)
    below = np.bitwise_count(pts & ((1 << topc) - 1))
    wsum = _BACKBONE[((pts << 11) >> topc) & 0x7FF]
    ratio = wsum.astype(np.float32) / (np.maximum(below, 1) * 11).astype(np.float32)
    f[20] = np.where(below > 0, np.float32(1.0) - ratio, 0.0)

    # BACKG, BACKG1
    anchors = np.bitwise_count((me.made >> 18) & 0x3F)
    back = x[18:25].sum(axis=0, dtype=np.int16)
    f[21] = np.where(anchors > 1, (back - 3) / np.float32(4.0), 0.0)
    f[22] = np.where(anchors == 1, back / np.float32(8.0), 0.0)
    return f


def _roll_max(v: np.ndarray) -> np.ndarray:
    """``(21, R)``: for each roll the maximum of ``v`` ``(40, R)`` over the roll's ways (0 for the padding)."""
    out = np.empty((_NR, v.shape[1]), dtype=v.dtype)
    nd, dd = _NONDOUBLE, _DOUBLE
    w = _ROLL_WAYS
    out[nd] = np.maximum(np.maximum(v[w[nd, 0]], v[w[nd, 1]]), v[w[nd, 2]])
    out[dd] = np.maximum(np.maximum(v[w[dd, 0]], v[w[dd, 1]]), np.maximum(v[w[dd, 2]], v[w[dd, 3]]))
    return out


def _shots(x: np.ndarray, me: _Side, m: int, home: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """gnubg's shot count of each row at its opponent's blots: ``(pips, rolls1, rolls2)`` int16 arrays ``(R,)``.

    ``pips`` = sum over the 36 rolls of the pips the most damaging hit costs (``PIPLOSS * 432``); ``rolls1`` /
    ``rolls2`` = rolls hitting at least one / two checkers (of 36).  ``x`` ``(25, R)``: the rows' checkers,
    point-major; ``me``: their masks; a row's opponent is the row ``m`` away.  Points are bit masks in the row's
    numbering (bit ``j`` = its index ``j``; the bar is bit 24); the opponent's point at its index ``i`` is bit
    ``23 - i``.
    """
    r = x.shape[1]
    opp_blot = _reverse24(_swap(me.blot, m))  # in the row's numbering
    opp_made = _reverse24(_swap(me.made, m))
    # hitters: any checker (bar included), but not from a home-board point of exactly 2
    hitters = me.occ & ~me.pair_home
    # blots gnubg considers: with at most two home-board points, none on opp's 23- and 24-points (bits 0, 1)
    targets = np.where(np.bitwise_count(home) > 2, opp_blot, opp_blot & ~3)
    not_made = {}  # pips -> ~(opp_made << pips): bit j set when the point j - pips is not blocked
    at_distance = {}  # pips -> hitters with a target blot that many pips ahead

    def open_at(s):
        if s not in not_made:
            not_made[s] = ~(opp_made << s)
        return not_made[s]

    # hit[w]: bit j set when a checker on index j hits with way w: a target blot at j - pips, and the points on
    # the way open (gnubg reads them relative to the blot: index blot + step = j - (pips - step)).  int32 is
    # enough: only bits 0..24 matter and they survive the shifts.
    hit = np.empty((_NW + 1, r), dtype=np.int32)
    hit[_NW] = 0
    for w, (pips, faces, all_required, steps) in enumerate(_WAYS):
        if pips not in at_distance:
            at_distance[pips] = hitters & (targets << pips)
        h = hit[w]
        if faces == 1:
            np.copyto(h, at_distance[pips])
        elif all_required:
            np.bitwise_and(at_distance[pips], open_at(pips - steps[0]), out=h)
            for st in steps[1:]:
                h &= open_at(pips - st)
        else:
            np.bitwise_or(open_at(pips - steps[0]), open_at(pips - steps[1]), out=h)
            h &= at_distance[pips]
    # the most advanced hitter of each way, from the float32 of the mask (exact: bit 0 is never set, so at most
    # 24 significant bits): its exponent (-127 for no hitter) and, with the mantissa cleared, its bit as a float
    fbits = hit.astype(np.float32).view(np.int32)
    top = fbits >> 23
    top -= 127
    fbits &= 0x7F800000
    topbit = fbits.view(np.float32)  # 2.0 ** top, 0.0 for no hitter

    # -- not on the bar.  For each roll gnubg goes through its ways in order:
    #    direct way: the most advanced hitter k hits (one more checker hit unless the previous direct way of the
    #      roll hit from the same k and k holds a single checker); with doubles one more when another hitter
    #      could hit too;
    #    combination: at least one checker hit, one more when a blot stands on a point on the way from the most
    #      advanced hitter (k - step for the way's steps);
    #    the pips lost: over the ways that hit, the most of (blot's index + 1) = k - pips + 1.
    val = np.maximum(top - _PIPS_COL1, 0).astype(np.int8)  # 0 for no hit
    np_roll = _roll_max(val)  # (21, R)
    p1_roll = np_roll > 0
    # combinations: a blot on index top - step for one of the way's steps; the bits top - step are
    # 2 ** top * sum(2 ** -step), truncated to an integer (exact in float32: at most 3 bits)
    steps_below = (topbit[_IND_IDS] * _IND_STEP_FRACTIONS).astype(np.int32)
    extra = np.zeros((_NW + 1, r), dtype=bool)
    extra[_IND_IDS] = (steps_below & opp_blot) != 0
    p2_roll = _roll_max(extra)
    # direct ways (die 1..6): hitter, and whether it holds 2+ / whether another hitter could hit too
    dtop = top[_DIRECT_IDS]
    dhit = hit[_DIRECT_IDS]
    dpresent = dtop >= 0
    made_top = (topbit[_DIRECT_IDS].astype(np.int32) & me.made) != 0
    multi = (dhit & (dhit - 1)) != 0
    a, b = _ROLL_DIE0[_NONDOUBLE], _ROLL_DIE1[_NONDOUBLE]
    p2_roll[_NONDOUBLE] |= dpresent[a] & dpresent[b] & ((dtop[a] != dtop[b]) | made_top[a])
    dd = _ROLL_DIE0[_DOUBLE]
    p2_roll[_DOUBLE] |= dpresent[dd] & multi[dd]
    pips = (np_roll * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    n1 = (p1_roll * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    n2 = (p2_roll * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)

    bar = x[24]
    one = np.flatnonzero(bar == 1)
    if one.size:
        opp_rows = np.where(one < m, one + m, one - m)
        p, a, b = _shots_one_on_bar(hit[:, one], x[:24, opp_rows])
        pips[one], n1[one], n2[one] = p, a, b
    more = np.flatnonzero(bar >= 2)
    if more.size:
        # only direct hits from the bar, with the roll's first two ways (the second is not direct for doubles)
        barbit = ((hit[:, more] >> 24) & 1).astype(np.int16)
        w0, w1 = _ROLL_W0, _ROLL_W1
        first = barbit[w0]
        second = np.where(_ROLL_DOUBLE[:, None], 0, barbit[w1])
        lost = np.maximum(first * (25 - _W_PIPS[w0])[:, None], second * (25 - _W_PIPS[w1])[:, None])
        pips[more] = (lost * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
        cnt = first + second
        n1[more] = ((cnt >= 1) * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
        n2[more] = ((cnt >= 2) * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    return pips, n1, n2


def _shots_one_on_bar(hit: np.ndarray, opp: np.ndarray):
    """The shot count (see :func:`_shots`) of rows with exactly one checker on the bar.

    ``hit`` ``(40, R)``: the rows' ways to hit; ``opp`` ``(24, R)``: the opponent's points, its numbering.
    For each roll gnubg goes through its ways in order.  A direct way hits from the bar (any blot it reaches
    there counts) and from the most advanced other hitter, but that one only if no earlier way of the roll used
    a hitter off the bar and the other die can enter: the point ``pips - 1`` (opp's index) of the roll's other
    first-two way is not closed (for a double that is its ``2d`` way, gnubg's reading).  A combination counts
    only from the bar: at least one checker hit (when nothing was counted before it), one more for a blot on
    opp's index ``step + 1`` for a step of the way (gnubg's indexing).  Pips lost: ``25 - pips`` from the bar,
    ``k - pips + 1`` from index ``k``.
    """
    barbit = ((hit >> 24) & 1).astype(np.int16)  # (40, R)
    nonbar = hit & 0xFFFFFF
    nb_top = (nonbar.astype(np.float32).view(np.int32) >> 23) - 127  # exact, as in _shots; -127 for none
    nb_lost = np.maximum(nb_top - _PIPS_COL1, 0).astype(np.int16)  # 0: no hit off the bar
    bar_lost = barbit * (25 - _PIPS_COL).astype(np.int16)
    opp_blot = (opp == 1).T  # (R, 24)
    blot_bits = _mask(np.pad(opp_blot, ((0, 0), (0, 1))))
    inter = barbit * ((blot_bits[None, :] & _W_BAR_STEPS[:, None]) != 0)  # combination from the bar + blot
    open_entry = opp < 2  # (24, R)
    # direct stage: the first direct way, then (non-doubles) the second, which cannot use a hitter off the bar
    # when the first did
    d0, d1 = _ROLL_W0, _ROLL_D1
    ok0 = (nb_lost[d0] > 0) & open_entry[_ROLL_ENTER0]
    ok1 = (nb_lost[d1] > 0) & open_entry[_ROLL_ENTER1] & ~ok0
    cnt = barbit[d0] + ok0 + barbit[d1] + ok1
    lost = np.maximum(np.maximum(bar_lost[d0], ok0 * nb_lost[d0]), np.maximum(bar_lost[d1], ok1 * nb_lost[d1]))
    # combinations (and a double's 2d, 3d, 4d) from the bar
    fb = barbit[_ROLL_IND]  # (21, 3, R)
    cnt = cnt + ((cnt == 0) & (fb.max(axis=1) > 0)) + inter[_ROLL_IND].sum(axis=1)
    lost = np.maximum(lost, bar_lost[_ROLL_IND].max(axis=1))
    pips = (lost * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    n1 = ((cnt >= 1) * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    n2 = ((cnt >= 2) * _ROLL_WEIGHT8).sum(axis=0, dtype=np.int16)
    return pips, n1, n2


# --- compiled kernels (bgai.util.jit): one pass per position, the same integer and float32 operations -------

# way tables padded to _NW + 1 ways (the last an empty way), for the kernels
_K_PIPS = np.zeros(_NW + 1, dtype=np.int64)
_K_PIPS[:_NW] = _W_PIPS
_K_KIND = np.zeros(_NW + 1, dtype=np.int64)  # 0 direct (or the padding), 1 all steps required, 2 one of two
_K_STEPS = np.zeros((_NW + 1, 3), dtype=np.int64)
_K_NSTEPS = np.zeros(_NW + 1, dtype=np.int64)
for _w, (_pips, _faces, _all, _steps) in enumerate(_WAYS):
    _K_KIND[_w] = 0 if _faces == 1 else (1 if _all else 2)
    _K_NSTEPS[_w] = len(_steps)
    _K_STEPS[_w, : len(_steps)] = _steps
_K_WEIGHT = np.where(_ROLL_DOUBLE, 1, 2).astype(np.int64)
_K_DIRECT = _DIRECT_IDS.astype(np.int64)
_K_DIE0 = _ROLL_DIE0.astype(np.int64)
_K_DIE1 = _ROLL_DIE1.astype(np.int64)
_K_W0 = _ROLL_W0.astype(np.int64)
_K_W1 = _ROLL_W1.astype(np.int64)
_K_D1 = _ROLL_D1.astype(np.int64)
_K_ENTER0 = _ROLL_ENTER0.astype(np.int64)
_K_ENTER1 = _ROLL_ENTER1.astype(np.int64)
_K_DOUBLE = _ROLL_DOUBLE.astype(np.bool_)
# highest set bit of a 13-bit value (-1 for 0): _top_bit reads masks of up to 25 bits in two lookups
_TOP13 = np.array([k.bit_length() - 1 for k in range(8192)], dtype=np.int64)
_POP12 = np.array([bin(k).count("1") for k in range(4096)], dtype=np.int64)  # set bits of 12-bit values


def _top_bit(x):  # pragma: no cover - compiled by numba
    """Index of the highest set bit of ``0 <= x < 2 ** 25``, -1 for 0."""
    if x >= 4096:
        return 12 + _TOP13[x >> 12]
    return _TOP13[x]


def _rev24(x):  # pragma: no cover - compiled by numba
    """Bits 0..23 of ``x`` reversed (see :func:`_reverse24`)."""
    return (_REV8[x & 0xFF] << 16) | (_REV8[(x >> 8) & 0xFF] << 8) | _REV8[(x >> 16) & 0xFF]


def _shot_counts(xm, xo, occ, made, pair_home, blot_o, made_o, home, scratch):  # pragma: no cover - numba
    """gnubg's shots ``(pips, rolls1, rolls2)`` of the side ``xm`` (25,) at the side ``xo`` (25,): one row of
    :func:`_shots` / :func:`_shots_one_on_bar`.  ``blot_o``, ``made_o``: the opponent's masks in its own
    numbering; ``scratch``: ``(4, _NW + 1)`` int64."""
    hit = scratch[0]  # the hitters of each way
    top = scratch[1]  # the most advanced of them, -1 for none
    val = scratch[2]  # the pips the way's hit costs (0: no hit)
    extra = scratch[3]  # 1 when a combination way also has a blot on a point on the way from its hitter
    opp_blot = _rev24(blot_o)
    opp_made = _rev24(made_o)
    hitters = occ & ~pair_home
    targets = opp_blot if _POP12[home] > 2 else opp_blot & ~3
    pips_lost = 0
    n1 = 0
    n2 = 0
    if targets == 0:  # nothing to hit
        return pips_lost, n1, n2
    any_hit = 0
    for w in range(_NW):
        pips = _K_PIPS[w]
        h = hitters & (targets << pips)
        kind = _K_KIND[w]
        if h:
            if kind == 1:
                for j in range(_K_NSTEPS[w]):
                    h &= ~(opp_made << (pips - _K_STEPS[w, j]))
            elif kind == 2:
                h &= ~(opp_made << (pips - _K_STEPS[w, 0])) | ~(opp_made << (pips - _K_STEPS[w, 1]))
        hit[w] = h
        t = _top_bit(h) if h else -1
        top[w] = t
        any_hit |= h
        val[w] = t - pips + 1 if t >= 0 else 0
        below = 0
        if t >= 0 and kind != 0:
            for k in range(_K_NSTEPS[w]):
                below |= 1 << (t - _K_STEPS[w, k])
        extra[w] = 1 if below & opp_blot else 0
    hit[_NW] = 0
    top[_NW] = -1
    val[_NW] = 0
    extra[_NW] = 0
    if any_hit == 0:
        return pips_lost, n1, n2
    bar = xm[24]
    if bar == 0:
        for r in range(_NR):
            w0, w1, w2, w3 = _ROLL_WAYS[r, 0], _ROLL_WAYS[r, 1], _ROLL_WAYS[r, 2], _ROLL_WAYS[r, 3]
            lost = max(max(val[w0], val[w1]), max(val[w2], val[w3]))
            two = (extra[w0] | extra[w1] | extra[w2] | extra[w3]) != 0
            if _K_DOUBLE[r]:
                d = _K_DIRECT[_K_DIE0[r]]
                if top[d] >= 0 and (hit[d] & (hit[d] - 1)) != 0:
                    two = True
            else:
                ta = top[_K_DIRECT[_K_DIE0[r]]]
                tb = top[_K_DIRECT[_K_DIE1[r]]]
                if ta >= 0 and tb >= 0 and (ta != tb or (made >> ta) & 1):
                    two = True
            wgt = _K_WEIGHT[r]
            pips_lost += lost * wgt
            if lost > 0:
                n1 += wgt
            if two:
                n2 += wgt
    elif bar == 1:
        blot_bits = 0
        for k in range(24):
            if xo[k] == 1:
                blot_bits |= 1 << k
        for r in range(_NR):
            d0 = _K_W0[r]
            d1 = _K_D1[r]
            nb0 = _top_bit(hit[d0] & 0xFFFFFF) - _K_PIPS[d0] + 1
            nb1 = _top_bit(hit[d1] & 0xFFFFFF) - _K_PIPS[d1] + 1
            ok0 = nb0 > 0 and xo[_K_ENTER0[r]] < 2
            ok1 = nb1 > 0 and xo[_K_ENTER1[r]] < 2 and not ok0
            b0 = (hit[d0] >> 24) & 1
            b1 = (hit[d1] >> 24) & 1
            cnt = b0 + b1 + (1 if ok0 else 0) + (1 if ok1 else 0)
            lost = max(b0 * (25 - _K_PIPS[d0]), b1 * (25 - _K_PIPS[d1]))
            if ok0 and nb0 > lost:
                lost = nb0
            if ok1 and nb1 > lost:
                lost = nb1
            from_bar = 0
            inter = 0
            for j in range(3):
                w = _ROLL_IND[r, j]
                bb = (hit[w] >> 24) & 1
                if bb:
                    from_bar = 1
                    if blot_bits & _W_BAR_STEPS[w]:
                        inter += 1
                    if 25 - _K_PIPS[w] > lost:
                        lost = 25 - _K_PIPS[w]
            if cnt == 0:
                cnt = from_bar
            cnt += inter
            wgt = _K_WEIGHT[r]
            pips_lost += lost * wgt
            if cnt >= 1:
                n1 += wgt
            if cnt >= 2:
                n2 += wgt
    else:  # only direct hits from the bar
        for r in range(_NR):
            w0 = _K_W0[r]
            w1 = _K_W1[r]
            first = (hit[w0] >> 24) & 1
            second = 0 if _K_DOUBLE[r] else (hit[w1] >> 24) & 1
            lost = max(first * (25 - _K_PIPS[w0]), second * (25 - _K_PIPS[w1]))
            wgt = _K_WEIGHT[r]
            pips_lost += lost * wgt
            if first + second >= 1:
                n1 += wgt
            if first + second >= 2:
                n2 += wgt
    return pips_lost, n1, n2


def _count_status(b):  # pragma: no cover - compiled by numba
    """The kernels' check of ``b`` ``(n, 2, 25)`` int8: 0, 1 when a count is outside 0..15, 2 when a side has more
    than 15 checkers (the first bad board decides)."""
    for i in range(b.shape[0]):
        for s in range(2):
            tot = 0
            for c in range(25):
                v = b[i, s, c]
                if v < 0 or v > 15:
                    return 1
                tot += v
            if tot > 15:
                return 2
    return 0


def _contact_kernel(b, nn_rule, out):  # pragma: no cover - compiled by numba
    """:func:`contact_inputs` of ``b`` ``(n, 2, 25)`` int8 into ``out`` ``(n, 250)`` float32, one pass per position.

    Returns 0, 1 when a count is outside 0..15, 2 when a side has more than 15 checkers (``out`` is then partly
    written).  Integer arithmetic and the float32 (or, where numpy divides int64 by a float32, float64) operations
    of :func:`_half_inputs`, in the same order, so the output is bit-identical."""
    n = b.shape[0]
    bad = _count_status(b)
    if bad:
        return bad
    x = np.zeros((2, 25), dtype=np.int64)
    occ = np.zeros(2, dtype=np.int64)
    made = np.zeros(2, dtype=np.int64)
    blot = np.zeros(2, dtype=np.int64)
    pair_home = np.zeros(2, dtype=np.int64)
    total = np.zeros(2, dtype=np.int64)
    esc = np.zeros((2, 19), dtype=np.int64)
    s0 = np.zeros(26, dtype=np.int64)
    s1 = np.zeros(26, dtype=np.int64)
    s2 = np.zeros(26, dtype=np.int64)
    scratch = np.zeros((4, _NW + 1), dtype=np.int64)
    f3 = np.float32(3.0)
    f36 = np.float32(36.0)
    for i in range(n):
        for s in range(2):
            oc = 0
            md = 0
            ph = 0
            tot = 0
            o = 100 * (1 - s)  # units 0..199: the opponent first
            for c in range(25):
                v = b[i, s, c]
                x[s, c] = v
                tot += v
                if v > 0:
                    oc |= 1 << c
                if v >= 2 and c < 24:
                    md |= 1 << c
                if v == 2 and c < 6:
                    ph |= 1 << c
                u = v + 16 if c == 24 else v
                out[i, o + 4 * c] = _UNITS[u, 0]
                out[i, o + 4 * c + 1] = _UNITS[u, 1]
                out[i, o + 4 * c + 2] = _UNITS[u, 2]
                out[i, o + 4 * c + 3] = _UNITS[u, 3]
            occ[s] = oc
            made[s] = md
            blot[s] = oc & ~md & 0xFFFFFF
            pair_home[s] = ph
            total[s] = tot
            for k in range(19):
                esc[s, k] = _ESC[(md >> k) & 0xFFF]
        for s in range(2):
            p = 1 - s
            o = 200 + 25 * s
            md = made[s]
            top_me = _top_bit(occ[s])
            ob = 23 - _top_bit(occ[p])  # opp_back
            # OFF1..3: gnubg's switch, the other side's checkers off
            off = np.float32(15 - total[p])
            v = off / f3
            out[i, o] = v if v < 1.0 else np.float32(1.0)
            v = (off - np.float32(3.0)) / f3
            out[i, o + 1] = np.float32(0.0) if v < 0.0 else (np.float32(1.0) if v > 1.0 else v)
            v = (off - np.float32(6.0)) / f3
            out[i, o + 2] = v if v > 0.0 else np.float32(0.0)
            # sums over the indices >= t of x, x * index, x * index ** 2
            s0[25] = 0
            s1[25] = 0
            s2[25] = 0
            for t in range(24, -1, -1):
                v0 = x[s, t]
                s0[t] = s0[t + 1] + v0
                s1[t] = s1[t + 1] + v0 * t
                s2[t] = s2[t + 1] + v0 * t * t
            out[i, o + 3] = np.float32(s1[ob + 1] + (1 - ob) * s0[ob + 1]) / np.float32(167.0)
            t0 = max(ob, 0)
            out[i, o + 23] = np.float32(s1[0] + s0[0] - s1[t0] - s0[t0]) / np.float32(100.0)
            # TIMING
            tm = 24 * x[s, 24]
            no = x[s, 24]
            for k in range(6, 24):
                cnt = x[s, k]
                if k >= 12 and k > ob and cnt >= 2:
                    cnt -= 2
                tm += cnt * k
                no += cnt
            for k in range(5, -1, -1):
                cnt = x[s, k]
                spare = max(cnt - 2, 0)
                tm += k * spare
                no += spare
                missing = max(2 - cnt, 0)
                if no >= missing:
                    tm -= k * missing
                    no -= missing
            out[i, o + 19] = np.float32(max(tm, 0)) / np.float32(100.0)
            # BACK_CHEQUER, BACK_ANCHOR, FORWARD_ANCHOR (int64 / float32: numpy divides in float64)
            out[i, o + 4] = np.float32(top_me / 24.0)
            out[i, o + 5] = np.float32(_top_bit(md) / 24.0)
            fwd = _LOW6[(md >> 18) & 0x3F]
            if fwd >= 0:
                fwd += 18
            else:
                fwd = 12 + _HIGH6[(md >> 12) & 0x3F]
            out[i, o + 6] = np.float32((24 - fwd) / 6.0) if fwd >= 12 else np.float32(2.0)
            # PIPLOSS, P1, P2
            home = (md if nn_rule else occ[s]) & 0x3F
            pl, h1, h2 = _shot_counts(x[s], x[p], occ[s], md, pair_home[s], blot[p], made[p], home, scratch)
            out[i, o + 7] = np.float32(pl) / np.float32(432.0)
            out[i, o + 8] = np.float32(h1) / f36
            out[i, o + 9] = np.float32(h2) / f36
            # BACKESCAPES, BACKRESCAPES
            window = (md >> (ob + 1)) & 0xFFF
            out[i, o + 10] = np.float32(_ESC[window]) / f36
            out[i, o + 24] = np.float32(_ESC1[window]) / f36
            # ACONTAIN, CONTAIN
            acont = 36
            for k in range(10):
                if k > ob and esc[s, k] < acont:
                    acont = esc[s, k]
            cont = esc[s, 1]
            for k in range(2, 10):
                if esc[s, k] < cont:
                    cont = esc[s, k]
            a = np.float32(36 - acont) / f36
            c2 = np.float32(36 - cont) / f36
            out[i, o + 11] = a
            out[i, o + 12] = a * a
            out[i, o + 13] = c2
            out[i, o + 14] = c2 * c2
            # MOBILITY
            mob = 0
            for k in range(19):
                mob += esc[p, 18 - k] * x[s, 6 + k] * (k + 1)
            out[i, o + 15] = np.float32(mob) / np.float32(3600.0)
            # MOMENT2
            tot = total[s]
            mean = (s1[0] + tot - 1) // max(tot, 1)
            cnt = s0[mean + 1]
            sq = s2[mean + 1] - 2 * mean * s1[mean + 1] + mean * mean * cnt
            m2 = (sq + cnt - 1) // max(cnt, 1) if cnt > 0 else 0
            out[i, o + 16] = np.float32(m2) / np.float32(400.0)
            # ENTER, ENTER2
            closed = made[p] & 0x3F
            bar = x[s, 24]
            out[i, o + 17] = _ENTER[1 if bar > 1 else 0, closed] if bar > 0 else np.float32(0.0)
            out[i, o + 18] = _ENTER2[closed]
            # BACKBONE
            pts = md & 0xFFFFFE
            topc = max(_top_bit(pts), 0)
            below = _POP12[pts & ((1 << topc) - 1) & 0xFFF] + _POP12[(pts & ((1 << topc) - 1)) >> 12]
            if below > 0:
                wsum = _BACKBONE[((pts << 11) >> topc) & 0x7FF]
                out[i, o + 20] = np.float32(1.0) - np.float32(wsum) / np.float32(below * 11)
            else:
                out[i, o + 20] = 0.0
            # BACKG, BACKG1
            anchors = _POP12[(md >> 18) & 0x3F]
            bk = 0
            for k in range(18, 25):
                bk += x[s, k]
            out[i, o + 21] = np.float32(bk - 3) / np.float32(4.0) if anchors > 1 else np.float32(0.0)
            out[i, o + 22] = np.float32(bk) / np.float32(8.0) if anchors == 1 else np.float32(0.0)
    return 0


def _race_kernel(b, out):  # pragma: no cover - compiled by numba
    """:func:`race_inputs` of ``b`` ``(n, 2, 25)`` int8 into ``out`` ``(n, 214)`` float32.

    Returns 0, 1 when a count is outside 0..15, 2 when a side has more than 15 checkers, 3 when a checker
    stands on a 24-point or bar (``out`` is then partly written)."""
    n = b.shape[0]
    bad = _count_status(b)
    if bad:
        return bad
    for i in range(n):
        for s in range(2):
            if b[i, s, 23] > 0 or b[i, s, 24] > 0:
                return 3
    for i in range(n):
        for s in range(2):
            o = 107 * (1 - s)  # the opponent first
            tot = 0
            cross = 0
            for c in range(23):
                v = b[i, s, c]
                tot += v
                cross += v * (c // 6)
                out[i, o + 4 * c] = _UNITS[v, 0]
                out[i, o + 4 * c + 1] = _UNITS[v, 1]
                out[i, o + 4 * c + 2] = _UNITS[v, 2]
                out[i, o + 4 * c + 3] = _UNITS[v, 3]
            off = 15 - tot
            for k in range(14):
                out[i, o + 92 + k] = 1.0 if off == k + 1 else 0.0
            out[i, o + 106] = np.float32(cross) / np.float32(10.0)
    return 0


_CONTACT_KERNEL = PositionKernel(_contact_kernel, helpers=(_count_status, _top_bit, _rev24, _shot_counts))
_RACE_KERNEL = PositionKernel(_race_kernel, helpers=(_count_status,))


# --- encoders -------------------------------------------------------------------------------------------------


def race_inputs(boards: np.ndarray, *, compiled: bool | None = None) -> np.ndarray:
    """gnubg's race-net inputs (214 units, opponent first; see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0 (bgai's layout).
        compiled: ``True``: the compiled kernel when there is one (:mod:`bgai.util.jit`); ``False``: the numpy
            reference; ``None``: the kernel after a warm-up (:mod:`bgai.model.kernels`).  The output is
            bit-identical.

    Returns:
        ``(N, 214)`` float32.

    Raises:
        InvalidPositionError: wrong shape or counts, or a checker on a 24-point or bar (not a race).
    """
    b = np.ascontiguousarray(as_batch(boards))
    kernel = _RACE_KERNEL.get(b.shape[0], compiled)
    if kernel is not None:
        out = np.empty((b.shape[0], RACE_SIZE), dtype=np.float32)
        if kernel(b, out) == 0:
            return out
    b = _check(boards)
    if b.size and (b[:, :, 23:] > 0).any():
        raise InvalidPositionError("race inputs need a race: no checker on the 24-point or the bar")
    n = b.shape[0]
    out = np.zeros((n, 2, 107), dtype=np.float32)
    g = b[:, ::-1]  # gnubg's row order: opponent first
    out[:, :, :92] = np.take(_UNITS, g[:, :, :23], axis=0).reshape(n, 2, 92)
    off = 15 - g.sum(axis=2, dtype=np.int64)  # (n, 2)
    k = np.arange(1, 15)
    out[:, :, 92:106] = off[:, :, None] == k
    cross = (g[:, :, 6:24].astype(np.int64) * (np.arange(6, 24) // 6)).sum(axis=2)
    out[:, :, 106] = cross.astype(np.float32) / np.float32(10.0)
    return out.reshape(n, RACE_SIZE)


def contact_inputs(boards: np.ndarray, *, hit_rule: str = "gnubg", compiled: bool | None = None) -> np.ndarray:
    """gnubg's contact-net inputs (250 units; see the module docstring), also used for crashed positions.

    Defined for every board (gnubg computes them for contact and crashed positions only).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0 (bgai's layout).
        hit_rule: ``"gnubg"`` (``eval.c``: home-board points holding any checker count for PIPLOSS's
            heuristic) or ``"gnubg-nn"`` (points holding 2 or more, as gnubg-nn's ``inputs.c`` and so the
            ``gnubg_nn`` package compute it).
        compiled: ``True``: the compiled kernel when there is one (:mod:`bgai.util.jit`); ``False``: the numpy
            reference; ``None``: the kernel after a warm-up (:mod:`bgai.model.kernels`).  The output is
            bit-identical.

    Returns:
        ``(N, 250)`` float32.

    Raises:
        InvalidPositionError: wrong shape or counts.
        ConfigError: unknown ``hit_rule``.
    """
    if hit_rule not in HIT_RULES:
        raise ConfigError(f"unknown hit_rule {hit_rule!r}; known: {', '.join(HIT_RULES)}")
    b = np.ascontiguousarray(as_batch(boards))
    kernel = _CONTACT_KERNEL.get(b.shape[0], compiled)
    if kernel is not None:
        out = np.empty((b.shape[0], CONTACT_SIZE), dtype=np.float32)
        if kernel(b, hit_rule == "gnubg-nn", out) == 0:
            return out
    b = _check(boards)  # raises the kernel's complaint
    n = b.shape[0]
    out = np.empty((n, CONTACT_SIZE), dtype=np.float32)
    for lo in range(0, n, _CHUNK):
        bc = b[lo : lo + _CHUNK]
        m = bc.shape[0]
        oc = out[lo : lo + _CHUNK]
        g = bc[:, ::-1]  # opponent first
        oc[:, :200] = np.take(_UNITS, g + _UNIT_ROW, axis=0).reshape(m, 200)
        rows = np.concatenate([bc[:, 0], bc[:, 1]])  # rows 0..m-1: side on roll; m..2m-1: opponent
        half = _half_inputs(rows, m, hit_rule)
        # gnubg's switch: each block's OFF1..3 are the other side's
        half[:3] = _swap(half[:3], m)
        oc[:, 200:225] = half[:, :m].T
        oc[:, 225:250] = half[:, m:].T
    return out
