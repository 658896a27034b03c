"""Cubeful play: money sessions with the doubling cube and N-point matches, batched, between two agents.

This module adds the cube phase to the game runner of :mod:`bgai.game.play` (whose per-turn functions it reuses:
:func:`~bgai.game.play.opening_roll`, :class:`~bgai.game.play.DiceStreams`, :func:`~bgai.game.play.checker_play`,
:func:`~bgai.game.play.finish_games`) and keeps score with :class:`bgai.game.match.Match`:

1. before rolling (not on the opening roll, whose dice are already known), a player who may double
   (:meth:`Match.can_double` and :meth:`CubeState.may_double`) asks his :class:`CubePolicy`; if he doubles,
   the opponent's policy takes or passes (a pass ends the game: the doubler scores the cube before the double);
2. the roll and the checker play; a game that ends scores cube x 1/2/3 (:meth:`Match.end_game`, Jacoby rule in
   money play).

Units.  A money session is a series of independent cubeful games (one unit = one game, points = cube x result).
A match unit is a whole match: its games are played one after the other in the same slot until a player reaches
the match length.  Slot ``u`` draws all its dice from ``bgai.game.play.dice_rng(seed, pair)``; in duplicate mode slots
``2p`` and ``2p + 1`` use the same generator with A in seat 0 and seat 1 (the cube makes the two games of a pair
drift apart, but they still share most of their luck).

Cube policies (:func:`cube_policy_for`): agents with probabilities (:class:`~bgai.agents.base.ProbabilityAgent`:
gnubg, neural nets) use :class:`JanowskiCubePolicy`, i.e. :mod:`bgai.game.cube` on their own cubeless probabilities
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

from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.core.board import flip, starting_board
from bgai.errors import MatchStateError
from bgai.game.cube import CubeState, analyse_cube, cube_efficiency
from bgai.game.match import Match, MatchRules
from bgai.game.met import load_met
from bgai.game.play import MAX_PLIES, DiceStreams, checker_play, finish_games, opening_roll

__all__ = [
    "CubePolicy",
    "JanowskiCubePolicy",
    "NeverDoubleAlwaysTake",
    "cube_policy_for",
    "CubefulResults",
    "play_cubeful",
]

Z95 = 1.959963984540054


# --------------------------------------------------------------------------------------------- cube policies


class CubePolicy(ABC):
    """How a player handles the cube, batched.

    Both methods get the positions **from the doubler's view** (the player about to roll in row 0) and the
    :class:`~bgai.game.cube.CubeState` of each position seen by the doubler, and return one bool per position.
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
    """Cube decisions from an agent's cubeless probabilities with :func:`bgai.game.cube.analyse_cube` (Janowski in
    money play, GNU Backgammon's match model, cube efficiency of :func:`bgai.game.cube.cube_efficiency`).

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


def cube_policy_for(agent: Agent) -> CubePolicy:
    """:class:`JanowskiCubePolicy` for agents that can judge the cube (``agent.capabilities.cube``: agents with
    probabilities), :class:`NeverDoubleAlwaysTake` otherwise."""
    if agent.capabilities.cube:
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
        rules: :class:`~bgai.game.match.MatchRules` (``MatchRules.money(...)`` or ``MatchRules.match(n)``).
        dice_rngs: one dice generator per unit (see :func:`bgai.game.play.dice_rng`).
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
    # opening rolls first, then the dice stream: the same order of draws as bgai.game.play.play_games
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
