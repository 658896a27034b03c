"""The step-wise game (:class:`bgai.game.table.Table`): two agent players at a table play exactly the games of the
batched game loop :func:`bgai.game.play.play` on the same dice; the cube, resignations, scoring and the record of
a game driven step by step; :meth:`Match.from_cube_state`, :meth:`Match.doubling_state`, :meth:`Match.answer_double`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.core.board import starting_board
from bgai.core.cube_state import CubeState
from bgai.errors import BgaiError, MatchStateError
from bgai.formats.matchrecord import AcceptResign, Double, Drop, Move, Resign, Take, replay
from bgai.game.match import Match, MatchRules
from bgai.game.play import dice_rng, play
from bgai.game.table import DOUBLE, AgentPlayer, Player, ResignOffer, Table


def _table_games(agents, rules: MatchRules, seed: int, unit: int) -> list[tuple]:
    """The games of one unit played at a :class:`Table` by two agent players, as comparable tuples."""
    games: list[tuple] = []
    moves: list[tuple] = []
    cube: list[tuple] = []

    def on_event(e) -> None:
        if e.kind == "move":
            view = table.view(e.player) if e.play is None else np.asarray(e.play.afterstate, dtype=np.int8)
            moves.append((e.player, e.dice, view.tobytes()))
        elif e.kind in ("take", "pass"):
            cube.append((len(moves), 1 - e.player, e.kind == "take"))
        elif e.kind == "end":
            o = e.outcome
            games.append((tuple(moves), tuple(cube), o.winner, o.points, o.kind))
            moves.clear()
            cube.clear()

    rng = np.random.default_rng(0)
    table = Table([AgentPlayer(a, rng) for a in agents], dice_rng(seed, unit), Match(rules=rules), on_event=on_event)
    while True:
        table.start_game()
        table.play_game()
        if rules.is_money or table.match.is_over:
            return games


def _loop_games(res, unit: int) -> list[tuple]:
    out = []
    for r in res.records:
        if r.unit != unit:
            continue
        moves = tuple((int(p), (int(max(d)), int(min(d))), a.tobytes()) for p, d, a in zip(r.movers, r.dice, r.afterstates))
        cube = tuple((int(ply), int(seat), bool(t)) for ply, seat, t in r.cube_actions)
        out.append((moves, cube, r.winner_seat, r.points, r.kind))
    return out


@pytest.mark.parametrize("rules", [MatchRules.match(5), MatchRules.money(jacoby=True)], ids=["match5", "money"])
def test_agent_players_at_a_table_play_the_game_loops_games(rules):
    pytest.importorskip("gnubg_nn", reason="gnubg-nn (dev extra) gives the agent with cube decisions")
    agents = (make_agent("gnubg"), make_agent("pubeval"))
    units = 6
    res = play(agents, [dice_rng(11, u) for u in range(units)], np.random.default_rng(0), rules=rules, record=True)
    doubles = 0
    for u in range(units):
        want = _loop_games(res, u)
        got = _table_games(agents, rules, 11, u)
        assert got == want, f"unit {u}"
        doubles += sum(len(g[1]) for g in got)
    assert doubles >= 3  # the cube was used (gnubg doubles; pubeval takes everything)
    if not rules.is_money:
        assert all(max(s) >= 5 for s in res.unit_score)


class Scripted(Player):
    """Answers from lists; records what it was asked."""

    def __init__(self, before=(), takes=(), plays=(), resigns=()) -> None:
        self.before, self.takes, self.plays, self.resigns = list(before), list(takes), list(plays), list(resigns)
        self.asked: list[str] = []

    def before_roll(self, table, me):
        self.asked.append("before")
        return self.before.pop(0)

    def answer_double(self, table, me):
        self.asked.append("double")
        return self.takes.pop(0)

    def choose_play(self, table, me, plays):
        self.asked.append("play")
        pick = self.plays.pop(0) if self.plays else 0
        return pick if isinstance(pick, ResignOffer) else plays[pick]

    def answer_resignation(self, table, me, points):
        self.asked.append(f"resign {points}")
        return self.resigns.pop(0)


def _crushed() -> np.ndarray:
    """Player 0's view: player 0 has all 15 checkers back on his 24 point, player 1 has one checker left."""
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 23] = 15
    b[1, 1] = 1
    return b


def test_resignation_scores_like_a_played_game_and_is_recorded():
    # money, Jacoby rule, centred cube: a gammon resignation accepted scores 1 (gammons do not count yet)
    a, b = Scripted(before=[ResignOffer(2)]), Scripted(resigns=[True])
    t = Table([a, b], np.random.default_rng(1), Match(rules=MatchRules.money(jacoby=True)))
    t.start_game(_crushed(), turn=0)
    out = t.play_game()
    assert (out.winner, out.points, out.kind) == (1, 1, 2) and t.match.score == (0, 1) and t.match.games == 1
    assert t.record().games[0].actions == (Resign(0, 2), AcceptResign(1))
    # no Jacoby rule, cube 2 owned by the resigner: a rejected single, then an accepted gammon: 2 x 2 = 4
    a = Scripted(before=[ResignOffer(1), ResignOffer(2)])
    b = Scripted(resigns=[False, True])
    t = Table([a, b], np.random.default_rng(1), Match(rules=MatchRules.money(jacoby=False), cube_value=2, cube_owner=0))
    t.start_game(_crushed(), turn=0)
    out = t.play_game()
    assert (out.winner, out.points) == (1, 4) and b.asked == ["resign 1", "resign 2"]


def test_double_take_redouble_pass_and_the_record():
    """A 7-point match at 0-0: 0 doubles, 1 takes; 1 redoubles at its turn, 0 passes: 1 scores 2."""
    p0 = Scripted(before=[DOUBLE], takes=[False])
    p1 = Scripted(before=[DOUBLE], takes=[True])
    t = Table([p0, p1], np.random.default_rng(5), Match(rules=MatchRules.match(7)))
    t.start_game(starting_board(), turn=0)
    assert t.play_turn() is None  # 0 doubled, 1 took, 0 rolled and played
    assert (t.match.cube_value, t.match.cube_owner, t.turn) == (2, 1, 1)
    out = t.play_turn()
    assert (out.winner, out.points, out.kind, out.passed) == (1, 2, 0, True)
    assert t.match.score == (0, 2) and t.match.cube_value == 1 and t.match.offered_by is None
    acts = t.record().games[0].actions
    assert acts[:2] == (Double(0), Take(1)) and isinstance(acts[2], Move) and acts[3:] == (Double(1), Drop(0))
    assert [d.action for d in replay(t.record())][-1] == Drop(0)


def test_no_cube_in_the_crawford_game_and_dice_of_a_set_up_position():
    # Crawford game: nobody is asked to double; the given dice are played at once
    m = Match(rules=MatchRules.match(5), score=(4, 2), crawford=True)
    p0, p1 = Scripted(), Scripted()
    events = []
    t = Table([p0, p1], np.random.default_rng(3), m, on_event=events.append)
    t.start_game(starting_board(), turn=1, dice=(3, 1))
    t.play_turn()
    t.play_turn()
    assert p0.asked == ["play"] and p1.asked == ["play"]
    moves = [(e.player, e.dice) for e in events if e.kind == "move"]
    assert moves[0] == (1, (3, 1)) and moves[1][0] == 0
    assert [e.kind for e in events][:3] == ["start", "roll", "move"]


def test_a_pending_double_from_the_start_is_answered_first():
    m = Match.from_cube_state(CubeState(), 1, double_offered=True)
    assert m.offered_by == 1
    p0, p1 = Scripted(takes=[True]), Scripted()
    t = Table([p0, p1], np.random.default_rng(2), m)
    with pytest.raises(MatchStateError, match="double pending"):
        t.start_game(starting_board(), turn=1, dice=(3, 1))
    t.start_game(starting_board(), turn=1)
    assert t.play_turn() is None
    assert p0.asked == ["double"] and p1.asked == ["play"]  # the doubler may not double again: it rolls
    assert (t.match.cube_value, t.match.cube_owner) == (2, 0)
    assert t.record().games[0].actions[:2] == (Double(1), Take(0))


def test_agent_players_refuse_to_judge_resignations_and_offers_are_checked():
    with pytest.raises(MatchStateError, match="1, 2 or 3 points"):
        ResignOffer(4)
    t = Table([Scripted(before=[ResignOffer(1)]), AgentPlayer(make_agent("pubeval"), np.random.default_rng(0))],
              np.random.default_rng(0), Match(rules=MatchRules.money()))
    t.start_game(_crushed(), turn=0)
    with pytest.raises(MatchStateError, match="cannot judge a resignation"):
        t.play_turn()
    t = Table([Scripted(before=["hello"]), Scripted()], np.random.default_rng(0), Match(rules=MatchRules.money()))
    t.start_game(starting_board(), turn=0)
    with pytest.raises(MatchStateError, match="rolls, doubles or resigns"):
        t.play_turn()


def test_a_session_started_with_score_or_cube_cannot_be_recorded():
    t = Table([Scripted(), Scripted()], np.random.default_rng(0), Match(rules=MatchRules.match(7), score=(3, 1)))
    with pytest.raises(BgaiError, match="score 3-1.*cannot be saved"):
        t.record()
    assert Table([Scripted(), Scripted()], np.random.default_rng(0)).record().games == ()


def _matches():
    """Every reachable kind of match state: money (Jacoby on/off, cube limit) and 5-point matches."""
    for jac, lim in itertools.product((True, False), (None, 8)):
        for cv, owner in [(1, -1), (2, 0), (4, 1), (8, 0)]:
            yield Match(rules=MatchRules.money(jacoby=jac, cube_limit=lim), cube_value=cv, cube_owner=owner)
    for score in itertools.product(range(5), repeat=2):
        for cv, owner in [(1, -1), (2, 0), (2, 1), (4, 1)]:
            crawford_game = 4 in score and score[0] != score[1]
            for crawford in (False, True) if crawford_game else (False,):
                if crawford and cv != 1:
                    continue
                done = 4 in score and not crawford
                yield Match(rules=MatchRules.match(5), score=score, cube_value=cv, cube_owner=owner,
                            crawford=crawford, crawford_done=done)


def test_match_from_cube_state_inverts_cube_state_and_doubling_state():
    n = 0
    for m in _matches():
        for p in (0, 1):
            assert Match.from_cube_state(m.cube_state(p), p) == m
            s = m.doubling_state(p)
            assert (s is not None) == (m.can_double(p) and m.cube_state(p).may_double())
            if s is not None:
                assert s == m.cube_state(p)
            n += 1
        if m.can_double(0):
            d = m.offer_double(0)
            assert Match.from_cube_state(m.cube_state(0), 0, double_offered=True) == d
            taken, none = d.answer_double(True)
            assert none is None and taken == d.take()
            assert d.answer_double(False) == d.pass_double()
    assert n > 200
    # the post-Crawford leader may double by the rules, but his cube has no use: no doubling state
    m = Match(rules=MatchRules.match(5), score=(4, 2), crawford_done=True)
    assert m.can_double(0) and m.doubling_state(0) is None and m.doubling_state(1) is not None
    with pytest.raises(MatchStateError, match="no double to take"):
        Match().answer_double(True)
