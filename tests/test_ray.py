"""The Ray backend of run_units (bgai.util.ray_backend): the same results as the local backend, bit for bit, on a
local Ray cluster started here; a worker killed mid-job loses nothing; Ctrl-C returns the finished units; a
checkpoint travels as bytes to a machine that lacks it."""

from __future__ import annotations

import json
import os
import shutil
import signal

import numpy as np
import pytest

from bgai.errors import BgaiError, CheckpointError
from bgai.evaluate.series import build_agents, evaluate, run_play_unit
from bgai.train.labels import LabelSettings, make_labels
from bgai.util import ray_backend
from bgai.util.parallel import run_units

MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")
TIMING = ("seconds", "games_per_s", "workers")

ray = pytest.importorskip("ray", reason="ray is not installed (the optional extra bgai[ray]: pip install 'bgai[ray]')")


@pytest.fixture(scope="module")
def cluster():
    term = signal.getsignal(signal.SIGTERM)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    signal.signal(signal.SIGTERM, term)  # ray.init sets its own; connect() keeps the old one the same way
    ray_backend.connect()  # registers the backend on the cluster just started
    yield
    ray.shutdown()


def _figures(report) -> dict:
    d = report.to_dict()
    return json.loads(json.dumps({k: v for k, v in d.items() if k not in TIMING}))


def test_eval_same_figures_on_ray_and_local(cluster):
    local = evaluate("pubeval", "racer", 200, 7, workers=1, chunk_games=20)
    on_ray = evaluate("pubeval", "racer", 200, 7, workers=2, chunk_games=20, backend="ray")
    assert on_ray.workers == 2 and not on_ray.partial
    assert _figures(on_ray) == _figures(local)
    assert local.games == 200 and -3 < local.ppg < 3


def _shards(folder):
    out = []
    for i in range(2):
        with np.load(os.path.join(folder, f"shard-{i:05d}.npz")) as z:
            out.append({k: z[k] for k in z.files if k != "meta"})
    return out


def test_labels_same_arrays_on_ray_and_local(cluster, tmp_path):
    settings = LabelSettings(model=MODEL, kind="ply1", seed=5, games_per_shard=3, keep=0.2)
    made_local = make_labels(str(tmp_path / "local"), settings, 2)
    made_ray = make_labels(str(tmp_path / "ray"), settings, 2, workers=2, backend="ray")
    assert made_local == [0, 1] and sorted(made_ray) == [0, 1]
    for a, b in zip(_shards(tmp_path / "local"), _shards(tmp_path / "ray")):
        assert a.keys() == b.keys() and len(a["boards"]) > 0
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    with open(tmp_path / "local" / "dataset.json") as f1, open(tmp_path / "ray" / "dataset.json") as f2:
        assert json.load(f1) == json.load(f2)


def _series_units(n: int, games: int):
    return [(11, u, n * games, games, True) for u in range(n)]


def test_killed_worker_loses_nothing(cluster):
    units = _series_units(12, 40)
    args = ("pubeval", "racer", False)
    calm = run_units(run_play_unit, units, workers=2, setup=build_agents, setup_args=args, backend="ray")
    seen, killed = [], []

    def on_result(i, res):
        seen.append(i)
        if not killed:  # after the first unit: kill worker 0's process while it holds units
            pid = ray_backend.actor_pid(ray_backend.LIVE_ACTORS[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    hit = run_units(run_play_unit, units, workers=2, setup=build_agents, setup_args=args, backend="ray",
                    on_result=on_result)
    assert killed and hit.complete and calm.complete
    assert sorted(seen) == list(range(len(units)))  # every unit taken once, none twice
    for i in range(len(units)):
        a, b = calm.results[i], hit.results[i]
        np.testing.assert_array_equal(a.points, b.points)
        np.testing.assert_array_equal(a.points_a, b.points_a)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_returns_the_finished_units(cluster, signum):
    units = _series_units(16, 40)

    sent = []

    def on_result(i, res):
        if not sent:  # Ctrl-C after the first unit, as a terminal sends it
            sent.append(i)
            os.kill(os.getpid(), signum)

    run = run_units(run_play_unit, units, workers=2, setup=build_agents, setup_args=("pubeval", "racer", False),
                    backend="ray", on_result=on_result)
    assert run.interrupted == signal.Signals(signum).name
    assert 1 <= len(run.results) < len(units)
    local = run_units(run_play_unit, [units[i] for i in sorted(run.results)], setup=build_agents,
                      setup_args=("pubeval", "racer", False))
    for k, i in enumerate(sorted(run.results)):
        np.testing.assert_array_equal(run.results[i].points, local.results[k].points)


def test_setup_error_is_raised_as_on_the_local_backend(cluster, tmp_path):
    bad = (str(tmp_path / "missing.pt"), "racer", False)
    with pytest.raises(CheckpointError):
        run_units(run_play_unit, _series_units(2, 2), workers=2, setup=build_agents, setup_args=bad)
    with pytest.raises(CheckpointError):
        run_units(run_play_unit, _series_units(2, 2), workers=2, setup=build_agents, setup_args=bad, backend="ray")


def test_checkpoint_travels_as_bytes_to_a_machine_without_it(tmp_path):
    path = tmp_path / "net.pt"
    shutil.copy(MODEL, path)
    shipped = ray_backend._ship((f"{path}:ply=1", "racer", LabelSettings(model=str(path)), 3))
    os.remove(path)  # as on another machine
    spec, other, settings, n = ray_backend._land(shipped)
    assert other == "racer" and n == 3 and spec.endswith("net.pt:ply=1") and spec != f"{path}:ply=1"
    with open(spec[:-len(":ply=1")], "rb") as f, open(MODEL, "rb") as g:
        assert f.read() == g.read()
    assert settings.model == spec[:-len(":ply=1")]


def _rollout_figures(path) -> dict:
    with open(path) as f:
        d = json.load(f)
    d.pop("seconds", None)
    d.pop("workers", None)
    for section in d.values():
        if isinstance(section, dict):
            section.pop("seconds", None)
            section.pop("workers", None)
    return d


def test_rollout_same_figures_locally_and_on_ray(cluster, tmp_path, capsys):
    """``bgai rollout --ray auto``: the same JSON figures as local rollouts with 1 and 2 workers, bit for bit
    (position with variance reduction and truncation, and the plays of a roll)."""
    from bgai.cli import main

    for name, extra in (("pos", ["--truncate", "10"]), ("plays", ["31", "--candidates", "2", "--no-vr"])):
        base = ["rollout", "fw8AAOHNjgEBCA", *extra, "--agent", MODEL, "--trials", "72", "--seed", "4"]
        figures = []
        for run in (["--workers", "1"], ["--workers", "2"], ["--ray", "auto", "--workers", "2"]):
            out = tmp_path / f"{name}{len(figures)}.json"
            assert main(base + run + ["--json", str(out)]) == 0
            figures.append(_rollout_figures(out))
        assert figures[0] == figures[1] == figures[2], name
        assert figures[0]["trials"] == 72 and not figures[0]["partial"]
    assert "Ray cluster auto" in capsys.readouterr().err


def test_rollout_on_ray_keeps_partial_results(cluster):
    """Ctrl-C during a rollout on Ray: the finished units are reported as a partial result."""
    from bgai.agents.registry import make_agent
    from bgai.analysis.rollout import rollout_position
    from bgai.core.position_id import decode_position_id

    sent = []

    def progress(done, total, equity, se):
        if not sent:
            sent.append(done)
            os.kill(os.getpid(), signal.SIGINT)

    agent = make_agent(MODEL)
    b = decode_position_id("fw8AAOHNjgEBCA")
    r = rollout_position(agent, b, trials=360, chunk_trials=36, seed=2, workers=2, backend="ray",
                         variance_reduction=False, progress=progress)
    assert r.partial and 36 <= r.trials < 360 and r.trials % 36 == 0 and np.isfinite(r.equity)


def test_eval_saved_games_same_files_on_ray(cluster, tmp_path):
    """``bgai eval --save-games`` on Ray writes the very files of a local run (units return their games' text,
    the driver writes them)."""
    from bgai.evaluate.cubeful import evaluate_cubeful
    from bgai.evaluate.savegames import GameSaver
    from bgai.game.match import MatchRules

    def files(folder):
        return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}

    for rules, count in ((None, 40), (MatchRules.match(3), 6)):
        local = GameSaver(tmp_path / f"l{count}", ("mat", "sgf"))
        on_ray = GameSaver(tmp_path / f"r{count}", ("mat", "sgf"))
        if rules is None:
            evaluate("pubeval", "racer", count, 3, chunk_games=20, save=local)
            evaluate("pubeval", "racer", count, 3, chunk_games=20, save=on_ray, workers=2, backend="ray")
        else:
            evaluate_cubeful(MODEL, "pubeval", count, 3, rules=rules, chunk=2, save=local)
            evaluate_cubeful(MODEL, "pubeval", count, 3, rules=rules, chunk=2, save=on_ray, workers=2, backend="ray")
        written = files(tmp_path / f"l{count}")
        assert written == files(tmp_path / f"r{count}") and len(written) >= 4



def test_auto_never_joins_another_process_cluster(cluster, monkeypatch):
    """``--ray auto`` joined any Ray cluster running on the machine (Ray's own 'auto' finds them by their
    processes), e.g. a test's private cluster that stops when the test ends: its actors died under the next run
    ("worker died").  Now 'auto' joins RAY_ADDRESS or the cluster ``ray start`` recorded, else starts its own."""
    from ray._private.services import find_gcs_addresses

    gcs = ray.get_runtime_context().gcs_address
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert gcs in find_gcs_addresses()  # what Ray's 'auto' would have joined
    assert ray_backend.auto_address() is None
    monkeypatch.setenv("RAY_ADDRESS", gcs)
    assert ray_backend.auto_address() == gcs  # a real head node passes the gRPC check of check_address
    monkeypatch.setenv("RAY_ADDRESS", "nonsense:1")
    with pytest.raises(BgaiError, match="cannot join the Ray cluster at 'nonsense:1'"):
        ray_backend.auto_address()


def test_progress_bar_and_stderr_same_as_locally(cluster, tmp_path):
    """``bgai eval`` prints the same progress bar and lines on stderr with ``--ray auto`` as locally, plus one line
    naming the cluster: nothing of Ray's (its token note, its warning about actors with constructor arguments in
    the object store, which once broke the bar)."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "RAY_ADDRESS": ray.get_runtime_context().gcs_address}  # 'auto' joins the test's cluster
    cmd = [sys.executable, "-m", "bgai", "eval", "pubeval", "racer", "--games", "80", "--seed", "3", "--workers", "2"]

    def stderr_lines(extra: list[str]) -> list[str]:
        out = subprocess.run(cmd + extra, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        lines = [line.split("|")[0].strip() for line in out.stderr.replace("\r", "\n").splitlines() if line.strip()]
        # tqdm may redraw an unchanged bar (e.g. 100% on update and again on close), depending on timing: one
        # line per distinct consecutive state
        return [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]

    local = stderr_lines([])
    on_ray = stderr_lines(["--ray", "auto"])
    assert on_ray[0] == f"bgai eval: Ray cluster auto ({env['RAY_ADDRESS']}): 2 CPU(s); 2 worker(s)"
    assert on_ray[1:] == local, on_ray
    assert local[-1] == "pubeval vs racer: 100%" and local[0].startswith("bgai: note: --workers 2")
