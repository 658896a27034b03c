"""Rollouts (bgai.analysis.rollout): against GNU Backgammon's own rollouts and 1-ply evaluations, and the engine's
properties (seeds, workers, variance reduction, truncation, plays on the same dice, interrupts, CLI).

The reference check is a fast subset of ``scripts/check_rollout_gnubg.py`` (GNU Backgammon ``gnubg -t`` rollouts);
it and the gnubg tests are skipped when gnubg or gnubg-nn is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import (
    ORDERED_ROLLS,
    GnubgOnePly,
    RolloutPolicy,
    TrialDice,
    default_chunk,
    rollout_plays,
    rollout_position,
    trial_dice,
)
from bgai.cli import main as cli_main
from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import apply_steps
from bgai.core.position_id import decode_position_id
from bgai.errors import AgentSpecError, BgaiError, InvalidPositionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")
SCRIPT = os.path.join(ROOT, "scripts", "check_rollout_gnubg.py")

#: Positions of several kinds (Position IDs, side on roll): contact, crashed, race, bear-off.
CONTACT = "sG+DATAc5+ATAA"
CRASHED = "fw8AAOHNjgEBCA"
RACE = "u7cWAADavZMAAA"
BEAROFF = "0Q0AALR3AAAAAA"


def _load_script():
    spec = importlib.util.spec_from_file_location("check_rollout_gnubg", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["check_rollout_gnubg"] = mod
    spec.loader.exec_module(mod)
    return mod


check = _load_script()
needs_gnubg_nn = pytest.mark.skipif(importlib.util.find_spec("gnubg_nn") is None, reason="gnubg-nn is not installed")
needs_gnubg = pytest.mark.skipif(check.find_gnubg() is None, reason="GNU Backgammon (gnubg) is not installed")


@pytest.fixture(scope="module")
def net():
    return make_agent(MODEL)


@pytest.fixture(scope="module")
def gnubg_agent():
    pytest.importorskip("gnubg_nn")
    return make_agent("gnubg")


# ---------------------------------------------------------------------------------------------------- the dice


def test_quasi_random_first_two_rolls_are_stratified():
    dice = TrialDice(3, np.arange(1296))
    first, second = dice.roll(0, np.arange(1296)), dice.roll(1, np.arange(1296))
    assert np.array_equal(trial_dice(3, 1000, 2), np.stack([first[1000], second[1000]]))
    idx1 = (first[:, 0] - 1) * 6 + first[:, 1] - 1
    idx2 = (second[:, 0] - 1) * 6 + second[:, 1] - 1
    for block in range(0, 1296, 36):  # every block of 36 trials: each first roll once, each second roll once
        assert sorted(idx1[block : block + 36]) == list(range(36))
        assert sorted(idx2[block : block + 36]) == list(range(36))
    assert len(set(zip(idx1, idx2))) == 1296  # all combinations over 1296 trials
    # the seed permutes the rolls; later rolls depend on (seed, trial) only
    assert not np.array_equal(trial_dice(3, 5, 8), trial_dice(4, 5, 8))
    assert np.array_equal(trial_dice(3, 5, 8), trial_dice(3, 5, 8))
    dice = TrialDice(9, np.arange(300))
    later = np.concatenate([dice.roll(k, np.arange(300)) for k in range(2, 40)])
    counts = np.bincount((later[:, 0] - 1) * 6 + later[:, 1] - 1, minlength=36)
    expected = len(later) / 36
    assert ((counts - expected) ** 2 / expected).sum() < 70  # chi-square, 35 degrees of freedom (p ~ 5e-4)
    assert set(map(tuple, later.tolist())) == set(map(tuple, ORDERED_ROLLS.tolist()))


# ------------------------------------------------------------------------------------------ GNU Backgammon


@needs_gnubg
@needs_gnubg_nn
def test_agrees_with_gnubg_rollouts_on_all_position_classes():
    """bgai's rollouts with the gnubg agent vs GNU Backgammon 1.07's own rollouts, 0-ply, cubeless, 24 positions
    (6 contact, 6 crashed, 6 race, 6 bear-off): equity and each probability within 3 combined standard errors."""
    rep = check.run_check(24, 108, seed=3)
    s = rep["summary"]
    assert s["positions"] == 24 and set(s["by_group"]) == {"contact", "crashed", "race", "bearoff"}
    assert s["max_abs_z"] <= 3.0, [r for r in rep["positions"] if max(abs(v) for v in r["z"].values()) > 3]
    assert s["within_3se"] == 1.0
    assert abs(s["mean_z_equity"]) < 1.0  # no bias (the mean of 24 z-scores has SE ~0.2 or less)


@needs_gnubg_nn
def test_truncated_vr_rollout_is_gnubg_one_ply(gnubg_agent):
    """Truncated after one ply with variance reduction, each trial is exactly the mean over the 21 rolls of the
    0-ply evaluation after the 0-ply best play: GNU Backgammon's own 1-ply evaluation, with no error at all."""
    import gnubg_nn

    for pid in (CONTACT, CRASHED, RACE, BEAROFF):
        b = decode_position_id(pid)
        r = rollout_position(gnubg_agent, b, trials=36, truncate=1, seed=5)
        one_ply = np.array(gnubg_nn.probabilities([b[1].tolist(), b[0].tolist()], 1))
        assert np.abs(r.probabilities - one_ply).max() < 2e-6, pid  # gnubg computes in float32
        assert r.std_errors.max() < 1e-9 and r.equity_se < 1e-9


@needs_gnubg_nn
def test_gnubg_one_ply_plays_are_gnubgs(gnubg_agent):
    """The 1-ply checker play used inside rollouts for the gnubg agent is GNU Backgammon's own (best_move n=1)."""
    import gnubg_nn

    one = GnubgOnePly(gnubg_agent)
    rng = np.random.default_rng(0)
    for pid in (CONTACT, CRASHED, RACE, BEAROFF, "4HPwATDgc/ABMA"):
        b = decode_position_id(pid)
        for d in ((3, 1), (6, 5), (4, 4), (2, 1), (6, 6)):
            ours = one.choose(b[None], np.array([d]), rng)[0]
            theirs = apply_steps(b, gnubg_nn.best_move([b[1].tolist(), b[0].tolist()], d[0], d[1], n=1))
            assert np.array_equal(ours, theirs), (pid, d)


@needs_gnubg_nn
def test_gnubg_at_one_ply_rolls_out_as_gnubg(gnubg_agent):
    """``gnubg:ply=1`` as the rollout agent: evaluations at 0-ply and the 1-ply plays' filter at 0-ply, as for
    ``gnubg`` (not a 1-ply filter, five times slower)."""
    from bgai.agents.gnubg import GnubgAgent
    from bgai.analysis.rollout import RolloutPolicy

    deep = GnubgAgent(1)
    policy = RolloutPolicy(deep, ply=1)
    assert policy.evaluator.capabilities.ply == 0 and policy.searcher.base.capabilities.ply == 0
    b = decode_position_id(CONTACT)
    a = rollout_position(deep, b, trials=8, truncate=4, seed=2, ply=1)
    g = rollout_position(gnubg_agent, b, trials=8, truncate=4, seed=2, ply=1)
    np.testing.assert_array_equal(a.probabilities, g.probabilities)


# ------------------------------------------------------------------------------------------- the engine


def test_truncate_one_ply_equals_the_agents_one_ply(net):
    """The same identity for a bgai network: truncated at one ply, with variance reduction (any trials) or with 36
    stratified trials without it, the rollout is the network's 1-ply evaluation (NeuralAgent ply=1)."""
    one = make_agent(MODEL + ":ply=1")
    b = decode_position_id(CONTACT)
    expected = one.probabilities(b[None])[0]
    vr = rollout_position(net, b, trials=20, truncate=1, seed=1)
    plain = rollout_position(net, b, trials=36, truncate=1, seed=1, variance_reduction=False)
    # the network computes in float32 (batches of different sizes round differently)
    assert np.abs(vr.probabilities - expected).max() < 1e-6 and vr.equity_se < 1e-6
    assert np.abs(plain.probabilities - expected).max() < 1e-6
    assert plain.equity_se > 0.01  # the individual trials do differ


def test_same_seed_same_result_other_seed_other_result(net):
    b = decode_position_id(RACE)
    r1 = rollout_position(net, b, trials=72, seed=11)
    r2 = rollout_position(net, b, trials=72, seed=11)
    r3 = rollout_position(net, b, trials=72, seed=12)
    assert np.array_equal(r1.probabilities, r2.probabilities) and r1.equity == r2.equity
    assert r1.equity_se == r2.equity_se
    assert r1.equity != r3.equity


def test_workers_give_identical_results():
    """Work units depend on the trials only: 1 or 2 worker processes (agent rebuilt from its spec) give the very
    same numbers, with and without variance reduction."""
    agent = make_agent(MODEL)
    b = decode_position_id(CRASHED)
    for vr in (True, False):
        kw = {"trials": 72, "seed": 4, "chunk_trials": 36, "variance_reduction": vr, "truncate": 12 if vr else None}
        one = rollout_position(agent, b, workers=1, **kw)
        two = rollout_position(agent, b, workers=2, **kw)
        assert two.workers == 2
        assert np.array_equal(one.probabilities, two.probabilities)
        assert np.array_equal(one.std_errors, two.std_errors)
        assert one.equity == two.equity


@pytest.fixture(scope="module")
def vr_pairs(net):
    """Rollouts of the same trials with and without variance reduction on four positions of different kinds."""
    out = {}
    for pid in (CONTACT, CRASHED, RACE, BEAROFF):
        b = decode_position_id(pid)
        out[pid] = (rollout_position(net, b, trials=72, seed=2, variance_reduction=False),
                    rollout_position(net, b, trials=72, seed=2, variance_reduction=True))
    return out


def test_variance_reduction_cuts_the_standard_error(vr_pairs):
    factors = {pid: plain.equity_se / vr.equity_se for pid, (plain, vr) in vr_pairs.items()}
    print("equity SE without / with variance reduction:", {k: round(v, 2) for k, v in factors.items()})
    assert min(factors.values()) >= 2.0, factors


def test_variance_reduction_is_unbiased(vr_pairs):
    for pid, (plain, vr) in vr_pairs.items():
        # a plain trial's outcomes are 0 or 1: binomial errors (from the sharper estimate), also for outcomes that
        # happened in no trial (whose sample SE is 0)
        p = np.clip(vr.probabilities, 0, 1)
        se = np.hypot(np.sqrt(p * (1 - p) / plain.trials), vr.std_errors)
        z = np.abs(plain.probabilities - vr.probabilities) / np.where(se > 0, se, 1)
        assert z.max() < 3.5, (pid, plain.probabilities, vr.probabilities)
        assert abs(plain.equity - vr.equity) < 3 * np.hypot(plain.equity_se, vr.equity_se), pid


def test_result_fields_and_json(net):
    r = rollout_position(net, decode_position_id(BEAROFF), trials=40, seed=0, truncate=6)
    assert r.trials == 40 and not r.partial and r.workers == 1
    assert r.equity == pytest.approx(float(cubeless_equity(r.probabilities)), abs=1e-12)
    assert r.settings.truncate == 6 and r.settings.chunk_trials == default_chunk(1, True)
    d = json.loads(json.dumps(r.to_dict()))
    assert set(d["probabilities"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
    assert d["settings"]["variance_reduction"] is True and d["trials"] == 40


def test_plays_are_rolled_out_on_the_same_dice(net):
    """Each candidate's result is the rollout of the position after it (opponent on roll, same seed: the same dice),
    seen by the mover; the ranking is by equity; candidates=K keeps the K best at 0-ply."""
    b = starting_board()
    res = rollout_plays(net, b, (3, 1), candidates=3, trials=36, seed=8, variance_reduction=False)
    assert len(res.plays) == 3 and res.trials == 36 and res.dice == (3, 1)
    eqs = [p.result.equity for p in res.plays]
    assert eqs == sorted(eqs, reverse=True)
    assert res.plays[0].difference == 0.0 and all(p.difference <= 0 for p in res.plays)
    priors = sorted((p.prior_equity for p in res.plays), reverse=True)
    all_plays = rollout_plays(net, b, (3, 1), trials=1, seed=8, variance_reduction=False)
    assert priors == sorted((p.prior_equity for p in all_plays.plays), reverse=True)[:3]
    for p in res.plays:
        alone = rollout_position(net, flip(p.afterstate), trials=36, seed=8, variance_reduction=False,
                                 chunk_trials=36)
        assert np.allclose(swap_perspective(alone.probabilities), p.result.probabilities, atol=1e-12)
        assert p.difference == pytest.approx(p.result.equity - res.plays[0].result.equity, abs=1e-12)
    assert 0 < res.plays[1].difference_se < np.hypot(res.plays[0].result.equity_se, res.plays[1].result.equity_se)


def test_keyboard_interrupt_returns_the_partial_result(net):
    calls = []

    def progress(done, total, equity, se):
        calls.append((done, total))
        raise KeyboardInterrupt

    r = rollout_position(net, decode_position_id(BEAROFF), trials=108, chunk_trials=36, seed=1,
                         variance_reduction=False, progress=progress)
    assert r.partial and r.trials == 36 and calls == [(36, 108)]
    assert np.isfinite(r.equity) and r.to_dict()["partial"] is True


def test_one_ply_rollouts(net, gnubg_agent):
    for agent in (net, gnubg_agent):
        r = rollout_position(agent, decode_position_id(BEAROFF), trials=12, ply=1, seed=3, truncate=4)
        p = r.probabilities
        assert 0 <= p[2] <= p[1] <= p[0] <= 1 and np.isfinite(r.equity_se) and r.settings.ply == 1
    with pytest.raises(AgentSpecError, match="no 1-ply search"):
        RolloutPolicy(make_agent("pubeval"), ply=1)


def test_agents_without_probabilities_roll_out_plainly():
    pub = make_agent("pubeval")
    r = rollout_position(pub, decode_position_id(BEAROFF), trials=36, variance_reduction=False)
    assert r.trials == 36 and 0 < r.probabilities[0] < 1
    with pytest.raises(AgentSpecError, match="no probabilities"):
        rollout_position(pub, decode_position_id(BEAROFF), trials=36)
    with pytest.raises(AgentSpecError, match="no probabilities"):
        rollout_position(pub, decode_position_id(BEAROFF), trials=36, variance_reduction=False, truncate=3)


@pytest.mark.parametrize("kw, msg", [
    ({"trials": 0}, "trials must be"), ({"truncate": 0}, "truncate must be"), ({"seed": -1}, "seed must be"),
    ({"ply": 2}, "ply must be 0 or 1"), ({"workers": 0}, "workers must be"),
])
def test_bad_settings(net, kw, msg):
    with pytest.raises(BgaiError, match=msg):
        rollout_position(net, starting_board(), **kw)


def test_bad_positions(net):
    over = starting_board()
    over[1] = 0
    with pytest.raises(InvalidPositionError, match="game is over"):
        rollout_position(net, over)
    with pytest.raises(BgaiError, match="dice"):
        rollout_plays(net, starting_board(), (0, 3))
    with pytest.raises(BgaiError, match="candidates"):
        rollout_plays(net, starting_board(), (3, 1), candidates=0)


# ------------------------------------------------------------------------------------------------ the CLI


def test_cli_position_and_cube(capsys, gnubg_agent):
    rc = cli_main(["rollout", RACE, "--agent", "gnubg", "--trials", "36", "--no-vr", "--cube"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Rollout of Position ID " + RACE in out and "std err" in out and "36 trials" in out
    assert "Proper cube action:" in out


def test_cli_plays_json(tmp_path, capsys):
    path = tmp_path / "r.json"
    rc = cli_main(["rollout", BEAROFF, "21", "--agent", MODEL, "--trials", "36", "--candidates", "3", "--truncate",
                   "4", "--json", str(path)])
    out = capsys.readouterr().out
    assert rc == 0 and "  1. " in out
    data = json.loads(path.read_text())
    assert data["kind"] == "plays" and len(data["plays"]) == 3 and data["trials"] == 36
    assert data["settings"]["truncate"] == 4 and data["plays"][0]["difference"] == 0.0
    # --cube: ranked by the mover's cubeful equity (money, centred cube) computed from the rolled-out probabilities
    rc = cli_main(["rollout", BEAROFF, "21", "--agent", MODEL, "--trials", "36", "--candidates", "3", "--truncate",
                   "4", "--cube", "--json", str(path)])
    assert rc == 0 and "ranked by cubeful equity" in capsys.readouterr().out
    cube = json.loads(path.read_text())
    cubeful = [p["cubeful_equity"] for p in cube["plays"]]
    assert cubeful == sorted(cubeful, reverse=True)
    assert {p["play"] for p in cube["plays"]} == {p["play"] for p in data["plays"]}


@pytest.mark.parametrize("argv, msg", [
    (["rollout", "nonsense!"], "Position ID"),
    (["rollout", RACE, "--candidates", "3", "--agent", "pubeval"], "--candidates needs DICE"),
    (["rollout", RACE, "--agent", "pubeval", "--trials", "36"], "no probabilities"),
    (["rollout", RACE, "--agent", "pubeval", "--json", "/nonexistent-dir/x.json"], "does not exist"),
    (["rollout", RACE, "77", "--agent", "pubeval"], "bad dice"),
])
def test_cli_errors_are_one_line(capsys, argv, msg):
    rc = cli_main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and err.count("\n") == 1, err
