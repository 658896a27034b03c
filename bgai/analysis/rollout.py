"""Rollouts: the value of a position or of each play, estimated by playing it out many times, batched.

A **rollout** of a position (side on roll, before its roll) plays ``trials`` games from it with the agent making
every play for both sides and averages the outcomes: cubeless probabilities ``(5,)`` in :data:`bgai.core.equity.OUTPUTS`
order for the side on roll, each with its standard error, and the cubeless equity (ppg) with its standard error.
A rollout of the **plays** of a position and roll rolls out the position after every candidate play, side by side
on the same dice, and ranks them.  The technique is GNU Backgammon's (``rollout.c``, ``BasicCubefulRollout``; the
GNU Backgammon manual, "Rollouts"):

(a) **Quasi-random dice.**  The first two rolls of every trial are stratified, as GNU Backgammon's "quasi-random
    dice" (``RolloutDice`` with ``fRotate``) do: with ``i = t mod 36`` and ``k = floor(t / 36)``, trial ``t`` rolls
    ``P0[i]`` first and ``P1[(i + k) mod 36]`` second, where ``P0``, ``P1`` are permutations of the 36 ordered rolls
    drawn from the seed (``SeedSequence(seed, spawn_key=(1,))``; GNU Backgammon seeds its permutations from the
    rollout seed too).  Every block of 36 consecutive trials has each first roll once and each second roll once,
    and 1296 trials have every (first, second) combination once.  (GNU Backgammon chains the second roll on the
    first in the same way; a plain ``(t // 36) % 36`` second roll would give the first 36 trials all the same
    second roll.)  Later rolls of trial ``t`` come from its own stream: the SplitMix64 generator (Steele, Lea &
    Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; Java's ``SplittableRandom``) started
    at a key hashed from ``(seed, t)``, so roll ``k`` is a pure function of ``(seed, t, k)``, computed for the
    whole batch at once: every trial's dice depend on ``(seed, t)`` only, never on the batch, the work unit or the
    number of workers.  (A numpy ``Generator`` per trial would do the same, but building one costs about 30
    microseconds, a quarter of a whole bear-off trial.)
(b) **The same dice for every candidate play**: trial ``t`` of every candidate uses trial ``t``'s dice (the first
    roll is then the opponent's).  The candidates' results are then positively correlated (most in races, where
    the same dice favour the same side whatever was played) and each play's ``difference_se`` is the standard
    error of its paired, per-trial difference from the best play.
(c) **Variance reduction** by luck adjustment (GNU Backgammon's "lookahead variance reduction", ``fVarRedn``): at
    every ply before the truncation, for the side on roll, every one of the 21 rolls is played with the agent's
    0-ply best play and the position after it evaluated at 0-ply (cubeless, the player who moved's view); the
    **luck** of the actual roll is its evaluation minus the mean over the 21 rolls (weights 1/36 for doubles,
    2/36 otherwise).  Each trial's result is the outcome minus the sum of the luck of every ply (seen from the
    root side), for each of the five probabilities.  The luck has mean zero for any policy, so the estimate stays
    unbiased while most of the dice's noise cancels.  As GNU Backgammon does, the lookahead uses 0-ply best plays
    and 0-ply evaluations (``aecZero``; its re-evaluation at ``n - 1`` plies is 0-ply for both 0-ply and 1-ply
    play), and at 1-ply the actual play is chosen again at 1-ply.
(d) **Truncation** after ``truncate`` plies: a trial still going is scored with the agent's 0-ply cubeless
    probabilities of the position then (GNU Backgammon's ``nTruncate`` with a cubeless evaluation).
(e) **Plays inside the rollout** at 0-ply (the agent's cubeless equity of each afterstate) or at 1-ply (the
    agent's own 1-ply search: :class:`bgai.agents.neural.NeuralAgent` with ``ply=1``, and for the ``gnubg`` agent
    GNU Backgammon's own 1-ply evaluation ``gnubg_nn.probabilities(board, 1)`` of the plays kept by its default
    1-ply move filter, at most 8 within 0.16 of the 0-ply best).
(f) **A seed**: the same seed gives the same result, for any number of workers.
(g) **Bear-off database.**  When the agent values bear-off positions exactly (``agent.exact_bearoff``: a bundle
    with the one-sided bear-off database, :mod:`bgai.model.bearoff`, e.g. the agent spec ``model.pt:bearoff=db``),
    a trial that reaches a bear-off position (both sides' checkers all in their home boards,
    :func:`bgai.model.routing.all_home`) ends there, before that side's roll, with the agent's 0-ply
    probabilities, which are the database's (a root that is a bear-off position gives the database's value with
    standard error 0).  This is GNU Backgammon's bear-off truncation of cubeless rollouts (``rollout.c``,
    ``BasicCubefulRollout``: with ``fTruncBearoffOS`` a position of class ``CLASS_BEAROFF_OS`` or lower is valued
    by the cubeless 0-ply evaluation, which is the database's, and the trial stops; ``set rollout
    bearofftruncation onesided on``).  The ``gnubg`` agent plays bear-offs out (as ``gnubg -t`` does with that
    setting off, the reference of ``scripts/check_rollout_gnubg.py``).  :attr:`RolloutSettings.bearoff_database`
    records whether it applied.

Batching: the trials (and all candidate plays) advance together, one ply at a time; each ply is one call of the
move generator (:func:`bgai.core.movegen.afterstates`) and one evaluation for the whole batch; with variance reduction
the 21 rolls of every live trial are generated and evaluated in one batch (in chunks of :data:`VR_CHUNK` positions
to bound memory).  At plies 0 and 1 the trials start from few distinct positions (one per root, then one per root
and first roll): each distinct position and roll is played, and each distinct position looked ahead, only once.  Trials are cut into work units of ``chunk_trials`` (default :func:`default_chunk`), run by
:func:`bgai.util.parallel.run_units` (:func:`run_rollout_unit`): in this process, in ``workers`` local worker
processes, or on a Ray cluster (``backend='ray'``); the agent (its spec, or the pickled agent), the roots and the
settings travel once per job (:func:`rollout_context`, built once per worker), a unit is just its trial range;
the units, and so the results, do not depend on the worker count or the backend.  Evaluations run single-threaded (:func:`bgai.util.threads.single_thread`), in this process as in the workers.

Statistics: the mean over trials, and standard errors ``std(ddof=1) / sqrt(trials)`` treating trials as
independent (as GNU Backgammon reports them; with stratified dice this overstates the error: against GNU
Backgammon's rollouts the mean z^2 is about 0.4, see ``scripts/check_rollout_gnubg.py``).  Luck-adjusted means
are not clipped: a probability near 0 or 1 can stray outside [0, 1] by about its error, as in GNU Backgammon; the
equity is computed from them (unbiased).  Reports show them clipped into [0, 1]
(:meth:`RolloutResult.clipped_probabilities`; JSON: ``probabilities``, with the unclipped means beside them as
``probabilities_unbiased``).
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent, best_k_per_input, best_per_input
from bgai.agents.gnubg import GnubgAgent, import_gnubg_nn
from bgai.agents.registry import agent_identity, make_agent
from bgai.analysis.plays import score_plays
from bgai.core.board import flip, validate
from bgai.core.dice import ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from bgai.core.equity import OUTPUTS, cubeless_equity, finished_probabilities, swap_perspective
from bgai.core.movegen import afterstates, legal_plays
from bgai.core.position_id import encode_position_ids
from bgai.errors import AgentSpecError, BgaiError, InvalidDiceError, InvalidPositionError
from bgai.game.play import MAX_PLIES, finish_games
from bgai.model.routing import all_home
from bgai.util.journal import Journal
from bgai.util.parallel import run_units
from bgai.util.threads import single_thread

__all__ = [
    "GnubgOnePly",
    "PlayRollout",
    "PlaysRolloutResult",
    "PositionsRolloutResult",
    "RolloutPolicy",
    "RolloutResult",
    "RolloutSettings",
    "TrialDice",
    "default_chunk",
    "later_rolls",
    "prune_candidates",
    "mean_and_se",
    "rollout_context",
    "rollout_plays",
    "rollout_position",
    "rollout_positions",
    "run_rollout_unit",
    "run_unit",
    "trial_dice",
    "trial_keys",
]

#: Rows (trials x candidate plays) per work unit without / with variance reduction (:func:`default_chunk`).  Big
#: units run faster (a unit's last plies, when only its longest games are left, pay the per-call overhead for few
#: positions; 648 trials of a contact position run 1.4 times as fast per trial as 216), small ones share out
#: better between workers and report progress more often.
UNIT_ROWS = 648
UNIT_ROWS_VR = 216
#: The most trials one rollout may ask for (its work units are listed before it starts).
MAX_TRIALS = 100_000_000
#: Positions whose 21 rolls go through the move generator and the evaluator together (bounds memory).
VR_CHUNK = 48
#: Positions chosen for at a time at 0-ply (bounds memory).
CHOOSE_CHUNK = 4096
#: Rows (positions x trials) rolled out together by :func:`rollout_positions` (bounds memory; bigger batches pay
#: the per-call overhead less often).
POSITIONS_ROWS = 8192
#: GNU Backgammon's default 1-ply move filter: keep at most this many plays ...
PRUNE_KEEP = 8
#: ... within this cubeless equity (ppg) of the 0-ply best.
PRUNE_MARGIN = 0.16


#: The 36 ordered rolls: index ``j`` is ``(j // 6 + 1, j % 6 + 1)``.
ORDERED_ROLLS = np.array([(j // 6 + 1, j % 6 + 1) for j in range(36)], dtype=np.int8)


# --------------------------------------------------------------------------------------------------- the dice


def _permutations(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    return rng.permutation(36), rng.permutation(36)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_TRIAL_MIX = np.uint64(0xD1B54A32D192ED03)


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea & Flood 2014) on a ``uint64`` array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def trial_keys(seed: int, trials: np.ndarray) -> np.ndarray:
    """``(n,)`` uint64 SplitMix64 state of each trial's later rolls: ``mix(mix(seed + G) ^ (trial * C))``."""
    base = _mix64(np.array([seed], dtype=np.uint64) + _GOLDEN)
    return _mix64(base ^ (np.asarray(trials, dtype=np.uint64) * _TRIAL_MIX))


def later_rolls(keys: np.ndarray, index: int | np.ndarray) -> np.ndarray:
    """Roll number ``index`` (0-based, after the two quasi-random rolls) of the trials with these keys.

    The ``index``-th output of the SplitMix64 generator started at the trial's key, ``mix(key + (index + 1) G)``,
    scaled to one of the 36 ordered rolls by its top 53 bits (``floor(36 u)``, ``u`` uniform in [0, 1)).

    Returns:
        ``(n, 2)`` int8 dice.
    """
    step = np.atleast_1d(np.asarray(index, dtype=np.uint64)) + np.uint64(1)  # arrays: wrapping, no warning
    z = _mix64(np.asarray(keys, dtype=np.uint64) + step * _GOLDEN)
    j = ((z >> np.uint64(11)).astype(np.float64) * (36.0 / 2.0**53)).astype(np.int64)
    return ORDERED_ROLLS[j]


class TrialDice:
    """The rolls of a set of trials, ply by ply (module docstring, (a)).

    Args:
        seed: the rollout seed (>= 0).
        trials: ``(n,)`` trial numbers.
    """

    def __init__(self, seed: int, trials: np.ndarray) -> None:
        self.seed = int(seed)
        self.trials = np.asarray(trials, dtype=np.int64)
        p0, p1 = _permutations(self.seed)
        i = self.trials % 36
        k = self.trials // 36
        self.first = ORDERED_ROLLS[p0[i]]
        self.second = ORDERED_ROLLS[p1[(i + k) % 36]]
        self.keys = trial_keys(self.seed, self.trials)

    def roll(self, ply: int, rows: np.ndarray) -> np.ndarray:
        """``(K, 2)`` int8 dice of ply ``ply`` (0 = the first roll) for the trials at positions ``rows`` of
        ``trials``."""
        if ply == 0:
            return self.first[rows]
        if ply == 1:
            return self.second[rows]
        return later_rolls(self.keys[rows], ply - 2)


def trial_dice(seed: int, trial: int, plies: int) -> np.ndarray:
    """The first ``plies`` rolls of trial ``trial`` of a rollout with seed ``seed``: ``(plies, 2)`` int8.

    The same dice every rollout with this seed uses for that trial (module docstring, (a)), e.g. to replay it.
    """
    dice = TrialDice(seed, np.array([trial]))
    return np.concatenate([dice.roll(k, np.array([0])) for k in range(plies)]) if plies else np.zeros((0, 2), np.int8)


# ----------------------------------------------------------------------------------------------- the policy


def prune_candidates(equity: np.ndarray, src: np.ndarray, n: int, keep: int = PRUNE_KEEP,
                     margin: float = PRUNE_MARGIN) -> np.ndarray:
    """The plays a 1-ply search looks at: per position the best ``keep`` by 0-ply equity, within ``margin`` of the
    best (GNU Backgammon's move filter ``{accept 0, extra keep, threshold margin}``).

    Args:
        equity: ``(M,)`` 0-ply equity of each afterstate for the mover.
        src: ``(M,)`` non-decreasing input index of each afterstate (every ``0..n-1`` present).
        n: number of inputs.

    Returns:
        Sorted ``(K,)`` int64 indices into ``equity``; at least the best play of every input.
    """
    return best_k_per_input(equity, src, n, keep, margin)


class GnubgOnePly(Agent):
    """GNU Backgammon 1-ply checker play through gnubg-nn: the plays kept by :func:`prune_candidates` at 0-ply are
    valued with ``gnubg_nn.probabilities(board, 1)`` (GNU Backgammon's own 1-ply evaluation of the position left
    to the opponent).

    Raises:
        AgentSpecError: gnubg-nn not installed.
    """

    name = "gnubg:ply=1"

    def __init__(self, base: GnubgAgent | None = None) -> None:
        self.base = (base or GnubgAgent()).at_ply(0)  # the filter ranks at 0-ply, whatever ply ``base`` has
        self._g = import_gnubg_nn()

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        boards = np.asarray(boards)
        n = len(boards)
        after, src = afterstates(boards, dice, validate=False)
        opp = flip(after)
        eq0 = -cubeless_equity(self.base.probabilities(opp))
        keep = prune_candidates(eq0, src, n)
        eq = np.full(len(after), -np.inf)
        cache: dict[bytes, float] = {}
        over, _ = finished_probabilities(opp[keep])
        for i, done in zip(keep, over):
            if done:  # the mover has borne off all: exact, already in eq0
                eq[i] = eq0[i]
                continue
            key = opp[i].tobytes()
            if key not in cache:
                b = opp[i].tolist()
                cache[key] = -float(cubeless_equity(np.array(self._g.probabilities([b[1], b[0]], 1))))
            eq[i] = cache[key]
        return after[best_per_input(eq, src, n)]


def _with_ply(agent: Agent, ply: int) -> Agent:
    """The agent evaluating at ``ply`` (:meth:`bgai.agents.neural.NeuralAgent.at_ply`); agents without a ply of their
    own unchanged."""
    at_ply = getattr(agent, "at_ply", None)
    return agent if at_ply is None else at_ply(ply)


class RolloutPolicy:
    """How the trials are played and scored: an agent's plays at 0-ply or 1-ply, and its 0-ply evaluation.

    Args:
        agent: the agent.  Agents with probabilities (:class:`~bgai.agents.base.ProbabilityAgent`) are used at
            0-ply for evaluations (variance reduction, truncation) and for 0-ply plays (agents with a ``ply``
            attribute, the neural agents, are copied with ``ply=0`` / ``ply=1``; the agent's own ply setting is
            not used).  Other agents (pubeval, heuristics) play with their own ``choose`` and can only be rolled
            out without variance reduction and without truncation.
        ply: 0 or 1, the depth of the plays inside the rollout.

    Raises:
        BgaiError: ``ply`` not 0 or 1.
        AgentSpecError: 1-ply asked of an agent without a 1-ply search.
    """

    def __init__(self, agent: Agent, ply: int = 0) -> None:
        if ply not in (0, 1) or isinstance(ply, bool):
            raise BgaiError(f"rollout ply must be 0 or 1, got {ply!r}")
        self.agent = agent
        self.ply = int(ply)
        self.has_probabilities = bool(agent.capabilities.probabilities)
        self.evaluator: ProbabilityAgent | None = _with_ply(agent, 0) if self.has_probabilities else None
        #: trials end at bear-off positions with the agent's (exact, database) 0-ply probabilities (docstring (g))
        self.exact_bearoff = self.has_probabilities and bool(getattr(self.evaluator, "exact_bearoff", False))
        self.searcher: Agent | None = None
        name = getattr(agent, "name", type(agent).__name__)
        if self.ply == 1:
            if isinstance(agent, GnubgAgent):
                self.searcher = GnubgOnePly(agent)
            elif self.has_probabilities and hasattr(agent, "ply"):
                self.searcher = _with_ply(agent, 1)
            else:
                raise AgentSpecError(f"agent {name!r} has no 1-ply search; roll out at ply 0")
        elif not self.has_probabilities:
            self.searcher = agent

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """0-ply cubeless probabilities ``(N, 5)`` for the side on roll of ``(N, 2, 25)`` boards."""
        return np.asarray(self.evaluator.probabilities(boards), dtype=np.float64)

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The play of each position with its roll at the policy's ply: ``(N, 2, 25)`` afterstates (mover's view)."""
        if self.searcher is not None:
            return np.asarray(self.searcher.choose(boards, dice, rng))
        out = np.empty_like(boards)
        for i in range(0, len(boards), CHOOSE_CHUNK):
            b, d = boards[i : i + CHOOSE_CHUNK], dice[i : i + CHOOSE_CHUNK]
            after, src = afterstates(b, d, validate=False)
            eq = -cubeless_equity(self.evaluate(flip(after)))
            out[i : i + len(b)] = after[best_per_input(eq, src, len(b))]
        return out

    def lookahead(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The 21 rolls of each position for variance reduction (module docstring, (c)).

        Args:
            boards: ``(L, 2, 25)`` positions, side on roll in row 0.

        Returns:
            ``(probs, best)``: ``probs`` ``(L, 21, 5)`` float64, the 0-ply probabilities after the 0-ply best play
            of each roll of :data:`ROLLS`, for the side that moves; ``best`` ``(L, 21, 2, 25)`` those plays.
        """
        n = len(boards)
        rep = np.repeat(boards, 21, axis=0)
        after, src = afterstates(rep, np.tile(ROLLS, (n, 1)), validate=False)
        p_opp = self.evaluate(flip(after))
        best = best_per_input(-cubeless_equity(p_opp), src, rep.shape[0])
        return swap_perspective(p_opp[best]).reshape(n, 21, 5), after[best].reshape(n, 21, 2, 25)


# -------------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class RolloutSettings:
    """The settings of a rollout (what decides its result, with the agent and the position).

    Attributes:
        trials: trials asked for.
        truncate: plies after which a trial is scored by the agent's 0-ply evaluation; None = played to the end.
        ply: depth of the plays inside the rollout, 0 or 1.
        seed: dice seed.
        variance_reduction: luck adjustment on (module docstring, (c)).
        chunk_trials: trials per work unit.
        agent: the agent's spec or name.
        bearoff_database: trials end at bear-off positions with the agent's exact bear-off database values
            (module docstring, (g)); set when the agent has one.
    """

    trials: int
    truncate: int | None
    ply: int
    seed: int
    variance_reduction: bool
    chunk_trials: int
    agent: str
    bearoff_database: bool = False

    def to_dict(self) -> dict:
        """Plain dict for JSON."""
        return asdict(self)


def _num(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


@dataclass
class RolloutResult:
    """Result of a rollout, for one side of one position.

    Attributes:
        probabilities: ``(5,)`` float64 cubeless probabilities in :data:`bgai.core.equity.OUTPUTS` order (NaN when no
            trial finished).
        std_errors: ``(5,)`` their standard errors (NaN with fewer than 2 trials).
        equity: cubeless equity (ppg) = :func:`bgai.core.equity.cubeless_equity` of ``probabilities``.
        equity_se: its standard error (from the per-trial equities).
        trials: trials done.
        partial: the rollout was interrupted (``trials`` is then less than asked).
        settings: :class:`RolloutSettings`.
        seconds: wall time (of this run); workers: processes used.
        resumed: trials taken from a journal (:func:`rollout_position`'s ``journal``) instead of run; not in
            :meth:`to_dict`, so that a resumed rollout's JSON is that of an uninterrupted one.
    """

    probabilities: np.ndarray
    std_errors: np.ndarray
    equity: float
    equity_se: float
    trials: int
    partial: bool
    settings: RolloutSettings
    seconds: float = 0.0
    workers: int = 1
    resumed: int = 0

    @classmethod
    def from_trials(cls, outcomes: np.ndarray, **kwargs) -> RolloutResult:
        """Summarise ``(T, 5)`` per-trial (luck-adjusted) outcomes; other fields from ``kwargs``."""
        outcomes = np.asarray(outcomes, dtype=np.float64).reshape(-1, 5)
        probs, se, eq, eq_se = mean_and_se(outcomes)
        return cls(probabilities=probs, std_errors=se, equity=eq, equity_se=eq_se, trials=len(outcomes), **kwargs)

    def clipped_probabilities(self) -> np.ndarray:
        """``probabilities`` clipped into [0, 1] (never ``-0.0``): luck-adjusted trials can leave a rare outcome's
        mean a little below 0 (a backgammon rate of -0.004); :attr:`equity` stays the unclipped, unbiased mean."""
        return np.clip(self.probabilities, 0.0, 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0

    def to_dict(self) -> dict:
        """A JSON-ready dict (non-finite numbers as None): ``probabilities`` clipped into [0, 1]
        (:meth:`clipped_probabilities`), ``probabilities_unbiased`` the luck-adjusted means as they are (what
        ``equity`` is computed from; they may stray outside [0, 1] by about their standard error)."""
        return {
            "probabilities": {k: _num(v) for k, v in zip(OUTPUTS, self.clipped_probabilities())},
            "probabilities_unbiased": {k: _num(v) for k, v in zip(OUTPUTS, self.probabilities)},
            "std_errors": {k: _num(v) for k, v in zip(OUTPUTS, self.std_errors)},
            "equity": _num(self.equity),
            "equity_se": _num(self.equity_se),
            "trials": self.trials,
            "partial": self.partial,
            "settings": self.settings.to_dict(),
            "seconds": round(self.seconds, 3),
            "workers": self.workers,
        }


def mean_and_se(outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(probabilities (5,), their standard errors (5,), equity, equity se)`` of ``(T, 5)`` per-trial outcomes
    (standard error ``std(ddof=1) / sqrt(T)``; NaN where undefined: no trial, or fewer than 2 for the errors)."""
    n = len(outcomes)
    if n == 0:
        return np.full(5, np.nan), np.full(5, np.nan), float("nan"), float("nan")
    eqs = cubeless_equity(outcomes)
    probs = outcomes.mean(axis=0)
    if n < 2:
        return probs, np.full(5, np.nan), float(eqs.mean()), float("nan")
    se = outcomes.std(axis=0, ddof=1) / math.sqrt(n)
    return probs, se, float(eqs.mean()), float(eqs.std(ddof=1) / math.sqrt(n))


@dataclass
class PlayRollout:
    """One candidate play in :class:`PlaysRolloutResult`.

    Attributes:
        play: notation (``''`` when no play is legal).
        afterstate: ``(2, 25)`` int8, mover's view.
        position_id: Position ID of the afterstate (mover's view, sides not swapped, as ``bgai hint`` gives).
        result: the rollout of the position after the play, for the player who moved.
        difference: ``result.equity`` minus the best play's (0 for the best, negative for the others).
        difference_se: standard error of that difference over the shared trials (paired: same dice).
        prior_equity: the agent's 0-ply value of the play (cubeless equity; the agent's score for agents
            without probabilities), used to pick the candidates.
    """

    play: str
    afterstate: np.ndarray = field(repr=False)
    position_id: str
    result: RolloutResult
    difference: float
    difference_se: float
    prior_equity: float

    def to_dict(self) -> dict:
        d = self.result.to_dict()
        d.pop("settings")
        d.pop("workers")
        d.pop("seconds")
        d.pop("partial")
        return {"play": self.play, "position_id": self.position_id, **d, "difference": _num(self.difference),
                "difference_se": _num(self.difference_se), "prior_equity": _num(self.prior_equity)}


@dataclass
class PlaysRolloutResult:
    """Result of :func:`rollout_plays`: the candidate plays ranked by rolled-out cubeless equity, best first.

    Attributes:
        position_id: the position before the roll (side on roll's view); dice: the roll.
        plays: :class:`PlayRollout` list, best first.
        trials, partial, settings, seconds, workers, resumed: as in :class:`RolloutResult` (every play has the
            same trials).
    """

    position_id: str
    dice: tuple[int, int]
    plays: list[PlayRollout]
    trials: int
    partial: bool
    settings: RolloutSettings
    seconds: float = 0.0
    workers: int = 1
    resumed: int = 0

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return {
            "position_id": self.position_id,
            "dice": list(self.dice),
            "trials": self.trials,
            "partial": self.partial,
            "settings": self.settings.to_dict(),
            "seconds": round(self.seconds, 3),
            "workers": self.workers,
            "plays": [p.to_dict() for p in self.plays],
        }


# -------------------------------------------------------------------------------------------------- the engine


def _to_root(probs: np.ndarray, ply: int) -> np.ndarray:
    """Probabilities of the side that is on roll at ``ply`` (before its roll) seen by the root side."""
    return probs if ply % 2 == 0 else swap_perspective(probs)


def _diff_to_root(delta: np.ndarray, ply: int) -> np.ndarray:
    """A difference of probabilities of the side on roll at ``ply``, seen by the root side (swap is affine)."""
    if ply % 2 == 0:
        return delta
    out = delta[:, [0, 3, 4, 1, 2]]
    out[:, 0] = -out[:, 0]
    return out


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of integer keys: one row index per distinct key, and each row's entry in ``first``."""
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    return first, inv.reshape(-1)


def _choose(policy: RolloutPolicy, boards: np.ndarray, dice: np.ndarray, rng, keys: np.ndarray | None) -> np.ndarray:
    """The policy's plays; with ``keys`` (equal keys = equal board and roll) each distinct input played once."""
    if keys is None:
        return policy.choose(boards, dice, rng)
    first, inv = _distinct(keys)
    return policy.choose(boards[first], dice[first], rng)[inv]


def run_unit(policy: RolloutPolicy, roots: np.ndarray, start: int, stop: int, *, seed: int,
             truncate: int | None, variance_reduction: bool) -> np.ndarray:
    """Roll out trials ``start .. stop - 1`` of every root position together (one work unit).

    Args:
        policy: :class:`RolloutPolicy`.
        roots: ``(C, 2, 25)`` int8 positions, side on roll in row 0, before its roll; a finished game (row 1
            has borne off all) scores exactly.
        start, stop: trial range.
        seed, truncate, variance_reduction: see :func:`rollout_position`.

    Returns:
        ``(C, stop - start, 5)`` float64 per-trial outcomes (luck-adjusted) for each root's side on roll.

    Raises:
        RuntimeError: a trial ran past :data:`bgai.game.play.MAX_PLIES` plies (a broken agent).
    """
    c = len(roots)
    n = stop - start
    dice = TrialDice(seed, np.arange(start, stop))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, start)))
    boards = np.repeat(np.asarray(roots, dtype=np.int8)[:, None], n, axis=1).reshape(c * n, 2, 25)
    trial_of = np.tile(np.arange(n), c)
    cand_of = np.repeat(np.arange(c), n)
    first_roll = ROLL_INDEX[dice.first[:, 0], dice.first[:, 1]]
    out = np.zeros((c * n, 5))
    luck = np.zeros((c * n, 5))
    live = np.ones(c * n, dtype=bool)
    over, exact = finished_probabilities(boards)
    out[over] = exact
    live[over] = False
    vr = variance_reduction
    ply = 0
    while live.any():
        idx = np.flatnonzero(live)
        if truncate is not None and ply >= truncate:
            out[idx] = _to_root(policy.evaluate(boards[idx]), ply)
            break
        if policy.exact_bearoff:  # module docstring (g): bear-offs end with the database's probabilities
            home = all_home(boards[idx])  # live boards: bgai.model.bearoff.is_bearoff, cheaper
            if home.any():
                ended = idx[home]
                out[ended] = _to_root(policy.evaluate(boards[ended]), ply)
                live[ended] = False
                idx = idx[~home]
                if not idx.size:
                    break
        d = dice.roll(ply, trial_of[idx])
        b = boards[idx]
        # plies 0 and 1 start from few distinct positions (one per root, then one per root and first roll, as
        # plays are deterministic): each distinct position is looked ahead, and each (position, roll) played, once
        board_key = None
        if ply < 2 and policy.has_probabilities:
            board_key = cand_of[idx] if ply == 0 else cand_of[idx] * 21 + first_roll[trial_of[idx]]
        roll = ROLL_INDEX[d[:, 0], d[:, 1]]
        play_key = None if board_key is None else board_key * 21 + roll
        if vr:
            first, inv = _distinct(board_key) if board_key is not None else (np.arange(len(b)), np.arange(len(b)))
            probs = np.empty((len(first), 21, 5))
            best = np.empty((len(first), 21, 2, 25), dtype=np.int8)
            for i in range(0, len(first), VR_CHUNK):
                probs[i : i + VR_CHUNK], best[i : i + VR_CHUNK] = policy.lookahead(b[first[i : i + VR_CHUNK]])
            mean = np.einsum("nrk,r->nk", probs, ROLL_WEIGHTS)
            luck[idx] += _diff_to_root(probs[inv, roll] - mean[inv], ply)
            chosen = best[inv, roll] if policy.ply == 0 else _choose(policy, b, d, rng, play_key)
        else:
            chosen = _choose(policy, b, d, rng, play_key)
        if chosen.shape != b.shape:
            raise RuntimeError(f"the agent returned shape {chosen.shape}, expected {b.shape}")
        done, points = finish_games(chosen)
        if done.any():
            won = np.zeros((int(done.sum()), 5))
            won[:, 0] = 1.0
            won[:, 1] = points[done] >= 2
            won[:, 2] = points[done] >= 3
            ended = idx[done]
            out[ended] = _to_root(won, ply)
            live[ended] = False
        going = idx[~done]
        boards[going] = flip(chosen[~done])
        ply += 1
        if ply > MAX_PLIES:
            raise RuntimeError(f"a rollout trial did not finish within {MAX_PLIES} plies")
    out -= luck
    return out.reshape(c, n, 5)


# ---- work units (bgai.util.parallel.run_units)


def rollout_context(payload, ply: int, roots: np.ndarray, kwargs: dict) -> tuple[RolloutPolicy, np.ndarray, dict]:
    """The context of a rollout's work units, built once per worker (the ``setup`` of
    :func:`bgai.util.parallel.run_units`; its arguments travel once per job): the policy, with the agent rebuilt
    from its spec when ``payload`` is a string (:func:`bgai.agents.registry.make_agent`), the ``(C, 2, 25)`` roots
    and the trial settings (``seed``, ``truncate``, ``variance_reduction`` of :func:`run_unit`).

    Raises:
        AgentSpecError, CheckpointError: a bad spec; BgaiError: a bad ply.
    """
    agent = make_agent(payload) if isinstance(payload, str) else payload
    return RolloutPolicy(agent, ply), roots, kwargs


def run_rollout_unit(context: tuple[RolloutPolicy, np.ndarray, dict], unit: tuple[int, int]) -> np.ndarray:
    """One work unit, trials ``unit = (start, stop)`` of every root (:func:`run_unit`): ``(C, stop - start, 5)``
    float64 outcomes.  A pure function of the job's settings and ``unit``, wherever it runs."""
    policy, roots, kwargs = context
    start, stop = unit
    return run_unit(policy, roots, start, stop, **kwargs)


def _payload(agent: Agent):
    """What a worker rebuilds the agent from: its spec when it has one (:func:`bgai.agents.registry.make_agent`),
    ``'gnubg'`` (``'gnubg:ply=N'``) for the gnubg agent, else the agent object itself (pickled)."""
    spec = getattr(agent, "spec", None)
    if isinstance(spec, str):
        return spec
    if isinstance(agent, GnubgAgent):
        return agent.name  # 'gnubg' or 'gnubg:ply=N', a spec
    return agent


ProgressFn = Callable[[int, int, float, float], None]


def _encode_outcomes(res: np.ndarray) -> dict:
    """A unit's ``(C, n, 5)`` float64 outcomes for a journal, exactly: shape and little-endian IEEE bytes."""
    arr = np.ascontiguousarray(res, dtype="<f8")
    return {"shape": list(arr.shape), "float64": base64.b64encode(arr.tobytes()).decode("ascii")}


def _decode_outcomes(data: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(data["float64"]), dtype="<f8").astype(np.float64).reshape(data["shape"])


def _journal_settings(policy: RolloutPolicy, roots: np.ndarray, settings: RolloutSettings, units: list) -> dict:
    """What a rollout's result depends on, for its journal: the settings with the agent as its model file's
    sha256 and options (:func:`bgai.agents.registry.agent_identity`, not the spec as typed), the roots (Position
    IDs) and the units."""
    spec = getattr(policy.agent, "spec", None)
    agent = agent_identity(spec) if isinstance(spec, str) else settings.agent
    return {**settings.to_dict(), "agent": agent, "roots": list(encode_position_ids(roots)), "units": units}


def _execute(policy: RolloutPolicy, roots: np.ndarray, settings: RolloutSettings, workers: int,
             progress: ProgressFn | None, watch: Callable[[np.ndarray], tuple[float, float]], backend: str = "local",
             journal: str | None = None):
    """Run every work unit with :func:`bgai.util.parallel.run_units` (``backend`` ``'local'`` or ``'ray'``),
    skipping those recorded in ``journal`` and recording the others as they finish; returns
    ``(outcomes (C, T, 5) in trial order, partial, seconds, workers used, units taken from the journal)``."""
    chunk = settings.chunk_trials
    units = [(s, min(s + chunk, settings.trials)) for s in range(0, settings.trials, chunk)]
    kwargs = {"seed": settings.seed, "truncate": settings.truncate,
              "variance_reduction": settings.variance_reduction}
    parts: dict[int, np.ndarray] = {}
    roots = np.ascontiguousarray(roots, dtype=np.int8)
    book = None
    if journal is not None:
        book = Journal(journal, "rollout", _journal_settings(policy, roots, settings, units))
        parts.update({u: _decode_outcomes(r) for u, r in book.done.items() if 0 <= u < len(units)})
    resumed = sorted(parts)
    todo = [u for u in range(len(units)) if u not in parts]

    def report() -> None:
        if progress is not None and parts:
            done = np.concatenate([parts[u] for u in sorted(parts)], axis=1)
            eq, se = watch(done)
            progress(done.shape[1], settings.trials, eq, se)

    def collect(k: int, res: np.ndarray) -> None:
        parts[todo[k]] = res
        if book is not None:
            book.record(todo[k], _encode_outcomes(res))
        report()

    used = max(1, min(workers, len(units)))
    partial = False
    report()
    t0 = time.perf_counter()
    try:
        if todo:
            # (one worker: run_units runs the units here single-threaded, as the worker processes run them)
            run = run_units(run_rollout_unit, [units[u] for u in todo], workers=workers, setup=rollout_context,
                            setup_args=(_payload(policy.agent), policy.ply, roots, kwargs),
                            context=(policy, roots, kwargs), backend=backend, on_result=collect)
            partial = not run.complete
    except KeyboardInterrupt:  # raised by the progress callback, or by a caller's own SIGINT handler
        partial = True
    finally:
        if book is not None:
            book.close()
    seconds = time.perf_counter() - t0
    if parts:
        outcomes = np.concatenate([parts[u] for u in sorted(parts)], axis=1)
    else:
        outcomes = np.zeros((len(roots), 0, 5))
    return outcomes, partial, seconds, used, resumed


def _resumed_trials(settings: RolloutSettings, units: list[int]) -> int:
    chunk = settings.chunk_trials
    return sum(min(chunk, settings.trials - u * chunk) for u in units)


def default_chunk(candidates: int, variance_reduction: bool) -> int:
    """Trials per work unit when not given: :data:`UNIT_ROWS` (or :data:`UNIT_ROWS_VR`) rows shared by the
    candidates, rounded to a multiple of 36 (each unit then has every first roll equally often), at least 36."""
    rows = UNIT_ROWS_VR if variance_reduction else UNIT_ROWS
    return max(36, 36 * round(rows / max(1, candidates) / 36))


def _check_settings(agent: Agent, trials, truncate, ply, seed, variance_reduction, workers, chunk_trials,
                    candidates: int = 1):
    def is_int(v) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

    if not is_int(trials) or trials < 1:
        raise BgaiError(f"trials must be a positive integer, got {trials!r}")
    if trials > MAX_TRIALS:
        raise BgaiError(f"trials must be at most {MAX_TRIALS:,} in one rollout, got {trials:,}")
    if truncate is not None and (not is_int(truncate) or truncate < 1):
        raise BgaiError(f"truncate must be a positive number of plies (or None for no truncation), got {truncate!r}")
    if not is_int(seed) or seed < 0:
        raise BgaiError(f"seed must be a non-negative integer, got {seed!r}")
    if not is_int(workers) or workers < 1:
        raise BgaiError(f"workers must be >= 1, got {workers!r}")
    if chunk_trials is None:
        chunk_trials = default_chunk(candidates, bool(variance_reduction))
    if not is_int(chunk_trials) or chunk_trials < 1:
        raise BgaiError(f"chunk_trials must be a positive integer, got {chunk_trials!r}")
    policy = RolloutPolicy(agent, ply)
    if not policy.has_probabilities and (variance_reduction or truncate is not None):
        name = getattr(agent, "name", type(agent).__name__)
        raise AgentSpecError(
            f"agent {name!r} has no probabilities: variance reduction and truncation need an agent that has "
            "(gnubg or a neural model); roll it out without variance reduction and without truncation"
        )
    spec = getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__)
    settings = RolloutSettings(trials=int(trials), truncate=None if truncate is None else int(truncate),
                               ply=int(ply), seed=int(seed), variance_reduction=bool(variance_reduction),
                               chunk_trials=int(chunk_trials), agent=str(spec),
                               bearoff_database=policy.exact_bearoff)
    return policy, settings


def _check_board(board) -> np.ndarray:
    b = validate(np.asarray(board))
    if b.shape[0] != 1:
        raise InvalidPositionError(f"expected one (2, 25) board, got {b.shape[0]} boards")
    left = b[0].sum(axis=1)
    if (left == 0).any():
        raise InvalidPositionError("the game is over: a side has borne off all 15 checkers; nothing to roll out")
    return b[0]


def rollout_position(
    agent: Agent,
    board: np.ndarray,
    *,
    trials: int = 1296,
    truncate: int | None = None,
    ply: int = 0,
    seed: int = 0,
    variance_reduction: bool = True,
    workers: int = 1,
    progress: ProgressFn | None = None,
    chunk_trials: int | None = None,
    backend: str = "local",
    journal: str | None = None,
) -> RolloutResult:
    """Roll out a position for the side on roll, before its roll (cubeless; module docstring).

    Args:
        agent: the agent playing both sides (:class:`RolloutPolicy`); an object built by
            :func:`bgai.agents.registry.make_agent` is rebuilt from its spec in worker processes.
        board: ``(2, 25)`` position, side on roll in row 0 (bgai layout).
        trials: number of trials (games), 1 .. :data:`MAX_TRIALS`; a multiple of 36 keeps the first roll fully
            stratified.
        truncate: plies played before a trial is scored at 0-ply; None = every trial played to the end.
        ply: depth of the plays inside the rollout, 0 or 1.
        seed: dice seed (>= 0); the same seed gives the same result.
        variance_reduction: luck adjustment (needs an agent with probabilities).
        workers: processes (1 = this process), or Ray actors; the result does not depend on it.
        progress: called after every work unit with ``(trials done, trials asked, running equity, its SE)``.
        chunk_trials: trials per work unit; None = :func:`default_chunk`.  Without variance reduction the result
            does not depend on it; with it, only in the last bits (float rounding of batched evaluations).
        backend: :func:`bgai.util.parallel.run_units` backend, ``'local'`` (default) or ``'ray'`` (after
            :func:`bgai.util.ray_backend.connect`); the result is the same, bit for bit.
        journal: a journal file (:class:`bgai.util.journal.Journal`): each finished work unit's per-trial outcomes
            are appended to it; the units it already holds (a rollout of the same settings, agent model, position
            and units that was stopped, even killed) are taken from it, not run.  The result is that of an
            uninterrupted rollout, bit for bit (:attr:`RolloutResult.resumed` says how many trials came from it).

    Returns:
        :class:`RolloutResult` for the side on roll.  A ``KeyboardInterrupt`` during the rollout returns the trials
        finished so far with ``partial=True`` (``trials`` may be 0, the numbers then NaN).

    Raises:
        InvalidPositionError: a bad board or a finished game.
        BgaiError: bad settings, or a journal of another rollout (one line); AgentSpecError: variance reduction or
            truncation for an agent without probabilities, or 1-ply for an agent without a 1-ply search.
    """
    b = _check_board(board)
    policy, settings = _check_settings(agent, trials, truncate, ply, seed, variance_reduction, workers, chunk_trials)

    def watch(done: np.ndarray) -> tuple[float, float]:
        _, _, eq, se = mean_and_se(done[0])
        return eq, se

    outcomes, partial, seconds, used, resumed = _execute(policy, b[None], settings, workers, progress, watch, backend,
                                                         journal)
    return RolloutResult.from_trials(outcomes[0], partial=partial, settings=settings, seconds=seconds, workers=used,
                                     resumed=_resumed_trials(settings, resumed))


@dataclass
class PositionsRolloutResult:
    """Result of :func:`rollout_positions`: one rollout per position, for each position's side on roll.

    Attributes:
        probabilities: ``(N, 5)`` float64 cubeless probabilities (:data:`bgai.core.equity.OUTPUTS` order).
        std_errors: ``(N, 5)`` float64 their standard errors (NaN with 1 trial; 0 for a bear-off root valued by
            the database).
        equity: ``(N,)`` cubeless equity (ppg); equity_se: ``(N,)`` its standard error.
        trials: trials per position.
        settings: :class:`RolloutSettings` (``chunk_trials`` = ``trials``: every position's trials run in one unit).
        seconds: wall time of the whole batch.
    """

    probabilities: np.ndarray
    std_errors: np.ndarray
    equity: np.ndarray
    equity_se: np.ndarray
    trials: int
    settings: RolloutSettings
    seconds: float = 0.0


def rollout_positions(
    agent: Agent,
    boards: np.ndarray,
    *,
    trials: int = 1296,
    truncate: int | None = None,
    ply: int = 0,
    seed: int = 0,
    variance_reduction: bool = True,
    max_rows: int = POSITIONS_ROWS,
) -> PositionsRolloutResult:
    """Roll out many independent positions together, each for its side on roll (cubeless; module docstring).

    Every position gets exactly the rollout :func:`rollout_position` gives it with the same agent and settings
    (trials, truncation, ply, variance reduction, the bear-off database ending (g)); only the batching differs: the
    trials of up to ``max_rows // trials`` positions advance together through :func:`run_unit` (one move-generator
    call and one evaluation per ply for all of them), in this process, single-threaded.  With variance reduction
    the work is dominated by the lookahead's evaluations, which grow with the rows, so batching gains little
    (``scripts/bench_labels.py``: 1.06x on 144-trial rollouts of contact positions).

    Dice: **every position uses the same trial dice streams**: trial ``t`` of every position rolls the dice of
    trial ``t`` of the seed (module docstring, (a)), exactly the dice ``rollout_position(..., seed=seed)`` uses.
    So position ``i``'s result equals ``rollout_position(agent, boards[i], seed=seed, ...)`` up to float rounding
    of batched evaluations (differences of about 1e-8 measured with variance reduction), and each result is an
    unbiased estimate with the standard error of an ordinary rollout.  The errors of different positions are
    correlated (the same lucky dice help the side on roll of every position a little); for training labels that is
    harmless, as each label's expectation is its true value and a net averages over many batches with other seeds
    (give every batch its own seed, as :mod:`bgai.train.labels` does per shard).  Per-position dice would need a
    seed per root inside :func:`run_unit`; sharing them keeps the batch one call.

    Args:
        agent, trials, truncate, ply, seed, variance_reduction: as :func:`rollout_position`.
        boards: ``(N, 2, 25)`` positions (N >= 1), side on roll in row 0 (bgai layout), none finished.
        max_rows: positions x trials per batch (>= 1; at least one position per batch); the result does not depend
            on it beyond float rounding.

    Returns:
        :class:`PositionsRolloutResult` with ``(N, 5)`` probabilities and standard errors.

    Raises:
        InvalidPositionError: a bad board or a finished game (its index named).
        BgaiError: bad settings; AgentSpecError: as :func:`rollout_position`.
    """
    b = validate(np.asarray(boards))
    over = b.sum(axis=2).min(axis=1) == 0
    if over.any():
        raise InvalidPositionError(f"position {int(np.flatnonzero(over)[0])} is a finished game: nothing to roll out")
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 1:
        raise BgaiError(f"max_rows must be a positive integer, got {max_rows!r}")
    policy, settings = _check_settings(agent, trials, truncate, ply, seed, variance_reduction, 1, int(trials))
    group = max(1, int(max_rows) // settings.trials)
    kwargs = {"seed": settings.seed, "truncate": settings.truncate,
              "variance_reduction": settings.variance_reduction}
    n = len(b)
    probs, se = np.empty((n, 5)), np.empty((n, 5))
    eq, eq_se = np.empty(n), np.empty(n)
    t0 = time.perf_counter()
    with single_thread():
        for i in range(0, n, group):
            out = run_unit(policy, b[i : i + group], 0, settings.trials, **kwargs)
            for j, o in enumerate(out):
                probs[i + j], se[i + j], eq[i + j], eq_se[i + j] = mean_and_se(o)
    return PositionsRolloutResult(probabilities=probs, std_errors=se, equity=eq, equity_se=eq_se,
                                  trials=settings.trials, settings=settings, seconds=time.perf_counter() - t0)


def _prior(policy: RolloutPolicy, board: np.ndarray, after: np.ndarray) -> np.ndarray:
    """0-ply value of each afterstate for the mover (cubeless equity, or the agent's own score)."""
    if policy.has_probabilities:
        return -cubeless_equity(policy.evaluate(flip(after)))
    scores, _ = score_plays(policy.agent, board[None], after, np.zeros(len(after), dtype=np.int64))
    return np.asarray(scores, dtype=np.float64)


def rollout_plays(
    agent: Agent,
    board: np.ndarray,
    dice,
    *,
    candidates: int | None = None,
    trials: int = 1296,
    truncate: int | None = None,
    ply: int = 0,
    seed: int = 0,
    variance_reduction: bool = True,
    workers: int = 1,
    progress: ProgressFn | None = None,
    chunk_trials: int | None = None,
    backend: str = "local",
    journal: str | None = None,
) -> PlaysRolloutResult:
    """Roll out the plays of a position and roll side by side on the same dice, and rank them.

    Every candidate's afterstate is rolled out as the opponent's position on roll (the first roll of trial ``t`` is
    the opponent's), with the same trials for every candidate (module docstring, (b)); results are turned to the
    mover's view.  Truncation counts plies after the play.

    Args:
        agent, board, trials, truncate, ply, seed, variance_reduction, workers, chunk_trials, backend, journal: see
            :func:`rollout_position` (the journal also records the candidate plays).
        dice: the roll ``(d1, d2)``, 1..6.
        candidates: None = every legal play; ``K`` = the best ``K`` by the agent's 0-ply value.
        progress: as in :func:`rollout_position`, with the running equity of the currently best play.

    Returns:
        :class:`PlaysRolloutResult`, plays best first (ties keep the 0-ply order).

    Raises:
        InvalidPositionError, InvalidDiceError: bad input or a finished game; BgaiError: ``candidates`` < 1 or
            bad settings; AgentSpecError: as :func:`rollout_position`.
    """
    b = _check_board(board)
    d = np.asarray(dice)
    if d.shape != (2,) or not np.isin(d, np.arange(1, 7)).all():
        raise InvalidDiceError(f"dice must be two values 1..6, got {dice!r}")
    if candidates is not None and (isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer))
                                   or candidates < 1):
        raise BgaiError(f"candidates must be a positive integer (or None for every play), got {candidates!r}")
    plays = legal_plays(b, (int(d[0]), int(d[1])))
    n_cand = len(plays) if candidates is None else min(int(candidates), len(plays))
    policy, settings = _check_settings(agent, trials, truncate, ply, seed, variance_reduction, workers, chunk_trials,
                                       candidates=n_cand)
    after = np.stack([np.asarray(p.afterstate, dtype=np.int8) for p in plays])
    prior = _prior(policy, b, after)
    order = np.lexsort((np.arange(len(after)), -prior))
    if candidates is not None:
        order = order[: int(candidates)]
    after, prior = after[order], prior[order]
    names = [plays[i].notation for i in order]
    roots = flip(after)

    def watch(done: np.ndarray) -> tuple[float, float]:
        eqs = -cubeless_equity(done)  # (C, T) for the mover: the opponent's equity negated
        best = int(np.argmax(eqs.mean(axis=1)))
        n = eqs.shape[1]
        return float(eqs[best].mean()), float(eqs[best].std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")

    outcomes, partial, seconds, used, resumed = _execute(policy, roots, settings, workers, progress, watch, backend,
                                                         journal)
    mover = swap_perspective(outcomes)  # (C, T, 5) for the player who moved
    results = [RolloutResult.from_trials(mover[k], partial=partial, settings=settings, seconds=seconds, workers=used)
               for k in range(len(after))]
    eqs = cubeless_equity(mover)  # (C, T)
    n = eqs.shape[1]
    means = eqs.mean(axis=1) if n else np.full(len(after), np.nan)
    rank = np.lexsort((np.arange(len(after)), -np.nan_to_num(means, nan=-np.inf))) if n else np.arange(len(after))
    best = int(rank[0])
    ids = encode_position_ids(after)
    out = []
    for k in rank:
        diff = eqs[k] - eqs[best]
        diff_se = float(diff.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        out.append(PlayRollout(play=names[k], afterstate=after[k], position_id=ids[k], result=results[k],
                               difference=float(diff.mean()) if n else float("nan"), difference_se=diff_se,
                               prior_equity=float(prior[k])))
    return PlaysRolloutResult(position_id=encode_position_ids(b[None])[0], dice=(int(d[0]), int(d[1])), plays=out,
                              trials=n, partial=partial, settings=settings, seconds=seconds, workers=used,
                              resumed=_resumed_trials(settings, resumed))
