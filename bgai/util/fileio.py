"""Atomic file writing: the one place bgai writes output files (reports, exports, checkpoints).

:func:`atomic_write` never leaves a half-written file at the destination: the content goes to a temporary
file *in the destination's directory* (same file system, so the final rename is atomic), is flushed and
``fsync``-ed, then renamed over the destination with :func:`os.replace` (POSIX ``rename(2)``: readers see
either the old file or the complete new one).  On any failure (including ``KeyboardInterrupt`` inside the
write callback) the temporary file is removed and the destination is left as it was.

Permissions: the temporary file is created with mode ``0o666`` filtered by the process umask (the mode
``open(path, 'w')`` would give, usually ``0644``), not the ``0600`` of :func:`tempfile.mkstemp`; it is
created with ``O_CREAT | O_EXCL`` under a random name, so no global umask juggling (not thread-safe) is
needed.  An existing destination's mode is not carried over.  A destination that is a symbolic link is
replaced by a regular file (the link itself, not its target, is replaced, as ``rename(2)`` does).

Directories are never created: a missing directory is an error (the same rule for every subcommand that
writes a file: ``bgai eval --json``, ``bgai export --out``, checkpoints).

Errors: every failure of the file system (missing or non-writable directory, a destination that is a
directory, a full disk) raises :class:`bgai.errors.BgaiError` whose message quotes the destination path;
an exception raised by the caller's ``write`` callback that is not an ``OSError`` propagates unchanged.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import stat
from typing import Any, BinaryIO, Callable

from bgai.errors import BgaiError

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_json", "check_destination", "ensure_directory",
           "TEMP_NAME", "stale_temps", "write_file_set"]

#: Attempts at finding an unused temporary name (each is 48 random bits; a clash is practically impossible).
_TEMP_ATTEMPTS = 100


def _fail(path: str, exc: OSError) -> BgaiError:
    """A :class:`BgaiError` naming ``path`` and what the operating system said."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return BgaiError(f"cannot write {path!r}: {reason[:1].lower()}{reason[1:]}")


def check_destination(path: str | os.PathLike, *, probe: bool = False) -> str:
    """Check, before any long work, that ``path`` could be written: its directory exists, ``path`` is not one.

    Args:
        path: the file to be written later (by :func:`atomic_write`).
        probe: also create and remove a temporary file beside it, as :func:`atomic_write` will (this finds
            what permissions alone do not tell, e.g. ``/proc`` or a read-only file system, also for root).

    Returns:
        The absolute path of the destination's directory.

    Raises:
        BgaiError: the directory is missing or not a directory, or ``path`` is a directory; with ``probe``, a
            temporary file cannot be created there (message names ``path``).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise BgaiError(f"cannot write {path!r}: it is a directory")
    if not os.path.exists(directory):
        raise BgaiError(f"cannot write {path!r}: directory {directory!r} does not exist")
    if not os.path.isdir(directory):
        raise BgaiError(f"cannot write {path!r}: {directory!r} is not a directory")
    if probe:
        fd, tmp = _create_temp(path, directory)
        os.close(fd)
        os.unlink(tmp)
    return directory


def ensure_directory(path: str | os.PathLike, what: str = "folder") -> str:
    """Create the directory ``path`` (and its parents) if needed and check that files can be created in it.

    Args:
        path: the directory.
        what: how to name it in errors (e.g. ``'run folder'``).

    Returns:
        ``path`` as a string.

    Raises:
        BgaiError: it cannot be created (a file is in the way, a read-only or special file system, no
            permission) or is not writable; the message names ``what`` and ``path``.
    """
    path = os.fspath(path)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise BgaiError(f"cannot create {what} {path!r}: a file of that name exists") from None
    except OSError as exc:
        raise BgaiError(f"cannot create {what} {path!r}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BgaiError(f"cannot write in {what} {path!r}: permission denied")
    return path


def _create_temp(path: str, directory: str) -> tuple[int, str]:
    """Create a new empty temporary file beside ``path``; ``(fd, temp path)``.  Mode ``0o666 & ~umask``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    base = os.path.basename(path)
    for _ in range(_TEMP_ATTEMPTS):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise BgaiError(
                    f"cannot write {path!r}: directory {directory!r} is not writable ({exc.strerror})"
                ) from None
            raise _fail(path, exc) from None
    raise BgaiError(f"cannot write {path!r}: no free temporary file name in {directory!r}")


def _fsync_directory(directory: str) -> None:
    """Make the rename durable (``fsync`` of the directory); silently skipped where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], Any]) -> None:
    """Write a file atomically: ``write(fh)`` fills a temporary binary file, which then replaces ``path``.

    Args:
        path: the destination file.  Its directory must exist (it is not created).  An existing destination
            that is not a regular file or a directory (``/dev/null``, ``/dev/stdout``, a FIFO) is written
            directly, not replaced (replacing it would turn a device into a plain file).
        write: called once with a binary file object open for writing (position 0, empty file); its
            return value is ignored.  It must not close the file.

    Raises:
        BgaiError: the directory does not exist, is not a directory or is not writable; ``path`` is a
            directory; or any other ``OSError`` while writing, syncing or renaming (e.g. disk full).  The
            message names ``path``.  Nothing is left behind: the temporary file is removed and an existing
            destination is unchanged.
        Exception: whatever ``write`` raises (other than ``OSError``), unchanged, after the same clean-up.
    """
    path = os.fspath(path)
    if _is_special(path):
        _write_special(path, write)
        return
    directory = check_destination(path)
    fd, tmp = _create_temp(path, directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, IsADirectoryError):
            raise BgaiError(f"cannot write {path!r}: it is a directory") from None
        if isinstance(exc, OSError):
            raise _fail(path, exc) from None
        raise
    _fsync_directory(directory)


def _is_special(path: str) -> bool:
    """Whether ``path`` exists as something other than a regular file or a directory (a device, a FIFO)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_special(path: str, write: Callable[[BinaryIO], Any]) -> None:
    """Write into a device or FIFO in place (:func:`atomic_write`); ``OSError`` becomes a one-line BgaiError."""
    try:
        with open(path, "wb") as fh:
            write(fh)
            fh.flush()
    except OSError as exc:
        raise _fail(path, exc) from None


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write`; same errors)."""
    atomic_write(path, lambda fh: fh.write(data))


def atomic_write_json(path: str | os.PathLike, data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as UTF-8 JSON (``indent`` spaces, trailing newline) to ``path`` atomically.

    The data is serialised before any file is created, so a value JSON cannot represent (``TypeError`` /
    ``ValueError`` from :func:`json.dumps`) leaves no trace.  Non-finite floats are written as ``NaN`` /
    ``Infinity`` like :func:`json.dump` does.

    Raises:
        BgaiError: see :func:`atomic_write`.  TypeError: ``data`` holds something JSON cannot encode.
    """
    text = json.dumps(data, indent=indent) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


#: Names of the temporary files :func:`atomic_write` creates beside a destination ``NAME``:
#: ``.NAME.<12 hex digits>.tmp``.
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{12}\.tmp$")


def stale_temps(directory: str | os.PathLike, names: Callable[[str], bool]) -> list[str]:
    """Temporary files :func:`atomic_write` left in ``directory`` (a process killed while writing), for the
    destinations ``names`` accepts; only names of :data:`TEMP_NAME`'s pattern, regular files, are listed.

    Args:
        directory: the folder to look in (a missing one has none).
        names: ``names(destination file name) -> bool``, e.g. ``lambda n: n in ('last.pt', 'best.pt')``.

    Returns:
        Their paths, sorted.
    """
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    out = []
    for entry in entries:
        m = TEMP_NAME.match(entry)
        path = os.path.join(directory, entry)
        if m and names(m.group("name")) and os.path.isfile(path) and not os.path.islink(path):
            out.append(path)
    return sorted(out)


def write_file_set(files: dict[str, bytes]) -> None:
    """Replace several files as one set: all of them, or none.

    Every file is first written to a temporary file beside it (:func:`atomic_write`'s naming, fsync); only
    when all are written are they renamed over their destinations.  Existing destinations are kept as hard links
    until every rename has succeeded, so a failed rename puts the old files back.  On any failure the
    temporaries are removed and the old set is left as it was.

    Args:
        files: ``{destination path: content}``.

    Raises:
        BgaiError: a destination that cannot be written (missing or read-only folder, a directory in the way,
            a full disk); the message names the file.
    """
    temps: dict[str, str] = {}
    backups: dict[str, str] = {}
    done: list[str] = []
    try:
        for path, data in files.items():
            directory = check_destination(path)
            fd, tmp = _create_temp(path, directory)
            temps[path] = tmp
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise _fail(path, exc) from None
        for path in files:
            if os.path.isfile(path) and not os.path.islink(path):
                fd, keep = _create_temp(path, os.path.dirname(os.path.abspath(path)))
                os.close(fd)
                os.unlink(keep)
                os.link(path, keep)
                backups[path] = keep
        for path, tmp in temps.items():
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise _fail(path, exc) from None
            done.append(path)
    except BaseException:
        for path in reversed(done):  # put the old files back
            try:
                if path in backups:
                    os.replace(backups.pop(path), path)
                else:
                    os.unlink(path)
            except OSError:
                pass
        for tmp in list(temps.values()) + list(backups.values()):
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    for keep in backups.values():
        try:
            os.unlink(keep)
        except OSError:
            pass
    for directory in {os.path.dirname(os.path.abspath(p)) for p in files}:
        _fsync_directory(directory)


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes as 64 hex digits, read in 1 MiB blocks.

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
