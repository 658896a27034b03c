"""Resignations (:mod:`bgai.analysis.resign`) and the places that use it: the external-player protocol, ``bgai play``
and the HTTP API.

The rule is checked against GNU Backgammon: its ``hint`` on an offered resignation (``gnubg -t``, the resigner on
roll) for positions from seeded self-play, money and match scores, cubes centred and owned.  GNU Backgammon values
playing on cubelessly, bgai cubefully, so the decisions must agree wherever the cube cannot swing them (bgai's
margin clear of zero); the value of the offer (points, or the MET entry behind the match-winning chance) must
agree everywhere.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from bgai.agents.base import ProbabilityAgent
from bgai.agents.registry import make_agent
from bgai.analysis.resign import ResignationError, resignation_decision, resignation_value
from bgai.core.board import flip, is_game_over, starting_board
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import InvalidPositionError
from bgai.formats.fibs import FIBSState, format_fibs_board, interpret_fibs_board
from bgai.formats.match_id import decode_match_id, encode_match_id
from bgai.game.cube import CubeState, met_for
from bgai.game.match import Match, MatchRules, cube_state_from_match_id
from bgai.game.met import load_met
from bgai.serve.bot import Bot
from bgai.serve.external import ExternalSession
from bgai.tui.terminal import HELP_TEXT, TerminalGame

GNUBG = shutil.which("gnubg") or next(
    (p for p in ("/usr/games/gnubg", "/usr/bin/gnubg") if os.access(p, os.X_OK)), None
)

#: The defect report's board: a 5-point match at 4-4 (post-Crawford, double match point), bgai to act, its
#: opponent offering a single game -- which wins bgai the match.  GNU Backgammon accepts; bgai rejected.
DMP_BOARD = (
    "board:bgai:opponent:5:4:4:-3:-2:2:2:2:2:3:0:2:0:0:0:-5:2:-3:0:0:0:0:-2:0:0:0:0:0:0:1:0:0:0:0:1:1:1:0:1:-1:0:25:0"
    ":0:0:3:0:0:1:0"
)


def _gnubg_agent():
    try:
        return make_agent("gnubg")
    except Exception as exc:  # gnubg-nn (the 'gnubg' extra) missing
        pytest.skip(f"the gnubg agent is not available: {exc}")


class Fixed(ProbabilityAgent):
    """A probability agent that gives every position the same probabilities."""

    name = "fixed"

    def __init__(self, probs) -> None:
        self.p = np.asarray(probs, dtype=np.float64)

    def probabilities(self, boards):
        return np.tile(self.p, (np.asarray(boards).reshape(-1, 2, 25).shape[0], 1))


def _crushing() -> np.ndarray:
    """The side on roll has a closed board (points 1..6) with 4 of its opponent's checkers on the bar; the
    opponent's other 11 checkers are on its mid-point and 12 point: gammon all but certain, backgammon likely."""
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 0:6] = (2, 2, 2, 2, 3, 4)
    b[1, 24], b[1, 12], b[1, 11] = 4, 6, 5
    return b


def _race_without_gammons() -> np.ndarray:
    """A bear-off the side on roll leads, its opponent having borne off 3 checkers (no gammon possible)."""
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 0:2] = 3  # 6 checkers left on points 1 and 2
    b[1, 3:6] = 4  # 12 left on points 4..6: 3 borne off
    return b


# ------------------------------------------------------------------------------------------------- the library
def test_exact_values_with_a_certain_gammon():
    """A side that wins a gammon for certain (dead cube): playing on is worth exactly 2 points per cube in money,
    the MET's gammon entry in a match."""
    sure_gammon = Fixed([1.0, 1.0, 0.0, 0.0, 0.0])
    board = starting_board()
    for cube, owner in ((1, -1), (2, 0), (4, 1)):
        cs = CubeState(cube_value=cube, owner=owner, jacoby=False)
        got = [resignation_decision(sure_gammon, board, cs, k) for k in (1, 2, 3)]
        assert [d.accept for d in got] == [False, True, True]
        assert [d.equity_if_accepted for d in got] == [cube, 2 * cube, 3 * cube]
        assert all(d.equity_if_played == pytest.approx(2.0 * cube, abs=1e-12) for d in got)
    met = load_met("kazaross-xg2")
    cs = CubeState(match_length=7, score=(2, 1), jacoby=False)
    got = [resignation_decision(sure_gammon, board, cs, k) for k in (1, 2, 3)]
    assert [d.accept for d in got] == [False, True, True]
    assert [d.equity_if_accepted for d in got] == [met.mwc_after(5, 6, k) for k in (1, 2, 3)]
    assert got[0].equity_if_played == pytest.approx(met.mwc_after(5, 6, 2), abs=1e-12)
    # the same offer from the resigning side's turn: the same answer
    r = resignation_decision(Fixed([0.0, 0.0, 0.0, 1.0, 0.0]), flip(board), cs, 1, decider_on_roll=False)
    assert not r.accept and r.equity_if_played == pytest.approx(met.mwc_after(5, 6, 2), abs=1e-12)


def test_an_offer_that_wins_the_match_is_always_accepted():
    sure_backgammon = Fixed([1.0, 1.0, 1.0, 0.0, 0.0])  # even a certain backgammon is not worth more
    for score, crawford in (((4, 4), False), ((4, 0), True), ((4, 2), False)):
        cs = CubeState(match_length=5, score=score, crawford=crawford, jacoby=False)
        d = resignation_decision(sure_backgammon, starting_board(), cs, 1)
        assert d.accept and d.equity_if_accepted == 1.0 and d.equity_if_played == pytest.approx(1.0)
    # a cube of 2 turns a single into the match at 3-away
    cs = CubeState(cube_value=2, owner=1, match_length=5, score=(3, 0), jacoby=False)
    assert resignation_value(cs, 1) == 1.0
    assert resignation_decision(sure_backgammon, starting_board(), cs, 1).accept


def test_the_jacoby_rule_counts_a_gammon_resignation_as_one_point_while_the_cube_is_centred():
    assert resignation_value(CubeState(jacoby=True), 2) == 1.0
    assert resignation_value(CubeState(jacoby=True), 3) == 1.0
    assert resignation_value(CubeState(jacoby=False), 3) == 3.0
    assert resignation_value(CubeState(cube_value=2, owner=0, jacoby=True), 2) == 4.0  # the cube is turned


def test_money_decisions_with_the_gnubg_evaluator():
    agent = _gnubg_agent()
    crushing = _crushing()
    # far more than a single: gammons (and backgammons) count without the Jacoby rule
    cs = CubeState(jacoby=False)
    d1, d2, d3 = (resignation_decision(agent, crushing, cs, k) for k in (1, 2, 3))
    assert agent.probabilities(crushing[None])[0][1] > 0.5  # more than half gammons
    assert not d1.accept and not d2.accept and d3.accept
    assert d1.equity_if_played > 2.0
    # under the Jacoby rule, with the cube centred, nothing is worth more than a single: accept
    assert resignation_decision(agent, crushing, CubeState(jacoby=True), 1).accept
    # but once the cube is turned gammons count again: a single is refused with the cube on 2 (points x cube)
    d = resignation_decision(agent, crushing, CubeState(cube_value=2, owner=0, jacoby=True), 1)
    assert not d.accept and d.equity_if_accepted == 2.0 and d.equity_if_played > 4.0
    # no gammon possible: the value of playing on is at most one point per cube, so a gammon is always accepted
    race = _race_without_gammons()
    p = agent.probabilities(race[None])[0]
    assert p[1] == 0.0 and p[0] > 0.5
    for cube, owner in ((1, -1), (2, 0), (2, 1), (4, 0)):
        cs = CubeState(cube_value=cube, owner=owner, jacoby=False)
        for on_roll in (True, False):
            d = resignation_decision(agent, race, cs, 2, decider_on_roll=on_roll)  # race: the decider's view
            assert d.accept and d.equity_if_played <= cube + 1e-9, (cube, owner, on_roll, d)


def test_agents_without_probabilities_accept_only_what_cannot_be_beaten():
    pubeval = make_agent("pubeval")
    money = CubeState(jacoby=False)
    assert [resignation_decision(pubeval, starting_board(), money, k).accept for k in (1, 2, 3)] == [False, False, True]
    assert math.isnan(resignation_decision(pubeval, starting_board(), money, 3).equity_if_played)
    dmp = CubeState(match_length=5, score=(4, 4), jacoby=False)
    assert resignation_decision(pubeval, starting_board(), dmp, 1).accept


def test_bad_offers_and_positions_are_refused():
    agent = Fixed([0.5, 0.1, 0.0, 0.1, 0.0])
    for bad in (0, 4, -1, 1.5, True, "1"):
        with pytest.raises(ResignationError, match="1 \\(a single game\\), 2 \\(a gammon\\) or 3"):
            resignation_decision(agent, starting_board(), CubeState(), bad)
    over = starting_board()
    over[1] = 0
    with pytest.raises(InvalidPositionError, match="game is over"):
        resignation_decision(agent, over, CubeState(), 1)
    with pytest.raises(InvalidPositionError):
        resignation_decision(agent, np.full((2, 25), 3, dtype=np.int8), CubeState(), 1)


# ------------------------------------------------------------------------------------- against GNU Backgammon
#: (session command, jacoby, score (gnubg, resigner), crawford, cube, owner (gnubg player index)): gnubg (player 0)
#: decides, "root" (player 1) resigns on roll.
_SETUPS = [
    ("session", "off", None, None, 1, None),
    ("session", "on", None, None, 1, None),
    ("session", "off", None, None, 2, 0),
    ("session", "off", None, None, 2, 1),
    ("match 5", None, (4, 4), None, 1, None),
    ("match 7", None, (6, 3), "on", 1, None),
    ("match 7", None, (3, 6), "off", 1, None),
    ("match 7", None, (2, 5), None, 2, 0),
    ("match 9", None, (1, 0), None, 1, None),
    ("match 9", None, (0, 1), None, 2, 1),
]
_HINT = re.compile(
    r"Equity before resignation : *([-+\d.]+)\nEquity after resignation : *([-+\d.]+) \( *([-+\d.]+)\)\n\n"
    r"Correct resign decision : (Accept|Reject)\n\n GNU Backgammon  Position ID: (\S+)\n +Match ID +: (\S+)"
)


def _positions(agent, n: int, seed: int) -> list[np.ndarray]:
    """Positions from seeded self-play, mostly where the side on roll risks a gammon (resignation candidates)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        b = starting_board()
        for _ in range(200):
            d = rng.integers(1, 7, size=2)
            after = agent.choose(b[None], d[None], rng)[0]
            if is_game_over(after[None])[0]:
                break
            b = flip(after)
            lose_gammon = agent.probabilities(b[None])[0][3]
            if (lose_gammon > 0.25 or len(out) % 4 == 3) and rng.random() < 0.3:
                out.append(b)
                break
    return out


@pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon is not installed (Debian: apt-get install gnubg)")
def test_decisions_agree_with_gnu_backgammon():
    agent = _gnubg_agent()
    positions = _positions(agent, 12, seed=5)
    cmds, offers = ["set player 0 human", "set player 1 human", "set confirm new off"], []
    for i, b in enumerate(positions):
        for j, (kind, jacoby, score, crawford, cube, owner) in enumerate(_SETUPS):
            points = 1 + (i + j) % 3
            cmds += [f"set jacoby {jacoby}"] if jacoby else []
            cmds.append(f"new {kind}")
            cmds += [f"set score {score[0]} {score[1]}"] if score else []
            cmds += [f"set crawford {crawford}"] if crawford else []
            cmds += ["set turn 1", f"set board {encode_position_id(b)}"]
            cmds += [f"set cube value {cube}", f"set cube owner {owner}"] if cube > 1 else []
            cmds += [f"resign {['single', 'gammon', 'backgammon'][points - 1]}", "hint", "show board"]
            offers.append((points, encode_position_id(b)))
    out = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(cmds) + "\n", capture_output=True, text=True,
                         timeout=300).stdout
    hints = _HINT.findall(out)
    assert len(hints) == len(offers) == 120
    agree, clear, clear_rejects = 0, 0, 0
    kinds = set()
    for (points, pid0), (_, after, _, decision, pid, mid) in zip(offers, hints):
        ms = decode_match_id(mid)
        assert (ms.resign, pid) == (points, pid0)  # gnubg holds the intended offer and position
        board = decode_position_id(pid)  # the resigner's view, on roll
        cs = cube_state_from_match_id(mid, board).swapped()  # the decider's view
        d = resignation_decision(agent, flip(board), cs, points, decider_on_roll=False)
        # the value of the offer: gnubg prints it in money equity per cube (match: normalised from the MET)
        if cs.is_money:
            assert float(after) == pytest.approx(d.equity_if_accepted / cs.cube_value, abs=1e-3)
            margin = (d.equity_if_accepted - d.equity_if_played) / cs.cube_value
            clear_margin = 0.08
        else:
            a_dec, a_res = cs.away
            met = met_for(cs)
            win = met.mwc_after(a_res, a_dec, cs.cube_value, crawford=cs.crawford)  # the resigner's view
            lose = met.mwc_after(a_res, a_dec, -cs.cube_value, crawford=cs.crawford)
            normalised = (2 * (1 - d.equity_if_accepted) - (win + lose)) / (win - lose)
            assert float(after) == pytest.approx(-normalised, abs=2e-3)
            margin = d.equity_if_accepted - d.equity_if_played
            clear_margin = 0.05
        kinds.add((cs.is_money, cs.cube_value, cs.owner, cs.crawford, d.accept))
        agree += d.accept == (decision == "Accept")
        if abs(margin) >= clear_margin:  # the cube cannot swing it: the decisions must agree
            clear += 1
            clear_rejects += not d.accept
            assert d.accept == (decision == "Accept"), (pid, mid, points, d, decision)
    assert clear >= 90 and clear_rejects >= 3 and agree >= 110, (clear, clear_rejects, agree)
    assert len(kinds) >= 10


# ----------------------------------------------------------------------------------------------- the front ends
def test_external_protocol_accepts_the_match_winning_single_of_the_defect_report():
    bot = Bot(_gnubg_agent(), "gnubg")
    s = ExternalSession(bot, np.random.default_rng(0))
    assert s.handle(DMP_BOARD + " resignation 1") == "accept\n"
    assert s.handle(DMP_BOARD + " resignation 2") == "accept\n"
    # even an agent without probabilities takes the match
    s = ExternalSession(Bot.from_spec("pubeval"), np.random.default_rng(0))
    assert s.handle(DMP_BOARD + " resignation 1") == "accept\n"


def test_external_protocol_decides_for_you_when_the_resigning_side_is_on_turn():
    """A resignation offered while the opponent (the resigning side) is on turn is still offered to "you"."""
    bot = Bot(_gnubg_agent(), "gnubg")
    s = ExternalSession(bot, np.random.default_rng(0))
    line = format_fibs_board(FIBSState(board=_crushing()))  # you crush the opponent, you on turn
    parts = line.split(":")
    parts[32] = str(-int(parts[32]))  # the turn field: the opponent is on turn now
    theirs = ":".join(parts)
    for text in (line, theirs):
        assert s.handle(text + " resignation 1 jacobyrule off") == "reject\n"
        assert s.handle(text + " resignation 3 jacobyrule off") == "accept\n"
    # the hopeless side is offered a single: it accepts, whoever is on turn
    lost = format_fibs_board(FIBSState(board=flip(_crushing())))
    parts = lost.split(":")
    parts[32] = str(-int(parts[32]))
    for text in (lost, ":".join(parts)):
        assert s.handle(text + " resignation 1 jacobyrule off") == "accept\n"


class _Script:
    """Answers the terminal's prompts from a list; records what the game says."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.out: list[str] = []

    def ask(self, prompt: str) -> str:
        self.out.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    def say(self, text: str) -> None:
        self.out.append(text)


def test_terminal_resignation_is_decided_by_the_library():
    agent = _gnubg_agent()
    # a 5-point match at 4-4: your single resignation hands bgai the match; bgai accepts
    s = _Script(["resign", "quit"])
    g = TerminalGame(Bot(agent, "gnubg"), match_length=5, rng=np.random.default_rng(3), ask=s.ask, say=s.say)
    g.match = Match(rules=MatchRules.match(5), score=(4, 4), crawford_done=True)
    g.run()
    text = "\n".join(s.out)
    assert "You offer to resign a single game.  bgai accepts" in text and "100.0% if it accepts" in text
    assert "bgai wins the match." in text and g.match.score == (4, 5)
    # money, no Jacoby rule, you hopelessly gammoned: a single is refused (play goes on), a backgammon accepted
    s = _Script(["resign 1", "resign backgammon", "n"])
    g = TerminalGame(Bot(agent, "gnubg"), rng=np.random.default_rng(3), ask=s.ask, say=s.say)
    g.match = Match(rules=MatchRules.money(jacoby=False))

    def lost_game(start=None) -> None:  # your turn in the crushed position (before rolling: you may double, or resign)
        g.board = flip(_crushing())
        g.turn = 0
        g._human_turn(None)

    g.play_game = lost_game
    g.run()
    text = "\n".join(s.out)
    want = resignation_decision(agent, _crushing(), CubeState(jacoby=False), 1, decider_on_roll=False)
    assert not want.accept
    assert "You offer to resign a single game.  bgai rejects" in text
    assert "You offer to resign a backgammon.  bgai accepts" in text and g.match.score == (0, 3)
    assert "resign [1|2|3]" in HELP_TEXT


def test_http_api_answers_resignations_with_the_library():
    from test_serve_http import Server  # (tests/ is on sys.path under pytest)

    agent = _gnubg_agent()
    server, plain = Server(Bot(agent, "gnubg")), Server(Bot.from_spec("pubeval"))
    try:
        _http_checks(agent, server.client, plain.client)
    finally:
        server.stop()
        plain.stop()


def _http_checks(agent, client, plain) -> None:
    # the defect report's position: 5-point match at 4-4 post-Crawford, bgai on roll, a single offered
    dmp = interpret_fibs_board(DMP_BOARD)
    mid = encode_match_id(Match(rules=MatchRules.match(5), score=(4, 4), crawford_done=True).to_match_state(0))
    r = client.get("/api/resign", params={"position_id": encode_position_id(dmp.board), "match_id": mid, "points": 1})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["accept"] is True and j["units"] == "mwc" and j["equity_if_accepted"] == 1.0
    assert j["decides"] == "on_roll" and j["state"]["score"] == [4, 4]
    # money without the Jacoby rule: the crushing side refuses a single and a gammon, takes a backgammon --
    # whether it is on roll (resigns=opponent) or its opponent is (resigns=on_roll)
    crushing = _crushing()
    for resigns, board, on_roll in (("opponent", crushing, True), ("on_roll", flip(crushing), False)):
        for points in (1, 2, 3):
            q = {"position_id": encode_position_id(board), "points": points, "resigns": resigns, "jacoby": "false",
                 "cube_value": 1, "cube_owner": "centred"}
            j = client.get("/api/resign", params=q).json()
            want = resignation_decision(agent, crushing, CubeState(jacoby=False), points, decider_on_roll=on_roll)
            assert (j["accept"], j["units"]) == (want.accept, "points") and want.accept == (points == 3)
            assert j["equity_if_accepted"] == want.equity_if_accepted
            assert j["equity_if_played"] == pytest.approx(want.equity_if_played, abs=1e-9)
    # with the Jacoby rule (the default) and a centred cube, a single is enough
    j = client.get("/api/resign", params={"position_id": encode_position_id(crushing), "points": 1}).json()
    assert j["accept"] is True and j["equity_if_played"] == pytest.approx(1.0)
    # an agent without probabilities: equity_if_played is null
    j = plain.get("/api/resign", params={"position_id": "4HPwATDgc/ABMA", "points": 3}).json()
    assert j["accept"] is True and j["equity_if_played"] is None
    for q, message in (
        ({"points": 4}, "points must be 1 (a single game), 2 (a gammon) or 3"),
        ({"points": "x"}, "points: expected an integer, got 'x'"),
        ({}, "points: missing"),
        ({"points": 1, "resigns": "me"}, "resigns must be opponent or on_roll, got 'me'"),
        ({"points": 1, "dice": "31"}, "resignations are judged before the roll"),
    ):
        r = client.get("/api/resign", params={"position_id": "4HPwATDgc/ABMA", **q})
        assert r.status_code == 400 and message in r.json()["message"], (q, r.text)
