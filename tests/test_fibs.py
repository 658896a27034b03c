"""FIBS board lines: the documented examples (PROTOCOLS.md 1.2), GNU Backgammon's reading rules, errors,
and write/read round trips on real positions."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import starting_board
from bgai.core.position import Position
from bgai.errors import FIBSBoardError
from bgai.formats.fibs import FIBSState, format_fibs_board, interpret_fibs_board, parse_fibs_board

CLIP = (
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:"
    "25:0:0:0:0:2:0:0:0"
)
GNUBG_52 = (
    "board:p0:p1:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:5:2:5:2:1:1:1:0:1:-1:0:25:0:0:0:"
    "0:0:0:0:1"
)
GNUBG_BAR = (
    "board:p0:p1:0:0:0:-2:2:0:2:0:0:3:0:1:0:0:0:-4:5:0:0:0:-4:0:-5:0:0:0:0:2:0:-1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:"
    "0:0:0:0:1"
)

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz"))["boards"]


def test_clip_example_is_the_start_position_with_6_2_to_play():
    fb = parse_fibs_board(CLIP)
    assert (fb.player, fb.opponent, fb.match_length) == ("You", "someplayer", 3)
    assert fb.points[1] == -2 and fb.points[24] == 2 and fb.can_move == 2
    s = interpret_fibs_board(fb)
    assert np.array_equal(s.board, starting_board())
    assert s.dice == (6, 2)
    assert (s.match_length, s.score, s.cube_value, s.cube_owner) == (3, (0, 0), 1, -1)
    assert not s.doubled and not s.crawford
    assert s.names == ("You", "someplayer")


def test_gnubg_transcript_x_to_play_5_2_from_the_start():
    s = interpret_fibs_board(GNUBG_52)
    assert np.array_equal(s.board, starting_board())
    assert s.dice == (5, 2) and s.match_length == 0
    # X (turn -1) is not "you" (color 1): the names swap to put the side to act first
    assert s.names == ("p1", "p0")


def test_gnubg_transcript_two_on_the_bar_cube_decision():
    s = interpret_fibs_board(GNUBG_BAR)
    assert s.dice is None and not s.doubled
    pos = Position(s.board)
    assert int(s.board[0, 24]) == 2  # X has two on the bar
    # X (moving 1 -> 24 in FIBS indices) sees index i as its point 25 - i
    assert s.board[0, 25 - 12 - 1] == 4  # index 12 = -4 -> X's 13-point
    assert s.board[1, 0] == 2  # index 1 = +2 -> O's 1-point
    assert pos.pip_count[0] == 2 * 25 + 4 * 13 + 4 * 8 + 5 * 6


def test_nul_bytes_line_ends_and_options_are_tolerated():
    fb = parse_fibs_board("\0" + GNUBG_52 + " jacobyrule off resignation 2\r\n\0")
    assert fb.options_text == "jacobyrule off resignation 2"
    assert interpret_fibs_board(fb).dice == (5, 2)


def test_to_line_reproduces_the_input():
    assert parse_fibs_board(CLIP).to_line() == CLIP
    assert parse_fibs_board(GNUBG_BAR).to_line() == GNUBG_BAR


def test_side_to_act_follows_turn_not_names():
    # CLIP example with X to act instead: X moves 1 -> 24, is "someplayer", and score/cube flags swap
    fields = CLIP.split(":")
    fields[3], fields[4], fields[5] = "5", "1", "2"  # 5-point match, scores: you 1, opponent 2
    fields[32] = "-1"  # turn (fields[k] is field k: fields[0] is 'board')
    fields[38], fields[39] = "1", "0"  # only "you" (O) may double: O owns the cube
    s = interpret_fibs_board(":".join(fields))
    assert np.array_equal(s.board, starting_board())
    assert s.names == ("someplayer", "You")
    assert s.score == (2, 1)
    assert s.cube_owner == 1  # the opponent of the side to act (O) owns it


def test_both_may_double_zero_means_doubled_like_gnubg():
    fields = CLIP.split(":")
    fields[38], fields[39] = "0", "0"
    s = interpret_fibs_board(":".join(fields))
    assert s.doubled and s.dice is None
    # doubled: the side to act is the player doubled (X here, O is on turn)
    assert np.array_equal(s.board, starting_board())
    assert s.names == ("someplayer", "You")


def test_crawford_detection():
    fields = CLIP.split(":")
    fields[3], fields[4], fields[5] = "5", "4", "1"  # 5-point match, score 4-1: "you" 1-away
    s = interpret_fibs_board(":".join(fields))
    assert s.crawford
    fields[-2] = "1"  # post-Crawford flag (field 51)
    assert not interpret_fibs_board(":".join(fields)).crawford
    fields[-2], fields[-1] = "0", "3"  # non-Crawford (field 52)
    assert not interpret_fibs_board(":".join(fields)).crawford


def test_unlimited_match_is_money():
    fields = CLIP.split(":")
    fields[3] = "9999"
    assert interpret_fibs_board(":".join(fields)).match_length == 0


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda f: f[:-1], "52 fields"),
        (lambda f: f + ["0"], "52 fields"),
        (lambda f: f[:10] + ["x"] + f[11:], r"field 10 \(points\[4\]\) of the FIBS board 'x' is not an integer"),
        (lambda f: ["bored"] + f[1:], "must start with 'board:'"),
        (lambda f: f[:32] + ["0"] + f[33:], "turn 0"),
        (lambda f: f[:41] + ["0"] + f[42:], "color must be -1 or 1"),
        (lambda f: f[:4] + ["3"] + f[5:], "not below the match length"),
        (lambda f: f[:33] + ["7", "2"] + f[35:], "dice"),
        (lambda f: f[:33] + ["3", "0"] + f[35:], "dice"),
        (lambda f: f[:37] + ["3"] + f[38:], "power of two"),
        (lambda f: f[:7] + ["3"] + f[8:], "18 checkers on the board"),
        (lambda f: f[:6] + ["1"] + f[7:], "wrong colour"),
        (lambda f: f[:31] + ["-1"] + f[32:], "wrong colour"),
    ],
)
def test_bad_lines_raise_a_clear_error(mutate, message):
    fields = CLIP.split(":")
    with pytest.raises(FIBSBoardError, match=message):
        interpret_fibs_board(":".join(mutate(fields)))


def test_non_text_is_rejected():
    with pytest.raises(FIBSBoardError, match="must be text"):
        parse_fibs_board(b"board:")  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(
    idx=st.integers(0, len(REF) - 1),
    dice=st.one_of(st.none(), st.tuples(st.integers(1, 6), st.integers(1, 6))),
    cube_log=st.integers(0, 6),
    owner=st.sampled_from([-1, 0, 1]),
    doubled=st.booleans(),
    match=st.sampled_from([0, 1, 3, 7]),
    score=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    convention=st.sampled_from(["fibs", "gnubg"]),
)
def test_write_read_round_trip(idx, dice, cube_log, owner, doubled, match, score, convention):
    if match:
        score = (score[0] % match, score[1] % match)
    else:
        score = (0, 0)
    crawford = bool(match) and (match - 1 in score) and not doubled and idx % 2 == 0
    if crawford:
        owner = -1
    if doubled:
        dice = None
    state = FIBSState(
        board=REF[idx],
        dice=dice,
        match_length=match,
        score=score,
        cube_value=2**cube_log,
        cube_owner=owner,
        doubled=doubled,
        crawford=crawford,
        names=("me", "you"),
    )
    line = format_fibs_board(state, scores=convention)
    back = interpret_fibs_board(line, scores=convention)
    assert np.array_equal(back.board, state.board)
    assert back.dice == state.dice
    assert (back.match_length, back.score, back.cube_value) == (match, score, 2**cube_log)
    assert back.cube_owner == state.cube_owner
    assert back.doubled == doubled
    assert back.crawford == crawford
    assert back.names == ("me", "you")
    assert parse_fibs_board(line).to_line() == line


def test_writer_uses_gnubg_conventions():
    line = format_fibs_board(FIBSState(board=starting_board(), dice=(3, 1)))
    f = line.split(":")
    assert f[0] == "board" and len(f) == 53
    assert f[41:45] == ["1", "-1", "0", "25"]  # color, direction, home, bar
    assert f[32] == "1"  # turn: "you" act
    assert f[33:37] == ["3", "1", "3", "1"]


def test_gnubg_score_convention():
    """GNU Backgammon's frontend writes the scores in the order of the names (player 0 first) while its colours
    make player 1 "you": lines as gnubg 1.07 sent them to an external player 0 (X) at gnubg 0 - root 2."""
    normal = GNUBG_52.replace("board:p0:p1:0:0:0:", "board:gnubg:root:5:0:2:")
    assert interpret_fibs_board(normal, scores="gnubg").score == (0, 2)
    assert interpret_fibs_board(normal, scores="fibs").score == (2, 0)
    # a double pending (root doubled; turn = root's colour): both conventions agree
    doubled = format_fibs_board(FIBSState(board=starting_board(), doubled=True, match_length=5, score=(0, 2)))
    assert interpret_fibs_board(doubled, scores="gnubg").score == (0, 2)
    assert interpret_fibs_board(doubled, scores="fibs").score == (0, 2)
    with pytest.raises(ValueError, match="scores must be one of"):
        interpret_fibs_board(CLIP, scores="other")
