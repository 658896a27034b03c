"""Input encodings of the value network, batched, by name.

Every encoder maps boards ``(N, 2, 25)`` int8 (bgai's layout, :mod:`bgai.board`; row 0 the side on roll) to
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

The encoders run on every afterstate of every self-play move, so they are numpy-only with fixed lookup tables
and no Python loop over positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bgai.board import as_batch
from bgai.errors import CheckpointError, ConfigError

__all__ = [
    "Encoder",
    "ENCODERS",
    "get_encoder",
    "check_encoding",
    "tesauro198",
    "extended",
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


_POINT_UNITS16 = _POINT_UNITS.copy().view(np.complex128)[:, 0]  # one 16-byte item per count: a fast gather


def _tesauro_into(b: np.ndarray, out: np.ndarray) -> None:
    """Write the 198 Tesauro units of ``b`` ``(N, 2, 25)`` int8 into ``out[:, :198]``."""
    n = b.shape[0]
    side = out[:, :196].reshape(n, 2, 98)
    # gather the 4 units of each point as one 16-byte item straight into the output (counts are 0..15, checked)
    np.take(_POINT_UNITS16, b[:, :, :24], out=side[:, :, :96].view(np.complex128), mode="wrap")
    side[:, :, 96] = b[:, :, 24] * np.float32(0.5)
    side[:, :, 97] = (15 - b.sum(axis=2, dtype=np.int16)) * np.float32(1.0 / 15.0)
    out[:, 196] = 1.0
    out[:, 197] = 0.0


def tesauro198(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198-unit encoding (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.

    Returns:
        ``(N, 198)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    b = as_batch(boards)
    _check_counts(b)
    out = np.empty((b.shape[0], 198), dtype=np.float32)
    _tesauro_into(b, out)
    return out


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


def _shot_matrix() -> np.ndarray:
    """``(36, 24)`` float32: row ``r`` (one of the 36 rolls) has 1 at each distance (1..24) it can hit at.

    A non-double ``(a, b)`` reaches ``a``, ``b``, ``a + b``; a double ``d`` reaches ``d, 2d, 3d, 4d``.  Blocks
    on the way are ignored (an approximation, as the module docstring says).
    """
    m = np.zeros((36, 24), dtype=np.float32)
    r = 0
    for a in range(1, 7):
        for b in range(1, 7):
            dists = {a, b, a + b} if a != b else {a, 2 * a, 3 * a, 4 * a}
            for d in dists:
                m[r, d - 1] = 1.0
            r += 1
    return m


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
_PIP_W = np.arange(1, 26, dtype=np.float32)
_MAX_PRIME = 8  # primes longer than this count as 8
_SHIFT_D = np.arange(24, dtype=np.int64)  # distance d = shift + 1
_ESC_COLS = np.arange(12, 25, dtype=np.int64)  # me's columns 12..24 (points 13..24 and the bar)
_ESC_SHIFT = 24 - _ESC_COLS


def _bits(mask: np.ndarray) -> np.ndarray:
    """``(..., 32)`` bool (columns 25..31 False) -> ``(...)`` int64 with bit ``c`` set where column ``c`` is True."""
    packed = np.packbits(mask, axis=-1, bitorder="little")  # (..., 4) uint8
    return packed.view("<u4")[..., 0].astype(np.int64)


def _highest_bit(x: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of non-negative int64 ``x`` (``-1`` for 0)."""
    return np.frexp(x.astype(np.float64))[1].astype(np.int64) - 1


def _side_features(
    me: np.ndarray, opp: np.ndarray, bits: np.ndarray, rear: np.ndarray, contact: np.ndarray, out: np.ndarray
) -> None:
    """The 10 per-side units for the side whose row is ``me`` (``(N, 25)`` int8); ``opp`` is the other row.

    Both rows are in their own numbering: ``me``'s column ``c`` is ``opp``'s column ``23 - c``.  ``bits``
    ``(N, 5)`` int64 bit masks (bit ``c`` = column ``c``): me's made points, me's occupied columns (bar
    included), me's blots, the opponent's made points, the opponent's occupied columns *reversed* (bit ``i`` =
    its column ``24 - i``).  ``rear`` ``(N,)`` me's rearmost column (24 = bar, -1 none); ``contact`` ``(N,)``.
    """
    n = me.shape[0]
    made_bits, occ_bits, blot_bits, made_o, src = (bits[:, k] for k in range(5))
    out[:, 0] = (me.astype(np.float32) @ _PIP_W) * np.float32(0.01)
    me_pts = me[:, :24]
    out[:, 1] = np.count_nonzero(me_pts == 1, axis=1) * np.float32(0.2)
    out[:, 2] = np.count_nonzero(me_pts[:, :6] >= 2, axis=1) * np.float32(1.0 / 6.0)
    # longest prime: x &= x >> 1 shortens every run of set bits by one; count the rounds some run survives
    x = made_bits.copy()
    best = np.zeros(n, dtype=np.float32)
    for _ in range(_MAX_PRIME):
        best += x != 0
        x &= x >> 1
    out[:, 3] = best * np.float32(1.0 / 6.0)
    out[:, 4] = (rear + 1) * np.float32(1.0 / 25.0)
    out[:, 5] = me[:, 18:25].sum(axis=1, dtype=np.int16) * np.float32(1.0 / 15.0)
    # escapes: the point k + 1 pips ahead of me's column c is me's column c - 1 - k = opp column 24 - c + k,
    # so the 12-bit block mask is (made_o >> (24 - c)) & 0xFFF (columns below 0 are open: bits above 23 are 0).
    rear_c = np.maximum(rear, 0)
    back_mask = (made_o >> (24 - rear_c)) & 0xFFF
    back_esc = _ESCAPES[back_mask].astype(np.float32) * np.float32(1.0 / 36.0)
    out[:, 6] = np.where(contact & (rear >= 0), back_esc, 1.0)
    masks = (made_o[:, None] >> _ESC_SHIFT[None, :]) & 0xFFF  # (N, 13) for columns 12..24
    occ_back = ((occ_bits[:, None] >> _ESC_COLS[None, :]) & 1).astype(np.bool_) & (masks != 0)
    esc = np.where(occ_back, _ESCAPES[masks], 36)
    out[:, 7] = 1.0 - esc.min(axis=1) * np.float32(1.0 / 36.0)
    # shots: an opponent checker on me's column q hits a blot on me's column q + d; its bar acts as column -1.
    # src has bit q + 1 for each such source (me's column q is opp column 23 - q, so bit i <-> opp column
    # 24 - i, i = 0 its bar): a blot on column c is hit from distance d iff blot bit c and src bit c - d + 1.
    hit = np.zeros((n, 32), dtype=np.bool_)
    np.not_equal(blot_bits[:, None] & (src[:, None] << _SHIFT_D[None, :]), 0, out=hit[:, :24])
    hm = _bits(hit)  # bit d - 1: some blot is at distance d from some source
    rolls = _ROLLS_LOW[hm & 0xFFF] | _ROLLS_HIGH[hm >> 12]  # 36-bit set of the rolls that hit
    out[:, 8] = np.bitwise_count(rolls) * np.float32(1.0 / 36.0)
    # dance: the opponent's closed home-board points are its columns 0..5
    closed = np.count_nonzero(opp[:, :6] >= 2, axis=1).astype(np.float32)
    out[:, 9] = np.where(me[:, 24] > 0, (closed * np.float32(1.0 / 6.0)) ** 2, 0.0)


def extended(boards: np.ndarray) -> np.ndarray:
    """Tesauro's 198 units plus 21 expert features (see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8, side on roll in row 0.

    Returns:
        ``(N, 219)`` float32.

    Raises:
        InvalidPositionError: wrong shape or values.
    """
    b = as_batch(boards)
    _check_counts(b)
    n = b.shape[0]
    out = np.empty((n, 219), dtype=np.float32)
    _tesauro_into(b, out)
    flags = np.zeros((n, 2, 4, 32), dtype=np.bool_)  # per side: made, occupied, blots, occupied reversed
    np.greater_equal(b, 2, out=flags[:, :, 0, :25])
    np.greater(b, 0, out=flags[:, :, 1, :25])
    np.equal(b, 1, out=flags[:, :, 2, :25])
    flags[:, :, 0, 24] = False  # the bar is no point
    flags[:, :, 2, 24] = False
    flags[:, :, 3, :25] = flags[:, :, 1, 24::-1]
    bits = _bits(flags)  # (N, 2, 4)
    rear = _highest_bit(bits[:, :, 1])  # (N, 2) rearmost column per side (24 = bar), -1 if none
    # me's column c is the opponent's 23 - c: contact when some checker of one side is behind one of the other
    contact = rear[:, 0] + rear[:, 1] >= 24
    for s, o, cols in ((0, 1, slice(198, 208)), (1, 0, slice(208, 218))):
        side_bits = np.stack([bits[:, s, 0], bits[:, s, 1], bits[:, s, 2], bits[:, o, 0], bits[:, o, 3]], axis=1)
        _side_features(b[:, s], b[:, o], side_bits, rear[:, s], contact, out[:, cols])
    out[:, 218] = ~contact
    return out


def _check_counts(b: np.ndarray) -> None:
    # cheap range check so the lookup tables cannot be indexed out of bounds (full validation is board.validate)
    if b.size and (b.min() < 0 or b.max() > 15):
        from bgai.errors import InvalidPositionError

        raise InvalidPositionError("checker counts must be in 0..15 for feature encoding")


@dataclass(frozen=True)
class Encoder:
    """A named, versioned input encoding: ``encode(boards (N, 2, 25) int8) -> (N, size) float32``."""

    name: str
    version: int
    size: int
    encode: Callable[[np.ndarray], np.ndarray]

    def __call__(self, boards: np.ndarray) -> np.ndarray:
        return self.encode(boards)

    def describe(self) -> dict:
        """``{'name', 'version', 'size'}``, the form stored in checkpoints."""
        return {"name": self.name, "version": self.version, "size": self.size}


ENCODERS: dict[str, Encoder] = {
    "tesauro198": Encoder("tesauro198", 1, 198, tesauro198),
    "extended": Encoder("extended", 1, 219, extended),
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
