"""Cubeful play: money sessions with the doubling cube and N-point matches, batched, between two agents.

This module adds the cube phase to the game runner of :mod:`bgai.play` (whose per-turn functions it reuses:
:func:`~bgai.play.opening_roll`, :class:`~bgai.play.DiceStreams`, :func:`~bgai.play.checker_play`,
:func:`~bgai.play.finish_games`) and keeps score with :class:`bgai.match.Match`:

1. before rolling (not on the opening roll, whose dice are already known), a player who may double
   (:meth:`Match.can_double` and :meth:`CubeState.may_double`) asks his :class:`CubePolicy`; if he doubles,
   the opponent's policy takes or passes (a pass ends the game: the doubler scores the cube before the double);
2. the roll and the checker play; a game that ends scores cube x 1/2/3 (:meth:`Match.end_game`, Jacoby rule in
   money play).

Units.  A money session is a series of independent cubeful games (one unit = one game, points = cube x result).
A match unit is a whole match: its games are played one after the other in the same slot until a player reaches
the match length.  Slot ``u`` draws all its dice from ``bgai.play.dice_rng(seed, pair)``; in duplicate mode slots
``2p`` and ``2p + 1`` use the same generator with A in seat 0 and seat 1 (the cube makes the two games of a pair
drift apart, but they still share most of their luck).

Cube policies (:func:`cube_policy_for`): agents with probabilities (:class:`~bgai.agents.base.ProbabilityAgent`:
gnubg, neural nets) use :class:`JanowskiCubePolicy`, i.e. :mod:`bgai.cube` on their own cubeless probabilities
(GNU Backgammon's 0-ply cube logic).  Agents without probabilities (pubeval, heuristics, random) use
:class:`NeverDoubleAlwaysTake`: they never double and always take.  This is the simplest policy that needs
no equity estimate and never ends a game early; against a cube-using opponent it gives equity away (it takes
hopeless doubles and never cashes), which the reports show as the opponent's doubles and the ppg.

Statistics: money: A's points per game (ppg) with a 95% confidence interval (normal approximation over pairs in
duplicate mode, over games otherwise); match: A's match-winning percentage with a 95% CI.  Both: win, gammon and
backgammon rates per player (of all games, cumulative), average final cube value per game, doubles offered,
takes and passes per player (a take/pass counts for the player who answered).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import sys
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.board import flip, starting_board
from bgai.cube import CubeState, analyse_cube, cube_efficiency
from bgai.errors import BgaiError, MatchStateError
from bgai.match import Match, MatchRules
from bgai.play import MAX_PLIES, DiceStreams, checker_play, dice_rng, finish_games, opening_roll

__all__ = [
    "CubePolicy",
    "JanowskiCubePolicy",
    "NeverDoubleAlwaysTake",
    "cube_policy_for",
    "agent_cube_decision",
    "CubefulResults",
    "play_cubeful",
    "CubeReport",
    "evaluate_cubeful",
]

Z95 = 1.959963984540054


# --------------------------------------------------------------------------------------------- cube policies


class CubePolicy(ABC):
    """How a player handles the cube, batched.

    Both methods get the positions **from the doubler's view** (the player about to roll in row 0) and the
    :class:`~bgai.cube.CubeState` of each position seen by the doubler, and return one bool per position.
    """

    name = "policy"

    @abstractmethod
    def offer(self, boards: np.ndarray, states: Sequence[CubeState]) -> np.ndarray:
        """``(K,)`` bool: double now?  ``boards`` ``(K, 2, 25)`` int8, the deciding player on roll."""

    @abstractmethod
    def accept(self, boards: np.ndarray, states: Sequence[CubeState]) -> np.ndarray:
        """``(K,)`` bool: take the double?  ``boards`` ``(K, 2, 25)`` int8 and ``states`` from the **doubler's**
        view (the answering player is row 1)."""


class NeverDoubleAlwaysTake(CubePolicy):
    """The simple policy of agents without probabilities (pubeval, heuristics, random): never double, always
    take."""

    name = "never double, always take"

    def offer(self, boards, states):
        return np.zeros(len(states), dtype=bool)

    def accept(self, boards, states):
        return np.ones(len(states), dtype=bool)


class JanowskiCubePolicy(CubePolicy):
    """Cube decisions from an agent's cubeless probabilities with :func:`bgai.cube.analyse_cube` (Janowski in
    money play, GNU Backgammon's match model, cube efficiency of :func:`bgai.cube.cube_efficiency`).

    The offer is made on "Double, take/pass" and "Redouble, ..." (not on "optional" or "too good"); the take
    when double/take is worth less to the doubler than double/pass.  Positions sharing a state are analysed
    together; the agent's ``probabilities`` is called once per method call.
    """

    name = "janowski"

    def __init__(self, agent: ProbabilityAgent) -> None:
        self.agent = agent

    def _analyse(self, boards: np.ndarray, states: Sequence[CubeState], what: str) -> np.ndarray:
        out = np.zeros(len(states), dtype=bool)
        if len(states) == 0:
            return out
        probs = self.agent.probabilities(boards)
        eff = cube_efficiency(boards)
        groups: dict[CubeState, list[int]] = defaultdict(list)
        for k, s in enumerate(states):
            groups[s].append(k)
        for s, idx in groups.items():
            a = analyse_cube(probs[idx], s, eff[idx])
            out[idx] = a.double if what == "double" else a.take
        return out

    def offer(self, boards, states):
        return self._analyse(boards, states, "double")

    def accept(self, boards, states):
        return self._analyse(boards, states, "take")


def agent_cube_decision(agent: Agent, board: np.ndarray, state: CubeState):
    """The cube decision of one position for the side on roll, by an agent with probabilities.

    Args:
        agent: a :class:`~bgai.agents.base.ProbabilityAgent`.
        board: ``(2, 25)`` position, side on roll in row 0, before the roll.
        state: the cube from the side on roll's view.

    Returns:
        :class:`bgai.cube.CubeDecision`, or None when the agent has no probabilities (its policy is then
        :class:`NeverDoubleAlwaysTake`).
    """
    from bgai.board import as_batch
    from bgai.cube import cube_decision

    if not isinstance(agent, ProbabilityAgent):
        return None
    b = as_batch(board)
    probs = agent.probabilities(b)[0]
    return cube_decision(probs, state, float(cube_efficiency(b)[0]))


def cube_policy_for(agent: Agent) -> CubePolicy:
    """:class:`JanowskiCubePolicy` for agents with probabilities, :class:`NeverDoubleAlwaysTake` otherwise."""
    if isinstance(agent, ProbabilityAgent):
        return JanowskiCubePolicy(agent)
    return NeverDoubleAlwaysTake()


# ------------------------------------------------------------------------------------------------- the runner


@dataclass
class CubefulResults:
    """Games and units (money games or matches) played by :func:`play_cubeful`; player 0 = A, 1 = B.

    Per game (``(G,)`` arrays, in order of finishing): ``game_unit`` (slot), ``game_winner`` (0 A / 1 B),
    ``game_points`` (points scored), ``game_kind`` (1/2/3 on the board, 0 = pass), ``game_cube`` (final cube
    value; for a pass the cube before the refused double), ``game_plies``.
    Per unit (``(U,)``): ``unit_points_a`` (money: A's points; match: A's score minus B's), ``unit_winner``
    (match winner, or the money game's winner), ``unit_score`` ``(U, 2)``, ``unit_games``, ``a_seat``.
    Counters ``(U, 2)`` per player: ``doubles`` offered, ``takes`` and ``passes`` answered.
    """

    rules: MatchRules
    game_unit: np.ndarray
    game_winner: np.ndarray
    game_points: np.ndarray
    game_kind: np.ndarray
    game_cube: np.ndarray
    game_plies: np.ndarray
    unit_points_a: np.ndarray
    unit_winner: np.ndarray
    unit_score: np.ndarray
    unit_games: np.ndarray
    a_seat: np.ndarray
    doubles: np.ndarray
    takes: np.ndarray
    passes: np.ndarray


def play_cubeful(
    agents: Sequence[Agent],
    rules: MatchRules,
    dice_rngs: Sequence[np.random.Generator],
    rng: np.random.Generator,
    *,
    a_seat: np.ndarray | int = 0,
    policies: Sequence[CubePolicy] | None = None,
    max_plies: int = MAX_PLIES,
) -> CubefulResults:
    """Play one unit per dice generator (a cubeful money game, or a whole match) between A and B, batched.

    Args:
        agents: ``(agent A, agent B)``, possibly the same object.
        rules: :class:`~bgai.match.MatchRules` (``MatchRules.money(...)`` or ``MatchRules.match(n)``).
        dice_rngs: one dice generator per unit (see :func:`bgai.play.dice_rng`).
        rng: generator handed to the agents' ``choose``.
        a_seat: seat of A per unit (dice order), ``(U,)`` 0/1 or one int.
        policies: cube policies of A and B (default :func:`cube_policy_for` each agent).
        max_plies: per-game safety limit.

    Returns:
        :class:`CubefulResults`.

    Raises:
        MatchStateError: a match longer than the match equity table (for probability agents).
        RuntimeError: a game longer than ``max_plies``, or an agent returning the wrong shape.
    """
    n = len(dice_rngs)
    if policies is None:
        policies = (cube_policy_for(agents[0]), cube_policy_for(agents[1]))
    if not rules.is_money:
        from bgai.met import load_met

        met = load_met(rules.met_name)
        if rules.length > met.length and any(isinstance(p, JanowskiCubePolicy) for p in policies):
            raise MatchStateError(
                f"a {rules.length}-point match is longer than the {met.name} table ({met.length} points)"
            )
    seat_a = np.broadcast_to(np.asarray(a_seat, dtype=np.int8), (n,)).copy()
    if not np.isin(seat_a, (0, 1)).all():
        raise ValueError("a_seat must be 0 or 1")
    matches: list[Match] = [Match(rules) for _ in range(n)]
    boards = np.zeros((n, 2, 25), dtype=np.int8)
    dice = np.zeros((n, 2), dtype=np.int8)
    on_roll = np.zeros(n, dtype=np.int8)  # player (0 = A, 1 = B) on roll
    first_ply = np.zeros(n, dtype=bool)
    plies = np.zeros(n, dtype=np.int32)
    active = np.ones(n, dtype=bool)
    doubles = np.zeros((n, 2), dtype=np.int32)
    takes = np.zeros((n, 2), dtype=np.int32)
    passes = np.zeros((n, 2), dtype=np.int32)
    games: list[tuple[int, int, int, int, int, int]] = []

    def new_game(u: int) -> None:
        d0, d1 = opening_roll(dice_rngs[u])
        mover_seat = 0 if d0 > d1 else 1
        boards[u] = starting_board()
        dice[u] = (max(d0, d1), min(d0, d1))
        on_roll[u] = 0 if mover_seat == seat_a[u] else 1
        first_ply[u] = True
        plies[u] = 0

    def game_over(u: int, outcome) -> None:
        games.append((u, outcome.winner, outcome.points, outcome.kind, outcome.cube_value, int(plies[u])))
        if rules.is_money or matches[u].is_over:
            active[u] = False
        else:
            new_game(u)

    for u in range(n):
        new_game(u)
    # opening rolls first, then the dice stream: the same order of draws as bgai.play.play_games
    streams = DiceStreams(dice_rngs)

    while active.any():
        # -- cube phase (before the roll; not on a game's first ply) --
        idx = np.flatnonzero(active & ~first_ply)
        if idx.size:
            cand = []
            for u in idx:
                p = int(on_roll[u])
                m = matches[u]
                if m.can_double(p):
                    s = m.cube_state(p)
                    if s.may_double():
                        cand.append((u, p, s))
            for p in (0, 1):
                mine = [(u, s) for (u, q, s) in cand if q == p]
                if not mine:
                    continue
                us = np.array([u for u, _ in mine])
                states = [s for _, s in mine]
                offer = np.asarray(policies[p].offer(boards[us], states), dtype=bool)
                if not offer.any():
                    continue
                du = us[offer]
                dstates = [s for s, o in zip(states, offer) if o]
                take = np.asarray(policies[1 - p].accept(boards[du], dstates), dtype=bool)
                for u, t in zip(du, take):
                    doubles[u, p] += 1
                    m = matches[u].offer_double(p)
                    if t:
                        takes[u, 1 - p] += 1
                        matches[u] = m.take()
                    else:
                        passes[u, 1 - p] += 1
                        matches[u], out = m.pass_double()
                        game_over(int(u), out)
        # -- roll and checker play --
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        need_roll = idx[~first_ply[idx]]
        if need_roll.size:
            dice[need_roll] = streams.roll(need_roll)
        first_ply[idx] = False
        after = checker_play(agents, on_roll[idx], boards[idx], dice[idx], rng)
        plies[idx] += 1
        done, pts = finish_games(after)
        for k in np.flatnonzero(done):
            u = int(idx[k])
            matches[u], out = matches[u].end_game(int(on_roll[u]), int(pts[k]))
            game_over(u, out)
        going = idx[~done]
        boards[going] = flip(after[~done])
        on_roll[going] ^= 1
        if going.size and plies[going].max() >= max_plies:
            raise RuntimeError(f"a game did not finish within {max_plies} plies")

    g = np.array(games, dtype=np.int64).reshape(-1, 6)
    score = np.array([m.score for m in matches], dtype=np.int64).reshape(n, 2)
    if rules.is_money:
        unit_winner = np.full(n, -1, dtype=np.int8)
        unit_winner[g[:, 0]] = g[:, 1]
    else:
        unit_winner = np.array([m.winner for m in matches], dtype=np.int8)
    return CubefulResults(
        rules=rules,
        game_unit=g[:, 0],
        game_winner=g[:, 1].astype(np.int8),
        game_points=g[:, 2],
        game_kind=g[:, 3].astype(np.int8),
        game_cube=g[:, 4],
        game_plies=g[:, 5].astype(np.int32),
        unit_points_a=score[:, 0] - score[:, 1],
        unit_winner=unit_winner,
        unit_score=score,
        unit_games=np.array([m.games for m in matches], dtype=np.int32),
        a_seat=seat_a,
        doubles=doubles,
        takes=takes,
        passes=passes,
    )


# ----------------------------------------------------------------------------------------- series and reports


@dataclass
class PlayerCubeStats:
    """One player's results.  Rates are fractions of all games (cumulative: gammon includes backgammon)."""

    win: float
    gammon: float
    backgammon: float
    doubles: int
    takes: int
    passes: int


@dataclass
class CubeReport:
    """Result of :func:`evaluate_cubeful` for A against B.

    Attributes:
        mode: ``'money'`` or ``'match'``; ``match_length`` (0 for money); ``units`` (games or matches);
            ``games`` played in all; ``duplicate``; ``seed``; ``workers``; rules (``jacoby``, ``cube_limit``).
        ppg, ppg_ci95: money: A's points per game and the 95% CI half-width (NaN in match mode).
        match_win, match_win_ci95: match: A's match-winning fraction (0..1) and CI half-width (NaN for money).
        avg_cube: mean final cube value per game (before a refused double for passes).
        a, b: :class:`PlayerCubeStats`.
        policies: the cube policy names of A and B.
        avg_games_per_match, avg_plies: lengths; seconds.
    """

    agent_a: str
    agent_b: str
    mode: str
    match_length: int
    units: int
    games: int
    duplicate: bool
    seed: int
    workers: int
    jacoby: bool
    cube_limit: int | None
    ppg: float
    ppg_ci95: float
    match_win: float
    match_win_ci95: float
    avg_cube: float
    a: PlayerCubeStats
    b: PlayerCubeStats
    policies: tuple[str, str]
    avg_games_per_match: float
    avg_plies: float
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        d = asdict(self)
        for k, v in list(d.items()):
            if isinstance(v, float) and math.isnan(v):
                d[k] = None
        return d

    def table(self) -> str:
        """Human-readable report."""
        from bgai.evaluate import name_width, side_labels

        A, B = side_labels(self.agent_a, self.agent_b)
        w = name_width(A, B)
        if self.mode == "money":
            rules = f"Jacoby {'on' if self.jacoby else 'off'}, cube limit {self.cube_limit or 'none'}"
            dice = "duplicate" if self.duplicate else "plain"
            head = f"{A} vs {B}: {self.units} cubeful money games ({rules}; {dice} dice), seed {self.seed}"
            main = (f"  ppg for {A}: {self.ppg:+.3f} +- {self.ppg_ci95:.3f} "
                    f"(95% CI {self.ppg - self.ppg_ci95:+.3f} .. {self.ppg + self.ppg_ci95:+.3f})")
        else:
            head = (f"{A} vs {B}: {self.units} matches to {self.match_length} points ({self.games} games; "
                    f"{'duplicate' if self.duplicate else 'plain'} dice), seed {self.seed}")
            lo = max(0.0, self.match_win - self.match_win_ci95)
            hi = min(1.0, self.match_win + self.match_win_ci95)
            main = (f"  match wins for {A}: {100 * self.match_win:.1f}% +- {100 * self.match_win_ci95:.1f} "
                    f"(95% CI {100 * lo:.1f} .. {100 * hi:.1f}%)")
        rows = [head, main, f"  {'':<{w}}{'win %':>8}{'gammon %':>10}{'bg %':>7}{'doubles':>9}{'takes':>7}{'passes':>8}"]
        for name, s in ((A, self.a), (B, self.b)):
            rows.append(f"  {name:<{w}}{100 * s.win:8.2f}{100 * s.gammon:10.2f}{100 * s.backgammon:7.2f}"
                        f"{s.doubles:9d}{s.takes:7d}{s.passes:8d}")
        rows.append(f"  average cube value {self.avg_cube:.2f} per game; cube policies: {A}: {self.policies[0]}, "
                    f"{B}: {self.policies[1]}")
        if self.mode == "match":
            rows.append(f"  {self.avg_games_per_match:.1f} games per match")
        work = math.ceil(self.units / CHUNK_UNITS)
        rows.append(f"  average game length {self.avg_plies:.1f} plies; {self.seconds:.1f} s, {self.workers} worker(s) "
                    f"for {work} work unit(s) of up to {CHUNK_UNITS} {'games' if self.mode == 'money' else 'matches'}")
        return "\n".join(rows)


def summarize_cubeful(res: CubefulResults, *, duplicate: bool, agent_a: str, agent_b: str, seed: int,
                      workers: int, seconds: float, policies: tuple[str, str]) -> CubeReport:
    """Statistics of a series of units (pairs ``2p, 2p + 1`` in duplicate mode).

    Raises:
        BgaiError: no units.
    """
    n = len(res.a_seat)
    if n == 0:
        raise BgaiError("no games to summarize")
    money = res.rules.is_money

    def mean_ci(values: np.ndarray) -> tuple[float, float]:
        samples = values.reshape(-1, 2).mean(axis=1) if duplicate and len(values) % 2 == 0 else values
        m = float(samples.mean())
        se = float(samples.std(ddof=1) / math.sqrt(samples.size)) if samples.size > 1 else float("nan")
        return m, Z95 * se

    nan = float("nan")
    if money:
        pts = np.zeros(n)
        np.add.at(pts, res.game_unit, np.where(res.game_winner == 0, res.game_points, -res.game_points))
        ppg, ci = mean_ci(pts)
        mw, mci = nan, nan
    else:
        ppg, ci = nan, nan
        mw, mci = mean_ci((res.unit_winner == 0).astype(np.float64))
    g = len(res.game_winner)

    def side(p: int) -> PlayerCubeStats:
        won = res.game_winner == p
        return PlayerCubeStats(
            win=float(won.mean()) if g else nan,
            gammon=float((won & (res.game_kind >= 2)).mean()) if g else nan,
            backgammon=float((won & (res.game_kind >= 3)).mean()) if g else nan,
            doubles=int(res.doubles[:, p].sum()),
            takes=int(res.takes[:, p].sum()),
            passes=int(res.passes[:, p].sum()),
        )

    return CubeReport(
        agent_a=agent_a,
        agent_b=agent_b,
        mode="money" if money else "match",
        match_length=res.rules.length,
        units=n,
        games=g,
        duplicate=duplicate,
        seed=seed,
        workers=workers,
        jacoby=res.rules.jacoby if money else False,
        cube_limit=res.rules.cube_limit,
        ppg=ppg,
        ppg_ci95=ci,
        match_win=mw,
        match_win_ci95=mci,
        avg_cube=float(res.game_cube.mean()) if g else nan,
        a=side(0),
        b=side(1),
        policies=policies,
        avg_games_per_match=float(res.unit_games.mean()),
        avg_plies=float(res.game_plies.mean()) if g else nan,
        seconds=seconds,
    )


CHUNK_UNITS = 200

_WORKER: tuple | None = None


def _init_worker(spec_a, spec_b, rules) -> None:
    global _WORKER
    from bgai.evaluate import _build

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:  # pragma: no cover - only with neural agents
        sys.modules["torch"].set_num_threads(1)
    a = _build(spec_a)
    b = a if spec_b is None else _build(spec_b)
    _WORKER = ((a, b), rules)


def play_cubeful_unit(agents, rules: MatchRules, seed: int, unit: int, total: int, chunk: int,
                      duplicate: bool) -> CubefulResults:
    """Play work unit ``unit`` (units ``unit * chunk ..``) of a series of ``total`` money games or matches."""
    ids = np.arange(unit * chunk, min((unit + 1) * chunk, total))
    dice_ids = ids // 2 if duplicate else ids
    rngs = [dice_rng(seed, int(i)) for i in dice_ids]
    agent_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, unit)))
    return play_cubeful(agents, rules, rngs, agent_rng, a_seat=ids % 2)


def _worker_unit(args):
    unit, seed, total, chunk, duplicate = args
    agents, rules = _WORKER
    return unit, play_cubeful_unit(agents, rules, seed, unit, total, chunk, duplicate)


def _concat(parts: list[CubefulResults], offsets: list[int]) -> CubefulResults:
    cat = np.concatenate
    return CubefulResults(
        rules=parts[0].rules,
        game_unit=cat([p.game_unit + o for p, o in zip(parts, offsets)]),
        game_winner=cat([p.game_winner for p in parts]),
        game_points=cat([p.game_points for p in parts]),
        game_kind=cat([p.game_kind for p in parts]),
        game_cube=cat([p.game_cube for p in parts]),
        game_plies=cat([p.game_plies for p in parts]),
        unit_points_a=cat([p.unit_points_a for p in parts]),
        unit_winner=cat([p.unit_winner for p in parts]),
        unit_score=cat([p.unit_score for p in parts]),
        unit_games=cat([p.unit_games for p in parts]),
        a_seat=cat([p.a_seat for p in parts]),
        doubles=cat([p.doubles for p in parts]),
        takes=cat([p.takes for p in parts]),
        passes=cat([p.passes for p in parts]),
    )


def evaluate_cubeful(
    agent_a: str | Agent,
    agent_b: str | Agent,
    count: int,
    seed: int,
    *,
    rules: MatchRules | None = None,
    workers: int = 1,
    duplicate: bool = True,
    chunk: int = CHUNK_UNITS,
    progress: bool = False,
) -> CubeReport:
    """Play ``count`` cubeful money games (``rules`` money, the default) or ``count`` matches and report.

    Args:
        agent_a, agent_b: agent specs (:func:`bgai.agents.registry.make_agent`) or agent objects.
        count: number of money games or matches, > 0; even in duplicate mode.
        seed: series seed (>= 0).
        rules: :class:`~bgai.match.MatchRules`; default money play with the Jacoby rule, no cube limit.
        workers: processes (1 = this process).  Results depend on ``chunk``, not on ``workers``.
        duplicate: mirrored duplicate-dice pairs (default).
        chunk: units per work unit (even).
        progress: tqdm progress bar on stderr.

    Returns:
        :class:`CubeReport`.

    Raises:
        BgaiError: bad count/seed/workers/chunk; :class:`~bgai.errors.MatchStateError` for a match longer than
            the MET; agent spec errors before any game.
    """
    from bgai.evaluate import _build, check_series

    rules = rules or MatchRules.money()
    check_series(count, duplicate=duplicate, workers=workers, chunk=chunk, seed=seed,
                 what="games" if rules.is_money else "matches")
    if not rules.is_money:
        from bgai.met import load_met

        met = load_met(rules.met_name)
        if rules.length > met.length:
            raise MatchStateError(f"a {rules.length}-point match is longer than the {met.name} table "
                                  f"({met.length} points)")
    same = agent_a is agent_b or (isinstance(agent_a, str) and agent_a == agent_b)
    a = _build(agent_a)
    b = a if same else _build(agent_b)
    name_a = agent_a if isinstance(agent_a, str) else a.name
    name_b = agent_b if isinstance(agent_b, str) else b.name
    pols = (cube_policy_for(a).name, cube_policy_for(b).name)
    units = math.ceil(count / chunk)
    workers = min(workers, units)
    parts: dict[int, CubefulResults] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=count, unit="match" if not rules.is_money else "game", desc=f"{name_a} vs {name_b}",
                   file=sys.stderr, dynamic_ncols=True)
    t0 = time.perf_counter()
    try:
        if workers == 1:
            for u in range(units):
                parts[u] = play_cubeful_unit((a, b), rules, seed, u, count, chunk, duplicate)
                if bar is not None:
                    bar.update(len(parts[u].a_seat))
        else:
            ctx = mp.get_context("spawn")
            jobs = [(u, seed, count, chunk, duplicate) for u in range(units)]
            with ctx.Pool(workers, initializer=_init_worker,
                          initargs=(agent_a, None if same else agent_b, rules)) as pool:
                for u, res in pool.imap_unordered(_worker_unit, jobs):
                    parts[u] = res
                    if bar is not None:
                        bar.update(len(res.a_seat))
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    ordered = [parts[u] for u in range(units)]
    offsets = list(np.cumsum([0] + [len(p.a_seat) for p in ordered[:-1]]))
    res = _concat(ordered, offsets)
    return summarize_cubeful(res, duplicate=duplicate, agent_a=name_a, agent_b=name_b, seed=seed,
                             workers=workers, seconds=seconds, policies=pols)
