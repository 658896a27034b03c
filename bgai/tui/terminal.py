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
* at any prompt: ``board``, ``score``, ``help``, ``quit``.

An illegal, ambiguous or unreadable play gets a message saying why and the prompt again.  Every position is
shown with its GNU Backgammon Position ID (and Match ID), so it can be pasted into other programs.
All dice come from one ``np.random.Generator`` seeded by the caller.
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import numpy as np

from bgai.core.board import flip, is_game_over, render, result_kind, starting_board
from bgai.core.movegen import parse_play
from bgai.core.position_id import encode_position_id
from bgai.errors import AmbiguousMoveError, BgaiError, IllegalMoveError, NotationError
from bgai.formats.match_id import encode_match_id
from bgai.game.match import Match, MatchRules
from bgai.serve.bot import Bot

__all__ = ["TerminalGame", "Quit"]

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
    help [?]      this text
    quit [q]      stop playing

You are X, moving from your 24 point down to your 1 point (bottom of the drawing); the bot is O."""

HUMAN, BOT = 0, 1
KINDS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
#: Words of ``resign [WHAT]`` and the points they offer.
RESIGN_WORDS = {"1": 1, "single": 1, "normal": 1, "s": 1, "n": 1, "2": 2, "gammon": 2, "g": 2,
                "3": 3, "backgammon": 3, "b": 3}


class Quit(Exception):
    """The player typed ``quit`` (or the input ended)."""


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
    ) -> None:

        self.bot = bot
        rules = MatchRules.match(match_length) if match_length else MatchRules.money(jacoby=True)
        self.match = Match(rules=rules)
        self.rng = rng
        self._ask = ask or input
        self._say = say or (lambda s: print(s, flush=True))
        self.board = starting_board()  # from your view: row 0 = you
        self.dice: tuple[int, int] | None = None
        self.turn = HUMAN

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
                self.play_game()
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
            a = self.ask(prompt).strip().lower()
            if a in ("y", "yes", ""):
                return True
            if a in ("n", "no", "q", "quit"):
                return False
            self.say("Please answer y or n.")

    def play_game(self) -> None:
        """One game, from the opening roll to its end (a finished game or a dropped double)."""
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
        dice: tuple[int, int] | None = (a, b) if a > b else (b, a)
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
        self.say(text)
        return text

    # ------------------------------------------------------------------------------------------- your turn
    def _human_turn(self, dice: tuple[int, int] | None) -> str | None:
        if dice is None and self.match.can_double(HUMAN):
            self.dice = None
            self.show()
            while True:
                can = self.match.can_double(HUMAN)
                prompt = "roll or double> " if can else "roll> "
                cmd = self.ask(prompt).strip().lower()
                if cmd in ("", "r", "ro", "rol", "roll"):
                    break
                if "double".startswith(cmd) and len(cmd) >= 1 and cmd[0] == "d":
                    if not can:
                        self.say(f"You cannot double now ({self._why_no_double(HUMAN)}).")
                        continue
                    res = self._human_doubles()
                    if res is not None:
                        return res
                    break
                if self._common(cmd):
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
        if dice is None:  # rolled, or rolled for you when you cannot double (as GNU Backgammon does)
            dice = self.roll()
        self.dice = dice
        plays = self.bot.legal_plays(self.board, dice)
        self.show()
        if not plays:
            self.say(f"You rolled {dice[0]}-{dice[1]}: no legal play.")
            return None

        while True:
            text = self.ask(f"your play ({dice[0]}-{dice[1]})> ").strip()
            low = text.lower()
            if not text:
                continue
            if low in ("hint", "h"):
                self._play_hint(dice)
                continue
            if low in ("moves", "m", "plays"):
                self.say("Legal plays: " + ", ".join(sorted(p.notation for p in plays)))
                continue
            if self._common(low):
                continue
            if low.startswith("resign"):
                res = self._human_resigns(low)
                if res is not None:
                    return res
                continue
            try:
                play = parse_play(text, self.board, dice)
            except AmbiguousMoveError as exc:
                self.say(f"Ambiguous play: {exc}.  Write the route, e.g. with intermediate points (24/18/13).")
                continue
            except IllegalMoveError as exc:
                self.say(f"Illegal play: {exc}.  Type 'moves' to list the legal plays.")
                continue
            except NotationError as exc:
                self.say(
                    f"Cannot read {text!r}: {exc}.  Write plays like 13/8 13/11, bar/22*, 6/off, 8/2(2); "
                    "or 'hint', 'moves', 'board', 'quit'."
                )
                continue
            break
        self.board = np.array(play.afterstate)
        self.dice = None
        self.say(f"You play {play.notation}.")
        if is_game_over(self.board)[0]:
            _, kind = result_kind(self.board)
            self.show()
            return self._end(HUMAN, int(kind[0]))
        return None

    def _common(self, cmd: str) -> bool:
        if cmd in ("quit", "q", "exit"):
            raise Quit
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
        decision = self.bot.cube_decision(flip(self.board), cs, doubled=True)
        if decision.take:
            self.match = self.match.take()
            self.say(f"You double.  bgai takes: the cube is on {self.match.cube_value}, owned by bgai.")
            return None
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
        if cs.is_money:
            played = "?" if math.isnan(dec.equity_if_played) else f"{dec.equity_if_played:+.3f}"
            why = f"accepting gives bgai {dec.equity_if_accepted:g} point(s); playing on is worth {played}"
        else:
            played = "?" if math.isnan(dec.equity_if_played) else f"{100 * dec.equity_if_played:.1f}%"
            why = (f"bgai's match-winning chance: {100 * dec.equity_if_accepted:.1f}% if it accepts, {played} "
                   "playing on")
        if not dec.accept:
            self.say(f"You offer to resign {KINDS[points]}.  bgai rejects ({why}): play on.")
            return None
        self.say(f"You offer to resign {KINDS[points]}.  bgai accepts ({why}).")
        return self._end(BOT, points)

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
            self.dice = None
            return None
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
        self.show()
        self.say(f"bgai doubles to {2 * self.match.cube_value}.")
        while True:
            cmd = self.ask("take or drop> ").strip().lower()
            if cmd in ("t", "ta", "tak", "take", "a", "accept"):
                self.match = self.match.take()
                self.say(f"You take: the cube is on {self.match.cube_value}, yours.")
                return None
            if cmd in ("d", "dr", "dro", "drop", "p", "pass", "reject"):
                return self._end(BOT, None)
            if cmd in ("h", "hint"):
                self._take_hint()
                continue
            if self._common(cmd):
                continue
            self.say("Answer 'take' or 'drop' (or 'hint', 'board', 'quit').")

    def _take_hint(self) -> None:
        cs = self.match.cube_state(HUMAN)  # the cube before the double, from your (the taker's) view
        d = self.bot.cube_decision(self.board, cs, doubled=True)
        if d.no_double is None:
            self.say(f"{self.bot.spec} has no evaluation of cube decisions.")
            return
        self.say(f"bgai's advice: {'take' if d.take else 'drop'} ({d.action}).")


def play_in_terminal(spec: str, *, match_length: int = 0, seed: int | None = None) -> int:
    """Run :class:`TerminalGame` on stdin/stdout with the agent ``spec``; returns the exit status."""
    bot = Bot.from_spec(spec)
    rng = np.random.default_rng(seed)
    game = TerminalGame(bot, match_length=match_length, rng=rng, say=lambda s: print(s, flush=True))
    try:
        return game.run()
    except KeyboardInterrupt:
        print("\nBye.", file=sys.stderr)
        return 130
