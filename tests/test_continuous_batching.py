"""Continuous batching (bgai.game.play.play's ``groups``, bgai.evaluate.series.play_units): several work units
played in one batch, each starting when the batch runs low, give every unit exactly the games it plays alone,
for deterministic agents (merged agent calls) and for agents that draw from their rng (calls per unit); forked
and spawned workers give the same series."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgai.agents.random import RandomAgent
from bgai.agents.registry import make_agent
from bgai.evaluate.series import batch_width, play_unit, play_units, unit_groups
from bgai.game.match import MatchRules
from bgai.game.play import DiceStreams, dice_rng, play
from bgai.game.policies import CubePolicy, NeverDoubleAlwaysTake
from bgai.util.parallel import start_method

FIELDS = ("winner", "points", "plies", "a_seat")


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


@pytest.mark.parametrize(
    "a, b, games, chunk, duplicate",
    [("pubeval", "racer", 240, 40, True), ("random", "pubeval", 160, 40, True), ("blocker", "random", 121, 30, False)],
)
def test_units_played_together_are_the_units_played_alone(a, b, games, chunk, duplicate):
    agents = (make_agent(a), make_agent(b))
    units = list(range(-(-games // chunk)))
    alone = [play_unit(agents, 9, u, games, chunk, duplicate) for u in units]
    together = play_units(agents, 9, units, games, chunk, duplicate)
    assert len(together) == len(alone) and all(_same(x, y) for x, y in zip(alone, together))
    assert sum(len(r.points) for r in together) == games
    assert not any(_same(alone[0], r) for r in alone[1:])  # the units differ: the comparison can fail


class _DoubleAndPass(CubePolicy):
    """Doubles at once; passes every double."""

    def offer(self, boards, states):
        return np.ones(len(states), dtype=bool)

    def accept(self, boards, states):
        return np.zeros(len(states), dtype=bool)


@pytest.mark.parametrize("policy", [NeverDoubleAlwaysTake, _DoubleAndPass])
def test_a_match_group_starting_later_plays_its_dice_in_the_same_order(policy):
    """Matches (several games per slot; with passes, games that end before any roll after the opening roll) in
    two groups, the second started when fewer than 3 slots play: each group's units as when played alone (the
    dice stream's first block is drawn right after the first opening roll, as before)."""
    pub = make_agent("pubeval")
    rules = MatchRules.match(3)
    pol = (policy(), policy())
    both = play((pub, pub), [dice_rng(4, g) for g in range(8)], [np.random.default_rng(0), np.random.default_rng(4)],
                rules=rules, a_seat=np.arange(8) % 2, groups=[4, 4], width=3, policies=pol)
    alone = [play((pub, pub), [dice_rng(4, g) for g in range(k, k + 4)], np.random.default_rng(k), rules=rules,
                  a_seat=np.arange(4) % 2, policies=pol) for k in (0, 4)]
    assert np.array_equal(both.unit_score, np.concatenate([r.unit_score for r in alone]))
    assert np.array_equal(both.unit_games, np.concatenate([r.unit_games for r in alone]))
    with pytest.raises(ValueError, match="groups"):
        play((pub, pub), [dice_rng(4, g) for g in range(3)], [np.random.default_rng(0)], groups=[2, 2])


def test_deferred_dice_streams_draw_the_same_rolls():
    now = DiceStreams([dice_rng(2, g) for g in range(3)])
    later = DiceStreams([dice_rng(2, g) for g in range(3)], started=False)
    later.start([2, 0, 1])
    games = np.array([0, 1, 2] * 70)
    assert np.array_equal(now.roll(games), later.roll(games))


def test_agents_say_whether_their_plays_depend_on_the_batch():
    assert not RandomAgent.batch_invariant and make_agent("pubeval").batch_invariant
    assert make_agent("racer").batch_invariant and make_agent("blocker").batch_invariant
    assert batch_width((make_agent("pubeval"),) * 2, 500) == 1000 and batch_width((make_agent("racer"),) * 2, 1200) == 1200


def test_unit_groups_give_each_worker_one_share():
    assert [g.tolist() for g in unit_groups(6, 500, 2)] == [[0, 1, 2], [3, 4, 5]]
    assert [g.tolist() for g in unit_groups(2, 500, 1)] == [[0, 1]]
    assert len(unit_groups(100, 1000, 1)) == 25  # at most about GROUP_GAMES games a job: progress stays fine
    assert len(unit_groups(3, 500, 8)) == 3


def _unit(context, unit):
    return float(np.random.default_rng(unit).random()) + context


_FORK_CHECK = """
import sys
import bgai.util.parallel as parallel
from bgai.evaluate.series import evaluate
from tests.test_continuous_batching import _unit

assert "torch" not in sys.modules and parallel.start_method() == "fork", parallel.start_method()
runs = {}
for method in ("fork", "spawn"):
    parallel.start_method = lambda m=method: m
    runs[method] = parallel.run_units(_unit, list(range(4)), workers=2, setup=float, setup_args=(1,)).ordered()
    assert runs[method] == [_unit(1.0, u) for u in range(4)], (method, runs[method])
parallel.start_method = lambda: "fork"
keep = lambda r: {k: v for k, v in r.to_dict().items() if k not in ("seconds", "games_per_s", "workers")}
one = evaluate("pubeval", "pubeval", 1000, 3, workers=1)
two = evaluate("pubeval", "pubeval", 1000, 3, workers=2)
assert two.workers == 2 and keep(one) == keep(two), (keep(one), keep(two))
print("ok")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
def test_forked_and_spawned_workers_give_the_same_results():
    """In a fresh process without torch (workers are forked there): forked and spawned workers give the same
    units, and a series in two forked workers is the series in one process."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _FORK_CHECK], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_start_method_is_spawn_once_torch_is_loaded(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch", object()))
    assert start_method() == "spawn"


@pytest.mark.parametrize("spec", ["pubeval", "racer", "blocker"])
def test_batch_invariant_agents_score_a_play_the_same_in_any_batch(spec):
    """The promise of Agent.batch_invariant, bit for bit: scores of the plays of 600 positions from real games
    in one call and in calls of 1 and 13 positions."""
    from bgai.core.movegen import afterstates
    from bgai.game.play import play_games

    pub = make_agent("pubeval")
    res = play_games((pub, pub), [dice_rng(1, g) for g in range(12)], np.random.default_rng(0), record=True)
    boards = np.concatenate([r.positions() for r in res.records])[:600]
    dice = np.concatenate([r.dice for r in res.records])[:600]
    after, src = afterstates(boards, dice)
    agent = make_agent(spec)
    whole = agent.evaluate_plays(boards, after, src)
    assert agent.batch_invariant and len(np.unique(whole)) > 100
    for piece in (1, 13):
        parts = []
        for i in range(0, len(boards), piece):
            lo, hi = np.searchsorted(src, [i, i + piece])
            parts.append(agent.evaluate_plays(boards[i : i + piece], after[lo:hi], src[lo:hi] - i))
        assert np.array_equal(whole, np.concatenate(parts))
