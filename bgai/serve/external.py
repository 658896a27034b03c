"""GNU Backgammon's external-player protocol, engine side: bgai answers ``board:`` lines over TCP.

Protocol (test vectors in ``tests/test_serve_external.py``; source: GNU Backgammon's ``external.c``, ``external_y.y``,
``drawboard.c`` and the ``PLAYER_EXTERNAL`` branch of ``play.c``): a client -- GNU Backgammon itself after
``set player N external host:port``, or a FIBS bot -- connects and sends one command per line; the engine answers
each with one line (``version``: four lines):

=====================================================  =============================================================
``board:...`` [session options]                        the decision of the side to act: ``take``/``drop``/``beaver``
                                                       when doubled; ``accept``/``reject`` with ``resignation n``;
                                                       with dice the play in gnubg's plain step format
                                                       (``24/22 13/8 ``; bar 25, off 0; an empty line when no play
                                                       is legal); without dice ``double`` or ``roll``
``evaluation fibsboard board:...`` [options]          six numbers ``%f``: P(win), P(win gammon), P(win backgammon),
                                                       P(lose gammon), P(lose backgammon), equity (cubeless; cubeful
                                                       with ``cubeful``; match-winning chance in match play)
``version``                                            ``Interface: 2`` / ``RFBF: 0`` / ``Engine: ..`` / ``Software: ..``
``set debug on|off``, ``set interface new|old``        ``Debug output ON|OFF``, ``New interface ON|OFF``
``help``                                               ``\\tNo help information available``
``quit``, ``exit``                                     close the connection
=====================================================  =============================================================

Session options: ``jacobyrule``, ``crawfordrule``, ``beavers`` (boolean ``on|off|yes|no|true|false``) and
``resignation 0..3``; evaluation options ``plies n``, ``noise x``, ``prune``, ``deterministic`` (accepted and
ignored: bgai evaluates with its agent's own settings), ``cube on|off``, ``cubeful``, ``cubeless``.

Scores: GNU Backgammon's frontend writes the two score fields in the order of its players (0 first) rather than
of the colours; the server reads them that way by default (``scores='gnubg'``), or as FIBS does
(``scores='fibs'``, for FIBS bots forwarding the server's lines).  See :func:`bgai.formats.fibs.interpret_fibs_board`.

Robustness: NUL bytes are dropped (GNU Backgammon writes one after each board), ``\\n`` and ``\\r\\n`` both end a
line, a bad line gets ``Error: <what is wrong>`` and the connection stays usable; lines longer than
:data:`MAX_LINE` bytes are refused.  Every connection has its own state (debug flag, random generator); agent
calls are serialised by :class:`~bgai.serve.bot.Bot`, so concurrent clients do not disturb each other.

Decisions and evaluations come from :mod:`bgai.analysis.api` (through the bot); a board's cube and score
become a :class:`~bgai.core.cube_state.CubeState` with :meth:`bgai.formats.fibs.FIBSState.to_cube_state`
(the session's ``jacobyrule`` and ``crawfordrule`` applied).  At most ``max_connections`` connections are
served at a time (``Error: too many connections (at most N)`` to the next one) and a connection silent for ``timeout`` seconds is closed (:mod:`bgai.serve.limits`; ``bgai serve external
--max-connections N --timeout S``).  The ``Engine:`` line names a served model by its file name only.

Resignations (``resignation n``) are offered to "you", the side of the board's ``color``, whichever side is on
turn; :func:`bgai.analysis.resign.resignation_decision` decides (money: points with the cubeful equity of playing
on; match: match-winning chances).  GNU Backgammon's own engine answers ``resignation n`` from the wrong side
(it values the offer as if "you" were the one resigning), so its answers are not followed there.
"""

from __future__ import annotations

import logging
import socketserver
import threading
from dataclasses import dataclass

import numpy as np

from bgai import __version__
from bgai.core.board import flip, render
from bgai.core.cube_state import CubeState
from bgai.core.notation import format_play_plain
from bgai.errors import BgaiError
from bgai.formats.fibs import SCORE_CONVENTIONS, FIBSState, interpret_fibs_board, parse_fibs_board
from bgai.serve.bot import Bot
from bgai.serve.limits import EXTERNAL_MAX_CONNECTIONS, EXTERNAL_TIMEOUT, ConnectionSlots, check_limits, too_many_line
from bgai.serve.public import public_bot
from bgai.util.threads import limit_threads

__all__ = ["ExternalSession", "ExternalServer", "serve_external", "format_plain", "MAX_LINE", "INTERFACE_VERSION"]

log = logging.getLogger(__name__)

#: Longest accepted command line in bytes (a full board line is about 170).
MAX_LINE = 4096
#: The interface version GNU Backgammon reports (``Interface: 2``, "new" reentrant interface).
INTERFACE_VERSION = "2"

_TRUE = {"on", "yes", "true"}
_FALSE = {"off", "no", "false"}


class ProtocolError(BgaiError):
    """A command line the protocol does not understand (answered with ``Error: ...``)."""


@dataclass
class _Options:
    jacoby: bool = True
    crawford_rule: bool = True
    beavers: bool = True
    resignation: int = 0
    cubeful: bool = False


def _parse_options(text: str, *, evaluation: bool) -> _Options:
    opts = _Options()
    toks = text.split()
    i = 0

    def boolean(name: str, default: bool | None = None) -> bool:
        nonlocal i
        if i < len(toks) and toks[i].lower() in _TRUE | _FALSE:
            v = toks[i].lower() in _TRUE
            i += 1
            return v
        if default is not None:
            return default
        raise ProtocolError(f"option '{name}' needs on/off (yes/no, true/false)")

    def number(name: str, kind=int):
        nonlocal i
        if i >= len(toks):
            raise ProtocolError(f"option '{name}' needs a number")
        try:
            v = kind(toks[i])
        except ValueError:
            raise ProtocolError(f"option '{name}' needs a number, got {toks[i]!r}") from None
        i += 1
        return v

    while i < len(toks):
        key = toks[i].lower()
        i += 1
        if key == "jacobyrule":
            opts.jacoby = boolean(key)
        elif key == "crawfordrule":
            opts.crawford_rule = boolean(key)
        elif key == "beavers":
            opts.beavers = boolean(key)
        elif key == "resignation":
            n = number(key)
            if not 0 <= n <= 3:
                raise ProtocolError(f"resignation must be 0..3 (none, single, gammon, backgammon), got {n}")
            opts.resignation = n
        elif evaluation and key == "plies":
            if number(key) < 0:
                raise ProtocolError("plies must be >= 0")
        elif evaluation and key == "noise":
            number(key, float)
        elif evaluation and key in ("prune", "deterministic"):
            boolean(key, True)
        elif evaluation and key == "cube":
            opts.cubeful = boolean(key)
        elif evaluation and key in ("cubeful", "cubeless"):
            opts.cubeful = key == "cubeful"
        else:
            raise ProtocolError(f"unknown option {toks[i - 1]!r}")
    return opts


class ExternalSession:
    """The protocol state of one connection: feed it lines, send back what it returns.

    Args:
        bot: the bot that decides (shared between sessions; it is thread-safe).
        rng: this connection's random generator (for agents that use randomness).
        software: text of the ``Software:`` line of ``version``.
        scores: how to read the two score fields of a board (:func:`bgai.formats.fibs.interpret_fibs_board`):
            ``'gnubg'`` (default: as GNU Backgammon's frontend writes them) or ``'fibs'`` (FIBS CLIP, for FIBS
            bots that forward the server's board lines).
    """

    def __init__(
        self, bot: Bot, rng: np.random.Generator, software: str | None = None, *, scores: str = "gnubg"
    ) -> None:

        if scores not in SCORE_CONVENTIONS:
            raise ValueError(f"scores must be one of {SCORE_CONVENTIONS}, got {scores!r}")
        self.scores = scores
        self.bot = bot
        self.rng = rng
        self.debug = False
        self.new_interface = False
        self.software = software or f"bgai {__version__}"

    def handle(self, raw: str) -> str | None:
        """Answer one command line.

        Args:
            raw: the line, with or without its line end and NUL bytes.

        Returns:
            The reply, ending in ``\\n`` (``Error: ...`` for a bad line); ``None`` for ``quit``/``exit`` (close).
            Never raises for bad input.
        """
        line = raw.replace("\0", "").strip()
        try:
            return self._dispatch(line)
        except BgaiError as exc:
            return f"Error: {_one_line(str(exc))}\n"
        except Exception as exc:  # a bug must not kill the connection or the server
            log.exception("internal error answering %r", line[:200])
            return f"Error: internal error ({type(exc).__name__}: {_one_line(str(exc))})\n"

    # ------------------------------------------------------------------------------------------------
    def _dispatch(self, line: str) -> str | None:
        if not line:
            return "Error: no command given\n"
        word = line.split(None, 1)[0].lower()
        if word.startswith("board:"):
            board_text, opts = _split_board(line)
            return self._decision(board_text, _parse_options(opts, evaluation=False))
        if word == "evaluation":
            return self._evaluation_command(line)
        if word == "version":
            return (
                f"Interface: {INTERFACE_VERSION}\nRFBF: 0\nEngine: bgai {self.bot.spec}\nSoftware: {self.software}\n"
            )
        if word == "help":
            return "\tNo help information available\n"
        if word in ("quit", "exit"):
            return None
        if word == "set":
            return self._set_command(line)
        shown = line[:40] + ("..." if len(line) > 40 else "")
        raise ProtocolError(f"unknown command {shown!r} (expected board:..., evaluation fibsboard ..., version, help, set, quit)")

    def _evaluation_command(self, line: str) -> str:
        """``evaluation fibsboard board:... [options]``."""
        rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
        parts = rest.split(None, 1)
        if not parts or parts[0].lower() != "fibsboard":
            raise ProtocolError("expected 'evaluation fibsboard board:...'")
        if len(parts) < 2 or not parts[1].lower().startswith("board:"):
            raise ProtocolError("expected a board after 'evaluation fibsboard'")
        board_text, opts = _split_board(parts[1])
        return self._evaluation(board_text, _parse_options(opts, evaluation=True))

    def _set_command(self, line: str) -> str:
        """``set debug on|off`` or ``set interface new|old``."""
        toks = line.split()
        if len(toks) != 3:
            raise ProtocolError("expected 'set debug on|off' or 'set interface new|old'")
        key, val = toks[1].lower(), toks[2].lower()
        if key == "debug":
            if val not in _TRUE | _FALSE:
                raise ProtocolError(f"set debug needs on/off, got {toks[2]!r}")
            self.debug = val in _TRUE
            return f"Debug output {'ON' if self.debug else 'OFF'}\n"
        if key == "interface":
            if val not in ("new", "old"):
                raise ProtocolError(f"set interface needs new/old, got {toks[2]!r}")
            self.new_interface = val == "new"
            return f"New interface {'ON' if self.new_interface else 'OFF'}\n"
        raise ProtocolError(f"set option '{toks[1]}' not supported")

    def _state(self, board_text: str, opts: _Options) -> tuple[FIBSState, CubeState]:
        """The board's state (side to act's view) and its cube state with the session's rules."""
        try:
            state = interpret_fibs_board(parse_fibs_board(board_text), scores=self.scores)
            cube = state.to_cube_state(jacoby=opts.jacoby, crawford_rule=opts.crawford_rule)
        except BgaiError as exc:
            raise ProtocolError(f"badly formed board: {exc}") from None
        return state, cube

    def _debug_prefix(self, state: FIBSState) -> str:
        if not self.debug:
            return ""
        lines = [f"state: dice {state.dice} cube {state.cube_value} owner {state.cube_owner} doubled {state.doubled} "
                 f"match {state.match_length} score {state.score} crawford {state.crawford}"]
        lines += render(state.board).splitlines()
        return "".join(f"DBG: {s}\n" for s in lines)

    def _decision(self, board_text: str, opts: _Options) -> str:
        state, cube = self._state(board_text, opts)
        pre = self._debug_prefix(state)
        money = state.match_length == 0
        if state.doubled:
            d = self.bot.cube_decision(state.board, cube, doubled=True)
            if d.take and d.beaver and money and opts.beavers:
                return pre + "beaver\n"
            return pre + ("take\n" if d.take else "drop\n")
        if opts.resignation:
            board, cube_state, bot_on_roll = resignation_view(board_text, state, cube)
            dec = self.bot.resignation(board, cube_state, opts.resignation, decider_on_roll=bot_on_roll)
            return pre + ("accept\n" if dec.accept else "reject\n")
        if state.dice is not None:
            play = self.bot.choose_play(state.board, state.dice, self.rng)
            if play is None:
                return pre + "\n"
            return pre + format_plain(play.steps) + "\n"
        d = self.bot.cube_decision(state.board, cube)
        return pre + ("double\n" if d.double else "roll\n")

    def _evaluation(self, board_text: str, opts: _Options) -> str:
        """Six numbers: the probabilities, then (as GNU Backgammon computes it) the cubeless equity; with
        ``cubeful`` the cubeful equity after the proper cube action; in match play the match-winning chance
        (cubeful with ``cubeful``, else cubeless)."""
        state, cube = self._state(board_text, opts)
        ev = self.bot.evaluate(state.board, cube)
        if state.match_length:
            value = ev.mwc if opts.cubeful else ev.cubeless_mwc
        elif opts.cubeful:
            value = ev.cubeful_equity  # per unit of the cube, like GNU Backgammon's normalised equities
        else:
            value = ev.cubeless_equity
        return self._debug_prefix(state) + " ".join(f"{x:f}" for x in [*ev.probabilities.tolist(), value]) + "\n"


def resignation_view(board_text: str, state: FIBSState, cube: CubeState):
    """The position and cube state of a ``resignation n`` board from the view of the side offered the
    resignation: "you" of the board (its ``color``), whichever side is on turn.

    Args:
        board_text: the FIBS board line.
        state: the board read from the view of its side on turn (:func:`bgai.formats.fibs.interpret_fibs_board`).
        cube: that side's cube state (:meth:`bgai.formats.fibs.FIBSState.to_cube_state`).

    Returns:
        ``(board (2, 25) with "you" in row 0, CubeState from your view, you_on_roll)``.

    Raises:
        FIBSBoardError: an unreadable board.
    """
    fb = parse_fibs_board(board_text)
    if fb.turn == fb.color:
        return state.board, cube, True
    return flip(state.board), cube.swapped(), False  # the side on turn is the one resigning


def format_plain(steps) -> str:
    """A play in GNU Backgammon's plain step format (``FormatMovePlain``), e.g. ``'24/22 13/8 '``, without the line
    end: :func:`bgai.core.notation.format_play_plain` (bar 25, off 0, ``*`` after a hit, a space after each of
    the first three steps).

    Args:
        steps: ``((from, to, hit), ...)`` as in :attr:`bgai.core.movegen.Play.steps`.
    """

    return format_play_plain(steps).rstrip("\n")


def _split_board(text: str) -> tuple[str, str]:
    """Split ``board:...:n [options]`` into the board and the options text (first whitespace after the board)."""
    t = text.strip()
    # names may not contain whitespace in practice; the 50 numbers never do: split at the first whitespace
    # after the last ':'-separated field.
    colon = t.rfind(":")
    ws = [i for i in range(colon + 1, len(t)) if t[i].isspace()]
    if not ws:
        return t, ""
    return t[: ws[0]], t[ws[0] :].strip()


def _one_line(s: str) -> str:
    return " ".join(s.split())


class _Handler(socketserver.StreamRequestHandler):
    server: "ExternalServer"

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout or None  # socket timeout: no byte for that long closes
        super().setup()

    def handle(self) -> None:
        session = ExternalSession(self.server.bot, self.server.next_rng(), self.server.software, scores=self.server.scores)
        peer = "%s:%s" % self.client_address[:2]
        log.info("connection from %s", peer)
        while True:
            try:
                raw = self.rfile.readline(MAX_LINE + 1)
            except (ConnectionError, OSError):
                break
            if not raw:
                break
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                # skip the rest of an over-long line
                while raw and not raw.endswith(b"\n"):
                    raw = self.rfile.readline(MAX_LINE + 1)
                reply: str | None = f"Error: line longer than {MAX_LINE} bytes\n"
            else:
                text = raw.decode("utf-8", errors="replace")
                if not raw.endswith(b"\n") and not text.replace("\0", "").strip():
                    break  # a stray NUL (gnubg writes one after each board) before the client closed
                reply = session.handle(text)
                if self.server.on_exchange is not None:
                    self.server.on_exchange(text, reply)
            log.debug("%s: %r -> %r", peer, raw[:200], reply)
            if reply is None:
                break
            try:
                self.wfile.write(reply.encode("utf-8"))
                self.wfile.flush()
            except (ConnectionError, OSError):
                break
        log.info("connection from %s closed", peer)


class ExternalServer(socketserver.ThreadingTCPServer):
    """A TCP server speaking the external-player protocol; one thread per connection, at most
    ``max_connections`` of them (:mod:`bgai.serve.limits`): a connection beyond that gets
    ``Error: too many connections (at most N)`` and is closed; a connection that sends nothing for
    ``timeout`` seconds is closed (0: never).

    Args:
        address: ``(host, port)``; port 0 picks a free port (see :attr:`port`).
        bot: the bot answering every connection.
        seed: seed of the per-connection random generators (connection *k* gets ``default_rng([seed, k])``).
        on_exchange: optional callable ``(line, reply)`` called after each answered line (``reply`` None for
            quit); for transcripts and tests.  Called from the connection's thread.
        scores: score-field convention of the boards (see :class:`ExternalSession`).
        max_connections: connections served at a time (default :data:`bgai.serve.limits.EXTERNAL_MAX_CONNECTIONS`).
        timeout: seconds without a byte from the client before its connection is closed; 0 = never (default
            :data:`bgai.serve.limits.EXTERNAL_TIMEOUT`).

    Raises:
        LimitError: bad limits.  OSError: the address cannot be bound.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        bot: Bot,
        *,
        seed: int = 0,
        software: str | None = None,
        on_exchange=None,
        scores: str = "gnubg",
        max_connections: int = EXTERNAL_MAX_CONNECTIONS,
        timeout: float = EXTERNAL_TIMEOUT,
    ) -> None:
        n, t = check_limits(max_connections, timeout, allow_no_timeout=True)
        self.slots = ConnectionSlots(n)
        self.idle_timeout = t
        self.bot = public_bot(bot)
        self.scores = scores
        self.on_exchange = on_exchange
        self.seed = int(seed)
        self.software = software
        self._count = 0
        self._count_lock = threading.Lock()
        super().__init__(address, _Handler)

    @property
    def port(self) -> int:
        """The TCP port actually bound."""
        return int(self.server_address[1])

    def process_request(self, request, client_address) -> None:
        """Serve the connection in a thread of its own, or refuse it with one line when all slots are taken."""
        if not self.slots.acquire():
            log.warning("refused a connection from %s:%s: %d connections open", *client_address[:2], self.slots.capacity)
            try:
                request.settimeout(1.0)
                request.sendall(too_many_line(self.slots.capacity))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def next_rng(self) -> np.random.Generator:
        """A fresh generator for the next connection."""
        with self._count_lock:
            k = self._count
            self._count += 1
        return np.random.default_rng([self.seed, k])

    def start_in_thread(self) -> threading.Thread:
        """Serve in a daemon thread (for tests and embedding); stop with ``shutdown()`` and ``server_close()``."""
        t = threading.Thread(target=self.serve_forever, name="bgai-external", daemon=True)
        t.start()
        return t


def serve_external(
    bot: Bot,
    host: str = "localhost",
    port: int = 4242,
    *,
    seed: int = 0,
    scores: str = "gnubg",
    ready=None,
    max_connections: int = EXTERNAL_MAX_CONNECTIONS,
    timeout: float = EXTERNAL_TIMEOUT,
) -> None:
    """Serve the external-player protocol until interrupted (Ctrl-C), with torch and BLAS single-threaded
    (:func:`bgai.util.threads.limit_threads`: one position per request; a second thread only spins).

    Args:
        bot: the bot.
        host, port: address to listen on.
        seed: seed for per-connection random generators.
        scores: score-field convention (``'gnubg'`` or ``'fibs'``, see :class:`ExternalSession`).
        ready: optional callable given the bound :class:`ExternalServer` once listening.
        max_connections, timeout: connection limit and idle timeout (:class:`ExternalServer`).

    Raises:
        OSError: the address cannot be bound (e.g. the port is in use).  LimitError: bad limits.
    """
    limit_threads(1)  # one position per request: a second torch/BLAS thread only spins
    with ExternalServer(
        (host, port), bot, seed=seed, scores=scores, max_connections=max_connections, timeout=timeout
    ) as server:
        if ready is not None:
            ready(server)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
