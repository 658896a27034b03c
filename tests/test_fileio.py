"""bgai.util.fileio: atomic writes, permissions, clean-up and error messages."""

from __future__ import annotations

import json
import os
import stat

import pytest

from bgai.errors import BgaiError
from bgai.evaluate.series import write_json_atomic
from bgai.util.fileio import atomic_write, atomic_write_bytes, atomic_write_json


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_json_round_trip_and_no_leftovers(tmp_path):
    path = tmp_path / "r.json"
    atomic_write_json(path, {"ppg": 0.25, "games": [1, 2]})
    assert path.read_text(encoding="utf-8") == '{\n  "ppg": 0.25,\n  "games": [\n    1,\n    2\n  ]\n}\n'
    assert os.listdir(tmp_path) == ["r.json"]


def test_usual_permissions_follow_umask(tmp_path, umask_022):
    atomic_write_bytes(tmp_path / "a.bin", b"x")
    assert _mode(tmp_path / "a.bin") == 0o644
    os.umask(0o077)
    atomic_write_json(tmp_path / "b.json", [1])
    assert _mode(tmp_path / "b.json") == 0o600
    os.umask(0o002)
    write_json_atomic(str(tmp_path / "c.json"), [1])  # evaluate.py's writer goes through the helper
    assert _mode(tmp_path / "c.json") == 0o664


def test_replaces_existing_file(tmp_path):
    path = tmp_path / "m.bin"
    path.write_bytes(b"old content")
    atomic_write(path, lambda fh: fh.write(b"new"))
    assert path.read_bytes() == b"new"


def test_missing_directory_is_refused_not_created(tmp_path):
    target = tmp_path / "nonexist" / "dir" / "m.onnx"
    with pytest.raises(BgaiError, match=r"cannot write '.*m\.onnx': directory '.*nonexist/dir' does not exist"):
        atomic_write_bytes(target, b"x")
    assert not (tmp_path / "nonexist").exists()


def test_target_is_directory(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(BgaiError, match=r"cannot write '.*out': it is a directory"):
        atomic_write_json(tmp_path / "out", {})
    assert os.listdir(tmp_path / "out") == [] and os.listdir(tmp_path) == ["out"]


def test_parent_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(BgaiError, match=r"'.*f' is not a directory"):
        atomic_write_bytes(tmp_path / "f" / "m.npz", b"x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(BgaiError, match=r"cannot write '.*ro/x\.json': directory '.*ro' is not writable"):
            atomic_write_json(ro / "x.json", {})
    finally:
        ro.chmod(0o755)
    assert os.listdir(ro) == []


def test_permission_denied_message(tmp_path, monkeypatch):
    """Runs as root too: the OS refusal is simulated at ``os.open``."""
    import bgai.util.fileio as fileio

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fileio.os, "open", denied)
    with pytest.raises(BgaiError, match=r"cannot write '.*x\.json': directory '.*' is not writable \(Permission denied\)"):
        atomic_write_json(tmp_path / "x.json", {})


def test_failing_writer_leaves_old_file_and_no_temp(tmp_path):
    path = tmp_path / "keep.json"
    path.write_text("old")

    def boom(fh):
        fh.write(b"partial")
        raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError, match="writer failed"):
        atomic_write(path, boom)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["keep.json"]

    def oserror(fh):
        raise OSError(28, "No space left on device")

    with pytest.raises(BgaiError, match=r"cannot write '.*keep\.json': no space left on device"):
        atomic_write(path, oserror)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["keep.json"]


def test_unserialisable_json_creates_nothing(tmp_path):
    with pytest.raises(TypeError):
        atomic_write_json(tmp_path / "x.json", {"a": object()})
    assert os.listdir(tmp_path) == []
    atomic_write_json(tmp_path / "nan.json", {"a": float("nan")})
    assert (tmp_path / "nan.json").read_text() == '{\n  "a": NaN\n}\n'  # as json.dump writes it


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_probe_finds_a_directory_where_nothing_can_be_created():
    from bgai.util.fileio import check_destination

    assert check_destination("/tmp/bgai-probe.json", probe=True) == "/tmp"
    with pytest.raises(BgaiError, match="cannot write '/proc/bgai.json'"):
        check_destination("/proc/bgai.json", probe=True)


def test_atomic_write_writes_into_devices_and_fifos_instead_of_replacing_them(tmp_path):
    """--json /dev/null must not turn /dev/null into a plain file (QA session 4)."""
    import threading

    atomic_write_json("/dev/null", {"a": 1})
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    if os.path.exists("/dev/full"):
        with pytest.raises(BgaiError, match="cannot write '/dev/full'"):
            atomic_write_json("/dev/full", {"a": 1})
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    atomic_write_json(fifo, {"b": 2})
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0]) == {"b": 2}
