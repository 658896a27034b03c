"""Exception types of bgai.

Every error bgai raises for bad input is a subclass of :class:`BgaiError`, itself a ``ValueError``, and its
message names what is wrong (quoting the offending text where there is one).  The command line turns them into
a one-line message and exit status 2.
"""


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


class MatchStateError(BgaiError):
    """An impossible cube or match state: match length 0, cube not a power of two, score beyond the length."""
