"""Generations of supervised training (bgai.train.generations, ``bgai generations``): a tiny two-generation job,
its records, resume after an interruption (finished steps untouched), a changed config refused (but for more
generations or another number of workers), config errors."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
from pathlib import Path

import pytest

from bgai.cli import main
from bgai.errors import ConfigError
from bgai.model.classes import CLASS_NAMES
from bgai.train.generations import (
    GenerationsConfig,
    GenerationsInterrupted,
    load_generations_config,
    read_records,
    run_generations,
)
from bgai.train.labels import load_labels

ROOT = Path(__file__).resolve().parents[1]
START = ROOT / "checkpoints" / "bgai-td128.pt"
BENCH = ROOT / "data" / "bench" / "strength-v1" / "round-0000.npz"

TINY = {
    "start": f"{START}:bearoff=db",
    "generations": 2,
    "seed": 3,
    "accept": "always",
    "labels": {"kind": "ply1", "shards": 2, "games_per_shard": 2, "keep": 0.3},
    "supervised": {"epochs": 2, "batch_size": 16, "lr": 3e-3, "lr_end": 1e-3, "val_fraction": 0.2, "patience": 0},
    "eval": {"games": 20, "seed": 5, "parent_games": 10, "bench": str(BENCH)},
}


def _mtimes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


class _Interrupt:
    """SIGINT to this process once gen-2's training has done ``after`` mini-batches (the run loop then writes
    ``last.pt`` and stops, as after Ctrl-C)."""

    def __init__(self, after: int):
        self.after, self.calls = after, 0

    def __call__(self, trainer) -> None:
        if trainer.config.run.seed != TINY["seed"] + 2:
            return
        self.calls += 1
        if self.calls == self.after:
            os.kill(os.getpid(), signal.SIGINT)


def test_two_generations_resume_and_refusal(tmp_path):
    out = tmp_path / "gen"
    config = GenerationsConfig.from_dict(TINY)
    stop = _Interrupt(after=2)
    with pytest.raises(GenerationsInterrupted):
        run_generations(config, str(out), on_train_step=stop)
    # generation 1 finished, gen-2 labelled and half trained
    assert [r["generation"] for r in read_records(str(out))] == [0, 1]
    assert (out / "gen-2" / "labels" / "shard-00001.npz").exists()
    assert (out / "gen-2" / "train" / "last.pt").exists() and not (out / "gen-2" / "model.pt").exists()
    before = {k: v for k, v in _mtimes(out).items() if k.startswith(("gen-0/", "gen-1/", "gen-2/labels/"))}
    cpu_before = json.loads((out / "gen-2" / "cpu.json").read_text())

    res = run_generations(config, str(out))
    # only gen-2's unfinished steps ran: training resumed from its checkpoint, then the evaluations
    assert res.steps == ["gen-2/train (resumed from 32 samples)", "gen-2/eval/pubeval", "gen-2/eval/parent",
                         "gen-2/eval/bench", "gen-2"]
    after = _mtimes(out)
    assert {k: after[k] for k in before} == before  # finished steps' files untouched
    cpu_after = json.loads((out / "gen-2" / "cpu.json").read_text())
    assert cpu_after["labels"] == cpu_before["labels"] and cpu_after["train"] > cpu_before["train"]

    records = read_records(str(out))
    assert [r["generation"] for r in records] == [0, 1, 2]
    r0, r1, r2 = records
    assert r0["labels"] == 0 and r0["train"] is None and r0["parent"] == TINY["start"]
    assert r1["parent"] == r0["model"] and r2["parent"] == r1["model"]
    for k, r in ((1, r1), (2, r2)):
        assert r["labels"] > 10 and r["label_kind"] == "ply1"
        assert r["label_cpu_s"] > 0 and r["train_cpu_s"] > 0 and r["eval_cpu_s"] > 0
        # the net is trained on every class but bear-offs (valued by the database)
        classes = load_labels(str(out / f"gen-{k}" / "labels")).classes
        assert len(classes) == r["labels"]
        assert r["train"]["epochs"] == 2 and r["train"]["train_positions"] + r["train"]["validation_positions"] \
            == int((classes != CLASS_NAMES.index("bearoff")).sum())
        assert r["parent_match"]["games"] == 10 and r["vs_parent"]["ppg"] == r["parent_match"]["ppg"]
        assert r["accepted"] is True
    for r in records:
        assert r["pubeval"]["games"] == 20 and r["pubeval"]["seed"] == 5 and -3 <= r["pubeval"]["ppg"] <= 3
        assert r["pubeval"]["ci95"] > 0
        assert set(r["er"]) == {"contact", "crashed", "race"}
        assert all(v["n"] + v["outside"] == 25 and v["er"] >= 0 and v["se"] >= 0 for v in r["er"].values())
        assert len(r["sha256"]) == 64 and Path(r["model"]).exists()
    # each generation trained: new weights, labels from its own parent
    assert len({r["sha256"] for r in records}) == 3
    lab = json.loads((out / "gen-2" / "labels" / "dataset.json").read_text())["settings"]
    assert lab["model_sha256"] == r1["sha256"] and lab["seed"] == TINY["seed"] + 2
    # the start model got the bear-off database, and the generations kept it
    for k in (0, 2):
        import torch

        ckpt = torch.load(out / f"gen-{k}" / "model.pt", weights_only=True)
        assert [d["kind"] for d in ckpt["databases"]] == ["bearoff-os"]
        assert ckpt["generation"]["generation"] == k and "trainer" not in ckpt

    # the learning-curve plot of the job
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("plot_generations", ROOT / "scripts" / "plot_generations.py")
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)
    png = tmp_path / "g.png"
    assert plot.main([str(out), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # a finished job: nothing to do
    assert run_generations(config, str(out)).steps == []
    # nor with another number of workers (labels and evaluations do not depend on it), which config.json records
    assert json.loads((out / "config.json").read_text())["workers"] == 1
    assert run_generations(GenerationsConfig.from_dict({**TINY, "workers": 2}), str(out)).steps == []
    assert json.loads((out / "config.json").read_text())["workers"] == 2
    # a changed config is refused with one line naming the key
    changed = GenerationsConfig.from_dict({**TINY, "labels": {**TINY["labels"], "keep": 0.5}})
    with pytest.raises(ConfigError, match=r"labels\.keep: 0\.3 -> 0\.5"):
        run_generations(changed, str(out))


def test_acceptance_keeps_the_parent(tmp_path):
    """accept: better with a 1-epoch tiny-lr training: the new model is not measurably better, so generation 2 is
    labelled and trained from generation 0's model."""
    cfg = {**TINY, "accept": "better",
           "supervised": {**TINY["supervised"], "epochs": 1, "lr": 1e-6, "lr_end": 1e-6},
           "eval": {"games": 10, "seed": 5, "parent_games": 10}}
    out = tmp_path / "gen"

    def stop_after_one_shard(text: str) -> None:  # Ctrl-C while gen-1's labels are being made
        if text == "gen-1: labels 1/2 shards":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_generations(GenerationsConfig.from_dict(cfg), str(out), lines=stop_after_one_shard)
    shards = sorted((out / "gen-1" / "labels").glob("shard-*.npz"))
    assert [p.name for p in shards] == ["shard-00000.npz"]
    first = shards[0].stat().st_mtime_ns
    said: list[str] = []
    res = run_generations(GenerationsConfig.from_dict(cfg), str(out), lines=said.append)
    assert "gen-1: labels (ply1), 1 of 2 shard(s) to make" in said  # only the missing shard was made
    assert (out / "gen-1" / "labels" / "shard-00000.npz").stat().st_mtime_ns == first
    assert res.steps[0] == "gen-1/labels" and "gen-0" not in res.steps
    records = res.records
    assert [r["accepted"] for r in records] == [True, False, False]
    assert records[1]["er"] is None and records[1]["vs_parent"]["ppg"] - records[1]["vs_parent"]["ci95"] <= 0
    assert records[2]["parent"] == records[0]["model"]


@pytest.mark.parametrize("text, message", [
    ("start: x.pt\nlabel: {kind: ply1}\n", "unknown config key 'label'; known keys: start, generations"),
    ("start: x.pt\nlabels: {kinds: ply1}\n", "unknown config key 'labels.kinds'; known keys: kind, shards"),
    ("start: x.pt\nlabels: {kind: ply3}\n", "config key 'labels.kind' must be one of ply1, ply2, rollout"),
    ("start: x.pt\neval: {games: 11}\n", "config key 'eval.games' must be even"),
    ("start: x.pt\nsupervised: {data: d}\n", "config key 'supervised.data' is set by the driver"),
    ("start: x.pt\nsupervised: {lr_schedule: step}\n", "config key 'lr_schedule' must be"),
    ("start: x.pt\naccept: maybe\n", "config key 'accept' must be one of always, not_worse, better"),
    ("start: x.pt:ply=1\n", "config key 'start' takes only the option bearoff=db|net"),
    ("generations: 2\n", "config key 'start' is required"),
    ("start: x.pt\nlabels: {kind: rollout}\n", "rollout labels need trials >= 1"),
    ("start: x.pt\nlabels: {explorers: [pubeval]}\n", "give explore > 0 too"),
    ("start: x.pt\nlabels: {explore: 0.5, explorers: pubeval}\n", "config key 'labels.explorers' must be a list"),
    ("start: x.pt\nlabels: {candidates: 65}\n", "candidates must be in 0..64"),
    ("start: x.pt\nlabels: {explore: 0.5, explorers: [nosuch]}\n", "config key 'labels.explorers': unknown agent"),
    ("start: x.pt\nlabels: {kind: rollout, trials: 100000000000}\n", "config key 'labels.trials' must be at most"),
    ("start: x.pt\nsupervised: {net: nonet}\n", "config key 'supervised.net' must be 'all' or one of"),
    ("start: x.pt\neval: {bench: /nonexistent/bench}\n", "config key 'eval.bench': no strength benchmark at"),
    ("start: x.pt\neval: {games: 1e17}\n", "config key 'eval.games' must be at most 100,000,000"),
    ("start: x.pt\nseed: 1\nlabels: {kind: ply1, kind: ply2}\n", "duplicate key 'kind' on line 3 (first on line 3)"),
    ("start: x.pt\nseed: 1\ngenerations: 2\nseed: 2\n", "duplicate key 'seed' on line 4 (first on line 2)"),
])
def test_bad_config_is_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "g.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=None) as err:
        load_generations_config(path)
    assert message in str(err.value)
    rc = main(["generations", "--config", str(path), "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("bgai: error:") and message in lines[0]
    assert not (tmp_path / "out").exists()


def test_exploring_and_candidate_labels_reach_the_label_job_and_old_configs_read_the_same():
    cfg = GenerationsConfig.from_dict({**TINY, "labels": {**TINY["labels"], "explore": 0.5, "candidates": 3,
                                                          "explorers": ["pubeval", "random"]}})
    s = cfg.labels.settings("m.pt", 4)
    assert (s.explore, s.explorers, s.candidates, s.seed) == (0.5, ("pubeval", "random"), 3, 4)
    assert {"explore", "explorers", "candidates"} <= set(cfg.to_dict()["labels"])
    # unset, they are left out of config.json, so a job started before they existed resumes with its config
    plain = GenerationsConfig.from_dict(TINY).to_dict()["labels"]
    assert not {"explore", "explorers", "candidates"} & set(plain) and plain["keep"] == 0.3
    with pytest.raises(ConfigError) as err:  # named once, not inside 'config section labels: ...'
        GenerationsConfig.from_dict({**TINY, "labels": {**TINY["labels"], "classes": ["foo"]}})
    assert str(err.value).startswith("config key 'labels.classes': unknown position class 'foo'")


def test_missing_start_model_makes_no_folder(tmp_path, capsys):
    path = tmp_path / "g.yaml"
    path.write_text("start: missing.pt\n", encoding="utf-8")
    rc = main(["generations", "--config", str(path), "--out", str(tmp_path / "out")])
    assert rc == 2 and capsys.readouterr().err.strip() == "bgai: error: checkpoint file 'missing.pt' does not exist"
    assert not (tmp_path / "out").exists()


def test_cli_refuses_changed_config(tmp_path, capsys):
    """The CLI's one line for a folder made with another config (checked before any work)."""
    out = tmp_path / "gen"
    out.mkdir()
    cfg = {**TINY, "eval": {"games": 10, "seed": 5}}
    (out / "config.json").write_text(json.dumps(GenerationsConfig.from_dict(cfg).to_dict()), encoding="utf-8")
    path = tmp_path / "g.yaml"
    path.write_text(json.dumps({**cfg, "seed": 4, "workers": 3}), encoding="utf-8")  # workers may change
    rc = main(["generations", "--config", str(path), "--out", str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and lines == [f"bgai: error: {str(out)!r} was started with another config (seed: 3 -> 4); rerun "
                                 "with the same config to resume, or use another --out"]


@pytest.mark.parametrize("kind", ["file", "under-file"])
def test_unusable_out_folder_is_one_line(tmp_path, capsys, kind):
    path = tmp_path / "g.yaml"
    path.write_text(f"start: {START}\n", encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    out = afile if kind == "file" else afile / "sub"
    rc = main(["generations", "--config", str(path), "--out", str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("bgai: error:") and str(out) in lines[0]
    assert afile.read_text(encoding="utf-8") == "x"


def test_generations_may_grow_but_not_shrink(tmp_path):
    out = tmp_path / "gen"
    out.mkdir()
    cfg = {**TINY, "generations": 2}
    (out / "config.json").write_text(json.dumps(GenerationsConfig.from_dict(cfg).to_dict()), encoding="utf-8")
    with pytest.raises(ConfigError, match="'generations' may only grow \\(got 1\\)"):
        run_generations(GenerationsConfig.from_dict({**cfg, "generations": 1}), str(out))
    assert json.loads((out / "config.json").read_text(encoding="utf-8"))["generations"] == 2
