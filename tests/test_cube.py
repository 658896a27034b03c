"""Cube decisions: Janowski money formulas, cube efficiency, match-play cubeful MWC, decisions, bad input.

Reference values marked "gnubg 1.07" were printed by GNU Backgammon 1.07.001 (``gnubg -t``, ``set evaluation
cubedecision eval plies 0``, ``set beavers 0``, ``hint``) for the positions given; bgai is fed the 5-digit
probabilities gnubg printed, so the small differences left come from that rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import starting_board
from bgai.core.position import Position
from bgai.errors import BgaiError, MatchStateError
from bgai.game.cube import (
    CENTRED,
    CLASS_BEAROFF1,
    CLASS_BEAROFF2,
    CLASS_CONTACT,
    CLASS_OVER,
    CLASS_RACE,
    ME,
    OPPONENT,
    CubeState,
    analyse_cube,
    classify_positions,
    cube_decision,
    cube_efficiency,
    cubeless_mwc,
    match_cubeful_mwc,
    match_take_points,
    money_cubeful_equity,
    money_points,
)
from bgai.game.met import load_met

START_PROBS = np.array([0.52151, 0.15392, 0.00756, 0.12985, 0.00755])  # gnubg 1.07 0-ply, opening position


def random_boards(rng: np.random.Generator, n: int, spread: int = 24) -> np.ndarray:
    """Legal random positions: each side's 15 checkers spread over its points 1..spread and the bar."""
    out = np.zeros((n, 2, 25), dtype=np.int8)
    for k in range(n):
        for side in (0, 1):
            left = 15 - int(rng.integers(0, 4)) * int(rng.random() < 0.2)
            while left > 0:
                col = int(rng.integers(0, spread)) if rng.random() > 0.02 else 24
                other = out[k, 1 - side, 23 - col] if col < 24 else 0
                if other == 0:
                    out[k, side, col] += 1
                    left -= 1
    return out


# ------------------------------------------------------------------------------------------------ money


def test_janowski_money_by_hand():
    # no gammons: W = L = 1, take point 0.2, cash point 0.8 (live cube)
    p = np.array([[0.7, 0, 0, 0, 0]])
    x = 0.68
    dead = 0.4
    live_centred = -1 + 2 * (0.7 - 0.2) / (0.8 - 0.2)
    live_opp = -1 + 2 * (0.7 - 0.2) / (1 - 0.2)
    live_mine = 1 + 0 * (0.7 - 0.8)  # W = 1: flat above ... below the cash point: -1 + 2 * 0.7 / 0.8
    live_mine = -1 + 2 * 0.7 / 0.8
    assert money_cubeful_equity(p, x, CENTRED)[0] == pytest.approx((1 - x) * dead + x * live_centred)
    assert money_cubeful_equity(p, x, OPPONENT)[0] == pytest.approx((1 - x) * dead + x * live_opp)
    assert money_cubeful_equity(p, x, ME)[0] == pytest.approx((1 - x) * dead + x * live_mine)
    a = analyse_cube(p, CubeState(), x)
    assert a.no_double[0] == pytest.approx(0.581333333)
    assert a.double_take[0] == pytest.approx(2 * (0.32 * 0.4 + 0.68 * 0.25))
    assert a.double_pass[0] == 1.0
    assert a.action == ("Double, take",)
    assert a.double[0] and a.take[0]


def test_janowski_take_points():
    p = np.array([[0.6, 0, 0, 0, 0], [0.6, 0.3, 0.0, 0.0, 0.0]])
    pts = money_points(p, 0.0)
    assert pts["take_point_dead"][0] == pytest.approx(0.25)  # the classic 25% dead-cube take point
    assert pts["take_point_live"][0] == pytest.approx(0.2)  # 20% with a fully live cube
    assert pts["take_point"][0] == pytest.approx(0.25)
    assert money_points(p, 0.68)["take_point"][0] == pytest.approx(0.5 / (2 + 0.34))
    # the doubler's gammons (W = 1.5) raise the taker's take point: (1.5 - 0.5) / (1 + 1.5 + 0.5)
    assert pts["take_point_live"][1] == pytest.approx(1 / 3)


def test_money_matches_gnubg_on_the_opening_position():
    # gnubg 1.07, 4HPwATDgc/ABMA:cAkAAAAAAAAA (money, Jacoby on): ND +0.08438, DT -0.19113, DP +1.0
    d = cube_decision(START_PROBS, CubeState(jacoby=True), cube_efficiency(starting_board())[0])
    assert d.action == "No double, take"
    assert d.no_double == pytest.approx(0.08438, abs=2e-4)
    assert d.double_take == pytest.approx(-0.19113, abs=2e-4)
    assert d.double_pass == 1.0
    assert d.cubeless_equity == pytest.approx(2 * 0.52151 - 1, abs=1e-9)  # Jacoby: gammons do not count
    assert not d.double and d.take


def test_jacoby_rule_only_with_a_centred_cube():
    p = np.array([[0.6, 0.3, 0.05, 0.1, 0.01]])
    no_jac = money_cubeful_equity(p, 0.0, CENTRED, jacoby=False)[0]
    jac = money_cubeful_equity(p, 0.0, CENTRED, jacoby=True)[0]
    assert no_jac == pytest.approx(2 * 0.6 - 1 + 0.3 - 0.1 + 0.05 - 0.01)
    assert jac == pytest.approx(0.2)
    for owner in (ME, OPPONENT):
        assert money_cubeful_equity(p, 0.5, owner, jacoby=True)[0] == money_cubeful_equity(p, 0.5, owner)[0]
    # with the Jacoby rule a big gammonish favourite is "too good" only when no double wins more than 1
    big = np.array([[0.9, 0.6, 0.05, 0.01, 0.0]])
    assert analyse_cube(big, CubeState(jacoby=True), 0.68).action == ("Double, pass",)
    assert analyse_cube(big, CubeState(jacoby=False), 0.68).action == ("Too good to double, pass",)


def test_redouble_and_unavailable_cube_names():
    p = np.array([[0.7, 0.0, 0.0, 0.0, 0.0]])
    # owning the cube at 70% (no gammons) is worth more than redoubling: 0.638 > 2 x 0.298
    assert analyse_cube(p, CubeState(cube_value=2, owner=ME), 0.68).action == ("No redouble, take",)
    p78 = np.array([[0.78, 0.0, 0.0, 0.0, 0.0]])
    assert analyse_cube(p78, CubeState(cube_value=2, owner=ME), 0.68).action == ("Redouble, take",)
    a = analyse_cube(p, CubeState(cube_value=2, owner=OPPONENT), 0.68)
    assert a.action == ("Cube not available",) and not a.double[0] and not a.available
    # cube limit 4: a cube on 4 cannot be redoubled
    lim = analyse_cube(p, CubeState(cube_value=4, owner=ME, cube_limit=4), 0.68)
    assert not lim.available and not lim.double[0]


@settings(max_examples=200, deadline=None)
@given(
    w=st.floats(0.001, 0.999),
    g=st.floats(0, 1),
    bg=st.floats(0, 1),
    lg=st.floats(0, 1),
    lbg=st.floats(0, 1),
    x=st.floats(0, 1),
)
def test_money_cube_ownership_order(w, g, bg, lg, lbg, x):
    wg = w * g
    wbg = wg * bg
    l_g = (1 - w) * lg
    l_bg = l_g * lbg
    p = np.array([[w, wg, wbg, l_g, l_bg]])
    mine = money_cubeful_equity(p, x, ME)[0]
    centred = money_cubeful_equity(p, x, CENTRED)[0]
    theirs = money_cubeful_equity(p, x, OPPONENT)[0]
    assert mine >= centred - 1e-9 >= theirs - 2e-9
    dead = 2 * w - 1 + wg - l_g + wbg - l_bg
    assert money_cubeful_equity(p, 0.0, CENTRED)[0] == pytest.approx(dead)
    assert -3.0 - 1e-9 <= theirs and mine <= 3.0 + 1e-9


# ------------------------------------------------------------------------------------------- efficiency


def test_cube_efficiency_values():
    contact = starting_board()
    race40 = Position.from_points({1: 5, 2: 5, 3: 5}, {6: 5, 5: 5, 4: 5}).board  # 30 pips, bear-off
    race_far = Position.from_points({12: 1, 6: 14}, {1: 15}).board  # race, 96 pips on roll
    eff = cube_efficiency(np.stack([contact, race40, race_far]))
    assert eff[0] == pytest.approx(0.68)
    assert eff[1] == pytest.approx(0.6)  # both sides home: bear-off
    pips = 12 + 6 * 14
    assert eff[2] == pytest.approx(min(0.7, max(0.6, 0.55 + 0.00125 * pips)))
    for pips, want in ((40, 0.6), (80, 0.65), (120, 0.7), (160, 0.7)):
        assert min(0.7, max(0.6, 0.55 + 0.00125 * pips)) == pytest.approx(want)
    # a race position where the side on roll has exactly 80 pips: 10 checkers on 8 (80 pips)
    b = Position.from_points({8: 10}, {1: 15}).board
    assert cube_efficiency(b)[0] == pytest.approx(0.65)
    over = Position.from_points({}, {1: 15}).board
    assert cube_efficiency(over)[0] == 0.0


def test_classes_by_hand():
    assert classify_positions(starting_board())[0] == CLASS_CONTACT
    assert classify_positions(Position.from_points({1: 3, 2: 3}, {1: 2, 3: 2}).board)[0] == CLASS_BEAROFF2
    assert classify_positions(Position.from_points({1: 8, 2: 7}, {1: 2, 3: 2}).board)[0] == CLASS_BEAROFF1
    assert classify_positions(Position.from_points({7: 8, 2: 7}, {1: 2, 3: 2}).board)[0] == CLASS_RACE
    assert classify_positions(Position.from_points({}, {1: 2}).board)[0] == CLASS_OVER


def test_classes_agree_with_gnubg_nn():
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(5)
    boards = np.concatenate(
        [random_boards(rng, 150, 24), random_boards(rng, 150, 12), random_boards(rng, 150, 6)]
    )
    ours = classify_positions(boards)
    theirs = np.array([gnubg_nn.classify(b[::-1].tolist()) for b in boards])
    np.testing.assert_array_equal(ours, theirs)
    assert len(set(ours.tolist())) >= 4


# ---------------------------------------------------------------------------------------------- match


def test_match_matches_gnubg_at_3_away_5_away():
    # gnubg 1.07, 4HPwATDgc/ABMA:cAngACAAIAAA (7-point match 2-4, player 1 on roll = 3-away vs 5-away)
    st_ = CubeState(match_length=7, score=(4, 2))
    d = cube_decision(START_PROBS, st_, 0.68)
    assert d.action == "No double, take"
    assert d.no_double == pytest.approx(0.00737, abs=2e-4)
    assert d.double_take == pytest.approx(-0.53992, abs=2e-4)
    assert d.double_pass == pytest.approx(1.0)
    assert d.mwc[2] == pytest.approx(load_met().mwc(2, 5))  # doubler cashes 1 point: 2-away vs 5-away
    assert d.cubeless_equity == pytest.approx(0.11598, abs=2e-4)


def test_post_crawford_trailer_doubles_at_once():
    # gnubg 1.07, 4HPwATDgc/ABMA:cAngAGAAIAAA (7-point match 6-4, trailer 3-away on roll, post-Crawford)
    st_ = CubeState(match_length=7, score=(4, 6))
    assert st_.post_crawford and st_.may_double()
    d = cube_decision(START_PROBS, st_, 0.68)
    assert d.action == "Double, take" and d.double and d.take
    assert d.no_double == pytest.approx(0.28227, abs=2e-4)
    assert d.double_take == pytest.approx(0.38400, abs=2e-4)
    # the leader may not (usefully) double post-Crawford
    leader = st_.swapped()
    assert not leader.may_double()
    assert cube_decision(START_PROBS, leader, 0.68).action == "Never double, take (dead cube)"


def test_crawford_game_has_no_double_and_a_dead_cube():
    st_ = CubeState(match_length=5, score=(4, 2), crawford=True)
    assert not st_.may_double() and st_.cube_is_dead()
    d = cube_decision(START_PROBS, st_, 0.68)
    assert d.action == "Never double, take (dead cube)" and not d.double
    assert d.mwc[0] == pytest.approx(cubeless_mwc(START_PROBS, st_)[0])
    trailer = st_.swapped()
    assert cube_decision(START_PROBS, trailer, 0.68).action == "Never double, take (dead cube)"


def test_dead_cube_is_cubeless():
    # 2-away 2-away: the cube is dead (whoever doubles plays for the match)
    st_ = CubeState(match_length=5, score=(3, 3))
    assert st_.cube_is_dead()
    p = np.array([[0.6, 0.2, 0.01, 0.1, 0.0]])
    np.testing.assert_allclose(match_cubeful_mwc(p, st_, 0.68), cubeless_mwc(p, st_))
    # the doubled cube is dead too: double/take MWC = winning chances (gammons no longer matter)
    np.testing.assert_allclose(match_cubeful_mwc(p, st_.doubled(), 0.68), [0.6])


def test_match_take_points():
    p = np.array([[0.5, 0.0, 0.0, 0.0, 0.0]])  # no gammons: the points depend on the score only
    met = load_met()
    # 2-away/2-away: the taker needs 1 - MWC(1-away vs 2-away, Crawford) = 32.3%; the cube is dead
    tp = match_take_points(p, CubeState(match_length=5, score=(3, 3)))
    assert tp["take_point_dead"][0] == pytest.approx(1 - met.mwc(1, 2))
    assert tp["take_point_live"][0] == pytest.approx(tp["take_point_dead"][0])
    # leader 2-away doubles the 3-away trailer: pass -> 1-away vs 3-away; take and lose -> trailer 1-away
    tp = match_take_points(p, CubeState(match_length=7, score=(5, 4)))
    dp, dtl = met.mwc(1, 3), met.mwc(2, 1)
    assert tp["take_point_dead"][0] == pytest.approx(1 - (dp - dtl) / (1 - dtl))
    assert tp["take_point_live"][0] < tp["take_point_dead"][0]  # the taker's recube is worth something
    # a long match at 0-0 is close to money play: Janowski's 25% dead and 20% live take points
    tp = match_take_points(p, CubeState(match_length=25, score=(0, 0)))
    assert tp["take_point_dead"][0] == pytest.approx(0.25, abs=0.01)
    assert tp["take_point_live"][0] == pytest.approx(0.20, abs=0.01)


def test_match_cubeful_mwc_is_a_probability_and_zero_x_is_cubeless():
    rng = np.random.default_rng(3)
    w = rng.random(200)
    g = rng.random(200) * 0.4
    p = np.column_stack([w, w * g, w * g * 0.1, (1 - w) * g, (1 - w) * g * 0.1])
    for score in [(0, 0), (3, 1), (1, 5), (4, 4), (2, 6)]:
        for owner, cube in ((CENTRED, 1), (ME, 2), (OPPONENT, 2)):
            s = CubeState(cube_value=cube, owner=owner, match_length=7, score=score)
            m = match_cubeful_mwc(p, s, 0.68)
            assert np.all((m >= -1e-9) & (m <= 1 + 1e-9))
            np.testing.assert_allclose(match_cubeful_mwc(p, s, 0.0), cubeless_mwc(p, s), atol=1e-12)


# ------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"cube_value": 3, "owner": ME}, "not a power of two"),
        ({"cube_value": 0}, "not a power of two"),
        ({"owner": 2}, "cube owner"),
        ({"cube_value": 2, "owner": CENTRED}, "centred cube"),
        ({"match_length": -1}, "match length"),
        ({"match_length": 5, "score": (5, 0)}, "not below the match length"),
        ({"match_length": 5, "score": (2, 2), "crawford": True}, "1-away"),
        ({"crawford": True}, "money game"),
        ({"score": (1, 0)}, "money game with a score"),
        ({"cube_limit": 6}, "cube limit"),
        ({"cube_value": 8, "owner": ME, "cube_limit": 4}, "above the cube limit"),
    ],
)
def test_bad_cube_states(kwargs, match):
    with pytest.raises(MatchStateError, match=match):
        CubeState(**kwargs)


def test_bad_probabilities():
    with pytest.raises(BgaiError, match="5 outputs"):
        analyse_cube(np.zeros(4), CubeState(), 0.68)
    with pytest.raises(BgaiError, match="in \\[0, 1\\]"):
        analyse_cube(np.array([1.5, 0, 0, 0, 0]), CubeState(), 0.68)


def test_match_longer_than_the_table():
    # the MET is extended to 64 points as GNU Backgammon does (bgai.game.met): 31 points is analysed, 65 is refused
    analyse_cube(START_PROBS, CubeState(match_length=31, score=(0, 0)), 0.68)
    with pytest.raises(MatchStateError, match="longer than"):
        analyse_cube(START_PROBS, CubeState(match_length=65, score=(0, 0)), 0.68)
