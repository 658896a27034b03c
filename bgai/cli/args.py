"""What every subcommand shares at the command line's edge: the argument parser, seeds, batch input lines.

* :class:`BgaiArgumentParser`: options may come between positionals (``bgai hint 4HPwATDgc/ABMA --agent gnubg
  31``: argparse's ``parse_intermixed_args`` for each subcommand), and a usage error is one line
  (``bgai hint: error: ...``) with exit status 2, never a traceback.
* :func:`seed_type`: the one check of ``--seed`` values, for every command that takes one: an integer
  ``0 .. 2**63 - 1`` (numpy's generators take any non-negative integer, bgai's config and worker seeds are
  64-bit signed), else a one-line usage error.
* :func:`batch_lines`: the lines of a ``--batch`` file or stdin, decoded one by one, so that a line that is
  not UTF-8 text is an error for that line only; stdin is read a line at a time (a program can drive the
  command through a pipe).  :func:`batch_items` reads each non-blank line with the command's own reader, and
  :func:`reading_batch` turns a file that cannot be read into one error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import contextmanager
from typing import BinaryIO, Iterator, TextIO, TypeVar

from bgai.errors import BgaiError, quote_input, shorten_message
from bgai.util import ray_backend

__all__ = [
    "BgaiArgumentParser", "positive_int", "non_negative_int", "seed_type", "MAX_SEED", "batch_lines", "batch_items",
    "reading_batch", "error_text", "add_ray_option", "parallel_backend",
]

T = TypeVar("T")

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


def _int_at_least(text: str, low: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {quote_input(text)}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {quote_input(text)}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--games``, ``--workers``), else a one-line usage error."""
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (``--ply``, a count that may be zero), else a one-line usage error."""
    return _int_at_least(text, 0, "an integer >= 0")


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


def batch_items(path: str, read: Callable[[str], T]) -> Iterator[tuple[int, T | BgaiError]]:
    """The non-blank lines of a batch file (``'-'`` = stdin, see :func:`batch_lines`), each read as it comes by
    ``read`` (called with the line stripped): ``(line number, what read returned)``, or ``(line number,
    error)`` for a line that is not UTF-8 text or that ``read`` refuses with a :class:`bgai.errors.BgaiError`.

    Raises:
        OSError: the file cannot be opened or read (see :func:`reading_batch`).
    """
    for n, text, bad in batch_lines(path):
        if bad is not None:
            yield n, BgaiError(bad)
            continue
        if not text.strip():
            continue
        try:
            item = read(text.strip())
        except BgaiError as exc:
            yield n, exc
            continue
        yield n, item


@contextmanager
def reading_batch(path: str) -> Iterator[None]:
    """Around the processing of a batch file: an :class:`OSError` (the file cannot be opened or read) becomes
    the one-line :class:`bgai.errors.BgaiError` ``cannot read batch file '<path>': <reason>``; a broken pipe on
    the output passes unchanged (the command line handles it)."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise BgaiError(f"cannot read batch file {quote_input(path)}: {exc.strerror or exc}") from None


def add_ray_option(parser: argparse.ArgumentParser) -> None:
    """``--ray auto|ADDRESS``: run the command's work units on a Ray cluster (:mod:`bgai.util.ray_backend`)."""
    parser.add_argument(
        "--ray", metavar="auto|ADDRESS", default=None,
        help="run the work units on a Ray cluster (pip install 'bgai[ray]'): 'auto' joins the cluster started on "
        "this machine by 'ray start', else starts a local one; or a cluster address (HOST:6379). Workers: "
        "--workers W if W > 1, else one per CPU of the cluster. Results are the same as without --ray")


def parallel_backend(args: argparse.Namespace, command: str) -> tuple[str, int]:
    """``(backend, workers)`` for :func:`bgai.util.parallel.run_units` from ``--ray`` and ``--workers``; joins the
    Ray cluster (a note on stderr) when ``--ray`` is given.

    Raises:
        BgaiError: ray not installed, or the cluster cannot be joined.
    """
    workers = getattr(args, "workers", 1) or 1
    if getattr(args, "ray", None) is None:
        return "local", workers
    what = ray_backend.connect(args.ray)
    if workers <= 1:
        workers = max(1, ray_backend.cluster_cpus())
    print(f"bgai {command}: {what}; {workers} worker(s)", file=sys.stderr, flush=True)
    return "ray", workers
