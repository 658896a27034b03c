"""Match and cube rules, one hand-written scenario per rule; Match ID reading and its consistency checks."""

from __future__ import annotations

import pytest

from bgai.core.board import starting_board
from bgai.core.position import Position
from bgai.errors import MatchIDError, MatchStateError
from bgai.formats.match_id import MatchState, encode_match_id
from bgai.game.cube import CENTRED, ME, OPPONENT
from bgai.game.match import Match, MatchRules, cube_state_from_match_id, match_from_match_id


def test_cube_starts_centred_and_either_player_may_double():
    m = Match(MatchRules.money())
    assert (m.cube_value, m.cube_owner) == (1, CENTRED)
    assert m.can_double(0) and m.can_double(1)


def test_redouble_ownership():
    m = Match(MatchRules.money()).offer_double(0)
    assert not m.can_double(1)  # a double is pending
    with pytest.raises(MatchStateError, match="already pending"):
        m.offer_double(1)
    m = m.take()
    assert (m.cube_value, m.cube_owner) == (2, 1)
    assert not m.can_double(0) and m.can_double(1)
    with pytest.raises(MatchStateError, match="player 1 owns the cube"):
        m.offer_double(0)
    m = m.offer_double(1).take()
    assert (m.cube_value, m.cube_owner) == (4, 0)
    assert m.can_double(0) and not m.can_double(1)


def test_redoubles_have_no_limit():
    m = Match(MatchRules.money())
    player = 0
    for _ in range(10):
        m = m.offer_double(player).take()
        player = 1 - player
    assert m.cube_value == 1024 and m.cube_owner == 0 and m.can_double(0)


def test_cube_limit_option():
    m = Match(MatchRules.money(cube_limit=4))
    m = m.offer_double(0).take().offer_double(1).take()
    assert m.cube_value == 4
    assert not m.can_double(0)
    with pytest.raises(MatchStateError, match="cube limit 4"):
        m.offer_double(0)


def test_pass_scores_the_cube_before_the_double():
    m = Match(MatchRules.money(jacoby=False)).offer_double(0).take()  # cube 2, player 1 owns it
    m = m.offer_double(1)
    nxt, out = m.pass_double()
    assert out.passed and out.winner == 1 and out.points == 2 and out.cube_value == 2 and out.kind == 0
    assert nxt.score == (0, 2)
    assert (nxt.cube_value, nxt.cube_owner, nxt.offered_by) == (1, CENTRED, None)
    with pytest.raises(MatchStateError, match="no double to pass"):
        nxt.pass_double()
    with pytest.raises(MatchStateError, match="no double to take"):
        nxt.take()


def test_gammon_with_cube_4_scores_8():
    m = Match(MatchRules.money(jacoby=True)).offer_double(0).take().offer_double(1).take()
    assert m.cube_value == 4
    nxt, out = m.end_game(1, 2)
    assert out.points == 8 and nxt.score == (0, 8)
    _, bg = m.end_game(0, 3)
    assert bg.points == 12


def test_jacoby_rule_gammons_count_only_after_the_cube_is_turned():
    jac = Match(MatchRules.money(jacoby=True))
    assert jac.end_game(0, 2)[1].points == 1
    assert jac.end_game(0, 3)[1].points == 1
    assert jac.offer_double(1).take().end_game(0, 2)[1].points == 4
    plain = Match(MatchRules.money(jacoby=False))
    assert plain.end_game(0, 2)[1].points == 2
    # matches: gammons always count (no Jacoby rule)
    assert Match(MatchRules.match(7)).end_game(1, 2)[1].points == 2


def test_crawford_game_without_a_double_then_post_crawford():
    m = Match(MatchRules.match(5), score=(3, 1))
    m, _ = m.end_game(0, 1)  # 4-1: player 0 reaches 4 = N-1 for the first time
    assert m.score == (4, 1) and m.crawford and not m.crawford_done
    assert not m.can_double(0) and not m.can_double(1)
    with pytest.raises(MatchStateError, match="Crawford"):
        m.offer_double(1)
    assert not m.cube_state(1).may_double()
    m, _ = m.end_game(1, 1)  # trailer wins the Crawford game: 4-2, post-Crawford
    assert not m.crawford and m.crawford_done and m.post_crawford
    assert m.can_double(1)
    assert m.cube_state(1).may_double()  # the trailer's double
    assert not m.cube_state(0).may_double()  # the leader's double is pointless
    m = m.offer_double(1).take()
    m, out = m.end_game(1, 1)
    assert out.points == 2 and m.score == (4, 4) and not m.crawford  # double match point, no new Crawford game
    assert m.post_crawford


def test_crawford_rule_off():
    m = Match(MatchRules(length=5, jacoby=False, crawford=False), score=(3, 0))
    m, _ = m.end_game(0, 1)
    assert not m.crawford and m.can_double(1)


def test_match_ends_when_a_player_reaches_the_length():
    m = Match(MatchRules.match(3), score=(1, 2), crawford_done=True)
    m = m.offer_double(0).take()
    m, out = m.end_game(0, 2)  # gammon on a 2-cube: 4 points
    assert out.points == 4 and m.score == (5, 2)
    assert m.is_over and m.winner == 0
    assert not m.can_double(1)
    with pytest.raises(MatchStateError, match="already over"):
        m.end_game(1, 1)
    with pytest.raises(MatchStateError, match="over"):
        m.cube_state(0)
    assert Match(MatchRules.money()).winner is None


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: MatchRules.match(0), "at least 1 point"),
        (lambda: MatchRules(length=-3), "match length"),
        (lambda: MatchRules(cube_limit=3), "power of two"),
        (lambda: Match(cube_value=3, cube_owner=0), "not a power of two"),
        (lambda: Match(cube_value=2), "centred cube"),
        (lambda: Match(MatchRules.match(5), score=(2, 2), crawford=True), "1-away"),
        (lambda: Match(MatchRules.money(), crawford=True), "money"),
        (lambda: Match(MatchRules.money(cube_limit=2), cube_value=4, cube_owner=1), "above the cube limit"),
        (lambda: Match().end_game(0, 4), "result kind"),
        (lambda: Match().end_game(2, 1), "winner"),
        (lambda: Match().offer_double(0).end_game(0, 1), "pending"),
    ],
)
def test_bad_match_states(make, match):
    with pytest.raises(MatchStateError, match=match):
        make()


def test_cube_state_is_from_the_player_on_rolls_view():
    m = Match(MatchRules.match(7), score=(2, 5)).offer_double(1).take()  # cube 2 owned by player 0
    s0, s1 = m.cube_state(0), m.cube_state(1)
    assert (s0.owner, s1.owner) == (ME, OPPONENT)
    assert s0.score == (2, 5) and s1.score == (5, 2) and s0.cube_value == 2
    assert s0.away == (5, 2)


# -------------------------------------------------------------------------------------------- Match ID


def test_match_id_round_trip():
    m = Match(MatchRules.match(9), score=(2, 4)).offer_double(0).take()
    mid = encode_match_id(m.to_match_state(1))
    back, player = match_from_match_id(mid)
    assert player == 1
    assert (back.score, back.cube_value, back.cube_owner, back.rules.length) == ((2, 4), 2, 1, 9)
    # the manual's example: 9-point match 2-4, cube 2 owned by player 0, player 1 rolled 5-2
    ex, player = match_from_match_id("QYkqASAAIAAA")
    assert (ex.score, ex.cube_value, ex.cube_owner, player) == ((2, 4), 2, 0, 1)
    s = cube_state_from_match_id("QYkqASAAIAAA")
    assert (s.score, s.owner, s.away) == ((4, 2), OPPONENT, (5, 7))


def test_money_match_id_and_jacoby_bit():
    m, player = match_from_match_id("cAkAAAAAAAAA")
    assert m.rules.is_money and m.rules.jacoby and player == 1
    off = encode_match_id(MatchState(jacoby=False))
    assert not match_from_match_id(off)[0].rules.jacoby


def test_pending_double_from_match_id():
    ms = MatchState(player_on_roll=0, turn=1, double_offered=True, match_length=5, score=(1, 2))
    m, player = match_from_match_id(encode_match_id(ms))
    assert m.offered_by == 0 and player == 0
    assert cube_state_from_match_id(ms).cube_value == 1


@pytest.mark.parametrize(
    "state, match",
    [
        (MatchState(cube_value=2, cube_owner=-1), "centred but shows 2"),
        (MatchState(double_offered=True, player_on_roll=0, turn=0), "turn is not with the player"),
        (MatchState(double_offered=True, player_on_roll=0, turn=1, dice=(3, 1)), "rolled while a double"),
        (MatchState(double_offered=True, player_on_roll=0, turn=1, cube_value=2, cube_owner=1), "owned by the opp"),
        (MatchState(match_length=5, score=(4, 1), crawford=True, cube_value=2, cube_owner=0), "Crawford"),
    ],
)
def test_inconsistent_match_ids(state, match):
    mid = encode_match_id(state)
    with pytest.raises(MatchIDError, match=match):
        match_from_match_id(mid)


def test_match_id_inconsistent_with_the_position():
    finished = Position.from_points({}, {1: 15}).board
    mid = encode_match_id(MatchState())
    with pytest.raises(MatchIDError, match="finished game"):
        match_from_match_id(mid, finished)
    match_from_match_id(mid, starting_board())  # fine


def test_match_id_errors_are_clear():
    with pytest.raises(MatchIDError, match="wrong length"):
        match_from_match_id("cAkAAA")
    # the table is extended to 64 points as GNU Backgammon does (bgai.game.met): 31 points is fine, 65 is not
    assert cube_state_from_match_id(encode_match_id(MatchState(match_length=31))).match_length == 31
    with pytest.raises(MatchIDError, match="longer than"):
        cube_state_from_match_id(encode_match_id(MatchState(match_length=65)))
