"""Journals of finished work units: how a long job (a big rollout, the analysis of many match files) resumes
after its driver was stopped, even by SIGKILL or a power cut.

A job whose units are pure functions of its settings (:mod:`bgai.util.parallel`) appends each unit's result to a
journal file as the unit finishes; run again with the same settings and the same journal, it takes the
recorded units from the file and runs only the others.  The results are then those of an uninterrupted run, bit
for bit, provided the job encodes its units' results exactly (floats as their IEEE bytes or as Python's
shortest round-trip ``repr``, which :mod:`json` writes).

File format (JSON Lines, UTF-8, one object per line, each ended by ``\\n``):

* line 1, the header: ``{"format": "bgai-journal", "version": 2, "job": KIND, "settings": {...}}``, where
  ``KIND`` names the job (``'rollout'``, ``'analyse'``) and ``settings`` is everything its result depends on
  (seed, trials, the agent: its model file's sha256 and its options, never the path as typed, so that
  ``model.pt`` and ``/abs/path/model.pt`` are one agent; the positions or the jobs' sha256, the units);
* each further line: ``{"unit": KEY, "result": ...}``, one finished unit (``KEY`` an integer, the unit's index
  in the job; its result as the job encodes it).

Writes.  The header is written atomically with the file (:func:`bgai.util.fileio.atomic_write_bytes`); each unit
is one ``write(2)`` of one whole line to a file opened with ``O_APPEND``, then ``fsync``.  A driver killed while
appending leaves at most a torn last line (no ``\\n``, or not JSON); opening the journal drops it (the file is
cut back to its last whole line) and that unit runs again.  A damaged line before the last is an error.

Errors (one line, :class:`bgai.errors.BgaiError`, naming the file): a file that is not a bgai journal, a journal
of another kind of job, made with another model file (both sha256 shown, shortened), or of other settings (the
first differing setting is named with both values).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from bgai.errors import BgaiError
from bgai.util.fileio import atomic_write_bytes, check_destination

__all__ = ["FORMAT", "VERSION", "Journal", "spec_file_path", "spec_file_sha256"]

FORMAT = "bgai-journal"
VERSION = 2  # 2: agents keyed by model sha256 and options (agent_identity), not by the spec as typed


def _canonical(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value))


_MISSING = object()


def _first_difference(old: Any, new: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The first place ``old`` and ``new`` differ (dicts key by key): ``(dotted path, old value, new value)``
    (:data:`_MISSING` for a key one side lacks), or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            path = f"{where}.{key}" if where else str(key)
            if key not in old or key not in new:
                return path, old.get(key, _MISSING), new.get(key, _MISSING)
            diff = _first_difference(old[key], new[key], path)
            if diff:
                return diff
        return None
    if old != new:
        return where or "settings", old, new
    return None


def _describe(diff: tuple[str, Any, Any]) -> str:
    path, old, new = diff
    return (f"{path}: {'missing' if old is _MISSING else _short(old)} there, "
            f"{'missing' if new is _MISSING else _short(new)} here")


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Journal:
    """An open journal file (module docstring): its finished units, and appending more.

    Args:
        path: the journal file; created (with its header) if missing.  Its directory must exist.
        job: the kind of job (``'rollout'``, ``'analyse'``).
        settings: everything the job's result depends on (JSON-encodable; tuples are compared as lists).

    Attributes:
        path: the file.
        done: ``{unit key: result}`` of the units recorded, as decoded from JSON (a unit recorded twice: the
            first record counts).

    Raises:
        BgaiError: ``path`` is not a bgai journal, is the journal of another job or of other settings, a line
            before the last is damaged, or the file cannot be read or written.
    """

    def __init__(self, path: str | os.PathLike, job: str, settings: dict) -> None:
        self.path = os.fspath(path)
        self.job = job
        self.settings = _canonical(settings)
        self.done: dict[int, Any] = {}
        self._fd: int | None = None
        if os.path.exists(self.path):
            self._load()
        else:
            check_destination(self.path)
            header = {"format": FORMAT, "version": VERSION, "job": job, "settings": self.settings}
            atomic_write_bytes(self.path, (json.dumps(header) + "\n").encode("utf-8"))
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise BgaiError(f"cannot write journal {self.path!r}: {exc.strerror or exc}") from None

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise BgaiError(f"cannot read journal {self.path!r}: {exc.strerror or exc}") from None
        lines = data.split(b"\n")  # the last piece: b'' after a final newline, else a torn line
        good_end = 0
        for n, raw in enumerate(lines[:-1], 1):
            try:
                record = json.loads(raw)
            except ValueError:
                record = None
            if n == 1:
                self._check_header(record)
            elif not isinstance(record, dict) or not isinstance(record.get("unit"), int) or "result" not in record:
                if n == len(lines) - 1:  # the last whole line: torn by a kill between write and newline? drop it
                    break
                raise BgaiError(f"journal {self.path!r} is damaged at line {n}: delete it to start again")
            else:
                self.done.setdefault(record["unit"], record["result"])
            good_end += len(raw) + 1
        if len(lines) == 1:  # not even a whole header line
            self._check_header(None)
        if good_end < len(data):
            try:
                os.truncate(self.path, good_end)
            except OSError as exc:
                raise BgaiError(f"cannot repair journal {self.path!r}: {exc.strerror or exc}") from None

    def _check_header(self, header: Any) -> None:
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise BgaiError(f"{self.path!r} is not a bgai journal: give another file")
        if header.get("version") != VERSION:
            raise BgaiError(f"journal {self.path!r} has version {header.get('version')!r}, this bgai reads "
                            f"{VERSION}: delete it to start again")
        if header.get("job") != self.job:
            raise BgaiError(f"journal {self.path!r} was made by another kind of job ({header.get('job')}), not by "
                            f"this {self.job}: give another file")
        diff = _first_difference(header.get("settings"), self.settings)
        if diff is not None and diff[0].rpartition(".")[2] == "model_sha256":
            def sha(v: Any) -> str:
                return f"sha256 {v[:12]}..." if isinstance(v, str) else "no model file"
            raise BgaiError(f"journal {self.path!r} was made with another model ({sha(diff[1])} there, "
                            f"{sha(diff[2])} here): give another file, or delete it to start again")
        if diff is not None:
            raise BgaiError(f"journal {self.path!r} is of another {self.job} ({_describe(diff)}): give another "
                            "file, or delete it to start again")

    def record(self, key: int, result: Any) -> None:
        """Append one finished unit (one line, one ``write``, then ``fsync``).

        Raises:
            BgaiError: the journal is closed, or the write fails (disk full); the message names the file.
        """
        if self._fd is None:
            raise BgaiError(f"journal {self.path!r} is closed")
        line = (json.dumps({"unit": int(key), "result": result}) + "\n").encode("utf-8")
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as exc:
            raise BgaiError(f"cannot write journal {self.path!r}: {exc.strerror or exc}") from None

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def spec_file_path(spec: str | None) -> str | None:
    """The existing file an agent spec names: the spec itself, else its longest part before a ``:`` that is an
    existing file (``model.pt:ply=1``, ``model.pt:ply=1:bearoff=db`` -> ``model.pt``); None when there is none (a
    built-in agent such as ``gnubg``)."""
    if not spec:
        return None
    candidate = spec
    while candidate:
        if os.path.isfile(candidate):
            return candidate
        candidate = candidate.rpartition(":")[0]
    return None


def spec_file_sha256(spec: str | None) -> str | None:
    """The sha256 (64 hex digits) of the model file an agent spec names (:func:`spec_file_path`), or None when it
    names no existing file.

    Raises:
        BgaiError: the file exists but cannot be read.
    """
    path = spec_file_path(spec)
    if path is None:
        return None
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise BgaiError(f"cannot read model file {path!r}: {exc.strerror or exc}") from None
    return h.hexdigest()
