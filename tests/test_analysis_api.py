"""bgai.analysis.api: agent capabilities, rank_plays (cubeless, cubeful money, match), evaluate_position and
decide_cube, checked against bgai.game.cube's formulas and GNU Backgammon (gnubg_nn)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents.base import Capabilities
from bgai.agents.registry import make_agent
from bgai.analysis.api import (
    CubeState,
    Dice,
    choose_play,
    decide_cube,
    evaluate_position,
    rank_plays,
    rank_plays_batch,
    read_position_request,
)
from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity
from bgai.core.position_id import decode_position_id
from bgai.errors import AgentCapabilityError, AgentSpecError
from bgai.game.cube import CONSERVATIVE_POLICY, analyse_cube, cube_decision, cube_efficiency

START = "4HPwATDgc/ABMA"
BEAROFF_GAMMON = "wN1tAwDb3Q4AAA"


@pytest.fixture(scope="module")
def gnubg():
    pytest.importorskip("gnubg_nn")
    return make_agent("gnubg")


def test_capabilities_are_declared():
    assert make_agent("pubeval").capabilities == Capabilities(play_scores=True, ply=0)
    assert make_agent("racer").capabilities.score_kind == "score"
    assert make_agent("random").capabilities == Capabilities()
    assert make_agent("random").capabilities.score_kind is None
    neural = make_agent("default:ply=1")
    assert neural.capabilities == Capabilities(play_scores=True, probabilities=True, cube=True, ply=1)
    assert neural.at_ply(0).capabilities.ply == 0 and neural.at_ply(1) is neural


def test_capabilities_of_gnubg(gnubg):
    assert gnubg.capabilities == Capabilities(play_scores=True, probabilities=True, cube=True, ply=0)
    ranked = rank_plays(gnubg, starting_board(), "31", ply=1)  # gnubg's own 1-ply search
    assert ranked[0].play.notation == "8/5 6/5" and gnubg.at_ply(1).capabilities.ply == 1
    with pytest.raises(AgentSpecError, match=r"gnubg ply must be 0\.\.2, got 3"):
        rank_plays(gnubg, starting_board(), "31", ply=3)


def test_rank_plays_cubeless_matches_gnubg_directly(gnubg):
    import gnubg_nn

    ranked = rank_plays(gnubg, starting_board(), "31")
    assert [r.score_kind for r in ranked] == ["equity"] * 16 and ranked[0].notation == "8/5 6/5"
    for r in ranked:
        # gnubg's own 0-ply evaluation of the position after the play, opponent on roll (gnubg rows: [opp, me])
        opp_view = flip(r.afterstate)
        p = np.array(gnubg_nn.probabilities([opp_view[1].tolist(), opp_view[0].tolist()], 0))
        mover = np.array([1 - p[0], p[3], p[4], p[1], p[2]])
        np.testing.assert_allclose(r.probabilities, mover, atol=1e-6)
        assert r.score == pytest.approx(float(cubeless_equity(mover)), abs=1e-6) == r.equity
        assert r.cubeful_equity is None and r.mwc is None
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)


def test_rank_plays_match_is_by_mwc_and_money_by_cubeful_equity(gnubg):
    req = read_position_request(f"{START}:cAngADAAKAAA", "31")  # 7-point match 5-3
    ranked = rank_plays(gnubg, req.board, req.dice, req.cube_state)
    assert {r.score_kind for r in ranked} == {"mwc"}
    assert all(r.score == r.mwc and 0 < r.mwc < 1 for r in ranked)
    assert [r.mwc for r in ranked] == sorted((r.mwc for r in ranked), reverse=True)
    # GNU Backgammon 1.07 0-ply: 8/5 6/5 -0.042 (normalised match equity; tests/test_hint_qa.py)
    assert ranked[0].notation == "8/5 6/5" and ranked[0].equity == pytest.approx(-0.042, abs=3e-3)
    money = rank_plays(gnubg, starting_board(), "31", CubeState())
    assert {r.score_kind for r in money} == {"equity"} and money[0].cubeful_equity == pytest.approx(0.200, abs=3e-3)
    assert all(r.score == r.cubeful_equity != r.cubeless_equity for r in money)


def test_rank_plays_batch_is_one_call_and_agrees_with_single():
    pubeval = make_agent("pubeval")
    boards = np.stack([starting_board()] * 3)
    batch = rank_plays_batch(pubeval, boards, ["31", (6, 6), Dice(2, 1)])
    for got, dice in zip(batch, ["31", "66", "21"]):
        single = rank_plays(pubeval, starting_board(), dice)
        assert [r.notation for r in got] == [r.notation for r in single]
        assert [r.score for r in got] == [r.score for r in single]
        assert got[0].probabilities is None and got[0].equity is None and got[0].score_kind == "score"
    with pytest.raises(AgentSpecError, match="no evaluation"):
        rank_plays(make_agent("random"), starting_board(), "31")


def test_no_legal_play_is_one_entry():
    b = decode_position_id("27YDBgDg8+ADQA")
    ranked = rank_plays(make_agent("pubeval"), b, "31")
    assert len(ranked) == 1 and ranked[0].play.steps == () and ranked[0].notation == ""
    np.testing.assert_array_equal(ranked[0].afterstate, b)


def test_evaluate_position_and_decide_cube(gnubg):
    b = decode_position_id(BEAROFF_GAMMON)
    ev = evaluate_position(gnubg, b)
    p = gnubg.probabilities(b[None])[0]
    np.testing.assert_allclose(ev.probabilities, p)
    assert ev.cubeless_equity == pytest.approx(1.848, abs=3e-3)  # GNU Backgammon 0-ply cubeless (money)
    ref = analyse_cube(p, CubeState(), cube_efficiency(b[None]))
    assert ev.cubeful_equity == pytest.approx(float(ref.optimal[0])) and ev.mwc is None and ev.ply == 0
    assert decide_cube(gnubg, b) == cube_decision(p, CubeState(), float(cube_efficiency(b[None])[0]))
    state = CubeState(match_length=7, score=(4, 2))
    ev = evaluate_position(gnubg, starting_board(), state)
    d = decide_cube(gnubg, starting_board(), state)
    assert ev.mwc == d.optimal_mwc == d.mwc[0] and ev.cubeless_mwc == pytest.approx(
        float(analyse_cube(ev.probabilities, state, 0.0).mwc_no_double[0]))
    with pytest.raises(AgentCapabilityError, match="gives no probabilities"):
        evaluate_position(make_agent("pubeval"), starting_board())


def test_decide_cube_doubled_is_the_doublers_decision(gnubg):
    b = decode_position_id(BEAROFF_GAMMON)  # the side on roll is winning big: the taker should pass
    state = CubeState(cube_value=2, owner=0)
    doubler = decide_cube(gnubg, b, state)
    taker = decide_cube(gnubg, flip(b), state.swapped(), doubled=True)
    assert taker == doubler and doubler.take is False
    conservative = decide_cube(make_agent("pubeval"), b, state)
    assert conservative.policy == CONSERVATIVE_POLICY and not conservative.double and conservative.take
    assert conservative.optimal is None and conservative.state == state


def test_choose_play_is_the_agents_choice():
    pubeval = make_agent("pubeval")
    rng = np.random.default_rng(0)
    play = choose_play(pubeval, starting_board(), "31", rng)
    assert play.notation == "8/5 6/5" == rank_plays(pubeval, starting_board(), "31")[0].notation
    assert choose_play(pubeval, decode_position_id("27YDBgDg8+ADQA"), "31", rng) is None
