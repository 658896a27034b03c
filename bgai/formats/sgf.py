"""GNU Backgammon's ``.sgf`` match files (SGF, the Smart Game Format, with ``GM[6]`` = backgammon): read and write.

Sources: the SGF backgammon specification (red-bean.com/sgf/backgammon.html, by GNU Backgammon's author) and
GNU Backgammon's reader and writer (``sgf.c``: ``RestoreRootNode``, ``RestoreNode``, ``SaveGame``), checked
against files written by GNU Backgammon 1.07.

A file is a collection of game trees, one per game, each a sequence of nodes ``;PROP[value]...``.  The first
node of a game (root) carries:

* ``MI[length:N][game:K][ws:S0][bs:S1]`` -- match length (0 = money), game number **from 0** (as GNU
  Backgammon writes it), White's and Black's scores at the start of the game;
* ``PW``/``PB`` player names (White = player 0, Black = player 1), ``WR``/``BR`` ratings, ``DT`` date
  ``YYYY-MM-DD``, ``EV`` event, ``RO`` round, ``PC`` place (site), ``AN`` annotator, ``GC`` comment (GNU
  Backgammon writes these in the first game only);
* ``RU[...]`` rules, colon-separated: ``Crawford`` (the match uses the Crawford rule), ``CrawfordGame`` (this
  is the Crawford game), ``Jacoby``; variants (``Nackgammon``, ``Hypergammon*``) and ``NoCube`` are refused;
* ``RE[W+2]`` / ``RE[B+1R]`` -- winner, points scored, ``R`` when the loser resigned; no ``RE``: unfinished.

Move nodes: ``;W[52abcd]`` -- White rolls 5-2 and plays the single-die steps ``a->b``, ``c->d``; points are
letters, ``a`` = White's 1-point (Black's 24) ... ``x`` = White's 24-point (Black's 1), ``y`` the bar, ``z``
off; ``;B[66]`` a roll with no play possible; ``;W[double]``, ``;B[take]``, ``;B[drop]``; ``;PL[W]DI[21]`` dice
rolled but not played (the roller then resigned).  A resignation is not a node: ``RE[..R]`` says the loser
resigned (``points / cube`` x single game, as GNU Backgammon reads it: so under the Jacoby rule with a centred
cube, where a resigned gammon scores 1 point, it reads back as a single game) and the winner accepted; rejected
offers are not recorded.  ``C[...]`` is a comment on the node's action.  A starting position may be set up
before the first action with ``;PL[W]AE[a:y]AW[..]AB[..]``: ``AE`` clears points, ``AW`` adds White's
checkers and ``AB`` Black's (one value per checker, at the fixed letters above, ``y`` the bar; GNU Backgammon
reads them so, whatever ``PL`` says), ``PL`` names the player to act first.  Analysis properties (``A``, ``DA``,
``LU``, ``GS``, ``BM``...) are ignored; variations (several lines of play) are refused.  Values escape ``]`` and ``\\`` with a backslash.

:func:`format_sgf` writes what GNU Backgammon's ``save match`` writes, less its analysis and statistics, with
``AP[bgai:VERSION]``.  Everything read is replayed and checked (:mod:`bgai.formats.matchrecord`); problems raise
:class:`~bgai.formats.matchrecord.MatchRecordError` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

import bgai
from bgai.formats.matchrecord import (
    RESIGNED,
    AcceptResign,
    Action,
    Double,
    Drop,
    GameRecord,
    GameReplay,
    GameResult,
    MatchRecord,
    MatchRecordError,
    Move,
    Resign,
    Roll,
    Take,
    check_record,
)

__all__ = ["format_sgf", "parse_sgf"]


@dataclass
class _Node:
    line: int
    props: list[tuple[str, list[str], int]] = field(default_factory=list)

    def get(self, ident: str) -> list[str] | None:
        for name, values, _ in self.props:
            if name == ident:
                return values
        return None

    def first(self, ident: str) -> str | None:
        v = self.get(ident)
        return v[0] if v else None

    def line_of(self, ident: str) -> int:
        for name, _, line in self.props:
            if name == ident:
                return line
        return self.line


@dataclass
class _Tree:
    line: int
    nodes: list[_Node] = field(default_factory=list)
    children: list[_Tree] = field(default_factory=list)


def _err(line: int, what: str) -> MatchRecordError:
    return MatchRecordError(f"line {line}: {what}", line=line)


class _Reader:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.line = 1

    def _skip_ws(self) -> None:
        s = self.s
        while self.i < len(s) and s[self.i].isspace():
            if s[self.i] == "\n":
                self.line += 1
            self.i += 1

    def collection(self) -> list[_Tree]:
        trees = []
        self._skip_ws()
        while self.i < len(self.s):
            if self.s[self.i] != "(":
                raise _err(self.line, f"expected '(' to start a game tree, found {self.s[self.i:self.i + 20]!r}")
            trees.append(self.tree())
            self._skip_ws()
        if not trees:
            raise _err(self.line, "no SGF game tree found (empty file, or not an .sgf file)")
        return trees

    def tree(self) -> _Tree:
        t = _Tree(line=self.line)
        self.i += 1  # '('
        self._skip_ws()
        while self.i < len(self.s) and self.s[self.i] == ";":
            t.nodes.append(self.node())
            self._skip_ws()
        if not t.nodes:
            raise _err(self.line, "a game tree must start with a node ';'")
        while self.i < len(self.s) and self.s[self.i] == "(":
            t.children.append(self.tree())
            self._skip_ws()
        if self.i >= len(self.s):
            raise _err(self.line, f"the game tree opened at line {t.line} is not closed with ')' (truncated file?)")
        if self.s[self.i] != ")":
            raise _err(self.line, f"unexpected text {self.s[self.i:self.i + 20]!r}")
        self.i += 1
        return t

    def node(self) -> _Node:
        nd = _Node(line=self.line)
        self.i += 1  # ';'
        s = self.s
        while True:
            self._skip_ws()
            if self.i >= len(s) or s[self.i] in ";()":
                return nd
            m = re.compile(r"[A-Za-z]+").match(s, self.i)
            if not m:
                raise _err(self.line, f"expected a property name, found {s[self.i:self.i + 20]!r}")
            ident = "".join(ch for ch in m.group(0) if ch.isupper())
            line = self.line
            self.i = m.end()
            values = []
            self._skip_ws()
            while self.i < len(s) and s[self.i] == "[":
                values.append(self.value())
                self._skip_ws()
            if not values:
                raise _err(line, f"property {m.group(0)!r} has no value '[...]'")
            if not ident:
                raise _err(line, f"bad property name {m.group(0)!r}")
            nd.props.append((ident, values, line))

    def value(self) -> str:
        s = self.s
        start_line = self.line
        self.i += 1  # '['
        out = []
        while True:
            if self.i >= len(s):
                raise _err(start_line, "a property value '[' is not closed with ']' (truncated file?)")
            ch = s[self.i]
            if ch == "\\":
                if self.i + 1 >= len(s):
                    raise _err(self.line, "file ends inside a property value (truncated file?)")
                nxt = s[self.i + 1]
                if nxt == "\n":
                    self.line += 1
                elif nxt == "\r":
                    if self.i + 2 < len(s) and s[self.i + 2] == "\n":
                        self.i += 1
                    self.line += 1
                else:
                    out.append(nxt)
                self.i += 2
                continue
            if ch == "]":
                self.i += 1
                return "".join(out).replace("\r\n", "\n")
            if ch == "\n":
                self.line += 1
            out.append(ch)
            self.i += 1


def _letter_point(ch: str, player: int, line: int) -> int:
    """A move letter as a point of the mover (1..24, 25 bar, 0 off)."""
    if ch == "y":
        return 25
    if ch == "z":
        return 0
    if not ("a" <= ch <= "x"):
        raise _err(line, f"bad point letter {ch!r} in a move (expected a..x, y = bar, z = off)")
    idx = ord(ch) - ord("a")
    return idx + 1 if player == 0 else 24 - idx


def _point_letter(point: int, player: int) -> str:
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + point - 1) if player == 0 else chr(ord("x") - (point - 1))


_RE_RE = re.compile(r"^([WB])\+(\d+)?(R)?$", re.IGNORECASE)


def parse_sgf(text: str) -> MatchRecord:
    """Read GNU Backgammon ``.sgf`` text (the format in the module docstring) and check it by replaying it.

    Args:
        text: the file's text (decoded).

    Returns:
        The :class:`~bgai.formats.matchrecord.MatchRecord`.

    Raises:
        MatchRecordError: naming the line: bad SGF syntax (an unclosed ``[`` or ``(``: a truncated file), a
            game that is not backgammon (``GM`` other than 6), missing or inconsistent match information,
            unsupported rules or variations, a bad move value, an illegal play, a result that does not follow
            from the play, a wrong score.
    """
    if not isinstance(text, str):
        raise MatchRecordError(f".sgf text must be a string, got {type(text).__name__}")
    trees = _Reader(text.lstrip("\ufeff")).collection()
    games: list[GameRecord] = []
    shell: MatchRecord | None = None
    info: dict = {}
    for ti, tree in enumerate(trees):
        root = _game_root(tree)
        length, number, score = _read_match_info(root, ti)
        rules, ru = _read_rules(root)
        players = (root.first("PW") or "", root.first("PB") or "")
        game_info = _rule_flags(root, length, rules)
        if shell is None:
            info = _read_match_header(root)
            shell = MatchRecord(players=players, length=length, **game_info, **info)
        else:
            _check_same_match(root, shell, number, length, players, game_info, ru)
        if games:
            _check_start_score(root, games[-1], number, score)
        games.append(_read_game(shell, tree, number, tuple(score), "CrawfordGame" in rules))
    assert shell is not None
    record = MatchRecord(players=shell.players, length=shell.length, games=tuple(games), crawford=shell.crawford,
                         jacoby=shell.jacoby, **info)
    return check_record(record)


def _game_root(tree: _Tree) -> _Node:
    """The first node of a game tree, checked: no variations, a backgammon game (``GM[6]``)."""
    if tree.children:
        raise _err(tree.children[0].line, "variations (alternative lines of play) are not supported")
    root = tree.nodes[0]
    gm = root.first("GM")
    if gm is not None and gm.strip() != "6":
        raise _err(root.line_of("GM"), f"GM[{gm}] is not backgammon (GM[6])")
    return root


# MI keys whose values are numbers (the others are ignored)
_MI_KEYS = ("length", "game", "ws", "bs")


def _read_match_info(root: _Node, ti: int) -> tuple[int, int, list[int]]:
    """``MI`` of game tree ``ti`` (0-based): ``(match length, game number from 1, score at the start)``."""
    values = {"length": 0, "game": ti, "ws": 0, "bs": 0}
    for item in root.get("MI") or []:
        key, _, val = item.partition(":")
        key = key.strip().lower()
        if key in _MI_KEYS:
            if not re.fullmatch(r"\s*\d+\s*", val):
                raise _err(root.line_of("MI"), f"MI[{item}]: {key} must be a number")
            values[key] = int(val)
    number = values["game"] + 1
    if number != ti + 1:
        raise _err(root.line, f"game {ti + 1} of the file says MI[game:{number - 1}] "
                              f"(GNU Backgammon numbers games from 0)")
    return values["length"], number, [values["ws"], values["bs"]]


def _read_rules(root: _Node) -> tuple[set[str], str | None]:
    """``RU`` (and a check of ``CV``): ``(the rule names, the RU text)``."""
    rules = set()
    ru = root.first("RU")
    if ru:
        for rule in ru.split(":"):
            rule = rule.strip()
            if rule in ("Crawford", "CrawfordGame", "Jacoby"):
                rules.add(rule)
            elif rule:
                raise _err(root.line_of("RU"), f"rule {rule!r} is not supported (only standard backgammon with "
                                               "a cube; Crawford, CrawfordGame, Jacoby)")
    cv = root.first("CV")
    if cv is not None and cv.strip() != "1":
        raise _err(root.line_of("CV"), "automatic doubles (CV in the first node) are not supported")
    return rules, ru


def _rule_flags(root: _Node, length: int, rules: set[str]) -> dict[str, bool]:
    """``{"crawford": .., "jacoby": ..}``; Crawford only in matches, Jacoby only in money play."""
    game_info = {"crawford": "Crawford" in rules, "jacoby": "Jacoby" in rules}
    if length > 0 and game_info["jacoby"]:
        raise _err(root.line_of("RU"), "RU[Jacoby] in a match (the Jacoby rule is for money play)")
    if length == 0 and game_info["crawford"]:
        raise _err(root.line_of("RU"), "RU[Crawford] in a money game (length 0)")
    return game_info


# first-node properties copied as they are into MatchRecord fields
_INFO_PROPS = (("EV", "event"), ("RO", "round"), ("PC", "site"), ("AN", "annotator"), ("GC", "comment"))


def _read_match_header(root: _Node) -> dict:
    """The match information in the first game's first node (event, date, ratings, ...)."""
    info: dict = {}
    for prop, key in _INFO_PROPS:
        v = root.first(prop)
        if v:
            info[key] = v
    dt = root.first("DT")
    if dt:
        dm = re.match(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})", dt)
        if not dm:
            raise _err(root.line_of("DT"), f"DT[{dt}] is not a date YYYY-MM-DD")
        info["date"] = f"{int(dm.group(1)):04d}-{int(dm.group(2)):02d}-{int(dm.group(3)):02d}"
    ratings = (root.first("WR"), root.first("BR"))
    if ratings != (None, None):
        info["ratings"] = ratings
    return info


def _check_same_match(root: _Node, shell: MatchRecord, number: int, length: int, players: tuple[str, str],
                      game_info: dict[str, bool], ru: str | None) -> None:
    """A later game must have game 1's length, players and rules."""
    if length != shell.length:
        raise _err(root.line, f"game {number} has match length {length}, game 1 has {shell.length}")
    if players != shell.players:
        raise _err(root.line, f"game {number}: players {players} differ from game 1's {shell.players}")
    if game_info["crawford"] != shell.crawford or game_info["jacoby"] != shell.jacoby:
        raise _err(root.line_of("RU") if ru else root.line,
                   f"game {number}: rules RU[{ru or ''}] differ from game 1's")


def _check_start_score(root: _Node, prev: GameRecord, number: int, score: list[int]) -> None:
    """The previous game must be finished, and ``score`` must follow from its result."""
    if prev.result is None:
        raise _err(root.line, f"game {prev.number} is unfinished, but game {number} follows")
    want = list(prev.score)
    want[prev.result.winner] += prev.result.points
    if tuple(score) != tuple(want):
        raise _err(root.line_of("MI"), f"the score at the start of game {number} should be "
                                       f"{want[0]}-{want[1]}, MI says {score[0]}-{score[1]}")


def _read_game(shell: MatchRecord, tree: _Tree, number: int, score: tuple, crawford: bool) -> GameRecord:
    root = tree.nodes[0]
    setup = None
    nodes = tree.nodes[1:]
    # a set-up position before the first action
    if nodes and any(nodes[0].get(p) is not None for p in ("AE", "AB", "AW")):
        nd = nodes.pop(0)
        setup = _read_setup(nd)
    r = GameReplay(shell, number, score, crawford, setup)
    for nd in nodes:
        action = _read_node(nd, r)
        if action is not None:
            r.apply(action)
    result = _read_result(root, r, number)
    return GameRecord(number=number, score=score, crawford=crawford, actions=tuple(r.actions), result=result,
                      setup=None if setup is None else tuple(tuple(int(x) for x in row) for row in setup),
                      line=tree.line)


def _read_node(nd: _Node, r: GameReplay) -> Action | None:
    """The action of one game node (a move, cube action or roll), or None for a node without one."""
    for p in ("AE", "AB", "AW", "CV", "CP"):
        if nd.get(p) is not None:
            raise _err(nd.line_of(p), f"{p}: a position or cube edited during the game is not supported")
    comment = nd.first("C")
    action = None
    for who, player in (("W", 0), ("B", 1)):
        v = nd.first(who)
        if v is None:
            continue
        if action is not None:
            raise _err(nd.line, "a node with moves for both players")
        action = _read_move_value(who, player, v, nd.line_of(who), comment, r)
    di = nd.first("DI")
    if di is not None:
        if action is not None:
            raise _err(nd.line_of("DI"), "DI (dice set) in a node with a move")
        action = _read_roll(nd, di, comment, r)
    return action


_CUBE_WORDS = {"double": Double, "take": Take, "drop": Drop}


def _read_move_value(who: str, player: int, v: str, line: int, comment: str | None, r: GameReplay) -> Action:
    """``W[..]`` / ``B[..]``: ``double``, ``take``, ``drop``, or dice and point-letter pairs (a play)."""
    cube_action = _CUBE_WORDS.get(v.strip().lower())
    if cube_action is not None:
        return cube_action(player, comment=comment, line=line)
    m = re.fullmatch(r"\s*([1-6])([1-6])([a-z]*)\s*", v)
    if not m or len(m.group(3)) % 2 or len(m.group(3)) > 8:
        raise _err(line, f"{who}[{v}] is not a move (dice 11..66 then up to 4 point-letter pairs), "
                         "double, take or drop")
    dice = (int(m.group(1)), int(m.group(2)))
    letters = m.group(3)
    pairs = [(_letter_point(letters[j], player, line), _letter_point(letters[j + 1], player, line))
             for j in range(0, len(letters), 2)]
    steps = r.steps_from_pairs(player, dice, pairs, line) if pairs else \
        r.steps_from_text(player, dice, "", line)
    return Move(player, dice, steps, comment=comment, line=line)


def _read_roll(nd: _Node, di: str, comment: str | None, r: GameReplay) -> Roll:
    """``DI[..]`` with an optional ``PL[W|B]``: a roll not yet played."""
    m = re.fullmatch(r"\s*([1-6])([1-6])\s*", di)
    if not m:
        raise _err(nd.line_of("DI"), f"DI[{di}] is not a roll 11..66")
    pl = nd.first("PL")
    if pl is not None and pl.strip().upper() not in ("W", "B"):
        raise _err(nd.line_of("PL"), f"PL[{pl}] must be W or B")
    player = (0 if pl.strip().upper() == "W" else 1) if pl is not None else r.turn
    if player is None:
        raise _err(nd.line_of("DI"), "DI without PL before the first move: whose roll is it?")
    return Roll(player, (int(m.group(1)), int(m.group(2))), comment=comment, line=nd.line_of("DI"))


def _read_result(root: _Node, r: GameReplay, number: int) -> GameResult | None:
    """Check ``RE`` against the replayed game (applying a resignation for ``RE[..R]``); the result or None."""
    re_v = root.first("RE")
    result_line = root.line_of("RE")
    if re_v is None:
        if r.result is not None:
            raise _err(root.line, f"game {number} is over but its first node has no RE (result) property")
        return None
    m = _RE_RE.match(re_v.strip())
    if not m:
        raise _err(result_line, f"RE[{re_v}] is not a result like W+2 or B+1R")
    winner = 0 if m.group(1).upper() == "W" else 1
    pts = int(m.group(2)) if m.group(2) else None
    if m.group(3):
        pts = _apply_resignation(re_v, winner, pts, result_line, r)
    res = r.result
    if res is None:
        raise _err(result_line, f"RE[{re_v}]: the game is not over after its moves (truncated file?)")
    if res.winner != winner:
        raise _err(result_line, f"RE[{re_v}]: player {res.winner} won the game ({res.how})")
    if pts is not None and pts != res.points:
        raise _err(result_line, f"RE[{re_v}]: the game scores {res.points} point{'s' if res.points != 1 else ''}")
    return res


def _apply_resignation(re_v: str, winner: int, pts: int | None, result_line: int, r: GameReplay) -> int:
    """``RE[..R]``: the loser resigned and the winner accepted; returns the points (the cube value if not given)."""
    if r.result is not None:
        raise _err(result_line, f"RE[{re_v}] says resigned, but the game was already over ({r.result.how})")
    if r.pending_double is not None:
        raise _err(result_line, f"RE[{re_v}] says resigned, but a double awaits an answer")
    if pts is None:
        pts = r.cube_value
    kind = max(1, min(3, pts // r.cube_value))
    r.apply(Resign(1 - winner, kind, line=result_line))
    r.apply(AcceptResign(winner, line=result_line))
    return pts


def _read_setup(nd: _Node) -> np.ndarray:
    board0 = np.zeros((2, 25), dtype=np.int16)  # row 0 = White (player 0), row 1 = Black, each in own numbering
    for ident, values, line in nd.props:
        if ident == "AE":
            for v in values:
                if not re.fullmatch(r"[a-y](:[a-y])?", v.strip()):
                    raise _err(line, f"AE[{v}] must be a point letter or range a..y")
                lo, _, hi = v.strip().partition(":")
                for idx in range(ord(lo) - ord("a"), ord(hi or lo) - ord("a") + 1):
                    board0[0, idx] = 0
                    board0[1, 24 if idx == 24 else 23 - idx] = 0
        elif ident in ("AW", "AB"):
            for v in values:
                v = v.strip()
                if not re.fullmatch(r"[a-y]", v):
                    raise _err(line, f"{ident}[{v}] must be one point letter a..y")
                idx = ord(v) - ord("a")
                if ident == "AW":
                    board0[0, idx] += 1
                else:
                    board0[1, 24 if idx == 24 else 23 - idx] += 1
        elif ident == "PL" and values[0].strip().upper() not in ("W", "B"):
            raise _err(line, f"PL[{values[0]}] must be W or B")
    if (board0.sum(axis=1) > 15).any():
        raise _err(nd.line, "set-up position has more than 15 checkers for a side")
    return board0.astype(np.int8)


# ------------------------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def format_sgf(record: MatchRecord) -> str:
    """Write ``record`` as GNU Backgammon ``.sgf`` text (see the module docstring), one game tree per game.

    Not written (the format has no place for them): ``.mat`` header tags other than those above, resignation
    offers that were rejected.  A resignation that ends a game is written as ``RE[..R]``.

    Raises:
        MatchRecordError: the record breaks the rules (see :func:`bgai.formats.matchrecord.replay`).
    """
    check_record(record)
    out: list[str] = []
    for gi, g in enumerate(record.games):
        _format_root(out, record, g, gi)
        if g.setup is not None:
            _format_setup(out, g)
        for a in g.actions:
            _format_action(out, a)
        out.append(")\n")
    return "".join(out)


def _format_root(out: list[str], record: MatchRecord, g: GameRecord, gi: int) -> None:
    """The first node of game tree ``gi``: match information, rules and the result."""
    out.append(f"(;FF[4]GM[6]CA[UTF-8]AP[bgai:{bgai.__version__}]")
    out.append(f"MI[length:{record.length}][game:{g.number - 1}][ws:{g.score[0]}][bs:{g.score[1]}]")
    out.append(f"PW[{_esc(record.players[0])}]PB[{_esc(record.players[1])}]")
    if gi == 0:
        _format_match_header(out, record)
    rules = [name for name, on in (("Crawford", record.crawford), ("CrawfordGame", g.crawford),
                                   ("Jacoby", record.jacoby)) if on]
    if rules:
        out.append(f"RU[{':'.join(rules)}]")
    if g.result is not None:
        res = g.result
        out.append(f"RE[{'WB'[res.winner]}+{res.points}{'R' if res.how == RESIGNED else ''}]")


def _format_match_header(out: list[str], record: MatchRecord) -> None:
    if record.ratings[0]:
        out.append(f"WR[{_esc(record.ratings[0])}]")
    if record.ratings[1]:
        out.append(f"BR[{_esc(record.ratings[1])}]")
    for prop, value in (("DT", record.date), ("EV", record.event), ("RO", record.round),
                        ("PC", record.site), ("AN", record.annotator), ("GC", record.comment)):
        if value:
            out.append(f"{prop}[{_esc(value)}]")


def _format_setup(out: list[str], g: GameRecord) -> None:
    """The set-up node: ``PL`` (the first player to act), ``AE[a:y]``, then ``AW`` / ``AB`` checkers."""
    first = next((a.player for a in g.actions), 0)
    out.append(f"\n;PL[{'WB'[first]}]AE[a:y]")
    if sum(g.setup[0]):
        out.append("AW" + "".join(f"[{chr(ord('a') + i)}]" * g.setup[0][i] for i in range(25)))
    if sum(g.setup[1]):
        out.append("AB" + "".join(f"[{'y' if i == 24 else chr(ord('x') - i)}]" * g.setup[1][i]
                                  for i in range(25)))


def _format_action(out: list[str], a: Action) -> None:
    """One node per action (resignations are written as ``RE[..R]`` instead), with its comment."""
    who = "WB"[a.player]
    if isinstance(a, Move):
        pairs = "".join(_point_letter(s[0], a.player) + _point_letter(s[1], a.player) for s in a.steps)
        out.append(f"\n;{who}[{a.dice[0]}{a.dice[1]}{pairs}]")
    elif isinstance(a, Roll):
        out.append(f"\n;PL[{who}]DI[{a.dice[0]}{a.dice[1]}]")
    elif isinstance(a, (Double, Take, Drop)):
        out.append(f"\n;{who}[{type(a).__name__.lower()}]")
    else:
        return  # resignations: RE[..R]
    if a.comment:
        out.append(f"C[{_esc(a.comment)}]")

