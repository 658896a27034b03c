"""Regression tests for the format defects: MET beyond 25 points, Match IDs as gnubg writes them, XGID cube limit /
Crawford / doubling checks, FIBS dice pairs, and over-long numbers in every format reader.

The GNU Backgammon cross-checks drive the Debian program (``/usr/games/gnubg -t``) and are skipped without it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess

import numpy as np
import pytest

from bgai.core.board import starting_board
from bgai.core.movegen import parse_play
from bgai.core.notation import parse_moves
from bgai.errors import (
    BgaiError,
    FIBSBoardError,
    FormatError,
    MatchIDError,
    MatchStateError,
    NotationError,
    XGIDError,
)
from bgai.formats.fibs import interpret_fibs_board, parse_fibs_board
from bgai.formats.match_id import MatchState, decode_match_id, encode_match_id
from bgai.formats.wildbg import board_from_wildbg
from bgai.formats.xgid import decode_xgid, encode_xgid
from bgai.game.cube import CubeState, cube_decision
from bgai.game.match import Match, MatchRules, cube_state_from_match_id, match_from_match_id
from bgai.game.met import MAX_MATCH_LENGTH, load_met
from bgai.util.integers import MAX_DIGITS, is_decimal, parse_int

GNUBG = "/usr/games/gnubg"
GNUBG_MET = "/usr/share/gnubg/met/Kazaross-XG2.xml"
needs_gnubg = pytest.mark.skipif(not os.access(GNUBG, os.X_OK), reason="GNU Backgammon (/usr/games/gnubg) missing")

CLIP = (
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:"
    "25:0:0:0:0:2:0:0:0"
)
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
HUGE = "1" * 5000  # more digits than Python's int() converts (4,300): it raises a plain ValueError


def run_gnubg(commands: list[str], home) -> str:
    """Standard output of ``gnubg -t`` fed ``commands`` (one per line), with ``home`` as $HOME."""
    proc = subprocess.run(
        [GNUBG, "-t", "-q"],
        input="\n".join(commands) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HOME": str(home)},
    )
    return proc.stdout


# ------------------------------------------------------------------------------------------- 2. MET to 64 points


def _parse_gnubg_met(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Pre-Crawford (N, N) and player 0's post-Crawford (N,) tables of ``show matchequitytable N``, as
    probabilities (gnubg prints percentages with 4 decimals)."""
    row = re.compile(r"\s*\d+-away((?:\s+\d+\.\d+)+)\s*$")

    def rows(part: str) -> list[list[float]]:
        return [[float(x) / 100 for x in m.group(1).split()] for m in map(row.match, part.splitlines()) if m]

    pre_part, rest = text.split("Pre-Crawford table:")[1].split("Post-Crawford table for player 0")
    post_part = rest.split("Post-Crawford table for player 1")[0]
    return np.array(rows(pre_part)), np.array(rows(post_part)[0])


@pytest.fixture(scope="module")
def gnubg_met(tmp_path_factory):
    if not os.access(GNUBG, os.X_OK) or not os.path.exists(GNUBG_MET):
        pytest.skip("GNU Backgammon or its Kazaross-XG2 table missing")
    out = run_gnubg(
        [f"set matchequitytable {GNUBG_MET}", f"show matchequitytable {MAX_MATCH_LENGTH}"],
        tmp_path_factory.mktemp("gnubg_home"),
    )
    assert "Kazaross XG2" in out
    return _parse_gnubg_met(out)


def test_met_extended_to_64_points_agrees_with_gnubg(gnubg_met):
    """Every entry of both tables, 64 x 64 pre-Crawford and 64 post-Crawford, within gnubg's printing precision
    (1e-6 in probability) plus its single-precision arithmetic."""
    pre, post = gnubg_met
    met = load_met()
    assert pre.shape == (64, 64) and post.shape == (64,)
    assert met.length == 64 and met.native_length == 25
    diff_pre = np.abs(met.pre_crawford - pre)
    diff_post = np.abs(met.post_crawford - post)
    assert diff_pre.max() < 2e-6, np.unravel_index(diff_pre.argmax(), diff_pre.shape)
    assert diff_post.max() < 2e-6, diff_post.argmax()
    # the extension itself (rows and columns beyond 25) is most of the table: 3471 of 4096 entries
    assert diff_pre[25:, :].max() < 2e-6 and diff_pre[:, 25:].max() < 2e-6
    assert diff_post[24:].max() < 2e-6


def test_met_beyond_25_points_spot_values():
    # gnubg 1.07 `show matchequitytable 30` with Kazaross-XG2 (percentages / 100); runs without gnubg
    met = load_met()
    assert met.mwc(26, 1) == pytest.approx(0.000821, abs=1e-6)
    assert met.mwc(1, 26) == pytest.approx(0.999179, abs=1e-6)
    assert met.mwc(30, 25) == pytest.approx(0.351637, abs=1e-6)
    assert met.mwc(25, 30) == pytest.approx(0.648363, abs=1e-6)
    assert met.mwc(27, 10) == pytest.approx(0.054641, abs=1e-6)
    assert met.mwc(30, 30) == pytest.approx(0.5, abs=1e-6)
    assert met.mwc(26, 1, post_crawford=True) == pytest.approx(0.001061, abs=1e-6)
    assert met.mwc(25, 1, post_crawford=True) == pytest.approx(0.001181, abs=1e-6)  # gnubg's formula, not 0.00123
    assert met.mwc(29, 1, post_crawford=True) == pytest.approx(0.000409, abs=1e-6)
    assert 0 < met.mwc(64, 1) < met.mwc(63, 1) < 1e-6
    with pytest.raises(MatchStateError, match="covers matches up to 64"):
        met.mwc(65, 1)


def test_30_point_match_is_accepted():
    # was: "a 30-point match is longer than the Kazaross-XG2 table (25 points)"
    state = cube_state_from_match_id(encode_match_id(MatchState(match_length=30, score=(3, 10), dice=(0, 0))))
    assert state.match_length == 30 and state.away == (27, 20)
    decision = cube_decision(np.array([0.6, 0.2, 0.01, 0.15, 0.005]), state, 0.68)
    assert decision.mwc is not None and all(0 < m < 1 for m in decision.mwc)
    with pytest.raises(MatchIDError, match="longer than"):
        cube_state_from_match_id(encode_match_id(MatchState(match_length=65)))


def test_met_extension_is_a_no_op_for_a_full_table():
    met = load_met()
    assert met.extended(64) is met and met.extended(30) is met
    with pytest.raises(MatchStateError, match="positive integer"):
        met.extended(0)


# ------------------------------------------------------------------------------------------- 3. Match IDs


def test_match_ids_of_the_defect_report():
    # gnubg 1.07 -t: `new match 7`, `set score 2 1`, `set turn 1`, `set dice 1 5` -> cInmACAACAAE; bgai wrote
    # cIn0ACAACAAA (dice low first, Jacoby bit clear).  Money: `new session`, `set turn 1`, `set dice 1 5` ->
    # cIkGAAAAAAAA; bgai wrote cIkUAAAAAAAA.
    match = MatchState(player_on_roll=1, turn=1, dice=(1, 5), match_length=7, score=(2, 1))
    assert encode_match_id(match) == "cInmACAACAAE"
    assert encode_match_id(MatchState(player_on_roll=1, turn=1, dice=(1, 5))) == "cIkGAAAAAAAA"
    # the same through bgai's own match state
    assert encode_match_id(Match(MatchRules.match(7), score=(2, 1)).to_match_state(1, dice=(1, 5))) == "cInmACAACAAE"
    # decoding accepts both dice orders, and keeps the order written
    assert decode_match_id("cIn0ACAACAAA").dice == (1, 5)
    assert decode_match_id("cInmACAACAAE").dice == (5, 1)
    assert decode_match_id("cIkUAAAAAAAA").dice == (1, 5)
    # an old-style match ID (bit 66 clear) keeps its Jacoby flag, as gnubg's SetMatchID keeps it
    old = decode_match_id("QYkqASAAIAAA")
    assert old.jacoby is True and encode_match_id(old) == "QYkqASAAIAAA"


def test_match_play_writes_the_jacoby_bit_off_on_every_path():
    # gnubg 1.07 -t: `set jacoby on`, `new match 7` -> cAngAAAAAAAE (bit 66 set: NewGame in play.c stores
    # fJacoby && !nMatchTo, so a match never has the Jacoby flag).  A CubeState says jacoby=True by default; the
    # Match ID of a match must still say "off", from a CubeState and from a Match alike (the two paths once
    # disagreed: True against False).
    fresh = MatchState.from_cube_state(CubeState(match_length=7), player_on_roll=1)
    assert fresh.jacoby is False and encode_match_id(fresh) == "cAngAAAAAAAE"
    assert Match(MatchRules.match(7)).to_match_state(1) == fresh
    state = CubeState(match_length=7, score=(1, 2), jacoby=True)  # player 1 on roll at 2-1, rolled 5-1
    assert encode_match_id(MatchState.from_cube_state(state, player_on_roll=1, dice=(1, 5))) == "cInmACAACAAE"
    assert Match(MatchRules.match(7), score=(2, 1)).to_match_state(1, dice=(1, 5)) == MatchState.from_cube_state(
        state, player_on_roll=1, dice=(1, 5))
    # money play keeps the state's Jacoby flag (cIkGAAAAAAAA: gnubg's `new session` with Jacoby on)
    money = MatchState.from_cube_state(CubeState(jacoby=True), player_on_roll=1, dice=(5, 1))
    assert encode_match_id(money) == "cIkGAAAAAAAA"
    assert encode_match_id(Match(MatchRules.money(jacoby=True)).to_match_state(1, dice=(5, 1))) == "cIkGAAAAAAAA"
    off = MatchState.from_cube_state(CubeState(jacoby=False), player_on_roll=1, dice=(5, 1))
    assert off.jacoby is False and encode_match_id(off) == "cIkGAAAAAAAE"


@needs_gnubg
def test_match_ids_written_from_a_cube_state_agree_with_gnubg(tmp_path):
    # every state gnubg shows that a game can reach (no resignation pending, no centred cube above 1: gnubg's
    # `set cube value` allows one), written again from its CubeState and from its Match
    commands, states = _match_id_cases(120, seed=20261201)
    out = run_gnubg(commands, tmp_path)
    blocks = re.split(r"New matches default to (\d+) points?\.", out)
    gnubg_ids = [re.findall(r"Match ID\s*:\s*(\S{12})", b)[-1] for b in blocks[0:-1:2]]
    assert len(gnubg_ids) == len(states)
    checked = 0
    for s, g in zip(states, gnubg_ids):
        if s.resign or (s.cube_owner == -1 and s.cube_value > 1):
            continue
        ms = decode_match_id(g)
        again = MatchState.from_cube_state(ms.cube_state, player_on_roll=ms.player_on_roll, dice=ms.dice,
                                           double_offered=ms.double_offered)
        match, player = match_from_match_id(g)
        assert (encode_match_id(again), encode_match_id(match.to_match_state(player, dice=ms.dice))) == (g, g), s
        checked += 1
    assert checked >= 50 and any(s.match_length for s in states) and any(not s.match_length for s in states)


def test_match_id_crawford_in_a_1_point_match_is_cleared():
    # gnubg 1.07: `set matchid sAEgAAAAAAAA` (1-point match, 0-0, Crawford bit) shows MAEgAAAAAAAA: SetMatchID
    # clears fCrawford when nMatchTo == 1; a 3-point match at 2-2 keeps it (sAFgACAAEAAA shows sAFgACAAEAAA)
    m = decode_match_id("sAEgAAAAAAAA")
    assert m.match_length == 1 and m.crawford is False
    assert encode_match_id(m) == "MAEgAAAAAAAA"
    dmp = decode_match_id("sAFgACAAEAAA")
    assert dmp.crawford is True and encode_match_id(dmp) == "sAFgACAAEAAA"
    with pytest.raises(MatchIDError, match="1-point match"):
        encode_match_id(MatchState(match_length=1, crawford=True))


def _match_id_cases(n: int, seed: int) -> tuple[list[str], list[MatchState]]:
    """gnubg commands setting up ``n`` states, each followed by ``show board`` and a marker, and the states."""
    rng = np.random.default_rng(seed)
    commands = ["set display off", "set player 0 human", "set player 1 human", "set seed 7"]
    states = []
    for k in range(n):
        money = rng.random() < 0.3
        crawford = False
        if money:
            length, score = 0, (0, 0)
            jacoby = bool(rng.random() < 0.5)
            # a new session takes gnubg's Jacoby setting (`set jacoby` during a session does not always reach it)
            commands += [f"set jacoby {'on' if jacoby else 'off'}", "new session"]
        else:
            length = int(rng.choice([1, 2, 3, 5, 7, 9, 11, 15, 25, 31, 64]))
            score = (int(rng.integers(0, length)), int(rng.integers(0, length)))
            jacoby = False  # gnubg starts every match with the Jacoby flag off
            commands += [f"new match {length}", f"set score {score[0]} {score[1]}"]
            if length > 1 and length - 1 in score:
                # gnubg guesses (Crawford when the trailer has 0 points, else post-Crawford): say which
                crawford = bool(rng.random() < 0.5)
                commands.append(f"set crawford {'on' if crawford else 'off'}")
        cube, owner = 1, -1
        if not crawford:
            cube = int(2 ** rng.integers(0, 7))
            owner = int(rng.choice([-1, 0, 1]))
            if cube > 1:
                commands.append(f"set cube value {cube}")
            commands.append("set cube centre" if owner == -1 else f"set cube owner {owner}")
        player = int(rng.integers(0, 2))
        commands += [f"set turn {1 - player}", f"set turn {player}"]  # a change of turn clears the dice
        action = str(rng.choice(["none", "dice", "dice", "double", "resign"]))
        dice, turn, doubled, resign = (0, 0), player, False, 0
        if action == "double" and (
            owner not in (-1, player) or (length and (length - 1 in score or score[player] + cube >= length))
        ):
            action = "dice"  # no cube to use: the opponent's, post-Crawford or Crawford, or dead for the doubler
        if action == "dice":
            dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
            commands.append(f"set dice {dice[0]} {dice[1]}")
        elif action == "double":
            doubled, turn = True, 1 - player
            commands.append("double")
        elif action == "resign":
            resign, turn = int(rng.integers(1, 4)), 1 - player
            commands.append(f"resign {['normal', 'gammon', 'backgammon'][resign - 1]}")
        commands += ["show board", f"set matchlength {k % 60 + 1}"]
        states.append(
            MatchState(
                cube_value=cube,
                cube_owner=owner,
                player_on_roll=player,
                crawford=crawford,
                game_state=1,
                turn=turn,
                double_offered=doubled,
                resign=resign,
                dice=dice,
                match_length=length,
                score=score,
                jacoby=jacoby,
            )
        )
    return commands, states


@needs_gnubg
def test_match_ids_agree_with_gnubg_on_many_states(tmp_path):
    commands, states = _match_id_cases(300, seed=20240601)
    out = run_gnubg(commands, tmp_path)
    # split at the markers ("New matches default to N points."), take the last Match ID of each block
    blocks = re.split(r"New matches default to (\d+) points?\.", out)
    ids, marks = blocks[0:-1:2], [int(x) for x in blocks[1::2]]
    assert marks == [k % 60 + 1 for k in range(len(states))]
    gnubg_ids = [re.findall(r"Match ID\s*:\s*(\S{12})", b)[-1] for b in ids]
    ours = [encode_match_id(s) for s in states]
    wrong = [(s, o, g) for s, o, g in zip(states, ours, gnubg_ids) if o != g]
    assert not wrong, f"{len(wrong)} of {len(states)} Match IDs differ from gnubg's, e.g. {wrong[:3]}"
    kinds = {(s.match_length == 0, s.double_offered, s.resign > 0, s.dice != (0, 0), s.crawford) for s in states}
    assert len(kinds) >= 8  # money and match, doubles, resignations, dice, Crawford games all covered
    for s, g in zip(states, gnubg_ids):
        back = decode_match_id(g)
        assert back == dataclasses.replace(s, dice=tuple(sorted(s.dice, reverse=True)))
        if s.dice[0] != s.dice[1]:  # the other dice order decodes too, keeping its order
            swapped = dataclasses.replace(back, dice=back.dice[::-1])
            assert decode_match_id(_swap_dice_bits(g)) == swapped


def _swap_dice_bits(match_id: str) -> str:
    import base64

    key = int.from_bytes(base64.b64decode(match_id), "little")
    d1, d2 = (key >> 15) & 7, (key >> 18) & 7
    key &= ~(0x3F << 15)
    key |= (d2 << 15) | (d1 << 18)
    return base64.b64encode(key.to_bytes(9, "little")).decode()


# ------------------------------------------------------------------------------------------- 5. XGID


def test_xgid_max_cube_is_the_cube_limit():
    # cube 2 owned by the bottom player, who is on roll, money, max cube 1 -> limit 2: no redouble
    x = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:1:00:0:0:0:0:1")
    assert x.cube_value == 2 and x.cube_owner == 0 and x.cube_limit == 2
    state = CubeState(cube_value=x.cube_value, owner=x.cube_owner, jacoby=x.jacoby, cube_limit=x.cube_limit)
    assert not state.may_double()
    # a position worth a redouble: without the limit it is "Redouble, take"; at the limit the cube is dead
    probs = np.array([0.72, 0.12, 0.005, 0.05, 0.002])
    assert cube_decision(probs, dataclasses.replace(state, cube_limit=None), 0.68).action == "Redouble, take"
    assert cube_decision(probs, state, 0.68).action == "Cube not available"
    assert decode_xgid(START_XGID).cube_limit == 1024
    assert decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:7:10").cube_limit is None  # match
    with pytest.raises(XGIDError, match="above the money cube limit 2"):
        decode_xgid("XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:0:0:1")


def test_xgid_encode_refuses_crawford_with_nobody_1_away():
    x = decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:4:3:1:5:10")
    assert x.crawford
    with pytest.raises(XGIDError, match="neither player is 1-away"):
        encode_xgid(dataclasses.replace(x, score=(2, 3)))
    with pytest.raises(XGIDError, match="1-point match"):
        encode_xgid(dataclasses.replace(x, score=(0, 0), match_length=1))
    assert decode_xgid(encode_xgid(x)) == x


def test_xgid_double_by_the_player_without_the_cube_is_refused():
    # D = the player named by `turn` has doubled; the cube fields are the cube before the double
    with pytest.raises(XGIDError, match="top player owns the cube"):
        decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:1:D:0:0:0:0:10")
    with pytest.raises(XGIDError, match="bottom player owns the cube"):
        decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:-1:D:0:0:0:0:10")
    ok = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:1:D:0:0:0:0:10")
    assert ok.double_offered and ok.cube_owner == 0
    assert decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:0:0:10").cube_owner == 0
    assert decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:0:10").cube_owner == -1
    with pytest.raises(XGIDError, match="does not own the cube"):
        encode_xgid(dataclasses.replace(ok, cube_owner=1))


def test_xgid_crawford_in_a_1_point_match_is_cleared():
    # gnubg's SetXGID goes through SetMatchID, which clears the Crawford flag of a 1-point match
    x = decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:1:1:10")
    assert x.match_length == 1 and not x.crawford


# ------------------------------------------------------------------------------------------- 6. FIBS dice


@pytest.mark.parametrize("field", [33, 35])  # "you"'s dice, the opponent's dice
@pytest.mark.parametrize("pair", [("0", "3"), ("3", "0"), ("0", "7"), ("7", "1")])
def test_fibs_half_rolled_dice_are_errors(field, pair):
    f = CLIP.split(":")
    f[field : field + 2] = list(pair)
    with pytest.raises(FIBSBoardError, match=f"must be two values 1..6 or 0:0.*got {pair[0]}:{pair[1]}"):
        interpret_fibs_board(":".join(f))


def test_fibs_no_dice_is_0_0_only():
    f = CLIP.split(":")
    f[33:37] = ["0", "0", "0", "0"]
    assert interpret_fibs_board(":".join(f)).dice is None
    f[33:37] = ["0", "0", "4", "1"]
    assert interpret_fibs_board(":".join(f)).dice == (4, 1)


def test_fibs_too_many_checkers_on_a_point_is_a_board_error():
    f = CLIP.split(":")
    f[7] = "40000"  # was numpy's OverflowError
    with pytest.raises(FIBSBoardError, match="point 1 holds 40000 checkers"):
        interpret_fibs_board(":".join(f))


# ------------------------------------------------------------------------------------------- 7. long numbers


def test_is_decimal_is_parse_ints_form_at_any_length():
    assert is_decimal("42") and is_decimal("-007") and is_decimal("+5") and is_decimal("9" * 5000)
    for bad in ("", "+", "1_0", " 10", "10 ", "10.0", "\u0663", "0x10"):
        assert not is_decimal(bad), bad


def test_parse_int_contract():
    assert parse_int("42", "x", FormatError) == 42
    assert parse_int("-007", "x", FormatError) == -7
    assert parse_int("0" * 5000 + "12", "x", FormatError, 0, 25) == 12  # leading zeros are not digits
    for text in (" 1", "1_0", "٣", "+", "", "1.0", "0x1"):
        with pytest.raises(FormatError, match="is not an integer"):
            parse_int(text, "x", FormatError)
    with pytest.raises(FormatError, match="x 26 is outside 0..25"):
        parse_int("26", "x", FormatError, 0, 25)
    with pytest.raises(FormatError, match=r"x <5000-digit number> is outside 0..25"):
        parse_int(HUGE, "x", FormatError, 0, 25)
    with pytest.raises(FormatError, match=rf"x -<5000-digit number> is too large \(more than {MAX_DIGITS} digits\)"):
        parse_int("-" + HUGE, "x", FormatError)
    assert parse_int("9" * MAX_DIGITS, "x", FormatError) == int("9" * MAX_DIGITS)

    def wrap(msg: str) -> XGIDError:
        return XGIDError("prefix: " + msg)

    with pytest.raises(XGIDError, match="^prefix: x 'y' is not an integer$"):
        parse_int("y", "x", wrap)


def _xgid_with(field: int, value: str) -> str:
    parts = START_XGID.split(":")
    parts[field] = value
    return ":".join(parts)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: board_from_wildbg({"p3": HUGE}), FormatError),
        (lambda: board_from_wildbg({"p3": " -" + HUGE + " "}), FormatError),
        (lambda: board_from_wildbg([0] * 25 + [HUGE]), FormatError),
        *[(lambda i=i: decode_xgid(_xgid_with(i, HUGE)), XGIDError) for i in (1, 2, 3, 5, 6, 7, 8, 9)],
        (lambda: decode_xgid(_xgid_with(5, "-" + HUGE)), XGIDError),
        (lambda: parse_moves(HUGE + "/20"), NotationError),
        (lambda: parse_moves("24/" + HUGE), NotationError),
        (lambda: parse_moves("13/10(" + HUGE + ")"), NotationError),
        (lambda: parse_play(HUGE + "/20", starting_board(), (3, 1)), NotationError),
        *[(lambda i=i: parse_fibs_board(":".join(CLIP.split(":")[:i] + [HUGE] + CLIP.split(":")[i + 1 :])),
           FIBSBoardError) for i in (3, 4, 10, 33, 37, 52)],
    ],
)
def test_over_long_numbers_raise_the_readers_error(call, error):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, BgaiError)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 400  # one short line, not the 5,000 digits
    assert "digit" in msg or "outside" in msg


def test_numbers_within_the_digit_limit_still_give_the_field_errors():
    with pytest.raises(XGIDError, match="cube field 99999999999 is not 0..15"):
        decode_xgid(_xgid_with(1, "99999999999"))
    with pytest.raises(NotationError, match="point 26 is outside 0..25"):
        parse_moves("26/20")
    with pytest.raises(NotationError, match="repeat count 0 is outside 1..8"):
        parse_moves("24/18(0)")
    with pytest.raises(NotationError, match="repeat count 100000000 is outside 1..8"):
        parse_moves("13/10(100000000)")  # was: a loop appending 10**8 moves
    assert parse_moves("13/10(2)") == [([13, 10], set()), ([13, 10], set())]
    with pytest.raises(NotationError, match="unexpected character"):
        parse_moves("٢٤/٢٠")  # non-ASCII digits are not play notation
    assert board_from_wildbg({"p24": " 2 ", "p1": "-002"})[0, 23] == 2
    with pytest.raises(FIBSBoardError, match="field 3 \\(match_length\\) of the FIBS board '1_0' is not an integer"):
        parse_fibs_board(":".join(CLIP.split(":")[:3] + ["1_0"] + CLIP.split(":")[4:]))
    assert parse_fibs_board(":".join(CLIP.split(":")[:3] + [" 3 "] + CLIP.split(":")[4:])).match_length == 3
