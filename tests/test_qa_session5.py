"""QA defects of session 5: a bad Ray address fails in seconds with one line; a train run that fails before it
starts leaves no folder; the journal keys the model by its bytes; agent-spec options (repeats refused, enumeration
values case-insensitive); rollout probabilities never negative in print; hostile inputs give one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from bgai.cli import main
from bgai.errors import BgaiError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _bgai(*args: str, timeout: float = 120, cwd: str | None = None) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "bgai", *args], env=ENV, cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    return out, time.monotonic() - t0


# --- 1. a bad Ray address ------------------------------------------------------------------------------------------


def test_bad_ray_address_fails_fast_with_one_line():
    """``--ray nonsense:1`` hung in Ray's connect retries (minutes, with Ray's C++ log lines on stderr): now one
    line naming the address, exit status 2, in seconds (the time is mostly Python's start-up and imports)."""
    pytest.importorskip("ray", reason="ray is not installed (the optional extra bgai[ray])")
    out, seconds = _bgai("eval", "pubeval", "random", "--games", "100", "--ray", "nonsense:1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [out.stderr.strip()], out.stderr
    assert out.stderr.startswith("bgai: error: cannot join the Ray cluster at 'nonsense:1': unknown host 'nonsense'")
    assert seconds < 60  # was > 120 s (Ray retries for many minutes)


def test_check_address_refuses_in_seconds():
    """Malformed addresses, a closed port and a port where something that is not Ray listens (Ray waits 20 x 35 s
    there) are refused by one line within the timeout each."""
    from bgai.util.ray_backend import check_address

    for bad in ("foo", "host:", ":6379", "host:0", "host:99999", "http://host:80", "host:port"):
        with pytest.raises(BgaiError, match="bad Ray cluster address"):
            check_address(bad)
    closed = socket.socket()
    closed.bind(("0.0.0.0", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(BgaiError, match=rf"at '127.0.0.1:{port}': nothing answers at 127.0.0.1:{port}"):
        check_address(f"127.0.0.1:{port}", timeout=1)
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: [accepted.append(server.accept()) for _ in range(4)], daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(BgaiError, match=f"what answers at 127.0.0.1:{port} is not a Ray cluster"):
        check_address(f"127.0.0.1:{port}", timeout=0.5)
    assert time.monotonic() - t0 < 5 and accepted
    server.close()


def test_train_with_bad_ray_address_fails_before_the_run(tmp_path, capsys):
    """``run.ray=nonsense:1`` was joined only at the first evaluation (after training for a while): now before the
    run starts, and no run folder is left."""
    pytest.importorskip("ray", reason="ray is not installed (the optional extra bgai[ray])")
    pytest.importorskip("torch")
    out = tmp_path / "runs" / "r"
    code = main(["train", "--config", os.path.join(ROOT, "configs", "quick.yaml"), "--out", str(out), "--set",
                 "run.ray=nonsense:1", "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err[-1].startswith("bgai: error: cannot join the Ray cluster at 'nonsense:1'")
    assert not os.path.exists(tmp_path / "runs")


# --- 3. a run that fails before it starts leaves no folder ------------------------------------------------------


@pytest.mark.parametrize("setting, message", [
    ("supervised.data=/nonexistent/x.npz", "dataset '/nonexistent/x.npz' does not exist"),
    ("supervised.warm_start=/nonexistent/x.pt", "checkpoint file '/nonexistent/x.pt' does not exist"),
])
def test_train_config_error_leaves_no_folder(tmp_path, capsys, setting, message):
    """A supervised run whose data or warm start is missing used to leave ``OUT/.lock`` (and the folders made for
    it); a folder that existed before is left as it was (nothing added, the files there kept)."""
    pytest.importorskip("torch")
    config = os.path.join(ROOT, "configs", "supervised.yaml")
    new = tmp_path / "a" / "b"
    assert main(["train", "--config", config, "--out", str(new), "--set", setting, "--no-progress"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"bgai: error: {message}"
    assert os.listdir(tmp_path) == []
    old = tmp_path / "old"
    old.mkdir()
    (old / "notes.txt").write_text("mine")
    assert main(["train", "--config", config, "--out", str(old), "--set", setting, "--no-progress"]) == 2
    assert os.listdir(old) == ["notes.txt"] and (old / "notes.txt").read_text() == "mine"


# --- 2. journals key the model by its bytes --------------------------------------------------------------------


def test_rollout_journal_same_model_by_another_path_resumes(tmp_path, monkeypatch):
    """A rollout journal made with ``checkpoints/m.pt`` (relative, options in another case) is taken up by the
    same rollout with the absolute path: every unit comes from the journal and the result is the same, bit for bit
    (it was refused: the spec was compared as typed)."""
    from bgai.agents.registry import make_agent
    from bgai.analysis.rollout import rollout_position
    from bgai.core.position_id import decode_position_id

    monkeypatch.chdir(ROOT)
    board = decode_position_id("4HPwATDgc/ABMA")
    journal = str(tmp_path / "r.journal")
    kw = dict(trials=72, chunk_trials=36, truncate=2, seed=9, journal=journal)
    first = rollout_position(make_agent("checkpoints/bgai-td128.pt:bearoff=net"), board, **kw)
    again = rollout_position(make_agent(os.path.abspath(MODEL) + ":BEAROFF=NET"), board, **kw)
    assert first.resumed == 0 and again.resumed == 72 and again.trials == 72
    assert again.equity == first.equity and list(again.probabilities) == list(first.probabilities)


def test_journal_refuses_another_model_with_one_line(tmp_path):
    """The same bytes under another name are one agent; other bytes at any path are refused with one line that
    says so (both sha256 shortened)."""
    import hashlib

    from bgai.agents.registry import agent_identity
    from bgai.util.journal import Journal

    a, copy, b = tmp_path / "a.pt", tmp_path / "sub" / "copy.pt", tmp_path / "b.pt"
    copy.parent.mkdir()
    a.write_bytes(b"model one")
    copy.write_bytes(b"model one")
    b.write_bytes(b"model two")
    ida = agent_identity(f"{a}:ply=1,bearoff=db")
    assert ida == {"model_sha256": hashlib.sha256(b"model one").hexdigest(), "options": {"bearoff": "db", "ply": 1}}
    assert agent_identity(f"{copy}:BEAROFF=DB:Ply=1") == ida
    assert agent_identity("PubEval") == {"agent": "pubeval", "options": {}}
    path = tmp_path / "j"
    Journal(path, "rollout", {"seed": 1, "agent": ida}).close()
    Journal(path, "rollout", {"seed": 1, "agent": agent_identity(f"{copy}:ply=1:bearoff=db")}).close()
    sha_a, sha_b = hashlib.sha256(b"model one").hexdigest()[:12], hashlib.sha256(b"model two").hexdigest()[:12]
    with pytest.raises(BgaiError) as exc:
        Journal(path, "rollout", {"seed": 1, "agent": agent_identity(f"{b}:ply=1,bearoff=db")})
    assert str(exc.value) == (f"journal {str(path)!r} was made with another model (sha256 {sha_a}... there, "
                              f"sha256 {sha_b}... here): give another file, or delete it to start again")
    with pytest.raises(BgaiError, match=r"another rollout \(agent.options.ply: 1 there, 2 here\)"):
        Journal(path, "rollout", {"seed": 1, "agent": agent_identity(f"{a}:ply=2,bearoff=db")})


# --- 4. agent-spec options -----------------------------------------------------------------------------------------


def test_spec_options_repeats_refused_case_insensitive():
    """``:ply=1:ply=2`` (or ``,ply=2``) took the last value silently: refused.  Options may be separated by ``:`` as
    by ``,``; option names and enumeration values are case-insensitive, as built-in names and --save-format are."""
    from bgai.agents.registry import parse_spec
    from bgai.errors import AgentSpecError

    for spec in ("m.pt:ply=1:ply=2", "m.pt:ply=1,ply=2", "m.pt:ply=1,PLY=2", "bgsage:ply=1:ply=1"):
        with pytest.raises(AgentSpecError, match=r"option 'ply' given twice in agent spec"):
            parse_spec(spec)
    want = ("m.pt", {"ply": 1, "bearoff": "db"})
    for spec in ("m.pt:ply=1,bearoff=db", "m.pt:ply=1:bearoff=db", "m.pt:PLY=1:BEAROFF=DB", "m.pt:Ply=1,Bearoff=Db"):
        assert parse_spec(spec) == want, spec
    assert parse_spec("runs/a:b/m.pt:ply=2") == ("runs/a:b/m.pt", {"ply": 2})  # a ':' in a path stays in it
    assert parse_spec("C:\\models\\m.pt:bearoff=NET") == ("C:\\models\\m.pt", {"bearoff": "net"})
    with pytest.raises(AgentSpecError, match="bad value 'DBX' for option 'bearoff'"):
        parse_spec("m.pt:bearoff=DBX")
    with pytest.raises(AgentSpecError, match=r"bad option 'junk' in agent spec"):
        parse_spec("m.pt:junk")


def test_cli_spec_repeats_and_cases(tmp_path, capsys):
    """On the command line: a repeated option is one line and status 2; upper-case option names, enumeration
    values and choices work (``:BEAROFF=DB``, ``--kind PLY1``-style choices, ``--save-format MAT``)."""
    pos = "4HPwATDgc/ABMA"
    assert main(["hint", pos, "31", "--agent", f"{MODEL}:ply=0:ply=1"]) == 2
    err = capsys.readouterr().err
    assert err == f"bgai: error: option 'ply' given twice in agent spec '{MODEL}:ply=0:ply=1'\n"
    assert main(["hint", pos, "31", "--agent", f"{MODEL}:BEAROFF=DB:PLY=0", "--json"]) == 0
    upper = capsys.readouterr().out
    assert main(["hint", pos, "31", "--agent", f"{MODEL}:bearoff=db,ply=0", "--json"]) == 0
    lower = capsys.readouterr().out
    assert upper.replace("BEAROFF=DB:PLY=0", "bearoff=db,ply=0") == lower and '"equity"' in upper
    assert main(["eval", "pubeval", "random", "--games", "2", "--save-format", "MAT"]) == 0
    capsys.readouterr()
    from bgai.cli import build_parser

    args = build_parser().parse_args(["export", MODEL, "--format", "NPZ", "--out", str(tmp_path / "m.npz")])
    assert args.format == "npz"
    assert build_parser().parse_args(["label", "x", "--kind", "PLY2", "--model", MODEL]).kind == "ply2"


# --- 5. rollout probabilities never negative in print ---------------------------------------------------------


def _result(probs):
    import numpy as np

    from bgai.analysis.rollout import RolloutResult, RolloutSettings

    settings = RolloutSettings(trials=36, truncate=2, ply=0, seed=1, variance_reduction=True, chunk_trials=36,
                               agent="pubeval")
    return RolloutResult(probabilities=np.array(probs, dtype=float), std_errors=np.full(5, 1e-4), equity=-0.0,
                         equity_se=1e-4, trials=36, partial=False, settings=settings)


def test_rollout_json_probabilities_clipped_unbiased_kept():
    """Luck-adjusted means can be -5e-6 or -0.0: ``probabilities`` holds them clipped (never -0.0),
    ``probabilities_unbiased`` as they are (what the equity is computed from)."""
    import math

    d = _result([0.5, 0.1, -5e-6, 1.0000002, -0.0]).to_dict()
    assert list(d["probabilities"].values()) == [0.5, 0.1, 0.0, 1.0, 0.0]
    assert all(math.copysign(1.0, v) == 1.0 for v in d["probabilities"].values())
    assert list(d["probabilities_unbiased"].values()) == [0.5, 0.1, -5e-6, 1.0000002, -0.0]


def test_rollout_text_never_prints_negative_zero(monkeypatch, capsys):
    """The text report shows the clipped probabilities: no ``-0.0000`` (nor a -0.0% in a play's line)."""
    import bgai.analysis.rollout as rollout_module

    monkeypatch.setattr(rollout_module, "rollout_position", lambda *a, **k: _result([0.6, 0.2, -4e-6, 0.1, -0.0]))
    assert main(["rollout", "4HPwATDgc/ABMA", "--agent", "pubeval", "--trials", "36"]) == 0
    out = capsys.readouterr().out
    result = next(line for line in out.splitlines() if line.strip().startswith("result"))
    assert result.split() == ["result", "0.6000", "0.2000", "0.0000", "0.1000", "0.0000", "+0.0000"]
    assert "-0.0" not in out


# --- 6. hostile inputs ------------------------------------------------------------------------------------------


def test_label_bad_model_or_folder_one_line_no_folder_left(tmp_path, capsys):
    """``bgai label`` tracebacks: a missing model (FileNotFoundError), OUT under a file (NotADirectoryError) or
    OUT an existing file (FileExistsError); a file that is not a model left a folder whose dataset.json then
    refused the right model ("made with other settings").  Now one line each, and no folder left; absurd shard
    counts are refused before the job lists its shards."""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    cases = [
        (["out1", "--model", str(tmp_path / "missing.pt")],
         f"model file {str(tmp_path / 'missing.pt')!r} does not exist"),
        (["out2", "--model", str(tmp_path / "bad.pt"), "--shards", "1", "--games", "1"],
         "is corrupt or not a bgai checkpoint"),
        ([str(tmp_path / "file.txt" / "sub"), "--model", MODEL, "--shards", "1", "--games", "1"],
         "cannot create label folder"),
        ([str(tmp_path / "file.txt"), "--model", MODEL, "--shards", "1", "--games", "1"],
         "a file of that name exists"),
        (["out3", "--model", MODEL, "--shards", str(10**20), "--games", "1"],
         "shards must be at most 1,000,000, got 100,000,000,000,000,000,000"),
    ]
    for args, message in cases:
        out = str(tmp_path / args[0]) if not os.path.isabs(args[0]) else args[0]
        assert main(["label", out, *args[1:]]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("bgai: error: ") and message in err[0], (args, err)
    assert sorted(os.listdir(tmp_path)) == ["bad.pt", "file.txt"]


def test_rollout_huge_trials_and_empty_config_refused(tmp_path, capsys):
    """``--trials 10**20`` listed its work units for ever (no output, memory growing): refused.  An empty train
    config silently started 100,000 games of the defaults: refused."""
    assert main(["rollout", "4HPwATDgc/ABMA", "--agent", MODEL, "--trials", str(10**20)]) == 2
    assert capsys.readouterr().err == ("bgai: error: trials must be at most 100,000,000 in one rollout, got "
                                       "100,000,000,000,000,000,000\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    assert main(["train", "--config", str(empty), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"bgai: error: config {str(empty)!r} is empty: give at least 'algorithm: td'" in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value, expect", [("0", False), ("off", False), ("FALSE", False), ("no", False), ("1", None)])
def test_bgai_numba_switch_words(value, expect):
    """BGAI_NUMBA=0/false/off/no turns the compiled kernels off; anything else leaves them to numba's presence."""
    import importlib.util
    import subprocess
    import sys

    env = {**os.environ, "BGAI_NUMBA": value}
    out = subprocess.run([sys.executable, "-c", "from bgai.util import jit; print(jit.AVAILABLE)"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    want = (importlib.util.find_spec("numba") is not None) if expect is None else expect
    assert out == str(want)


@pytest.mark.parametrize("query", ["die1=3_0&die2=1", "die1=3&die2=\u0661", "cube_value=1_6&dice=31"])
def test_request_integers_are_plain_ascii_digits(query):
    """``int()`` reads ``3_0`` as 30 and Arabic-Indic digits as numbers; request parameters take ASCII digits only."""
    from urllib.parse import parse_qsl

    from bgai.errors import BgaiError
    from bgai.formats.request import read_request_params

    params = dict(parse_qsl("position_id=4HPwATDgc/ABMA&" + query))
    with pytest.raises(BgaiError, match="must be|expected an integer"):
        read_request_params(params)


def test_session6_cli_refuses_zero_workers_and_missing_out_folder(tmp_path):
    """QA (session 6): `bgai label --workers 0` was accepted (eval refused it); `bgai bearoff attach --out` into a
    missing folder created it."""
    import subprocess
    import sys

    def run(*args):
        return subprocess.run([sys.executable, "-m", "bgai", *args], capture_output=True, text=True, timeout=120)

    for cmd in (["label", str(tmp_path / "labels"), "--workers", "0"], ["rollout", "4HPwATDgc/ABMA", "--workers", "0"]):
        r = run(*cmd)
        assert r.returncode == 2 and "--workers: expected a positive integer, got '0'" in r.stderr, r.stderr
    assert not (tmp_path / "labels").exists()
    out = tmp_path / "missing" / "x.pt"
    from pathlib import Path

    model = Path(__file__).resolve().parents[1] / "checkpoints" / "bgai-td128.pt"
    r = run("bearoff", "attach", str(model), "--out", str(out))
    assert r.returncode != 0 and "does not exist" in r.stderr and not out.parent.exists(), r.stderr
