"""The value types Dice and CubeState, the one request parser (bgai.formats.request) and the CubeState converters
for Match ID, XGID and FIBS fields (``cube_state`` / ``from_cube_state`` of MatchState, XGIDState, FIBSState)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.core.board import flip, starting_board
from bgai.core.cube_state import CENTRED, DEFAULT_MET, ME, OPPONENT, CubeState
from bgai.core.dice import Dice
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import (
    FIBSBoardError,
    InvalidDiceError,
    InvalidPositionError,
    MatchIDError,
    PositionRequestError,
    XGIDError,
)
from bgai.formats.fibs import FIBSState, format_fibs_board, interpret_fibs_board
from bgai.formats.match_id import MatchState, decode_match_id, encode_match_id
from bgai.formats.request import detect_format, parse_position_request, read_position_request, read_request_params
from bgai.formats.wildbg import to_wildbg
from bgai.formats.xgid import XGIDState, decode_xgid, encode_xgid

START = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
START_WILDBG = "p24=2&p19=-5&p17=-3&p13=5&p12=-5&p8=3&p6=5&p1=-2"
# FIBS board of the start with 5-2 rolled (tests/test_serve_external.py's START_52)
START_FIBS = (
    "board:p0:p1:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:5:2:5:2:1:1:1:0:1:-1:0:25:0:0:0:"
    "0:0:0:0:1"
)


# --- Dice -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["31", "3-1", "3 1", "3,1", " 3 - 1 ", (3, 1), [3, 1], np.array([3, 1]),
                                   Dice(3, 1), (np.int8(3), np.int64(1))])
def test_dice_spellings(value):
    d = Dice.parse(value)
    assert d == Dice(3, 1) and (d.d1, d.d2) == (3, 1) and str(d) == "3-1" and tuple(d) == (3, 1)


def test_dice_behaves_like_a_pair():
    d = Dice.parse("62")
    a, b = d
    assert (a, b) == (6, 2) and d[0] == 6 and len(d) == 2
    assert np.array([d, Dice(1, 1)]).tolist() == [[6, 2], [1, 1]]
    assert d.same_roll("2-6") and not d.same_roll("61") and Dice(2, 6).high_first() == d
    assert Dice(5, 5).is_double and not d.is_double


@pytest.mark.parametrize(
    "value, fragment",
    [("71", "die 7 is not 1..6"), ("0-1", "die 0 is not 1..6"), ("3", "bad dice '3'"), ("3/1", "bad dice '3/1'"),
     ("311", "bad dice '311'"), ((3,), "expected two dice, got 1"), ((3, 1, 2), "expected two dice, got 3"),
     ((3.0, 1), "integers"), ((True, 1), "integers"), (None, "bad dice None"), ((3, 9), "die 9 is not 1..6")],
)
def test_bad_dice(value, fragment):
    with pytest.raises(InvalidDiceError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        Dice.parse(value)


def test_bad_dice_quotes_a_short_prefix_only():
    with pytest.raises(InvalidDiceError) as exc:
        Dice.parse("7" * 10_000_000)
    msg = str(exc.value)
    assert len(msg) < 150 and "(10000000 characters)" in msg
    with pytest.raises(InvalidDiceError):
        Dice(7, 1)


# --- CubeState --------------------------------------------------------------------------------------------------


def test_one_cube_state_class_and_default_met():
    from bgai.game import cube, met

    assert cube.CubeState is CubeState and (cube.CENTRED, cube.ME, cube.OPPONENT) == (CENTRED, ME, OPPONENT)
    assert DEFAULT_MET == met.DEFAULT_MET
    assert cube.met_for(CubeState(match_length=7)).name == met.load_met().name


# --- the request parser: every format, the same answer ------------------------------------------------------


def test_every_format_reads_the_same_position():
    forms = {
        "position_id": (START, "52"),
        "xgid": (START_XGID, None),
        "wildbg": (START_WILDBG, "5-2"),
        "fibs": (START_FIBS, None),
    }
    for fmt, (text, dice) in forms.items():
        assert detect_format(text) == fmt
        req = read_position_request(text, dice)
        assert req.source == fmt and req.position_id == START and req.dice == Dice(5, 2), fmt
        np.testing.assert_array_equal(req.board, starting_board())
        assert not req.board.flags.writeable
        assert req.cube_state.is_money and req.cube_state.owner == CENTRED
        assert req.rolled == (fmt in ("xgid", "fibs")) and req.cube_given == (fmt in ("xgid", "fibs"))
    board, state, dice = parse_position_request(START, "31")
    assert dice == Dice(3, 1) and state == CubeState() and encode_position_id(board) == START


def test_xgid_without_prefix_and_wildbg_with_spaces():
    assert read_position_request(START_XGID[5:]).source == "xgid"
    req = read_position_request("p24=2 p19=-5, p17=-3 p13=5 p12=-5 p8=3 p6=5 p1=-2", "52")
    assert req.position_id == START


def test_position_id_with_match_id():
    mid = encode_match_id(MatchState(match_length=7, score=(2, 4), player_on_roll=1, turn=1, cube_value=2,
                                     cube_owner=0, dice=(6, 1)))
    req = read_position_request(f"{START}:{mid}")
    assert req.match_id == mid and req.cube_given and req.rolled and req.dice == Dice(6, 1)
    assert req.cube_state == CubeState(cube_value=2, owner=OPPONENT, match_length=7, score=(4, 2), jacoby=False)
    same = read_position_request(START, "1-6", match_id=mid)
    assert same.cube_state == req.cube_state and same.dice == Dice(1, 6)  # the order given is kept


@pytest.mark.parametrize(
    "text, dice, kw, error, fragment",
    [
        ("dncPAADt7g4AAA:ggGgACAAIAAA", None, {}, MatchIDError, "the cube was turned in the Crawford game"),
        (START + ":cAkAAAAAAAAA", None, {"match_id": "cAkAAAAAAAAA"}, PositionRequestError, "give the Match ID once"),
        (START_XGID, None, {"match_id": "cAkAAAAAAAAA"}, PositionRequestError, "in the XGID or as a Match ID"),
        (START + ":QYkqASAAIAAA", "31", {}, InvalidDiceError, "dice 3-1 disagree with the roll 5-2 in Match ID"),
        (START_XGID, "64", {}, InvalidDiceError, "disagree with the roll 5-2 in the XGID"),
        (START_FIBS, "11", {}, InvalidDiceError, "disagree with the roll 5-2 in the FIBS board"),
        ("AAAAwP8fAAAAAA", "31", {}, InvalidPositionError, "the game is over: the opponent of the side on roll"),
        ("p1=2", "31", {}, InvalidPositionError, "the game is over"),
        ("p1=2&p1=3", "31", {}, PositionRequestError, "given twice"),
        ("p1=2&p30=3", "31", {}, PositionRequestError, "unknown board parameter 'p30'"),
        ("XGID=-b----E-C---eE---c-e----B-:1:0:1:00:0:0:3:0:10", None, {}, XGIDError, "centred cube must be on 1"),
        ("XGID=-b----E-C---eE---c-e----B-:1:1:1:00:4:2:1:5:10", None, {}, XGIDError, "turned in the Crawford game"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:3:0:10", "31", {}, PositionRequestError, "double is pending"),
        ("nonsense", "31", {}, Exception, "Position ID 'nonsense'"),
    ],
)
def test_request_errors(text, dice, kw, error, fragment):
    with pytest.raises(error, match=fragment):
        read_position_request(text, dice, **kw)


def test_position_is_blamed_before_the_dice_and_input_is_quoted_short():
    with pytest.raises(Exception, match="Position ID") as exc:
        read_position_request("A" * 100_000, "77")
    assert len(str(exc.value)) < 200
    with pytest.raises(InvalidPositionError, match="game is over"):
        read_position_request("AAAAwP8fAAAAAA", "77")


def test_pending_double_is_the_doublers_view():
    # Match ID: player 0 doubled, turn with player 1
    mid = encode_match_id(MatchState(player_on_roll=0, turn=1, double_offered=True, match_length=7, score=(4, 6)))
    req = read_position_request(START, match_id=mid)
    assert req.double_offered and req.dice is None and req.cube_state.score == (4, 6)
    # the FIBS board of a pending double is from the side doubled: the parser turns it to the doubler's view
    b = decode_position_id("wN1tAwDb3Q4AAA")
    line = format_fibs_board(FIBSState.from_cube_state(flip(b), CubeState(), doubled=True))
    req = read_position_request(line)
    assert req.double_offered and req.position_id == "wN1tAwDb3Q4AAA"


def test_request_params_of_the_http_api():
    req = read_request_params({"position_id": f"{START}:cAkAAAAAAAAA", "dice": "31"})
    assert req.match_id == "cAkAAAAAAAAA" and req.dice == Dice(3, 1) and req.cube_given
    req = read_request_params({**{k: str(v) for k, v in to_wildbg(starting_board()).items()}, "die1": "4",
                               "die2": "2", "match_id": "cAkAAAAAAAAA"})
    assert req.source == "wildbg" and req.dice == Dice(4, 2) and req.match_id == "cAkAAAAAAAAA"
    req = read_request_params({"position_id": START, "cube_value": "4", "cube_owner": "opponent", "jacoby": "false"})
    assert req.cube_state == CubeState(cube_value=4, owner=OPPONENT, jacoby=False) and req.cube_given
    for params, fragment in [
        ({"position_id": START, "xgid": START_XGID}, "one form only"),
        ({}, "no position given"),
        ({"position_id": START, "dice": "31", "die1": "3"}, "not both"),
        ({"position_id": START, "die2": "3"}, "give both die1 and die2"),
        ({"position_id": START, "cube_value": "2"}, "has an owner"),
        ({"xgid": START_XGID, "cube_value": "2", "cube_owner": "opponent"}, "not both"),
        ({"position_id": START, "cube_owner": "mine"}, "cube_owner: expected centred"),
        ({"xgid": "nonsense"}, "XGID"),
        ({"position_id": f"{START}:cAkAAAAAAAAA", "match_id": "cAkAAAAAAAAA"},
         "position_id=POSITION_ID:MATCH_ID or match_id=MATCH_ID, not both"),
        ({"position_id": START, "die1": "3_0", "die2": "1"}, "dice must be integers 1..6, got die1='3_0'"),
        ({"position_id": START, "die1": " 3", "die2": "1"}, "dice must be integers 1..6, got die1=' 3'"),
        ({"position_id": START, "cube_value": "0_2", "cube_owner": "opponent"}, "cube_value: expected an integer 1, 2, 4"),
    ]:
        with pytest.raises(Exception, match=fragment):
            read_request_params(params)


# --- converters: round trips through the real encoders --------------------------------------------------------


def _states(rng, n):
    out = []
    while len(out) < n:
        length = int(rng.choice([0, 1, 3, 5, 7, 11, 25]))
        cube = int(2 ** rng.integers(0, 5))
        owner = CENTRED if cube == 1 else int(rng.choice([ME, OPPONENT]))
        if length == 0:
            out.append(CubeState(cube, owner, jacoby=bool(rng.integers(2)),
                                 cube_limit=None if rng.integers(2) else int(2 ** rng.integers(5, 9))))
            continue
        score = (int(rng.integers(0, length)), int(rng.integers(0, length)))
        crawford = (length - 1 in score) and bool(rng.integers(2)) and length > 1
        if crawford:
            cube, owner = 1, CENTRED
        out.append(CubeState(cube, owner, length, score, crawford=crawford, jacoby=False))
    return out


def test_match_id_round_trip():
    rng = np.random.default_rng(1)
    for state in _states(rng, 300):
        for player in (0, 1):
            ms = decode_match_id(encode_match_id(MatchState.from_cube_state(state, player_on_roll=player)))
            back = ms.cube_state
            assert back == CubeState(state.cube_value, state.owner, state.match_length, state.score,
                                     state.crawford, state.jacoby if state.is_money else False), state
            assert ms.player_on_roll == player


def test_xgid_round_trip():
    rng = np.random.default_rng(2)
    board = decode_position_id("4HPwATDgc/ABMA")
    for state in _states(rng, 300):
        xs = decode_xgid(encode_xgid(XGIDState.from_cube_state(board, state, (5, 2))))
        back = xs.cube_state
        limit = (state.cube_limit or 1024) if state.is_money else None
        assert back == CubeState(state.cube_value, state.owner, state.match_length, state.score, state.crawford,
                                 state.jacoby, cube_limit=limit), state
        assert xs.dice == (5, 2)


def test_fibs_round_trip():
    rng = np.random.default_rng(3)
    board = decode_position_id("4HPwATDgc/ABMA")
    for state in _states(rng, 300):
        jac = state.jacoby
        fs = interpret_fibs_board(format_fibs_board(FIBSState.from_cube_state(board, state, (6, 4))))
        back = fs.to_cube_state(jacoby=jac)
        assert back == CubeState(state.cube_value, state.owner, state.match_length, state.score, state.crawford,
                                 jac), state


def test_converter_errors():
    with pytest.raises(MatchIDError, match="not below the match length"):
        MatchState(match_length=5, score=(5, 1), game_state=2).cube_state
    with pytest.raises(XGIDError, match="above the (money )?cube limit"):
        decode_xgid("XGID=-b----E-C---eE---c-e----B-:3:1:1:00:0:0:0:0:2").cube_state
    with pytest.raises(FIBSBoardError, match="Crawford"):
        FIBSState(board=starting_board(), match_length=5, score=(4, 2), cube_value=2, cube_owner=0,
                  crawford=True).cube_state
