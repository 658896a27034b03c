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
