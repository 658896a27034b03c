"""Exception types of bgai.

Every error bgai raises for bad input is a subclass of :class:`BgaiError`, itself a ``ValueError``, and its
message names what is wrong (quoting the offending text where there is one).  The command line turns them into
a one-line message and exit status 2.

Input quoted in a message is cut to :data:`MAX_QUOTE` characters by :func:`quote_input` (the one helper for
quoting user input), so a huge line is never echoed back whole; :func:`shorten_message` does the same to a
finished message (for messages of code that quotes in full).
"""

import re

#: Longest piece of user input quoted in an error message (longer input is cut, with its length given).
MAX_QUOTE = 40
#: Longest whole error message :func:`shorten_message` lets through.
MAX_MESSAGE = 400

_QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"")


def quote_input(value: object, limit: int = MAX_QUOTE) -> str:
    """``repr`` of user input for an error message, cut to ``limit`` characters.

    Text (``str``) is quoted as ``repr`` does; anything else is first turned into text with ``repr``.  Longer
    text becomes ``'AAAA...' (100000 characters)``.

    Examples:
        ``quote_input('abc') == "'abc'"``; ``quote_input('x' * 41) == "'" + 'x' * 40 + "...' (41 characters)"``.
    """
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)".replace("'...", "...'", 1)


def shorten_message(message: str, limit: int = MAX_MESSAGE, *, quote_limit: int = MAX_QUOTE) -> str:
    """An error message with every quoted piece longer than ``quote_limit`` cut (as :func:`quote_input` cuts)
    and the whole cut to ``limit`` characters (ending in ``...``); messages already short pass unchanged."""

    def cut(m: re.Match) -> str:
        body = m.group(0)[1:-1]
        if len(body) <= quote_limit + 3:  # (+3: a quote already cut by quote_input, ending in '...')
            return m.group(0)
        q = m.group(0)[0]
        return f"{q}{body[:quote_limit]}...{q} ({len(body)} characters)"

    out = _QUOTED_RE.sub(cut, str(message))
    return out if len(out) <= limit else out[: limit - 3] + "..."


class BgaiError(ValueError):
    """Base class of all bgai input errors."""


class InvalidPositionError(BgaiError):
    """A board that breaks the rules: too many checkers, a point held by both sides, negative counts, bad shape."""


class InvalidDiceError(BgaiError):
    """Dice outside 1..6, or of the wrong shape, or unparsable dice text such as ``'7x'``."""


class FormatError(BgaiError):
    """Malformed text in one of the exchange formats (Position ID, Match ID, XGID, FIBS board, notation)."""


class PositionIDError(FormatError):
    """A malformed GNU Backgammon Position ID."""


class MatchIDError(FormatError):
    """A malformed or inconsistent GNU Backgammon Match ID."""


class XGIDError(FormatError):
    """A malformed eXtreme Gammon XGID."""


class FIBSBoardError(FormatError):
    """A malformed FIBS ``board:`` line."""


class NotationError(FormatError):
    """Play notation that cannot be parsed (e.g. ``'24/x'``)."""


class IllegalMoveError(BgaiError):
    """A well-formed play that is not legal in the position with the roll."""


class AmbiguousMoveError(BgaiError):
    """Play notation that matches more than one legal play."""


class ConfigError(BgaiError):
    """A bad configuration file or override: unknown key, wrong type, value out of range."""


class CheckpointError(BgaiError):
    """A missing, corrupt, truncated or foreign checkpoint file."""


class AgentSpecError(BgaiError):
    """An agent specification string that names no known agent or has bad options."""


class AgentCapabilityError(AgentSpecError):
    """The agent cannot answer this kind of question (e.g. probabilities from an agent that has none)."""


class PositionRequestError(FormatError):
    """A position request that cannot be answered as given: two forms at once, parts that disagree (dice and
    the Match ID's roll, a turned cube in the Crawford game), a finished game."""


class MatchStateError(BgaiError):
    """An impossible cube or match state: match length 0, cube not a power of two, score beyond the length."""
