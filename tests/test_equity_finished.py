"""bgai.core.equity.finished_probabilities: exact values of finished games (single, gammon, backgammon)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.core.board import starting_board
from bgai.core.equity import OUTPUTS, cubeless_equity, finished_probabilities
from bgai.errors import InvalidPositionError


def _lost(cols: dict[int, int]) -> np.ndarray:
    """A board where the opponent (row 1) has borne off all; row 0 (side on roll) holds ``cols``."""
    b = np.zeros((2, 25), dtype=np.int8)
    for c, n in cols.items():
        b[0, c] = n
    return b


CASES = [
    # (side on roll's checkers, expected probabilities, cubeless equity)
    ({0: 5}, [0, 0, 0, 0, 0], -1.0),  # 10 borne off: single loss
    ({5: 15}, [0, 0, 0, 1, 0], -2.0),  # none off, nothing in the winner's home: gammon
    ({17: 15}, [0, 0, 0, 1, 0], -2.0),  # point 18 is outside the winner's home board
    ({5: 14, 18: 1}, [0, 0, 0, 1, 1], -3.0),  # point 19 = the winner's home board: backgammon
    ({5: 14, 23: 1}, [0, 0, 0, 1, 1], -3.0),  # point 24 (winner's ace point): backgammon
    ({5: 14, 24: 1}, [0, 0, 0, 1, 1], -3.0),  # a checker on the bar: backgammon
    ({23: 1}, [0, 0, 0, 0, 0], -1.0),  # 14 borne off: single even with a checker in the winner's home
]


def test_exact_values():
    boards = np.stack([starting_board()] + [_lost(c) for c, _, _ in CASES] + [starting_board()])
    over, probs = finished_probabilities(boards)
    assert over.tolist() == [False] + [True] * len(CASES) + [False]
    assert probs.dtype == np.float64 and probs.shape == (len(CASES), len(OUTPUTS))
    np.testing.assert_array_equal(probs, np.array([p for _, p, _ in CASES], dtype=np.float64))
    np.testing.assert_array_equal(cubeless_equity(probs), [e for _, _, e in CASES])


def test_no_finished_board_and_empty_batch():
    over, probs = finished_probabilities(np.stack([starting_board()] * 3))
    assert over.tolist() == [False] * 3 and probs.shape == (0, 5)
    over, probs = finished_probabilities(np.zeros((0, 2, 25), dtype=np.int8))
    assert over.shape == (0,) and probs.shape == (0, 5)


def test_both_sides_empty_is_refused():
    with pytest.raises(InvalidPositionError, match="not a finished game"):
        finished_probabilities(np.zeros((1, 2, 25), dtype=np.int8))


def test_random_finished_boards_match_result_kind_and_one_copy_serves_all():
    """On many random boards: finished ones get exactly the loss that result_kind scores; unfinished are skipped.
    The neural agent, the trainer and the numpy bot all use this one function."""
    pytest.importorskip("torch")
    from bgai.core.board import result_kind

    rng = np.random.default_rng(11)
    boards = np.zeros((500, 2, 25), dtype=np.int8)
    for b in boards:
        n = rng.integers(1, 16)
        cols = rng.integers(0, 25, size=n)
        np.add.at(b[0], cols, 1)
        if rng.random() < 0.3:  # some unfinished boards too
            b[1, 3] = 2
    over, probs = finished_probabilities(boards)
    np.testing.assert_array_equal(over, boards[:, 1].sum(axis=1) == 0)
    _, points = result_kind(boards[over])
    np.testing.assert_array_equal(probs[:, 0], 0.0)
    np.testing.assert_array_equal(probs[:, 3], (points >= 2).astype(float))
    np.testing.assert_array_equal(probs[:, 4], (points >= 3).astype(float))
    assert 0 < over.sum() < len(boards) and probs[:, 3].sum() > 0 and probs[:, 4].sum() > 0

    import bgai.agents.base as base
    import bgai.agents.gnubg as gnubg
    import bgai.agents.neural as neural
    import bgai.agents.numpy_bot as infer
    import bgai.core.equity as equity
    import bgai.model.bundle as bundle  # self-play chooses through the neural agent, which values with a bundle

    # the one override of an evaluator's output for finished positions: bgai.core.equity.finished_or_evaluate
    assert base.finished_or_evaluate is equity.finished_or_evaluate
    assert neural.finished_or_evaluate is equity.finished_or_evaluate is gnubg.finished_or_evaluate
    assert infer.finished_or_evaluate is equity.finished_or_evaluate and not hasattr(infer, "_finished")
    assert bundle.finished_or_evaluate is equity.finished_or_evaluate
