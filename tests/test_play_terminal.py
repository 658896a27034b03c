"""Terminal play: a whole match driven through the prompts (in process and through stdin of ``bgai play``),
helpful errors for unreadable, illegal and ambiguous plays, hints, cube actions and the score."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

import numpy as np
import pytest

from bgai.core.movegen import legal_plays
from bgai.core.position_id import decode_position_id
from bgai.serve.bot import Bot
from bgai.tui.terminal import HUMAN, TerminalGame

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Driver:
    """Answers the game's prompts like a person would, from what the game shows; records the transcript."""

    def __init__(self, seed: int, double_every: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.out: list[str] = []
        self.game: TerminalGame | None = None
        self.plays = 0
        self.errors_shown = 0
        self.double_every = double_every
        self.prompts = 0

    def say(self, text: str) -> None:
        self.out.append(text)

    def ask(self, prompt: str) -> str:
        g = self.game
        self.out.append(prompt)
        self.prompts += 1
        assert self.prompts < 5000, "the game does not end"
        if prompt.startswith("your play"):
            if self.plays == 0 and self.errors_shown == 0:
                self.errors_shown = 1
                return "hello"  # unreadable
            if self.plays == 0 and self.errors_shown == 1:
                self.errors_shown = 2
                return "hint"
            plays = legal_plays(g.board, g.dice)
            self.plays += 1
            return plays[int(self.rng.integers(len(plays)))].notation
        if prompt.startswith("roll or double"):
            if self.double_every and self.rng.integers(self.double_every) == 0:
                return "double"
            return ""
        if prompt.startswith("take or drop"):
            return "take" if self.rng.random() < 0.7 else "drop"
        if prompt.startswith("Another game"):
            return "n"
        raise AssertionError(f"unexpected prompt {prompt!r}")


def _play_match(spec: str, length: int, seed: int) -> tuple[Driver, TerminalGame, int]:
    d = Driver(seed, double_every=4)
    g = TerminalGame(Bot.from_spec(spec), match_length=length, rng=np.random.default_rng(seed), ask=d.ask, say=d.say)
    d.game = g
    status = g.run()
    return d, g, status


def _points(text: str) -> list[tuple[str, int]]:
    out = []
    for m in re.finditer(r"^(You|bgai) wins? (?:a single game|a gammon|a backgammon)?:? ?(\d+) points?", text, re.M):
        out.append((m.group(1), int(m.group(2))))
    return out


def test_a_whole_match_through_the_prompts():
    d, g, status = _play_match("pubeval", 5, seed=4)
    text = "\n".join(d.out)
    assert status == 0
    assert g.match.is_over and max(g.match.score) >= 5
    assert re.search(r"(You win the match!|bgai wins the match\.)", text)
    assert "Cannot read 'hello'" in text and "Write plays like 13/8 13/11" in text
    assert "would play:" in text  # the hint
    # every game's result adds up to the final score
    results = re.findall(r"^(You|bgai) wins? .*?(\d+) points?[ .(]", text, re.M)
    you = sum(int(p) for w, p in results if w == "You")
    them = sum(int(p) for w, p in results if w == "bgai")
    assert (you, them) == g.match.score
    assert d.plays > 10
    # the cube was used: you doubled at least once and the bot answered
    assert re.search(r"You double\.  bgai (takes|drops)", text)
    # every board shown is a real position with its IDs
    assert text.count("Position ID: ") > 10 and "+------------------+---+------------------+" in text


def test_bot_cube_actions_with_a_probability_agent():
    pytest.importorskip("gnubg_nn", reason="gnubg-nn (dev extra) gives the agent with cube decisions")
    seen = set()
    for seed in range(6):
        d, g, _ = _play_match("gnubg", 3, seed=seed)
        text = "\n".join(d.out)
        seen |= set(re.findall(r"bgai doubles to \d+|You take|You double\.  bgai (?:takes|drops)", text))
        assert g.match.is_over
    assert any(s.startswith("bgai doubles") for s in seen)


def _game_at(board: np.ndarray, dice, answers: list[str], spec: str = "pubeval"):
    out: list[str] = []
    it = iter(answers)

    def ask(prompt: str) -> str:
        out.append(prompt)
        return next(it)

    g = TerminalGame(Bot.from_spec(spec), rng=np.random.default_rng(0), ask=ask, say=out.append)
    g.board = board
    g.turn = HUMAN
    g._human_turn(dice)
    return g, "\n".join(out)


def test_illegal_and_ambiguous_plays_are_explained():
    # the mover's back checker on 24, opponent blots on the mover's 18 and 19: 24/13 with 6-5 can hit either
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 23] = 1
    b[0, 5] = 14
    b[1, 24 - 18] = 1
    b[1, 24 - 19] = 1
    b[1, 12] = 13  # opponent on its 13-point (the mover's 12)
    g, text = _game_at(b, (6, 5), ["24/13", "6/1 6/1", "24/18*/13"])
    assert "Ambiguous play" in text and "24/18/13" in text
    assert "Illegal play" in text and "Type 'moves'" in text
    assert g.board[0, 12] == 1 and g.board[1, 24] == 1  # played 24/18*/13: one opponent checker on the bar


def test_board_score_moves_and_help_commands():
    from bgai.core.board import starting_board

    g, text = _game_at(starting_board(), (3, 1), ["board", "score", "moves", "help", "8/5 6/5"])
    assert text.count("Position ID: 4HPwATDgc/ABMA") >= 2
    assert "Score: you 0, bgai 0" in text
    assert "Legal plays: " in text and "8/5 6/5" in text
    assert "take" in text and "double" in text  # help text lists the cube commands
    assert "You play 8/5 6/5." in text


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


def test_bgai_play_driven_through_stdin():
    """``bgai play --match 1`` in a subprocess: read the position and roll it shows, type a legal play, repeat."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "play", "--agent", "pubeval", "--match", "1", "--seed", "7"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
    )
    transcript = []
    try:
        sent = 0
        for _ in range(400):
            text = _read_until_prompt(proc)
            transcript.append(text)
            if "wins the match" in text or "You win the match" in text or not text:
                break
            prompt = text.rsplit("\n", 1)[-1]
            if prompt.startswith("your play"):
                pid = re.findall(r"Position ID: (\S+)", "".join(transcript))[-1]
                roll = re.findall(r"Your roll: (\d)-(\d)", "".join(transcript))[-1]
                board = decode_position_id(pid)
                plays = legal_plays(board, (int(roll[0]), int(roll[1])))
                answer = plays[sent % len(plays)].notation
                sent += 1
            elif prompt.startswith("roll"):
                answer = "roll"
            elif prompt.startswith("take or drop"):
                answer = "take"
            else:
                answer = "quit"
            proc.stdin.write((answer + "\n").encode())
            proc.stdin.flush()
        proc.stdin.close()
        rc = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(transcript)
    assert rc == 0, text[-2000:]
    assert re.search(r"(You win the match!|bgai wins the match\.)", text), text[-2000:]
    assert sent > 5
    assert "Illegal play" not in text and "Cannot read" not in text


def test_bad_arguments():
    from bgai.cli import main

    assert main(["play", "--match", "-2"]) == 2
    assert main(["play", "--agent", "nosuchbot"]) == 2


def test_help_is_the_written_help_text():
    """QA: ``help`` printed a fragment of the module docstring (with ``roll`` markup, starting mid-sentence)."""
    from bgai.core.board import starting_board
    from bgai.tui.terminal import HELP_TEXT

    _, text = _game_at(starting_board(), (3, 1), ["help", "8/5 6/5"])
    assert HELP_TEXT in text
    assert HELP_TEXT.startswith("Commands (case does not matter")
    assert "``" not in HELP_TEXT and ":data:" not in HELP_TEXT
    for cmd in ("roll [r]", "double [d]", "take [t]", "drop [d]", "moves [m]", "quit [q]"):
        assert cmd in HELP_TEXT
