"""Terminal play: starting from a position (``--position``), saving the session (``save FILE``, ``--save FILE``, also
after Ctrl-C) as ``.mat``/``.sgf`` match files that read back with :func:`bgai.formats.matchfile.read_match`, replay
legally and, where GNU Backgammon is installed, import into ``gnubg -t`` without complaint."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from bgai.core.board import flip, starting_board
from bgai.core.cube_state import CubeState
from bgai.core.movegen import legal_plays
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import BgaiError
from bgai.formats.matchfile import read_match
from bgai.formats.matchrecord import AcceptResign, Double, Drop, Move, Resign, Take, replay
from bgai.formats.request import read_position_request
from bgai.formats.xgid import XGIDState, encode_xgid
from bgai.serve.bot import Bot
from bgai.tui.terminal import BOT, HUMAN, TerminalGame

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GNUBG = "/usr/games/gnubg"
needs_gnubg = pytest.mark.skipif(not os.path.exists(GNUBG) or shutil.which(GNUBG) is None,
                                 reason="GNU Backgammon (gnubg -t) is not installed")


def _gnubg(commands: str) -> str:
    p = subprocess.run([GNUBG, "-t", "-q"], input=commands, capture_output=True, text=True, timeout=60, check=False)
    return p.stdout + p.stderr


class Driver:
    """Answers the prompts from what the game shows: random legal plays, some doubles, takes and drops, a
    resignation now and then, ``save`` commands at given prompt numbers."""

    def __init__(self, seed: int, saves: dict[int, str] | None = None, resign_every: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.out: list[str] = []
        self.game: TerminalGame | None = None
        self.typed: list[tuple[bytes, bytes]] = []  # (board before, afterstate) of every play you made
        self.saves = dict(saves or {})
        self.resign_every = resign_every
        self.prompts = 0

    def say(self, text: str) -> None:
        self.out.append(text)

    def ask(self, prompt: str) -> str:
        g = self.game
        self.out.append(prompt)
        self.prompts += 1
        assert self.prompts < 5000, "the session does not end"
        if self.prompts in self.saves:
            return "save " + self.saves.pop(self.prompts)
        if prompt.startswith("your play"):
            if self.resign_every and self.rng.integers(self.resign_every) == 0:
                return f"resign {int(self.rng.integers(1, 4))}"
            plays = legal_plays(g.board, g.dice)
            p = plays[int(self.rng.integers(len(plays)))]
            self.typed.append((np.asarray(g.board, dtype=np.int8).tobytes(), p.afterstate.tobytes()))
            return p.notation
        if prompt.startswith("roll or double"):
            return "double" if self.rng.random() < 0.15 else "roll"
        if prompt.startswith("take or drop"):
            return "take" if self.rng.random() < 0.7 else "drop"
        if prompt.startswith("Another game"):
            return "y" if g.match.games < 3 else "n"
        raise AssertionError(f"unexpected prompt {prompt!r}")


def _run(driver: Driver, spec: str = "pubeval", **kw) -> TerminalGame:
    g = TerminalGame(Bot.from_spec(spec), rng=np.random.default_rng(int(driver.rng.integers(1 << 30))),
                     ask=driver.ask, say=driver.say, **kw)
    driver.game = g
    assert g.run() == 0
    return g


def _check_legal_and_yours(rec, typed: list[tuple[bytes, bytes]]) -> int:
    """Every recorded play is one of bgai's legal plays of its position; your plays are those you typed."""
    yours = []
    moves = 0
    for d in replay(rec):
        if isinstance(d.action, Move):
            legal = {p.afterstate.tobytes() for p in legal_plays(d.board, d.dice)}
            assert d.board_after.tobytes() in legal
            moves += 1
            if d.player == HUMAN and d.action.steps:
                yours.append((d.board.tobytes(), d.board_after.tobytes()))
    assert yours == typed
    return moves


def test_a_match_saved_read_back_and_replayed(tmp_path):
    mid = tmp_path / "mid.sgf"
    d = Driver(8, saves={40: str(mid)}, resign_every=25)  # a match past prompt 40, with an accepted resignation
    g = _run(d, match_length=5)
    text = "\n".join(d.out)
    assert g.match.is_over and re.search(rf"Saved \d+ games? to {re.escape(str(mid))}\.", text)
    g.save(str(tmp_path / "m.mat"))
    g.save(str(tmp_path / "m.sgf"))
    recs = [read_match(tmp_path / "m.mat"), read_match(tmp_path / "m.sgf")]
    for rec in recs:
        assert rec.length == 5 and rec.players == ("you", "bgai")
        assert len(rec.games) == g.match.games and all(gr.result is not None for gr in rec.games)
        assert rec.final_score() == g.match.score
        assert _check_legal_and_yours(rec, d.typed) > 20
    acts = [a for gr in recs[1].games for a in gr.actions]
    assert any(isinstance(a, Double) for a in acts) and any(isinstance(a, (Take, Drop)) for a in acts)
    assert any(isinstance(a, Resign) for a in acts)
    # the mid-match save is the same match up to where it was made (its last game unfinished)
    early = read_match(mid)
    assert 1 <= len(early.games) <= len(recs[1].games)
    last = early.games[-1]
    assert early.games[:-1] == recs[1].games[: len(early.games) - 1]
    assert recs[1].games[len(early.games) - 1].actions[: len(last.actions)] == last.actions
    if os.path.exists(GNUBG):
        out = _gnubg(f"import mat {tmp_path}/m.mat\nshow score\nload match {tmp_path}/m.sgf\nshow score\n")
        assert not re.search(r"(?i)warning|invalid|illegal|unrecognised|not a valid|error", out), out[-2000:]
        s0, s1 = g.match.score
        assert re.findall(r"The score \(after (\d+) games?\) is: you (\d+), bgai (\d+)", out) == \
            [(str(g.match.games), str(s0), str(s1))] * 2, out[-1500:]


def test_money_session_with_save_at_the_end(tmp_path):
    d = Driver(8)
    path = tmp_path / "money.mat"
    g = _run(d, save_path=str(path))
    assert not path.exists()  # --save writes when the session ends (save_at_end), not before
    assert g.save_at_end() == 0
    rec = read_match(path)
    assert rec.length == 0 and rec.jacoby and len(rec.games) == 3
    assert rec.final_score() == g.match.score
    _check_legal_and_yours(rec, d.typed)


def _race() -> np.ndarray:
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, [0, 1, 2, 3, 4, 5]] = [2, 2, 1, 1, 1, 1]  # you: 8 checkers home
    b[1, [0, 1, 2, 3, 4, 5]] = [1, 2, 2, 2, 1, 1]  # the bot: 9 checkers home
    return b


def test_start_from_an_xgid_with_dice_and_save_as_sgf(tmp_path):
    board = _race()
    xgid = encode_xgid(XGIDState.from_cube_state(board, CubeState(), (6, 2)))
    d = Driver(1)
    g = _run(d, start=read_position_request(xgid), start_text=xgid)
    text = "\n".join(d.out)
    assert f"from the position {xgid}: you are X, on roll." in text
    assert "Your roll: 6-2." in text  # the position's own dice, not a fresh roll
    with pytest.raises(BgaiError, match=r"\.mat file cannot hold a game that starts from a set-up position"):
        g.save(str(tmp_path / "x.mat"))
    g.save(str(tmp_path / "x.sgf"))
    rec = read_match(tmp_path / "x.sgf")
    first = rec.games[0]
    assert np.array_equal(first.start_board(), board) and first.result is not None
    assert first.actions[0] == Move(HUMAN, (6, 2), first.actions[0].steps)
    assert len(rec.games) == 3 and all(gr.setup is None for gr in rec.games[1:])  # later games: opening position
    _check_legal_and_yours(rec, d.typed)
    if os.path.exists(GNUBG):
        out = _gnubg(f"load match {tmp_path}/x.sgf\nshow score\n")
        assert not re.search(r"(?i)warning|invalid|illegal|unrecognised|not a valid|error", out), out[-2000:]
        s0, s1 = g.match.score
        assert f"is: you {s0}, bgai {s1}" in out, out[-1500:]


def test_start_with_the_bots_double_pending(tmp_path):
    """Position ID:Match ID with the bot's double pending: you take or drop first; the record has the double."""
    board = _race()
    req = read_position_request(encode_xgid(XGIDState.from_cube_state(flip(board), CubeState(),
                                                                       double_offered=True)))
    out: list[str] = []
    answers = iter(["hint", "take"] + ["quit"] * 5)
    g = TerminalGame(Bot.from_spec("gnubg" if _has_gnubg_nn() else "pubeval"), rng=np.random.default_rng(2),
                     ask=lambda p: out.append(p) or next(answers), say=out.append, start=req)
    assert g.match.offered_by == BOT
    assert g.run() == 0
    text = "\n".join(out)
    assert "answering bgai's double" in text and "You take: the cube is on 2, yours." in text
    rec = g.record()
    acts = rec.games[0].actions
    assert acts[:3] == (Double(BOT), Take(HUMAN), acts[2]) and acts[2].player == BOT
    g.save(str(tmp_path / "d.sgf"))
    assert read_match(tmp_path / "d.sgf") == rec
    if os.path.exists(GNUBG):
        out = _gnubg(f"load match {tmp_path}/d.sgf\nshow board\n")
        assert not re.search(r"(?i)warning|invalid|illegal|unrecognised|not a valid|error", out), out[-2000:]
        assert "(Cube: 2)" in out


def _has_gnubg_nn() -> bool:
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return False
    return True


def test_start_from_a_match_id_keeps_cube_and_score_but_cannot_be_saved(tmp_path):
    pid = encode_position_id(starting_board())
    # gnubg: 7-point match, score 3-1 for the player on roll, cube 2 owned by the player on roll
    from bgai.formats.match_id import MatchState, encode_match_id

    ms = MatchState(cube_value=2, cube_owner=0, player_on_roll=0, crawford=False, game_state=1, turn=0,
                    double_offered=False, dice=(0, 0), match_length=7, score=(3, 1), jacoby=False)
    text = f"{pid}:{encode_match_id(ms)}"
    out: list[str] = []
    g = TerminalGame(Bot.from_spec("pubeval"), rng=np.random.default_rng(0), ask=lambda p: out.append(p) or "quit",
                     say=out.append, start=read_position_request(text), start_text=text)
    m = g.match
    assert (m.rules.length, m.score, m.cube_value, m.cube_owner) == (7, (3, 1), 2, HUMAN)
    assert g.run() == 0
    assert "Score: you 3, bgai 1 (match to 7)" in "\n".join(out)
    with pytest.raises(BgaiError, match="score 3-1 and the cube on 2.*cannot be saved"):
        g.save(str(tmp_path / "s.sgf"))
    with pytest.raises(BgaiError, match="cannot be saved"):
        TerminalGame(Bot.from_spec("pubeval"), rng=np.random.default_rng(0), start=read_position_request(text),
                     save_path=str(tmp_path / "s.sgf"))
    with pytest.raises(BgaiError, match="--match 5 conflicts with the position, which is a 7-point match"):
        TerminalGame(Bot.from_spec("pubeval"), match_length=5, rng=np.random.default_rng(0),
                     start=read_position_request(text))
    # a bare Position ID with --match starts that match at 0-0
    g = TerminalGame(Bot.from_spec("pubeval"), match_length=3, rng=np.random.default_rng(0),
                     start=read_position_request(pid))
    assert (g.match.rules.length, g.match.score, g.match.cube_value) == (3, (0, 0), 1)


def _read_until_prompt(proc, timeout=60.0) -> str:
    buf = b""
    end = time.time() + timeout
    fd = proc.stdout.fileno()
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            if buf.endswith(b"> "):
                break
    return buf.decode()


def test_bgai_play_save_after_ctrl_c(tmp_path):
    """``bgai play --save FILE.mat``: Ctrl-C in the middle of a game still writes the games so far."""
    path = tmp_path / "cut.mat"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "play", "--agent", "pubeval", "--match", "3", "--seed", "5",
         "--save", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
        # a shell's background job inherits SIGINT ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    transcript, sent = [], 0
    try:
        while sent < 6:
            text = _read_until_prompt(proc)
            assert text, "".join(transcript)[-2000:]
            transcript.append(text)
            prompt = text.rsplit("\n", 1)[-1]
            if prompt.startswith("your play"):
                all_text = "".join(transcript)
                board = decode_position_id(re.findall(r"Position ID: (\S+)", all_text)[-1])
                roll = re.findall(r"Your roll: (\d)-(\d)", all_text)[-1]
                answer = legal_plays(board, (int(roll[0]), int(roll[1])))[0].notation
                sent += 1
            elif prompt.startswith("take or drop"):
                answer = "take"
            else:
                answer = "roll"
            proc.stdin.write((answer + "\n").encode())
            proc.stdin.flush()
        _read_until_prompt(proc)
        time.sleep(1.0)  # past the prompt into the read: a signal before input() blocks waits for the next line
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = proc.stdout.read().decode()
    assert rc == 130, rest
    assert f"Saved 1 game to {path}." in rest and "Traceback" not in rest
    rec = read_match(path)
    assert len(rec.games) == 1 and rec.games[0].result is None  # the game in progress, unfinished
    yours = [a for a in rec.games[0].actions if isinstance(a, Move) and a.player == HUMAN and a.steps]
    assert len(yours) == sent
    assert not any(isinstance(a, AcceptResign) for a in rec.games[0].actions)
    if os.path.exists(GNUBG):
        out = _gnubg(f"import mat {path}\nshow board\n")
        assert not re.search(r"(?i)warning|invalid|illegal|unrecognised|not a valid|error", out), out[-2000:]


def test_bad_position_and_save_arguments_are_one_line_errors(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    for args, msg in [
        (["--position", "nonsense!"], "Position ID"),
        (["--save", str(tmp_path / "x.doc")], "cannot tell the match file format"),
        (["--position", encode_position_id(starting_board()), "--save", str(tmp_path / "x.mat")],
         ".mat file cannot hold a game that starts from a set-up position"),
    ]:
        p = subprocess.run([sys.executable, "-m", "bgai", "play", "--agent", "pubeval", *args], input=b"quit\n",
                           capture_output=True, cwd=ROOT, env=env, timeout=60, check=False)
        err = p.stderr.decode()
        assert p.returncode == 2 and msg in err and "Traceback" not in err, (args, err)
        assert err.count("\n") == 1, err
