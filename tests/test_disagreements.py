"""The paired decision test (bgai.evaluate.disagreements, scripts/bench_disagreements.py): decisions drawn, the
arithmetic of the gain, exact judging at truncation 0, the same figures on any number of workers, clear errors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.core.board import flip
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import afterstates
from bgai.errors import BgaiError
from bgai.evaluate.disagreements import draw_decisions, paired_test, summarise
from bgai.train.labels import load_labels

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")
POSITIONS = os.path.join(ROOT, "data", "labels", "sl8db-contact-cand4-rollout72")


@pytest.fixture(scope="module")
def boards():
    return load_labels(POSITIONS).boards


def test_summarise_arithmetic():
    # 4 decisions, 2 differ by +0.01 and -0.03 points: mean -0.005 -> -5 mppd; the other two count as 0
    res = summarise(4, np.array([0, 2]), np.array([0.01, -0.03]), np.array([0.002, 0.004]))
    assert res.decisions == 4 and res.differ == 2
    assert res.gain_mppd == pytest.approx(-5.0)
    # std([0.01, -0.03, 0, 0], ddof=1) = sqrt(9e-4 / 3) = 0.0173205; / sqrt(4) -> 8.660 mppd
    assert res.se_mppd == pytest.approx(1000 * math.sqrt(9e-4 / 3) / 2)
    assert res.gain_per_difference == pytest.approx(-0.01)
    one = summarise(1, np.array([0]), np.array([0.02]), np.array([0.005]))  # one decision: no standard error
    assert one.gain_mppd == pytest.approx(20.0) and math.isnan(one.se_mppd)
    assert json.loads(json.dumps(one.as_dict(), allow_nan=False))["se_mppd"] is None
    with pytest.raises(BgaiError, match="no decisions"):
        summarise(0, np.array([]), np.array([]), np.array([]))
    with pytest.raises(BgaiError, match="3 differences for 2 decisions"):
        summarise(2, np.arange(3), np.zeros(3), np.zeros(3))


def test_draw_decisions_deterministic_and_forced_dropped(boards):
    d1 = draw_decisions(boards, 50, seed=4)
    d2 = draw_decisions(boards, 50, seed=4)
    d3 = draw_decisions(boards, 50, seed=5)
    assert np.array_equal(d1.boards, d2.boards) and np.array_equal(d1.dice, d2.dice)
    assert not np.array_equal(d1.source, d3.source)
    assert 0 < len(d1.boards) <= 50
    assert np.array_equal(d1.boards, boards[d1.source])
    assert ((d1.dice >= 1) & (d1.dice <= 6)).all()
    for b, dice in zip(d1.boards, d1.dice):  # every kept decision has at least two legal plays
        after, _ = afterstates(b[None], dice[None])
        assert after.shape[0] >= 2
    # a closed board against a checker on the bar: no legal play for any roll, never a decision
    closed = np.zeros((2, 25), dtype=np.int8)
    closed[0, 24], closed[0, 5] = 1, 14
    closed[1, 0:6] = 2
    closed[1, 6] = 3
    assert len(draw_decisions(closed[None], 1, seed=1).boards) == 0
    assert len(draw_decisions(boards[:3], 10, seed=1).source) <= 3  # fewer positions than asked: all of them
    with pytest.raises(BgaiError, match="count must be"):
        draw_decisions(boards, 0, seed=1)


def test_same_agent_never_differs(boards):
    dec = draw_decisions(boards, 12, seed=2)
    res = paired_test(MODEL, MODEL, dec, judge=MODEL, trials=4, truncate=1, seed=3)
    assert res.decisions == len(dec.boards) and res.differ == 0
    assert res.gain_mppd == 0.0 and res.se_mppd == 0.0


def test_truncate_zero_is_the_judges_own_evaluation(boards):
    # truncation 0: each trial is the judge's 0-ply evaluation of the afterstate, so B = the judge gains exactly
    # the judge's equity difference between its play and pubeval's, never less than 0
    dec = draw_decisions(boards, 30, seed=6)
    res = paired_test("pubeval", MODEL, dec, judge=MODEL, trials=2, truncate=0, seed=1)
    assert res.differ > 0
    judge = make_agent(MODEL)
    pub = make_agent("pubeval")
    rng = np.random.default_rng(0)
    for i, d, se in zip(res.index, res.diffs, res.diff_se):
        b, dice = dec.boards[i : i + 1], dec.dice[i : i + 1]
        plays = np.stack([pub.choose(b, dice, rng)[0], judge.choose(b, dice, rng)[0]])
        eq = -cubeless_equity(judge.probabilities(flip(plays)))
        assert d == pytest.approx(eq[1] - eq[0], abs=1e-6)  # float32 nets: batch-size rounding
        assert d >= 0.0 and se == 0.0
    assert res.gain_mppd == pytest.approx(1000 * res.diffs.sum() / res.decisions)


def test_same_figures_on_any_number_of_workers(boards):
    dec = draw_decisions(boards, 16, seed=7)
    one = paired_test("pubeval", MODEL, dec, judge=MODEL, trials=4, truncate=2, seed=9, workers=1)
    two = paired_test("pubeval", MODEL, dec, judge=MODEL, trials=4, truncate=2, seed=9, workers=2)
    assert one.differ > 0
    assert np.array_equal(one.index, two.index) and np.array_equal(one.diffs, two.diffs)
    assert one.gain_mppd == two.gain_mppd


def test_bad_settings(boards):
    dec = draw_decisions(boards, 4, seed=1)
    with pytest.raises(BgaiError, match="trials must be"):
        paired_test(MODEL, MODEL, dec, judge=MODEL, trials=1)
    with pytest.raises(BgaiError, match="truncate must be"):
        paired_test(MODEL, MODEL, dec, judge=MODEL, truncate=-1)
    with pytest.raises(BgaiError, match="judge plays and evaluates at 0-ply"):
        paired_test(MODEL, MODEL, dec, judge=MODEL + ":ply=1")
    with pytest.raises(BgaiError, match="can only roll out to the end"):
        paired_test(MODEL, MODEL, dec, judge="pubeval", truncate=3)
    with pytest.raises(BgaiError, match="unknown agent|agent spec"):
        paired_test("nosuchbot", MODEL, dec, judge=MODEL)


def _script(*args):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_disagreements.py"), *args],
                          env=env, capture_output=True, text=True, timeout=600)


def test_script_prints_and_writes_json(tmp_path):
    out = tmp_path / "d.json"
    run = _script("pubeval", MODEL, "--positions", POSITIONS, "--count", "12", "--judge", MODEL, "--truncate", "0",
                  "--trials", "2", "--seed", "3", "--json", str(out))
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["settings"]["judge"] == MODEL and data["settings"]["truncate"] == 0
    assert f"{data['gain_mppd']:+.2f} +- {data['se_mppd']:.2f} mppd" in run.stdout
    assert data["gain_mppd"] >= 0.0 and data["differ"] == len(data["diffs"]) == len(data["source"])
    assert data["count"] == 12 and data["interrupted"] is None
    boards = load_labels(POSITIONS).boards
    dec = draw_decisions(boards, 12, seed=3)
    assert data["source"] == dec.source[data["index"]].tolist() and data["dice"] == dec.dice[data["index"]].tolist()


def test_script_errors_are_one_line(tmp_path):
    run = _script(MODEL, MODEL, "--positions", str(tmp_path))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith("bench_disagreements: error:") and "is not a bgai label folder" in run.stderr
    for bad in ("-2", "x", "1.5"):
        run = _script(MODEL, MODEL, "--truncate", bad)
        assert run.returncode == 2 and run.stderr == (f"bench_disagreements.py: error: argument --truncate: expected an "
                                                      f"integer >= 0, got '{bad}' (or 'none') (see "
                                                      "'bench_disagreements.py --help')\n")
    run = _script(MODEL, MODEL, "--positions", POSITIONS, "--judge", "pubeval")
    assert run.returncode == 2 and "only roll out to the end" in run.stderr
