"""Defect 18: Ctrl-C (SIGINT to the process group, as a terminal sends it) or SIGTERM during ``bgai eval --workers
2`` reports the finished work units as a partial result (table and JSON marked partial, exit status 130), with no
traceback and no ``leaked semaphore`` warning; and the same in-process (``evaluate`` stopped after two units)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgai.evaluate.series import evaluate

ROOT = Path(__file__).resolve().parents[1]


def _games_done(text: str) -> int:
    """Games finished according to the last tqdm update in ``text`` (``'... 1000/40000 [...'``)."""
    found = re.findall(r"(\d+)/(\d+) \[", text)
    return int(found[-1][0]) if found else 0


@pytest.mark.parametrize("how", ["SIGINT-group", "SIGTERM", "SIGTERM-group"])
def test_interrupted_eval_reports_the_finished_units(tmp_path, how):
    out_json = tmp_path / "r.json"
    err_path = tmp_path / "err.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # 40,000 games: 40 units of 1,000, far more than the test lets finish
    cmd = [sys.executable, "-m", "bgai", "eval", "pubeval", "racer", "--games", "40000", "--seed", "3",
           "--workers", "2", "--json", str(out_json)]
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while _games_done(err_path.read_text()) == 0:  # wait for the first finished unit
                assert proc.poll() is None and time.monotonic() < deadline, err_path.read_text()
                time.sleep(0.1)
            sig = signal.SIGINT if how.startswith("SIGINT") else signal.SIGTERM
            if how.endswith("group"):
                os.killpg(proc.pid, sig)
            else:
                os.kill(proc.pid, sig)
            stdout, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    err = err_path.read_text()
    assert proc.returncode == 130, (stdout, err)
    assert "Traceback" not in err and "Traceback" not in stdout
    assert "leaked semaphore" not in err and "resource_tracker" not in err
    data = json.loads(out_json.read_text())
    assert data["partial"] is True and data["interrupted"] == sig.name and data["games_requested"] == 40000
    games = data["games"]
    assert 0 < games < 40000 and games % 1000 == 0  # whole work units (whole duplicate pairs)
    head = stdout.splitlines()[0]
    assert head == (f"pubeval vs racer: {games} games (duplicate dice), seed 3 -- PARTIAL: interrupted ({sig.name}) "
                    f"after {games} of 40000 games")
    assert "ppg for pubeval" in stdout and f"interrupted ({sig.name}): partial result" in err
    # the workers are gone with their parent (zombies aside: a container's init may not reap orphans)
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-o", "stat=,pid=,cmd=", "-g", str(proc.pid)], capture_output=True, text=True).stdout
    assert [line for line in ps.splitlines() if not line.lstrip().startswith("Z")] == [], ps


def test_partial_series_is_the_finished_units_of_the_full_one(monkeypatch):
    monkeypatch.setattr("bgai.evaluate.series.GROUP_GAMES", 40)  # groups of 2 units: a group is what finishes
    full = evaluate("pubeval", "racer", 80, 4, chunk_games=20)
    seen = []

    def stop_after_two(res):
        seen.append(len(res.points))
        if len(seen) == 2:
            raise KeyboardInterrupt

    part = evaluate("pubeval", "racer", 80, 4, chunk_games=20, on_unit=stop_after_two)
    assert part.partial and part.interrupted == "SIGINT" and part.games == 40 and part.games_requested == 80
    assert part.to_dict()["partial"] is True and not full.partial and full.to_dict()["partial"] is False
    first40 = evaluate("pubeval", "racer", 40, 4, chunk_games=20)  # the same dice: the first two units
    assert (part.ppg, part.ci95, part.a, part.b) == (first40.ppg, first40.ci95, first40.a, first40.b)
    assert "PARTIAL: interrupted (SIGINT) after 40 of 80 games" in part.table().splitlines()[0]
    assert "PARTIAL" not in full.table()

    def interrupted_unit(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("bgai.evaluate.series.play_units", interrupted_unit)
    with pytest.raises(KeyboardInterrupt, match="before any work unit finished"):  # nothing to report
        evaluate("pubeval", "racer", 80, 4, chunk_games=20)


def test_partial_cubeful_series(monkeypatch):
    from bgai.evaluate.cubeful import evaluate_cubeful
    from bgai.game import play_cube

    calls = []
    real = play_cube.play_cubeful

    def second_unit_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr("bgai.evaluate.cubeful.play_cubeful", second_unit_interrupted)
    rep = evaluate_cubeful("pubeval", "racer", 40, 2, chunk=10)
    assert rep.partial and rep.units == 10 and rep.units_requested == 40 and rep.to_dict()["partial"] is True
    assert "PARTIAL: interrupted (SIGINT) after 10 of 40 games" in rep.table().splitlines()[0]
