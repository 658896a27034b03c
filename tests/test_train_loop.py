"""The run loop and configs: sectioned and old flat configs, numbers as users type them, non-UTF-8 files, full
disks and unwritable logs, stale temporaries of killed writes, the console output, and evaluating the file
just written."""

from __future__ import annotations

import errno
import json
import os
import re

import pytest
import yaml

from bgai.cli import main
from bgai.errors import ConfigError
from bgai.model.bundle import read_checkpoint
from bgai.train.config import TrainConfig, load_config, nest, parse_override
from bgai.train.loop import RunFolderError
from bgai.train.run import train
from bgai.util import fileio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = {
    "algorithm": "td",
    "model": {"encoding": "tesauro198", "hidden": [8]},
    "run": {"games": 24, "seed": 5, "eval_every": 0, "checkpoint_every": 0, "log_every": 4},
    "td": {"parallel_games": 8, "lr": 0.01, "exploration": 0.1},
}


def tiny(**run) -> TrainConfig:
    data = json.loads(json.dumps(TINY))
    data["run"].update(run)
    return TrainConfig.from_dict(data)


def quiet(**kw):
    return dict(progress=False, tensorboard=False, evaluate=False, **kw)


# --- configs ------------------------------------------------------------------------------------------------------

def test_flat_and_sectioned_configs_are_the_same(tmp_path):
    flat = {"encoding": "tesauro198", "hidden": [8], "games": 24, "seed": 5, "eval_every": 0, "checkpoint_every": 0,
            "log_every": 4, "parallel_games": 8, "lr": 0.01, "exploration": 0.1}
    assert TrainConfig.from_dict(flat) == tiny()
    assert nest({"lam": 0.5, "td.workers": 2, "run": {"seed": 3}}) == {
        "algorithm": "td", "td": {"lam": 0.5, "workers": 2}, "run": {"seed": 3}}
    # the shipped configs are sectioned; the old flat file of the shipped model's run still loads
    for name in ("quick.yaml", "tdgammon.yaml", "supervised.yaml"):
        data = yaml.safe_load(open(os.path.join(ROOT, "configs", name)))
        assert {"algorithm", "model", "run"} <= set(data), name
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump({k: v for k, v in json.load(open(os.path.join(ROOT, "checkpoints",
                                                                                  "bgai-td128.json")))["config"].items()
                                   if k != "threads"}))
    cfg = load_config(old)
    assert cfg.model.hidden == [128] and cfg.td.lam_end == 0.4 and cfg.run.games == 3_000_000
    with pytest.raises(ConfigError, match="unknown config key 'bogus' in section 'td'"):
        TrainConfig.from_dict({"td": {"bogus": 1}})
    with pytest.raises(ConfigError, match="unknown config key 'patience'"):  # a supervised key in a td config
        TrainConfig.from_dict({"patience": 3})
    with pytest.raises(ConfigError, match="'hidden': network too large"):
        TrainConfig.from_dict({"hidden": [10**9]})


@pytest.mark.parametrize("text, value", [("1e-3", 1e-3), ("1E-4", 1e-4), ("2.5e-4", 2.5e-4), ("5e-3", 5e-3)])
def test_numbers_as_users_type_them(tmp_path, text, value):
    p = tmp_path / "c.yaml"
    p.write_text(f"games: 100\nlr: {text}\nlr_end: '{text}'\n")
    cfg = load_config(p, ["lam=0.5", f"td.lr_end={text}"])
    assert cfg.td.lr == value and cfg.td.lr_end == value
    assert load_config(p, [f"lr={text}"]).td.lr == value
    assert parse_override(f"lr={text}") == ("lr", value)
    assert TrainConfig.from_dict({"lr": text}).td.lr == value  # a string from elsewhere
    assert load_config(p, ["games=1e3"]).run.games == 1000  # an integral float for an integer key
    with pytest.raises(ConfigError, match="'games' must be an integer, got 1500.5"):
        load_config(p, ["games=1.5005e3"])
    with pytest.raises(ConfigError, match="'lr' must be a finite number"):
        load_config(p, ["lr=.nan"])
    with pytest.raises(ConfigError, match="'lr' must be a number, got 'fast'"):
        load_config(p, ["lr=fast"])


def test_cli_accepts_1e_minus_3(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "td": {**TINY["td"], "lr": "X"}}).replace("lr: X", "lr: 1e-3"))
    assert main(["train", "--config", str(cfg), "--out", str(tmp_path / "r"), "--no-progress", "--set",
                 "lr_end=1e-4", "--set", "run.games=8"]) == 0
    saved = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    assert saved["td"]["lr"] == 0.001 and saved["td"]["lr_end"] == 0.0001 and saved["run"]["games"] == 8


def test_non_utf8_config_is_one_line(tmp_path, capsys):
    p = tmp_path / "latin1.yaml"
    p.write_bytes("games: 100\n# réglages\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"is not UTF-8 text \(byte 0xe9 at offset 14\)"):
        load_config(p)
    assert main(["train", "--config", str(p), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err == f"bgai: error: config {str(p)!r} is not UTF-8 text (byte 0xe9 at offset 14)\n"
    p.write_bytes(b"games: [1, 2\n")
    assert main(["train", "--config", str(p), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai: error: config") and "is not valid YAML" in err and err.count("\n") == 1


# --- full disks and unwritable logs --------------------------------------------------------------------------------

def _disk_full_after(monkeypatch, writes_ok: int):
    """``os.fsync`` (where a full disk shows with delayed allocation) fails after ``writes_ok`` calls."""
    real = fileio.os.fsync
    calls = {"n": 0}

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] > writes_ok:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(fileio.os, "fsync", fsync)
    return calls


def test_full_disk_during_training_keeps_the_last_checkpoint(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    state = {"armed": False}

    def fill_disk(trainer):
        if (out / "last.pt").exists() and not state["armed"]:  # after the first checkpoint (at 8 games)
            state["armed"] = True
            _disk_full_after(monkeypatch, 0)

    with pytest.raises(RunFolderError) as info:
        train(tiny(games=40, checkpoint_every=8), str(out), on_step=fill_disk, **quiet())
    msg = str(info.value)
    assert "\n" not in msg and re.search(r"cannot write .*last\.pt.*no space left on device", msg), msg
    assert f"the last checkpoint {out / 'last.pt'} (" in msg and "--resume" in msg
    monkeypatch.undo()
    kept = read_checkpoint(out / "last.pt")
    assert 8 <= kept["games_trained"] < 16 and not [f for f in os.listdir(out) if f.endswith(".tmp")]
    # the same through the command line: one line, exit status 2, no traceback
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "run": {**TINY["run"], "games": 40, "checkpoint_every": 8}}))
    _disk_full_after(monkeypatch, 2)  # config.yaml and the first checkpoint fit
    assert main(["train", "--config", str(cfg), "--out", str(tmp_path / "cli"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("bgai: error: ") == 1 and "no space left on device" in err


def test_full_disk_from_the_start_writes_no_empty_config(tmp_path, monkeypatch, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    _disk_full_after(monkeypatch, 0)
    assert main(["train", "--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1:] == [f"bgai: error: cannot write {str(tmp_path / 'run' / 'config.yaml')!r}: no space left on device"]
    assert not (tmp_path / "run" / "config.yaml").exists() and not (tmp_path / "run" / "last.pt").exists()
    assert [f for f in os.listdir(tmp_path / "run") if f != ".lock"] == []


def test_unwritable_tensorboard_log_warns_once_and_training_goes_on(tmp_path, monkeypatch, capfd):
    from tensorboard.summary.writer import record_writer

    real = record_writer.RecordWriter.write
    calls = {"n": 0}

    def write(self, data):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(record_writer.RecordWriter, "write", write)
    res = train(tiny(games=48, log_every=4), str(tmp_path / "run"), progress=False, tensorboard=True, evaluate=False)
    assert res.games >= 48 and read_checkpoint(res.last_path)["games_trained"] == res.games
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in thread" not in err
    assert err.count("warning: tensorboard logs stopped") == 1 and "No space left on device" in err
    assert len((tmp_path / "run" / "log.jsonl").read_text().splitlines()) == 12  # the JSON-lines log goes on


# --- stale temporaries --------------------------------------------------------------------------------------------

def test_resume_removes_stale_temporaries_of_killed_writes(tmp_path):
    out = tmp_path / "run"
    train(tiny(games=8), str(out), **quiet())
    (out / "snapshots").mkdir()
    ours = [out / ".last.pt.0123456789ab.tmp", out / ".config.yaml.a1b2c3d4e5f6.tmp",
            out / "snapshots" / ".model-000000008.pt.ffffffffffff.tmp"]
    others = [out / ".notes.txt.0123456789ab.tmp", out / "keep.tmp", out / ".last.pt.xyz.tmp",
              out / "snapshots" / ".other.pt.0123456789ab.tmp"]
    for p in ours + others:
        p.write_bytes(b"partial")
    train(None, str(out), resume=True, overrides={"games": 16}, **quiet())
    assert not any(p.exists() for p in ours) and all(p.exists() for p in others)


# --- console output -----------------------------------------------------------------------------------------------

EVAL_YAML = {**TINY, "run": {"games": 16, "seed": 3, "eval_every": 8, "eval_games": 20, "checkpoint_every": 8,
                             "log_every": 8}}


def test_no_progress_prints_every_evaluation_and_resume_counts_this_session(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(EVAL_YAML))
    out = tmp_path / "run"
    assert main(["train", "--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    evals = [json.loads(line) for line in (out / "evals.jsonl").read_text().splitlines()]
    lines = [ln for ln in captured.out.splitlines() if "ppg against pubeval" in ln]
    assert len(evals) == len(lines) >= 2
    for e, ln in zip(evals, lines):
        assert ln == (f"after {e['games_trained']} games: {e['ppg']:+.3f} +- {e['ci95']:.3f} ppg against pubeval "
                      f"(20 duplicate-dice games)")
    first = read_checkpoint(out / "last.pt")["games_trained"]
    assert re.search(rf"bgai train: {first} games this session in \d+ s; checkpoints", captured.err)
    assert main(["train", "--out", str(out), "--resume", "--set", "games=24", "--no-progress"]) == 0
    err = capsys.readouterr().err
    total = read_checkpoint(out / "last.pt")["games_trained"]
    assert f"bgai train: {total - first} games this session in " in err
    assert f"({total} in total, {first} before this session)" in err


def test_progress_bar_shows_one_rate_and_the_final_evaluation(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**EVAL_YAML, "run": {**EVAL_YAML["run"], "games": 24, "eval_every": 16}}))
    out = tmp_path / "run"
    assert main(["train", "--config", str(cfg), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "game/s" not in err  # tqdm's own rate is not shown; bgai's is "N games/s"
    evals = [json.loads(line) for line in (out / "evals.jsonl").read_text().splitlines()]
    final = evals[-1]
    last_bar = [s for s in re.split(r"[\r\n]", err) if "|" in s and "/24" in s][-1]
    assert f"vs pubeval {final['ppg']:+.3f} +- {final['ci95']:.3f} @ {final['games_trained']}" in last_bar


def test_the_evaluation_plays_the_snapshot_file_just_written(tmp_path, monkeypatch):
    """What is evaluated is the snapshot loaded back from disk, not the live network."""
    import bgai.train.loop as loop

    seen = []
    real = loop.load_bundle

    def load(path):
        bundle, ckpt = real(path)
        seen.append((os.path.basename(path), ckpt["games_trained"]))
        return bundle, ckpt

    monkeypatch.setattr(loop, "load_bundle", load)
    res = train(tiny(games=16, eval_every=8, eval_games=20), str(tmp_path / "run"), progress=False,
                tensorboard=False)
    snaps = sorted(os.listdir(tmp_path / "run" / "snapshots"))
    assert [s for s, _ in seen] == snaps and len(res.evals) == len(snaps)
    assert [g for _, g in seen] == [e["games_trained"] for e in res.evals]
