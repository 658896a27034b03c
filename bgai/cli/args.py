"""What every subcommand shares at the command line's edge: the argument parser, seeds, batch input lines.

* :class:`BgaiArgumentParser`: options may come between positionals (``bgai hint 4HPwATDgc/ABMA --agent gnubg
  31``: argparse's ``parse_intermixed_args`` for each subcommand), and a usage error is one line
  (``bgai hint: error: ...``) with exit status 2, never a traceback.
* :func:`seed_type`: the one check of ``--seed`` values, for every command that takes one: an integer
  ``0 .. 2**63 - 1`` (numpy's generators take any non-negative integer, bgai's config and worker seeds are
  64-bit signed), else a one-line usage error.
* :func:`batch_lines`: the lines of a ``--batch`` file or stdin, decoded one by one, so that a line that is
  not UTF-8 text is an error for that line only; stdin is read a line at a time (a program can drive the
  command through a pipe).
"""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO, Iterator, TextIO

from bgai.errors import quote_input, shorten_message

__all__ = ["BgaiArgumentParser", "seed_type", "MAX_SEED", "batch_lines", "error_text"]

#: Largest seed accepted (seeds are stored as signed 64-bit integers).
MAX_SEED = 2**63 - 1


class BgaiArgumentParser(argparse.ArgumentParser):
    """An argument parser whose subcommand parsers accept options between positionals and whose usage errors
    are one line (``PROG: error: MESSAGE (see 'PROG --help')``, exit status 2)."""

    _mixing = False

    def parse_known_args(self, args=None, namespace=None):
        # A parser with subcommands (or REMAINDER) cannot parse intermixed; its subcommand parsers do.
        nested = any(a.nargs in (argparse.PARSER, argparse.REMAINDER) for a in self._get_positional_actions())
        if self._mixing or nested:
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {error_text(ValueError(message))} (see '{self.prog} --help')\n")


def seed_type(text: str) -> int:
    """argparse ``type`` of ``--seed``: a decimal integer ``0 .. 2**63 - 1``.

    Raises:
        argparse.ArgumentTypeError: anything else (negative, too large, not an integer), quoting the value.
    """
    try:
        value = int(str(text).strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer seed 0..2**63-1, got {quote_input(text)}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected an integer seed 0..2**63-1, got {quote_input(text)}")
    return value


#: Longest quoted piece the command line lets through in a message (long enough for file paths; a huge input
#: line is cut).
CLI_QUOTE = 200
#: Longest message the command line prints.
CLI_MESSAGE = 2000


def error_text(exc: BaseException) -> str:
    """The one-line message of an error for the user: quoted pieces longer than :data:`CLI_QUOTE` characters
    cut (:func:`bgai.errors.shorten_message`; bgai's own messages quote input at most
    :data:`bgai.errors.MAX_QUOTE` characters already), line breaks folded."""
    return " ".join(shorten_message(str(exc), CLI_MESSAGE, quote_limit=CLI_QUOTE).split())


def _decode(raw: bytes | str, n: int) -> tuple[str | None, str | None]:
    if isinstance(raw, str):
        return raw, None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"line {n} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"


def batch_lines(path: str, stdin: TextIO | None = None) -> Iterator[tuple[int, str | None, str | None]]:
    """The lines of a batch file (``'-'`` = stdin), one at a time: ``(line number, text, None)``, or
    ``(line number, None, error)`` for a line that is not UTF-8 text.  Line numbers are 1-based; line ends are
    kept off; blank lines are given too (the caller skips them).

    Stdin is read line by line as it arrives (its byte stream when it has one, so bad bytes are caught per
    line); files are read in binary and decoded per line.

    Raises:
        OSError: the file cannot be opened or read.
    """
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        source: BinaryIO | TextIO = getattr(stream, "buffer", stream)
        for n, raw in enumerate(iter(source.readline, b"" if source is not stream else ""), 1):
            text, err = _decode(raw, n)
            yield n, None if text is None else text.rstrip("\r\n"), err
        return
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            text, err = _decode(raw, n)
            yield n, None if text is None else text.rstrip("\r\n"), err
