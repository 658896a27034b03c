"""bgai as an engine of the Universal Backgammon Interface (UBGI): a user interface drives it over stdin/stdout.

Protocol: UBGI draft 0.01 by Øystein Schønning-Johansen (2025), the README of the repository
``oysteijo/Universal-Backgammon-Interface``.  The UI starts the engine (``bgai serve ubgi [--agent SPEC]
[--seed S]``) and writes one command per line; the engine answers one line per answer on stdout.  The engine is
stateless: every position carries its own cube, score and dice.

Commands of the draft:

==========================  ======================================================================================
``ubgi``                    build the agent (nothing is loaded before), then ``id name bgai <agent>``,
                            ``id author ...``, ``id version <bgai version>``, ``readyok``; ``sorry`` when the
                            agent cannot be built (the reason on stderr)
*position*                  a FIBS rawboard line (``board:...``, FIBS's own score convention) or an XGID
                            (``XGID=...``): the best action of the side to act, one line:

                            * with a double pending (FIBS ``was doubled``, XGID dice ``D``): ``take`` or ``drop``;
                            * before the roll (no dice): ``double`` or ``roll`` (``roll`` whenever the side may
                              not double: cube owned by the opponent, the Crawford game, a dead cube);
                            * with dice: the play, as the draft's move format asks: single-die from-to pairs in
                              playing order, all written out -- a checker using both dice is split
                              (``24/18 18/13``), doubles repeated (``13/10 13/10 8/5 8/5``), no ``*`` for hits,
                              points from the mover's view, the bar ``25``, off ``0`` (``25/22 6/0``);
                            * a blank line when no play is legal.
``stop``                    stop a running ``rollout`` (its last report and ``readyok`` follow); ignored when
                            nothing runs
``quit``                    stop whatever runs and end the process (exit status 0); the end of stdin does the same
anything else               ``sorry`` (the reason on stderr): unknown commands, malformed or impossible positions,
                            a finished game, a position before ``ubgi``
==========================  ======================================================================================

Where the draft leaves room, bgai does this:

* ``isready`` (as in UCI): ``readyok`` once ``ubgi`` has been answered (also while a rollout runs).
* ``analyse <position>`` (also ``analyze``), optional in the draft with no format given: ``info`` lines, then
  ``readyok``.  Numbers are from the view of the side on roll (with a double pending: the doubler, the side on
  roll before the take or pass, as GNU Backgammon shows cube decisions); probabilities in GNU Backgammon's order
  (``win`` includes gammons and backgammons, ``wingammon`` includes backgammons).  Before the roll::

      info win 0.551234 wingammon 0.161234 winbackgammon 0.008123 losegammon 0.121234 losebackgammon 0.005123
      info equity cubeless +0.143210 cubeful +0.181234 [mwc 0.561234 cubelessmwc 0.551234]
      info cube nodouble +0.181234 doubletake +0.120000 doublepass +1.000000
      info best roll

  ``cubeless`` is the money equity in points per game; ``cubeful`` the equity after the proper cube action
  (money: per unit of the cube; match play: GNU Backgammon's normalised equity of the cubeful match-winning
  chance ``mwc``); the ``cube`` line has the cubeful equities of no double, double/take and double/pass
  (:func:`bgai.analysis.api.evaluate_position`).  With dice, the legal plays ranked
  (:func:`bgai.analysis.api.rank_plays` with the position's cube and score, at most :data:`ANALYSE_PLAYS`), the
  move last on the line in the move format above::

      info play 1 equity +0.012345 win 0.501234 ... losebackgammon 0.001234 move 24/18 18/13
      info best 24/18 18/13

  (``mwc`` after ``equity`` in match play; agents without probabilities give ``score`` in their own units and no
  probabilities.)  ``info best`` is what the position command answers (``info best`` with nothing after it: no
  legal play).  Agents without probabilities answer ``sorry`` before the roll.
* ``rollout <position> [trials N] [seed S]``: a cubeless rollout of the position before the roll, for the side on
  roll (with a double pending: the doubler), ``N`` trials (default :data:`DEFAULT_TRIALS`, at most
  :data:`MAX_TRIALS`), dice seed ``S`` (default the engine's ``--seed``; the same seed gives the same result).  It
  runs in a worker thread, so stdin stays read: progress every :data:`PROGRESS_INTERVAL` seconds at most as
  ``info trials N equity E se S`` (the cubeless equity in points per game and its standard error over the trials
  so far), ``stop`` ends it after the trials under way.  At the end (or after ``stop``) the final
  ``info trials N equity E se S``, the ``info win ...`` probabilities line, then ``readyok``; ``sorry`` alone if it
  fails.  A position with dice gets ``sorry`` (a rollout of the plays is not offered).  While a rollout runs,
  positions, ``analyse``, ``rollout`` and ``ubgi`` get ``sorry`` (send ``stop`` first).

Rollouts: the engine calls :data:`ROLLOUT_ENGINE` with the signature of ``bgai.analysis.rollout.rollout_position``
(``(agent, board, *, trials, seed, variance_reduction, progress)``, ``progress(trials done, trials asked, equity,
se)`` after each batch of trials, a ``KeyboardInterrupt`` raised from ``progress`` ends the rollout with the
trials done, ``partial=True``): bgai's rollout engine (quasi-random dice, variance reduction).
:func:`plain_rollout` (plain Monte-Carlo through :mod:`bgai.game.play`'s phase functions) has the same signature.

Robustness: lines longer than :data:`MAX_LINE` bytes, NUL bytes, ``\\r\\n`` line ends and bytes that are not UTF-8
are handled; an error never ends the engine, never prints a traceback and never writes to stdout anything but
protocol lines (stray prints of libraries go to stderr); errors are one line on stderr, ``bgai ubgi: ...``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO, Callable

import numpy as np

from bgai import __version__
from bgai.agents.base import Agent
from bgai.agents.registry import BUILTINS, parse_spec, valid_specs
from bgai.analysis.rollout import mean_and_se, rollout_position
from bgai.core.board import as_batch, flip, validate
from bgai.errors import AgentSpecError, BgaiError, InvalidPositionError, quote_input
from bgai.formats.request import PositionRequest, detect_format, read_position_request
from bgai.game.play import MAX_PLIES, DiceStreams, checker_play, finish_games
from bgai.serve.bot import Bot
from bgai.serve.public import public_spec
from bgai.util.threads import limit_threads

__all__ = [
    "UBGIEngine",
    "UBGIError",
    "PlainRolloutResult",
    "RolloutStopped",
    "ROLLOUT_ENGINE",
    "check_agent_spec",
    "format_move",
    "plain_rollout",
    "serve_ubgi",
    "ENGINE_AUTHOR",
    "DEFAULT_TRIALS",
    "MAX_TRIALS",
    "MAX_LINE",
    "ANALYSE_PLAYS",
    "PROGRESS_INTERVAL",
]

#: ``id author`` line.
ENGINE_AUTHOR = "the bgai developers"
#: Trials of a ``rollout`` without ``trials N`` (GNU Backgammon's default).
DEFAULT_TRIALS = 1296
#: Most trials one ``rollout`` may ask for.
MAX_TRIALS = 10_000_000
#: Longest accepted command line in bytes (a FIBS board line is about 170).
MAX_LINE = 4096
#: Plays listed by ``analyse`` of a position with dice.
ANALYSE_PLAYS = 10
#: Least seconds between two progress reports of a rollout.
PROGRESS_INTERVAL = 0.5
#: Trials per batch of :func:`plain_rollout` (a multiple of 36; progress and ``stop`` come between batches).
PLAIN_CHUNK = 36

_PROB_KEYS = ("win", "wingammon", "winbackgammon", "losegammon", "losebackgammon")


class UBGIError(BgaiError):
    """A command the engine cannot answer (answered with ``sorry``; the message goes to stderr)."""


class RolloutStopped(KeyboardInterrupt):
    """Raised from a rollout's progress callback to stop it after the trials done (``stop``).

    A ``KeyboardInterrupt`` because that is how ``bgai.analysis.rollout.rollout_position`` (and
    :func:`plain_rollout`) are interrupted: they return the trials finished so far with ``partial=True``.
    """


# ------------------------------------------------------------------------------------------------------------
# the plain Monte-Carlo rollout (fallback of ROLLOUT_ENGINE)
# ------------------------------------------------------------------------------------------------------------


@dataclass
class PlainRolloutResult:
    """Result of :func:`plain_rollout` (the fields ``bgai.analysis.rollout.RolloutResult`` has too).

    Attributes:
        probabilities: ``(5,)`` float64 mean outcome, :data:`bgai.core.equity.OUTPUTS` order, for the side on roll
            (NaN with no trial).
        std_errors: ``(5,)`` their standard errors ``std(ddof=1) / sqrt(trials)`` (NaN with fewer than 2 trials).
        equity: cubeless equity in points per game (the mean points won per trial).
        equity_se: its standard error.
        trials: trials done.
        partial: the rollout was stopped before all trials asked were done.
    """

    probabilities: np.ndarray
    std_errors: np.ndarray
    equity: float
    equity_se: float
    trials: int
    partial: bool


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _play_out(agent: Agent, board: np.ndarray, seed: int, start: int, stop: int,
              rng: np.random.Generator) -> np.ndarray:
    """Trials ``start .. stop - 1`` played to the end: ``(stop - start, 5)`` outcomes for the root side."""
    n = stop - start
    streams = DiceStreams([np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, t)))
                           for t in range(start, stop)])
    boards = np.broadcast_to(board, (n, 2, 25)).copy()
    side = np.zeros(n, dtype=np.int8)  # 0: the root side is on roll
    out = np.zeros((n, 5), dtype=np.float64)
    active = np.ones(n, dtype=bool)
    plies = 0
    while active.any():
        idx = np.flatnonzero(active)
        dice = streams.roll(idx)
        after = checker_play((agent, agent), side[idx], boards[idx], dice, rng)
        done, pts = finish_games(after)
        ended = idx[done]
        won = side[ended] == 0
        kind = pts[done]
        out[ended, 0] = won
        out[ended, 1] = won & (kind >= 2)
        out[ended, 2] = won & (kind == 3)
        out[ended, 3] = ~won & (kind >= 2)
        out[ended, 4] = ~won & (kind == 3)
        active[ended] = False
        going = idx[~done]
        boards[going] = flip(after[~done])
        side[going] ^= 1
        plies += 1
        if plies > MAX_PLIES:
            raise RuntimeError(f"a rollout trial did not finish within {MAX_PLIES} plies")
    return out


def plain_rollout(
    agent: Agent,
    board: np.ndarray,
    *,
    trials: int = DEFAULT_TRIALS,
    truncate: int | None = None,
    ply: int = 0,
    seed: int = 0,
    variance_reduction: bool = False,
    workers: int = 1,
    progress: Callable[[int, int, float, float], object] | None = None,
    chunk_trials: int | None = None,
) -> PlainRolloutResult:
    """A plain Monte-Carlo rollout of a position before the roll, cubeless, the agent playing both sides.

    Trial ``t`` plays the position to the end with dice from its own generator
    (``default_rng(SeedSequence(seed, spawn_key=(0, t)))``, the rolls drawn as :class:`bgai.game.play.DiceStreams`
    draws them; the side on roll of ``board`` rolls first) and the agent's plays (:func:`bgai.game.play.checker_play`,
    both sides in one call); its outcome is the root side's ``(5,)`` result vector (:data:`bgai.core.equity.OUTPUTS`).
    The same seed gives the same result (an agent that draws randomness gets ``default_rng(SeedSequence(seed,
    spawn_key=(1,)))``, consumed batch by batch).  The signature is ``rollout_position``'s (see the module
    docstring), so either can be :data:`ROLLOUT_ENGINE`.

    Args:
        agent: plays both sides (any agent).
        board: ``(2, 25)`` position, side on roll in row 0 (before its roll).
        trials: trials, 1..:data:`MAX_TRIALS`.
        truncate: must be None (no truncation here).  ply: must be 0 (the agent plays as it is).
        seed: dice seed, >= 0.
        variance_reduction: accepted for the common signature and not applied (a plain rollout: the standard
            error reports the larger noise).
        workers: must be 1.
        progress: called after each batch with ``(trials done, trials asked, equity, se)``; a
            ``KeyboardInterrupt`` it raises (:class:`RolloutStopped`) ends the rollout with the trials done.
        chunk_trials: trials per batch (default :data:`PLAIN_CHUNK`).

    Returns:
        :class:`PlainRolloutResult` (``partial`` after an interruption).

    Raises:
        InvalidPositionError: a bad board or a finished game.  BgaiError: bad settings.
    """
    for name, v, lo in (("trials", trials, 1), ("seed", seed, 0)):
        if not _is_int(v) or v < lo:
            raise BgaiError(f"{name} must be an integer >= {lo}, got {v!r}")
    if trials > MAX_TRIALS:
        raise BgaiError(f"trials must be at most {MAX_TRIALS}, got {trials}")
    if truncate is not None or ply != 0 or workers != 1:
        raise BgaiError("the plain rollout plays every trial to the end at the agent's own ply, in one process "
                        "(truncate=None, ply=0, workers=1)")
    chunk = PLAIN_CHUNK if chunk_trials is None else chunk_trials
    if not _is_int(chunk) or chunk < 1:
        raise BgaiError(f"chunk_trials must be a positive integer, got {chunk!r}")
    b = validate(np.asarray(board))
    if b.shape[0] != 1:
        raise InvalidPositionError(f"a rollout takes one (2, 25) board, got {b.shape[0]}")
    if (b[0].sum(axis=1) == 0).any():
        raise InvalidPositionError("the game is over: a side has borne off all 15 checkers; nothing to roll out")
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1,)))
    outcomes = np.zeros((int(trials), 5), dtype=np.float64)
    done, partial = 0, False
    try:
        for start in range(0, int(trials), int(chunk)):
            stop = min(start + int(chunk), int(trials))
            outcomes[start:stop] = _play_out(agent, b[0], int(seed), start, stop, rng)
            done = stop
            if progress is not None:
                _, _, eq, se = mean_and_se(outcomes[:done])
                progress(done, int(trials), eq, se)
    except KeyboardInterrupt:
        partial = done < trials
    probs, se, eq, eq_se = mean_and_se(outcomes[:done])
    return PlainRolloutResult(probabilities=probs, std_errors=se, equity=eq, equity_se=eq_se, trials=done,
                              partial=partial)


#: The rollout engine ``rollout`` runs: bgai's rollouts (:func:`bgai.analysis.rollout.rollout_position`: quasi-random
#: dice, variance reduction); :func:`plain_rollout` has the same signature and stays for agents without
#: probabilities' tests and as the plain reference.
ROLLOUT_ENGINE: Callable[..., object] = rollout_position


# ------------------------------------------------------------------------------------------------------------
# formatting
# ------------------------------------------------------------------------------------------------------------


def format_move(steps) -> str:
    """A play in UBGI's move format: ``'24/18 18/13'``, ``'13/10 13/10 8/5 8/5'``, ``'25/22 6/0'``.

    Args:
        steps: ``((from, to, hit), ...)`` single-die steps in playing order, mover's point numbers (25 = bar,
            0 = off), as :attr:`bgai.core.movegen.Play.steps` gives them.

    Returns:
        The from-to pairs in the given order separated by spaces, no hit marks; ``''`` for no play.
    """
    return " ".join(f"{int(s[0])}/{int(s[1])}" for s in steps)


def _num(x: float | None, signed: bool = False) -> str:
    if x is None or not math.isfinite(float(x)):
        return "nan"
    return f"{float(x):+.6f}" if signed else f"{float(x):.6f}"


def _probs(p) -> str:
    return " ".join(f"{k} {_num(v)}" for k, v in zip(_PROB_KEYS, np.asarray(p, dtype=np.float64).tolist()))


def check_agent_spec(spec: str) -> str:
    """Check an agent spec without building the agent (UBGI builds it at ``ubgi``): a built-in agent name or an
    existing model file; returns the spec.

    Raises:
        AgentSpecError: a malformed spec or an unknown agent (the message lists the valid ones).
    """
    name, _ = parse_spec(spec)
    if name.lower() in BUILTINS or os.path.isfile(name):
        return spec
    raise AgentSpecError(f"unknown agent {quote_input(name)} (not a built-in agent nor a model file); "
                         f"valid agents: {valid_specs()}")


# ------------------------------------------------------------------------------------------------------------
# the engine
# ------------------------------------------------------------------------------------------------------------


class UBGIEngine:
    """The protocol state of one UBGI session: feed it lines (:meth:`handle`), it writes the answers.

    Args:
        spec: the agent spec (:func:`bgai.agents.registry.make_agent`), built at ``ubgi``.
        write: writes one answer line (given without its line end); called from the reading thread and from the
            rollout thread, never at the same time.
        seed: seed of the agent's random generator and the default rollout seed.
        log: writes one error line for stderr (default: ``bgai ubgi: <message>`` to ``sys.stderr``).
        make_bot: builds the :class:`~bgai.serve.bot.Bot` from ``spec`` (default :meth:`Bot.from_spec`).
        rollout: the rollout engine (default :data:`ROLLOUT_ENGINE`).
        progress_interval: least seconds between two rollout progress lines.
    """

    def __init__(
        self,
        spec: str,
        write: Callable[[str], None],
        *,
        seed: int = 0,
        log: Callable[[str], None] | None = None,
        make_bot: Callable[[str], Bot] | None = None,
        rollout: Callable[..., object] | None = None,
        progress_interval: float = PROGRESS_INTERVAL,
    ) -> None:
        self.spec = spec
        self.seed = int(seed)
        self.bot: Bot | None = None
        self.progress_interval = float(progress_interval)
        self._write = write
        self._log_fn = log
        self._make_bot = make_bot or Bot.from_spec
        self._rollout = rollout
        self._rng = np.random.default_rng(self.seed)
        self._lock = threading.Lock()  # output lines and the busy flag
        self._busy = False
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self.closed = False  # the output is gone (broken pipe)

    # ---------------------------------------------------------------------------------------------- output
    def _emit(self, *lines: str) -> None:
        with self._lock:
            self._emit_locked(lines)

    def _emit_locked(self, lines) -> None:
        if self.closed:
            return
        try:
            for line in lines:
                self._write(line)
        except (BrokenPipeError, OSError, ValueError):  # the UI has gone away
            self.closed = True
            self._stop.set()

    def log(self, message: str) -> None:
        """Write one error line to stderr (never raises)."""
        text = " ".join(str(message).split())
        try:
            if self._log_fn is not None:
                self._log_fn(text)
            else:
                print(f"bgai ubgi: {text}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging must never end the engine
            pass

    def refuse(self, message: str) -> None:
        """Log ``message`` and answer ``sorry``."""
        self.log(message)
        self._emit("sorry")

    @property
    def busy(self) -> bool:
        """A rollout is running."""
        return self._busy

    # -------------------------------------------------------------------------------------------- commands
    def handle(self, raw: str) -> bool:
        """Answer one command line (with or without its line end).

        Returns:
            False after ``quit`` (the caller should then :meth:`close` and exit), else True.  Never raises for
            bad input: an error is answered with ``sorry`` and logged.
        """
        line = raw.replace("\0", "").strip()
        try:
            return self._dispatch(line)
        except BgaiError as exc:
            self.log(f"{quote_input(line)}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug must not end the engine
            self.log(f"internal error answering {quote_input(line)}: {type(exc).__name__}: {exc}")
        self._emit("sorry")
        return True

    def _dispatch(self, line: str) -> bool:
        if not line:
            return True  # blank lines are ignored
        word, _, rest = line.partition(" ")
        key = word.lower()
        if key == "quit":
            return False
        if key == "stop":
            if self._busy:
                self._stop.set()
            return True
        if key == "isready":
            self._need_init()
            self._emit("readyok")
            return True
        if key == "ubgi":
            self._not_busy()
            self._init()
            return True
        if key in ("analyse", "analyze"):
            self._not_busy()
            self._need_init()
            self._analyse(self._request(rest.strip()))
            return True
        if key == "rollout":
            self._not_busy()
            self._need_init()
            self._start_rollout(rest.strip())
            return True
        if detect_format(line) in ("fibs", "xgid"):
            self._not_busy()
            self._need_init()
            self._emit(self.best_action(self._request(line)))
            return True
        raise UBGIError(
            "unknown command (expected ubgi, isready, a FIBS board or an XGID, analyse, rollout, stop or quit)")

    def _not_busy(self) -> None:
        if self._busy:
            raise UBGIError("a rollout is running: send stop first")

    def _need_init(self) -> None:
        if self.bot is None:
            raise UBGIError("the engine is not initialised: send ubgi first")

    def _init(self) -> None:
        if self.bot is None:
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    self.bot = self._make_bot(self.spec)
            except BgaiError as exc:
                raise UBGIError(f"cannot build agent {quote_input(self.spec)}: {exc}") from None
        self._emit(
            f"id name bgai {public_spec(self.bot.spec)}",
            f"id author {ENGINE_AUTHOR}",
            f"id version {__version__}",
            "readyok",
        )

    @staticmethod
    def _request(text: str) -> PositionRequest:
        if detect_format(text) not in ("fibs", "xgid"):
            raise UBGIError("expected a position: a FIBS board (board:...) or an XGID (XGID=...)")
        return read_position_request(text, fibs_scores="fibs")

    # ------------------------------------------------------------------------------------------ decisions
    def best_action(self, req: PositionRequest) -> str:
        """The answer to a position: ``take``/``drop`` with a double pending, ``double``/``roll`` before the
        roll, else the play in UBGI's move format (:func:`format_move`; ``''`` when no play is legal).

        Plays: the best of :meth:`bgai.serve.bot.Bot.rank_plays` with the position's cube and score (cubeful
        money equity or match-winning chance for agents with probabilities; the agent's own score otherwise; the
        random agent's own choice).  Cube: :meth:`bgai.serve.bot.Bot.cube_decision`
        (:func:`bgai.analysis.api.decide_cube`).
        """
        bot = self.bot
        assert bot is not None
        if req.double_offered:  # board and cube from the doubler's view
            return "take" if bot.cube_decision(req.board, req.cube_state).take else "drop"
        if req.dice is None:
            return "double" if bot.cube_decision(req.board, req.cube_state).double else "roll"
        ranked = bot.rank_plays(req.board, req.dice, self._rng, req.cube_state)
        return format_move(ranked[0].play.steps) if ranked else ""

    def _analyse(self, req: PositionRequest) -> None:
        bot = self.bot
        assert bot is not None
        lines = []
        if req.dice is None:
            if not bot.has_probabilities:
                raise UBGIError(f"agent {public_spec(bot.spec)!r} gives no probabilities to analyse a position "
                                "before the roll (use gnubg or a neural model)")
            ev = bot.evaluate(req.board, req.cube_state)
            lines.append(f"info {_probs(ev.probabilities)}")
            eq = f"info equity cubeless {_num(ev.cubeless_equity, True)} cubeful {_num(ev.cubeful_equity, True)}"
            if ev.mwc is not None:
                eq += f" mwc {_num(ev.mwc)} cubelessmwc {_num(ev.cubeless_mwc)}"
            lines.append(eq)
            d = ev.cube
            cube = [f"{k} {_num(v, True)}" for k, v in
                    (("nodouble", d.no_double), ("doubletake", d.double_take), ("doublepass", d.double_pass))
                    if v is not None]
            if cube:
                lines.append("info cube " + " ".join(cube))
            if req.double_offered:
                best = "take" if d.take else "drop"
            else:
                best = "double" if d.double else "roll"
            lines.append(f"info best {best}")
        else:
            ranked = bot.rank_plays(req.board, req.dice, self._rng, req.cube_state)
            for i, rp in enumerate(ranked[:ANALYSE_PLAYS], 1):
                parts = [f"info play {i}"]
                if rp.equity is not None:
                    parts.append(f"equity {_num(rp.equity, True)}")
                    if rp.mwc is not None:
                        parts.append(f"mwc {_num(rp.mwc)}")
                elif rp.score_kind == "score":
                    parts.append(f"score {_num(rp.score, True)}")
                if rp.probabilities is not None:
                    parts.append(_probs(rp.probabilities))
                parts.append(f"move {format_move(rp.play.steps)}")
                lines.append(" ".join(parts))
            lines.append(("info best " + format_move(ranked[0].play.steps)) if ranked else "info best")
        self._emit(*lines, "readyok")

    # -------------------------------------------------------------------------------------------- rollouts
    def _rollout_args(self, text: str) -> tuple[PositionRequest, int, int]:
        toks = text.split()
        if not toks:
            raise UBGIError("rollout needs a position: rollout <FIBS board or XGID> [trials N] [seed S]")
        req = self._request(toks[0])
        opts = {"trials": DEFAULT_TRIALS, "seed": self.seed}
        rest = toks[1:]
        if len(rest) % 2:
            raise UBGIError("rollout options come in pairs: trials N, seed S")
        for k, v in zip(rest[::2], rest[1::2]):
            k = k.lower()
            if k not in opts:
                raise UBGIError(f"unknown rollout option {quote_input(k)} (trials N, seed S)")
            if not v.isdigit():
                raise UBGIError(f"rollout {k} must be a non-negative integer, got {quote_input(v)}")
            opts[k] = int(v)
        if not 1 <= opts["trials"] <= MAX_TRIALS:
            raise UBGIError(f"rollout trials must be 1..{MAX_TRIALS}, got {opts['trials']}")
        if opts["seed"] >= 2**63:
            raise UBGIError("rollout seed must be below 2**63")
        if req.dice is not None and not req.double_offered:
            raise UBGIError("rollout rolls out a position before the roll; this position has dice "
                            "(send it with dice 00 / 0 0)")
        return req, opts["trials"], opts["seed"]

    def _start_rollout(self, text: str) -> None:
        req, trials, seed = self._rollout_args(text)
        board = np.array(as_batch(req.board)[0])
        self._stop.clear()
        self._busy = True
        t = threading.Thread(target=self._rollout_worker, args=(board, trials, seed), name="bgai-ubgi-rollout",
                             daemon=True)
        self._worker = t
        try:
            t.start()
        except BaseException:
            self._busy = False
            raise

    def _rollout_worker(self, board: np.ndarray, trials: int, seed: int) -> None:
        bot = self.bot
        assert bot is not None
        engine = self._rollout if self._rollout is not None else ROLLOUT_ENGINE
        last = [time.monotonic()]

        def progress(done: int, asked: int, equity: float, se: float) -> None:
            if self._stop.is_set():
                raise RolloutStopped
            now = time.monotonic()
            if now - last[0] >= self.progress_interval and done < asked:
                last[0] = now
                self._emit(f"info trials {done} equity {_num(equity, True)} se {_num(se)}")

        lines: list[str]
        try:
            # the reading thread does not use the agent while this runs (it answers sorry)
            res = engine(bot.agent, board, trials=trials, seed=seed, progress=progress,
                         variance_reduction=bool(bot.has_probabilities))
            lines = [f"info trials {res.trials} equity {_num(res.equity, True)} se {_num(res.equity_se)}",
                     f"info {_probs(res.probabilities)}", "readyok"]
        except BgaiError as exc:
            self.log(f"rollout: {exc}")
            lines = ["sorry"]
        except Exception as exc:  # noqa: BLE001 - a bug must not end the engine
            self.log(f"rollout: internal error: {type(exc).__name__}: {exc}")
            lines = ["sorry"]
        with self._lock:
            self._busy = False  # before the last line, so a UI that has read it finds the engine free
            self._emit_locked(lines)

    # -------------------------------------------------------------------------------------------------- end
    def close(self, timeout: float = 10.0) -> None:
        """Stop a running rollout and wait for it (at most ``timeout`` seconds); nothing is written after this
        (``quit`` gets no last rollout report)."""
        with self._lock:
            self.closed = True
        self._stop.set()
        t = self._worker
        if t is not None and t.is_alive():
            t.join(timeout)


def serve_ubgi(
    spec: str,
    *,
    seed: int = 0,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    progress_interval: float = PROGRESS_INTERVAL,
) -> int:
    """Run the UBGI engine on stdin/stdout until ``quit`` or the end of stdin.  Once the agent is built (at
    ``ubgi``), torch and BLAS run single-threaded (:func:`bgai.util.threads.limit_threads`).

    Args:
        spec: the agent spec (built at ``ubgi``; check it first with :func:`check_agent_spec`).
        seed: seed of the agent's randomness and the default rollout seed.
        stdin, stdout: binary streams (default the process's); while the engine runs, ``sys.stdout`` is sent to
            stderr so that nothing but protocol lines reaches the UI.
        progress_interval: least seconds between rollout progress lines.

    Returns:
        The exit status: 0 (``quit``, end of input, the UI gone), 130 after Ctrl-C.
    """
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout.buffer

    def write(line: str) -> None:
        out.write(line.encode("utf-8") + b"\n")
        out.flush()

    def make_bot(agent_spec: str) -> Bot:
        bot = Bot.from_spec(agent_spec)
        limit_threads(1)  # after the agent has loaded torch: one position per request, a second thread only spins
        return bot

    engine = UBGIEngine(spec, write, seed=seed, make_bot=make_bot, progress_interval=progress_interval)
    status = 0
    with contextlib.redirect_stdout(sys.stderr):
        try:
            while not engine.closed:
                raw = inp.readline(MAX_LINE + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                    while raw and not raw.endswith(b"\n"):
                        raw = inp.readline(MAX_LINE + 1)
                    engine.refuse(f"a line longer than {MAX_LINE} bytes")
                    continue
                if not engine.handle(raw.decode("utf-8", errors="replace")):
                    break
        except KeyboardInterrupt:
            status = 130
        finally:
            engine.close()
    return status
