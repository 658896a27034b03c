"""pubeval against GNU Backgammon's copy (gnubg_nn.pub_eval_score / pub_best_move) on positions from real play.

Positions come from games played entirely with gnubg_nn (pubeval's best play most of the time, a random legal
play otherwise, so that races, bear-offs and checkers on the bar all occur), independent of bgai's move
generator.  gnubg_nn.pub_eval_score(board) scores ``board[0]`` as "the computer" and decides race/contact from the
board it is given; pub_best_move decides it from the position before the play (Tesauro's rule).
"""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents import pubeval
from bgai.agents.base import best_per_input
from bgai.agents.gnubg import apply_gnubg_move
from bgai.agents.pubeval import WIN_SCORE, PubevalAgent, is_race, pubeval_scores, weights
from bgai.core.board import starting_board
from bgai.core.movegen import afterstates
from bgai.util import jit

gnubg_nn = pytest.importorskip("gnubg_nn")

N_POSITIONS = 10_000


def _to_bgai(board_gnubg) -> np.ndarray:
    return np.array([board_gnubg[1], board_gnubg[0]], dtype=np.int8)


@pytest.fixture(scope="module")
def real_play():
    """``(boards (P, 2, 25), dice (P, 2), moves)``: positions before each ply, their rolls, pub_best_move's play."""
    rng = np.random.default_rng(20261130)
    boards, dice, moves = [], [], []
    while len(boards) < N_POSITIONS:
        start = starting_board()
        b = [start[1].tolist(), start[0].tolist()]
        explore = rng.uniform(0.0, 0.5)  # share of random plays in this game
        while True:
            d = rng.integers(1, 7, size=2)
            move = gnubg_nn.pub_best_move(b, int(d[0]), int(d[1]))
            boards.append(_to_bgai(b))
            dice.append(d)
            moves.append(move)
            if rng.random() < explore:
                keys = gnubg_nn.moves(b, int(d[0]), int(d[1]))
                if keys:
                    opp, me = gnubg_nn.board_from_position_key(keys[rng.integers(len(keys))])
                    b = [list(opp), list(me)]
            else:
                apply_gnubg_move(b, move)
            if sum(b[1]) == 0:
                break
            b = [b[1], b[0]]
    return np.stack(boards), np.stack(dice), moves


def test_weights_are_tesauros_tables():
    w = weights()
    assert w["race"].shape == w["contact"].shape == (122,)
    # spot values of the published tables (first and last entries, the largest race weight)
    assert w["contact"][0] == pytest.approx(0.25696)
    assert w["contact"][121] == pytest.approx(-2.75800)
    assert w["race"][121] == pytest.approx(3.42040)
    assert w["race"].min() == pytest.approx(-12.32252)


def test_is_race_matches_gnubg_classify(real_play):
    boards, _, _ = real_play
    ours = is_race(boards)
    theirs = np.array([gnubg_nn.classify([b[1].tolist(), b[0].tolist()]) <= gnubg_nn.c_race for b in boards])
    np.testing.assert_array_equal(ours, theirs)
    assert 500 < ours.sum() < len(ours) - 500  # both kinds well represented


def test_scores_match_gnubg_pub_eval_score(real_play):
    boards, dice, _ = real_play
    after, src = afterstates(boards, dice)
    ours = pubeval_scores(after, is_race(after))  # pub_eval_score classifies the board it is given
    theirs = np.array([gnubg_nn.pub_eval_score([a[0].tolist(), a[1].tolist()]) for a in after])
    finished = after[:, 0].sum(axis=(1)) == 0
    assert len(after) > 100_000
    np.testing.assert_allclose(ours[~finished], theirs[~finished], rtol=0, atol=1e-4)
    assert np.all(ours[finished] == WIN_SCORE)


def test_chosen_play_matches_gnubg_pub_best_move(real_play):
    boards, dice, moves = real_play
    chosen = PubevalAgent().choose(boards, dice, np.random.default_rng(0))
    expected = []
    for b, m in zip(boards, moves):
        g = [b[1].tolist(), b[0].tolist()]
        apply_gnubg_move(g, m)
        expected.append(_to_bgai(g))
    expected = np.stack(expected)
    same = (chosen == expected).all(axis=(1, 2))
    # a different afterstate is only acceptable where the two tie on pubeval's score (gnubg's sort is unstable)
    race = is_race(boards)
    diff = np.flatnonzero(~same)
    s_ours = pubeval_scores(chosen[diff], race[diff])
    s_ref = pubeval_scores(expected[diff], race[diff])
    np.testing.assert_allclose(s_ours, s_ref, atol=1e-5)  # a tie, up to float32 rounding
    assert same.mean() > 0.995
    assert len(boards) >= N_POSITIONS


def test_race_weights_chosen_by_position_before_the_play():
    # the last contact is broken by the play: the race flag must come from the position before it
    after = np.zeros((1, 2, 25), dtype=np.int8)
    after[0, 0, :6] = 2  # 12 checkers home, 3 off
    after[0, 1, 3] = 15
    assert pubeval_scores(after, True)[0] != pubeval_scores(after, False)[0]
    before = after.copy()
    before[0, 0, 5] -= 1
    before[0, 0, 20] += 1  # one checker back on my 21-point: contact with the opponent on its 4-point (my 21)
    before[0, 1, 3] = 0
    before[0, 1, 10] = 15  # opponent on its 11-point (my 14): my 21-point checker still has to pass it
    assert not is_race(before)[0]
    agent = PubevalAgent()
    np.testing.assert_allclose(agent.evaluate_plays(before, after, np.array([0])), pubeval_scores(after, False))


def test_all_off_is_best():
    after = np.zeros((1, 2, 25), dtype=np.int8)
    after[0, 1, 5] = 15
    assert pubeval_scores(after, True)[0] == WIN_SCORE


def test_bearing_off_the_last_checkers_is_chosen():
    # two checkers left on my 2- and 1-points, roll 21: the only plays bear both off or move 2/1 then 1/off
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, [0, 1]] = 1
    board[1, 5] = 15
    agent = PubevalAgent()
    after, src = afterstates(board[None], np.array([[2, 1]]))
    scores = agent.evaluate_plays(board[None], after, src)
    finished = after[:, 0].sum(axis=1) == 0
    assert finished.any()
    assert np.all(scores[finished] == WIN_SCORE) and np.all(scores[~finished] < WIN_SCORE)
    np.testing.assert_array_equal(agent.choose(board[None], np.array([[2, 1]]), np.random.default_rng(0))[0],
                                  after[np.flatnonzero(finished)[0]])


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba (the 'fast' extra) not installed or turned off")
def test_compiled_kernel_matches_the_numpy_path_bit_for_bit(real_play):
    # every afterstate of the real-play positions: the kernel's scores are the numpy reference's, bit for bit
    boards, dice, _ = real_play
    after, src = afterstates(boards, dice)
    agent = PubevalAgent()
    try:
        assert pubeval.use_compiled(False) is False  # the numpy path, as with BGAI_NUMBA=0
        reference = agent.evaluate_plays(boards, after, src)
        np.testing.assert_array_equal(reference, pubeval_scores(after, is_race(boards)[src]))
        chosen = agent.choose(boards, dice, np.random.default_rng(0))
        np.testing.assert_array_equal(chosen, after[best_per_input(reference, src, len(boards))])
        assert pubeval.use_compiled() is True
        compiled = agent.evaluate_plays(boards, after, src)
        assert compiled.dtype == np.float64 and np.array_equal(compiled, reference)
        assert (compiled == WIN_SCORE).sum() > 10  # bear-offs that finish the game are in the sample
        np.testing.assert_array_equal(agent.choose(boards, dice, np.random.default_rng(0)), chosen)
    finally:
        pubeval.use_compiled()


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba (the 'fast' extra) not installed or turned off")
def test_kernel_loaded_after_enough_work_on_the_numpy_path(real_play, monkeypatch):
    boards, dice, _ = real_play
    scorer = pubeval._SCORER
    scorer.reset()  # a fresh process: numpy path, the ski-rental rule on
    monkeypatch.setattr(scorer, "load_after", 1e-4)
    agent = PubevalAgent()
    try:
        first = agent.choose(boards[:500], dice[:500], np.random.default_rng(0))
        assert scorer.kernel is None and scorer.work > 1e-4  # 500 positions on the numpy path
        second = agent.choose(boards[:500], dice[:500], np.random.default_rng(0))
        assert scorer.kernel is not None  # then loaded
        np.testing.assert_array_equal(first, second)
    finally:
        pubeval.use_compiled()


@pytest.mark.parametrize("compiled", [False, True])
def test_bad_src_raises_on_both_paths(compiled):
    if compiled and not jit.AVAILABLE:
        pytest.skip("numba (the 'fast' extra) not installed or turned off")
    board = starting_board()[None]
    after, src = afterstates(board, np.array([[3, 1]]))
    agent = PubevalAgent()
    try:
        pubeval.use_compiled(compiled)
        with pytest.raises(IndexError):
            agent.evaluate_plays(board, after, src + 1)
        with pytest.raises((ValueError, IndexError)):
            agent.evaluate_plays(board, after, src[:-1])
        assert agent.evaluate_plays(board, after, src).shape == (len(after),)
    finally:
        pubeval.use_compiled()
