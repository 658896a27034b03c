"""The bgsage agent (Open Sage through the optional ``bgsage`` package) against bgsage's own calls and bgai's rules.

Board conversion both ways and against bgsage's pip counts; bgsage's legal plays (``possible_moves``) against
bgai's move generator on hundreds of positions; probabilities against bgsage's own evaluation and GNU Backgammon;
chosen plays against bgsage's analyser; games through bgai's evaluator; the error when bgsage is missing.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from bgai.core.board import flip, off_counts, pip_counts, starting_board
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError, InvalidDiceError, InvalidPositionError

bgbot_cpp = pytest.importorskip("bgbot_cpp", reason="bgsage (Open Sage) is not installed: pip install 'bgai[bgsage]'")
bgsage = pytest.importorskip("bgsage", reason="bgsage (Open Sage) is not installed: pip install 'bgai[bgsage]'")

from conftest import REFERENCE_POSITIONS, board_from_points  # noqa: E402

from bgai.agents.bgsage import BgsageAgent, from_sage, to_sage  # noqa: E402


@pytest.fixture(scope="module")
def agent() -> BgsageAgent:
    return BgsageAgent()


def _random_play_positions(n_games: int, seed: int) -> np.ndarray:
    """Every position (side on roll in row 0) of ``n_games`` games of uniformly random plays: openings to bear-offs,
    many hits and checkers on the bar."""
    rng = np.random.default_rng(seed)
    b = np.repeat(starting_board()[None], n_games, axis=0)
    out = []
    while len(b):
        out.append(b)
        d = rng.integers(1, 7, size=(len(b), 2))
        after, src = afterstates(b, d)
        counts = np.bincount(src, minlength=len(b))
        pick = np.cumsum(counts) - counts + (rng.random(len(b)) * counts).astype(np.int64)
        after = after[pick]
        b = flip(after[after[:, 0].sum(axis=1) > 0])
    return np.concatenate(out)


@pytest.fixture(scope="module")
def positions() -> np.ndarray:
    """1,200 positions with a roll each: 600 from random-play games, 600 from the real-play reference set."""
    rng = np.random.default_rng(12)
    rand = _random_play_positions(40, seed=3)
    real = np.load(REFERENCE_POSITIONS)["boards"]
    boards = np.concatenate([rand[rng.choice(len(rand), 600, replace=False)],
                             real[rng.choice(len(real), 600, replace=False)]])
    return boards


def test_starting_board_and_layout():
    assert to_sage(starting_board())[0].tolist() == bgsage.STARTING_BOARD
    # mover: 2 on the bar, 3 on its 6-point, 10 off; opponent: 1 on the bar, 2 on its 24-point (the mover's 1),
    # 12 on its 1-point (the mover's 24)
    b = board_from_points({25: 2, 6: 3}, {25: 1, 24: 2, 1: 12})
    s = to_sage(b)[0]
    assert s[25] == 2 and s[0] == 1 and s[6] == 3 and s[1] == -2 and s[24] == -12
    assert bgbot_cpp.pip_counts(s.tolist()) == (2 * 25 + 3 * 6, 1 * 25 + 2 * 24 + 12 * 1)
    # bgsage's flip is bgai's row swap
    assert bgbot_cpp.flip_board(s.tolist()) == to_sage(flip(b[None]))[0].tolist()


def test_conversion_round_trip_and_pip_counts(positions):
    s = to_sage(positions)
    np.testing.assert_array_equal(from_sage(s), positions)
    theirs = np.array([bgbot_cpp.pip_counts(row) for row in s.tolist()])
    np.testing.assert_array_equal(theirs, pip_counts(positions))
    flipped = np.array([bgbot_cpp.flip_board(row) for row in s.tolist()])
    np.testing.assert_array_equal(from_sage(flipped), flip(positions))


def test_from_sage_rejects_bad_shape():
    with pytest.raises(AgentSpecError, match=r"\(N, 26\)"):
        from_sage([[0] * 25])


def test_possible_moves_equal_bgai_afterstates(positions):
    rng = np.random.default_rng(5)
    dice = rng.integers(1, 7, size=(len(positions), 2))
    dice[::5, 1] = dice[::5, 0]  # more doubles (one position in 5 at least)
    after, src = afterstates(positions, dice)
    counts = np.bincount(src, minlength=len(positions))
    starts = np.cumsum(counts) - counts
    on_bar = positions[:, 0, 24] > 0
    bearing_off = (positions[:, 0, 6:].sum(axis=1) == 0) & (off_counts(positions)[:, 0] < 15)
    assert on_bar.sum() >= 50 and bearing_off.sum() >= 30 and (dice[:, 0] == dice[:, 1]).sum() >= 240
    n_plays = 0
    for i, (b, (d1, d2)) in enumerate(zip(to_sage(positions).tolist(), dice.tolist())):
        theirs = {tuple(m) for m in bgbot_cpp.possible_moves(b, d1, d2)}
        ours = {tuple(m) for m in to_sage(after[starts[i]:starts[i] + counts[i]]).tolist()}
        if not theirs:  # bgsage lists nothing when no play is legal; bgai gives the unchanged position
            assert ours == {tuple(b)}, (i, d1, d2)
        else:
            assert ours == theirs, (i, d1, d2)
        n_plays += len(theirs)
    assert n_plays > 10_000


def test_probabilities_are_bgsages_own(agent, positions):
    boards = positions[:300]
    ours = agent.probabilities(boards)
    assert ours.shape == (300, 5)
    # bgsage's static evaluation before the roll: the opponent's post-move view, inverted
    st = agent._static
    theirs = []
    for s in to_sage(flip(boards)).tolist():
        p = st.evaluate_board(s, s)["probs"]
        theirs.append(bgsage.invert_probs(list(p)))
    np.testing.assert_allclose(ours, np.array(theirs), atol=1e-6)


def test_probabilities_sane_and_close_to_gnubg(agent, positions):
    p = agent.probabilities(positions)
    assert np.isfinite(p).all() and (p >= -1e-6).all() and (p <= 1 + 1e-6).all()
    assert (p[:, 1] <= p[:, 0] + 1e-6).all() and (p[:, 2] <= p[:, 1] + 1e-6).all()
    assert (p[:, 3] <= 1 - p[:, 0] + 1e-6).all() and (p[:, 4] <= p[:, 3] + 1e-6).all()
    start = agent.probabilities(starting_board()[None])[0]
    assert 0.5 < start[0] < 0.56 and cubeless_equity(start) > 0
    gnubg_nn = pytest.importorskip("gnubg_nn")
    real = positions[600:]  # real play: both engines should agree closely
    g = np.array([gnubg_nn.probabilities([b[1].tolist(), b[0].tolist()], 0) for b in real])
    diff = np.abs(agent.probabilities(real)[:, 0] - g[:, 0])
    assert diff.mean() < 0.03 and np.median(diff) < 0.02


def test_choice_is_legal_and_bgsages_best(agent, positions):
    rng = np.random.default_rng(9)
    boards = positions[::4]
    dice = rng.integers(1, 7, size=(len(boards), 2))
    chosen = agent.choose(boards, dice, rng)
    after, src = afterstates(boards, dice)
    keys = {(int(i), a.tobytes()) for i, a in zip(src, after)}
    assert all((i, c.tobytes()) in keys for i, c in enumerate(chosen))
    # bgsage's own 1-ply (bgai's 0-ply) cubeless analyser: its best play is the agent's
    analyzer = bgsage.BgBotAnalyzer(eval_level="1ply", cubeful=False)
    same = 0
    for b, (d1, d2), c in zip(to_sage(boards).tolist(), dice.tolist(), chosen):
        res = analyzer.checker_play(b, d1, d2)
        best = res.moves[0].board if res.moves else b
        same += from_sage([best])[0].tobytes() == c.tobytes()
    assert same >= len(boards) - 2  # ties between plays of equal equity may break either way
    # evaluate_plays scores as choose chooses
    scores = agent.evaluate_plays(boards, after, src)
    for i in range(len(boards)):
        grp = np.flatnonzero(src == i)
        assert scores[grp].max() - scores[grp[(after[grp] == chosen[i]).all(axis=(1, 2))]][0] < 1e-6


def test_bad_input_is_a_clear_error(agent):
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidDiceError, match="1..6"):
        agent.choose(starting_board()[None], np.array([[7, 1]]), rng)
    bad = starting_board()
    bad[0, 5] = 9  # 19 checkers
    with pytest.raises(InvalidPositionError):
        agent.choose(bad[None], np.array([[3, 1]]), rng)


def test_afterstate_probabilities_and_finished_games(agent):
    af, _ = afterstates(starting_board()[None], np.array([[3, 1]]))
    p = agent.afterstate_probabilities(af)
    assert p.shape == (len(af), 5)
    best = af[np.argmax(cubeless_equity(p))]
    assert best[0, 4] == 2 and best[0, 7] == 2 and best[0, 5] == 4  # 8/5 6/5 makes the 5-point
    # a finished afterstate (the mover bore off its last checker) is a win, a gammon here
    won = np.zeros((1, 2, 25), dtype=np.int8)
    won[0, 1, 0] = 15
    np.testing.assert_array_equal(agent.afterstate_probabilities(won)[0], [1, 1, 0, 0, 0])


def test_games_through_the_evaluator():
    from bgai.evaluate.series import evaluate

    rep = evaluate("bgsage", "pubeval", 40, seed=3, chunk_games=20)
    assert rep.games == 40 and np.isfinite(rep.ppg) and rep.ppg > 0  # bgsage beats pubeval by ~+0.7 ppg
    assert 0 < rep.a.win < 1 and rep.avg_plies > 20


def test_one_ply_search(agent):
    deep = agent.at_ply(1)
    assert deep.capabilities.ply == 1 and deep.name == "bgsage:ply=1" and agent.at_ply(0) is agent
    p0 = agent.probabilities(starting_board()[None])[0]
    p1 = deep.probabilities(starting_board()[None])[0]
    assert abs(p1[0] - p0[0]) < 0.02 and not np.allclose(p0, p1)
    rng = np.random.default_rng(1)
    boards = np.repeat(starting_board()[None], 2, axis=0)
    chosen = deep.choose(boards, np.array([[4, 2], [6, 5]]), rng)
    assert chosen[0, 0, 3] == 2 and chosen[0, 0, 7] == 2  # 8/4 6/4
    assert chosen[1, 0, 12] == 6 and chosen[1, 0, 23] == 1  # 24/13


def test_spec_options_and_errors():
    from bgai.agents.registry import make_agent

    assert make_agent("bgsage:ply=1").capabilities.ply == 1
    with pytest.raises(AgentSpecError, match="ply must be 0..3"):
        make_agent("bgsage:ply=4")
    with pytest.raises(AgentSpecError, match="takes no options"):
        make_agent("racer:ply=1")


def test_missing_bgsage_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "bgbot_cpp", None)  # import bgbot_cpp -> ImportError
    from bgai.agents.registry import make_agent

    with pytest.raises(AgentSpecError, match=r"pip install 'bgai\[bgsage\]'"):
        make_agent("bgsage")
