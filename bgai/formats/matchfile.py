"""Read and write match files by name: :func:`read_match` and :func:`write_match`.

Formats: ``'mat'`` (JellyFish ``.mat``, also ``.txt`` and ``.gam``: :mod:`bgai.formats.mat`) and ``'sgf'`` (GNU
Backgammon ``.sgf``: :mod:`bgai.formats.sgf`).  eXtreme Gammon's binary ``.xg`` files are not read: no parser
could be checked against a real ``.xg`` file here (export the match from XG as ``.mat`` instead).
"""

from __future__ import annotations

import os
import re

from bgai.errors import BgaiError
from bgai.formats.mat import format_mat, parse_mat
from bgai.formats.matchrecord import MatchRecord, MatchRecordError
from bgai.formats.sgf import format_sgf, parse_sgf
from bgai.util.fileio import atomic_write_bytes

__all__ = ["match_format", "read_match", "write_match"]

_EXTENSIONS = {".mat": "mat", ".txt": "mat", ".gam": "mat", ".sgf": "sgf", ".xg": "xg"}
_FORMATS = ("mat", "sgf")


def match_format(path: str | os.PathLike) -> str:
    """The format named by a file's extension: ``'mat'`` (.mat .txt .gam) or ``'sgf'`` (.sgf).

    Raises:
        BgaiError: an unknown extension, or ``.xg`` (not supported).
    """
    ext = os.path.splitext(os.fspath(path))[1].lower()
    fmt = _EXTENSIONS.get(ext)
    if fmt is None:
        raise BgaiError(f"cannot tell the match file format of {os.fspath(path)!r} from its extension: use .mat, "
                        ".txt, .gam or .sgf, or give format='mat' or 'sgf'")
    return _check_format(fmt)


def _check_format(fmt: str) -> str:
    if fmt == "xg":
        raise BgaiError("eXtreme Gammon .xg files are not supported: export the match from XG as a .mat file")
    if fmt not in _FORMATS:
        raise BgaiError(f"unknown match file format {fmt!r}: use 'mat' or 'sgf'")
    return fmt


def _decode(data: bytes, fmt: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if fmt == "sgf":
        m = re.search(rb"CA\[([^\]]*)\]", data[:4096])
        if m:
            charset = m.group(1).decode("ascii", "replace").strip()
            try:
                return data.decode(charset)
            except (LookupError, UnicodeDecodeError):
                pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # older JellyFish / FIBS files


def read_match(path_or_text: str | bytes | os.PathLike, format: str | None = None) -> MatchRecord:
    """Read a match or money session from a file or from its text, and check it by replaying every action.

    Args:
        path_or_text: a path (``str`` without a line break, or ``os.PathLike``), or the file's contents (``str``
            with at least one line break, or ``bytes``).
        format: ``'mat'`` or ``'sgf'``; None = from the file's extension, or for text: ``.sgf`` when it starts
            with ``(``, else ``.mat``.

    Returns:
        The :class:`~bgai.formats.matchrecord.MatchRecord`.

    Raises:
        MatchRecordError: malformed or illegal contents (the message names the file, line, game and move).
        BgaiError: the file cannot be read, or the format is unknown / unsupported.
    """
    path = None
    if isinstance(path_or_text, bytes):
        data = path_or_text
    elif isinstance(path_or_text, os.PathLike) or (isinstance(path_or_text, str) and "\n" not in path_or_text):
        path = os.fspath(path_or_text)
        fmt0 = _check_format(format) if format is not None else match_format(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise BgaiError(f"cannot read {path!r}: {exc.strerror or exc}") from None
        format = fmt0
    elif isinstance(path_or_text, str):
        data = None
    else:
        raise BgaiError(f"read_match takes a path or the file's text, got {type(path_or_text).__name__}")
    if format is None:
        probe = path_or_text if data is None else data.decode("latin-1")
        format = "sgf" if probe.lstrip("\ufeff \t\r\n").startswith("(") else "mat"
    format = _check_format(format)
    text = path_or_text if data is None else _decode(data, format)
    try:
        return parse_mat(text) if format == "mat" else parse_sgf(text)  # type: ignore[arg-type]
    except MatchRecordError as exc:
        if path is None:
            raise
        raise MatchRecordError(f"{path}: {exc}", line=exc.line, game=exc.game, move=exc.move) from None


def write_match(record: MatchRecord, path: str | os.PathLike, format: str | None = None) -> None:
    """Write ``record`` to ``path`` atomically (a complete file or none: :func:`bgai.util.fileio.atomic_write`).

    Args:
        record: the match; it is replayed and checked first.
        path: destination file.
        format: ``'mat'`` or ``'sgf'``; None = from the extension.

    Raises:
        MatchRecordError: the record breaks the rules or cannot be written in that format (a set-up position
            in a ``.mat`` file).
        BgaiError: unknown format, or the file cannot be written (message names the path).
    """
    fmt = _check_format(format) if format is not None else match_format(path)
    if not isinstance(record, MatchRecord):
        raise BgaiError(f"write_match needs a MatchRecord, got {type(record).__name__}")
    text = format_mat(record) if fmt == "mat" else format_sgf(record)
    atomic_write_bytes(path, text.encode("utf-8"))
