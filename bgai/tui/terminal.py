"""Play against the bot in a terminal: board drawing, plays typed in standard notation, hints, cube, score.

:class:`TerminalGame` runs a money session (games until you stop; Jacoby rule) or a match to ``N`` points
(Crawford rule), with the cube, between you (player 0, ``X``, moving from 24 down to 1 on the bottom of the
drawing) and a :class:`~bgai.serve.bot.Bot` (player 1, ``O``).  It is a front end only: the game is played by
:class:`bgai.game.table.Table` (the turns, dice, cube, resignations, scoring, Crawford rule and the game record
of the game loop :func:`bgai.game.play.play`), with you as a :class:`~bgai.game.table.Player` that asks at the
prompt and the bot as an :class:`~bgai.game.table.AgentPlayer` (the game loop's cube policy; resignations judged
by :func:`bgai.analysis.resign.resignation_decision`).  This module reads commands and shows the board, the
table's events and the bot's hints (:mod:`bgai.analysis.api`: :func:`~bgai.analysis.api.rank_plays` with the
match's cube state, :func:`~bgai.analysis.api.decide_cube`).

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
All dice come from one ``np.random.Generator`` seeded by the caller (drawn as the game loop draws a unit's dice).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Callable

import numpy as np

from bgai.core.board import flip, render
from bgai.core.cube_state import CubeState
from bgai.core.movegen import Play, parse_play
from bgai.core.notation import NO_LEGAL_PLAY
from bgai.core.position_id import encode_position_id
from bgai.errors import AmbiguousMoveError, BgaiError, IllegalMoveError, NotationError
from bgai.formats.match_id import encode_match_id
from bgai.formats.matchfile import match_format, write_match
from bgai.formats.matchrecord import MatchRecord
from bgai.formats.request import PositionRequest, read_position_request
from bgai.game.match import Match, MatchRules
from bgai.game.table import DOUBLE, ROLL, AgentPlayer, Event, Player, ResignOffer, Table
from bgai.serve.bot import Bot

__all__ = ["TerminalGame", "Quit", "PLAYER_NAMES", "play_in_terminal"]

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


def _start_from_request(req: PositionRequest, match_length: int) -> tuple[Match, tuple]:
    """The match and the first game's start ``(setup from your view, side to act, dice)`` of a session from a
    position request: you are the side to act (the side on roll, or with a double pending the side doubled).

    The cube, score, match length, Crawford game, Jacoby rule and money cube limit come from the position's own
    fields; a position without them starts a money game, or with ``match_length`` a match to that length at 0-0.

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
    side = BOT if req.double_offered else HUMAN  # the side on roll of the request: the doubler, when doubled
    match = Match.from_cube_state(cs, side, double_offered=req.double_offered)
    board = np.array(req.board, dtype=np.int8)
    dice = None if req.dice is None or req.double_offered else req.dice.as_tuple()
    return match, (board if side == HUMAN else flip(board), side, dice)


class _You(Player):
    """You at the table: every decision is asked at the prompt of the :class:`TerminalGame`."""

    def __init__(self, game: "TerminalGame") -> None:
        self.game = game

    def before_roll(self, table, me):
        return self.game.ask_before_roll()

    def answer_double(self, table, me):
        return self.game.ask_take()

    def choose_play(self, table, me, plays):
        return self.game.ask_play(table.dice, plays)


class _BotPlayer(AgentPlayer):
    """The bot at the table: the game loop's agent player; resignations judged by
    :func:`bgai.analysis.resign.resignation_decision` (:meth:`Bot.resignation`), the last decision kept to be shown."""

    def __init__(self, bot: Bot, rng: np.random.Generator) -> None:
        super().__init__(bot.agent, rng)
        self.bot = bot
        self.last_resignation = None

    def answer_resignation(self, table, me, points):
        dec = self.bot.resignation(table.view(me), table.match.cube_state(me), points,
                                   decider_on_roll=table.turn == me)
        self.last_resignation = dec
        return dec.accept


class TerminalGame:
    """An interactive money session or match in a terminal.

    Args:
        bot: the opponent.
        match_length: 0 for a money session, else points to win.
        rng: the dice (and the bot's random choices).
        ask: reads one answer given a prompt (default :func:`input`; EOF ends the session).
        say: prints one block of text (default :func:`print` to stdout, flushed).
        start: the first game starts from this position (see the module docstring).
        start_text: the position as typed (shown when the game starts).
        save_path: the match file written by :meth:`save_at_end`.

    Attributes:
        table: the :class:`~bgai.game.table.Table` that plays the games; :attr:`match`, :attr:`board` (from your
            view), :attr:`turn` and :attr:`dice` are its own.

    Raises:
        BgaiError: see :func:`play_in_terminal`.
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
        self._start: tuple | None = None
        if start is not None:
            match, self._start = _start_from_request(start, match_length)
        else:
            match = Match(rules=MatchRules.match(match_length) if match_length else MatchRules.money(jacoby=True))
        self._start_text = start_text
        self.rng = rng
        self._ask = ask or input
        self._say = say or (lambda s: print(s, flush=True))
        self._bot = _BotPlayer(bot, rng)
        self.table = Table((_You(self), self._bot), rng, match, on_event=self._show_event, names=PLAYER_NAMES)
        self.save_path = save_path
        if save_path is not None:
            self.check_save_path(save_path)

    # -------------------------------------------------------------------------------------- the table's state
    @property
    def match(self) -> Match:
        """The cube and score (:attr:`Table.match`)."""
        return self.table.match

    @match.setter
    def match(self, value: Match) -> None:
        self.table.match = value

    @property
    def board(self) -> np.ndarray:
        """``(2, 25)`` int8 position from your view (row 0 = you)."""
        return self.table.board

    @board.setter
    def board(self, value: np.ndarray) -> None:
        self.table.board = np.array(value, dtype=np.int8)

    @property
    def turn(self) -> int:
        """The side to act: :data:`HUMAN` (0) or :data:`BOT` (1)."""
        return self.table.turn

    @turn.setter
    def turn(self, value: int) -> None:
        self.table.turn = value

    @property
    def dice(self) -> tuple[int, int] | None:
        """The roll of the side on turn, or None before it is rolled."""
        return self.table.dice

    # ------------------------------------------------------------------------------------------------- I/O
    def say(self, text: str) -> None:
        self._say(text)

    def ask(self, prompt: str) -> str:
        try:
            return self._ask(prompt)
        except EOFError:
            raise Quit from None

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

    def _show_event(self, e: Event) -> None:
        """Say what happened at the table."""
        you = e.player == HUMAN
        if e.kind == "start":
            self._show_start(e)
        elif e.kind == "roll" and you:
            self.show()
        elif e.kind == "move":
            self._show_move(e)
        elif e.kind == "double" and not you:
            self.show()
            self.say(f"bgai doubles to {2 * self.match.cube_value}.")
        elif e.kind == "take":
            self.say(f"You take: the cube is on {self.match.cube_value}, yours." if you else
                     f"You double.  bgai takes: the cube is on {self.match.cube_value}, owned by bgai.")
        elif e.kind == "pass" and not you:
            self.say("You double.  bgai drops.")
        elif e.kind in ("accept", "reject") and not you:
            self._show_resignation_answer(e)
        elif e.kind == "end":
            self._show_end(e)

    def _show_start(self, e: Event) -> None:
        n = self.match.games + 1
        if e.opening is None:
            where = f" {self._start_text}" if self._start_text else ""
            doubled = self.match.offered_by is not None
            self.say(f"\nGame {n}, from the position{where}: you are X, "
                     + ("answering bgai's double." if doubled else "on roll."))
            return
        a, b = e.opening
        self.say(f"\nGame {n}.  Opening roll: you {a}, bgai {b}: "
                 + ("you play first." if e.player == HUMAN else "bgai plays first."))

    def _show_move(self, e: Event) -> None:
        d = e.dice
        if e.player == HUMAN:
            self.say(f"You rolled {d[0]}-{d[1]}: {NO_LEGAL_PLAY}." if e.play is None else f"You play {e.play.notation}.")
        elif e.play is None:
            self.say(f"bgai rolls {d[0]}-{d[1]}: {NO_LEGAL_PLAY}.")
        else:
            self.say(f"bgai rolls {d[0]}-{d[1]} and plays {e.play.notation}.")

    def _show_resignation_answer(self, e: Event) -> None:
        dec = self._bot.last_resignation
        if math.isnan(dec.equity_if_played):  # an agent without probabilities cannot value playing on
            why = ("bgai's agent gives no probabilities, so it accepts only what nothing can beat (a "
                   "backgammon, or the match)")
        elif self.match.rules.is_money:
            why = (f"accepting gives bgai {dec.equity_if_accepted:g} point(s); playing on is worth "
                   f"{dec.equity_if_played:+.3f}")
        else:
            why = (f"bgai's match-winning chance: {100 * dec.equity_if_accepted:.1f}% if it accepts, "
                   f"{100 * dec.equity_if_played:.1f}% playing on")
        if e.kind == "reject":
            self.say(f"You offer to resign {KINDS[e.points]}.  bgai rejects ({why}): play on.")
        else:
            self.say(f"You offer to resign {KINDS[e.points]}.  bgai accepts ({why}).")

    def _show_end(self, e: Event) -> None:
        out = e.outcome
        pts = f"{out.points} point{'s' if out.points != 1 else ''}"
        if e.how == "passed":
            self.say(f"{'You' if out.winner == HUMAN else 'bgai'} win{'' if out.winner == HUMAN else 's'} {pts} "
                     "(double dropped).")
            return
        if e.how == "played":
            self.show()
        self.say(f"{'You win' if out.winner == HUMAN else 'bgai wins'} {KINDS[out.kind]}: {pts}.")

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
            raw = self.ask(prompt).strip()
            a = raw.lower()
            if a in ("y", "yes", ""):
                return True
            if a in ("n", "no", "q", "quit"):
                return False
            if a.split()[:1] == ["save"]:
                self._save_command(raw)
                continue
            self.say("Please answer y or n.")

    def play_game(self, start: tuple | None = None) -> None:
        """One game, from the opening roll (or ``start``: ``(setup from your view, side to act, dice)``) to its
        end (a finished game, a dropped double or an accepted resignation)."""
        if start is None:
            self.table.start_game()
        else:
            setup, side, dice = start
            self.table.start_game(setup, turn=side, dice=dice)
        self.table.play_game()

    def _human_turn(self, dice: tuple[int, int] | None):
        """Your turn from the present position (``dice`` already rolled, or None: cube decision first); the
        game's outcome when it ended, else None."""
        self.table.turn = HUMAN
        self.table.dice = dice
        return self.table.play_turn()

    # ------------------------------------------------------------------------------------------- your turn
    def ask_before_roll(self) -> str | ResignOffer:
        """Commands before your roll, when you may double (roll, double, resign, hint, ...): :data:`ROLL`,
        :data:`DOUBLE` or your offer to resign."""
        self.show()
        while True:
            raw = self.ask("roll or double> ").strip()
            cmd = raw.lower()
            if cmd in ("", "r", "ro", "rol", "roll"):
                return ROLL
            if "double".startswith(cmd) and cmd[0] == "d":
                return DOUBLE
            if self._common(cmd, raw):
                continue
            if cmd.startswith("resign"):
                offer = self._resign_offer(cmd)
                if offer is not None:
                    return offer
                continue
            if cmd.startswith("h"):
                self._cube_hint()
                continue
            self.say(f"Unknown command {cmd!r}: type 'roll', 'double', 'hint', 'board', 'score' or 'quit'.")

    def ask_play(self, dice: tuple[int, int], plays: Sequence[Play]) -> Play | ResignOffer:
        """Ask for your play until a legal one is given; the play, or your offer to resign."""
        while True:
            text = self.ask(f"your play ({dice[0]}-{dice[1]})> ").strip()
            low = text.lower()
            if not text:
                continue
            if self._play_prompt_command(low, text, dice, plays):
                continue
            if low.startswith("resign"):
                offer = self._resign_offer(low)
                if offer is not None:
                    return offer
                continue
            play = self._parse_human_play(text, dice)
            if play is not None:
                return play

    def ask_take(self) -> bool:
        """You take (True) or drop (False) the bot's pending double."""
        while True:
            raw = self.ask("take or drop> ").strip()
            cmd = raw.lower()
            if cmd in ("t", "ta", "tak", "take", "a", "accept"):
                return True
            if cmd in ("d", "dr", "dro", "drop", "p", "pass", "reject"):
                return False
            if cmd in ("h", "hint"):
                self._take_hint()
                continue
            if self._common(cmd, raw):
                continue
            self.say("Answer 'take' or 'drop' (or 'hint', 'board', 'quit').")

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

    def _resign_offer(self, cmd: str) -> ResignOffer | None:
        """Your offer from ``resign [1|2|3|single|gammon|backgammon]``, or None after saying how to write it."""
        words = cmd.split()
        what = words[1] if len(words) > 1 else "1"
        points = RESIGN_WORDS.get(what)
        if words[0] != "resign" or len(words) > 2 or points is None:
            self.say("Write 'resign' (a single game), 'resign 2' (a gammon) or 'resign 3' (a backgammon).")
            return None
        return ResignOffer(points)

    # ------------------------------------------------------------------------------------------------ saving
    def record(self) -> MatchRecord:
        """The games so far, the one in progress included (unfinished), as a :class:`MatchRecord` (player 0 you,
        player 1 the bot): :meth:`bgai.game.table.Table.record`.

        Raises:
            BgaiError: the session cannot be recorded (see the module docstring).
        """
        return self.table.record()

    def check_save_path(self, path: str) -> str:
        """The match file format of ``path`` (``'mat'`` or ``'sgf'``), checked against this session.

        Raises:
            BgaiError: an unknown extension, a ``.mat`` file for a session from a position, a session that
                cannot be recorded.
        """
        fmt = match_format(path)
        self.table.check_recordable()
        if fmt == "mat" and (self._start is not None or self.table.has_setup):
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

    # ------------------------------------------------------------------------------------------------- hints
    def _cube_hint(self) -> None:
        d = self.bot.cube_decision(self.board, self.match.cube_state(HUMAN))
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
