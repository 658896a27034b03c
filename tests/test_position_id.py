"""GNU Backgammon Position ID: PROTOCOLS.md vectors, errors, cross-check with gnubg_nn, properties."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import starting_board
from bgai.core.position import Position
from bgai.core.position_id import (
    decode_position_id,
    decode_position_ids,
    encode_position_id,
    encode_position_ids,
)
from bgai.errors import BgaiError, InvalidPositionError, PositionIDError

try:
    import gnubg_nn  # the reference: GNU Backgammon's own code (dev dependency gnubg-nn)
except ImportError:  # pragma: no cover - the dev install has it
    gnubg_nn = None

needs_gnubg = pytest.mark.skipif(gnubg_nn is None, reason="gnubg-nn (the reference) is not installed")


def _board(me: dict[int, int], opp: dict[int, int], me_bar: int = 0, opp_bar: int = 0) -> np.ndarray:
    return Position.from_points(me, opp, me_bar=me_bar, opponent_bar=opp_bar).board


# PROTOCOLS.md section 2.1; "me" = on roll, each side on its own point numbers.
VECTORS = [
    ("4HPwATDgc/ABMA", _board({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})),
    ("ADAAAQAkIAAAAA", _board({24: 1, 17: 1, 15: 1}, {23: 1, 13: 2})),
    ("HC/wATDg8+AxAA", _board({16: 2, 13: 4, 8: 4, 6: 5}, {24: 2, 13: 5, 7: 1, 6: 4, 3: 3})),
    ("AACAewAAgAYAAA", _board({24: 1}, {24: 3}, me_bar=2, opp_bar=4)),
]


@pytest.mark.parametrize("pid,board", VECTORS, ids=[v[0] for v in VECTORS])
def test_protocol_vectors(pid, board):
    assert encode_position_id(board) == pid
    assert np.array_equal(decode_position_id(pid), board)


def test_wildbg_x_bar_vector():
    b = decode_position_id("zGbiIQgxH/AAWA")
    assert b[0].tolist() == [1, 0, 0, 2, 0, 5] + [0] * 6 + [4] + [0] * 10 + [2, 1]  # me 24:2 13:4 6:5 4:2 1:1, bar 1
    assert int(b[1].sum()) == 15 and int(b[1, 24]) == 0
    assert encode_position_id(b) == "zGbiIQgxH/AAWA"


def test_wildbg_issue_29_vector_round_trips():
    b = decode_position_id("8N4ZAAbg/xMAIA")
    assert b[0, 5] == 13 and b[0, 7] == 1 and b[0, 23] == 1  # me 6:13, 8:1, 24:1
    assert encode_position_id(b) == "8N4ZAAbg/xMAIA"


def test_manual_key_bytes_of_start():
    # The manual's worked example: key E0 73 F0 01 30 E0 73 F0 01 30.
    key = bytes.fromhex("E073F00130E073F00130")
    assert base64.b64encode(key).decode()[:14] == encode_position_id(starting_board())


def test_start_and_position_class():
    assert encode_position_id(starting_board()) == "4HPwATDgc/ABMA"
    assert Position.from_position_id("4HPwATDgc/ABMA") == Position.start()
    assert Position.start().position_id() == "4HPwATDgc/ABMA"
    assert encode_position_id(Position.start()) == "4HPwATDgc/ABMA"


def test_decode_returns_int8_and_ignores_whitespace():
    b = decode_position_id("  4HPwATDgc/ABMA\n")
    assert b.dtype == np.int8 and b.shape == (2, 25)
    assert np.array_equal(b, starting_board())


def test_empty_board_is_refused_and_one_side_borne_off_decodes():
    with pytest.raises(PositionIDError, match="both sides have borne off"):
        decode_position_id("AAAAAAAAAAAAAA")
    one_side = _board({3: 2}, {})
    assert np.array_equal(decode_position_id(encode_position_id(one_side)), one_side)


@needs_gnubg
def test_thirty_checkers_all_on_bars():
    b = _board({}, {}, me_bar=15, opp_bar=15)
    pid = encode_position_id(b)
    assert np.array_equal(decode_position_id(pid), b)
    assert pid == gnubg_nn.position_id(b[::-1].tolist())


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("4HPwATDgc/ABM", "wrong length 13"),
        ("4HPwATDgc/ABMAA", "wrong length 15"),
        ("", "wrong length 0"),
        ("4HPwATDgc/AB-A", "bad character '-' at position 13"),
        ("4HPwATDgc/AB=A", "bad character '='"),
        ("4HPwATDgc/ABé", "bad character 'é'"),
        ("4HPwATDgc/ABMB", "beyond the 80-bit key"),
        ("/////////////w", "too many checkers: 80"),
    ],
)
def test_malformed_ids_name_the_fault(text, fragment):
    with pytest.raises(PositionIDError) as info:
        decode_position_id(text)
    assert fragment in str(info.value)
    assert isinstance(info.value, BgaiError)


def _id_from_counts(counts: list[int]) -> str:
    """Raw encoder of 50 slot counts (opponent 25 slots then on-roll 25) without validation, for bad keys."""
    bits = []
    for n in counts:
        bits += [1] * n + [0]
    bits += [0] * (80 - len(bits))
    key = np.packbits(np.array(bits[:80], dtype=np.uint8), bitorder="little").tobytes()
    return base64.b64encode(key).decode()[:14]


def test_sixteen_checkers_is_rejected_naming_side():
    counts = [0] * 50
    counts[25 + 5] = 16  # on roll: 16 on the 6-point
    pid = _id_from_counts(counts)
    with pytest.raises(PositionIDError, match="side to move has 16 checkers"):
        decode_position_id(pid)


def test_point_held_by_both_sides_is_rejected():
    counts = [0] * 50
    counts[25 + 5] = 2  # on roll 6-point (column 5)
    counts[23 - 5] = 2  # opponent column 18 = the same physical point
    with pytest.raises(PositionIDError, match="held by both sides"):
        decode_position_id(_id_from_counts(counts))


def test_bits_after_last_slot_rejected():
    # 49 zero-terminated empty slots... then a 50th slot and one stray checker bit after it.
    bits = [0] * 50 + [1] + [0] * 29
    key = np.packbits(np.array(bits, dtype=np.uint8), bitorder="little").tobytes()
    pid = base64.b64encode(key).decode()[:14]
    with pytest.raises(PositionIDError, match="too many bits"):
        decode_position_id(pid)


def test_batch_error_names_item():
    with pytest.raises(PositionIDError, match=r"item 1"):
        decode_position_ids(["4HPwATDgc/ABMA", "4HPwATDgc/AB!A"])


def test_non_string_rejected():
    with pytest.raises(PositionIDError, match="must be a string"):
        decode_position_id(12345)  # type: ignore[arg-type]


def test_encode_invalid_board_rejected():
    b = starting_board()
    b[0, 0] = 2  # 17 checkers
    with pytest.raises(InvalidPositionError, match="17 checkers"):
        encode_position_id(b)
    with pytest.raises(InvalidPositionError, match="shape"):
        encode_position_id(np.zeros((3, 25)))


# ---------------------------------------------------------------- reference cross-check


def random_legal_boards(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random legal boards: random checker counts anywhere (bars included), no point held by both."""
    out = np.zeros((n, 2, 25), dtype=np.int8)
    for i in range(n):
        k0 = rng.integers(1, 16)  # at least one checker: both sides borne off is impossible
        # side 0 on few or many points
        spread0 = rng.integers(1, 26)
        cols0 = rng.choice(25, size=spread0, replace=False)
        np.add.at(out[i, 0], rng.choice(cols0, size=k0), 1)
        free = [c for c in range(24) if out[i, 0, 23 - c] == 0] + [24]
        k1 = rng.integers(0, 16)
        spread1 = rng.integers(1, len(free) + 1)
        cols1 = rng.choice(free, size=spread1, replace=False)
        np.add.at(out[i, 1], rng.choice(cols1, size=k1), 1)
    return out


@needs_gnubg
def test_round_trip_against_gnubg_on_thousands_of_positions():
    rng = np.random.default_rng(20261130)
    boards = random_legal_boards(rng, 5000)
    ids = encode_position_ids(boards)
    gnubg_ids = [gnubg_nn.position_id(b[::-1].tolist()) for b in boards]
    mismatches = [i for i, (a, g) in enumerate(zip(ids, gnubg_ids)) if a != g]
    assert not mismatches, f"{len(mismatches)} mismatches, first board {boards[mismatches[0]].tolist()}"
    decoded = decode_position_ids(gnubg_ids)
    assert np.array_equal(decoded, boards)
    for pid, b in zip(gnubg_ids[:2000], boards[:2000]):
        gb = np.array(gnubg_nn.board_from_position_id(pid), dtype=np.int8)[::-1]
        assert np.array_equal(gb, b)


@needs_gnubg
def test_gnubg_start_position_layout_is_rows_reversed():
    gb = np.array(gnubg_nn.board_from_position_id("zGbiIQgxH/AAWA"), dtype=np.int8)
    assert np.array_equal(gb[::-1], decode_position_id("zGbiIQgxH/AAWA"))


def test_batch_matches_single_and_stdlib_base64():
    rng = np.random.default_rng(7)
    boards = random_legal_boards(rng, 300)
    ids = encode_position_ids(boards)
    for b, pid in zip(boards[:50], ids[:50]):
        assert encode_position_id(b) == pid
    assert encode_position_ids(np.zeros((0, 2, 25), dtype=np.int8)) == []
    assert decode_position_ids([]).shape == (0, 2, 25)
    # stdlib base64 of the decoded key bytes gives back the same text
    for pid in ids[:50]:
        raw = base64.b64decode(pid + "==")
        assert len(raw) == 10 and base64.b64encode(raw).decode()[:14] == pid


# ---------------------------------------------------------------- properties


@st.composite
def legal_boards(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return random_legal_boards(rng, 1)[0]


@needs_gnubg
@settings(max_examples=300, deadline=None)
@given(legal_boards())
def test_property_round_trip(board):
    pid = encode_position_id(board)
    assert len(pid) == 14
    assert np.array_equal(decode_position_id(pid), board)
    assert pid == gnubg_nn.position_id(board[::-1].tolist())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=14, max_size=14))
def test_property_any_id_decodes_to_legal_board_or_raises_position_id_error(text):
    try:
        board = decode_position_id(text)
    except PositionIDError:
        return
    assert encode_position_id(board) == text


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=14, max_size=14),
    legal_boards().map(encode_position_id),
    st.text(min_size=12, max_size=16),
))
def test_single_decoder_equals_the_batch_decoder(text):
    """decode_position_id reads one ID with Python ints; the batch decoder (numpy) is the reference: the same
    board, or the same error."""
    try:
        ref = decode_position_ids([text])[0]
    except PositionIDError as exc:
        with pytest.raises(PositionIDError) as got:
            decode_position_id(text)
        assert str(got.value) == str(exc)
        return
    board = decode_position_id(text)
    assert board.dtype == np.int8 and board.shape == (2, 25) and np.array_equal(board, ref)
