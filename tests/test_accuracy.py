"""Evaluation accuracy against rollouts (bgai.evaluate.accuracy, scripts/bench_accuracy.py): hand-computed figures,
the split by class, and the script on a small rollout label folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bgai.agents.base import ProbabilityAgent
from bgai.errors import AgentCapabilityError, BgaiError
from bgai.evaluate.accuracy import accuracy, class_accuracy
from bgai.model.classes import CLASS_CONTACT, CLASS_RACE, classify
from bgai.train.labels import Dataset, LabelSettings, load_labels, make_labels

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")


def test_accuracy_by_hand():
    rollout = np.array([[0.5, 0.0, 0.0, 0.0, 0.0], [0.5, 0.1, 0.0, 0.1, 0.0]])
    # equity = 2 P(win) - 1 + P(wg) - P(lg) + P(wbg) - P(lbg): rollouts 0.0 and 0.0;
    # estimates 0.2 (P(win) 0.6) and -0.1 (P(win) 0.5, P(lg) 0.2)
    probs = np.array([[0.6, 0.0, 0.0, 0.0, 0.0], [0.5, 0.1, 0.0, 0.2, 0.0]])
    se = np.array([[0.01, 0, 0, 0, 0], [0.03, 0, 0, 0, 0]])
    r = accuracy(probs, rollout, se)
    assert r["n"] == 2
    assert r["equity_rms"] == pytest.approx(np.sqrt((0.2 ** 2 + 0.1 ** 2) / 2))  # 0.158114
    assert r["equity_mean"] == pytest.approx(0.05)
    np.testing.assert_allclose(r["output_mean"], [0.05, 0.0, 0.0, 0.05, 0.0], atol=1e-12)
    assert r["rollout_se"] == pytest.approx(0.02)
    eps = 1e-7  # exact 0/1 estimates are clipped
    row0 = -(0.5 * np.log(0.6) + 0.5 * np.log(0.4)) - 4 * np.log(1 - eps)
    row1 = (-(0.5 * np.log(0.5) + 0.5 * np.log(0.5)) - (0.1 * np.log(0.1) + 0.9 * np.log(0.9))
            - np.log(1 - eps) - (0.1 * np.log(0.2) + 0.9 * np.log(0.8)) - np.log(1 - eps))
    assert r["bce"] == pytest.approx((row0 + row1) / 2)
    # a perfect estimate: no error, the cross-entropy is the rollouts' own entropy
    assert accuracy(rollout, rollout)["equity_rms"] == 0.0
    # a rollout a little outside [0, 1] (variance reduction) is clipped
    assert accuracy(np.array([[1.0, 0, 0, 0, 0]]), np.array([[1.002, 0, 0, 0, 0]]))["equity_rms"] == 0.0
    assert np.isnan(accuracy(np.zeros((0, 5)), np.zeros((0, 5)))["equity_rms"])
    with pytest.raises(BgaiError, match="same shape"):
        accuracy(np.zeros((2, 5)), np.zeros((3, 5)))


class _Fixed(ProbabilityAgent):
    """P(win) 0.5 + 0.1 for race positions, 0.5 otherwise; no gammons."""

    name = "fixed"

    def probabilities(self, boards):
        p = np.zeros((len(boards), 5))
        p[:, 0] = np.where(classify(boards) == CLASS_RACE, 0.6, 0.5)
        return p

    def choose(self, boards, dice, rng):  # not used here
        raise NotImplementedError


def test_class_accuracy_splits_by_class():
    from bgai.core.board import starting_board

    contact = starting_board()  # the opening position: contact
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 6:11] = 3  # 15 checkers on the 7..11 points against 15 on the opponent's 7..11: a race
    race[1, 6:11] = 3
    boards = np.stack([contact, race, race])
    probs = np.array([[0.5, 0, 0, 0, 0], [0.5, 0, 0, 0, 0], [0.7, 0, 0, 0, 0]])
    data = Dataset(boards, probs, np.zeros_like(probs), np.array([CLASS_CONTACT, CLASS_RACE, CLASS_RACE], np.int8),
                   {})
    res = class_accuracy(_Fixed(), data)
    assert list(classify(boards)) == [CLASS_CONTACT, CLASS_RACE, CLASS_RACE]
    assert list(res) == ["race", "contact", "all"]
    assert res["contact"]["equity_rms"] == 0.0 and res["contact"]["n"] == 1
    # race: estimates 0.6 against 0.5 and 0.7 -> equity errors +0.2 and -0.2
    assert res["race"]["equity_rms"] == pytest.approx(0.2) and res["race"]["equity_mean"] == pytest.approx(0.0)
    assert res["all"]["equity_rms"] == pytest.approx(np.sqrt(0.08 / 3))
    with pytest.raises(AgentCapabilityError, match="no probabilities"):
        class_accuracy("pubeval", data)


def test_bench_accuracy_script_on_rollout_labels(tmp_path):
    folder = tmp_path / "ro"
    make_labels(str(folder), LabelSettings(model=MODEL, kind="rollout", seed=3, games_per_shard=2, keep=0.1,
                                           trials=36, truncate=4), 1)
    labels = load_labels(str(folder))
    out = tmp_path / "acc.json"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_accuracy.py"), str(folder),
                          "--models", MODEL, f"{MODEL}:ply=1", "--json", str(out)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"{len(labels):,} positions, rollout labels" in run.stdout and "equity RMS" in run.stdout
    got = json.loads(out.read_text())["results"]
    want = class_accuracy(MODEL, labels)
    assert got[MODEL]["all"]["equity_rms"] == pytest.approx(want["all"]["equity_rms"], rel=1e-9)
    assert got[MODEL]["all"]["n"] == len(labels) and 0 < want["all"]["equity_rms"] < 0.5
    # a bot without probabilities: one line naming it, before any work
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_accuracy.py"), str(folder),
                          "--models", "pubeval"], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == ("bench_accuracy: error: agent 'pubeval' gives no "
                                                          "probabilities to compare with rollouts")


def test_damaged_shards_and_repeated_agents_are_one_line_errors(tmp_path):
    import shutil

    from bgai.train.labels import LabelError

    folder = tmp_path / "ro"
    make_labels(str(folder), LabelSettings(model=MODEL, kind="rollout", seed=3, games_per_shard=2, keep=0.1,
                                           trials=36, truncate=4), 1)
    shard = folder / "shard-00000.npz"
    with np.load(shard) as z:
        good = {k: z[k] for k in z.files}
    cases = {"classes": ("class values outside 0 .. 4", lambda a: a.__setitem__("classes", a["classes"] + 7)),
             "probs": ("probs of shape", lambda a: a.__setitem__("probs", a["probs"][:-1])),
             "nan": ("non-finite probabilities", lambda a: a["probs"].__setitem__((0, 0), np.nan)),
             "boards": ("boards of shape", lambda a: a.__setitem__("boards", a["boards"][:, :, :24]))}
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for name, (message, damage) in cases.items():
        bad = tmp_path / name
        shutil.copytree(folder, bad)
        arrays = {k: v.copy() for k, v in good.items()}
        damage(arrays)
        np.savez_compressed(bad / "shard-00000.npz", **arrays)
        with pytest.raises(LabelError, match=f"shard-00000.npz' is damaged: {message}"):
            load_labels(str(bad))
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_accuracy.py"), str(bad)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 2 and run.stderr.startswith("bench_accuracy: error: label shard")
        assert message in run.stderr and run.stderr.count("\n") == 1
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_accuracy.py"), str(folder), "--models",
                          MODEL, MODEL], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and run.stderr == f"bench_accuracy: error: agent {MODEL!r} named twice in --models\n"
