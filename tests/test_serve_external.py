"""The external-player server against a scripted fake client (GNU Backgammon's transcript, PROTOCOLS.md 1.2-1.4):
answers, line ends and NUL bytes, garbage, sequential and concurrent clients."""

from __future__ import annotations

import os
import socket
import sys
import threading

import numpy as np
import pytest
from conftest import has_gnubg_nn

from bgai.core.board import starting_board
from bgai.core.movegen import apply_steps, legal_plays
from bgai.formats.fibs import FIBSState, format_fibs_board, interpret_fibs_board
from bgai.serve.bot import Bot
from bgai.serve.external import MAX_LINE, ExternalServer, ExternalSession

START_52 = (
    "board:p0:p1:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:5:2:5:2:1:1:1:0:1:-1:0:25:0:0:0:"
    "0:0:0:0:1"
)
BAR_CUBE = (
    "board:p0:p1:0:0:0:-2:2:0:2:0:0:3:0:1:0:0:0:-4:5:0:0:0:-4:0:-5:0:0:0:0:2:0:-1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:"
    "0:0:0:0:1"
)
# the same with 6-6: X cannot enter (O holds X's 19-point = O's 6-point)
BAR_FANS = BAR_CUBE.replace(":-1:0:0:0:0:1:1:1:", ":-1:6:6:6:6:1:1:1:")


needs_gnubg_nn = pytest.mark.skipif(not has_gnubg_nn(), reason="gnubg-nn (dev extra) is not installed")


@pytest.fixture(scope="module")
def server():
    srv = ExternalServer(("127.0.0.1", 0), Bot.from_spec("pubeval"))
    srv.start_in_thread()
    yield srv
    srv.shutdown()
    srv.server_close()


class Client:
    """A line client like GNU Backgammon: writes lines, reads one line per answer (four for ``version``)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def ask(self, line: str, *, end: bytes = b"\n", lines: int = 1) -> str:
        self.send(line.encode() + end)
        return "".join(self.f.readline().decode() for _ in range(lines))

    def close(self) -> None:
        self.f.close()
        self.sock.close()


def _check_legal_reply(line: str, reply: str) -> None:
    state = interpret_fibs_board(line)
    assert reply.endswith("\n")
    steps = [tuple(int(x) for x in s.rstrip("*").split("/")) for s in reply.split()]
    after = apply_steps(state.board, steps)
    legal = [p.afterstate for p in legal_plays(state.board, state.dice)]
    assert any(np.array_equal(after, a) for a in legal), f"{reply!r} is not legal for {line}"


def test_version_help_and_set(server):
    c = Client(server.port)
    v = c.ask("version", lines=4).splitlines()
    assert v[0] == "Interface: 2" and v[1] == "RFBF: 0"
    assert v[2].startswith("Engine: ") and v[3].startswith("Software: bgai")
    assert c.ask("help") == "\tNo help information available\n"
    assert c.ask("set debug on").strip() == "Debug output ON"
    assert c.ask("set debug off").strip() == "Debug output OFF"
    assert c.ask("set interface new").strip() == "New interface ON"
    assert c.ask("set prompt '>'").startswith("Error: set option 'prompt' not supported")
    c.close()


def test_gnubg_transcript_move_in_plain_format_with_nul_and_crlf(server):
    c = Client(server.port)
    # gnubg writes the board, "\n" and its terminating NUL byte
    r1 = c.ask(START_52, end=b"\n\0")
    _check_legal_reply(START_52, r1)
    assert r1.endswith(" \n")  # two steps: gnubg's plain format ends each of the first three steps with a space
    r2 = c.ask(START_52, end=b"\r\n")
    assert r2 == r1  # pubeval is deterministic
    assert c.ask(BAR_CUBE) == "roll\n"  # conservative cube policy for an agent without probabilities
    assert c.ask(BAR_FANS) == "\n"  # no legal play: an empty move, as gnubg answers
    c.close()


def test_doubled_and_resignation_answers_of_the_conservative_policy(server):
    c = Client(server.port)
    doubled = format_fibs_board(FIBSState(board=starting_board(), doubled=True))
    assert c.ask(doubled) == "take\n"
    # resignations: an agent without probabilities accepts only a backgammon
    assert c.ask(START_52.replace(":5:2:5:2:", ":0:0:0:0:") + " resignation 1") == "reject\n"
    assert c.ask(START_52.replace(":5:2:5:2:", ":0:0:0:0:") + " resignation 3") == "accept\n"
    c.close()


@pytest.mark.parametrize(
    "garbage, expect",
    [
        ("", "Error: no command given"),
        ("hello world", "Error: unknown command 'hello world'"),
        ("board:a:b:1:2:3", "Error: badly formed board: a FIBS board has 52 fields"),
        (START_52.replace(":-1:5:2:", ":0:5:2:"), "Error: badly formed board: FIBS board has turn 0"),
        (START_52.replace(":5:2:5:2:", ":7:2:7:2:"), "Error: badly formed board: FIBS board dice"),
        (START_52 + " jacobyrule maybe", "Error: option 'jacobyrule' needs on/off"),
        (START_52 + " plies 2", "Error: unknown option 'plies'"),
        ("evaluation fibsboard", "Error: expected a board after 'evaluation fibsboard'"),
        ("evaluation " + START_52, "Error: expected 'evaluation fibsboard board:...'"),
        ("\0\0\0", "Error: no command given"),
        ("board:\xff\xfe:" + "1:" * 49 + "1", "Error: badly formed board"),
    ],
)
def test_garbage_gets_an_error_and_the_connection_stays_usable(server, garbage, expect):
    c = Client(server.port)
    assert c.ask(garbage).startswith(expect)
    _check_legal_reply(START_52, c.ask(START_52))
    c.close()


def test_over_long_line_is_refused_and_connection_survives(server):
    c = Client(server.port)
    assert c.ask("x" * (3 * MAX_LINE)).startswith(f"Error: line longer than {MAX_LINE} bytes")
    _check_legal_reply(START_52, c.ask(START_52))
    c.close()


def test_quit_closes_and_sequential_clients_are_served(server):
    for _ in range(3):
        c = Client(server.port)
        _check_legal_reply(START_52, c.ask(START_52))
        c.send(b"quit\n")
        assert c.f.readline() == b""  # closed by the server
        c.close()
    # a client that closes after the trailing NUL byte does not upset the server
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(START_52.encode() + b"\n\0")
    s.recv(100)
    s.close()
    c = Client(server.port)
    _check_legal_reply(START_52, c.ask(START_52))
    c.close()


def test_concurrent_clients_get_their_own_answers(server):
    """Eight clients at once, each with its own stream of positions; every answer must fit its own question."""
    rng = np.random.default_rng(5)
    import os

    ref = np.load(os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz"))["boards"]
    jobs = []
    for k in range(8):
        lines = []
        for i in rng.choice(len(ref), 25, replace=False):
            dice = tuple(int(x) for x in rng.integers(1, 7, 2))
            lines.append(format_fibs_board(FIBSState(board=ref[i], dice=dice)))
        jobs.append(lines)
    errors: list[str] = []

    def work(lines):
        c = Client(server.port)
        try:
            for line in lines:
                reply = c.ask(line)
                state = interpret_fibs_board(line)
                if not legal_plays(state.board, state.dice)[0].steps:
                    ok = reply == "\n"
                else:
                    try:
                        _check_legal_reply(line, reply)
                        ok = True
                    except (AssertionError, ValueError) as exc:
                        ok, reply = False, f"{reply!r}: {exc}"
                if not ok:
                    errors.append(f"{line} -> {reply}")
        finally:
            c.close()

    threads = [threading.Thread(target=work, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]


def test_session_handles_lines_without_a_network():
    s = ExternalSession(Bot.from_spec("pubeval"), np.random.default_rng(0))
    assert s.handle("quit") is None and s.handle("EXIT") is None
    assert s.handle("VERSION").startswith("Interface: 2\n")
    assert s.handle(START_52 + "\r\n").count("/") == 2


def test_evaluation_needs_probabilities(server):
    c = Client(server.port)
    assert c.ask("evaluation fibsboard " + BAR_CUBE).startswith("Error: agent 'pubeval' gives no probabilities")
    c.close()


@needs_gnubg_nn
def test_evaluation_and_cube_answers_with_a_probability_agent():
    from bgai.core.equity import cubeless_equity
    from bgai.game.cube import CubeState, analyse_cube, cube_efficiency

    bot = Bot.from_spec("gnubg")
    s = ExternalSession(bot, np.random.default_rng(0))
    ans = s.handle("evaluation fibsboard " + BAR_CUBE)
    nums = [float(x) for x in ans.split()]
    assert len(nums) == 6
    p = bot.probabilities(interpret_fibs_board(BAR_CUBE).board)
    assert nums[:5] == pytest.approx(p.tolist(), abs=1e-6)
    assert nums[5] == pytest.approx(float(cubeless_equity(p)), abs=1e-6)
    # cubeful money equity: the optimal cube action's equity
    cf = float(s.handle("evaluation fibsboard " + BAR_CUBE + " cubeful").split()[5])
    board = interpret_fibs_board(BAR_CUBE).board
    a = analyse_cube(p, CubeState(), cube_efficiency(board[None]))
    assert cf == pytest.approx(float(a.optimal[0]), abs=1e-6)
    # an overwhelming position: all 15 checkers home against the opponent's 15 back on the bar
    me = np.zeros((2, 25), dtype=np.int8)
    me[0, 0:5] = 3
    me[1, 24] = 15
    assert s.handle(format_fibs_board(FIBSState(board=me))) in ("double\n", "roll\n")
    # being doubled in that position (from the hopeless side): drop
    assert s.handle(format_fibs_board(FIBSState(board=me[::-1].copy(), doubled=True))) == "drop\n"
    # a gammonish but not hopeless position for the doubled side: the advice equals bgai.game.cube's
    start_doubled = format_fibs_board(FIBSState(board=starting_board(), doubled=True))
    assert s.handle(start_doubled) == "take\n"
    # resignations: a single offered by a side that is being gammoned -> reject, unless the Jacoby rule makes
    # gammons count as singles (money, centred cube): then a single is all there is to win
    assert s.handle(format_fibs_board(FIBSState(board=me)) + " resignation 1 jacobyrule off") == "reject\n"
    assert s.handle(format_fibs_board(FIBSState(board=me)) + " resignation 1") == "accept\n"
    # backgammons are likely too (the opponent is all on the bar): a gammon is not enough
    assert s.handle(format_fibs_board(FIBSState(board=me)) + " resignation 2 jacobyrule off") == "reject\n"
    assert s.handle(format_fibs_board(FIBSState(board=me)) + " resignation 3") == "accept\n"


def _start_cli(args: list[str]):
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "bgai", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )


def test_cli_serve_external_answers_and_reports_bad_arguments():
    import re
    import subprocess

    proc = _start_cli(["serve", "external", "--host", "127.0.0.1", "--port", "0", "--agent", "pubeval"])
    try:
        line = proc.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, line
        port = int(m.group(1))
        assert "set player 1 external 127.0.0.1:%d" % port in proc.stderr.readline()
        c = Client(port)
        assert c.ask("version", lines=4).startswith("Interface: 2\n")
        _check_legal_reply(START_52, c.ask(START_52))
        c.close()
        # the port is taken now: a second server says so
        r = subprocess.run(
            [sys.executable, "-m", "bgai", "serve", "external", "--host", "127.0.0.1", "--port", str(port), "--agent",
             "pubeval"],  # (the default agent needs a shipped model: no silent pubeval fallback any more)
            capture_output=True, text=True, timeout=60,
        )
        assert r.returncode == 2 and "cannot listen on 127.0.0.1:%d" % port in r.stderr
    finally:
        proc.terminate()
        proc.wait(10)
    r = subprocess.run([sys.executable, "-m", "bgai", "serve", "external", "--agent", "nosuchbot"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("bgai: error:") and "nosuchbot" in r.stderr
    r = subprocess.run([sys.executable, "-m", "bgai", "serve", "http", "--port", "70000"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--port must be 0..65535" in r.stderr
