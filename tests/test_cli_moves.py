"""``bgai moves``: the real command line, checked against hand-built positions and GNU Backgammon's generator."""

from __future__ import annotations

import json
import select
import subprocess
import sys

import numpy as np
import pytest

from bgai.cli import main
from bgai.core.dice import Dice
from bgai.core.position import Position
from bgai.core.position_id import decode_position_id, encode_position_id, encode_position_ids
from bgai.errors import InvalidDiceError

try:
    import gnubg_nn  # the reference: GNU Backgammon's own code (dev dependency gnubg-nn)
except ImportError:  # pragma: no cover - the dev install has it
    gnubg_nn = None

needs_gnubg = pytest.mark.skipif(gnubg_nn is None, reason="gnubg-nn (the reference) is not installed")

START = "4HPwATDgc/ABMA"


def _board(me: dict[int, int], opp: dict[int, int], me_bar: int = 0, opp_bar: int = 0) -> np.ndarray:
    return Position.from_points(me, opp, me_bar=me_bar, opponent_bar=opp_bar).board


def gnubg_result_ids(board: np.ndarray, d1: int, d2: int) -> set[str]:
    """Position IDs (mover's view) of GNU Backgammon's legal afterstates (the unchanged position if none)."""
    keys = gnubg_nn.moves(board[::-1].tolist(), d1, d2)
    if not keys:
        return {encode_position_id(board)}
    boards = np.array([gnubg_nn.boardfromkey(k) for k in keys], dtype=np.int8)[:, ::-1]
    return set(encode_position_ids(boards))


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["moves", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- single position


@needs_gnubg
def test_start_31_json(capsys):
    code, out, err = run_cli(capsys, START, "31", "--json")
    assert code == 0 and err == ""
    rec = json.loads(out)
    assert rec["position_id"] == START and rec["dice"] == [3, 1]
    plays = rec["plays"]
    assert len(plays) == 16
    by_play = {p["play"]: p["position_id"] for p in plays}
    # 8/5 6/5 makes the 5-point: mover 24:2 13:5 8:2 6:4 5:2, opponent unchanged (mover's view, not swapped)
    expected = encode_position_id(_board({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, {24: 2, 13: 5, 8: 3, 6: 5}))
    assert by_play["8/5 6/5"] == expected
    split_back = next(k for k in by_play if sorted(k.split()) == ["24/21", "24/23"])  # order of steps is style
    assert by_play[split_back] == encode_position_id(
        _board({23: 1, 21: 1, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})
    )
    assert set(by_play.values()) == gnubg_result_ids(decode_position_id(START), 3, 1)
    assert len(set(by_play)) == 16  # distinct notations


def test_start_31_human(capsys):
    code, out, err = run_cli(capsys, START, "31")
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert lines[0].startswith(f"Position {START}, roll 3-1: 16 legal plays")
    assert len(lines) == 17
    expected = encode_position_id(_board({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, {24: 2, 13: 5, 8: 3, 6: 5}))
    row = next(line for line in lines[1:] if " 8/5 6/5 " in line + " ")
    assert row.split()[-1] == expected
    assert [int(line.split(".")[0]) for line in lines[1:]] == list(range(1, 17))


@pytest.mark.parametrize("dice", ["31", "3-1", "3,1", "3 1", " 3-1 ", "13", "1-3"])
def test_dice_spellings_give_same_plays(capsys, dice):
    reference = json.loads(run_cli(capsys, START, "31", "--json")[1])
    code, out, _ = run_cli(capsys, START, dice, "--json")
    assert code == 0
    rec = json.loads(out)
    if dice.strip().startswith("3"):
        assert rec == reference
    else:  # the dice order given is kept; the resulting positions are the same
        assert rec["dice"] == [1, 3]
        assert {p["position_id"] for p in rec["plays"]} == {p["position_id"] for p in reference["plays"]}


@pytest.mark.parametrize(
    "dice,fragment",
    [("37", "die 7 is not 1..6"), ("0-1", "die 0 is not 1..6"), ("3", "bad dice '3'"), ("abc", "bad dice 'abc'"),
     ("3/1", "bad dice '3/1'"), ("311", "bad dice '311'")],
)
def test_bad_dice_exit_2(capsys, dice, fragment):
    code, out, err = run_cli(capsys, START, dice)
    assert code == 2 and out == ""
    assert err.startswith("bgai: error: ") and fragment in err and len(err.strip().splitlines()) == 1


def test_parse_dice_function():
    assert Dice.parse("62") == Dice(6, 2) and Dice.parse("2-6") == Dice(2, 6) and Dice.parse("5,5") == Dice(5, 5)
    assert tuple(Dice.parse("62")) == (6, 2) and str(Dice.parse("6 2")) == "6-2"
    with pytest.raises(InvalidDiceError, match="die 9"):
        Dice.parse("9-1")


@pytest.mark.parametrize(
    "pid,fragment",
    [("4HPwATDgc/ABM", "wrong length 13"), ("4HPwATDgc/AB!A", "bad character '!'"), ("/////////////w", "too many checkers")],
)
def test_bad_position_id_exit_2(capsys, pid, fragment):
    code, out, err = run_cli(capsys, pid, "31")
    assert code == 2 and out == ""
    assert err.startswith("bgai: error: Position ID") and fragment in err


def test_missing_arguments_exit_2(capsys):
    code, out, err = run_cli(capsys, START)
    assert code == 2 and "POSITION_ID and DICE" in err
    code, out, err = run_cli(capsys, START, "31", "--batch", "-")
    assert code == 2 and "not both" in err


def test_no_legal_play_passes(capsys):
    # mover: 1 on the bar (+14 on its 6-point); opponent holds its whole home board (points 1..6 = our 19..24)
    board = _board({6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}, me_bar=1)
    pid = encode_position_id(board)
    code, out, _ = run_cli(capsys, pid, "64", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["plays"] == [{"play": "", "position_id": pid}]
    code, out, _ = run_cli(capsys, pid, "64")
    assert code == 0 and "no legal play" in out and pid in out


@needs_gnubg
def test_hit_from_bar_result_seen_by_mover(capsys):
    # mover: 1 on the bar, 14 on its 6-point; opponent blot on its 3-point = our 22-point; roll 3-1
    board = _board({6: 14}, {3: 1, 13: 14}, me_bar=1)
    code, out, _ = run_cli(capsys, encode_position_id(board), "31", "--json")
    rec = json.loads(out)
    plays = {p["play"]: p["position_id"] for p in rec["plays"]}
    hit = next(k for k in plays if any(step.startswith("bar/22*") for step in k.split()))
    after = decode_position_id(plays[hit])
    assert after[1, 24] == 1  # the hit checker is on the opponent's bar, rows not swapped
    assert set(plays.values()) == gnubg_result_ids(board, 3, 1)


# ---------------------------------------------------------------- batch


def _reference_positions(n: int, seed: int) -> list[tuple[np.ndarray, int, int]]:
    """Positions and rolls from random games played with gnubg's own move list (independent of bgai)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        board = [list(r) for r in gnubg_nn.board_from_position_id(START)]
        for _ in range(200):
            d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
            ours = np.array(board, dtype=np.int8)[::-1]
            out.append((ours, d1, d2))
            keys = gnubg_nn.moves(board, d1, d2)
            if keys:
                b = gnubg_nn.boardfromkey(keys[int(rng.integers(len(keys)))])
            else:
                b = board
            if sum(b[1]) == 0:
                break
            board = [list(b[1]), list(b[0])]  # opponent's turn: swap rows
    return out[:n]


@needs_gnubg
def test_batch_against_gnubg(tmp_path, capsys):
    cases = _reference_positions(300, seed=11)
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{encode_position_id(b)} {d1}{d2}\n" for b, d1, d2 in cases))
    code, out, err = run_cli(capsys, "--batch", str(path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == len(cases)
    mismatches = 0
    for line, (b, d1, d2) in zip(lines, cases):
        rec = json.loads(line)
        assert rec["position_id"] == encode_position_id(b) and rec["dice"] == [d1, d2]
        ids = {p["position_id"] for p in rec["plays"]}
        assert len(ids) == len(rec["plays"])  # one play per distinct afterstate
        mismatches += ids != gnubg_result_ids(b, d1, d2)
    assert mismatches == 0


@needs_gnubg
def test_batch_bad_lines_reported_and_processing_continues(tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(f"{START} 31\n\n4HPwATDgc/ABMA 71\nnonsense 31\n{START}\n{START} 6-6\n")
    code, out, err = run_cli(capsys, "--batch", str(path))
    assert code == 1 and err == ""
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == 5
    assert len(recs[0]["plays"]) == 16
    assert recs[1]["line"] == 3 and "die 7" in recs[1]["error"]
    assert recs[2]["line"] == 4 and "Position ID 'nonsense'" in recs[2]["error"]
    assert recs[3]["line"] == 5 and "POSITION_ID DICE" in recs[3]["error"]
    assert recs[4]["dice"] == [6, 6] and recs[4]["plays"]
    assert {p["position_id"] for p in recs[4]["plays"]} == gnubg_result_ids(decode_position_id(START), 6, 6)


def test_batch_missing_file_exit_2(tmp_path, capsys):
    code, out, err = run_cli(capsys, "--batch", str(tmp_path / "nope.txt"))
    assert code == 2 and "cannot read batch file" in err


def test_real_command_line_stdin_and_argv():
    """Through ``python -m bgai`` as a user runs it: stdin batch and the human table."""
    proc = subprocess.run(
        [sys.executable, "-m", "bgai", "moves", "--batch", "-"],
        input=f"{START} 31\nbad 31\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert len(first["plays"]) == 16 and second["line"] == 2
    proc = subprocess.run(
        [sys.executable, "-m", "bgai", "moves", START, "3-1"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "16 legal plays" in proc.stdout and "8/5 6/5" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "bgai", "moves", START, "77"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stderr.startswith("bgai: error:") and "Traceback" not in proc.stderr


def test_batch_longer_than_a_chunk_keeps_order_and_line_numbers(tmp_path, capsys):
    rolls = [f"{a}{b}" for a in range(1, 7) for b in range(1, 7)]
    lines = []
    for i in range(600):
        lines.append("bad-line 31" if i % 97 == 5 else f"{START} {rolls[i % 36]}")
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(capsys, "--batch", str(path))
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and len(recs) == 600
    by_roll = {}
    for i, rec in enumerate(recs):
        if i % 97 == 5:
            assert rec == {"line": i + 1, "error": rec["error"]} and "bad-line" in rec["error"]
        else:
            d1, d2 = (int(c) for c in rolls[i % 36])
            assert rec["dice"] == [d1, d2]
            by_roll.setdefault(frozenset((d1, d2)), set()).add(frozenset(p["position_id"] for p in rec["plays"]))
    # the same roll in either order always gives the same resulting positions, and the right number of them
    assert all(len(v) == 1 for v in by_roll.values())
    assert len(next(iter(by_roll[frozenset((3, 1))]))) == 16


def test_stdin_batch_answers_each_line_before_the_next_arrives():
    """A program can drive ``bgai moves --batch -`` line by line (the answer is flushed at once)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "moves", "--batch", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        proc.stdin.write(f"{START} 31\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # stdin still open: only a flushed answer arrives
        assert ready, "no answer within 60 s while stdin is still open (output buffered?)"
        first = json.loads(proc.stdout.readline())
        assert len(first["plays"]) == 16
        proc.stdin.write(f"{START} 66\n")
        proc.stdin.close()
        second = json.loads(proc.stdout.readline())
        assert second["dice"] == [6, 6]
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
