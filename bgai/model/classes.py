"""Position classes, as GNU Backgammon sorts positions between its evaluators.

GNU Backgammon (``eval.c``, ``ClassifyPosition``; the same rules in gnubg-nn's ``eval.c``, the engine of the
``gnubg_nn`` package) evaluates a position with a different net or database depending on its class.  bgai's
classes and their exact rules, for a board in bgai's layout (:mod:`bgai.core.board`; each side's columns in its own
numbering, column 0 its ace point, column 24 its bar):

``CLASS_OVER`` (0)
    The game is over: one side has no checker left on the board (all 15 borne off).

``CLASS_BEAROFF`` (1)
    A race (below) in which every checker of both sides is in its home board (columns 0..5; no checker on the
    bar or on points 7..24).  Each side then has at most 15 checkers on 6 points, the range of gnubg's one-sided
    bear-off database.  gnubg splits this class in two, ``CLASS_BEAROFF2`` (both sides fit its two-sided
    database: gnubg-nn's rule is that both sides' one-sided bear-off index is at most 923, i.e. each side has
    at most 6 checkers left) and ``CLASS_BEAROFF1`` (the rest); bgai keeps one class and maps both to it.

``CLASS_RACE`` (2)
    No contact: no checker of either side is behind a checker of the other, i.e. with ``back`` = the highest
    occupied column of a side (24 when on the bar), ``back(side on roll) + back(opponent) <= 22`` (the same
    physical point is column ``c`` for one side and ``23 - c`` for the other); and not a bear-off.

``CLASS_CRASHED`` (3)
    Contact, and at least one side has "crashed": with ``tot`` its checkers still on the board (the bar
    included) and ``n1``, ``n2`` those on its 1- and 2-points (columns 0 and 1), that side

    * has ``tot <= 6``; or
    * has ``n1 >= 2`` and ``tot - n1 <= 6``; or
    * has ``n1 >= 2``, ``n2 >= 2`` and ``tot - n1 - n2 + 1 <= 6``; or
    * has ``n1 <= 1`` and ``tot - n2 + 1 <= 6``.

    In words: at most 6 checkers are left in play once the checkers piled on its 1- and 2-points are set
    aside (with one checker of the 2-point still counted, or all of them when the 1-point holds fewer than two).
    gnubg writes the last rule with unsigned arithmetic (``tot <= 6 + (n2 - 1)``), which for ``n2 = 0`` wraps
    round to ``tot <= 5``: the same as ``tot - n2 + 1 <= 6``.

``CLASS_CONTACT`` (4)
    Every other position: contact, neither side crashed.

The class numbers keep gnubg's order (over < bear-off < race < crashed < contact), so ``c <= CLASS_RACE``
means "no contact".  ``gnubg_nn.classify`` numbers them 0 (over), 1 (bearoff2), 2 (bearoff1), 3 (race),
4 (crashed), 5 (contact): :data:`FROM_GNUBG_NN` maps those numbers to bgai's.
"""

from __future__ import annotations

import numpy as np

from bgai.core.board import as_batch
from bgai.errors import InvalidPositionError
from bgai.model.kernels import PositionKernel

__all__ = [
    "CLASS_OVER",
    "CLASS_BEAROFF",
    "CLASS_RACE",
    "CLASS_CRASHED",
    "CLASS_CONTACT",
    "CLASS_NAMES",
    "FROM_GNUBG_NN",
    "classify",
    "use_compiled",
]

CLASS_OVER = 0
CLASS_BEAROFF = 1
CLASS_RACE = 2
CLASS_CRASHED = 3
CLASS_CONTACT = 4

#: Names of the classes, indexed by class number.
CLASS_NAMES = ("over", "bearoff", "race", "crashed", "contact")

#: ``FROM_GNUBG_NN[k]`` is bgai's class of a position ``gnubg_nn.classify`` puts in its class ``k``
#: (0 over, 1 bearoff2, 2 bearoff1, 3 race, 4 crashed, 5 contact).
FROM_GNUBG_NN = np.array(
    [CLASS_OVER, CLASS_BEAROFF, CLASS_BEAROFF, CLASS_RACE, CLASS_CRASHED, CLASS_CONTACT], dtype=np.int8
)

_CRASH_LIMIT = 6  # gnubg's N: at most this many checkers left in play


def _crashed(rows: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: whether the side of each row ``(N, 25)`` (int16) has crashed (see the module docstring)."""
    tot = rows.sum(axis=1)
    n1 = rows[:, 0]
    n2 = rows[:, 1]
    piled1 = n1 >= 2
    return (
        (tot <= _CRASH_LIMIT)
        | (piled1 & (tot - n1 <= _CRASH_LIMIT))
        | (piled1 & (n2 >= 2) & (tot - n1 - n2 + 1 <= _CRASH_LIMIT))
        | (~piled1 & (tot - n2 + 1 <= _CRASH_LIMIT))
    )


def classify(boards: np.ndarray, compiled: bool | None = None) -> np.ndarray:
    """The class of each position (``CLASS_OVER`` ... ``CLASS_CONTACT``, see the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or one ``(2, 25)``) int8 boards in bgai's layout; the classes do not depend on
            which side is on roll.
        compiled: the compiled kernel (:func:`use_compiled`): ``None`` as the process decides (numpy until
            :data:`bgai.model.kernels.WARM_UP_POSITIONS` positions were classified, then the kernel), ``True``
            now, ``False`` never.  Both give the same classes (``tests/test_classes.py``).

    Returns:
        ``(N,)`` int8 class numbers.

    Raises:
        InvalidPositionError: wrong shape, or a checker count outside 0..15.
    """
    b = as_batch(boards)
    n = b.shape[0]
    kernel = _CLASSIFY.get(n, compiled)
    if kernel is not None:
        out = np.empty(n, dtype=np.int8)
        if kernel(np.ascontiguousarray(b), out):
            raise InvalidPositionError("checker counts must be in 0..15 to classify a position")
        return out
    if b.size and (b.min() < 0 or b.max() > 15):
        raise InvalidPositionError("checker counts must be in 0..15 to classify a position")
    occupied = b > 0
    # highest occupied column of each side (-1 when it has no checker): 24 - (first occupied from the top)
    back = np.where(occupied.any(axis=2), 24 - np.argmax(occupied[:, :, ::-1], axis=2), -1)
    out = np.full(n, CLASS_CONTACT, dtype=np.int8)
    over = (back < 0).any(axis=1)
    contact = ~over & (back[:, 0] + back[:, 1] > 22)
    if contact.any():
        rows = b[contact].astype(np.int16)
        crashed = _crashed(rows[:, 0]) | _crashed(rows[:, 1])
        out[np.flatnonzero(contact)[crashed]] = CLASS_CRASHED
    race = ~over & ~contact
    out[race] = np.where((back[race] <= 5).all(axis=1), CLASS_BEAROFF, CLASS_RACE)
    out[over] = CLASS_OVER
    return out


def _side_crashed(b: np.ndarray, i: int, s: int) -> bool:
    """:func:`_crashed` of side ``s`` of board ``i`` (plain Python, compiled into :func:`_classify_kernel`)."""
    tot = 0
    for c in range(25):
        tot += b[i, s, c]
    n1 = b[i, s, 0]
    n2 = b[i, s, 1]
    if tot <= 6:
        return True
    if n1 >= 2:
        return tot - n1 <= 6 or (n2 >= 2 and tot - n1 - n2 + 1 <= 6)
    return tot - n2 + 1 <= 6


def _classify_kernel(b: np.ndarray, out: np.ndarray) -> bool:
    """:func:`classify`'s rules one board at a time into ``out`` (``(N,)`` int8) for C-contiguous int8 boards
    ``b``; True (and ``out`` unfinished) when a count is outside 0..15."""
    for i in range(b.shape[0]):
        back0 = -1
        back1 = -1
        for c in range(25):
            x0 = b[i, 0, c]
            x1 = b[i, 1, c]
            if x0 < 0 or x0 > 15 or x1 < 0 or x1 > 15:
                return True
            if x0 > 0:
                back0 = c
            if x1 > 0:
                back1 = c
        if back0 < 0 or back1 < 0:
            out[i] = 0  # CLASS_OVER
        elif back0 + back1 > 22:
            out[i] = 3 if _side_crashed(b, i, 0) or _side_crashed(b, i, 1) else 4  # CLASS_CRASHED / CLASS_CONTACT
        elif back0 <= 5 and back1 <= 5:
            out[i] = 1  # CLASS_BEAROFF
        else:
            out[i] = 2  # CLASS_RACE
    return False


def _prime(kernel) -> None:
    kernel(np.zeros((1, 2, 25), dtype=np.int8), np.empty(1, dtype=np.int8))


_CLASSIFY = PositionKernel(_classify_kernel, helpers=(_side_crashed,), prime=_prime)


def use_compiled(on: bool = True) -> bool:
    """Turn :func:`classify`'s compiled kernel on (loading it now) or off (the numpy path, the reference; the
    same classes) for the following calls: for a server, which classifies a few afterstates per request and
    would otherwise run numpy for its first :data:`~bgai.model.kernels.WARM_UP_POSITIONS` positions
    (:meth:`bgai.util.jit.LazyKernel.use`).

    Returns:
        Whether the kernel is now in use (``False`` when turned off, or without compiled kernels).
    """
    return _CLASSIFY.use(on)
