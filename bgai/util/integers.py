"""Reading decimal integers out of exchange-format text, for every format reader of :mod:`bgai.formats`.

Python's ``int()`` is too lax and too fragile for this job: it accepts surrounding whitespace, ``_`` digit
separators and non-ASCII digits (``int('٣') == 3``), and for text of more than 4,300 digits it raises its own
plain ``ValueError`` ("Exceeds the limit (4300 digits) for integer string conversion") instead of the
reader's documented error.  :func:`parse_int` accepts exactly ``[+-]?[0-9]+`` (ASCII), refuses numbers of more
than :data:`MAX_DIGITS` significant digits before converting, and raises the error the caller names.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable

__all__ = ["MAX_DIGITS", "is_decimal", "is_int", "parse_int"]

#: Most significant digits (leading zeros aside) a field may have: no exchange format needs more, and 18 digits
#: always fit a signed 64-bit integer.
MAX_DIGITS = 18

_INT_RE = re.compile(r"([+-]?)0*([0-9]+)", re.ASCII)
_SHOWN = 24  # characters of offending text quoted in a message


def _shown(text: str) -> str:
    """``text`` quoted for an error message, shortened to :data:`_SHOWN` characters."""
    if len(text) <= _SHOWN:
        return repr(text)
    return repr(text[:_SHOWN]) + f"... ({len(text)} characters)"


def is_decimal(text: str) -> bool:
    """Whether ``text`` is written as :func:`parse_int` reads an integer, ``[+-]?[0-9]+`` (ASCII), whatever its
    number of digits."""
    return _INT_RE.fullmatch(text) is not None


def is_int(v: object) -> bool:
    """True for an integer value (any :class:`numbers.Integral`, e.g. ``int`` or ``np.int64``) that is not a
    ``bool``: the type check of the state classes' integer fields."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def parse_int(
    text: object,
    what: str,
    error: Callable[[str], Exception],
    lo: int | None = None,
    hi: int | None = None,
) -> int:
    """The integer written in ``text``, or the caller's error.

    Args:
        text: the field, exactly ``[+-]?[0-9]+`` (no whitespace: strip first where the format allows it).
        what: how the field is named in a message, e.g. ``'cube field'`` -> ``"cube field 'x' is not an
            integer"``.
        error: the exception to raise, called with the one-line message: an exception class such as
            :class:`bgai.errors.XGIDError`, or a function that wraps the message (e.g. prefixes the whole input).
        lo, hi: inclusive bounds, or None for none.

    Returns:
        The value, a Python ``int`` with at most :data:`MAX_DIGITS` digits, within ``lo..hi``.

    Raises:
        what ``error`` builds: ``text`` not a string or not an ASCII decimal integer ("is not an integer"), more
        than :data:`MAX_DIGITS` significant digits ("is too large" / "is outside lo..hi"), a value outside
        ``lo..hi`` ("is outside lo..hi").
    """
    if not isinstance(text, str):
        raise error(f"{what} {text!r} is not an integer")
    m = _INT_RE.fullmatch(text)
    if m is None:
        raise error(f"{what} {_shown(text)} is not an integer")
    sign, digits = m.groups()
    if len(digits) > MAX_DIGITS:
        shown = f"{sign}<{len(digits)}-digit number>"
        if lo is not None or hi is not None:
            raise error(f"{what} {shown} is outside {_bounds(lo, hi)}")
        raise error(f"{what} {shown} is too large (more than {MAX_DIGITS} digits)")
    value = int(sign + digits)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise error(f"{what} {value} is outside {_bounds(lo, hi)}")
    return value


def _bounds(lo: int | None, hi: int | None) -> str:
    if lo is None:
        return f"..{hi}"
    if hi is None:
        return f"{lo}.."
    return f"{lo}..{hi}"
