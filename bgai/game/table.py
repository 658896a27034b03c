"""One game or match at a time, step by step, between two players who decide one position at a time.

:class:`Table` plays the turns of the game loop :func:`bgai.game.play.play` (its module docstring has the rules
and the dice) for a single unit, a money session or a match, with players that answer one question at a time: a
person at the terminal (:mod:`bgai.tui.terminal`) or a bot (:class:`AgentPlayer`).  The pieces are the loop's own:
the opening roll (:func:`~bgai.game.play.opening_roll`), the dice after it (:class:`~bgai.game.play.DiceStreams`,
the same draws as the batched loop), the cube rules, score and Crawford rule (:class:`~bgai.game.match.Match`:
:meth:`~bgai.game.match.Match.doubling_state`, :meth:`~bgai.game.match.Match.answer_double`,
:meth:`~bgai.game.match.Match.end_game`), the end of a game (:func:`~bgai.game.play.finish_games`) and the
agents' cube policies (:func:`~bgai.game.policies.cube_policy_for`).  Two :class:`AgentPlayer` at a table play
exactly the games that :func:`~bgai.game.play.play` plays on the same dice generator.

A turn (:meth:`Table.play_turn`):

1. a double pending from the starting position is answered first; otherwise, before rolling (not on the opening
   roll, nor with dice given by the starting position) a player whom the rules let double
   (:meth:`Match.can_double`) is asked :meth:`Player.before_roll`: roll, double, or offer to resign;
2. a double is answered by the opponent (:meth:`Player.answer_double`): a take doubles the cube, a pass ends the
   game;
3. the roll; with no legal play the turn passes; otherwise :meth:`Player.choose_play` gives a play (or an offer
   to resign), which ends the game when it bears off the last checker;
4. an offer to resign ``1``/``2``/``3`` points (single, gammon, backgammon) is answered by the opponent
   (:meth:`Player.answer_resignation`); accepted, it ends the game as a result of that kind (cube x points, the
   Jacoby rule as for a game played out), rejected, the same player is asked again.

Every action is recorded as a :mod:`bgai.formats.matchrecord` action, checked by
:class:`~bgai.formats.matchrecord.GameReplay` as it happens (:meth:`Table.record`), and reported to the
``on_event`` callback as an :class:`Event` (what a front end shows).  Player 0 and 1 are absolute, as in
:class:`~bgai.game.match.Match`; :attr:`Table.board` is from player 0's view (row 0 = player 0).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from bgai.agents.base import Agent
from bgai.core.board import flip, starting_board
from bgai.core.movegen import Play, legal_plays
from bgai.errors import BgaiError, MatchStateError
from bgai.formats.matchrecord import (
    AcceptResign,
    Action,
    Double,
    Drop,
    GameRecord,
    GameReplay,
    MatchRecord,
    Move,
    RejectResign,
    Resign,
    Take,
)
from bgai.game.match import GameOutcome, Match
from bgai.game.play import DiceStreams, checker_play, finish_games, opening_roll
from bgai.game.policies import CubePolicy, cube_policy_for

__all__ = ["ROLL", "DOUBLE", "ResignOffer", "Player", "AgentPlayer", "Event", "Table"]

#: Answers of :meth:`Player.before_roll` besides a :class:`ResignOffer`.
ROLL, DOUBLE = "roll", "double"


@dataclass(frozen=True)
class ResignOffer:
    """A player's offer to resign ``points``: 1 a single game, 2 a gammon, 3 a backgammon."""

    points: int

    def __post_init__(self) -> None:
        if self.points not in (1, 2, 3):
            raise MatchStateError(f"a resignation offers 1, 2 or 3 points, not {self.points!r}")


class Player(ABC):
    """A player at a :class:`Table`; every method gets the table and the player's number ``me`` (0/1).

    The position seen by the player is ``table.view(me)`` (row 0 = ``me``); the cube and score
    ``table.match.cube_state(me)``.
    """

    @abstractmethod
    def before_roll(self, table: "Table", me: int) -> str | ResignOffer:
        """Before the roll, when the rules let ``me`` double: :data:`ROLL`, :data:`DOUBLE` or an offer to
        resign."""

    @abstractmethod
    def answer_double(self, table: "Table", me: int) -> bool:
        """The opponent has doubled (``table.match.offered_by``): True to take, False to pass."""

    @abstractmethod
    def choose_play(self, table: "Table", me: int, plays: Sequence[Play]) -> Play | ResignOffer:
        """One of ``plays`` (the legal plays of ``table.dice``, at least one), or an offer to resign."""

    def answer_resignation(self, table: "Table", me: int, points: int) -> bool:
        """The opponent offers to resign ``points`` (1/2/3) at its turn: True to accept.

        Raises:
            MatchStateError: this player cannot judge a resignation (the default: a player whose opponent never
                resigns, such as a person facing a bot, or :class:`AgentPlayer`).
        """
        raise MatchStateError(f"{type(self).__name__} cannot judge a resignation")


class AgentPlayer(Player):
    """A bot at the table: the agent's checker play (:func:`bgai.game.play.checker_play`) and a cube policy (the
    game loop's default :func:`~bgai.game.policies.cube_policy_for` the agent), as in :func:`bgai.game.play.play`.

    Args:
        agent: the agent.
        rng: the generator handed to the agent's ``choose``.
        policy: its cube policy (default :func:`cube_policy_for` ``agent``).

    An agent player never offers to resign.  It judges an opponent's resignation only in a subclass that
    overrides :meth:`Player.answer_resignation` (the judgement, :func:`bgai.analysis.resign.resignation_decision`,
    sits above the game layer).
    """

    def __init__(self, agent: Agent, rng: np.random.Generator, policy: CubePolicy | None = None) -> None:
        self.agent = agent
        self.rng = rng
        self.policy = policy if policy is not None else cube_policy_for(agent)

    def before_roll(self, table, me):
        state = table.match.doubling_state(me)
        if state is None:
            return ROLL
        return DOUBLE if bool(self.policy.offer(table.view(me)[None], [state])[0]) else ROLL

    def answer_double(self, table, me):
        doubler = 1 - me  # the policies answer from the doubler's view, as in the game loop
        state = table.match.cube_state(doubler)
        return bool(self.policy.accept(table.view(doubler)[None], [state])[0])

    def choose_play(self, table, me, plays):
        dice = np.asarray([table.dice], dtype=np.int8)
        after = checker_play((self.agent, self.agent), np.zeros(1, np.int8), table.view(me)[None], dice, self.rng)[0]
        key = after.tobytes()
        for p in plays:
            if np.asarray(p.afterstate, dtype=np.int8).tobytes() == key:
                return p
        raise MatchStateError(f"agent {getattr(self.agent, 'name', self.agent)!r} chose an afterstate that is not "
                              f"a legal play of {table.dice[0]}-{table.dice[1]}")


@dataclass(frozen=True)
class Event:
    """Something that happened at the table, for a front end to show.

    Attributes:
        kind: ``'start'`` (a game starts: ``opening`` is ``(player 0's die, player 1's die)``, or None for a
            game from a set-up position), ``'roll'`` (``player`` is about to play ``dice``), ``'move'``
            (``player`` played ``play``; None: no legal play), ``'double'`` (``player`` doubles), ``'take'`` /
            ``'pass'`` (``player`` answers a double), ``'resign'`` (``player`` offers ``points``),
            ``'accept'`` / ``'reject'`` (``player`` answers it), ``'end'`` (the game ended: ``outcome``).
        player: the player who acted (0/1), or the first mover for ``'start'``.
        how: for ``'end'``: ``'played'``, ``'passed'`` or ``'resigned'``.
    """

    kind: str
    player: int
    dice: tuple[int, int] | None = None
    play: Play | None = None
    points: int = 0
    opening: tuple[int, int] | None = None
    outcome: GameOutcome | None = None
    how: str = ""


class _Recorder:
    """The games of a session as match-record actions, checked as they happen (:class:`GameReplay`)."""

    def __init__(self, players: tuple[str, str]) -> None:
        self.players = players
        self.shell: MatchRecord | None = None
        self.games: list[GameRecord] = []
        self.replay: GameReplay | None = None
        self.setup: tuple | None = None
        self.broken: str | None = None

    def _shell(self, match: Match) -> MatchRecord:
        if self.shell is None:
            r = match.rules
            self.shell = MatchRecord(players=self.players, length=r.length, crawford=None if r.is_money else r.crawford,
                                     jacoby=r.jacoby if r.is_money else False)
        return self.shell

    def start(self, match: Match, setup: np.ndarray | None) -> None:
        self.setup = None if setup is None else tuple(tuple(int(x) for x in row) for row in setup)
        try:
            self.replay = GameReplay(self._shell(match), match.games + 1, match.score, match.crawford, setup)
        except BgaiError as exc:  # pragma: no cover - a bug: recording stops, play goes on
            self.broken, self.replay = str(exc), None

    def add(self, action: Action) -> None:
        if self.replay is None or self.broken:
            return
        try:
            self.replay.apply(action)
        except BgaiError as exc:  # pragma: no cover - a bug: recording stops, play goes on
            self.broken = str(exc)

    def current(self) -> GameRecord | None:
        r = self.replay
        if r is None or not r.actions:
            return None
        return GameRecord(number=r.number, score=r.score, crawford=r.crawford, actions=tuple(r.actions),
                          result=r.result, setup=self.setup)

    def finish(self) -> None:
        g = self.current()
        if g is not None and not self.broken:
            self.games.append(g)
        self.replay = None

    def record(self, match: Match) -> MatchRecord:
        games = list(self.games)
        g = self.current()
        if g is not None:
            games.append(g)
        s = self._shell(match)
        return MatchRecord(players=s.players, length=s.length, games=tuple(games), crawford=s.crawford,
                           jacoby=s.jacoby)


class Table:
    """A money session or a match between two :class:`Player`, played one step at a time.

    Args:
        players: player 0 and player 1.
        rng: the dice generator (:func:`bgai.game.play.dice_rng` for the game loop's dice of a unit): each game's
            opening roll when it starts, the other rolls in blocks (:class:`~bgai.game.play.DiceStreams`).
        match: the cube and score at the start (default: a money session, Jacoby rule); a pending double
            (``offered_by``) is answered at the start of the first game.
        on_event: called with every :class:`Event`.
        names: the players' names in :meth:`record`.

    Attributes:
        match: the :class:`~bgai.game.match.Match` (cube, score, Crawford, games played).
        board: ``(2, 25)`` int8 position from player 0's view.
        turn: the player to act (0/1).
        dice: the roll of the player on turn, or None before it is rolled.
    """

    def __init__(
        self,
        players: Sequence[Player],
        rng: np.random.Generator,
        match: Match | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        names: tuple[str, str] = ("player 0", "player 1"),
    ) -> None:
        self.players = tuple(players)
        if len(self.players) != 2:
            raise ValueError(f"a table seats 2 players, got {len(self.players)}")
        self.rng = rng
        self.match = match if match is not None else Match()
        self.on_event = on_event or (lambda e: None)
        self.board = starting_board()
        self.turn = 0
        self.dice: tuple[int, int] | None = None
        self._streams: DiceStreams | None = None
        self._recorder = _Recorder(names)
        self._unrecordable = self._why_unrecordable()

    # -- positions and dice -----------------------------------------------------------------------------------
    def view(self, player: int) -> np.ndarray:
        """``(2, 25)`` int8 position from ``player``'s view (row 0 = ``player``)."""
        return self.board if player == 0 else flip(self.board)

    def roll(self) -> tuple[int, int]:
        """The next roll of the dice generator after the opening rolls (higher die first)."""
        if self._streams is None:
            self._streams = DiceStreams([self.rng])
        d = self._streams.roll(np.zeros(1, dtype=np.int64))[0]
        return int(max(d)), int(min(d))

    def _emit(self, kind: str, player: int, **kw) -> None:
        self.on_event(Event(kind, player, **kw))

    # -- games ------------------------------------------------------------------------------------------------
    def start_game(self, setup: np.ndarray | None = None, *, turn: int = 0,
                   dice: tuple[int, int] | None = None) -> None:
        """Start the next game: from the opening roll, or from ``setup``.

        Args:
            setup: ``(2, 25)`` starting position from player 0's view; None: the opening position and the
                opening roll (each player's die, re-rolled on a tie; the higher moves first with both).
            turn: with ``setup``: the player to act (with a double pending: the doubler, whose double is
                answered first).
            dice: with ``setup``: the roll of ``turn``, or None (rolled after the cube decision).

        Raises:
            MatchStateError: the match is over; a roll with a double pending.
        """
        m = self.match
        if m.is_over:
            raise MatchStateError("the match is over")
        self._recorder.start(m, setup)
        if setup is None:
            d0, d1 = opening_roll(self.rng)
            self.board = starting_board()
            self.turn = 0 if d0 > d1 else 1
            self.dice = (max(d0, d1), min(d0, d1))
            self._emit("start", self.turn, opening=(d0, d1))
            return
        if m.offered_by is not None and (dice is not None or turn != m.offered_by):
            raise MatchStateError("with a double pending the doubler is on turn and has not rolled")
        self.board = np.array(setup, dtype=np.int8)
        self.turn = int(turn)
        self.dice = None if dice is None else (int(dice[0]), int(dice[1]))
        self._emit("start", self.turn)
        if m.offered_by is not None:
            self._recorder.add(Double(m.offered_by))
            self._emit("double", m.offered_by)

    def play_game(self) -> GameOutcome:
        """Turns (:meth:`play_turn`) until the game started by :meth:`start_game` ends; its outcome."""
        while True:
            out = self.play_turn()
            if out is not None:
                return out

    def play_turn(self) -> GameOutcome | None:
        """The turn of :attr:`turn` (see the module docstring); the game's outcome when it ended, else None (the
        turn passes to the opponent)."""
        p = self.turn
        if self.match.offered_by is not None:
            out = self._answer_double(self.match.offered_by)
            if out is not None:
                return out
        elif self.dice is None and self.match.can_double(p):
            out = self._before_roll(p)
            if out is not None:
                return out
        if self.dice is None:
            self.dice = self.roll()
        return self._checker_play(p, self.dice)

    def _before_roll(self, p: int) -> GameOutcome | None:
        while True:
            choice = self.players[p].before_roll(self, p)
            if isinstance(choice, ResignOffer):
                out = self._resign(p, choice.points)
                if out is not None:
                    return out
                continue
            if choice == DOUBLE:
                self.match = self.match.offer_double(p)
                self._recorder.add(Double(p))
                self._emit("double", p)
                return self._answer_double(p)
            if choice != ROLL:
                raise MatchStateError(f"before the roll a player rolls, doubles or resigns, not {choice!r}")
            return None

    def _answer_double(self, doubler: int) -> GameOutcome | None:
        taker = 1 - doubler
        took = bool(self.players[taker].answer_double(self, taker))
        self._recorder.add(Take(taker) if took else Drop(taker))
        match, out = self.match.answer_double(took)
        if out is None:
            self.match = match
        self._emit("take" if took else "pass", taker)
        if out is not None:
            return self._end(match, out, "passed")
        return None

    def _checker_play(self, p: int, dice: tuple[int, int]) -> GameOutcome | None:
        self._emit("roll", p, dice=dice)
        plays = [q for q in legal_plays(self.view(p), dice) if q.steps]
        while plays:
            choice = self.players[p].choose_play(self, p, plays)
            if not isinstance(choice, ResignOffer):
                break
            out = self._resign(p, choice.points)
            if out is not None:
                return out
        else:
            self._recorder.add(Move(p, dice))
            self._next_turn(p, None)
            return None
        after = np.asarray(choice.afterstate, dtype=np.int8)
        self._recorder.add(Move(p, dice, choice.steps))
        done, kind = finish_games(after[None])
        self._next_turn(p, choice, after)
        if done[0]:
            return self._end(*self.match.end_game(p, int(kind[0])), "played")
        return None

    def _next_turn(self, p: int, play: Play | None, after: np.ndarray | None = None) -> None:
        if after is not None:
            self.board = after if p == 0 else flip(after)
        dice, self.dice = self.dice, None
        self._emit("move", p, dice=dice, play=play)
        self.turn = 1 - p

    def _resign(self, p: int, points: int) -> GameOutcome | None:
        self._recorder.add(Resign(p, points))
        self._emit("resign", p, points=points)
        other = 1 - p
        accepted = bool(self.players[other].answer_resignation(self, other, points))
        self._recorder.add(AcceptResign(other) if accepted else RejectResign(other))
        self._emit("accept" if accepted else "reject", other, points=points)
        if not accepted:
            return None
        return self._end(*self.match.end_game(other, points), "resigned")

    def _end(self, match: Match, out: GameOutcome, how: str) -> GameOutcome:
        """The game ended with ``out``: the ``'end'`` event (:attr:`match` still the game's), then ``match``, the
        match at the start of the next game."""
        self.dice = None
        self._recorder.finish()
        self._emit("end", out.winner, outcome=out, how=how)
        self.match = match
        return out

    # -- the record -------------------------------------------------------------------------------------------
    def _why_unrecordable(self) -> str | None:
        m = self.match
        if m.cube_value == 1 and m.score == (0, 0):
            return None
        what = [f"the score {m.score[0]}-{m.score[1]}"] if m.score != (0, 0) else []
        if m.cube_value != 1:
            what.append(f"the cube on {m.cube_value}")
        return (f"the position starts the session with {' and '.join(what)}, and a match record starts at 0-0 "
                "with a centred cube: this session cannot be saved")

    @property
    def has_setup(self) -> bool:
        """A game of the record (the one in progress included) starts from a set-up position."""
        return self._recorder.setup is not None or any(g.setup for g in self._recorder.games)

    def check_recordable(self) -> None:
        """Raises BgaiError when the session cannot be recorded: it started at a score other than 0-0 or with the
        cube turned (a match record cannot hold that)."""
        if self._unrecordable:
            raise BgaiError(self._unrecordable)
        if self._recorder.broken:  # pragma: no cover - a bug
            raise BgaiError(f"the game record is broken: {self._recorder.broken}")

    def record(self) -> MatchRecord:
        """The games so far, the one in progress included (unfinished), as a :class:`MatchRecord`.

        Raises:
            BgaiError: see :meth:`check_recordable`.
        """
        self.check_recordable()
        return self._recorder.record(self.match)
