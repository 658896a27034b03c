"""The strength benchmarks (data/bench/strength-v1, and data/bench/race-v1 of race decisions only) and their error
rates (scripts/bench_strength.py)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.core.movegen import legal_plays, parse_play
from bgai.core.position_id import decode_position_ids, encode_position_ids
from bgai.model.classes import CLASS_CONTACT, CLASS_NAMES, CLASS_RACE, classify

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bench_strength.py"
DATA = ROOT / "data" / "bench" / "strength-v1"
RACE = ROOT / "data" / "bench" / "race-v1"
#: Each benchmark folder and the classes its build sampled.
BENCHMARKS = {DATA: ["contact", "crashed", "race"], RACE: ["race"]}


def _load_script():
    spec = importlib.util.spec_from_file_location("bench_strength", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_strength"] = mod
    spec.loader.exec_module(mod)
    return mod


bench = _load_script()


@pytest.fixture(scope="module")
def tiny():
    """The first shard (a round of decisions of every class)."""
    return bench.load_benchmark(str(DATA / "round-0000.npz"), limit=None)


@pytest.mark.parametrize("folder", list(BENCHMARKS), ids=lambda f: f.name)
def test_dataset_description(folder):
    info = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
    assert info["format"] == "bgai-strength-bench" and info["format_version"] == 1
    s = info["settings"]
    assert s["rollout_agent"] == "gnubg" and s["variance_reduction"] is True
    assert s["trials"] >= 36 and s["top_k"] == 5
    assert s["classes"] == BENCHMARKS[folder]


@pytest.mark.parametrize("folder", list(BENCHMARKS), ids=lambda f: f.name)
def test_format_invariants(folder):
    tiny = bench.load_benchmark(str(folder / "round-0000.npz"), limit=None)
    classes = {CLASS_NAMES.index(c) for c in BENCHMARKS[folder]}
    a, off = tiny.arrays, tiny.offsets
    n = len(tiny)
    assert n > 0 and off[0] == 0 and off[-1] == len(a["play"]) and (np.diff(off) >= 2).all()
    boards = decode_position_ids(list(a["position_id"]))
    assert (boards == a["board"]).all()
    assert (classify(boards) == a["cls"]).all()
    assert set(np.unique(a["cls"])) == classes
    for i in range(n):
        board, dice = boards[i], tuple(int(x) for x in a["dice"][i])
        legal = legal_plays(board, dice)
        assert len(legal) >= 2  # forced plays are not in the benchmark
        rows = slice(off[i], off[i + 1])
        eq, loss = a["equity"][rows], a["loss"][rows]
        ids = list(a["after_id"][rows])
        assert len(set(ids)) == len(ids)  # distinct candidates
        for text, pid in zip(a["play"][rows], ids):
            play = parse_play(str(text), board, dice)  # legal, and the notation names it
            assert encode_position_ids(np.asarray(play.afterstate)[None])[0] == pid
        # the best candidate first, loss 0 (plays that tie in a sure loss differ by rounding, -2e-16)
        assert loss[0] == 0.0 and (loss >= -1e-12).all()
        assert (np.diff(eq) <= 0).all()
        np.testing.assert_allclose(loss, eq[0] - eq, atol=1e-9)
        assert (a["equity_se"][rows] >= 0).all() and (a["loss_se"][rows] >= 0).all()
        p = a["probs"][rows]
        np.testing.assert_allclose(p[:, 0] * 2 - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4], eq, atol=1e-9)
        src = a["source"][rows]
        assert ((src & 1) != 0).sum() == min(5, len(legal)) and ((src & 4) != 0).sum() == 1


def _hand_built():
    """Three decisions of the starting position, candidates and rolled-out equities written by hand."""
    ids = ["4HPwATDgc/ABMA"] * 3
    boards = decode_position_ids(ids)
    cand = [
        # decision 0: 3-1, two candidates
        ("8/5 6/5", "A1", 0.20, 0.0), ("24/21 6/5", "A2", 0.15, 0.05),
        # decision 1: 6-1, three candidates
        ("13/7 8/7", "B1", 0.18, 0.0), ("24/18 6/5", "B2", 0.168, 0.012), ("24/17", "B3", 0.10, 0.08),
        # decision 2: 4-2, two candidates
        ("8/4 6/4", "C1", 0.25, 0.0), ("24/20 13/11", "C2", 0.20, 0.05),
    ]
    arrays = {
        "position_id": np.array(ids), "board": boards, "dice": np.array([[3, 1], [6, 1], [4, 2]], dtype=np.int8),
        "cls": np.full(3, CLASS_CONTACT, dtype=np.int8), "seed": np.zeros(3, dtype=np.int64),
        "play": np.array([c[0] for c in cand]), "after_id": np.array([c[1] for c in cand]),
        "equity": np.array([c[2] for c in cand]), "loss": np.array([c[3] for c in cand]),
    }
    return bench.Benchmark(arrays=arrays, offsets=np.array([0, 2, 5, 7]))


def test_error_rate_hand_built():
    b = _hand_built()
    # best in decision 0 (loss 0), second in decision 1 (0.012), second in decision 2 (0.05)
    loss, best = bench.choice_losses(b, ["A1", "B2", "C2"])
    np.testing.assert_allclose(loss, [0.0, 0.012, 0.05])
    assert best.tolist() == [True, False, False]
    r = bench.error_rate(loss)
    # ER = 1000 * (0 + 0.012 + 0.05) / 3 = 20.667; SE = 1000 * std([0, .012, .05], ddof=1) / sqrt(3) = 15.070
    assert r["n"] == 3 and r["outside"] == 0
    assert r["er"] == pytest.approx(20.6667, abs=1e-4)
    assert r["se"] == pytest.approx(15.0702, abs=1e-4)
    assert r["best_pct"] == pytest.approx(100 / 3)
    # a play outside the candidates is counted and left out: ER over decisions 0 and 2 only = 1000 * 0.05 / 2
    loss, _ = bench.choice_losses(b, ["A1", "ZZ", "C2"])
    assert math.isnan(loss[1])
    r = bench.error_rate(loss)
    assert (r["n"], r["outside"]) == (2, 1)
    assert r["er"] == pytest.approx(25.0)
    assert r["se"] == pytest.approx(1000 * 0.05 / math.sqrt(2) / math.sqrt(2))  # std([0, .05]) = .05 / sqrt(2)
    assert r["best_pct"] == pytest.approx(50.0)


def test_pubeval_choices_are_candidates(tiny):
    """pubeval's play is always among the candidates; its losses are the table's entries for those plays."""
    agent = make_agent("pubeval")
    ids = bench.agent_choices(agent, tiny)
    loss, _ = bench.choice_losses(tiny, ids)
    assert not np.isnan(loss).any()
    a, off = tiny.arrays, tiny.offsets
    for i, pid in enumerate(ids):
        rows = slice(off[i], off[i + 1])
        k = list(a["after_id"][rows]).index(pid)
        assert a["source"][rows][k] & 4
        assert loss[i] == pytest.approx(a["loss"][rows][k])


def test_gnubg_choices_are_candidates_or_ties(tiny):
    """gnubg's play is a candidate (its top 5 at 0-ply are), except where more than 5 plays tie at 0-ply (a race
    lost with a sure gammon: every play -2.0) and ``choose`` picks another of the tied plays: then it is reported
    as outside the candidates."""
    pytest.importorskip("gnubg_nn")
    agent = make_agent("gnubg")
    ids = bench.agent_choices(agent, tiny)
    loss, _ = bench.choice_losses(tiny, ids)
    outside = np.flatnonzero(np.isnan(loss))
    assert outside.size <= 0.05 * len(tiny)
    for i in outside:
        board, dice = tiny.arrays["board"][i], tuple(int(x) for x in tiny.arrays["dice"][i])
        after = np.stack([np.asarray(p.afterstate) for p in legal_plays(board, dice)])
        scores = agent.evaluate_plays(board[None], after, np.zeros(len(after), dtype=np.int64))
        chosen = encode_position_ids(after).index(ids[i])
        assert scores[chosen] == scores.max() and (scores == scores.max()).sum() > 5
    r = bench.error_rate(loss)
    assert r["outside"] == outside.size and r["n"] == len(tiny) - outside.size


def test_select_keeps_the_chosen_decisions_with_their_candidates(tiny, capsys):
    keep = tiny.arrays["cls"] == CLASS_RACE
    race = bench.select(tiny, keep)
    idx = np.flatnonzero(keep)
    assert len(race) == idx.size > 0
    np.testing.assert_array_equal(race.arrays["position_id"], tiny.arrays["position_id"][idx])
    for j, i in enumerate(idx):
        lo, hi = tiny.offsets[i], tiny.offsets[i + 1]
        for k in ("after_id", "loss", "equity", "play"):
            np.testing.assert_array_equal(race.arrays[k][race.offsets[j] : race.offsets[j + 1]], tiny.arrays[k][lo:hi])
    # the script's --classes plays only those decisions: pubeval's race ER equals the full run's race ER
    assert bench.main(["--models", "pubeval", "--data", str(DATA / "round-0000.npz"), "--classes", "race"]) == 0
    out = capsys.readouterr().out
    assert f"0 contact, 0 crashed, {idx.size} race decisions" in out
    full = bench.evaluate(["pubeval"], tiny)["pubeval"]["race"]
    assert f"{full['er']:6.1f} +- {full['se']:4.1f} ({full['n']}" in out
    assert "race ER" in out and "contact ER" not in out  # a column per class played
    # a benchmark without decisions of the classes asked: one line, exit 2
    assert bench.main(["--models", "pubeval", "--data", str(RACE / "round-0000.npz"), "--classes", "contact"]) == 2
    assert "has no decisions of the classes contact" in capsys.readouterr().err
