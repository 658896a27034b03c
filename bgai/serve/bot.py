"""One bot for the servers and terminal play: an :class:`~bgai.agents.base.Agent` plus what a frontend asks.

:class:`Bot` wraps any agent and answers, for **one** position at a time (bgai's layout, :mod:`bgai.core.board`,
side to act in row 0): the legal plays ranked, the chosen play, outcome probabilities (agents that have them),
resignation and cube decisions.  Agent calls are serialised with a lock, so one ``Bot`` can be shared by the
threads of a server without answers getting mixed up; randomness comes from a ``np.random.Generator`` passed in
by the caller (one per connection or game).

Cube decisions go through :mod:`bgai.game.cube` (GNU Backgammon-style 0-ply cubeful equities from the agent's
probabilities) when the agent has probabilities; otherwise a documented fallback is used: **never double,
always take** (an agent without an evaluation cannot judge the cube; never doubling only gives away the cube's
value, always taking can cost more than a drop in hopeless positions -- serve a neural or gnubg agent for real
cube play).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent, ValueAgent
from bgai.agents.registry import make_agent, resolve_spec
from bgai.analysis.resign import ResignationDecision, resignation_decision
from bgai.core.board import as_batch
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import legal_plays
from bgai.errors import InvalidDiceError
from bgai.game.cube import CubeState
from bgai.serve import cube_advice
from bgai.serve.cube_advice import CubeAdvice

__all__ = ["Bot", "RankedPlay", "default_agent_spec"]

@dataclass(frozen=True, eq=False)
class RankedPlay:
    """One legal play with the bot's score for it.

    Attributes:
        play: the :class:`bgai.core.movegen.Play` (``.steps``, ``.notation``, ``.afterstate``).
        score: the agent's score of the afterstate for the mover (cubeless equity in ppg for agents with
            probabilities; an agent-specific score otherwise, e.g. pubeval's); ``None`` when the agent scores
            nothing (the random bot).
        probabilities: ``(5,)`` float64 outcome probabilities for the mover after the play
            (:data:`bgai.core.equity.OUTPUTS` order), or ``None``.
    """

    play: object
    score: float | None
    probabilities: np.ndarray | None = None

    @property
    def equity(self) -> float | None:
        """Cubeless equity (ppg) for the mover, when probabilities are known."""
        return None if self.probabilities is None else float(cubeless_equity(self.probabilities))


def _no_play(play) -> bool:
    return not getattr(play, "steps", ())


class Bot:
    """A frontend's view of an agent (thread-safe; one position per call).

    Args:
        agent: any :class:`~bgai.agents.base.Agent`.
        spec: the agent specification it was made from (shown in ``version`` answers and the web page).
    """

    def __init__(self, agent: Agent, spec: str | None = None) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"Bot needs an Agent, got {type(agent).__name__}")
        self.agent = agent
        self.spec = spec or getattr(agent, "name", type(agent).__name__)
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: str) -> "Bot":
        """Build the agent named by ``spec`` (:func:`bgai.agents.registry.make_agent`).

        Raises:
            AgentSpecError: an unknown agent or bad options; CheckpointError: an unreadable checkpoint.
        """

        return cls(make_agent(spec), spec)

    @property
    def name(self) -> str:
        """Short name of the agent, e.g. ``'pubeval'``."""
        return str(getattr(self.agent, "name", self.spec))

    @property
    def has_probabilities(self) -> bool:
        """True when the agent estimates outcome probabilities (neural nets, GNU Backgammon)."""
        return isinstance(self.agent, ProbabilityAgent)

    # ----------------------------------------------------------------------------------------------- plays
    @staticmethod
    def legal_plays(board: np.ndarray, dice: tuple[int, int]) -> list:
        """The legal plays of one position (:func:`bgai.core.movegen.legal_plays`); an empty list when none.

        Raises:
            InvalidPositionError, InvalidDiceError: bad board or dice.
        """

        d = _check_dice(dice)
        plays = list(legal_plays(as_batch(board)[0], d))
        return [p for p in plays if not _no_play(p)]

    def choose_play(self, board: np.ndarray, dice: tuple[int, int], rng: np.random.Generator):
        """The agent's play for one position, or ``None`` when no play is legal.

        Args:
            board: ``(2, 25)`` int8, side on roll in row 0.
            dice: ``(d1, d2)`` 1..6.
            rng: random source for agents that use one.

        Returns:
            A :class:`bgai.core.movegen.Play` (``.steps``, ``.notation``, ``.afterstate``) or ``None``.

        Raises:
            InvalidPositionError, InvalidDiceError: bad input.  RuntimeError: the agent returned a position
            that is no legal afterstate (a bug in the agent).
        """
        b = as_batch(board)
        plays = self.legal_plays(b[0], dice)
        if not plays:
            return None
        if len(plays) == 1:
            return plays[0]
        with self._lock:
            after = self.agent.choose(b, np.asarray([dice], dtype=np.int64), rng)
        chosen = np.asarray(after)[0]
        for p in plays:
            if np.array_equal(p.afterstate, chosen):
                return p
        raise RuntimeError(f"agent {self.name!r} chose a position that is not a legal afterstate")

    def rank_plays(self, board: np.ndarray, dice: tuple[int, int], rng: np.random.Generator | None = None) -> list[RankedPlay]:
        """All legal plays, best first by the agent's score (ties keep generation order).

        Agents without any score (the random bot) list their chosen play first, then the others unscored.
        Empty when no play is legal.
        """
        b = as_batch(board)
        plays = self.legal_plays(b[0], dice)
        if not plays:
            return []
        after = np.stack([np.asarray(p.afterstate, dtype=np.int8) for p in plays])
        probs = None
        with self._lock:
            if isinstance(self.agent, ProbabilityAgent):
                probs = np.asarray(self.agent.afterstate_probabilities(after), dtype=np.float64)
                scores = cubeless_equity(probs)
            elif isinstance(self.agent, ValueAgent):
                scores = np.asarray(self.agent.evaluate_afterstates(after), dtype=np.float64)
            elif hasattr(self.agent, "evaluate_plays"):
                scores = np.asarray(self.agent.evaluate_plays(b, after, np.zeros(len(plays), dtype=np.int64)), dtype=np.float64)
            else:
                scores = None
        if scores is None:
            chosen = self.choose_play(b[0], dice, rng if rng is not None else np.random.default_rng(0))
            order = sorted(range(len(plays)), key=lambda i: plays[i] is not chosen)
            return [RankedPlay(plays[i], None, None) for i in order]
        order = np.argsort(-scores, kind="stable")
        return [
            RankedPlay(plays[i], float(scores[i]), None if probs is None else probs[i].copy()) for i in order
        ]

    # ------------------------------------------------------------------------------------- probabilities
    def probabilities(self, board: np.ndarray) -> np.ndarray | None:
        """``(5,)`` float64 cubeless outcome probabilities for the side on roll before it rolls, or ``None``
        for agents without probabilities."""
        if not self.has_probabilities:
            return None
        with self._lock:
            return np.asarray(self.agent.probabilities(as_batch(board)), dtype=np.float64)[0].copy()

    # ------------------------------------------------------------------------------------- resignations
    def resignation(
        self, board: np.ndarray, cube_state: CubeState, points: int, *, decider_on_roll: bool = True
    ) -> ResignationDecision:
        """The bot's answer to its opponent's offer to resign ``points`` (1 single, 2 gammon, 3 backgammon):
        :func:`bgai.analysis.resign.resignation_decision` with this bot's agent (money: points, cube included;
        match play: match-winning chances).

        Args:
            board: ``(2, 25)`` from the bot's view (row 0 the bot, the side deciding).
            cube_state: :class:`bgai.game.cube.CubeState` from the bot's view (owner 0 = the bot, score
                ``(bot, resigner)``).
            points: 1, 2 or 3.
            decider_on_roll: the bot is on roll (True) or the resigning side is (False).

        Raises:
            ResignationError, InvalidPositionError, MatchStateError: see the library function.
        """
        with self._lock:
            return resignation_decision(self.agent, board, cube_state, points, decider_on_roll=decider_on_roll)

    def accept_resignation(
        self,
        board: np.ndarray,
        points: int,
        *,
        cube_state: CubeState | None = None,
        decider_on_roll: bool = True,
        cube_centred_jacoby: bool = False,
    ) -> bool:
        """``resignation(...).accept``; without ``cube_state``, money play with a centred cube (the Jacoby rule
        when ``cube_centred_jacoby``)."""
        cs = cube_state if cube_state is not None else CubeState(jacoby=cube_centred_jacoby)
        return self.resignation(board, cs, points, decider_on_roll=decider_on_roll).accept

    # --------------------------------------------------------------------------------------------- cube
    def cube_advice(
        self,
        board: np.ndarray,
        *,
        doubled: bool = False,
        cube_value: int = 1,
        cube_owner: int = -1,
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        crawford: bool = False,
        jacoby: bool = True,
        beavers: bool = True,
    ) -> CubeAdvice:
        """Cube decision for the side to act in ``board`` (row 0): double before rolling, or take when doubled.

        Args:
            board: ``(2, 25)`` from the view of the side that decides (on roll, or doubled).
            doubled: the side to act has been doubled (decide take/drop) rather than being on roll.
            cube_value: current cube value (before a pending double).
            cube_owner: -1 centred, 0 the side to act, 1 the opponent.
            match_length: 0 money, else points to win.
            score: ``(side to act, opponent)``.
            crawford, jacoby, beavers: rules in force.

        Uses :mod:`bgai.game.cube` when it offers a decision for this agent; else :data:`CONSERVATIVE_CUBE`.
        """
        may_double = not doubled and cube_owner in (-1, 0) and not crawford
        if match_length and score[0] + cube_value >= match_length:
            may_double = False  # the present cube already wins the match: doubling cannot gain
        advice = _cube_from_library(
            self,
            board,
            doubled=doubled,
            cube_value=cube_value,
            cube_owner=cube_owner,
            match_length=match_length,
            score=score,
            crawford=crawford,
            jacoby=jacoby,
            beavers=beavers,
        )
        if advice is None:
            return CubeAdvice(double=False, take=True)
        if not may_double and advice.double:
            advice = CubeAdvice(False, advice.take, advice.beaver, advice.policy, advice.equities)
        return advice


def _check_dice(dice) -> tuple[int, int]:
    try:
        d = tuple(int(x) for x in dice)
    except (TypeError, ValueError):
        raise InvalidDiceError(f"dice must be two integers 1..6, got {dice!r}") from None
    if len(d) != 2 or not all(1 <= x <= 6 for x in d):
        raise InvalidDiceError(f"dice must be two integers 1..6, got {dice!r}")
    return d  # type: ignore[return-value]


def _cube_from_library(bot: Bot, board: np.ndarray, **kw) -> CubeAdvice | None:
    """Ask :mod:`bgai.game.cube` for a decision; ``None`` when it is missing or cannot decide for this agent."""
    try:
        pass
    except ImportError:  # pragma: no cover - adapter is part of the package
        return None
    return cube_advice.advise(bot, board, **kw)


def default_agent_spec() -> str:
    """The agent spec ``default`` stands for (:func:`bgai.agents.registry.default_model_spec`): ``$BGAI_MODEL``
    if set, else the newest ``*.pt`` in the repository's ``checkpoints/`` folder.

    Raises:
        AgentSpecError: there is no such model (never a silent substitute such as pubeval).
        CheckpointError: ``$BGAI_MODEL`` names a missing file.
    """

    return resolve_spec("default")
