"""`pip install bgai` without extras: numpy alone, and an exported model plays.

Builds bgai's wheel, installs it into a fresh virtual environment (numpy comes from the package index), exports
the shipped model with this environment's torch, then, in the fresh environment, checks that torch is not
there, plays the exported model with the numpy-only bot, lists legal plays with the CLI and gets the one-line
'needs an extra' error from a command that needs torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

PLAY = r"""
import importlib.util, json, sys
from bgai.agents.numpy_bot import NumpyAgent
from bgai.core.board import starting_board
agent = NumpyAgent.load(sys.argv[1])
play = agent.best_play(starting_board(), (3, 1))
print(json.dumps({
    "play": play.notation,
    "torch_installed": importlib.util.find_spec("torch") is not None,
    "torch_loaded": "torch" in sys.modules,
    "bgai_file": __import__("bgai").__file__,
}))
"""


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory):
    base = tmp_path_factory.mktemp("numpy_only")
    wheels = base / "wheels"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        capture_output=True, text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot build bgai's wheel here: {r.stderr.strip().splitlines()[-1:]}")
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    wheel = next(wheels.glob("bgai-*.whl"))
    # without PYTHONPATH: a checkout on it (with the bgai.egg-info that building the wheel leaves there) would
    # make pip take bgai for installed already and skip it
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, env=clean)
    if r.returncode != 0:
        pytest.skip(f"cannot install numpy into a fresh venv here (no package index?): {r.stderr.strip()[-300:]}")
    return base, py


def test_numpy_only_install_plays_an_exported_model(fresh_env):
    base, py = fresh_env
    from bgai.model.export import export_checkpoint

    out = base / "model.npz"
    export_checkpoint(ROOT / "checkpoints" / "bgai-td128.pt", out, fmt="npz")
    # the same play as the torch agent picks
    import numpy as np

    from bgai.agents.registry import make_agent
    from bgai.core.board import starting_board
    from bgai.core.movegen import legal_plays

    torch_agent = make_agent(str(ROOT / "checkpoints" / "bgai-td128.pt"))
    chosen = torch_agent.choose(starting_board()[None], np.array([[3, 1]]), np.random.default_rng(0))[0]
    expected = next(p.notation for p in legal_plays(starting_board(), (3, 1)) if np.array_equal(p.afterstate, chosen))

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed copy, not a checkout
    r = subprocess.run([str(py), "-c", PLAY, str(out)], capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["torch_installed"] is False and got["torch_loaded"] is False
    assert "site-packages" in got["bgai_file"]  # the installed copy, not the checkout
    assert got["play"] == expected == "8/5 6/5"

    bgai = base / "venv" / "bin" / "bgai"
    r = subprocess.run([str(bgai), "moves", "4HPwATDgc/ABMA", "31"], capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 0, r.stderr
    assert "8/5 6/5" in r.stdout and "16 legal plays" in r.stdout

    # evaluating an exported model needs neither torch nor tqdm (the progress bar is left out without it)
    r = subprocess.run([str(py), "-c", "import importlib.util; print(importlib.util.find_spec('tqdm') is None)"],
                       capture_output=True, text=True, cwd=base, env=env)
    assert r.stdout.strip() == "True", r.stderr
    r = subprocess.run([str(bgai), "eval", str(out), "pubeval", "--games", "8", "--seed", "3", "--json", "e.json"],
                       capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 0, r.stderr
    report = json.loads((base / "e.json").read_text())
    assert report["games"] == 8 and report["partial"] is False and -3 <= report["ppg"] <= 3
    assert "model_sha256" in json.dumps(report["agents"])

    r = subprocess.run([str(bgai), "train", "--config", "x.yaml"], capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]  # one line, no traceback
    assert "pip install 'bgai[train]'" in r.stderr


BEAROFF_PLAY = r"""
import json, sys
from bgai.agents.numpy_bot import NumpyAgent
from bgai.core.position_id import decode_position_id
agent = NumpyAgent.load(sys.argv[1])
board = decode_position_id("Z14AANh2DQAAAA")
print(json.dumps({"exact": agent.exact_bearoff, "probs": agent.probabilities(board[None])[0].tolist(),
                  "play": agent.best_play(board, (2, 1)).notation, "torch_loaded": "torch" in sys.modules}))
"""


def test_numpy_only_install_values_bearoffs_by_the_database(fresh_env):
    """An export of a bundle with the bear-off database: the numpy-only install builds the database (numpy alone,
    into its own data directory) and values bear-offs by it, as the torch agent does."""
    base, py = fresh_env
    from bgai.agents.neural import NeuralAgent
    from bgai.core.position_id import decode_position_id
    from bgai.model.bundle import load_bundle
    from bgai.model.export import export_bundle

    bundle = load_bundle(ROOT / "checkpoints" / "bgai-td128.pt")[0].with_bearoff_database()
    out = base / "db" / "model.npz"
    out.parent.mkdir()
    export_bundle(bundle, out)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["BGAI_DATA_DIR"] = str(base / "data")
    r = subprocess.run([str(py), "-c", BEAROFF_PLAY, str(out)], capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["exact"] is True and got["torch_loaded"] is False and got["play"] == "2/off 1/off"
    want = NeuralAgent(bundle).probabilities(decode_position_id("Z14AANh2DQAAAA"))[0]
    assert max(abs(a - b) for a, b in zip(got["probs"], want)) < 1e-12
    assert (base / "data" / "bearoff-os-6-15-v1.npz").exists()
