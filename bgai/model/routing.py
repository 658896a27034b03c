"""Which net of a model bundle evaluates which position: position classes and the class rule.

A model bundle (:mod:`bgai.model.bundle`, exported sets :mod:`bgai.model.export`) may hold several nets, one per
group of *position classes*, as GNU Backgammon evaluates contact, crashed, race and bear-off positions with
different nets or databases (gnubg ``eval.c``, ``ClassifyPosition``).  The classes, numbered in gnubg's order:

=====  ===========  ====================================================================================
 0     ``over``     the game is over (one side has no checker left); always valued exactly, never by a net
 1     ``bearoff``  no contact and every checker of both sides in its home board (or borne off)
 2     ``race``     no contact (no checker of either side behind a checker of the other), not a bear-off
 3     ``crashed``  contact, and a side has crashed (gnubg's rule; :data:`CLASSIFIERS` ``'simple'`` never says so)
 4     ``contact``  every other position
=====  ===========  ====================================================================================

A *classifier* maps boards ``(N, 2, 25)`` int8 to class numbers ``(N,)``; bundles name theirs (recorded in the
file, so a model is always routed as it was trained).  ``'simple'`` (:func:`simple_classify`) tells over, bear-off,
race and contact apart and never answers ``crashed``; a classifier with gnubg's exact crashed rule can be added to
:data:`CLASSIFIERS` under another name.  A :class:`ClassRule` says which net (by index) takes each class; the name
``'all'`` stands for every class but ``over``.

This module is numpy-only (the numpy bot routes exported nets with it).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from bgai.core.board import as_batch
from bgai.errors import CheckpointError, InvalidPositionError

__all__ = [
    "CLASS_NAMES",
    "CLASS_OVER",
    "CLASS_BEAROFF",
    "CLASS_RACE",
    "CLASS_CRASHED",
    "CLASS_CONTACT",
    "ALL",
    "NET_CLASSES",
    "CLASSIFIERS",
    "DEFAULT_CLASSIFIER",
    "simple_classify",
    "get_classifier",
    "expand_classes",
    "ClassRule",
]

CLASS_OVER = 0
CLASS_BEAROFF = 1
CLASS_RACE = 2
CLASS_CRASHED = 3
CLASS_CONTACT = 4

#: Class names, indexed by class number.
CLASS_NAMES = ("over", "bearoff", "race", "crashed", "contact")
#: The name that stands for every class a net can take (all but ``over``).
ALL = "all"
#: Classes a net may evaluate (``over`` is always exact).
NET_CLASSES = CLASS_NAMES[1:]


def simple_classify(boards: np.ndarray) -> np.ndarray:
    """A simple class of each position: over, bear-off, race or contact (never crashed).

    Contact: some checker of one side is behind some checker of the other; with ``back`` the highest occupied
    column of a side (24 on the bar), that is ``back(side on roll) + back(opponent) > 22`` (the same point is
    column ``c`` for one side and ``23 - c`` for the other).  Bear-off: no contact, and both sides' checkers are
    all on columns 0..5.

    Args:
        boards: ``(N, 2, 25)`` (or ``(2, 25)``) int8 in bgai's layout (:mod:`bgai.core.board`).

    Returns:
        ``(N,)`` int8 class numbers (:data:`CLASS_NAMES`).

    Raises:
        InvalidPositionError: wrong shape or a checker count outside 0..15.
    """
    b = as_batch(boards)
    if b.size and (b.min() < 0 or b.max() > 15):
        raise InvalidPositionError("checker counts must be in 0..15 to classify a position")
    occupied = b > 0
    # highest occupied column of each side, -1 when it has no checker left
    back = np.where(occupied.any(axis=2), 24 - np.argmax(occupied[:, :, ::-1], axis=2), -1)
    out = np.full(b.shape[0], CLASS_CONTACT, dtype=np.int8)
    over = (back < 0).any(axis=1)
    race = ~over & (back[:, 0] + back[:, 1] <= 22)
    out[race] = CLASS_RACE
    out[race & (back.max(axis=1) <= 5)] = CLASS_BEAROFF
    out[over] = CLASS_OVER
    return out


#: Classifiers by name (recorded in bundle files and exports).
CLASSIFIERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"simple": simple_classify}
#: The classifier of new bundles.
DEFAULT_CLASSIFIER = "simple"


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

    def route(self, boards: np.ndarray, live: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """``[(net index, indices of the live boards it evaluates)]``, one entry per net with work.

        Args:
            boards: ``(N, 2, 25)`` int8.
            live: ``(N,)`` bool, the boards to evaluate (the others are finished games).
        """
        idx = np.flatnonzero(live)
        if self.n_nets == 1:  # one net for every class: no classification needed
            return [(0, idx)] if idx.size else []
        nets = self.net_of[self.classify(boards[idx]).astype(np.int64)]
        return [(k, idx[nets == k]) for k in range(self.n_nets) if (nets == k).any()]
