"""The batched game runner: B cubeless money games in parallel between two agents.

Rules (the standard rules of backgammon, e.g. the WBF/USBGF rules): each player rolls one die for the opening
roll, ties are re-rolled, the higher die moves first and plays the two numbers rolled; then players alternate,
rolling two dice; a player who has no legal play passes (his turn still counts as a ply); the first to bear off
all 15 checkers wins 1 point, 2 for a gammon, 3 for a backgammon (:func:`bgai.core.board.result_kind`).

Seats and players.  The two agents are the players A (``agents[0]``) and B (``agents[1]``).  Each game has two
seats, 0 and 1; ``a_seat[g]`` says which seat A takes in game ``g``.  The dice belong to the seats: the opening
roll is seat 0's die then seat 1's die, and every later roll is drawn in turn order from the game's own dice
generator.  Playing the same dice generator seed with ``a_seat`` 0 and then 1 is therefore the same dice sequence
with the players swapped: a duplicate-dice (mirrored) pair, as used by :mod:`bgai.evaluate.series`.

Randomness.  Each game draws its dice from its own ``np.random.Generator`` (the caller builds them, e.g. from
``np.random.SeedSequence(seed, spawn_key=(0, g))``), so a game's dice never depend on which other games share
its batch or process.  Dice are drawn in blocks of :data:`DICE_BLOCK` rolls per game.  Agents that need
randomness (``random``) get the separate ``rng`` argument.

The runner is split into one function per phase of a turn (:func:`opening_roll`, :class:`DiceStreams` for the
roll, :func:`checker_play`, :func:`finish_games`) so that the cube can be added as a phase before the roll.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from bgai.agents.base import Agent
from bgai.core.board import flip, result_kind, starting_board
from bgai.core.movegen import legal_plays
from bgai.errors import IllegalMoveError

#: Rolls drawn at a time from a game's dice generator (after the opening roll).
DICE_BLOCK = 64

#: Default safety limit on the length of a game, in plies; no real game comes near it.
MAX_PLIES = 5000


def opening_roll(dice_rng: np.random.Generator) -> tuple[int, int]:
    """The opening roll: seat 0's die and seat 1's die, re-rolled while they tie.

    Args:
        dice_rng: the game's dice generator; each attempt draws two dice (seat 0's, then seat 1's).

    Returns:
        ``(d0, d1)``, two different values 1..6; the seat with the higher die moves first with both numbers.
    """
    while True:
        d = dice_rng.integers(1, 7, size=2)
        if d[0] != d[1]:
            return int(d[0]), int(d[1])


class DiceStreams:
    """The rolls after the opening roll, for a batch of games, each from its own generator.

    Args:
        dice_rngs: one generator per game (already used for the opening roll).

    Rolls are drawn :data:`DICE_BLOCK` at a time per game, as ``integers(1, 7, size=(DICE_BLOCK, 2))``, so game
    ``g``'s ``k``-th roll depends only on its generator.
    """

    def __init__(self, dice_rngs: Sequence[np.random.Generator]) -> None:
        self._rngs = list(dice_rngs)
        n = len(self._rngs)
        self._buf = np.zeros((n, DICE_BLOCK, 2), dtype=np.int8)
        self._filled = np.zeros(n, dtype=np.int64)
        self._next = np.zeros(n, dtype=np.int64)
        for g in range(n):
            self._draw(g)

    def _draw(self, g: int) -> None:
        block = self._rngs[g].integers(1, 7, size=(DICE_BLOCK, 2)).astype(np.int8)
        start = int(self._filled[g])
        if start + DICE_BLOCK > self._buf.shape[1]:
            grow = np.zeros((self._buf.shape[0], self._buf.shape[1] + DICE_BLOCK, 2), dtype=np.int8)
            grow[:, : self._buf.shape[1]] = self._buf
            self._buf = grow
        self._buf[g, start : start + DICE_BLOCK] = block
        self._filled[g] = start + DICE_BLOCK

    def roll(self, games: np.ndarray) -> np.ndarray:
        """The next roll of each game in ``games`` (``(K,)`` int indices): ``(K, 2)`` int8 dice."""
        games = np.asarray(games, dtype=np.int64)
        for g in games[self._next[games] >= self._filled[games]]:
            self._draw(int(g))
        out = self._buf[games, self._next[games]]
        self._next[games] += 1
        return out


@dataclass
class GameRecord:
    """The full record of one game, enough to replay it.

    Attributes:
        a_seat: seat (0/1) of player A.
        opening: ``(seat 0's die, seat 1's die)`` of the opening roll that decided the first mover.
        movers: ``(P,)`` int8 seat that moved at each ply.
        dice: ``(P, 2)`` int8 roll of each ply (the opening roll's two dice at ply 0, higher die first).
        afterstates: ``(P, 2, 25)`` int8 chosen afterstate of each ply from the mover's view (rows not swapped);
            the unchanged position when the mover had no legal play.
        winner_seat, points: result (points 1/2/3).
    """

    a_seat: int
    opening: tuple[int, int]
    movers: np.ndarray
    dice: np.ndarray
    afterstates: np.ndarray
    winner_seat: int
    points: int

    def positions(self) -> np.ndarray:
        """``(P, 2, 25)`` int8 position before each ply, from the view of the player on roll."""
        before = np.empty_like(self.afterstates)
        before[0] = starting_board()
        if len(before) > 1:
            before[1:] = flip(self.afterstates[:-1])
        return before

    def plays(self) -> list[str]:
        """The plays in standard notation, one per ply (``''`` for a pass), found with
        :func:`bgai.core.movegen.legal_plays`.

        Raises:
            IllegalMoveError: a recorded afterstate is not a legal play of the recorded roll.
        """

        out = []
        for k, (pos, dice, after) in enumerate(zip(self.positions(), self.dice, self.afterstates)):
            plays = legal_plays(pos, (int(dice[0]), int(dice[1])))
            if not plays:
                if not np.array_equal(pos, after):
                    raise IllegalMoveError(f"ply {k + 1}: a play was recorded where no play is legal")
                out.append("")
                continue
            match = [p for p in plays if np.array_equal(p.afterstate, after)]
            if not match:
                raise IllegalMoveError(f"ply {k + 1}: recorded afterstate is not a legal play of {dice[0]}{dice[1]}")
            out.append(match[0].notation)
        return out

    def transcript(self, names: tuple[str, str] = ("A", "B")) -> str:
        """A readable game record: one line per ply, ``'  1 A 31: 8/5 6/5'`` (``'(no play)'`` for a pass), then
        the result line; the higher die is written first."""
        lines = []
        for k, (seat, dice, play) in enumerate(zip(self.movers, self.dice, self.plays())):
            who = names[0] if int(seat) == self.a_seat else names[1]
            hi, lo = max(int(dice[0]), int(dice[1])), min(int(dice[0]), int(dice[1]))
            lines.append(f"{k + 1:3d} {who} {hi}{lo}: {play or '(no play)'}")
        winner = names[0] if self.winner_seat == self.a_seat else names[1]
        kind = {1: "single game", 2: "gammon", 3: "backgammon"}[self.points]
        lines.append(f"{winner} wins {self.points} point{'s' if self.points > 1 else ''} ({kind})")
        return "\n".join(lines)


@dataclass
class GameResults:
    """Results of a batch of games between player A (``agents[0]``) and player B (``agents[1]``).

    Attributes:
        winner: ``(B,)`` int8, 0 = A won, 1 = B won.
        points: ``(B,)`` int8 result kind: 1 single, 2 gammon, 3 backgammon (cubeless).
        plies: ``(B,)`` int32 turns played, passes included.
        a_seat: ``(B,)`` int8 seat of A in each game.
        records: one :class:`GameRecord` per game when asked for, else ``None``.
    """

    winner: np.ndarray
    points: np.ndarray
    plies: np.ndarray
    a_seat: np.ndarray
    records: list[GameRecord] | None = field(default=None, repr=False)

    @property
    def points_a(self) -> np.ndarray:
        """``(B,)`` int16 points won by A in each game (negative when B won)."""
        return np.where(self.winner == 0, 1, -1).astype(np.int16) * self.points.astype(np.int16)


def checker_play(
    agents: Sequence[Agent],
    player: np.ndarray,
    boards: np.ndarray,
    dice: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """The checker-play phase: each game's player on roll chooses an afterstate; one agent call per player.

    Args:
        agents: ``(agent A, agent B)``.
        player: ``(K,)`` 0/1, the player on roll in each game.
        boards: ``(K, 2, 25)`` int8 positions from the view of the player on roll.
        dice: ``(K, 2)`` dice.
        rng: random source passed to the agents (A's call first, then B's).

    Returns:
        ``(K, 2, 25)`` int8 chosen afterstates, mover's view.

    Raises:
        RuntimeError: an agent returned the wrong shape.
    """
    out = np.empty_like(boards)
    if agents[0] is agents[1]:
        groups = [(agents[0], np.arange(len(boards)))]
    else:
        groups = [(agents[p], np.flatnonzero(player == p)) for p in (0, 1)]
    for agent, sel in groups:
        if sel.size == 0:
            continue
        chosen = np.asarray(agent.choose(boards[sel], dice[sel], rng))
        if chosen.shape != (sel.size, 2, 25):
            raise RuntimeError(
                f"agent {getattr(agent, 'name', agent)!r} returned shape {chosen.shape}, expected {(sel.size, 2, 25)}"
            )
        out[sel] = chosen
    return out


def finish_games(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which games ended with this play, and their result kind.

    Args:
        afterstates: ``(K, 2, 25)`` int8 afterstates, mover's view.

    Returns:
        ``(done, points)``: ``(K,)`` bool (the mover has borne off all 15) and ``(K,)`` int8 points (0 where not
        done).
    """
    done = afterstates[:, 0].sum(axis=1, dtype=np.int16) == 0
    points = np.zeros(len(afterstates), dtype=np.int8)
    if done.any():
        _, pts = result_kind(afterstates[done])
        points[done] = pts
    return done, points


def play_games(
    agents: Sequence[Agent],
    dice_rngs: Sequence[np.random.Generator],
    rng: np.random.Generator,
    *,
    a_seat: np.ndarray | int = 0,
    record: bool = False,
    max_plies: int = MAX_PLIES,
) -> GameResults:
    """Play ``len(dice_rngs)`` cubeless money games between two agents, all in one batch.

    Args:
        agents: ``(agent A, agent B)``; may be the same object (self-play: one agent call per ply).
        dice_rngs: one dice generator per game (see the module docstring); consumed by the game.
        rng: generator handed to the agents' ``choose`` (seeded by the caller).
        a_seat: seat of A per game, ``(B,)`` 0/1 or one int for all games.
        record: keep a :class:`GameRecord` of every game.
        max_plies: stop with an error if a game runs longer (a broken agent that never finishes).

    Returns:
        :class:`GameResults` in game order.

    Raises:
        RuntimeError: a game exceeded ``max_plies`` or an agent returned the wrong shape.
    """
    n = len(dice_rngs)
    a_seat_arr = np.broadcast_to(np.asarray(a_seat, dtype=np.int8), (n,)).copy()
    if not np.isin(a_seat_arr, (0, 1)).all():
        raise ValueError("a_seat must be 0 or 1")
    boards = np.broadcast_to(starting_board(), (n, 2, 25)).copy()
    opening = np.array([opening_roll(r) for r in dice_rngs], dtype=np.int8).reshape(n, 2)
    mover = np.where(opening[:, 0] > opening[:, 1], 0, 1).astype(np.int8)
    dice = np.sort(opening, axis=1)[:, ::-1].copy()
    streams = DiceStreams(dice_rngs)
    winner_seat = np.zeros(n, dtype=np.int8)
    points = np.zeros(n, dtype=np.int8)
    plies = np.zeros(n, dtype=np.int32)
    active = np.ones(n, dtype=bool)
    log: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    while active.any():
        idx = np.flatnonzero(active)
        player = (mover[idx] != a_seat_arr[idx]).astype(np.int8)
        after = checker_play(agents, player, boards[idx], dice[idx], rng)
        if record:
            log.append((idx, mover[idx].copy(), dice[idx].copy(), after))
        plies[idx] += 1
        done, pts = finish_games(after)
        ended = idx[done]
        winner_seat[ended] = mover[ended]
        points[ended] = pts[done]
        active[ended] = False
        going = idx[~done]
        boards[going] = flip(after[~done])
        mover[going] ^= 1
        if going.size:
            dice[going] = streams.roll(going)
            if plies[going].max() >= max_plies:
                raise RuntimeError(f"a game did not finish within {max_plies} plies")
    winner = (winner_seat != a_seat_arr).astype(np.int8)
    records = _assemble_records(log, n, a_seat_arr, opening, winner_seat, points) if record else None
    return GameResults(winner=winner, points=points, plies=plies, a_seat=a_seat_arr, records=records)


def _assemble_records(log, n, a_seat, opening, winner_seat, points) -> list[GameRecord]:
    games = np.concatenate([entry[0] for entry in log])
    movers = np.concatenate([entry[1] for entry in log])
    dice = np.concatenate([entry[2] for entry in log])
    after = np.concatenate([entry[3] for entry in log])
    order = np.argsort(games, kind="stable")  # plies of a game stay in time order
    bounds = np.searchsorted(games[order], np.arange(n + 1))
    out = []
    for g in range(n):
        sel = order[bounds[g] : bounds[g + 1]]
        out.append(
            GameRecord(
                a_seat=int(a_seat[g]),
                opening=(int(opening[g, 0]), int(opening[g, 1])),
                movers=movers[sel],
                dice=dice[sel],
                afterstates=after[sel],
                winner_seat=int(winner_seat[g]),
                points=int(points[g]),
            )
        )
    return out


def dice_rng(seed: int, game: int) -> np.random.Generator:
    """The dice generator of game (or mirrored pair) number ``game`` of a series seeded with ``seed``.

    ``np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, game)))``: independent streams per game,
    the same for every worker count and batch size.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, game)))
