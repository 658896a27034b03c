"""The :class:`Dice` value type: one roll of two dice, and bgai's one parser of dice text.

Every front end reads dice through :meth:`Dice.parse` (command line, batch files, HTTP parameters, tuples from
other code), so ``'31'``, ``'3-1'``, ``'3 1'``, ``'3,1'`` and ``(3, 1)`` mean the same roll everywhere and a bad
roll gets the same message everywhere.  A roll is written one way, ``'3-1'`` (``str(Dice(3, 1))``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bgai.errors import InvalidDiceError, quote_input
from bgai.util.integers import is_int

__all__ = ["Dice", "ROLLS", "ROLL_WEIGHTS", "ROLL_INDEX"]


def _rolls() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dice, weights = [], []
    index = np.full((7, 7), -1, dtype=np.int64)
    for a in range(1, 7):
        for b in range(a, 7):
            index[a, b] = index[b, a] = len(dice)
            dice.append((a, b))
            weights.append(1.0 / 36.0 if a == b else 2.0 / 36.0)
    return np.array(dice, dtype=np.int8), np.array(weights, dtype=np.float64), index


#: The 21 distinct rolls ``(21, 2)`` int8 (lower die first: 1-1, 1-2, ..., 6-6), their probabilities ``(21,)``
#: float64 (1/36 a double, 2/36 the others; sum 1) and the index of a roll in that order, ``ROLL_INDEX[d1, d2]``
#: (``(7, 7)`` int64, either order of the dice; -1 for a die 0).  The one table of every search and rollout.
ROLLS, ROLL_WEIGHTS, ROLL_INDEX = _rolls()

# two digits, optionally separated by one '-', ',' or whitespace; digits 0..9 are matched so that a 7 is
# reported as "die 7 is not 1..6" rather than as unreadable text
_DICE_RE = re.compile(r"\s*([0-9])\s*[-,\s]?\s*([0-9])\s*")
_SPELLINGS = "31, 3-1, 3 1 or 3,1"


@dataclass(frozen=True)
class Dice:
    """One roll: ``d1`` and ``d2``, each 1..6, in the order given (``Dice(3, 1) != Dice(1, 3)``; use
    :meth:`same_roll` to compare rolls regardless of order).

    A ``Dice`` unpacks and indexes like the pair ``(d1, d2)`` (``d1, d2 = dice``; ``np.array([dice])`` is
    ``[[d1, d2]]``), so it can be handed to functions that take a pair.

    Raises:
        InvalidDiceError: a die that is not an integer 1..6.
    """

    d1: int
    d2: int

    def __post_init__(self) -> None:
        for d in (self.d1, self.d2):
            if not is_int(d):
                raise InvalidDiceError(f"bad dice ({self.d1!r}, {self.d2!r}): dice must be integers 1..6")
            if not 1 <= d <= 6:
                raise InvalidDiceError(f"bad dice {self.d1}-{self.d2}: die {d} is not 1..6")
        object.__setattr__(self, "d1", int(self.d1))
        object.__setattr__(self, "d2", int(self.d2))

    @classmethod
    def parse(cls, value: object) -> "Dice":
        """The roll ``value`` names.

        Args:
            value: text ``'31'``, ``'3-1'``, ``'3 1'`` or ``'3,1'`` (surrounding whitespace ignored), a pair of
                integers such as ``(3, 1)`` or a numpy array of two, or a :class:`Dice`.

        Returns:
            The :class:`Dice`, dice in the order given.

        Raises:
            InvalidDiceError: text that is not two dice, a pair of the wrong length or with non-integers, a die
                outside 1..6.  The message quotes the input (at most :data:`bgai.errors.MAX_QUOTE` characters).
        """
        if isinstance(value, Dice):
            return value
        if isinstance(value, str):
            m = _DICE_RE.fullmatch(value)
            if not m:
                raise InvalidDiceError(f"bad dice {quote_input(value)}: expected two dice 1..6 such as {_SPELLINGS}")
            d1, d2 = int(m.group(1)), int(m.group(2))
            for d in (d1, d2):
                if not 1 <= d <= 6:
                    raise InvalidDiceError(f"bad dice {quote_input(value)}: die {d} is not 1..6")
            return cls(d1, d2)
        try:
            items = list(value)  # type: ignore[call-overload]
        except TypeError:
            raise InvalidDiceError(
                f"bad dice {quote_input(value)}: expected two dice 1..6 such as {_SPELLINGS} or (3, 1)"
            ) from None
        if len(items) != 2:
            raise InvalidDiceError(f"bad dice {quote_input(value)}: expected two dice, got {len(items)}")
        if not all(is_int(d) for d in items):
            raise InvalidDiceError(f"bad dice {quote_input(value)}: dice must be integers 1..6")
        for d in items:
            if not 1 <= d <= 6:
                raise InvalidDiceError(f"bad dice {quote_input(value)}: die {int(d)} is not 1..6")
        return cls(int(items[0]), int(items[1]))

    # -- the pair protocol -------------------------------------------------------------------------------------
    def __iter__(self):
        yield self.d1
        yield self.d2

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        return (self.d1, self.d2)[i]

    def __str__(self) -> str:
        return f"{self.d1}-{self.d2}"

    # -- queries -----------------------------------------------------------------------------------------------
    @property
    def is_double(self) -> bool:
        """Both dice show the same number (the roll is played four times)."""
        return self.d1 == self.d2

    def as_tuple(self) -> tuple[int, int]:
        """``(d1, d2)``."""
        return self.d1, self.d2

    def high_first(self) -> "Dice":
        """The same roll, higher die first (as GNU Backgammon writes it)."""
        return Dice(max(self.d1, self.d2), min(self.d1, self.d2))

    def same_roll(self, other: object) -> bool:
        """Whether ``other`` (anything :meth:`parse` reads) is the same roll in either order.

        Raises:
            InvalidDiceError: ``other`` is not a roll.
        """
        o = Dice.parse(other)
        return sorted((self.d1, self.d2)) == sorted((o.d1, o.d2))
