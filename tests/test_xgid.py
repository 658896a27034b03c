"""XGID decode/encode: PROTOCOLS.md section 3 examples, field errors, round trips."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import flip, starting_board
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import FormatError, XGIDError
from bgai.formats.xgid import XGIDState, decode_xgid, encode_xgid

START = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"


def _row(points: dict[int, int], bar: int = 0) -> list[int]:
    row = [0] * 25
    for p, n in points.items():
        row[p - 1] = n
    row[24] = bar
    return row


def test_start_position_money_jacoby_beaver():
    x = decode_xgid(START)
    assert np.array_equal(x.board, starting_board())
    assert encode_position_id(x.board) == "4HPwATDgc/ABMA"
    assert x.dice == (5, 2)
    assert x.cube_value == 1 and x.cube_owner == -1
    assert x.match_length == 0 and x.jacoby and x.beaver and not x.crawford
    assert x.max_cube == 10 and x.bottom_on_roll
    assert encode_xgid(x) == START


def test_prefix_optional_and_whitespace():
    assert decode_xgid(START[5:]) == decode_xgid(START)
    assert decode_xgid("  " + START + "\n") == decode_xgid(START)


def test_opengammon_pair_home_boards():
    s = "XGID=-CCCBBB------------cccbbb-:0:0:1:63:0:0:0:0:8"
    x = decode_xgid(s)
    assert x.board[0].tolist() == _row({6: 2, 5: 2, 4: 2, 3: 3, 2: 3, 1: 3})
    assert x.board[1].tolist() == _row({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2})
    assert x.dice == (6, 3) and x.max_cube == 8 and not x.jacoby and not x.beaver
    assert encode_xgid(x) == s


def test_both_bars():
    s = "XGID=b-----B------------c-----C:0:0:1:00:0:0:0:0:8"
    x = decode_xgid(s)
    assert x.board[0].tolist() == _row({6: 2}, bar=3)  # bottom: 3 on the bar, 2 on its 6-point
    assert x.board[1].tolist() == _row({6: 3}, bar=2)  # top: 2 on the bar, 3 on its 6-point
    assert x.dice == (0, 0) and not x.double_offered
    assert encode_xgid(x) == s


def test_turn_minus_one_swaps_sides_ankigammon_18():
    s = "XGID=-A-Bb-DBB---bBa---bcbbaA-A:0:0:-1:00:4:0:0:0:8"
    x = decode_xgid(s)
    assert not x.bottom_on_roll
    assert x.board[0].tolist() == _row({21: 2, 13: 2, 11: 1, 7: 2, 6: 3, 5: 2, 4: 2, 3: 1})
    assert x.board[1].tolist() == _row({23: 1, 13: 2, 8: 2, 7: 2, 6: 4, 3: 2, 1: 1}, bar=1)
    assert x.score == (0, 4)  # (top = on roll, bottom)
    assert encode_position_id(x.board) == "GW+DAUi03ZABBg"
    assert encode_xgid(x) == s


def test_same_board_string_with_other_turn_is_flipped():
    a = decode_xgid("XGID=-b----E-C---eE---b-d-b--B-:0:0:1:00:0:0:3:0:10")
    b = decode_xgid("XGID=-b----E-C---eE---b-d-b--B-:0:0:-1:00:0:0:3:0:10")
    assert np.array_equal(a.board, flip(b.board))


def test_match_crawford_and_scores():
    s = "XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10"
    x = decode_xgid(s)
    assert x.match_length == 7 and x.score == (6, 4) and x.crawford
    assert not x.jacoby and not x.beaver
    # bottom: 2:1, 5:2, 6:2, 7:2, 8:2, 11:2, 13:2, 24:2
    assert x.board[0].tolist() == _row({2: 1, 5: 2, 6: 2, 7: 2, 8: 2, 11: 2, 13: 2, 24: 2})
    assert encode_xgid(x) == s


def test_double_offered_turn_names_doubler_cube_before_double():
    s = "XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:1:0:10"
    x = decode_xgid(s)
    assert x.double_offered and x.dice == (0, 0)
    assert not x.bottom_on_roll  # the top player doubled
    assert x.cube_value == 2 and x.cube_owner == 0  # top owns the 2-cube; top is row 0
    assert encode_xgid(x) == s


def test_cube_owner_relative_to_turn():
    bottom_owns = decode_xgid("XGID=-b----E-C---eE---c-e----B-:3:1:1:31:0:0:1:0:10")
    assert bottom_owns.cube_value == 8 and bottom_owns.cube_owner == 0
    top_owns_bottom_on_roll = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:1:31:0:0:1:0:10")
    assert top_owns_bottom_on_roll.cube_owner == 1
    bottom_owns_top_on_roll = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:-1:31:0:0:1:0:10")
    assert bottom_owns_top_on_roll.cube_owner == 1
    for x in (bottom_owns, top_owns_bottom_on_roll, bottom_owns_top_on_roll):
        assert decode_xgid(encode_xgid(x)) == x


def test_dice_low_first_kept():
    x = decode_xgid("XGID=-b----E-C---eE---b-d-b--B-:0:0:1:46:0:0:3:0:10")
    assert x.dice == (4, 6)
    assert encode_xgid(x).split(":")[4] == "46"


def test_bar_and_off_example():
    x = decode_xgid("XGID=aC----B-------------b---dB:0:0:1:31:0:0:1:0:10")
    assert x.board[0].tolist() == _row({1: 3, 6: 2}, bar=2)
    assert x.board[1].tolist() == _row({5: 2, 1: 4}, bar=1)


def test_fifteen_on_one_point():
    x = decode_xgid("XGID=-O----------------------o-:0:0:1:31:0:0:1:0:10")
    assert x.board[0, 0] == 15 and x.board[1, 0] == 15


# ---------------------------------------------------------------- errors

BAD = [
    ("XGID=-b----E-C---eE---c-e----B:0:0:1:31:0:0:1:0:10", "position field has 25 characters"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:0", "9 colon-separated fields"),
    ("XGID=-b----E-C---eE---c-e----Q-:0:0:1:31:0:0:1:0:10", "bad character 'Q' at position 25"),
    ("XGID=-b----E-C---eE---c-e----P-:0:0:1:31:0:0:1:0:10", "bottom player has 29 checkers"),
    ("XGID=-b----E-C---eE---c-e----C-:0:0:1:31:0:0:1:0:10", "bottom player has 16 checkers"),
    ("XGID=Ab----E-C---eE---c-e----A-:0:0:1:31:0:0:1:0:10", "top player's bar but holds bottom"),
    ("XGID=-b----E-C---eE---c-e----Aa:0:0:1:31:0:0:1:0:10", "bottom player's bar but holds top"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:71:0:0:1:0:10", "dice field '71'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:30:0:0:1:0:10", "dice field '30'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:3:0:0:1:0:10", "dice field '3'"),
    ("XGID=-b----E-C---eE---c-e----B-:0:2:1:31:0:0:1:0:10", "cube position field 2"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:0:31:0:0:1:0:10", "turn field 0"),
    ("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:B:0:0:3:0:10", "'B' (beaver) is not supported"),
    ("XGID=-b----E-C---eE---c-e----B-:2:1:1:R:0:0:3:0:10", "'R' (raccoon) is not supported"),
    ("XGID=-b----E-C---eE---c-e----B-:16:1:1:31:0:0:1:0:10", "cube field 16"),
    ("XGID=-b----E-C---eE---c-e----B-:-1:0:1:31:0:0:1:0:10", "cube field -1"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:2:7:10", "rules field 2 must be 0 or 1"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:4:0:10", "rules field 4 must be 0..3"),
    ("XGID=-b----E-C---eE---c-e----B-:x:0:1:31:0:0:1:0:10", "cube field 'x' is not an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:7:0:0:7:10", "score 7-0 is not below the match length 7"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:-1:0:0:0:10", "score bottom field -1 is negative"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:5:3:1:7:10", "neither player is 1-away"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:-3:10", "match length field -3"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:0:99", "max cube field 99"),
    ("", "1 colon-separated fields"),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAA", "2 colon-separated fields"),
]


@pytest.mark.parametrize("text,fragment", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_xgid_names_field(text, fragment):
    with pytest.raises(XGIDError) as info:
        decode_xgid(text)
    assert fragment in str(info.value)
    assert isinstance(info.value, FormatError)


def test_non_string():
    with pytest.raises(XGIDError, match="must be a string"):
        decode_xgid(None)  # type: ignore[arg-type]


def test_encode_errors():
    x = decode_xgid(START)
    for kwargs, fragment in [
        ({"cube_value": 3}, "cube value 3"),
        ({"cube_owner": 5}, "cube owner 5"),
        ({"dice": (0, 7)}, "dice (0, 7)"),
        ({"double_offered": True}, "pending double"),
        ({"score": (-1, 0)}, "score"),
        ({"match_length": 3, "score": (3, 0)}, "not below the match length 3"),
        ({"crawford": True}, "money game"),
        ({"max_cube": 20}, "max cube 20"),
    ]:
        with pytest.raises(XGIDError) as info:
            encode_xgid(dataclasses.replace(x, **kwargs))
        assert fragment in str(info.value)
    with pytest.raises(XGIDError, match="takes an XGIDState"):
        encode_xgid("XGID=...")  # type: ignore[arg-type]


def test_state_rejects_impossible_board():
    b = starting_board()
    b[0, 0] = 1
    with pytest.raises(XGIDError, match="16 checkers"):
        XGIDState(board=b)


# ---------------------------------------------------------------- properties


@st.composite
def xgid_states(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    board = np.zeros((2, 25), dtype=np.int8)
    # at least one checker for the side on roll: both sides borne off is an impossible position
    np.add.at(board[0], rng.integers(0, 25, size=rng.integers(1, 16)), 1)
    free = [c for c in range(24) if board[0, 23 - c] == 0] + [24]
    np.add.at(board[1], rng.choice(free, size=rng.integers(0, 16)), 1)
    ml = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11]))
    if ml:
        score = (draw(st.integers(0, ml - 1)), draw(st.integers(0, ml - 1)))
        # a 1-point match has no Crawford game (gnubg's SetMatchID clears it; encode_xgid refuses it)
        crawford = ml > 1 and (ml - 1 in score) and draw(st.booleans())
        jacoby = beaver = False
    else:
        score = (draw(st.integers(0, 50)), draw(st.integers(0, 50)))
        crawford = False
        jacoby, beaver = draw(st.booleans()), draw(st.booleans())
    double = draw(st.booleans())
    dice = (0, 0) if double or draw(st.booleans()) else (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    cube_log = draw(st.integers(0, 12))
    return XGIDState(
        board=board,
        cube_value=2**cube_log,
        # only the cube's owner (or either player, cube centred) can have doubled
        cube_owner=draw(st.sampled_from([-1, 0] if double else [-1, 0, 1])),
        dice=dice,
        double_offered=double,
        score=score,
        match_length=ml,
        crawford=crawford,
        jacoby=jacoby,
        beaver=beaver,
        max_cube=draw(st.integers(0 if ml else cube_log, 15)),  # a money cube is within its limit
        bottom_on_roll=draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(xgid_states())
def test_property_round_trip(state):
    text = encode_xgid(state)
    assert text.startswith("XGID=") and len(text.split(":")[0]) == 5 + 26
    assert decode_xgid(text) == state
    assert encode_xgid(decode_xgid(text)) == text


@settings(max_examples=200, deadline=None)
@given(xgid_states())
def test_property_turn_flip_is_board_flip(state):
    """Writing the same physical position with the other player on roll flips the decoded board."""
    text = encode_xgid(state)
    fields = text.split(":")
    fields[3] = str(-int(fields[3]))
    fields[4] = "00"  # dice belong to the other player now; clear them
    other = decode_xgid(":".join(fields))
    assert np.array_equal(other.board, flip(state.board))
    assert other.score == state.score[::-1]


def test_cross_check_with_position_id_through_gnubg_decoding():
    pytest.importorskip("gnubg_nn")
    import gnubg_nn

    x = decode_xgid("XGID=-A-Bb-DBB---bBa---bcbbaA-A:0:0:-1:00:4:0:0:0:8")
    gb = np.array(gnubg_nn.board_from_position_id("GW+DAUi03ZABBg"), dtype=np.int8)[::-1]
    assert np.array_equal(x.board, gb)
    assert np.array_equal(decode_position_id("GW+DAUi03ZABBg"), x.board)
