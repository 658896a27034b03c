"""The game loop: cubeless games, cubeful money games and N-point matches between two agents, batched.

One loop (:func:`play`) plays them all; :func:`play_games` (cubeless) and
:func:`bgai.game.play_cube.play_cubeful` (cube, matches) are views of it.  Its stepping core,
:class:`GameBatch` (slots of games advanced one ply per call: the opening roll, the dice, the checker play, the
end of a game), is also what self-play training drives (:class:`bgai.train.selfplay.GameShard`, with its own
dice source :class:`SharedDice`, its exploring 0-ply choice and a TD update between plies), so the rules of a
game are written once.

Rules (the standard rules of backgammon, e.g. the WBF/USBGF rules): each player rolls one die for the opening
roll, ties are re-rolled, the higher die moves first and plays the two numbers rolled; then players alternate,
rolling two dice; a player who has no legal play passes (his turn still counts as a ply); the first to bear off
all 15 checkers wins 1 point, 2 for a gammon, 3 for a backgammon (:func:`bgai.core.board.result_kind`).  With the
cube (``rules`` given), score, cube and Crawford rule are kept by :class:`bgai.game.match.Match`; a turn is

1. the cube phase: before rolling (not on a game's opening roll, whose dice are already known), a player who may
   double (:meth:`Match.can_double` and :meth:`CubeState.may_double`) asks his
   :class:`~bgai.game.policies.CubePolicy`; if he doubles, the opponent's policy takes or passes (a pass ends the
   game: the doubler scores the cube before the double);
2. the roll (:class:`DiceStreams`), the checker play (:func:`checker_play`) and the end of the game
   (:func:`finish_games`): a finished game scores cube x 1/2/3 (:meth:`Match.end_game`, Jacoby rule in money
   play).

Cubeless play (``rules=None``) has no cube phase and scores 1/2/3: money play without the Jacoby rule and a cube
nobody turns.

Units.  Each dice generator is one unit: a money game (cubeless or cubeful), or a whole match whose games are
played one after the other in the same slot until a player reaches the match length.

Seats and players.  The two agents are the players A (``agents[0]``) and B (``agents[1]``).  Each unit has two
seats, 0 and 1; ``a_seat[u]`` says which seat A takes in unit ``u``.  The dice belong to the seats: the opening
roll is seat 0's die then seat 1's die, and every later roll is drawn in turn order from the unit's own dice
generator.  Playing the same dice generator seed with ``a_seat`` 0 and then 1 is therefore the same dice sequence
with the players swapped: a duplicate-dice (mirrored) pair, as used by :mod:`bgai.evaluate.series` (with the cube
the two games of a pair drift apart, but they still share most of their luck).

Randomness.  Each unit draws its dice from its own ``np.random.Generator`` (the caller builds them, e.g. with
:func:`dice_rng`), so a unit's dice never depend on which other units share its batch or process: first the
opening roll of its first game (:func:`opening_roll`), then blocks of :data:`DICE_BLOCK` rolls, and the opening
roll of each later game of a match when that game starts.  Agents that need randomness (``random``) get the
separate ``rng`` argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from bgai.agents.base import Agent
from bgai.core.board import flip, result_kind, starting_board
from bgai.core.movegen import legal_plays
from bgai.errors import IllegalMoveError, MatchStateError
from bgai.game.match import GameOutcome, Match, MatchRules
from bgai.game.met import load_met
from bgai.game.policies import CubePolicy, JanowskiCubePolicy, cube_policy_for

__all__ = [
    "DICE_BLOCK", "MAX_PLIES", "roll_dice", "opening_roll", "DiceStreams", "checker_play", "finish_games",
    "UnitDice", "SharedDice", "Ply", "Chooser", "GameBatch", "GameRecord", "GameResults", "PlayResults", "play",
    "play_games", "dice_rng",
]

#: Rolls drawn at a time from a game's dice generator (after the opening roll).
DICE_BLOCK = 64

#: Default safety limit on the length of a game, in plies; no real game comes near it.
MAX_PLIES = 5000

#: The scoring of cubeless play: money play, no Jacoby rule (a cube nobody turns scores 1/2/3).
CUBELESS_RULES = MatchRules.money(jacoby=False)


def roll_dice(rng: np.random.Generator, opening: np.ndarray) -> np.ndarray:
    """One roll for each of a batch of games, from one generator; the opening roll where ``opening`` is set.

    The opening roll is each player's die (seat 0's, then seat 1's), re-rolled while they tie: it is never a
    double.  This is that rule for a batch (:func:`opening_roll` draws the same numbers for one game; self-play
    can use it for its shared generator).

    Args:
        rng: the dice generator.
        opening: ``(N,)`` bool, True where the game's next roll is its opening roll.

    Returns:
        ``(N, 2)`` int64 dice 1..6: ``rng.integers(1, 7, size=(N, 2))``, then, while some opening rolls are
        doubles, those ``K`` games' rolls redrawn with ``rng.integers(1, 7, size=(K, 2))``.
    """
    opening = np.asarray(opening, dtype=bool)
    dice = rng.integers(1, 7, size=(opening.size, 2))
    redo = opening & (dice[:, 0] == dice[:, 1])
    while redo.any():
        idx = np.flatnonzero(redo)
        dice[idx] = rng.integers(1, 7, size=(idx.size, 2))
        redo[idx] = dice[idx, 0] == dice[idx, 1]
    return dice


def opening_roll(dice_rng: np.random.Generator) -> tuple[int, int]:
    """The opening roll of one game: seat 0's die and seat 1's die, re-rolled while they tie (:func:`roll_dice`).

    Args:
        dice_rng: the game's dice generator; each attempt draws two dice (seat 0's, then seat 1's).

    Returns:
        ``(d0, d1)``, two different values 1..6; the seat with the higher die moves first with both numbers.
    """
    while True:  # roll_dice's draws for one game (two dice per attempt), without its batch bookkeeping
        d0, d1 = dice_rng.integers(1, 7, size=2).tolist()
        if d0 != d1:
            return d0, d1


class DiceStreams:
    """The rolls after the opening roll, for a batch of games, each from its own generator.

    Args:
        dice_rngs: one generator per game (already used for the opening roll).
        started: draw each game's first block now (default); ``False``: only when :meth:`start` is called for it
            (a game that starts later, after its opening roll is drawn).

    Rolls are drawn :data:`DICE_BLOCK` at a time per game, as ``integers(1, 7, size=(DICE_BLOCK, 2))``, so game
    ``g``'s ``k``-th roll depends only on its generator.
    """

    def __init__(self, dice_rngs: Sequence[np.random.Generator], started: bool = True) -> None:
        self._rngs = list(dice_rngs)
        n = len(self._rngs)
        self._buf = np.zeros((n, DICE_BLOCK, 2), dtype=np.int8)
        self._filled = np.zeros(n, dtype=np.int64)
        self._next = np.zeros(n, dtype=np.int64)
        if started:
            self.start(range(n))

    def start(self, games) -> None:
        """Draw the first block of rolls of each game in ``games`` (int indices) that has none yet."""
        for g in games:
            if self._filled[g] == 0:
                self._draw(int(g))

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
        winner_seat, points: result (points scored: 1/2/3 cubeless, cube x 1/2/3 with the cube).
        kind: 1/2/3 as played on the board, 0 when a double was passed (``None``: the same as ``points``).
        cube_actions: ``(ply, seat, took)`` for each double: made before ply ``ply`` (an index into ``movers``;
            ``P`` when the double was passed) by ``seat``, taken or passed.
        unit: the unit (slot) that played the game.
    """

    a_seat: int
    opening: tuple[int, int]
    movers: np.ndarray
    dice: np.ndarray
    afterstates: np.ndarray
    winner_seat: int
    points: int
    kind: int | None = None
    cube_actions: tuple[tuple[int, int, bool], ...] = ()
    unit: int = 0

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
        """A readable game record: one line per ply, ``'  1 A 31: 8/5 6/5'`` (``'(no play)'`` for a pass), cube
        actions as ``'    B doubles, A takes'``, then the result line; the higher die is written first."""

        def who(seat: int) -> str:
            return names[0] if int(seat) == self.a_seat else names[1]

        actions: dict[int, list[tuple[int, bool]]] = {}
        for ply, seat, took in self.cube_actions:
            actions.setdefault(int(ply), []).append((int(seat), bool(took)))
        lines = []
        plays = self.plays() + [None]
        movers = list(self.movers) + [None]
        dice = list(self.dice) + [None]
        for k, (seat, roll, play) in enumerate(zip(movers, dice, plays)):
            for doubler, took in actions.get(k, []):
                lines.append(f"    {who(doubler)} doubles, {who(1 - doubler)} {'takes' if took else 'passes'}")
            if seat is not None:
                hi, lo = max(int(roll[0]), int(roll[1])), min(int(roll[0]), int(roll[1]))
                lines.append(f"{k + 1:3d} {who(seat)} {hi}{lo}: {play or '(no play)'}")
        kind = self.points if self.kind is None else self.kind
        how = {0: "double passed", 1: "single game", 2: "gammon", 3: "backgammon"}[kind]
        lines.append(f"{who(self.winner_seat)} wins {self.points} point{'s' if self.points > 1 else ''} ({how})")
        return "\n".join(lines)


@dataclass
class GameResults:
    """Results of a batch of cubeless games between player A (``agents[0]``) and player B (``agents[1]``).

    Attributes:
        winner: ``(B,)`` int8, 0 = A won, 1 = B won.
        points: ``(B,)`` int8 result kind: 1 single, 2 gammon, 3 backgammon (cubeless).
        plies: ``(B,)`` int32 turns played, passes included.
        a_seat: ``(B,)`` int8 seat of A in each game.
        records: one :class:`GameRecord` per game when asked for, else ``None``.
        luck: ``(B,)`` float64 A's luck in points per game when a series judged it (:mod:`bgai.evaluate.luck`),
            else ``None``.
    """

    winner: np.ndarray
    points: np.ndarray
    plies: np.ndarray
    a_seat: np.ndarray
    records: list[GameRecord] | None = field(default=None, repr=False)
    luck: np.ndarray | None = field(default=None, repr=False)

    @property
    def points_a(self) -> np.ndarray:
        """``(B,)`` int16 points won by A in each game (negative when B won)."""
        return np.where(self.winner == 0, 1, -1).astype(np.int16) * self.points.astype(np.int16)


@dataclass
class PlayResults:
    """Games and units (money games or matches) played by :func:`play`; player 0 = A, 1 = B.

    Per game (``(G,)`` arrays, in order of finishing): ``game_unit`` (slot), ``game_winner`` (0 A / 1 B),
    ``game_points`` (points scored), ``game_kind`` (1/2/3 on the board, 0 = pass), ``game_cube`` (final cube
    value; for a pass the cube before the refused double), ``game_plies``.
    Per unit (``(U,)``): ``unit_points_a`` (money: A's points; match: A's score minus B's), ``unit_winner``
    (match winner, or the money game's winner), ``unit_score`` ``(U, 2)``, ``unit_games``, ``a_seat``.
    Counters ``(U, 2)`` per player: ``doubles`` offered, ``takes`` and ``passes`` answered.
    ``rules``: the rules played (:data:`CUBELESS_RULES` for cubeless play); ``records``: one
    :class:`GameRecord` per game, in the order of the game arrays, when asked for.
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
    records: list[GameRecord] | None = field(default=None, repr=False)

    def cubeless(self) -> GameResults:
        """The games as :class:`GameResults`, in unit order (one game per unit, as cubeless play has).

        Raises:
            ValueError: a unit played other than one game (a match).
        """
        if len(self.game_unit) != len(self.a_seat):
            raise ValueError(f"{len(self.game_unit)} games in {len(self.a_seat)} units: not one game per unit")
        order = np.argsort(self.game_unit, kind="stable")
        return GameResults(
            winner=self.game_winner[order],
            points=self.game_points[order].astype(np.int8),
            plies=self.game_plies[order],
            a_seat=self.a_seat,
            records=[self.records[i] for i in order] if self.records is not None else None,
        )


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


class UnitDice:
    """The dice of :func:`play`: one generator per slot (unit), the opening roll drawn when a game starts.

    Each slot's draws depend only on its own generator: the opening roll of its first game (:func:`opening_roll`),
    then blocks of :data:`DICE_BLOCK` rolls (:class:`DiceStreams`), and the opening roll of each later game when
    that game starts.

    Args:
        dice_rngs: one dice generator per slot; consumed.
    """

    def __init__(self, dice_rngs: Sequence[np.random.Generator]) -> None:
        self.rngs = list(dice_rngs)
        self.streams = DiceStreams(self.rngs, started=False)

    def opening(self, slots: np.ndarray) -> np.ndarray:
        """``(K, 2)`` int8 opening rolls (seat 0's die, seat 1's die) of the games starting in ``slots``, drawn now;
        a slot's first game then draws its first block of rolls."""
        out = np.array([opening_roll(self.rngs[int(s)]) for s in slots], dtype=np.int8).reshape(-1, 2)
        self.streams.start(slots)  # a no-op for a slot whose stream already started (a later game of a match)
        return out

    def roll(self, slots: np.ndarray, opening: np.ndarray) -> np.ndarray:
        """``(K, 2)`` int8 the next roll of each slot (``opening`` is all False: openings are drawn at the start)."""
        return self.streams.roll(slots)


class SharedDice:
    """The dice of self-play: one generator for the whole batch, every roll of a ply drawn in one call.

    The opening roll is not drawn when a game starts but with the first ply's rolls: each ply draws
    :func:`roll_dice` ``(rng, opening)`` for the slots that play it, in slot order, so the draws depend on the
    slots that play each ply (all of them in self-play, which refills a finished slot at once).

    Args:
        rng: the generator (the caller may draw from it too, e.g. for exploration, between plies).
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def opening(self, slots: np.ndarray) -> None:
        """``None``: the opening rolls are drawn with the first ply's rolls (:meth:`roll`)."""
        return None

    def roll(self, slots: np.ndarray, opening: np.ndarray) -> np.ndarray:
        """``(K, 2)`` int64 rolls for ``slots``: :func:`roll_dice` ``(rng, opening)`` (opening rolls never doubles)."""
        return roll_dice(self.rng, opening)


@dataclass
class Ply:
    """One ply of a :class:`GameBatch`, as :meth:`GameBatch.step` returns it (``K`` slots played).

    Attributes:
        slots: ``(K,)`` int64 the slots that played, ascending.
        players: ``(K,)`` int8 the player (0 = A, 1 = B) who moved in each.
        dice: ``(K, 2)`` int8 the roll played (an opening roll higher die first).
        afterstates: ``(K, 2, 25)`` int8 the chosen afterstates, mover's view (the unchanged position for a pass).
        done: ``(K,)`` bool the game ended with this ply (the mover bore off his last checker): the mover won.
        points: ``(K,)`` int8 the result kind 1/2/3 of the games that ended (:func:`finish_games`), 0 elsewhere.
    """

    slots: np.ndarray
    players: np.ndarray
    dice: np.ndarray
    afterstates: np.ndarray
    done: np.ndarray
    points: np.ndarray


#: ``choose(slots, players, boards, dice) -> afterstates``: the checker play of the slots on roll (``(K,)`` int64
#: slots, ``(K,)`` int8 players 0/1, ``(K, 2, 25)`` int8 positions from the mover's view, ``(K, 2)`` int8 dice) as
#: ``(K, 2, 25)`` int8 afterstates, mover's view.  ``boards`` may be a view of the batch's own array: read it only.
Chooser = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class GameBatch:
    """The stepping core of every batched game loop: ``n`` slots, each playing one game at a time, advanced one
    ply per :meth:`step`.

    :func:`play` (evaluation, cube play, matches) and self-play training (:class:`bgai.train.selfplay.GameShard`)
    both drive it; it holds the rules of a game that do not depend on who plays or why (module docstring): the
    opening roll (the higher die's seat moves first, higher die first), a roll per ply from the dice source, one
    call of the chooser for the slots on roll, the end of a game (:func:`finish_games`) and the turn passing to
    the opponent.  The driver decides what happens between plies (the cube phase, TD updates), what a finished
    game counts for, and which slots start a new game (:meth:`start`: continuous batching refills a finished slot
    with the next game of its source).

    Args:
        n: number of slots.
        dice: the dice source: ``opening(slots)`` when games start (``(K, 2)`` opening rolls, seat 0's die then
            seat 1's, or ``None``: drawn with the first ply's roll) and ``roll(slots, opening)`` each ply
            (``(K, 2)`` rolls; ``opening`` ``(K,)`` bool marks opening rolls, which must not be doubles), e.g.
            :class:`UnitDice` or :class:`SharedDice`.
        a_seat: ``(n,)`` 0/1 or one int: the seat of player A in each slot (the opening roll's dice are seats').
        max_plies: per-game safety limit (:class:`RuntimeError` past it), ``None`` for none.

    Attributes (read by drivers; one entry per slot): ``boards`` ``(n, 2, 25)`` int8 the position from the view of
    the player on roll, ``on_roll`` ``(n,)`` int8 that player (0 = A, 1 = B), ``dice`` ``(n, 2)`` int8 the last
    roll, ``opening`` ``(n, 2)`` int8 the current game's opening roll by seat (once drawn), ``first_ply`` ``(n,)``
    bool the next ply is the game's first (no cube phase before it), ``opening_due`` ``(n,)`` bool its opening
    roll is not drawn yet, ``plies`` ``(n,)`` int32 plies played in the current game, ``active`` ``(n,)`` bool a
    game is in progress.

    Raises:
        ValueError: ``a_seat`` not 0/1.
    """

    def __init__(self, n: int, dice, *, a_seat: np.ndarray | int = 0, max_plies: int | None = MAX_PLIES) -> None:
        self.source = dice
        self.a_seat = np.broadcast_to(np.asarray(a_seat, dtype=np.int8), (n,)).copy()
        if not np.isin(self.a_seat, (0, 1)).all():
            raise ValueError("a_seat must be 0 or 1")
        self.max_plies = max_plies
        self.boards = np.zeros((n, 2, 25), dtype=np.int8)
        self.on_roll = np.zeros(n, dtype=np.int8)
        self.dice = np.zeros((n, 2), dtype=np.int8)
        self.opening = np.zeros((n, 2), dtype=np.int8)
        self.first_ply = np.zeros(n, dtype=bool)
        self.opening_due = np.zeros(n, dtype=bool)
        self.plies = np.zeros(n, dtype=np.int32)
        self.active = np.zeros(n, dtype=bool)
        self._slots = np.arange(n, dtype=np.int64)

    def start(self, slots) -> None:
        """Start a new game from the starting position in each of ``slots`` (int indices, ascending; slots whose
        game is over), drawing their opening rolls if the dice source does so at the start."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        if slots.size == 0:
            return
        self.boards[slots] = starting_board()
        self.plies[slots] = 0
        self.first_ply[slots] = True
        self.active[slots] = True
        rolls = self.source.opening(slots)
        self.opening_due[slots] = rolls is None
        if rolls is not None:
            self._set_opening(slots, np.asarray(rolls))

    def _set_opening(self, slots: np.ndarray, rolls: np.ndarray) -> None:
        """The opening roll decides who moves first (the higher die's seat) and is played higher die first."""
        self.opening[slots] = rolls
        mover_seat = (rolls[:, 1] > rolls[:, 0]).astype(np.int8)
        self.on_roll[slots] = mover_seat ^ self.a_seat[slots]
        self.dice[slots, 0] = rolls.max(axis=1)
        self.dice[slots, 1] = rolls.min(axis=1)
        self.opening_due[slots] = False

    def stop(self, slot: int) -> None:
        """End the game in ``slot`` outside a ply (a passed double); :meth:`start` may then refill the slot."""
        self.active[slot] = False

    def step(self, choose: Chooser) -> Ply:
        """One ply in every active slot: the roll, one call of ``choose`` (see :data:`Chooser`) for all of them,
        and the end of the games whose mover bore off his last checker (those slots become inactive, their
        ``boards`` and ``on_roll`` not to be used until :meth:`start`; the others pass the turn: ``boards``
        flipped, ``on_roll`` swapped).

        Returns:
            :class:`Ply`.

        Raises:
            RuntimeError: ``choose`` returned the wrong shape, or a game reached ``max_plies``.
        """
        full = bool(self.active.all())  # every slot plays (self-play always): slices instead of gathers
        idx = self._slots if full else np.flatnonzero(self.active)
        sel = slice(None) if full else idx
        need_mask = ~self.first_ply[sel] | self.opening_due[sel]  # the slots whose roll is not drawn yet
        need, at = (idx, sel) if need_mask.all() else (idx[need_mask],) * 2
        if need.size:
            due = self.opening_due[at].copy()
            rolls = np.asarray(self.source.roll(need, due))
            self.dice[at] = rolls
            if due.any():
                self._set_opening(need[due], rolls[due])
        self.first_ply[sel] = False
        players = self.on_roll[sel].copy()
        dice = self.dice[sel].copy()
        after = np.asarray(choose(idx, players, self.boards[sel], dice))
        if after.shape != (idx.size, 2, 25):
            raise RuntimeError(f"the checker play returned shape {after.shape}, expected {(idx.size, 2, 25)}")
        self.plies[sel] += 1
        done, points = finish_games(after)
        any_done = bool(done.any())
        if full:  # the turn passes everywhere (a finished slot's position is not used until start() resets it)
            self.boards[...] = after[:, ::-1]
            self.on_roll ^= 1
        else:
            going = idx[~done] if any_done else idx
            self.boards[going] = flip(after[~done]) if any_done else flip(after)
            self.on_roll[going] ^= 1
        if any_done:
            self.active[idx[done]] = False
        if self.max_plies is not None and idx.size:
            going = idx[~done] if any_done else idx
            if going.size and self.plies[going].max() >= self.max_plies:
                raise RuntimeError(f"a game did not finish within {self.max_plies} plies")
        return Ply(idx, players, dice, after, done, points)


class _GameLoop:
    """:func:`play`'s driver of a :class:`GameBatch`: one slot per unit, each playing its current game; the cube
    phase between plies; the slots of a group start together, when fewer than ``width`` slots are playing
    (continuous batching, :func:`play`); a finished game of an unfinished match refills its slot at once."""

    def __init__(self, agents, dice_rngs, rng, rules, a_seat, policies, record, max_plies, groups=None,
                 width=None) -> None:
        n = len(dice_rngs)
        self.agents = agents
        sizes = [n] if groups is None else [int(k) for k in groups]
        self.rngs = [rng] if groups is None else list(rng)
        if groups is not None and (sum(sizes) != n or min(sizes, default=1) < 1 or len(self.rngs) != len(sizes)):
            raise ValueError(f"groups {sizes} must be positive sizes summing to the {n} units, one rng each")
        self.bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.group_of = np.repeat(np.arange(len(sizes)), sizes)
        self.width = n if width is None else int(width)
        # merged agent calls need agents whose plays depend on nothing but the position and roll
        self.merge = len(sizes) == 1 or all(getattr(a, "batch_invariant", False) for a in agents)
        self.started = 0  # groups started
        self.cube = rules is not None
        self.rules = rules if rules is not None else CUBELESS_RULES
        self.policies, self.record = policies, record
        self.batch = GameBatch(n, UnitDice(dice_rngs), a_seat=a_seat, max_plies=max_plies)
        self.a_seat = self.batch.a_seat
        self.matches: list[Match] = [Match(self.rules)] * n  # immutable: every rule returns a new one
        self.doubles = np.zeros((n, 2), dtype=np.int32)
        self.takes = np.zeros((n, 2), dtype=np.int32)
        self.passes = np.zeros((n, 2), dtype=np.int32)
        self.games: list[tuple[int, int, int, int, int, int]] = []  # per finished game, in order of finishing
        self.game_id = np.zeros(n, dtype=np.int64)  # the game each slot plays (index into openings)
        self.openings: list[tuple[int, int]] = []
        self.finished: list[tuple[int, GameOutcome]] = []  # (game id, outcome) in order of finishing
        self.log: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.cube_log: dict[int, list[tuple[int, int, bool]]] = {}
        self.start_groups()

    def start_groups(self) -> None:
        """Start the next groups while fewer than ``width`` slots are playing (the first group at once)."""
        while self.started < len(self.bounds) - 1 and (self.started == 0 or self.batch.active.sum() < self.width):
            self.new_games(np.arange(self.bounds[self.started], self.bounds[self.started + 1]))
            self.started += 1

    def new_games(self, units: np.ndarray) -> None:
        self.batch.start(units)
        for u in units:
            self.game_id[u] = len(self.openings)
            self.openings.append((int(self.batch.opening[u, 0]), int(self.batch.opening[u, 1])))

    def game_over(self, u: int, outcome: GameOutcome) -> None:
        plies = int(self.batch.plies[u])
        self.games.append((u, outcome.winner, outcome.points, outcome.kind, outcome.cube_value, plies))
        self.finished.append((int(self.game_id[u]), outcome))
        if not (self.rules.is_money or self.matches[u].is_over):
            self.new_games(np.array([u]))

    def run(self) -> PlayResults:
        while self.batch.active.any():
            if self.cube:
                self.cube_phase()
            if self.batch.active.any():
                self.play_phase()
            self.start_groups()
        return self.results()

    # -- the cube phase: before the roll, not on a game's first ply --
    def cube_phase(self) -> None:
        cand: list[tuple[int, int, object]] = []
        for u in np.flatnonzero(self.batch.active & ~self.batch.first_ply):
            p = int(self.batch.on_roll[u])
            s = self.matches[u].doubling_state(p)
            if s is not None:
                cand.append((int(u), p, s))
        for p in (0, 1):
            mine = [(u, s) for (u, q, s) in cand if q == p]
            if mine:
                self.offer(p, mine)

    def offer(self, p: int, mine: list) -> None:
        us = np.array([u for u, _ in mine])
        states = [s for _, s in mine]
        offer = np.asarray(self.policies[p].offer(self.batch.boards[us], states), dtype=bool)
        if not offer.any():
            return
        du = us[offer]
        dstates = [s for s, o in zip(states, offer) if o]
        take = np.asarray(self.policies[1 - p].accept(self.batch.boards[du], dstates), dtype=bool)
        for u, t in zip(du, take):
            self.answer(int(u), p, bool(t))

    def answer(self, u: int, p: int, took: bool) -> None:
        self.doubles[u, p] += 1
        m = self.matches[u].offer_double(p)
        if self.record:
            seat = p ^ int(self.a_seat[u])
            self.cube_log.setdefault(int(self.game_id[u]), []).append((int(self.batch.plies[u]), seat, took))
        (self.takes if took else self.passes)[u, 1 - p] += 1
        self.matches[u], out = m.answer_double(took)
        if out is not None:
            self.batch.stop(u)
            self.game_over(u, out)

    # -- the roll and the checker play --
    def choose(self, idx: np.ndarray, players: np.ndarray, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The batch's :data:`Chooser`: the agents' checker play (:func:`checker_play`), in one call per player, or
        one per group with its own generator (``groups`` of agents that are not batch-invariant)."""
        if self.merge:
            return checker_play(self.agents, players, boards, dice, self.rngs[0])
        after = np.empty((idx.size, 2, 25), dtype=np.int8)
        grp = self.group_of[idx]
        for k in np.unique(grp):  # each group's games with its own rng, as if the group played alone
            sel = np.flatnonzero(grp == k)
            after[sel] = checker_play(self.agents, players[sel], boards[sel], dice[sel], self.rngs[k])
        return after

    def play_phase(self) -> None:
        ply = self.batch.step(self.choose)
        if self.record:
            seats = ply.players ^ self.a_seat[ply.slots]
            self.log.append((self.game_id[ply.slots], seats, ply.dice, ply.afterstates))
        for k in np.flatnonzero(ply.done):
            u = int(ply.slots[k])
            self.matches[u], out = self.matches[u].end_game(int(ply.players[k]), int(ply.points[k]))
            self.game_over(u, out)

    # -- results --
    def results(self) -> PlayResults:
        n = len(self.matches)
        g = np.array(self.games, dtype=np.int64).reshape(-1, 6)
        score = np.array([m.score for m in self.matches], dtype=np.int64).reshape(n, 2)
        if self.rules.is_money:
            unit_winner = np.full(n, -1, dtype=np.int8)
            unit_winner[g[:, 0]] = g[:, 1]
        else:
            unit_winner = np.array([m.winner for m in self.matches], dtype=np.int8)
        return PlayResults(
            rules=self.rules,
            game_unit=g[:, 0],
            game_winner=g[:, 1].astype(np.int8),
            game_points=g[:, 2],
            game_kind=g[:, 3].astype(np.int8),
            game_cube=g[:, 4],
            game_plies=g[:, 5].astype(np.int32),
            unit_points_a=score[:, 0] - score[:, 1],
            unit_winner=unit_winner,
            unit_score=score,
            unit_games=np.array([m.games for m in self.matches], dtype=np.int32),
            a_seat=self.a_seat,
            doubles=self.doubles,
            takes=self.takes,
            passes=self.passes,
            records=self.assemble_records() if self.record else None,
        )

    def assemble_records(self) -> list[GameRecord]:
        n_games = len(self.openings)
        if self.log:
            games = np.concatenate([entry[0] for entry in self.log])
            movers = np.concatenate([entry[1] for entry in self.log])
            dice = np.concatenate([entry[2] for entry in self.log])
            after = np.concatenate([entry[3] for entry in self.log])
        else:  # every game passed before its first play: impossible (the opening roll is always played)
            games, movers = np.zeros(0, np.int64), np.zeros(0, np.int8)
            dice, after = np.zeros((0, 2), np.int8), np.zeros((0, 2, 25), np.int8)
        order = np.argsort(games, kind="stable")  # plies of a game stay in time order
        bounds = np.searchsorted(games[order], np.arange(n_games + 1))
        units = [int(u) for u, *_ in self.games]
        out = []
        for (gid, outcome), u in zip(self.finished, units):
            sel = order[bounds[gid] : bounds[gid + 1]]
            seat_a = int(self.a_seat[u])
            out.append(
                GameRecord(
                    a_seat=seat_a,
                    opening=self.openings[gid],
                    movers=movers[sel],
                    dice=dice[sel],
                    afterstates=after[sel],
                    winner_seat=outcome.winner ^ seat_a,
                    points=int(outcome.points),
                    kind=int(outcome.kind),
                    cube_actions=tuple(self.cube_log.get(gid, ())),
                    unit=u,
                )
            )
        return out


def play(
    agents: Sequence[Agent],
    dice_rngs: Sequence[np.random.Generator],
    rng: np.random.Generator,
    *,
    rules: MatchRules | None = None,
    a_seat: np.ndarray | int = 0,
    policies: Sequence[CubePolicy] | None = None,
    record: bool = False,
    max_plies: int = MAX_PLIES,
    groups: Sequence[int] | None = None,
    width: int | None = None,
) -> PlayResults:
    """The game loop: play one unit per dice generator between A and B, all in one batch.

    Continuous batching (``groups``): the units are cut into groups of consecutive units (``groups[k]`` units in
    group ``k``); the first group starts at once, and each later one as soon as fewer than ``width`` units are
    playing, so that the batch stays large until the last group's last games.  All the units of a group start
    together, so every game is the one the group would play alone (:func:`play` of the group's dice generators
    with ``rng[k]``): each group's positions go to the agents in calls of their own, with the group's generator;
    the groups share the calls only when both agents are :attr:`~bgai.agents.base.Agent.batch_invariant`.

    Args:
        agents: ``(agent A, agent B)``; may be the same object (self-play: one agent call per ply).
        dice_rngs: one dice generator per unit (see the module docstring and :func:`dice_rng`); consumed.
        rng: generator handed to the agents' ``choose`` (seeded by the caller); with ``groups``, a sequence of
            one generator per group.
        rules: ``None`` for cubeless money games (no cube phase; 1/2/3 points); a
            :class:`~bgai.game.match.MatchRules` for cubeful money games (``MatchRules.money(...)``) or matches
            (``MatchRules.match(n)``).
        a_seat: seat of A per unit, ``(U,)`` 0/1 or one int for all units.
        policies: with ``rules``: the cube policies of A and B (default :func:`~bgai.game.policies.cube_policy_for`
            each agent); must be ``None`` in cubeless play.
        record: keep a :class:`GameRecord` of every game.
        max_plies: per-game safety limit (a broken agent that never finishes).
        groups: ``None`` (all units start at once), or the number of units in each group (positive ints summing to
            ``len(dice_rngs)``).
        width: with ``groups``: start the next group when fewer than this many units are playing (default: all
            groups at once).

    Returns:
        :class:`PlayResults` (games in order of finishing; :meth:`PlayResults.cubeless` for the games in unit order).

    Raises:
        ValueError: ``a_seat`` not 0/1, cube ``policies`` without ``rules``, or ``groups`` that do not add up to
            the units or do not match the generators in ``rng``.
        MatchStateError: a match longer than the match equity table (for probability agents' cube policies).
        RuntimeError: a game longer than ``max_plies``, or an agent returning the wrong shape.
    """
    if rules is None:
        if policies is not None:
            raise ValueError("cube policies need rules: cubeless play has no cube")
    else:
        if policies is None:
            policies = (cube_policy_for(agents[0]), cube_policy_for(agents[1]))
        check_met(rules, policies)
    return _GameLoop(agents, dice_rngs, rng, rules, a_seat, policies, record, max_plies, groups, width).run()


def check_met(rules: MatchRules, policies: Sequence[CubePolicy]) -> None:
    """Check that a match fits the match equity table that the Janowski cube policies need.

    Raises:
        MatchStateError: a ``rules.length``-point match longer than the table of ``rules.met_name``.
    """
    if rules.is_money or not any(isinstance(p, JanowskiCubePolicy) for p in policies):
        return
    met = load_met(rules.met_name)
    if rules.length > met.length:
        raise MatchStateError(f"a {rules.length}-point match is longer than the {met.name} table ({met.length} points)")


def play_games(
    agents: Sequence[Agent],
    dice_rngs: Sequence[np.random.Generator],
    rng: np.random.Generator,
    *,
    a_seat: np.ndarray | int = 0,
    record: bool = False,
    max_plies: int = MAX_PLIES,
    groups: Sequence[int] | None = None,
    width: int | None = None,
) -> GameResults:
    """Play ``len(dice_rngs)`` cubeless money games between two agents, all in one batch (:func:`play` without
    rules; ``groups`` and ``width``: continuous batching as there, ``rng`` then one generator per group).

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
        ValueError: ``a_seat`` not 0/1, or bad ``groups``.
        RuntimeError: a game exceeded ``max_plies`` or an agent returned the wrong shape.
    """
    return play(agents, dice_rngs, rng, a_seat=a_seat, record=record, max_plies=max_plies, groups=groups,
                width=width).cubeless()


def dice_rng(seed: int, game: int) -> np.random.Generator:
    """The dice generator of game (or mirrored pair) number ``game`` of a series seeded with ``seed``.

    ``np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, game)))``: independent streams per game,
    the same for every worker count and batch size.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, game)))
