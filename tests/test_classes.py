"""Position classes (bgai.model.classes) on hand-built positions and against GNU Backgammon's ClassifyPosition.

gnubg_nn.classify takes gnubg's board (opponent's row first); its classes 1 (bearoff2) and 2 (bearoff1) are
both bgai's CLASS_BEAROFF.  The cross-check runs on every afterstate of the real-play fixture positions
(tests/data/reference_positions.npz, all 21 rolls: several hundred thousand positions) and on random races,
bear-offs and low-checker contact positions built to hit the crashed rule's edges.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import board_from_points as board

from bgai.core.board import flip, starting_board
from bgai.errors import InvalidPositionError
from bgai.model.classes import (
    CLASS_BEAROFF,
    CLASS_CONTACT,
    CLASS_CRASHED,
    CLASS_NAMES,
    CLASS_OVER,
    CLASS_RACE,
    FROM_GNUBG_NN,
    classify,
)


def gnubg_classes(boards):
    import gnubg_nn

    return np.array(
        [gnubg_nn.classify([b[1].tolist(), b[0].tolist()]) for b in np.asarray(boards, dtype=np.int64)]
    )


# ---- hand-built positions ----------------------------------------------------------------------------------

def test_constants_keep_gnubgs_order():
    assert (CLASS_OVER, CLASS_BEAROFF, CLASS_RACE, CLASS_CRASHED, CLASS_CONTACT) == (0, 1, 2, 3, 4)
    assert CLASS_NAMES == ("over", "bearoff", "race", "crashed", "contact")
    assert FROM_GNUBG_NN.tolist() == [0, 1, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "b, expected",
    [
        (starting_board(), CLASS_CONTACT),
        # the side on roll has borne off all 15: over, whatever the opponent has
        (board({}, {1: 5, 25: 1}), CLASS_OVER),
        (board({3: 2}, {}), CLASS_OVER),
        # all checkers of both sides in their home boards: bear-off (any number left)
        (board({1: 15}, {6: 15}), CLASS_BEAROFF),
        (board({1: 1}, {2: 3, 4: 2}), CLASS_BEAROFF),
        # one checker on the 7-point: race, not bear-off
        (board({7: 1, 2: 3}, {6: 2}), CLASS_RACE),
        # no contact: my rearmost on my 13-point (column 12), the opponent's on its 11-point (column 10):
        # 12 + 10 = 22, just past each other
        (board({13: 15}, {11: 15}), CLASS_RACE),
        # my 14-point (column 13) against the opponent's 12-point (column 11): 13 + 11 = 24, contact
        (board({14: 14, 1: 1}, {12: 15}), CLASS_CONTACT),
        # a checker on the bar is always in contact with an opponent that still has checkers
        (board({25: 1, 6: 14}, {6: 15}), CLASS_CONTACT),
        # ... and the opponent with all 15 on its 1-point has crashed
        (board({25: 1, 6: 14}, {1: 15}), CLASS_CRASHED),
    ],
)
def test_hand_positions(b, expected):
    assert classify(b).tolist() == [expected]
    assert classify(flip(b)).tolist() == [expected]  # the class does not depend on who is on roll


# crashed: contact (my checker on the bar against an opponent with checkers), and a side with few checkers left
@pytest.mark.parametrize(
    "me, crashed",
    [
        ({25: 1, 6: 5}, True),  # 6 checkers left
        ({25: 1, 6: 6}, False),  # 7 left, none on the 1- or 2-points
        ({25: 1, 6: 3, 1: 5}, True),  # 9 left, 5 on the 1-point: 9 - 5 = 4 <= 6
        ({25: 1, 6: 6, 1: 2}, False),  # 9 - 2 = 7, the 2-point not piled
        ({25: 1, 6: 5, 1: 2, 2: 3}, False),  # 11 - 2 = 9; 11 - 2 - 3 + 1 = 7
        ({25: 1, 6: 4, 1: 2, 2: 3}, True),  # 10 - 2 - 3 + 1 = 6
        ({25: 1, 6: 5, 1: 2, 2: 1}, False),  # 9 - 2 = 7, the 2-point not piled
        ({25: 1, 6: 3, 1: 1, 2: 3}, True),  # 1-point not piled: 8 - 3 + 1 = 6
        ({25: 1, 6: 4, 1: 1, 2: 3}, False),  # 9 - 3 + 1 = 7
        ({25: 1, 6: 5, 1: 1}, False),  # 7 left, n2 = 0: 7 + 1 = 8 (gnubg's unsigned "tot <= 5")
        ({25: 1, 6: 4, 1: 1}, True),  # 6 left
    ],
)
def test_crashed_rule(me, crashed):
    b = board(me, {1: 2, 6: 13})  # the opponent has 15 on board, nothing piled on its 1-/2-points
    got = classify(b)[0]
    assert got == (CLASS_CRASHED if crashed else CLASS_CONTACT)
    pytest.importorskip("gnubg_nn")
    assert FROM_GNUBG_NN[gnubg_classes([b])[0]] == got


def test_rejects_bad_boards():
    with pytest.raises(InvalidPositionError):
        classify(np.zeros((3, 25), dtype=np.int8))
    bad = starting_board()
    bad[0, 3] = -1
    with pytest.raises(InvalidPositionError):
        classify(bad)


# ---- cross-check with gnubg ----------------------------------------------------------------------------------

def random_positions(rng, n, kind):
    """``n`` random legal boards: ``race`` (no contact), ``bearoff`` (all home) or ``low`` (contact, few checkers,
    checkers piled on the 1- and 2-points)."""
    out = np.zeros((n, 2, 25), dtype=np.int8)
    for k in range(n):
        b = out[k]
        if kind == "bearoff":
            for side in (0, 1):
                for _ in range(rng.integers(1, 16)):
                    b[side, rng.integers(0, 6)] += 1
        elif kind == "race":
            split = rng.integers(1, 23)  # my checkers on columns < split; the opponent's on its columns < 23 - split
            for side, hi in ((0, split), (1, 23 - split)):
                for _ in range(rng.integers(1, 16)):
                    b[side, rng.integers(0, min(hi, 23))] += 1
        else:
            for side in (0, 1):
                left = int(rng.integers(3, 16))
                b[side, rng.integers(18, 25)] += 1  # a back checker: contact is likely
                b[side, 0] = rng.integers(0, left // 2 + 1)
                b[side, 1] = rng.integers(0, left - 1 - b[side, 0] + 1)
                for _ in range(left - 1 - b[side, 0] - b[side, 1]):
                    b[side, rng.integers(2, 24)] += 1
            # a point cannot be held by both sides: give clashes to the side on roll
            clash = (b[0, :24] > 0) & (b[1, 23::-1] > 0)
            b[1, 23::-1][clash] = 0
    return out


def test_classes_equal_gnubg_on_real_play_afterstates(reference_afterstates):
    pytest.importorskip("gnubg_nn")
    after = reference_afterstates
    assert len(after) >= 100_000
    mine = classify(after)
    ref = FROM_GNUBG_NN[gnubg_classes(after)]
    assert int((mine != ref).sum()) == 0
    counts = np.bincount(mine, minlength=5)
    assert (counts >= 50).all(), counts  # every class is represented


@pytest.mark.parametrize("kind", ["race", "bearoff", "low"])
def test_classes_equal_gnubg_on_random_positions(kind):
    pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng({"race": 1, "bearoff": 2, "low": 3}[kind])
    boards = random_positions(rng, 5000, kind)
    mine = classify(boards)
    ref = FROM_GNUBG_NN[gnubg_classes(boards)]
    assert int((mine != ref).sum()) == 0
    if kind == "race":
        assert set(np.unique(mine)) >= {CLASS_RACE, CLASS_BEAROFF}
    elif kind == "bearoff":
        assert set(np.unique(mine)) <= {CLASS_BEAROFF, CLASS_OVER} and (mine == CLASS_BEAROFF).sum() > 4000
    else:
        assert (mine == CLASS_CRASHED).sum() > 2000 and (mine == CLASS_CONTACT).sum() > 50


# ---- the compiled kernel against the numpy reference -------------------------------------------------------

def _kernel_or_skip():
    from bgai.model import classes

    if not classes.use_compiled():
        pytest.skip("compiled kernels unavailable (numba missing or BGAI_NUMBA=0)")
    classes.use_compiled(False)  # back to the default choice for the other tests


def test_compiled_classes_equal_numpy(reference_afterstates):
    _kernel_or_skip()
    rng = np.random.default_rng(7)
    parts = [reference_afterstates] + [random_positions(rng, 3000, kind) for kind in ("race", "bearoff", "low")]
    over = np.zeros((3, 2, 25), dtype=np.int8)
    over[0, 1, 5] = 3  # the side on roll has no checker
    over[1, 0, 24] = 1  # the opponent has none (a checker on the bar)
    parts.append(over)  # and an empty board
    boards = np.concatenate(parts)
    numpy_classes = classify(boards, compiled=False)
    assert np.array_equal(classify(boards, compiled=True), numpy_classes)
    assert set(np.unique(numpy_classes)) == {CLASS_OVER, CLASS_BEAROFF, CLASS_RACE, CLASS_CRASHED, CLASS_CONTACT}
    # one board at a time, as a server classifies (the first few)
    for b in boards[::5000]:
        assert classify(b, compiled=True)[0] == classify(b, compiled=False)[0]
    # a non-contiguous batch and a single board
    assert np.array_equal(classify(boards[::-3], compiled=True), numpy_classes[::-3])
    assert classify(starting_board(), compiled=True)[0] == CLASS_CONTACT


@pytest.mark.parametrize("value", [-1, 16])
def test_compiled_rejects_bad_counts(value):
    _kernel_or_skip()
    bad = np.stack([starting_board()] * 3)
    bad[2, 1, 7] = value
    with pytest.raises(InvalidPositionError, match="0..15"):
        classify(bad, compiled=True)
