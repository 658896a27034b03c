"""wildbg's board parameters ``p0`` .. ``p25``: convert to and from bgai boards.

Format (source: wildbg ``crates/web/src/web_api.rs`` and the C API header ``wildbg.h``; summarised in
test vectors in ``tests/test_wildbg_format.py``): the player to act, "x", always moves from 24 to 1.  ``p1`` .. ``p24`` are the
points from x's view; a positive value counts x's checkers, a negative value the opponent's ("o").  ``p25`` is
x's bar (>= 0) and ``p0`` o's bar (<= 0).  Missing parameters are 0; borne-off checkers are implied.  The same
26-entry layout is the C API's ``pips[26]``.

In bgai's layout (row 0 = the side on roll = x), x's point ``i`` is column ``i - 1`` of row 0 and the same
physical point is o's point ``25 - i``, column ``24 - i`` of row 1.

Error messages for bad positions are wildbg's own where it has one (e.g. ``Player x has more than 15 checkers
on the board.``).
"""

from __future__ import annotations

import numbers
import re
from typing import Mapping, Sequence

import numpy as np

from bgai.core.board import BAR, as_batch, validate, validation_errors
from bgai.errors import FormatError, InvalidPositionError
from bgai.util.integers import parse_int

__all__ = ["board_from_wildbg", "to_wildbg", "to_wildbg_pips"]

_KEY_RE = re.compile(r"p([0-9]{1,2})")


def board_from_wildbg(params: Mapping[str, object] | Sequence[int]) -> np.ndarray:
    """A bgai board from wildbg's ``p0`` .. ``p25`` parameters.

    Args:
        params: a mapping with keys ``'p0'`` .. ``'p25'`` (or the integers 0..25), values integers -15..15 or
            their decimal text (as in a query string), missing keys meaning 0; or a sequence of 26 integers
            (the C API's ``pips[26]``).  Other keys (e.g. ``die1``) are not allowed: pass only the board.

    Returns:
        ``(2, 25)`` ``int8`` board in bgai's layout, row 0 = x (the player to act).

    Raises:
        FormatError: an unknown key, a value that is not an integer (text: ASCII digits, at most 18 of them, read by
            :func:`bgai.util.integers.parse_int`), a sequence not of length 26.
        InvalidPositionError: a value outside -15..15, x's bar (``p25``) negative, o's bar (``p0``) positive,
            more than 15 checkers for a side.
    """
    pips = _pips(params)
    for i, v in enumerate(pips):
        if not -15 <= v <= 15:
            raise InvalidPositionError(f"Index {i} has {v} checkers; values must be between -15 and 15.")
    if pips[25] < 0:
        raise InvalidPositionError("Index 25 is the bar for player x, number of checkers needs to be positive.")
    if pips[0] > 0:
        raise InvalidPositionError("Index 0 is the bar for player o, number of checkers needs to be negative.")
    board = np.zeros((2, 25), dtype=np.int16)
    for i in range(1, 25):
        v = pips[i]
        if v > 0:
            board[0, i - 1] = v
        elif v < 0:
            board[1, 24 - i] = -v
    board[0, BAR] = pips[25]
    board[1, BAR] = -pips[0]
    for side, name in ((0, "x"), (1, "o")):
        if board[side].sum() > 15:
            raise InvalidPositionError(f"Player {name} has more than 15 checkers on the board.")
    msg = validation_errors(board)[0]
    if msg is not None:  # pragma: no cover - the checks above cover every way a p0..p25 board can be wrong
        raise InvalidPositionError(f"invalid position: {msg}")
    return board.astype(np.int8)


def to_wildbg_pips(board: np.ndarray) -> list[int]:
    """wildbg's ``pips[26]`` for a bgai board: index 25 x's bar, 1..24 points (x positive, o negative), 0 o's bar.

    Args:
        board: ``(2, 25)`` board (or :class:`bgai.core.position.Position`), row 0 = x, the player to act.

    Raises:
        InvalidPositionError: an impossible board.
    """
    board = getattr(board, "board", board)
    b = as_batch(board)
    if b.shape[0] != 1:
        raise InvalidPositionError(f"to_wildbg takes one (2, 25) board, got shape {b.shape}")
    b = validate(b)[0].astype(int)
    pips = [0] * 26
    for i in range(1, 25):
        pips[i] = int(b[0, i - 1]) - int(b[1, 24 - i])
    pips[25] = int(b[0, BAR])
    pips[0] = -int(b[1, BAR])
    return pips


def to_wildbg(board: np.ndarray, *, include_zeros: bool = False) -> dict[str, int]:
    """wildbg's ``p0`` .. ``p25`` query parameters for a bgai board (x = row 0, the player to act).

    Args:
        board: ``(2, 25)`` board or :class:`bgai.core.position.Position`.
        include_zeros: also list empty points (wildbg treats a missing parameter as 0).

    Returns:
        ``{'p24': 2, 'p19': -5, ...}`` in order p0..p25.

    Raises:
        InvalidPositionError: an impossible board.
    """
    pips = to_wildbg_pips(board)
    return {f"p{i}": v for i, v in enumerate(pips) if v or include_zeros}


def _pips(params: Mapping[str, object] | Sequence[int]) -> list[int]:
    if isinstance(params, Mapping):
        pips = [0] * 26
        for key, value in params.items():
            idx = _index(key)
            pips[idx] = _int_value(f"p{idx}", value)
        return pips
    if isinstance(params, (str, bytes)):
        raise FormatError("wildbg board must be a mapping p0..p25 or a sequence of 26 integers, got a string")
    seq = list(np.asarray(params).ravel().tolist()) if isinstance(params, np.ndarray) else list(params)
    if len(seq) != 26:
        raise FormatError(f"wildbg pips sequence has {len(seq)} entries, expected 26 (indices 0..25)")
    return [_int_value(f"p{i}", v) for i, v in enumerate(seq)]


def _index(key: object) -> int:
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        idx = int(key)
    elif isinstance(key, str) and (m := _KEY_RE.fullmatch(key)):
        idx = int(m.group(1))
    else:
        raise FormatError(f"unknown wildbg board parameter {key!r} (expected p0 .. p25)")
    if not 0 <= idx <= 25:
        raise FormatError(f"unknown wildbg board parameter {key!r} (expected p0 .. p25)")
    return idx


def _int_value(name: str, value: object) -> int:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return parse_int(value.strip(), f"wildbg parameter {name} =", FormatError)
    raise FormatError(f"wildbg parameter {name} = {value!r} is not an integer")
