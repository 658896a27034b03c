"""The exact bear-off database in play: bundles route the ``bearoff`` class to it (agents at every ply, the agent
option ``bearoff=db``, ``bgai bearoff attach``), exports and the numpy bot use it, rollouts end trials there, and
old model files load unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from bgai.agents.neural import NeuralAgent
from bgai.agents.numpy_bot import NumpyAgent
from bgai.agents.registry import make_agent, parse_spec
from bgai.analysis.rollout import rollout_position
from bgai.cli import main
from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity, finished_probabilities
from bgai.core.movegen import afterstates
from bgai.core.position_id import decode_position_id
from bgai.errors import AgentSpecError, CheckpointError
from bgai.model.bearoff import bearoff_probabilities, is_bearoff
from bgai.model.bundle import (
    BundleNet,
    ModelBundle,
    bundle_file,
    load_bundle,
    read_checkpoint,
    save_checkpoint,
)
from bgai.model.classes import CLASS_BEAROFF, classify
from bgai.model.export import export_bundle
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet
from bgai.model.routing import DatabaseEntry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TD128 = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")
RACE = "zjlnAIA5Z84AAA"  # a race of 8 and 9 checkers, a few plies from bear-offs
BEAROFF = "Z14AANh2DQAAAA"


def random_bearoffs(n: int, seed: int) -> np.ndarray:
    """``(n, 2, 25)`` bear-off positions: each side 1..15 checkers spread at random over its six home points."""
    rng = np.random.default_rng(seed)
    b = np.zeros((n, 2, 25), dtype=np.int8)
    for side in range(2):
        on = rng.integers(1, 16, size=n)
        for i in range(n):
            b[i, side, :6] = rng.multinomial(on[i], np.full(6, 1 / 6))
    return b


def game_positions(n: int, seed: int) -> np.ndarray:
    """Positions of random-play games from the start (contact, crashed, races and bear-offs)."""
    rng = np.random.default_rng(seed)
    cur = np.repeat(starting_board()[None], 64, axis=0)
    pool = []
    while sum(len(p) for p in pool) < n:
        after, src = afterstates(cur, rng.integers(1, 7, size=(len(cur), 2)))
        counts = np.bincount(src, minlength=len(cur))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        nxt = flip(after[starts + (rng.random(len(cur)) * counts).astype(np.int64)])
        nxt = nxt[(nxt.sum(axis=2) > 0).all(axis=1)]
        if len(nxt) < 8:
            nxt = np.repeat(starting_board()[None], 64, axis=0)
        pool.append(nxt)
        cur = nxt
    return np.concatenate(pool)[:n]


def db_values(boards: np.ndarray) -> np.ndarray:
    """``(N, 5)`` exact values of bear-offs (side on roll): finished games exactly, the others from the database."""
    over, exact = finished_probabilities(boards)
    p = np.empty((len(boards), 5))
    p[over] = exact
    p[~over] = bearoff_probabilities(boards[~over])
    return p


@pytest.fixture(scope="module")
def plain():
    bundle, _ = load_bundle(TD128)
    return bundle


@pytest.fixture(scope="module")
def with_db(plain):
    return plain.with_bearoff_database()


@pytest.fixture(scope="module")
def mixed():
    boards = np.concatenate([game_positions(3000, 1), random_bearoffs(500, 2)])
    cls = classify(boards)
    assert {int(c) for c in np.unique(cls)} >= {1, 2, 3, 4}  # every class a net or the database takes
    return boards


def test_shipped_checkpoint_loads_unchanged(plain):
    raw = torch.load(TD128, map_location="cpu", weights_only=True)
    assert raw["format_version"] == 1 and "databases" not in raw
    assert plain.databases == () and not plain.exact_bearoff and plain.names() == ["all"]
    assert plain.only.classes == ("all",)
    assert not make_agent(TD128).exact_bearoff
    # without the option the net values bear-offs: its values are not the database's
    b = random_bearoffs(200, 3)
    assert np.abs(plain.probabilities(b) - bearoff_probabilities(b)).max() > 0.01


def test_bundle_with_database_routes_bearoffs_to_it_and_the_rest_to_the_net(plain, with_db, mixed):
    assert with_db.exact_bearoff and with_db.only.classes == ("race", "crashed", "contact")
    assert with_db.databases == (DatabaseEntry("bearoff-os", ("bearoff",), 1),)
    home = is_bearoff(mixed)
    assert home.sum() >= 500 and (~home).sum() >= 2000
    np.testing.assert_array_equal(home, classify(mixed) == CLASS_BEAROFF)
    got = with_db.probabilities(mixed)
    np.testing.assert_array_equal(got[home], bearoff_probabilities(mixed[home]).astype(np.float64))
    np.testing.assert_array_equal(got[~home], plain.probabilities(mixed[~home]))
    assert (with_db.net_index(mixed)[home] == -2).all() and (with_db.net_index(mixed)[~home] == 0).all()
    # back to the net
    back = with_db.without_databases()
    assert back.only.classes == ("all",) and not back.exact_bearoff
    np.testing.assert_array_equal(back.probabilities(mixed), plain.probabilities(mixed))


def test_neural_agent_at_0_ply_plays_the_database_best_play(with_db):
    agent = NeuralAgent(with_db)
    boards = random_bearoffs(400, 4)
    rng = np.random.default_rng(5)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    chosen = agent.choose(boards, dice, rng)
    after, src = afterstates(boards, dice)
    mover_eq = -cubeless_equity(db_values(flip(after)))
    best = np.full(len(boards), -np.inf)
    np.maximum.at(best, src, mover_eq)
    chosen_eq = np.empty(len(boards))
    for i in range(len(boards)):
        rows = np.flatnonzero(src == i)
        hit = [r for r in rows if np.array_equal(after[r], chosen[i])]
        assert hit, i
        chosen_eq[i] = mover_eq[hit[0]]
    np.testing.assert_allclose(chosen_eq, best, atol=1e-6)
    # the net alone picks another play (worse by the database) in some of these positions
    net_chosen = NeuralAgent(with_db.without_databases()).choose(boards, dice, rng)
    assert (~np.all(net_chosen.reshape(len(boards), -1) == chosen.reshape(len(boards), -1), axis=1)).sum() >= 5


def test_one_ply_search_uses_the_database_at_its_leaves(with_db):
    """At 1-ply the value of a bear-off is the average over the 21 rolls of the database's value after the reply
    the database's 0-ply prefers."""
    b = random_bearoffs(6, 6)
    b = b[(b.sum(axis=2) >= 3).all(axis=1)]
    got = NeuralAgent(with_db, ply=1).probabilities(b)
    rolls = np.array([(i, j) for i in range(1, 7) for j in range(i, 7)])
    weights = np.array([1 if i == j else 2 for i, j in rolls]) / 36.0
    for k in range(len(b)):
        want = np.zeros(5)
        for (d1, d2), w in zip(rolls, weights):
            after, _ = afterstates(b[k][None], np.array([[d1, d2]]))
            p = db_values(flip(after))
            r = int(np.argmax(-cubeless_equity(p)))
            q = p[r]
            want += w * np.array([1 - q[0], q[3], q[4], q[1], q[2]])
        np.testing.assert_allclose(got[k], want, atol=1e-6)


def test_agent_spec_option(tmp_path):
    assert parse_spec("m.pt:bearoff=db,ply=1") == ("m.pt", {"bearoff": "db", "ply": 1})
    with pytest.raises(AgentSpecError, match="bad value 'yes' for option 'bearoff'"):
        parse_spec("m.pt:bearoff=yes")
    a = make_agent(TD128 + ":bearoff=db,ply=1")
    assert a.exact_bearoff and a.ply == 1 and a.at_ply(0).exact_bearoff and a.spec.endswith(":bearoff=db,ply=1")
    b = decode_position_id(BEAROFF)
    np.testing.assert_array_equal(a.at_ply(0).probabilities(b), bearoff_probabilities(b).astype(np.float64))


def test_attach_command_writes_a_bundle_with_the_database_and_it_round_trips(tmp_path, capsys, with_db, mixed):
    out = tmp_path / "td128-db.pt"
    assert main(["bearoff", "attach", TD128, "--out", str(out)]) == 0
    assert "bearoff: database 'bearoff-os'" in capsys.readouterr().out
    raw = read_checkpoint(out)
    assert raw["databases"] == [{"kind": "bearoff-os", "classes": ["bearoff"], "version": 1}]
    assert raw["games_trained"] == read_checkpoint(TD128)["games_trained"] and "trainer" not in raw
    loaded = make_agent(str(out))
    assert loaded.exact_bearoff
    np.testing.assert_array_equal(loaded.probabilities(mixed), with_db.probabilities(mixed))
    # bearoff=net on a file with the database: the race net again, the same as the shipped model
    np.testing.assert_array_equal(make_agent(f"{out}:bearoff=net").probabilities(mixed),
                                  make_agent(TD128).probabilities(mixed))
    back = tmp_path / "back.pt"
    assert main(["bearoff", "attach", str(out), "--out", str(back), "--detach"]) == 0
    assert "databases" not in read_checkpoint(back) and read_checkpoint(back)["nets"][0]["classes"] == ["all"]
    assert main(["bearoff", "attach", str(tmp_path / "none.pt"), "--out", str(back)]) == 2
    before = out.read_bytes()
    assert main(["bearoff", "attach", str(out), "--out", str(out)]) == 2  # never over the model itself (QA)
    assert out.read_bytes() == before
    assert "does not exist" in capsys.readouterr().err


def test_a_bundle_without_a_database_writes_the_same_file_layout_as_before(plain):
    ckpt = bundle_file(plain)
    assert "databases" not in ckpt and ckpt["nets"][0]["classes"] == ["all"]


def test_a_bearoff_only_net_is_dropped_and_bad_database_entries_are_refused(tmp_path):
    enc = get_encoder("tesauro198")
    nets = [ValueNet(NetSpec(enc.size, (4,), "sigmoid"), torch.Generator().manual_seed(k)) for k in range(2)]
    bundle = ModelBundle([BundleNet("main", ("contact", "crashed", "race"), nets[0], enc),
                          BundleNet("home", ("bearoff",), nets[1], enc)])
    db = bundle.with_bearoff_database()
    assert db.names() == ["main"] and db.exact_bearoff
    assert db.without_databases().only.classes == ("all",)
    with pytest.raises(CheckpointError, match="given to two nets"):
        ModelBundle([BundleNet("main", ("all",), nets[0], enc)], databases=[DatabaseEntry()])
    ckpt = bundle_file(db)
    for entry, msg in (({"kind": "bearoff-ts"}, "unknown database kind"),
                       ({"kind": "bearoff-os", "classes": ["race"]}, "can value the classes bearoff"),
                       ({"kind": "bearoff-os", "version": 9}, "version 9")):
        ckpt["databases"] = [entry]
        save_checkpoint(ckpt, tmp_path / "bad.pt")
        with pytest.raises(CheckpointError, match=msg):
            load_bundle(tmp_path / "bad.pt")


def test_export_records_the_database_and_the_numpy_bot_uses_it(tmp_path, with_db, mixed):
    written = export_bundle(with_db, tmp_path / "m.onnx")
    meta = json.loads(str(np.load(written["npz"])["meta"]))
    rule = json.loads(meta["class_rule"])
    assert rule["databases"] == [{"kind": "bearoff-os", "classes": ["bearoff"], "version": 1}]
    assert rule["nets"][0]["classes"] == ["race", "crashed", "contact"]
    golden = json.load(open(written["golden"]))
    assert golden["net"][-1] == -2 and golden["class"][-1] == "bearoff" and golden["features"][-1] == []
    torch_agent = NeuralAgent(with_db)
    bot = NumpyAgent.load(written["npz"])
    assert bot.exact_bearoff
    home = is_bearoff(mixed)
    p_np, p_t = bot.probabilities(mixed), torch_agent.probabilities(mixed)
    np.testing.assert_array_equal(p_np[home], p_t[home])
    assert np.abs(p_np - p_t).max() < 1e-5
    rng = np.random.default_rng(7)
    sel = np.flatnonzero(home)[:300]
    dice = rng.integers(1, 7, size=(len(sel), 2))
    np.testing.assert_array_equal(bot.choose(mixed[sel], dice, rng), torch_agent.choose(mixed[sel], dice, rng))
    # an export without the database gets it with bearoff=db (the spec option works for exports too)
    plain_files = export_bundle(with_db.without_databases(), tmp_path / "p.npz")
    bot2 = make_agent(plain_files["npz"] + ":bearoff=db")
    assert bot2.exact_bearoff and not make_agent(plain_files["npz"]).exact_bearoff
    np.testing.assert_array_equal(bot2.probabilities(mixed), p_np)
    np.testing.assert_array_equal(make_agent(written["npz"] + ":bearoff=net").probabilities(mixed[~home]),
                                  p_np[~home])


def test_numpy_bot_with_the_database_runs_without_torch(tmp_path, with_db):
    written = export_bundle(with_db, tmp_path / "m.npz")
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'onnx', 'onnxruntime'):
            raise ImportError('blocked: ' + name)
        return None
sys.meta_path.insert(0, Block())
import numpy as np
from bgai.agents.numpy_bot import NumpyAgent
from bgai.core.position_id import decode_position_id
bot = NumpyAgent.load({written['npz']!r})
p = bot.probabilities(decode_position_id({BEAROFF!r})[None])[0]
print('OK', bot.exact_bearoff, ' '.join(f'{{x:.9f}}' for x in p))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    want = bearoff_probabilities(decode_position_id(BEAROFF))[0]
    assert r.stdout.split()[:2] == ["OK", "True"]
    np.testing.assert_allclose([float(x) for x in r.stdout.split()[2:]], want, atol=1e-9)


def test_rollout_of_a_bearoff_is_the_database_value_with_no_error():
    agent = make_agent(TD128 + ":bearoff=db")
    b = decode_position_id(BEAROFF)
    for vr in (True, False):
        r = rollout_position(agent, b, trials=72, seed=3, variance_reduction=vr)
        np.testing.assert_array_equal(r.probabilities, bearoff_probabilities(b)[0].astype(np.float64))
        assert r.trials == 72 and (r.std_errors == 0).all() and r.equity_se == 0
        assert r.settings.bearoff_database and r.to_dict()["settings"]["bearoff_database"] is True


def test_rollout_of_a_race_ends_trials_at_bearoffs_and_agrees_with_playing_them_out():
    board = decode_position_id(RACE)
    assert not is_bearoff(board)[0]
    db = rollout_position(make_agent(TD128 + ":bearoff=db"), board, trials=144, seed=1)
    net = rollout_position(make_agent(TD128), board, trials=144, seed=1)
    assert db.settings.bearoff_database and not net.settings.bearoff_database
    z = (db.equity - net.equity) / np.hypot(db.equity_se, net.equity_se)
    assert abs(z) < 3, (db.equity, net.equity, z)
    again = rollout_position(make_agent(TD128 + ":bearoff=db"), board, trials=144, seed=1)
    assert again.equity == db.equity
    # at 1-ply too, a bear-off root is the database's value
    home = random_bearoffs(1, 8)[0]
    r = rollout_position(make_agent(TD128 + ":bearoff=db"), home, trials=36, seed=0, ply=1)
    np.testing.assert_array_equal(r.probabilities, bearoff_probabilities(home)[0].astype(np.float64))


def test_rollout_with_the_database_is_the_same_in_worker_processes():
    """Workers rebuild the agent from its spec (``:bearoff=db`` included): the same trials end at bear-offs."""
    agent = make_agent(TD128 + ":bearoff=db")
    board = decode_position_id(RACE)
    one = rollout_position(agent, board, trials=72, seed=4, chunk_trials=36, variance_reduction=False)
    two = rollout_position(agent, board, trials=72, seed=4, chunk_trials=36, variance_reduction=False, workers=2)
    assert two.workers == 2 and two.settings.bearoff_database
    np.testing.assert_array_equal(one.probabilities, two.probabilities)
