"""Regression tests for defects of the command-line front end (issue numbers in the test names): seeds checked
at the edge, non-UTF-8 batch lines, options between positionals, huge input never echoed whole, hint's default
agent and labels, every position format in ``moves``/``hint``, and ``hint --batch -`` streaming."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys

import numpy as np
import pytest

from bgai.cli import main
from bgai.cli.args import MAX_SEED, seed_type

START = "4HPwATDgc/ABMA"
#: The shipped model's file name, as the manifest names it (test_registry_models pins which one it is).
with open(os.path.join(os.path.dirname(__file__), "..", "checkpoints", "models.json")) as _f:
    SHIPPED = json.load(_f)["default"]
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
START_WILDBG = "p24=2&p19=-5&p17=-3&p13=5&p12=-5&p8=3&p6=5&p1=-2"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def usage_error(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


# --- (8) seeds ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["-1", str(2**63), "1.5", "seven", "0x10", ""])
@pytest.mark.parametrize(
    "command",
    [["play"], ["serve", "external"], ["serve", "http"], ["eval", "pubeval", "random", "--games", "2"]],
)
def test_8_bad_seeds_are_one_line_usage_errors(capsys, command, seed):
    err = usage_error(capsys, *command, "--seed", seed)
    assert "argument --seed: expected an integer seed 0..2**63-1" in err


def test_8_seed_range():
    assert seed_type("0") == 0 and seed_type(str(MAX_SEED)) == MAX_SEED == 2**63 - 1 and seed_type(" 12 ") == 12
    np.random.default_rng(seed_type(str(MAX_SEED)))  # numpy accepts every seed that passes


def test_8_negative_seed_through_the_real_command_line():
    proc = subprocess.run([sys.executable, "-m", "bgai", "play", "--agent", "pubeval", "--seed", "-1"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("bgai play: error: argument --seed:")


# --- (9) non-UTF-8 batch lines ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", ["hint", "moves"])
def test_9_non_utf8_batch_line_is_an_error_for_that_line(capsys, tmp_path, cmd):
    f = tmp_path / "batch.txt"
    f.write_bytes(f"{START} 31\n".encode() + b"\xff\xfe\x80 31\n" + f"{START} 42\n".encode())
    extra = ["--agent", "pubeval"] if cmd == "hint" else []
    code, out, err = run(capsys, cmd, "--batch", str(f), *extra)
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and err == "" and len(recs) == 3
    assert recs[1] == {"line": 2, "error": "line 2 is not UTF-8 text (byte 0xff at column 1)"}
    assert len(recs[0]["plays"]) == 16 and recs[2]["dice"] == [4, 2]
    if cmd == "hint":
        assert recs[0]["plays"][0]["play"] == "8/5 6/5"


def test_9_non_utf8_on_stdin():
    proc = subprocess.run([sys.executable, "-m", "bgai", "hint", "--batch", "-", "--agent", "pubeval"],
                          input=b"\xc3\x28 31\n" + f"{START} 31\n".encode(), capture_output=True, timeout=120)
    recs = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert recs[0]["line"] == 1 and "not UTF-8" in recs[0]["error"] and len(recs[1]["plays"]) == 16


# --- (11) options between positionals ----------------------------------------------------------------------------


def test_11_option_between_positionals(capsys):
    code, mixed, err = run(capsys, "hint", START, "--agent", "pubeval", "31")
    assert code == 0 and err == ""
    code2, plain, _ = run(capsys, "hint", START, "31", "--agent", "pubeval")
    assert code2 == 0 and mixed == plain and "8/5 6/5" in mixed
    code, out, _ = run(capsys, "moves", START, "--json", "3-1")
    assert code == 0 and len(json.loads(out)["plays"]) == 16
    err = usage_error(capsys, "moves", START, "31", "extra")
    assert "unrecognized arguments: extra" in err


# --- (12) huge input is quoted by a short prefix only ----------------------------------------------------------


@pytest.mark.parametrize("cmd", ["hint", "moves"])
def test_12_huge_batch_line_is_not_echoed(capsys, tmp_path, cmd):
    f = tmp_path / "huge.txt"
    f.write_text("A" * 10_000_000 + " 31\n" + f"{START} " + "7" * 1_000_000 + f"\n{START} 31\n")
    extra = ["--agent", "pubeval"] if cmd == "hint" else []
    code, out, _ = run(capsys, cmd, "--batch", str(f), *extra)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3
    assert len(lines[0]) < 300 and "Position ID 'AAAAAAAAAA" in lines[0] and "(10000000 characters)" in lines[0]
    assert len(lines[1]) < 300 and "(1000000 characters)" in lines[1]
    assert "8/5 6/5" in {p["play"] for p in json.loads(lines[2])["plays"]}


def test_12_huge_argument_is_not_echoed(capsys):
    code, _, err = run(capsys, "moves", START, "3" * 100_000)
    assert code == 2 and len(err) < 300 and "(100000 characters)" in err


# --- (23) hint's default agent, labels, ply, five probabilities, one dice style ------------------------------


def test_23_hint_defaults_to_the_shipped_model(capsys):
    from bgai.agents.registry import make_agent
    from bgai.analysis.api import rank_plays
    from bgai.core.board import starting_board

    code, out, _ = run(capsys, "hint", START, "31")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"Position ID {START}, roll 3-1, agent default ({SHIPPED}) (equity), 0-ply"
    assert "score" not in out
    ref = rank_plays(make_agent("default"), starting_board(), "31")
    for line, r in zip(lines[1:], ref):
        p = r.probabilities * 100
        assert r.notation in line and f"equity {r.equity:+.4f}" in line
        assert (f"win {p[0]:.1f}% wg {p[1]:.1f}% wbg {p[2]:.1f}% lg {p[3]:.1f}% lbg {p[4]:.1f}%") in line


def test_23_five_probabilities_are_gnubgs(capsys):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    from bgai.core.board import flip
    from bgai.core.position_id import decode_position_id

    code, out, _ = run(capsys, "hint", START, "31", "--agent", "gnubg")
    first = out.splitlines()[1]
    after = flip(decode_position_id(first.split()[-1]))  # the opponent on roll after 8/5 6/5
    p = gnubg_nn.probabilities([after[1].tolist(), after[0].tolist()], 0)
    mover = [1 - p[0], p[3], p[4], p[1], p[2]]
    assert first.split()[1:3] == ["8/5", "6/5"]
    assert (f"win {100 * mover[0]:.1f}% wg {100 * mover[1]:.1f}% wbg {100 * mover[2]:.1f}% "
            f"lg {100 * mover[3]:.1f}% lbg {100 * mover[4]:.1f}%") in first


def test_23_scores_are_labelled_score(capsys):
    code, out, _ = run(capsys, "hint", START, "31", "--agent", "pubeval")
    assert code == 0 and "agent pubeval (score), 0-ply" in out.splitlines()[0]
    assert "score +10.3431" in out.splitlines()[1] and "equity" not in out
    code, out, _ = run(capsys, "hint", START, "31", "--agent", "racer", "--json")
    d = json.loads(out)
    assert d["score_kind"] == "score" and all("score" in p and "equity" not in p for p in d["plays"])


def test_23_one_dice_style(capsys):
    for dice in ("31", "3,1", "3 1"):
        assert "roll 3-1" in run(capsys, "hint", START, dice, "--agent", "pubeval")[1].splitlines()[0]
        assert "roll 3-1" in run(capsys, "moves", START, dice)[1].splitlines()[0]


# --- (24) every format in moves and hint; --board ----------------------------------------------------------


def test_24_moves_and_hint_accept_every_format(capsys):
    ref = json.loads(run(capsys, "moves", START, "52", "--json")[1])
    fibs = ("board:p0:p1:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:5:2:5:2:1:1:1:0:1:-1:0:"
            "25:0:0:0:0:0:0:0:1")
    for text, dice in ((START_XGID, []), (START_WILDBG, ["5-2"]), (fibs, []), (f"{START}:QYkqASAAIAAA", [])):
        code, out, err = run(capsys, "moves", text, *dice, "--json")
        assert code == 0, err
        got = json.loads(out)
        assert got["position_id"] == START and sorted(got["dice"]) == [2, 5]
        assert {p["position_id"] for p in got["plays"]} == {p["position_id"] for p in ref["plays"]}
    code, out, err = run(capsys, "hint", START_XGID, "--agent", "pubeval", "--json")
    assert code == 0 and json.loads(out)["plays"][0]["play"] == "13/11 13/8"


def test_24_xgid_hint_ranks_like_the_same_match_id(capsys):
    pytest.importorskip("gnubg_nn")
    xgid = json.loads(run(capsys, "hint", START_XGID, "--agent", "gnubg", "--json")[1])
    mid = json.loads(run(capsys, "hint", START + ":cAkAAAAAAAAA", "52", "--agent", "gnubg", "--json")[1])
    assert xgid["ranking"] == mid["ranking"] == "cubeful money equity (0-ply cubeful, per unit of the cube)"
    assert [(p["play"], p["equity"]) for p in xgid["plays"]] == [(p["play"], p["equity"]) for p in mid["plays"]]


def test_24_board_draws_the_position(capsys):
    code, out, _ = run(capsys, "moves", START_XGID, "--board")
    lines = out.splitlines()
    assert code == 0 and lines[1] == "+------------------+---+------------------+"
    assert "X (on roll): bar 0, off 0, pips 167   O: bar 0, off 0, pips 167" in out
    assert "roll 5-2: 8 legal plays" in out
    code, out, _ = run(capsys, "hint", START, "--board", "--agent", "pubeval")
    assert code == 0 and "pips 167" in out and "never double, always take" in out


# --- (25) hint --batch - streams; lines without dice are cube decisions --------------------------------------


def test_25_hint_batch_cube_lines(capsys, monkeypatch):
    pytest.importorskip("gnubg_nn")
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{START} 31\nwN1tAwDb3Q4AAA\n{START}:8AmgADAAIAAA\n"))
    code, out, _ = run(capsys, "hint", "--batch", "-", "--agent", "gnubg")
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and len(recs) == 3 and recs[0]["plays"][0]["play"] == "8/5 6/5"
    assert recs[1]["position_id"] == "wN1tAwDb3Q4AAA" and recs[1]["cube"]["action"]
    assert recs[1]["cube"]["cubeless_equity"] == pytest.approx(1.848, abs=3e-3)
    assert recs[2]["match_id"] == "8AmgADAAIAAA" and recs[2]["cube"]["available"] is False


def test_25_hint_batch_stdin_answers_each_line_before_the_next_arrives():
    proc = subprocess.Popen([sys.executable, "-m", "bgai", "hint", "--batch", "-", "--agent", "pubeval"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(f"{START} 31\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # stdin still open: only a flushed answer arrives
        assert ready, "no answer within 60 s while stdin is still open (input read to the end first?)"
        assert json.loads(proc.stdout.readline())["plays"][0]["play"] == "8/5 6/5"
        proc.stdin.write(f"{START}\n")  # no dice: the cube decision
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready
        cube = json.loads(proc.stdout.readline())["cube"]
        assert cube["policy"] == "never double, always take" and cube["take"] is True
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_22_hint_names_the_model_that_answered(capsys):
    # 'default' stands for the shipped model: the header says which file answered
    assert main(["hint", "4HPwATDgc/ABMA", "31"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert f"agent default ({SHIPPED})" in head and "0-ply" in head
    assert main(["hint", "4HPwATDgc/ABMA"]) == 0
    assert f"agent default ({SHIPPED})" in capsys.readouterr().out.splitlines()[0]


def test_ctrl_c_while_importing_the_subcommands_is_one_line(monkeypatch, capsys):
    import bgai.cli as cli

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.importlib, "import_module", interrupted)
    assert cli.main(["moves", "--help"]) == 130
    assert capsys.readouterr().err == "bgai: interrupted\n"
