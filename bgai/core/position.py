"""The :class:`Position` value type: one validated position from the view of the side to move.

The array layout it wraps is documented once in :mod:`bgai.core.board`; Position IDs in
:mod:`bgai.core.position_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from bgai.core.board import (
    BAR,
    BOARD_SHAPE,
    flip,
    is_game_over,
    off_counts,
    pip_counts,
    render,
    starting_board,
    validate,
)
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import InvalidPositionError

__all__ = ["Position"]


@dataclass(frozen=True, eq=False)
class Position:
    """One position, from the view of the side to move.

    ``board`` is a read-only ``(2, 25)`` ``int8`` array in bgai's layout (see the module docstring).  Build one
    with :meth:`start`, :meth:`from_position_id`, :meth:`from_points` or ``Position(board)``; the constructor
    validates and raises :class:`~bgai.errors.InvalidPositionError` for an impossible board.
    """

    board: np.ndarray

    def __post_init__(self) -> None:
        arr = validate(np.array(self.board, copy=True))[0].copy()
        arr.setflags(write=False)
        object.__setattr__(self, "board", arr)

    @classmethod
    def start(cls) -> "Position":
        """The starting position."""
        return cls(starting_board())

    @classmethod
    def from_points(
        cls,
        me: Mapping[int, int],
        opponent: Mapping[int, int],
        *,
        me_bar: int = 0,
        opponent_bar: int = 0,
    ) -> "Position":
        """Build a position from point -> count maps, each side on **its own** point numbers (1..24).

        Example: ``Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})`` is the start.

        Raises:
            InvalidPositionError: a point outside 1..24, a negative count, or an impossible board.
        """
        board = np.zeros(BOARD_SHAPE, dtype=np.int16)
        for side, pts, bar in ((0, me, me_bar), (1, opponent, opponent_bar)):
            for p, n in pts.items():
                if not 1 <= int(p) <= 24:
                    raise InvalidPositionError(f"point {p} is outside 1..24")
                board[side, int(p) - 1] += int(n)
            board[side, BAR] += int(bar)
        return cls(board)

    @classmethod
    def from_position_id(cls, position_id: str) -> "Position":
        """Decode a GNU Backgammon Position ID (see :mod:`bgai.core.position_id`)."""
        return cls(decode_position_id(position_id))

    def position_id(self) -> str:
        """The GNU Backgammon Position ID of this position (14 characters)."""
        return encode_position_id(self.board)

    def flipped(self) -> "Position":
        """The same position seen by the opponent (as if it were the opponent's turn)."""
        return Position(flip(self.board))

    @property
    def pip_count(self) -> tuple[int, int]:
        """``(side to move, opponent)`` pip counts."""
        pc = pip_counts(self.board)[0]
        return int(pc[0]), int(pc[1])

    @property
    def off(self) -> tuple[int, int]:
        """``(side to move, opponent)`` checkers borne off."""
        oc = off_counts(self.board)[0]
        return int(oc[0]), int(oc[1])

    def is_game_over(self) -> bool:
        """True when one side has borne off all its checkers."""
        return bool(is_game_over(self.board)[0])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and np.array_equal(self.board, other.board)

    def __hash__(self) -> int:
        return hash(self.board.tobytes())

    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"

    def __str__(self) -> str:
        return render(self.board)
