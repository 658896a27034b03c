"""``bgai serve ubgi``: a scripted UBGI user interface drives the engine as a subprocess over pipes.

The handshake, best actions for FIBS boards and XGIDs (plays checked step by step against bgai's legal plays and
against :func:`bgai.analysis.api.rank_plays`; cube answers against :func:`bgai.analysis.api.decide_cube`), the
blank line when nothing is legal, ``sorry`` for garbage, ``analyse``, ``rollout`` (exact and known values, the
seed, ``stop`` while stdin stays answered) and ``quit``.  No UBGI user interface is published (PyPI has no UBGI
client), so the UI here is the test itself.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.analysis.api import CubeState, decide_cube, evaluate_position, rank_plays
from bgai.core.board import BAR, flip, starting_board
from bgai.core.movegen import legal_plays
from bgai.formats.fibs import FIBSState, format_fibs_board
from bgai.formats.xgid import XGIDState, encode_xgid
from bgai.game.play import dice_rng, play_games
from bgai.serve.ubgi import UBGIEngine, format_move, plain_rollout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOVE_RE = re.compile(r"^(?:(?:25|2[0-4]|1[0-9]|[0-9])/(?:2[0-4]|1[0-9]|[0-9]))(?: (?:25|2[0-4]|1[0-9]|[0-9])/(?:2[0-4]|1[0-9]|[0-9])){0,3}$")

pytest.importorskip("gnubg_nn")

#: pubeval's play of the opening 5-2 (bgai's rank_plays; the engine must answer the same)
PUBEVAL_52 = format_move(rank_plays(make_agent("pubeval"), starting_board(), (5, 2))[0].play.steps)


class Engine:
    """The engine as a subprocess, read line by line with a timeout."""

    def __init__(self, agent: str = "gnubg", *args: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(
            [sys.executable, "-m", "bgai", "serve", "ubgi", "--agent", agent, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, cwd=ROOT, env=env,
        )
        self.buf = b""

    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode()
        self.p.stdin.write(data + b"\n")
        self.p.stdin.flush()

    def line(self, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            assert left > 0, f"no answer within {timeout} s (have {self.buf!r})"
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                assert chunk, f"the engine closed its output (exit {self.p.poll()}): {self.stderr()}"
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def ask(self, command: str, timeout: float = 60.0) -> str:
        self.send(command)
        return self.line(timeout)

    def until_readyok(self, timeout: float = 60.0) -> list[str]:
        out = []
        while True:
            ln = self.line(timeout)
            if ln == "readyok":
                return out
            out.append(ln)

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def finish(self, timeout: float = 30.0) -> int:
        try:
            self.p.stdin.close()
        except OSError:
            pass
        return self.p.wait(timeout)


@pytest.fixture(scope="module")
def gnubg():
    return make_agent("gnubg")


@pytest.fixture(scope="module")
def engine():
    e = Engine("gnubg")
    assert e.ask("ubgi") == "id name bgai gnubg"
    assert e.line().startswith("id author ")
    assert re.fullmatch(r"id version \d+\.\d+\.\d+\S*", e.line())
    assert e.line() == "readyok"
    yield e
    e.send("quit")
    assert e.finish() == 0
    assert "Traceback" not in e.stderr()


# --------------------------------------------------------------------------------------------------- positions


def _positions(n_games: int, seed: int) -> list[np.ndarray]:
    """Positions of random games (mover's view, before the roll): every 3rd ply."""
    agent = make_agent("random")
    res = play_games((agent, agent), [dice_rng(seed, g) for g in range(n_games)], np.random.default_rng(seed),
                     record=True)
    out = []
    for rec in res.records:
        out.extend(rec.positions()[1::3])
    return out


def _xgid(board, state, dice=None, double_offered=False) -> str:
    return encode_xgid(XGIDState.from_cube_state(board, state, dice, double_offered=double_offered))


def _fibs(board, state, dice=None, doubled=False) -> str:
    return format_fibs_board(FIBSState.from_cube_state(board, state, dice, doubled=doubled), scores="fibs")


def _apply_pairs(board: np.ndarray, dice: tuple[int, int], text: str) -> np.ndarray:
    """Play UBGI from-to pairs one die each (the test's own rules for one step); asserts each step is legal."""
    pool = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
    b = board.astype(np.int16).copy()
    for pair in text.split():
        f, t = (int(x) for x in pair.split("/"))
        assert 1 <= f <= 25 and 0 <= t <= 24 and f > t, pair
        assert b[0, f - 1] > 0, f"{text}: no checker on {f}"
        assert f == 25 or b[0, BAR] == 0, f"{text}: {pair} with a checker on the bar"
        if t > 0:
            die = f - t
            assert die in pool, f"{text}: {pair} is not one die of {dice}"
            assert b[1, 24 - t] < 2, f"{text}: {pair} lands on a made point"
        else:
            assert b[0, 6:25].sum() == 0, f"{text}: bears off with checkers outside home"
            exact = [d for d in pool if d == f]
            higher = [d for d in pool if d > f] if b[0, f:6].sum() == 0 else []
            assert exact or higher, f"{text}: {pair} cannot bear off with {pool}"
            die = exact[0] if exact else min(higher)
        pool.remove(die)
        b[0, f - 1] -= 1
        if t > 0:
            b[0, t - 1] += 1
            if b[1, 24 - t] == 1:
                b[1, 24 - t] = 0
                b[1, BAR] += 1
    return b.astype(np.int8)


def _states():
    yield CubeState()
    yield CubeState(cube_value=2, owner=0)
    yield CubeState(match_length=7, score=(3, 5))
    yield CubeState(match_length=5, score=(4, 2), crawford=True)
    yield CubeState(cube_value=2, owner=1, match_length=9, score=(2, 6))


# ------------------------------------------------------------------------------------------------------ tests


def test_handshake_isready_and_sorry_before_ubgi():
    e = Engine("pubeval")
    assert e.ask("isready") == "sorry"
    assert e.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") == "sorry"
    assert e.ask("ubgi") == "id name bgai pubeval"
    assert e.line().startswith("id author ")
    assert e.line().startswith("id version ")
    assert e.line() == "readyok"
    assert e.ask("isready") == "readyok"
    assert e.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") == PUBEVAL_52
    e.send("quit")
    assert e.finish() == 0
    err = e.stderr()
    assert "send ubgi first" in err and "Traceback" not in err


def test_opening_moves_written_out(engine, gnubg):
    """The draft's own examples: a leaping play split (65: 24/18 18/13), doubles repeated, no '*' or '(2)'."""
    start = starting_board()
    assert engine.ask(_xgid(start, CubeState(), (6, 5))) == "24/18 18/13"
    for dice in [(3, 3), (6, 6), (4, 2), (2, 1)]:
        ans = engine.ask(_xgid(start, CubeState(), dice))
        best = rank_plays(gnubg, start, dice, CubeState())[0]
        assert ans == format_move(best.play.steps)
        assert len(ans.split()) == (4 if dice[0] == dice[1] else 2)
        assert "*" not in ans and "(" not in ans and "bar" not in ans
    # a hit and an entry from the bar: 25 for the bar, no '*'
    b = starting_board()
    b[0, 23] -= 1
    b[0, BAR] = 1
    b[1, 23] -= 1
    b[1, 3] = 1  # an opponent blot on its 4 point, the mover's 21 point: entering with the 4 hits it
    ans = engine.ask(_xgid(b, CubeState(), (6, 4)))
    assert ans.startswith("25/21") and "*" not in ans
    assert np.array_equal(_apply_pairs(b, (6, 4), ans), rank_plays(gnubg, b, (6, 4), CubeState())[0].afterstate)


def test_plays_are_legal_and_the_agents_best_fibs_and_xgid(engine, gnubg):
    rng = np.random.default_rng(7)
    states = list(_states())
    checked = doubles = bar = off = 0
    for k, board in enumerate(_positions(6, 11)[:60]):
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        state = states[k % len(states)]
        text = _xgid(board, state, dice) if k % 2 else _fibs(board, state, dice)
        ans = engine.ask(text)
        ranked = rank_plays(gnubg, board, dice, state)
        if not ranked[0].play.steps:
            assert ans == ""
            continue
        assert MOVE_RE.fullmatch(ans), (text, ans)
        after = _apply_pairs(board, dice, ans)
        legal = {p.afterstate.tobytes() for p in legal_plays(board, dice)}
        assert after.tobytes() in legal, (text, ans)
        assert np.array_equal(after, ranked[0].play.afterstate), (text, ans, ranked[0].notation)
        assert len(ans.split()) == len(ranked[0].play.steps)
        checked += 1
        doubles += dice[0] == dice[1]
        bar += ans.startswith("25/")
        off += "/0" in ans
    assert checked >= 40 and doubles >= 5 and bar >= 1


def test_cube_answers_agree_with_decide_cube(engine, gnubg):
    answers = {"double": 0, "roll": 0, "take": 0, "drop": 0}
    states = list(_states())
    for k, board in enumerate(_positions(4, 5)[::2][:48]):
        state = states[k % len(states)]
        text = _xgid(board, state) if k % 2 else _fibs(board, state)
        ans = engine.ask(text)
        want = decide_cube(gnubg, board, state)
        assert ans == ("double" if want.double else "roll"), text
        answers[ans] += 1
        if not state.may_double():
            continue
        # the side on roll doubles: XGID from the doubler's view with dice D; FIBS board from the doubled side's
        if k % 2:
            ans = engine.ask(_xgid(board, state, double_offered=True))
            want_take = decide_cube(gnubg, board, state).take
        else:
            ans = engine.ask(_fibs(flip(board), state.swapped(), doubled=True))
            want_take = decide_cube(gnubg, flip(board), state.swapped(), doubled=True).take
        assert ans == ("take" if want_take else "drop"), text
        answers[ans] += 1
    assert all(answers.values()), answers


def test_no_legal_play_is_a_blank_line_and_garbage_is_sorry(engine):
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, BAR] = 1
    b[0, 12] = 14
    b[1, 0:6] = 2
    b[1, 12] = 3  # the opponent's home board is closed: nothing enters
    assert engine.ask(_xgid(b, CubeState(), (6, 3))) == ""
    assert engine.ask(_fibs(b, CubeState(), (2, 2))) == ""
    for junk in [
        "hello",
        "board:a:b:1:2:3",
        "XGID=zzzz",
        "XGID=-b----E-C---eE---c-e----B-:0:0:1:77:0:0:3:0:10",  # dice 7
        "XGID=--------------------------:0:0:1:52:0:0:3:0:10",  # no checkers: the game is over
        "analyse",
        "analyse hello",
        "rollout",
        "rollout XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10",  # dice: not a rollout before the roll
        "rollout XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10 trials",
        "rollout XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10 trials 0",
        "rollout XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10 depth 3",
        "UBGI?",
    ]:
        assert engine.ask(junk) == "sorry", junk
    engine.send(b"\xff\xfe\x00garbage")
    assert engine.line() == "sorry"
    engine.send("x" * 10000)
    assert engine.line() == "sorry"
    engine.send("")  # a blank line gets no answer: the next answer is isready's
    assert engine.ask("isready") == "readyok"
    assert engine.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") == "24/22 13/8"


def _info(line: str) -> dict[str, str]:
    toks = line.split()
    assert toks[0] == "info"
    return dict(zip(toks[1::2], toks[2::2]))


def test_analyse_reports_the_evaluation(engine, gnubg):
    board = _positions(1, 3)[10]
    for state in (CubeState(), CubeState(match_length=7, score=(3, 5))):
        lines = engine.send(f"analyse {_xgid(board, state)}") or engine.until_readyok()
        ev = evaluate_position(gnubg, board, state)
        probs = _info(lines[0])
        assert list(probs) == ["win", "wingammon", "winbackgammon", "losegammon", "losebackgammon"]
        assert np.allclose([float(v) for v in probs.values()], ev.probabilities, atol=6e-7)
        eq = _info(lines[1].replace("info equity", "info"))
        assert abs(float(eq["cubeless"]) - ev.cubeless_equity) < 6e-7
        assert abs(float(eq["cubeful"]) - ev.cubeful_equity) < 6e-7
        if state.is_money:
            assert "mwc" not in eq
        else:
            assert abs(float(eq["mwc"]) - ev.mwc) < 6e-7
        cube = _info(lines[2].replace("info cube", "info"))
        assert abs(float(cube["nodouble"]) - ev.cube.no_double) < 6e-7
        assert lines[3] == "info best " + ("double" if ev.cube.double else "roll")
    # with dice: the ranked plays, the move last on each line
    dice = (5, 3)
    lines = engine.send(f"analyse {_fibs(board, CubeState(), dice)}") or engine.until_readyok()
    ranked = rank_plays(gnubg, board, dice, CubeState())
    plays = [ln for ln in lines if ln.startswith("info play ")]
    assert len(plays) == min(10, len(ranked))
    for i, (ln, rp) in enumerate(zip(plays, ranked), 1):
        head, _, move = ln.partition(" move ")
        assert head.startswith(f"info play {i} equity ")
        assert move == format_move(rp.play.steps)
        assert abs(float(head.split()[4]) - rp.equity) < 6e-7
    assert lines[-1] == "info best " + format_move(ranked[0].play.steps)


def test_rollout_exact_and_known_values(engine):
    # the side on roll bears off its last checker with any roll: equity +1 exactly
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 0] = 1
    b[1, 5] = 1
    lines = engine.send(f"rollout {_xgid(b, CubeState())} trials 72") or engine.until_readyok()
    assert lines[-2:] == ["info trials 72 equity +1.000000 se 0.000000",
                          ("info win 1.000000 wingammon 0.000000 winbackgammon 0.000000 losegammon 0.000000 "
                           "losebackgammon 0.000000")]
    # one checker each on the 6 point: 27 of 36 rolls bear off (sum >= 6, or 2-2), so the side on roll wins
    # 27/36 + (9/36)^2 = 0.8125 of the games: equity 0.625
    b[0, 0], b[0, 5] = 0, 1
    lines = engine.send(f"rollout {_xgid(b, CubeState())} trials 1296 seed 3") or engine.until_readyok()
    info = _info(lines[-2])
    eq, se = float(info["equity"]), float(info["se"])
    # variance reduction (bgai.analysis.rollout) takes the luck out of every roll; with the agent's exact
    # evaluation of this race nothing is left: the standard error is 0 up to rounding and the result exact
    assert info["trials"] == "1296" and se < 0.005, info
    assert abs(eq - 0.625) < max(4 * se, 1e-3), info
    assert abs(float(_info(lines[-1])["win"]) - 0.8125) < max(2 * se, 1e-3)
    # the same seed gives the same result
    again = engine.send(f"rollout {_xgid(b, CubeState())} trials 1296 seed 3") or engine.until_readyok()
    assert again[-2:] == lines[-2:]


def test_rollout_progress_stop_and_responsive_stdin():
    e = Engine("pubeval")
    e.ask("ubgi")
    e.until_readyok()
    start = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10"
    e.send(f"rollout {start} trials 1000000 seed 1")
    first = e.line(30)
    m = re.fullmatch(r"info trials (\d+) equity ([-+]\d+\.\d{6}) se (\d+\.\d{6})", first)
    assert m, first
    assert int(m.group(1)) % 36 == 0 and abs(float(m.group(2))) < 1.0
    assert e.ask("isready") == "readyok"  # stdin is read while the rollout runs
    assert e.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") == "sorry"  # busy
    t0 = time.monotonic()
    e.send("stop")
    lines = e.until_readyok(30)
    assert time.monotonic() - t0 < 10
    final = _info(lines[-2])
    assert 36 <= int(final["trials"]) < 1000000 and int(final["trials"]) % 36 == 0
    assert abs(float(final["equity"])) < 4 * float(final["se"]) + 0.1  # the opening position is about even
    assert lines[-1].startswith("info win ")
    assert all(ln.startswith("info trials ") for ln in lines[:-2])
    assert e.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") == PUBEVAL_52  # free again
    # quit during a rollout ends the process at once, status 0
    e.send(f"rollout {start} trials 1000000")
    e.line(30)
    e.send("quit")
    assert e.finish(20) == 0
    assert "Traceback" not in e.stderr()


def test_end_of_input_ends_the_engine_and_bad_agent_is_one_line():
    e = Engine("pubeval")
    assert e.finish() == 0
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "bgai", "serve", "ubgi", "--agent", "nonesuch"], input=b"ubgi\n",
                       capture_output=True, cwd=ROOT, env=env, timeout=60)
    assert p.returncode == 2 and p.stdout == b""
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "unknown agent 'nonesuch'" in err and "Traceback" not in err


def test_engine_in_process_builds_the_agent_only_at_ubgi():
    built = []
    out: list[str] = []

    def make(spec):
        built.append(spec)
        from bgai.serve.bot import Bot
        return Bot.from_spec(spec)

    e = UBGIEngine("pubeval", out.append, make_bot=make, log=lambda s: out.append("LOG " + s))
    assert e.handle("stop") and e.handle("") and built == [] and out == []
    assert e.handle("ubgi") and built == ["pubeval"] and out[-1] == "readyok"
    assert e.handle("ubgi") and built == ["pubeval"]  # not built twice
    assert e.handle("quit") is False


def test_an_agent_that_cannot_be_built_is_sorry_and_logged():
    from bgai.errors import CheckpointError

    out: list[str] = []

    def make(spec):
        raise CheckpointError("model file 'broken.pt' is not a bgai checkpoint")

    e = UBGIEngine("broken.pt", out.append, make_bot=make, log=lambda s: out.append("LOG " + s))
    assert e.handle("ubgi")
    assert out == ["LOG 'ubgi': cannot build agent 'broken.pt': model file 'broken.pt' is not a bgai checkpoint",
                   "sorry"]
    assert e.handle("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10") and out[-1] == "sorry"


def test_plain_rollout_is_seeded_and_stoppable():
    agent = make_agent("pubeval")
    b = starting_board()
    r1 = plain_rollout(agent, b, trials=72, seed=5)
    r2 = plain_rollout(agent, b, trials=72, seed=5, chunk_trials=72)  # the dice do not depend on the batches
    assert r1.trials == 72 and not r1.partial
    assert r1.equity == r2.equity and np.array_equal(r1.probabilities, r2.probabilities)
    calls = []

    def progress(done, asked, eq, se):
        calls.append(done)
        if done >= 72:
            raise KeyboardInterrupt

    r3 = plain_rollout(agent, b, trials=720, seed=5, progress=progress)
    assert calls == [36, 72] and r3.partial and r3.trials == 72 and r3.equity == r1.equity
