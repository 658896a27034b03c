"""Which net of a model bundle evaluates which position: the class rule.

A model bundle (:mod:`bgai.model.bundle`, exported sets :mod:`bgai.model.export`) may hold several nets, one per
group of *position classes*, as GNU Backgammon evaluates contact, crashed, race and bear-off positions with
different nets or databases (gnubg ``eval.c``, ``ClassifyPosition``).  The classes are those of
:mod:`bgai.model.classes` (numbered in gnubg's order):

=====  ===========  ====================================================================================
 0     ``over``     the game is over (one side has no checker left); always valued exactly, never by a net
 1     ``bearoff``  no contact and every checker of both sides in its home board (or borne off)
 2     ``race``     no contact (no checker of either side behind a checker of the other), not a bear-off
 3     ``crashed``  contact, and a side has crashed (gnubg's rule)
 4     ``contact``  every other position
=====  ===========  ====================================================================================

A *classifier* maps boards ``(N, 2, 25)`` int8 to class numbers ``(N,)``; bundles name theirs (recorded in the
file, so a model is always routed as it was trained): :data:`CLASSIFIERS` has ``'gnubg'``
(:func:`bgai.model.classes.classify`, GNU Backgammon's exact classes), the default.  A :class:`ClassRule` says
which net (by index) takes each class; the name ``'all'`` stands for every class but ``over``.

Databases
---------
A class may be given to an exact evaluator instead of a net, as GNU Backgammon values bear-offs from its bear-off
databases rather than a net (``eval.c``: ``EvaluatePositionFull`` calls the bear-off evaluators for
``CLASS_BEAROFF1`` / ``CLASS_BEAROFF2``).  :data:`DATABASES` lists the kinds bgai has: ``'bearoff-os'``, the
one-sided bear-off database of :mod:`bgai.model.bearoff` (built by bgai, cached under the user's data directory;
nothing of it is stored in a model file), for the class ``bearoff``.  A :class:`DatabaseEntry` is such an entry of
a bundle or an export set (``{'kind', 'classes', 'version'}`` in files); a :class:`ClassRule` counts database
entries after the nets (entry ``k >= len(nets)`` is database ``k - len(nets)``).

This module is numpy-only (the numpy bot routes exported nets and databases with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bgai.errors import CheckpointError
from bgai.model import bearoff
from bgai.model.classes import CLASS_NAMES, CLASS_OVER, CLASS_RACE, classify

__all__ = [
    "ALL",
    "NET_CLASSES",
    "CLASSIFIERS",
    "DEFAULT_CLASSIFIER",
    "get_classifier",
    "expand_classes",
    "ClassRule",
    "BEAROFF_DATABASE",
    "DATABASES",
    "DatabaseEntry",
    "all_home",
]

#: The name that stands for every class a net can take (all but ``over``).
ALL = "all"
#: Classes a net may evaluate (``over`` is always exact), in class-number order.
NET_CLASSES = CLASS_NAMES[CLASS_OVER + 1 :]

#: Classifiers by name (recorded in bundle files and exports).
CLASSIFIERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"gnubg": classify}
#: The classifier of new bundles.
DEFAULT_CLASSIFIER = "gnubg"


def get_classifier(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The classifier called ``name``.

    Raises:
        CheckpointError: no such classifier in this bgai (a model routed by a classifier it does not know).
    """
    try:
        return CLASSIFIERS[name]
    except (KeyError, TypeError):
        raise CheckpointError(
            f"model uses the position classifier {name!r}, unknown to this bgai (known: {', '.join(CLASSIFIERS)})"
        ) from None


def expand_classes(names) -> tuple[str, ...]:
    """A net's class list with ``'all'`` expanded, in class order: ``['all']`` -> ``('bearoff', 'race',
    'crashed', 'contact')``.

    Raises:
        CheckpointError: not a list of names, an unknown name, ``'over'`` (never a net's), or an empty list.
    """
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise CheckpointError(f"a net's classes must be a non-empty list of names, got {names!r}")
    out: set[str] = set()
    for n in names:
        if n == ALL:
            out.update(NET_CLASSES)
        elif n in NET_CLASSES:
            out.add(n)
        else:
            raise CheckpointError(f"unknown position class {n!r} for a net; known: {ALL}, {', '.join(NET_CLASSES)}")
    return tuple(c for c in NET_CLASSES if c in out)


#: Columns of a flattened ``(2, 25)`` board outside the home boards: points 7..24 and the bar of both rows.
_OUTSIDE = np.r_[6:25, 31:50]
#: Byte offsets in a flattened int8 board of 8-byte words covering: columns 6..24 (points 7..24 and the bar) of
#: both rows, all of row 0 (bytes 0..24), all of row 1 (bytes 25..49).  Words may overlap; none reads past the
#: board's last byte (49), so a C-contiguous batch can be read as strided uint64 words without copying.
_WORDS_OUTSIDE = (6, 14, 17, 31, 39, 42)
_WORDS_ROW0 = (0, 8, 16, 17)
_WORDS_ROW1 = (25, 33, 41, 42)


def _any_bytes(b: np.ndarray, offsets: tuple[int, ...]) -> np.ndarray:
    """``(N,)`` bool: some byte of the 8-byte words at ``offsets`` of each 50-byte board of the C-contiguous int8
    batch ``b`` is nonzero (an OR of unaligned strided uint64 views)."""
    n = b.shape[0]
    acc = np.ndarray((n,), dtype=np.uint64, buffer=b, offset=offsets[0], strides=(50,)).copy()
    for o in offsets[1:]:
        acc |= np.ndarray((n,), dtype=np.uint64, buffer=b, offset=o, strides=(50,))
    return acc != 0


def all_home(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: both sides have checkers on the board, all on their home points (columns 0..5; none on
    points 7..24 or the bar): GNU Backgammon's bear-off class (:data:`bgai.model.classes.CLASS_BEAROFF`) and the
    domain of :mod:`bgai.model.bearoff` (:func:`bgai.model.bearoff.is_bearoff` without its checks).  About 0.02 us
    a board (a C-contiguous int8 batch is read as a few 8-byte words per board; other batches take a slower
    path with the same result), against about 4 us for :func:`bgai.model.classes.classify`, for the evaluation
    paths; boards ``(N, 2, 25)`` of legal counts.
    """
    b = np.asarray(boards)
    if b.dtype == np.int8 and b.ndim == 3 and b.shape[1:] == (2, 25) and b.flags.c_contiguous and b.shape[0]:
        return ~_any_bytes(b, _WORDS_OUTSIDE) & _any_bytes(b, _WORDS_ROW0) & _any_bytes(b, _WORDS_ROW1)
    f = b.reshape(b.shape[0], 50)
    return ~f[:, _OUTSIDE].any(axis=1) & f[:, :25].any(axis=1) & f[:, 25:].any(axis=1)


#: The one-sided bear-off database's kind (:mod:`bgai.model.bearoff`).
BEAROFF_DATABASE = "bearoff-os"
#: Database kinds: kind -> ``(classes it can value, its content version)``.
DATABASES: dict[str, tuple[tuple[str, ...], int]] = {BEAROFF_DATABASE: (("bearoff",), bearoff.FORMAT_VERSION)}


@dataclass(frozen=True)
class DatabaseEntry:
    """A database that values some position classes exactly, in place of a net (module docstring, Databases).

    Attributes:
        kind: a key of :data:`DATABASES` (``'bearoff-os'``).
        classes: the classes it values (those its kind can value; ``('bearoff',)``).
        version: the content version of the database it stands for (:data:`bgai.model.bearoff.FORMAT_VERSION`).
    """

    kind: str = BEAROFF_DATABASE
    classes: tuple[str, ...] = ("bearoff",)
    version: int = bearoff.FORMAT_VERSION

    @classmethod
    def from_dict(cls, entry) -> "DatabaseEntry":
        """The entry of a file's ``{'kind', 'classes', 'version'}`` mapping, checked.

        Raises:
            CheckpointError: not a mapping, an unknown kind, classes the kind cannot value, or another version
                than this bgai's database.
        """
        if not isinstance(entry, dict):
            raise CheckpointError(f"malformed database entry {entry!r}: expected a mapping")
        kind = entry.get("kind")
        if kind not in DATABASES:
            raise CheckpointError(f"unknown database kind {kind!r} in the model; known: {', '.join(DATABASES)}")
        able, version = DATABASES[kind]
        classes = entry.get("classes", list(able))
        if isinstance(classes, str) or not isinstance(classes, (list, tuple)) or not classes or any(
                c not in able for c in classes):
            raise CheckpointError(f"database {kind!r} can value the classes {', '.join(able)}, not {classes!r}")
        if entry.get("version", version) != version:
            raise CheckpointError(f"the model wants version {entry.get('version')!r} of database {kind!r}; this "
                                  f"bgai has version {version}")
        return cls(str(kind), tuple(str(c) for c in classes), int(version))

    def describe(self) -> dict:
        """``{'kind', 'classes', 'version'}`` (the file layout)."""
        return {"kind": self.kind, "classes": list(self.classes), "version": self.version}

    def load(self) -> None:
        """Read the database into memory now (built first when not cached, a few seconds: :func:`bgai.model.
        bearoff.get_database`) rather than at its first position: for a server, whose first bear-off request would
        otherwise wait for it (and every request behind that one)."""
        bearoff.get_database()

    def probabilities(self, boards: np.ndarray, validate: bool = True) -> np.ndarray:
        """``(N, 5)`` float64 exact probabilities for the side on roll of ``(N, 2, 25)`` boards of its classes
        (:func:`bgai.model.bearoff.bearoff_probabilities`; the database is built on first use if not cached).
        ``validate=False`` skips the checks, for boards routed here by :class:`ClassRule`.

        Raises:
            InvalidPositionError: a board outside the database (with ``validate``).
        """
        return bearoff.get_database().probabilities(boards, validate=validate).astype(np.float64)


class ClassRule:
    """The class rule of a bundle: which net (index) evaluates each position class.

    Args:
        net_classes: per net, its class names (``['all']``, ``['race', 'bearoff']`` ...).
        classifier: the classifier's name (:data:`CLASSIFIERS`).

    Raises:
        CheckpointError: a class covered by two nets, a class no net covers, or an unknown classifier or class.
    """

    def __init__(self, net_classes: list, classifier: str = DEFAULT_CLASSIFIER):
        self.classifier_name = str(classifier)
        self.classify = get_classifier(self.classifier_name)
        self.net_of = np.full(len(CLASS_NAMES), -1, dtype=np.int64)  # class number -> net index (-1: over)
        for k, names in enumerate(net_classes):
            for c in expand_classes(list(names)):
                i = CLASS_NAMES.index(c)
                if self.net_of[i] >= 0:
                    raise CheckpointError(f"position class {c!r} is given to two nets ({self.net_of[i]} and {k})")
                self.net_of[i] = k
        missing = [c for c in NET_CLASSES if self.net_of[CLASS_NAMES.index(c)] < 0]
        if missing:
            raise CheckpointError(f"no net for the position class(es) {', '.join(missing)}")
        # a board the classifier calls over but that is still to be valued (the side on roll has no checker
        # left, which play never produces) goes to the race net rather than nowhere
        self.net_of[CLASS_OVER] = self.net_of[CLASS_RACE]
        self.n_nets = len(net_classes)
        # one entry for bear-offs and another for every other class (a net and the bear-off database): routed by
        # the cheap all_home test instead of the classifier
        rest = {int(self.net_of[CLASS_NAMES.index(c)]) for c in NET_CLASSES if c != "bearoff"}
        bear = int(self.net_of[CLASS_NAMES.index("bearoff")])
        self._home_split = (bear, rest.pop()) if (self.classifier_name == "gnubg" and len(rest) == 1
                                                  and bear not in rest) else None

    @property
    def uses_classifier(self) -> bool:
        """Whether :meth:`route` calls :attr:`classify` (the position classifier).

        False for one entry (net or database) covering every class, and for exactly one net plus the bear-off
        database under the ``gnubg`` classifier (split by the cheap :func:`all_home` test); True otherwise, e.g. a
        contact / crashed / race bundle.  Entries count nets and databases alike (:attr:`n_nets`).
        """
        return self.n_nets > 1 and self._home_split is None

    def route(self, boards: np.ndarray, live: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """``[(net index, indices of the live boards it evaluates)]``, one entry per net with work.

        Args:
            boards: ``(N, 2, 25)`` int8.
            live: ``(N,)`` bool, the boards to evaluate (the others are finished games).
        """
        idx = np.flatnonzero(live)
        if self.n_nets == 1:  # one net for every class: no classification needed
            return [(0, idx)] if idx.size else []
        if self._home_split is not None:
            bear, other = self._home_split
            sub = boards if idx.size == boards.shape[0] else boards[idx]
            # a live board with an empty row 0 (never produced by play) is "over" to the classifier: not all_home
            home = all_home(sub)
            if not home.any():
                return [(other, idx)]
            parts = sorted([(bear, idx[home]), (other, idx[~home])])
            return [(k, i) for k, i in parts if i.size]
        nets = self.net_of[self.classify(boards if idx.size == boards.shape[0] else boards[idx])]
        if idx.size and (nets == nets[0]).all():  # one class for all: the common case of one position's plays
            return [(int(nets[0]), idx)]
        return [(k, idx[nets == k]) for k in range(self.n_nets) if (nets == k).any()]
