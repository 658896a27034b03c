"""``bgai eval`` and ``bgai hint`` from the command line (in-process through bgai.cli.main)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bgai.cli import main

START = "4HPwATDgc/ABMA"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- eval --------------------------------------------------------------------------------------------------------


def test_eval_table_and_json(capsys, tmp_path):
    path = tmp_path / "report.json"
    code, out, err = run(capsys, "eval", "pubeval", "random", "--games", "40", "--seed", "2", "--json", str(path),
                         "--no-progress")
    assert code == 0
    assert "pubeval vs random: 40 games (duplicate dice), seed 2" in out
    assert "95% CI" in out and "games/s" in out
    data = json.loads(path.read_text())
    assert data["games"] == 40 and data["mode"] == "duplicate" and data["seed"] == 2
    assert data["ppg"] > 1.0
    assert data["agent_a"] == "pubeval" and data["agent_b"] == "random"
    assert data["agents"] == {"a": {"spec": "pubeval", "agent": "pubeval", "options": {}},
                              "b": {"spec": "random", "agent": "random", "options": {}}}
    assert {"win", "gammon", "backgammon"} == set(data["a"]) == set(data["b"])
    assert data["a"]["win"] + data["b"]["win"] == pytest.approx(1.0)
    for key in ("ci95", "ci95_low", "ci95_high", "avg_plies", "games_per_s", "stderr"):
        assert isinstance(data[key], float)


def test_eval_plain_mode(capsys):
    code, out, _ = run(capsys, "eval", "racer", "blocker", "--games", "11", "--plain", "--no-progress")
    assert code == 0 and "11 games (plain dice)" in out


def test_eval_same_seed_same_numbers(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for p in (a, b):
        assert run(capsys, "eval", "pubeval", "racer", "--games", "20", "--seed", "5", "--json", str(p),
                   "--no-progress")[0] == 0
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    for k in ("ppg", "ci95", "a", "b", "avg_plies"):
        assert da[k] == db[k]


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["eval", "pubeval", "nobody", "--games", "10"], "unknown agent 'nobody'"),
        (["eval", "pubeval", "random", "--games", "7"], "must be even"),
        (["eval", "missing.pt", "random", "--games", "10"], "missing.pt"),
        (["eval", "pubeval:ply=1", "random", "--games", "10"], "takes no options"),
    ],
)
def test_eval_bad_input_exit_2_and_no_json(capsys, tmp_path, monkeypatch, argv, msg):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "out.json"
    code, out, err = run(capsys, *argv, "--json", str(path), "--no-progress")
    assert code == 2
    assert msg in err and err.startswith("bgai: error:")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_eval_corrupt_checkpoint_exit_2(capsys, tmp_path):
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"this is not a checkpoint")
    out_json = tmp_path / "out.json"
    code, _, err = run(capsys, "eval", str(bad), "pubeval", "--games", "10", "--json", str(out_json), "--no-progress")
    assert code == 2 and "corrupt.pt" in err
    assert not out_json.exists()


@pytest.mark.parametrize("games", ["0", "-4", "ten"])
def test_eval_games_must_be_positive(capsys, games):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "pubeval", "random", "--games", games])
    assert exc.value.code == 2
    assert "--games" in capsys.readouterr().err


# --- hint --------------------------------------------------------------------------------------------------------


def test_hint_table_pubeval(capsys):
    code, out, _ = run(capsys, "hint", START, "31", "--agent", "pubeval")
    assert code == 0
    lines = out.splitlines()
    assert "agent pubeval" in lines[0]
    assert lines[1].split()[1:3] == ["8/5", "6/5"]
    assert len(lines) == 1 + 16 + 1  # 16 distinct plays of 31 from the start, then what the ranking is
    assert lines[-1] == "  ranked by agent score (cubeless; the agent has no probabilities, so the cube and score " \
        "are not used)"


def test_hint_json_pubeval(capsys):
    code, out, _ = run(capsys, "hint", START, "3-1", "--agent", "pubeval", "--json")
    data = json.loads(out)
    assert code == 0 and data["position_id"] == START and data["dice"] == [3, 1]
    plays = data["plays"]
    assert plays[0]["play"] == "8/5 6/5" and plays[0]["position_id"] == "4HPwATCwZ/ABMA"
    eq = [p["score"] for p in plays]  # pubeval's values are scores, not equities
    assert eq == sorted(eq, reverse=True)
    assert "probabilities" not in plays[0] and "equity" not in plays[0] and data["score_kind"] == "score"


def test_hint_json_gnubg_has_probabilities(capsys):
    pytest.importorskip("gnubg_nn")
    code, out, _ = run(capsys, "hint", START, "31", "--agent", "gnubg", "--json")
    plays = json.loads(out)["plays"]
    best = plays[0]
    assert code == 0 and best["play"] == "8/5 6/5"
    pr = best["probabilities"]
    assert set(pr) == {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
    eq = 2 * pr["win"] - 1 + pr["win_gammon"] - pr["lose_gammon"] + pr["win_backgammon"] - pr["lose_backgammon"]
    assert best["equity"] == pytest.approx(eq, abs=1e-5)


def test_hint_no_legal_play(capsys):
    from bgai.core.position import Position

    pos = Position.from_points({1: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}, me_bar=2)
    code, out, _ = run(capsys, "hint", pos.position_id(), "65", "--json")
    plays = json.loads(out)["plays"]
    # the shape of `bgai moves`: one entry, no play, the unchanged position (with the agent's equity)
    assert code == 0 and len(plays) == 1 and plays[0]["play"] == ""
    assert plays[0]["position_id"] == pos.position_id() and isinstance(plays[0]["equity"], float)


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["hint", "notanid", "31"], "Position ID"),
        (["hint", START, "71"], "bad dice"),
        (["hint", START, "31", "--agent", "nobody"], "unknown agent"),
        (["hint", START, "31", "--agent", "random"], "no evaluation"),
    ],
)
def test_hint_bad_input_exit_2(capsys, argv, msg):
    code, _, err = run(capsys, *argv)
    assert code == 2 and msg in err


def test_hint_batch_shape_like_moves_batch(capsys, tmp_path):
    f = tmp_path / "batch.txt"
    f.write_text(f"{START} 31\n{START} 66\nbadline\n{START} 61\n")
    code, out, _ = run(capsys, "hint", "--batch", str(f), "--agent", "pubeval")
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 1  # one bad line
    assert len(lines) == 4
    assert lines[2] == {"line": 3, "error": lines[2]["error"]} and "Position ID 'badline'" in lines[2]["error"]
    assert lines[0]["plays"][0]["play"] == "8/5 6/5"
    assert lines[3]["plays"][0]["play"] == "13/7 8/7"
    # same keys as `bgai moves --batch`, plus equity
    code_m, out_m, _ = run(capsys, "moves", "--batch", str(f))
    moves = [json.loads(x) for x in out_m.splitlines()]
    for h, m in zip(lines, moves):
        if "error" in m:
            assert "error" in h
            continue
        assert set(h) == set(m) == {"position_id", "dice", "plays"}
        assert {p["play"] for p in h["plays"]} == {p["play"] for p in m["plays"]}
        assert all(set(p) == {"play", "position_id", "score"} for p in h["plays"])  # pubeval: a score
        ids = {p["play"]: p["position_id"] for p in m["plays"]}
        assert all(ids[p["play"]] == p["position_id"] for p in h["plays"])


def test_hint_batch_is_one_agent_call(capsys, tmp_path, monkeypatch):
    from bgai.agents.pubeval import PubevalAgent

    calls = []
    original = PubevalAgent.evaluate_plays

    def spy(self, boards, after, src):
        calls.append(len(boards))
        return original(self, boards, after, src)

    monkeypatch.setattr(PubevalAgent, "evaluate_plays", spy)
    rng = np.random.default_rng(0)
    f = tmp_path / "b.txt"
    f.write_text("".join(f"{START} {rng.integers(1, 7)}{rng.integers(1, 7)}\n" for _ in range(30)))
    code, out, _ = run(capsys, "hint", "--batch", str(f), "--agent", "pubeval")
    assert code == 0 and len(out.splitlines()) == 30
    assert calls == [30]


def test_hint_batch_stdin(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(f"{START} 42\n"))
    code, out, _ = run(capsys, "hint", "--batch", "-", "--agent", "pubeval")
    assert code == 0 and json.loads(out)["plays"][0]["play"] == "8/4 6/4"


def test_eval_json_names_the_model_default_stood_for(capsys, tmp_path, monkeypatch):
    """``default`` in a report is recorded with the file it resolved to and that file's sha256, so the report
    still says which model played after checkpoints/models.json names another."""
    from bgai.agents.registry import default_model_spec
    from bgai.util.fileio import file_sha256

    monkeypatch.delenv("BGAI_MODEL", raising=False)
    path = tmp_path / "report.json"
    code, _, _ = run(capsys, "eval", "default:ply=0", "racer", "--games", "4", "--seed", "1", "--json", str(path),
                     "--no-progress")
    assert code == 0
    data = json.loads(path.read_text())
    shipped = default_model_spec()
    assert data["agent_a"] == "default:ply=0"
    assert data["agents"]["a"] == {"spec": shipped + ":ply=0", "model_sha256": file_sha256(shipped),
                                   "options": {"ply": 0}}
    assert data["agents"]["b"] == {"spec": "racer", "agent": "racer", "options": {}}
