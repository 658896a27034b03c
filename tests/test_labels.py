"""Label jobs (bgai.train.labels): shards are pure functions of (model, settings, seed, shard index), resumable,
and hold the labeller's real values."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.cli import main
from bgai.core.position_id import decode_position_ids
from bgai.model.classes import classify
from bgai.train.labels import LabelError, LabelSettings, load_labels, make_labels

MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


def _settings(**kw):
    base = dict(model=MODEL, kind="ply1", seed=3, games_per_shard=6, keep=0.2)
    base.update(kw)
    return LabelSettings(**base)


def _shard(folder, i):
    with np.load(os.path.join(folder, f"shard-{i:05d}.npz")) as z:
        return {k: z[k] for k in z.files if k != "meta"}


def test_labels_are_the_labellers_values_and_reproducible(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert make_labels(str(a), _settings(), 2) == [0, 1]
    assert make_labels(str(b), _settings(), 2, workers=2) in ([0, 1], [1, 0])
    for i in range(2):
        sa, sb = _shard(a, i), _shard(b, i)
        assert sa.keys() == sb.keys()
        for k in sa:
            np.testing.assert_array_equal(sa[k], sb[k])
    d = load_labels(str(a))
    assert len(d) > 20
    agent = make_agent(MODEL).at_ply(1)
    np.testing.assert_allclose(d.probs, agent.probabilities(d.boards), atol=1e-6)
    assert np.all(d.std_errors == 0)
    np.testing.assert_array_equal(d.classes, classify(d.boards))
    ids = np.concatenate([_shard(a, i)["position_ids"] for i in range(2)])
    np.testing.assert_array_equal(decode_position_ids(list(ids)), d.boards)
    # another seed gives other positions
    c = tmp_path / "c"
    make_labels(str(c), _settings(seed=4), 1)
    assert not np.array_equal(_shard(c, 0)["boards"][:5], _shard(a, 0)["boards"][:5])


def test_resume_makes_only_missing_shards_and_refuses_other_settings(tmp_path):
    f = tmp_path / "d"
    make_labels(str(f), _settings(), 3)
    before = _shard(f, 1)
    os.remove(f / "shard-00001.npz")
    assert make_labels(str(f), _settings(), 3) == [1]
    after = _shard(f, 1)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    assert make_labels(str(f), _settings(), 3) == []
    with pytest.raises(LabelError, match="other settings"):
        make_labels(str(f), _settings(keep=0.5), 3)


def test_bad_settings_are_one_line_errors(tmp_path, capsys):
    with pytest.raises(LabelError, match="keep must be in"):
        make_labels(str(tmp_path / "x"), _settings(keep=0), 1)
    with pytest.raises(LabelError, match="rollout labels need trials"):
        make_labels(str(tmp_path / "x"), _settings(kind="rollout"), 1)
    assert main(["label", str(tmp_path / "y"), "--model", MODEL, "--keep", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgai: error:") and "keep must be in" in err and "\n" not in err


def test_rollout_labels_carry_standard_errors(tmp_path):
    from bgai.analysis.rollout import rollout_position
    from bgai.train.labels import position_seed

    s = _settings(kind="rollout", trials=36, truncate=4, games_per_shard=2, keep=0.05)
    make_labels(str(tmp_path / "r"), s, 1)
    d = load_labels(str(tmp_path / "r"))
    assert len(d) >= 1 and np.all(d.std_errors >= 0) and np.any(d.std_errors > 0)
    agent = make_agent(MODEL)
    r = rollout_position(agent, d.boards[0], trials=36, truncate=4, seed=position_seed(3, d.boards[0]))
    np.testing.assert_allclose(d.probs[0], r.probabilities, atol=1e-6)
    np.testing.assert_allclose(d.std_errors[0], r.std_errors, atol=1e-6)
