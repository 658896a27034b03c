"""``bgai train`` end to end on a tiny config: run, resume, errors."""

import json
import os

from bgai.cli import main
from bgai.model.bundle import read_checkpoint

TINY_YAML = """
encoding: tesauro198
hidden: [8]
games: 16
parallel_games: 8
eval_every: 8
eval_games: 20
checkpoint_every: 8
log_every: 8
seed: 3
"""


def test_train_resume_and_eval(tmp_path, capsys):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY_YAML)
    out = tmp_path / "run"
    assert main(["train", "--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "ppg against pubeval" in text
    evals = [json.loads(line) for line in (out / "evals.jsonl").read_text().splitlines()]
    assert evals and all(e["games"] == 20 and -3 <= e["ppg"] <= 3 for e in evals)
    ck = read_checkpoint(out / "last.pt")
    assert ck["games_trained"] >= 16 and ck["evals"][-1]["ppg"] == evals[-1]["ppg"]
    assert (out / "best.pt").exists() and "trainer" not in read_checkpoint(out / "best.pt")
    snaps = sorted(os.listdir(out / "snapshots"))
    assert len(snaps) == len(evals) and all(s.startswith("model-") for s in snaps)
    # extend the run by resuming with a new game target
    assert main(["train", "--out", str(out), "--resume", "--set", "games=24", "--no-progress"]) == 0
    assert read_checkpoint(out / "last.pt")["games_trained"] >= 24
    # the trained model plays through the agent registry
    from bgai.agents.registry import make_agent

    agent = make_agent(f"{out / 'best.pt'}:ply=0")
    assert agent.ply == 0


def test_cli_errors(tmp_path, capsys):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY_YAML)
    assert main(["train", "--config", str(cfg), "--set", "hiden=[4]", "--out", str(tmp_path / "x")]) == 2
    assert "'hiden'" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path / "none"), "--resume"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path / "x"), "--resume", "--config", str(cfg)]) == 2
    assert main(["train"]) == 2
    assert not os.path.exists(tmp_path / "x" / "last.pt")
