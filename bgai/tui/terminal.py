"""Play against the bot in a terminal: board drawing, plays typed in standard notation, hints, cube, score.

:class:`TerminalGame` runs a money session (games until you stop; Jacoby rule) or a match to ``N`` points
(Crawford rule), with the cube, between you (player 0, ``X``, moving from 24 down to 1 on the bottom of the
drawing) and a :class:`~bgai.serve.bot.Bot` (player 1, ``O``).  Rules and scoring come from :mod:`bgai.game.match`,
plays from :mod:`bgai.core.movegen`, notation from :mod:`bgai.core.notation`, the bot's hints and cube decisions
from :mod:`bgai.analysis.api` (:func:`~bgai.analysis.api.rank_plays` with the match's cube state,
:func:`~bgai.analysis.api.decide_cube`; agents without probabilities: never double, always take).

Commands (case-insensitive; short forms in :data:`HELP_TEXT`, which ``help`` prints):

* before your roll, when you may double: ``roll`` (or an empty line), ``double``, ``hint`` (the bot's cube
  advice for you); when you may not double, the dice are rolled for you;
* after your roll: a play such as ``13/8 13/11``, ``bar/22*``, ``6/off``, ``8/2(2)``; ``hint`` (the bot's
  three best plays for you), ``moves`` (all legal plays);
* at your turn, before or after rolling: ``resign [1|2|3]`` (or ``resign single|gammon|backgammon``): the bot
  accepts or rejects by :func:`bgai.analysis.resign.resignation_decision` (money: points, with the cubeful
  equity of playing on; match: match-winning chances);
* when doubled: ``take`` or ``drop`` (``pass``), ``hint``;
* at any prompt: ``board``, ``score``, ``save FILE.mat|FILE.sgf``, ``help``, ``quit``.

Starting position (``start``, ``bgai play --position``): any position the request parser reads
(:func:`bgai.formats.request.read_position_request`: Position ID[:Match ID], XGID, FIBS board...) starts the first
game, with its cube, score, match length and rules; you are the side to act (the side on roll, or with a double
pending the side doubled, who must take or pass), with the position's dice if it has a roll.  Later games start
from the opening position.

Recording (:meth:`TerminalGame.record`, ``save FILE`` at a prompt, ``bgai play --save FILE`` when the session
ends, also after Ctrl-C or the end of input): every game, the one in progress included, as a
:class:`bgai.formats.matchrecord.MatchRecord` (player 0 ``you``, player 1 ``bgai``; a game from a position is a
set-up game) written by :func:`bgai.formats.matchfile.write_match` (atomically; the format from the extension).
What a match record cannot hold is refused with a message naming it: a ``.mat`` file has no set-up position
(save a game from ``--position`` as ``.sgf``), and no record holds a game that starts with the cube turned or a
match that starts at a score other than 0-0.  A roll you make and then resign without playing is not recorded
(the resignation is).

An illegal, ambiguous or unreadable play gets a message saying why and the prompt again.  Every position is
shown with its GNU Backgammon Position ID (and Match ID), so it can be pasted into other programs.
All dice come from one ``np.random.Generator`` seeded by the caller.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import numpy as np

from bgai.core.board import flip, is_game_over, render, result_kind, starting_board
from bgai.core.cube_state import CubeState
from bgai.core.movegen import Play, parse_play
from bgai.core.position_id import encode_position_id
from bgai.errors import AmbiguousMoveError, BgaiError, IllegalMoveError, NotationError
from bgai.formats.match_id import encode_match_id
from bgai.formats.matchfile import match_format, write_match
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
from bgai.formats.request import PositionRequest, read_position_request
from bgai.game.match import Match, MatchRules
from bgai.serve.bot import Bot

__all__ = ["TerminalGame", "Quit", "StartPosition", "start_from_request", "PLAYER_NAMES", "play_in_terminal"]

#: What ``help`` prints at any prompt.
HELP_TEXT = """\
Commands (case does not matter; the short forms are in brackets):

  Before your roll (when you may double):
    roll [r]      roll the dice (an empty line does the same)
    double [d]    offer the cube to the bot
    hint [h]      the bot's cube advice for you
  When you may not double, the dice are rolled for you.

  After your roll:
    13/8 13/11    your play in standard notation, e.g. bar/22*, 6/off, 8/2(2), 24/18*/13
    hint [h]      the bot's three best plays for you
    moves [m]     all your legal plays

  At your turn (before or after rolling):
    resign [1|2|3]  offer to resign a single game (1, the default), a gammon (2) or a backgammon (3);
                  also: resign single|gammon|backgammon.  bgai accepts when the offer is worth at least
                  playing on (money: points; match: match-winning chances)

  When the bot doubles you:
    take [t]      accept the cube
    drop [d]      refuse it and lose the game at the present cube value (also: pass [p])
    hint [h]      the bot's take/drop advice for you

  At any prompt:
    board [b]     draw the board again (with its Position ID and Match ID)
    score [s]     the score so far
    save FILE     save the games so far (the one in progress too) as FILE.mat or FILE.sgf
    help [?]      this text
    quit [q]      stop playing

You are X, moving from your 24 point down to your 1 point (bottom of the drawing); the bot is O."""

HUMAN, BOT = 0, 1
KINDS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
#: Words of ``resign [WHAT]`` and the points they offer.
RESIGN_WORDS = {"1": 1, "single": 1, "normal": 1, "s": 1, "n": 1, "2": 2, "gammon": 2, "g": 2,
                "3": 3, "backgammon": 3, "b": 3}


#: Names of player 0 (you) and player 1 (the bot) in saved match files.
PLAYER_NAMES = ("you", "bgai")


class Quit(Exception):
    """The player typed ``quit`` (or the input ended)."""


@dataclass(frozen=True, eq=False)
class StartPosition:
    """Where the first game starts (:func:`start_from_request`).

    Attributes:
        board: ``(2, 25)`` int8 from your view (row 0 = you, the side to act).
        dice: your roll, or None (before your roll, or answering the bot's double).
        bot_doubled: the bot has doubled: you take or drop first.
        source: the position text as given (shown when the game starts).
    """

    board: np.ndarray
    dice: tuple[int, int] | None
    bot_doubled: bool
    source: str


def start_from_request(req: PositionRequest, match_length: int = 0, source: str = "") -> tuple[Match, StartPosition]:
    """The match state and first position of a session that starts from a position request.

    You are the side to act: the side on roll, or with a double pending the side doubled.  The cube, score,
    match length, Crawford game, Jacoby rule and money cube limit come from the position's own fields (Match
    ID, XGID, FIBS board); a position without them (a bare Position ID or wildbg board) starts a money game, or
    with ``match_length`` a match to that length at 0-0, with a centred cube.

    Raises:
        BgaiError: ``match_length`` differs from the position's match length; a state the match rules refuse.
    """
    cs = req.cube_state
    if req.cube_given:
        if match_length and cs.match_length != match_length:
            have = "a money game" if cs.is_money else f"a {cs.match_length}-point match"
            raise BgaiError(f"--match {match_length} conflicts with the position, which is {have}")
    elif match_length:
        cs = CubeState(match_length=match_length)
    board, state = np.array(req.board), cs
    if req.double_offered:  # you are the side doubled; the bot (the doubler) is on roll
        board, state = flip(board), cs.swapped()
    if state.is_money:
        rules = MatchRules.money(jacoby=state.jacoby, cube_limit=state.cube_limit)
    else:
        rules = MatchRules.match(state.match_length, met_name=state.met_name)
    length = state.match_length
    match = Match(
        rules=rules,
        score=state.score,
        cube_value=state.cube_value,
        cube_owner=state.owner,  # relative to you (0) = absolute: you are player 0, the bot player 1
        crawford=state.crawford,
        crawford_done=bool(length) and not state.crawford and (length - 1) in state.score,
        offered_by=BOT if req.double_offered else None,
    )
    dice = None if req.dice is None else req.dice.as_tuple()
    return match, StartPosition(board=board.astype(np.int8), dice=dice, bot_doubled=req.double_offered,
                                source=source)


class _Recorder:
    """The games of a session as match-record actions, checked as they happen (:class:`GameReplay`)."""

    def __init__(self, length: int, rules: MatchRules) -> None:
        money = rules.is_money
        self.shell = MatchRecord(players=PLAYER_NAMES, length=length, crawford=None if money else rules.crawford,
                                 jacoby=rules.jacoby if money else False)
        self.games: list[GameRecord] = []
        self.replay: GameReplay | None = None
        self.setup = None
        self.broken: str | None = None

    def start(self, number: int, score: tuple[int, int], crawford: bool, setup: np.ndarray | None) -> None:
        self.setup = None if setup is None else tuple(tuple(int(x) for x in row) for row in setup)
        try:
            self.replay = GameReplay(self.shell, number, score, crawford, setup)
        except BgaiError as exc:  # pragma: no cover - a bug: recording stops, play goes on
            self.broken, self.replay = str(exc), None

    def add(self, action: Action) -> None:
        if self.replay is None or self.broken:
            return
        try:
            self.replay.apply(action)
        except BgaiError as exc:  # pragma: no cover - a bug: recording stops, play goes on
            self.broken = str(exc)

    def _current(self) -> GameRecord | None:
        r = self.replay
        if r is None or not r.actions:
            return None
        return GameRecord(number=r.number, score=r.score, crawford=r.crawford, actions=tuple(r.actions),
                          result=r.result, setup=self.setup)

    def finish(self) -> None:
        g = self._current()
        if g is not None and not self.broken:
            self.games.append(g)
        self.replay = None

    def record(self) -> MatchRecord:
        games = list(self.games)
        g = self._current()
        if g is not None:
            games.append(g)
        s = self.shell
        return MatchRecord(players=s.players, length=s.length, games=tuple(games), crawford=s.crawford,
                           jacoby=s.jacoby)


class TerminalGame:
    """An interactive money session or match in a terminal.

    Args:
        bot: the opponent.
        match_length: 0 for a money session, else points to win.
        rng: the dice.
        ask: reads one answer given a prompt (default :func:`input`; EOF ends the session).
        say: prints one block of text (default :func:`print` to stdout, flushed).
    """

    def __init__(
        self,
        bot: Bot,
        *,
        match_length: int = 0,
        rng: np.random.Generator,
        ask: Callable[[str], str] | None = None,
        say: Callable[[str], None] | None = None,
        start: PositionRequest | None = None,
        start_text: str = "",
        save_path: str | None = None,
    ) -> None:

        self.bot = bot
        self._start: StartPosition | None = None
        if start is not None:
            self.match, self._start = start_from_request(start, match_length, start_text)
        else:
            rules = MatchRules.match(match_length) if match_length else MatchRules.money(jacoby=True)
            self.match = Match(rules=rules)
        self.rng = rng
        self._ask = ask or input
        self._say = say or (lambda s: print(s, flush=True))
        self.board = starting_board()  # from your view: row 0 = you
        self.dice: tuple[int, int] | None = None
        self.turn = HUMAN
        r = self.match.rules
        self._recorder = _Recorder(0 if r.is_money else r.length, r)
        self._unrecordable: str | None = None
        m = self.match
        if self._start is not None and (m.cube_value != 1 or m.score != (0, 0)):
            what = [f"the score {m.score[0]}-{m.score[1]}"] if m.score != (0, 0) else []
            if m.cube_value != 1:
                what.append(f"the cube on {m.cube_value}")
            self._unrecordable = (f"the position starts the session with {' and '.join(what)}, and a match record "
                                  "starts at 0-0 with a centred cube: this session cannot be saved")
        self._last_raw = ""
        self.save_path = save_path
        if save_path is not None:
            self.check_save_path(save_path)

    # ------------------------------------------------------------------------------------------------- I/O
    def say(self, text: str) -> None:
        self._say(text)

    def ask(self, prompt: str) -> str:
        try:
            return self._ask(prompt)
        except EOFError:
            raise Quit from None

    def roll(self) -> tuple[int, int]:
        d = self.rng.integers(1, 7, size=2)
        return int(max(d)), int(min(d))  # written higher die first

    # ------------------------------------------------------------------------------------------- drawing
    def _ids(self) -> str:

        mover_board = self.board if self.turn == HUMAN else flip(self.board)
        dice = self.dice or (0, 0)
        try:
            mid = encode_match_id(self.match.to_match_state(self.turn, dice=dice))
        except BgaiError:  # pragma: no cover - the match is always in a valid state here
            mid = "?"
        return f"Position ID: {encode_position_id(mover_board)}  Match ID: {mid}"

    def _cube_text(self) -> str:
        m = self.match
        if m.crawford:
            return "cube: Crawford game, no doubling"
        owner = {-1: "centred", HUMAN: "yours", BOT: "bgai's"}[m.cube_owner]
        return f"cube: {m.cube_value} ({owner})"

    def score_text(self) -> str:
        m = self.match
        if m.rules.is_money:
            return f"Score: you {m.score[0]}, bgai {m.score[1]} (money session, {m.games} game{'s' if m.games != 1 else ''} played)"
        return f"Score: you {m.score[0]}, bgai {m.score[1]} (match to {m.rules.length})"

    def show(self) -> None:
        """Draw the board from your view, with the cube, score, dice and the position's IDs."""
        text = render(self.board, me="X", opponent="O").replace("X (on roll):", "X (you):").replace("   O:", "   O (bgai):")
        lines = [text, f"You are X (moving 24 -> 1 on the bottom), bgai is O.  {self._cube_text()}.  {self.score_text()}."]
        if self.dice:
            who = "Your" if self.turn == HUMAN else "bgai's"
            lines.append(f"{who} roll: {self.dice[0]}-{self.dice[1]}.")
        lines.append(self._ids())
        self.say("\n".join(lines))

    # ------------------------------------------------------------------------------------------ the game
    def run(self) -> int:
        """Play until the match ends, or until you stop (money: after each game you are asked).  Returns 0."""
        m = self.match
        kind = "a money session (Jacoby rule)" if m.rules.is_money else f"a {m.rules.length}-point match (Crawford rule)"
        self.say(
            f"bgai play: you (X) against {self.bot.spec} (O), {kind}, with the cube.\n"
            "Type a play such as 13/8 13/11, or 'hint', 'double', 'board', 'score', 'help', 'quit'."
        )
        try:
            while True:
                start, self._start = self._start, None
                self.play_game(start)
                self.say(self.score_text())
                if self.match.is_over:
                    won = self.match.winner == HUMAN
                    self.say("You win the match!" if won else "bgai wins the match.")
                    return 0
                if self.match.rules.is_money and not self._yes("Another game? (y/n) "):
                    return 0
        except Quit:
            self.say("Bye.  " + self.score_text())
            return 0

    def _yes(self, prompt: str) -> bool:
        while True:
            self._last_raw = self.ask(prompt).strip()
            a = self._last_raw.lower()
            if a in ("y", "yes", ""):
                return True
            if a in ("n", "no", "q", "quit"):
                return False
            if a.split()[:1] == ["save"]:
                self._save_command(self._last_raw)
                continue
            self.say("Please answer y or n.")

    def play_game(self, start: StartPosition | None = None) -> None:
        """One game, from the opening roll (or ``start``) to its end (a finished game or a dropped double)."""
        m = self.match
        if start is not None:
            self._recorder.start(m.games + 1, m.score, m.crawford, start.board)
            self.board = np.array(start.board)
            self.dice = None
            self.turn = HUMAN
            where = f" {start.source}" if start.source else ""
            self.say(f"\nGame {m.games + 1}, from the position{where}: you are X, "
                     + ("answering bgai's double." if start.bot_doubled else "on roll."))
            if start.bot_doubled:
                self._recorder.add(Double(BOT))
                self.turn = BOT
                if self._answer_bot_double() is not None:
                    return
                dice = None
            else:
                dice = start.dice
            self._play_turns(dice)
            return
        self._recorder.start(m.games + 1, m.score, m.crawford, None)
        self.board = starting_board()
        self.dice = None
        while True:
            a, b = self.roll()
            if a != b:
                break
            self.say(f"Opening roll: you {a}, bgai {b}: equal, rolling again.")
        self.turn = HUMAN if a > b else BOT
        self.say(
            f"\nGame {self.match.games + 1}.  Opening roll: you {a}, bgai {b}: "
            + ("you play first." if self.turn == HUMAN else "bgai plays first.")
        )
        self._play_turns((a, b) if a > b else (b, a))

    def _play_turns(self, dice: tuple[int, int] | None) -> None:
        """Turns until the game ends, from the present position and ``self.turn`` (with ``dice`` rolled)."""
        while True:
            if self.turn == HUMAN:
                outcome = self._human_turn(dice)
            else:
                outcome = self._bot_turn(dice)
            dice = None
            if outcome is not None:
                return
            self.turn = BOT if self.turn == HUMAN else HUMAN

    def _end(self, winner: int, kind: int | None) -> str:
        """End the game (``kind`` None: a dropped double); report and return the message."""
        if kind is None:
            self.match, out = self.match.pass_double()
            text = f"{'You' if winner == HUMAN else 'bgai'} win{'' if winner == HUMAN else 's'} {out.points} point{'s' if out.points != 1 else ''} (double dropped)."
        else:
            self.match, out = self.match.end_game(winner, kind)
            text = (
                f"{'You win' if winner == HUMAN else 'bgai wins'} {KINDS[kind]}: "
                f"{out.points} point{'s' if out.points != 1 else ''}."
            )
        self.dice = None
        self._recorder.finish()
        self.say(text)
        return text

    # ------------------------------------------------------------------------------------------- your turn
    def _human_turn(self, dice: tuple[int, int] | None) -> str | None:
        if dice is None and self.match.can_double(HUMAN):
            self.dice = None
            self.show()
            res = self._human_before_roll()
            if res is not None:
                return res
        if dice is None:  # rolled, or rolled for you when you cannot double (as GNU Backgammon does)
            dice = self.roll()
        self.dice = dice
        plays = self.bot.legal_plays(self.board, dice)
        self.show()
        if not plays:
            self.say(f"You rolled {dice[0]}-{dice[1]}: no legal play.")
            self._recorder.add(Move(HUMAN, dice))
            return None
        play = self._ask_play(dice, plays)
        if isinstance(play, str):
            return play
        self.board = np.array(play.afterstate)
        self.dice = None
        self._recorder.add(Move(HUMAN, dice, play.steps))
        self.say(f"You play {play.notation}.")
        if is_game_over(self.board)[0]:
            _, kind = result_kind(self.board)
            self.show()
            return self._end(HUMAN, int(kind[0]))
        return None

    def _human_before_roll(self) -> str | None:
        """Commands before your roll (roll, double, resign, hint, ...); the end-of-game message or None to roll."""
        while True:
            can = self.match.can_double(HUMAN)
            prompt = "roll or double> " if can else "roll> "
            raw = self.ask(prompt).strip()
            cmd = raw.lower()
            if cmd in ("", "r", "ro", "rol", "roll"):
                return None
            if "double".startswith(cmd) and len(cmd) >= 1 and cmd[0] == "d":
                if not can:
                    self.say(f"You cannot double now ({self._why_no_double(HUMAN)}).")
                    continue
                return self._human_doubles()
            if self._common(cmd, raw):
                continue
            if cmd.startswith("resign"):
                res = self._human_resigns(cmd)
                if res is not None:
                    return res
                continue
            if cmd.startswith("h"):
                self._cube_hint(HUMAN)
                continue
            self.say(f"Unknown command {cmd!r}: type 'roll', 'double', 'hint', 'board', 'score' or 'quit'.")

    def _ask_play(self, dice: tuple[int, int], plays: Sequence[Play]) -> Play | str:
        """Ask for your play until a legal one is given; the play, or the end-of-game message (a resignation)."""
        while True:
            text = self.ask(f"your play ({dice[0]}-{dice[1]})> ").strip()
            low = text.lower()
            if not text:
                continue
            if self._play_prompt_command(low, text, dice, plays):
                continue
            if low.startswith("resign"):
                res = self._human_resigns(low)
                if res is not None:
                    return res
                continue
            play = self._parse_human_play(text, dice)
            if play is not None:
                return play

    def _play_prompt_command(self, low: str, text: str, dice: tuple[int, int], plays: Sequence[Play]) -> bool:
        """Handle hint / moves / the common commands at the play prompt; True when ``low`` was one."""
        if low in ("hint", "h"):
            self._play_hint(dice)
            return True
        if low in ("moves", "m", "plays"):
            self.say("Legal plays: " + ", ".join(sorted(p.notation for p in plays)))
            return True
        return self._common(low, text)

    def _parse_human_play(self, text: str, dice: tuple[int, int]) -> Play | None:
        """Your play from its notation, or None after saying why it cannot be read or is not legal."""
        try:
            return parse_play(text, self.board, dice)
        except AmbiguousMoveError as exc:
            self.say(f"Ambiguous play: {exc}.  Write the route, e.g. with intermediate points (24/18/13).")
        except IllegalMoveError as exc:
            self.say(f"Illegal play: {exc}.  Type 'moves' to list the legal plays.")
        except NotationError as exc:
            self.say(
                f"Cannot read {text!r}: {exc}.  Write plays like 13/8 13/11, bar/22*, 6/off, 8/2(2); "
                "or 'hint', 'moves', 'board', 'quit'."
            )
        return None

    def _common(self, cmd: str, raw: str | None = None) -> bool:
        if cmd in ("quit", "q", "exit"):
            raise Quit
        if cmd.split()[:1] == ["save"]:
            self._save_command(raw if raw is not None else cmd)
            return True
        if cmd in ("board", "b"):
            self.show()
            return True
        if cmd in ("score", "s"):
            self.say(self.score_text())
            return True
        if cmd in ("help", "?"):
            self.say(HELP_TEXT)
            return True
        return False

    def _why_no_double(self, player: int) -> str:
        m = self.match
        if m.crawford:
            return "no doubling in the Crawford game"
        if m.cube_owner not in (-1, player):
            return "bgai owns the cube" if player == HUMAN else "you own the cube"
        return "the cube is not available"

    def _human_doubles(self) -> str | None:
        m = self.match
        cs = m.cube_state(BOT)
        self.match = m.offer_double(HUMAN)
        self._recorder.add(Double(HUMAN))
        decision = self.bot.cube_decision(flip(self.board), cs, doubled=True)
        if decision.take:
            self.match = self.match.take()
            self._recorder.add(Take(BOT))
            self.say(f"You double.  bgai takes: the cube is on {self.match.cube_value}, owned by bgai.")
            return None
        self._recorder.add(Drop(BOT))
        self.say("You double.  bgai drops.")
        return self._end(HUMAN, None)

    def _human_resigns(self, cmd: str) -> str | None:
        """You offer to resign (``resign [1|2|3|single|gammon|backgammon]``) at your turn; the bot decides.
        Returns the end-of-game message when it accepts, else None (the game goes on)."""
        words = cmd.split()
        what = words[1] if len(words) > 1 else "1"
        points = RESIGN_WORDS.get(what)
        if words[0] != "resign" or len(words) > 2 or points is None:
            self.say("Write 'resign' (a single game), 'resign 2' (a gammon) or 'resign 3' (a backgammon).")
            return None
        cs = self.match.cube_state(BOT)
        dec = self.bot.resignation(flip(self.board), cs, points, decider_on_roll=False)
        if math.isnan(dec.equity_if_played):  # an agent without probabilities cannot value playing on
            why = ("bgai's agent gives no probabilities, so it accepts only what nothing can beat (a "
                   "backgammon, or the match)")
        elif cs.is_money:
            why = (f"accepting gives bgai {dec.equity_if_accepted:g} point(s); playing on is worth "
                   f"{dec.equity_if_played:+.3f}")
        else:
            why = (f"bgai's match-winning chance: {100 * dec.equity_if_accepted:.1f}% if it accepts, "
                   f"{100 * dec.equity_if_played:.1f}% playing on")
        self._recorder.add(Resign(HUMAN, points))
        if not dec.accept:
            self._recorder.add(RejectResign(BOT))
            self.say(f"You offer to resign {KINDS[points]}.  bgai rejects ({why}): play on.")
            return None
        self._recorder.add(AcceptResign(BOT))
        self.say(f"You offer to resign {KINDS[points]}.  bgai accepts ({why}).")
        return self._end(BOT, points)

    # ------------------------------------------------------------------------------------------------ saving
    def record(self) -> MatchRecord:
        """The games so far, the one in progress included (unfinished), as a :class:`MatchRecord` (player 0 you,
        player 1 the bot).

        Raises:
            BgaiError: the session cannot be recorded (see the module docstring).
        """
        if self._unrecordable:
            raise BgaiError(self._unrecordable)
        if self._recorder.broken:  # pragma: no cover - a bug
            raise BgaiError(f"the game record is broken: {self._recorder.broken}")
        return self._recorder.record()

    def check_save_path(self, path: str) -> str:
        """The match file format of ``path`` (``'mat'`` or ``'sgf'``), checked against this session.

        Raises:
            BgaiError: an unknown extension, a ``.mat`` file for a session from a position, a session that
                cannot be recorded.
        """
        fmt = match_format(path)
        if self._unrecordable:
            raise BgaiError(self._unrecordable)
        if fmt == "mat" and (self._start is not None or any(g.setup for g in self._recorder.games)
                             or self._recorder.setup is not None):
            raise BgaiError(f"{path}: a .mat file cannot hold a game that starts from a set-up position "
                            "(--position): save as .sgf")
        return fmt

    def save(self, path: str) -> int:
        """Write the games so far to ``path`` (``.mat``/``.txt``/``.gam`` or ``.sgf``) atomically; returns the
        number of games written.

        Raises:
            BgaiError: see :meth:`check_save_path` and :func:`bgai.formats.matchfile.write_match` (a file that
                cannot be written, named).
        """
        self.check_save_path(path)
        rec = self.record()
        write_match(rec, path)
        return len(rec.games)

    def _save_command(self, raw: str) -> None:
        parts = raw.split(None, 1)
        path = parts[1].strip() if len(parts) > 1 else self.save_path
        if not path:
            self.say("Write 'save FILE.mat' or 'save FILE.sgf'.")
            return
        try:
            if not self.record().games:
                self.say("Nothing to save yet: no move has been played.")
                return
            n = self.save(path)
        except BgaiError as exc:
            self.say(f"Cannot save: {exc}")
            return
        self.say(f"Saved {n} game{'s' if n != 1 else ''} to {path}.")

    def save_at_end(self) -> int:
        """Write the session to ``save_path`` (if given) when it ends; returns 0, or 1 when it cannot be written
        (the reason printed to stderr)."""
        if self.save_path is None:
            return 0
        try:
            rec = self.record()
            if not rec.games:
                print(f"No game played: nothing saved to {self.save_path}.", file=sys.stderr)
                return 0
            n = self.save(self.save_path)
        except BgaiError as exc:
            print(f"bgai: error: cannot save the session: {exc}", file=sys.stderr)
            return 1
        print(f"Saved {n} game{'s' if n != 1 else ''} to {self.save_path}.", file=sys.stderr)
        return 0

    def _cube_hint(self, player: int) -> None:
        cs = self.match.cube_state(player)
        board = self.board if player == HUMAN else flip(self.board)
        d = self.bot.cube_decision(board, cs)
        if d.no_double is None:
            self.say(f"{self.bot.spec} has no evaluation of cube decisions (its policy: {d.action.lower()}).")
            return
        if not d.available:
            self.say(
                f"You cannot double: {d.reason}.  Cubeful equity (no double) {d.no_double:+.3f}; "
                f"cubeless {d.cubeless_equity:+.3f}."
            )
            return
        self.say(
            f"bgai's advice: {d.action}.  Cubeful equity: no double {d.no_double:+.3f}, double/take "
            f"{d.double_take:+.3f}, double/pass {d.double_pass:+.3f}; cubeless {d.cubeless_equity:+.3f}."
        )

    def _play_hint(self, dice: tuple[int, int]) -> None:
        ranked = self.bot.rank_plays(self.board, dice, self.rng, self.match.cube_state(HUMAN))
        rows = []
        for i, rp in enumerate(ranked[:3]):
            if rp.equity is not None:
                p = rp.probabilities
                rows.append(
                    f"  {i + 1}. {rp.play.notation:24s} equity {rp.equity:+.3f}  (win {100 * p[0]:.1f}%, "
                    f"gammon {100 * p[1]:.1f}%, lose gammon {100 * p[3]:.1f}%)"
                )
            elif rp.score_kind == "score":
                rows.append(f"  {i + 1}. {rp.play.notation:24s} score {rp.score:+.3f}")
            else:
                rows.append(f"  {i + 1}. {rp.play.notation}")
        self.say(f"bgai ({self.bot.spec}) would play:\n" + "\n".join(rows))

    # ---------------------------------------------------------------------------------------------- bot turn
    def _bot_turn(self, dice: tuple[int, int] | None) -> str | None:
        bot_board = flip(self.board)
        if dice is None:
            m = self.match
            if m.can_double(BOT):
                if self.bot.cube_decision(bot_board, m.cube_state(BOT)).double:
                    res = self._bot_doubles()
                    if res is not None:
                        return res
            dice = self.roll()
        self.dice = dice
        play = self.bot.choose_play(bot_board, dice, self.rng)
        if play is None:
            self.say(f"bgai rolls {dice[0]}-{dice[1]}: no legal play.")
            self._recorder.add(Move(BOT, dice))
            self.dice = None
            return None
        self._recorder.add(Move(BOT, dice, play.steps))
        self.board = flip(np.array(play.afterstate))
        self.dice = None
        self.say(f"bgai rolls {dice[0]}-{dice[1]} and plays {play.notation}.")
        after = np.array(play.afterstate)
        if is_game_over(after)[0]:
            _, kind = result_kind(after)
            self.show()
            return self._end(BOT, int(kind[0]))
        return None

    def _bot_doubles(self) -> str | None:
        self.match = self.match.offer_double(BOT)
        self._recorder.add(Double(BOT))
        return self._answer_bot_double()

    def _answer_bot_double(self) -> str | None:
        """You take or drop the bot's pending double; the end-of-game message after a drop, else None."""
        self.show()
        self.say(f"bgai doubles to {2 * self.match.cube_value}.")
        while True:
            raw = self.ask("take or drop> ").strip()
            cmd = raw.lower()
            if cmd in ("t", "ta", "tak", "take", "a", "accept"):
                self.match = self.match.take()
                self._recorder.add(Take(HUMAN))
                self.say(f"You take: the cube is on {self.match.cube_value}, yours.")
                return None
            if cmd in ("d", "dr", "dro", "drop", "p", "pass", "reject"):
                self._recorder.add(Drop(HUMAN))
                return self._end(BOT, None)
            if cmd in ("h", "hint"):
                self._take_hint()
                continue
            if self._common(cmd, raw):
                continue
            self.say("Answer 'take' or 'drop' (or 'hint', 'board', 'quit').")

    def _take_hint(self) -> None:
        cs = self.match.cube_state(HUMAN)  # the cube before the double, from your (the taker's) view
        d = self.bot.cube_decision(self.board, cs, doubled=True)
        if d.no_double is None:
            self.say(f"{self.bot.spec} has no evaluation of cube decisions.")
            return
        self.say(f"bgai's advice: {'take' if d.take else 'drop'} ({d.action}).")


def play_in_terminal(
    spec: str, *, match_length: int = 0, seed: int | None = None, position: str | None = None,
    save: str | None = None,
) -> int:
    """Run :class:`TerminalGame` on stdin/stdout with the agent ``spec``; returns the exit status.

    Args:
        spec: the bot's agent spec.
        match_length: 0 for money play, else a match to that length.
        seed: the dice seed (None: random).
        position: start the first game from this position (anything
            :func:`bgai.formats.request.read_position_request` reads).
        save: write the session to this match file when it ends (also after Ctrl-C or the end of input).

    Raises:
        BgaiError: a bad position, ``--match`` against the position, a ``--save`` file the session cannot be
            written to (checked before the game starts), a bad agent spec.
    """
    req = read_position_request(position) if position else None
    if save is not None:
        match_format(save)  # a bad extension fails before the bot is loaded
    rng = np.random.default_rng(seed)
    bot = Bot.from_spec(spec)
    game = TerminalGame(bot, match_length=match_length, rng=rng, say=lambda s: print(s, flush=True), start=req,
                        start_text=position or "", save_path=save)
    status = 0
    try:
        status = game.run()
    except KeyboardInterrupt:
        print("\nBye.", file=sys.stderr)
        status = 130
    finally:
        saved = game.save_at_end()
    return status or saved
