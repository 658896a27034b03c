"""One bot for the servers and terminal play: an :class:`~bgai.agents.base.Agent` behind a lock.

:class:`Bot` is a thin wrapper of :mod:`bgai.analysis.api` for **one** position at a time (bgai's layout,
:mod:`bgai.core.board`, side to act in row 0): the legal plays ranked (:func:`~bgai.analysis.api.rank_plays`),
the chosen play (:func:`~bgai.analysis.api.choose_play`), outcome probabilities and evaluations
(:func:`~bgai.analysis.api.evaluate_position`), cube decisions (:func:`~bgai.analysis.api.decide_cube`: GNU
Backgammon-style 0-ply cube decisions for agents with probabilities, "never double, always take" for the
others) and resignations.  Agent calls are serialised with a lock, so one ``Bot`` can be shared by the threads
of a server; randomness comes from a ``np.random.Generator`` passed in by the caller (one per connection or
game).
"""

from __future__ import annotations

import threading

import numpy as np

from bgai.agents.base import Agent, Capabilities
from bgai.agents.registry import make_agent, resolve_spec
from bgai.analysis.api import (
    CubeDecision,
    Evaluation,
    RankedPlay,
    choose_play,
    decide_cube,
    evaluate_position,
    position_probabilities,
    rank_plays,
)
from bgai.analysis.plays import use_compiled as use_compiled_step_reader
from bgai.analysis.resign import ResignationDecision, resignation_decision
from bgai.core import movegen
from bgai.core.board import as_batch
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.core.movegen import legal_plays
from bgai.core.position_id import use_compiled as use_compiled_position_ids

__all__ = ["Bot", "default_agent_spec"]


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
    def capabilities(self) -> Capabilities:
        """What the agent can answer (:class:`bgai.agents.base.Capabilities`)."""
        return self.agent.capabilities

    @property
    def has_probabilities(self) -> bool:
        """True when the agent estimates outcome probabilities (neural nets, GNU Backgammon)."""
        return bool(self.agent.capabilities.probabilities)

    def prepare_to_serve(self) -> bool:
        """Make the agent ready for a server's stream of single-position requests, so that no request pays a
        one-off cost: load the compiled kernels (numba, the ``fast`` extra) of the per-request work -- the move
        generator (:func:`bgai.core.movegen.use_compiled`), the step reader of ranked plays
        (:func:`bgai.analysis.plays.use_compiled`), the batch Position ID encoder
        (:func:`bgai.core.position_id.use_compiled`) and a neural agent's input encoders and classifier
        (:meth:`bgai.model.bundle.ModelBundle.use_compiled_encoders`); read the model's databases (the bear-off
        database: built on a machine's first use, a few seconds, which the first bear-off request would otherwise
        wait for, and every request behind it; :meth:`bgai.model.bundle.ModelBundle.load_databases`); and declare
        the model's weights fixed (:meth:`bgai.model.bundle.ModelBundle.fix_weights`).  By default a process
        loads the kernels only after a warm-up on the numpy path (seconds of work, thousands of requests), and one
        request's numpy path costs about 0.8 ms more.  Loading takes about 1 s (numba's import and cache; the
        first run on a machine compiles, up to a minute).  The answers are the same either way.

        Returns:
            Whether the compiled move generator is in use (False without numba or with ``BGAI_NUMBA=0``).
        """
        on = movegen.use_compiled()
        use_compiled_step_reader()  # the step reader of the ranked plays (their steps and notation)
        use_compiled_position_ids()  # the batch Position ID encoder (the IDs of an answer's afterstates)
        bundle = getattr(self.agent, "bundle", None)
        if hasattr(bundle, "use_compiled_encoders") and hasattr(bundle, "fix_weights"):
            bundle.use_compiled_encoders()
            bundle.load_databases()
            bundle.fix_weights()  # a served model's weights never change
        return on

    # ----------------------------------------------------------------------------------------------- plays
    @staticmethod
    def legal_plays(board: np.ndarray, dice) -> list:
        """The legal plays of one position (:func:`bgai.core.movegen.legal_plays`); an empty list when none.

        Raises:
            InvalidPositionError, InvalidDiceError: bad board or dice.
        """
        return [p for p in legal_plays(as_batch(board)[0], Dice.parse(dice)) if p.steps]

    def choose_play(self, board: np.ndarray, dice, rng: np.random.Generator):
        """The agent's play (:func:`bgai.analysis.api.choose_play`), or None when no play is legal."""
        with self._lock:
            return choose_play(self.agent, board, dice, rng)

    def rank_plays(self, board: np.ndarray, dice, rng: np.random.Generator | None = None,
                   cube_state: CubeState | None = None) -> list[RankedPlay]:
        """All legal plays, best first (:func:`bgai.analysis.api.rank_plays`); empty when no play is legal.

        An agent without an evaluation (the random bot) lists its chosen play first, then the others, with
        ``score`` NaN and ``score_kind`` ``'none'``.
        """
        if not self.agent.capabilities.play_scores:
            plays = self.legal_plays(board, dice)
            if not plays:
                return []
            chosen = self.choose_play(board, dice, rng if rng is not None else np.random.default_rng(0))
            order = sorted(plays, key=lambda p: p != chosen)  # equal plays (the same afterstate), not the same object
            return [RankedPlay(p, float("nan"), "none") for p in order]
        with self._lock:
            ranked = rank_plays(self.agent, board, dice, cube_state)
        # no legal play: the one entry is the unchanged position (its steps are read only here)
        return [] if len(ranked) == 1 and not ranked[0].play.steps else ranked

    # ------------------------------------------------------------------------------------- probabilities
    def probabilities(self, board: np.ndarray) -> np.ndarray | None:
        """``(5,)`` float64 cubeless outcome probabilities for the side on roll before it rolls, or ``None``
        for agents without probabilities."""
        if not self.has_probabilities:
            return None
        with self._lock:
            return position_probabilities(self.agent, board)

    def evaluate(self, board: np.ndarray, cube_state: CubeState | None = None) -> Evaluation:
        """:func:`bgai.analysis.api.evaluate_position` (raises AgentCapabilityError without probabilities)."""
        with self._lock:
            return evaluate_position(self.agent, board, cube_state)

    # --------------------------------------------------------------------------------------------- cube
    def cube_decision(self, board: np.ndarray, cube_state: CubeState | None = None, *,
                      doubled: bool = False) -> CubeDecision:
        """:func:`bgai.analysis.api.decide_cube`: the decision of the side on roll (the doubler when
        ``doubled``; ``board`` and ``cube_state`` are then from the view of the side doubled)."""
        with self._lock:
            return decide_cube(self.agent, board, cube_state, doubled=doubled)

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


def default_agent_spec() -> str:
    """The agent spec ``default`` stands for (:func:`bgai.agents.registry.default_model_spec`): ``$BGAI_MODEL``
    if set, else the model the repository's ``checkpoints/models.json`` names as its default.

    Raises:
        AgentSpecError: there is no such model (never a silent substitute such as pubeval).
        CheckpointError: ``$BGAI_MODEL`` names a missing file.
    """
    return resolve_spec("default")
