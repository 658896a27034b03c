"""``bgai eval --save-games``: the games of a series written as .mat / .sgf files that read back with bgai's reader,
replay legally, hold the points the series reports, do not depend on the workers, and load into ``gnubg -t``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bgai.core.movegen import legal_plays
from bgai.errors import BgaiError
from bgai.evaluate import savegames
from bgai.evaluate.cubeful import evaluate_cubeful
from bgai.evaluate.savegames import GameSaver, parse_formats, player_names
from bgai.evaluate.series import evaluate
from bgai.formats.matchfile import read_match
from bgai.formats.matchrecord import Double, Drop, Move, Take, replay
from bgai.game.match import MatchRules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GNUBG = "/usr/games/gnubg"
needs_gnubg = pytest.mark.skipif(not os.access(GNUBG, os.X_OK) or shutil.which(GNUBG) is None,
                                 reason="GNU Backgammon (gnubg -t) is not installed")
try:
    import gnubg_nn  # noqa: F401

    CUBE_AGENT = "gnubg"
except ImportError:  # pragma: no cover - the neural model doubles too
    CUBE_AGENT = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")


def _gnubg(commands: str) -> str:
    p = subprocess.run([GNUBG, "-t", "-q"], input=commands, capture_output=True, text=True, timeout=120, check=False)
    return p.stdout + p.stderr


def _files(folder) -> dict[str, bytes]:
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))}


def _games(folder, ext: str):
    """(record, game) of every game in the folder's files of one format, files in name order."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(ext):
            rec = read_match(os.path.join(folder, name))
            out += [(rec, g) for g in rec.games]
    return out


def _check_legal(rec) -> tuple[int, int]:
    """Every play of the record is one of bgai's legal plays of its position and roll; (moves, cube actions)."""
    moves = cube = 0
    for d in replay(rec):
        if isinstance(d.action, Move):
            legal = {p.afterstate.tobytes() for p in legal_plays(d.board, d.dice)}
            assert d.board_after.tobytes() in legal
            moves += 1
        elif isinstance(d.action, (Double, Take, Drop)):
            cube += 1
    return moves, cube


def test_cubeless_series_saved_files_match_the_report(tmp_path, monkeypatch):
    monkeypatch.setattr(savegames, "SESSION_GAMES", 16)  # sessions of up to 16 games (100 by default)
    saver = GameSaver(tmp_path / "one", parse_formats("mat,sgf"))
    rep = evaluate("pubeval", "racer", 48, 5, chunk_games=24, save=saver)
    assert saver.games == 48 and saver.files_written == 8
    names = sorted(os.listdir(tmp_path / "one"))
    assert names == sorted(f"games-{i:09d}.{e}" for i in (0, 16, 24, 40) for e in ("mat", "sgf"))
    for ext in (".mat", ".sgf"):
        games = _games(tmp_path / "one", ext)
        assert len(games) == 48
        pts = np.array([g.result.points * (1 if g.result.winner == 0 else -1) for _, g in games])
        assert pts.sum() == round(rep.ppg * 48)  # the points the series reports
        assert np.mean(pts > 0) == pytest.approx(rep.a.win)
        assert np.mean(pts >= 2) == pytest.approx(rep.a.gammon)
        assert np.mean(pts <= -2) == pytest.approx(rep.b.gammon)
        recs = {id(r): r for r, _ in games}
        assert all(r.players == ("pubeval", "racer") and r.is_money and not r.jacoby for r in recs.values())
        assert [len(r.games) for r in recs.values()] == [16, 8, 16, 8]
    moves = sum(_check_legal(r)[0] for r in {id(r): r for r, _ in games}.values())
    assert moves == pytest.approx(rep.avg_plies * 48)
    # the same series in 2 worker processes (sessions of 100 games: one file per unit) has the same games
    monkeypatch.undo()  # back to 100 in this process too: forked workers see this process's setting
    saver2 = GameSaver(tmp_path / "two", ("sgf",))
    rep2 = evaluate("pubeval", "racer", 48, 5, chunk_games=24, save=saver2, workers=2)
    assert rep2.workers == 2 and rep2.ppg == rep.ppg
    assert sorted(os.listdir(tmp_path / "two")) == ["games-000000000.sgf", "games-000000024.sgf"]
    two = _games(tmp_path / "two", ".sgf")
    assert [(g.actions, g.result) for _, g in two] == [(g.actions, g.result) for _, g in games]
    assert two[20][1].number == 21 and games[20][1].number == 5  # scores restart with each session file
    # and saving does not change the series
    assert evaluate("pubeval", "racer", 48, 5, chunk_games=24).ppg == rep.ppg


def test_cubeful_money_and_match_files_hold_the_cube_actions(tmp_path):
    saver = GameSaver(tmp_path / "money", ("sgf",))
    rep = evaluate_cubeful(CUBE_AGENT, "pubeval", 24, 3, save=saver)
    games = _games(tmp_path / "money", ".sgf")
    assert len(games) == 24 == rep.games
    pts = sum(g.result.points * (1 if g.result.winner == 0 else -1) for _, g in games)
    assert pts == round(rep.ppg * 24)
    rec = games[0][0]
    assert rec.jacoby and rec.is_money
    moves, cube = _check_legal(rec)
    doubles = sum(isinstance(a, Double) for _, g in games for a in g.actions)
    takes = sum(isinstance(a, Take) for _, g in games for a in g.actions)
    assert doubles == rep.a.doubles + rep.b.doubles > 0 and takes == rep.a.takes + rep.b.takes
    assert cube == 2 * doubles and moves > 24 * 20

    saver = GameSaver(tmp_path / "match", ("mat",))
    rep = evaluate_cubeful(CUBE_AGENT, "pubeval", 4, 9, rules=MatchRules.match(3), save=saver)
    names = sorted(os.listdir(tmp_path / "match"))
    assert names == [f"match-{i:06d}.mat" for i in range(4)]
    wins = 0
    for n in names:
        rec = read_match(tmp_path / "match" / n)
        assert rec.length == 3 and rec.crawford
        _check_legal(rec)
        s0, s1 = rec.final_score()
        assert max(s0, s1) >= 3 > min(s0, s1)
        wins += s0 >= 3
    assert wins / 4 == pytest.approx(rep.match_win)
    assert sum(len(read_match(tmp_path / "match" / n).games) for n in names) == rep.games


@needs_gnubg
def test_gnubg_loads_the_saved_files(tmp_path):
    saver = GameSaver(tmp_path, ("mat", "sgf"))
    evaluate_cubeful(CUBE_AGENT, "pubeval", 6, 4, save=saver)
    rec = read_match(tmp_path / "games-000000000.mat")
    out = _gnubg(f"import mat {tmp_path}/games-000000000.mat\nshow score\n"
                 f"load match {tmp_path}/games-000000000.sgf\nshow score\n")
    assert not re.search(r"(?i)warning|invalid|illegal|unrecognised|not a valid|error", out), out[-2000:]
    s0, s1 = rec.final_score()
    a, b = player_names(CUBE_AGENT, "pubeval")
    shown = re.findall(r"The score \(after (\d+) games?\) is: (\S+) (-?\d+), (\S+) (-?\d+)", out)
    assert shown == [("6", a, str(s0), b, str(s1))] * 2, out[-1500:]


def test_names_and_formats():
    assert player_names("runs/x/best.pt:ply=1", "pubeval") == ("best.pt-ply=1", "pubeval")
    assert player_names("pubeval", "pubeval") == ("pubeval-A", "pubeval-B")
    assert parse_formats("sgf, mat,sgf") == ("sgf", "mat")
    with pytest.raises(BgaiError, match="xg"):
        parse_formats("xg")


def test_cli_save_games_and_errors(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    cmd = [sys.executable, "-m", "bgai", "eval", "pubeval", "racer", "--games", "20", "--no-progress"]
    p = subprocess.run(cmd + ["--save-games", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "saved 20 game(s) in 1 file(s)" in p.stderr and os.listdir(tmp_path / "out") == ["games-000000000.mat"]
    assert len(read_match(tmp_path / "out" / "games-000000000.mat").games) == 20
    p = subprocess.run(cmd + ["--save-format", "sgf"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode != 0 and "--save-format needs --save-games" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "file").write_text("x")
    p = subprocess.run(cmd + ["--save-games", str(tmp_path / "file")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode != 0 and "not a folder" in p.stderr and "Traceback" not in p.stderr


def test_a_folder_with_saved_games_is_refused_and_analysed_once_per_match(tmp_path):
    """QA session 4: a second series into the same folder would overwrite part of the first (refused); a folder
    of the same matches in .mat and .sgf is analysed once per match (from the .sgf)."""
    from bgai.analysis.match_analysis import match_files

    d = tmp_path / "saved"
    evaluate("pubeval", "racer", 4, 1, save=GameSaver(d, parse_formats("mat,sgf")))
    assert sorted(os.listdir(d)) == ["games-000000000.mat", "games-000000000.sgf"]
    with pytest.raises(BgaiError, match="already holds saved games"):
        GameSaver(d, ("mat",))
    assert [os.path.basename(f) for f in match_files([d])] == ["games-000000000.sgf"]
    (d / "other.mat").write_bytes((d / "games-000000000.mat").read_bytes())
    assert [os.path.basename(f) for f in match_files([d])] == ["games-000000000.sgf", "other.mat"]
