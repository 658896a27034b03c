"""Match analysis as GNU Backgammon does it: every checker play and cube decision of both players, the luck of
every roll, error rates, PR, and a luck-adjusted result; as text, JSON and a self-contained HTML page.

Usage::

    from bgai.analysis.match_analysis import analyse_files, format_report, write_html
    [analysis] = analyse_files(["match.sgf"], "gnubg")
    print(format_report(analysis))
    write_html("report.html", [analysis])

What is analysed (GNU Backgammon 1.07, ``analysis.c``: ``AnalyzeMove``, ``updateStatcontext``, ``LuckAnalysis``;
``eval.c``: ``FindBestCubeDecision``, ``isCloseCubedecision``, ``mwc2eq``/``eq2mwc``; ``formatgs.c``)
-----------------------------------------------------------------------------------------------------------------

**Equities.**  Every equity is GNU Backgammon's *normalised* equity ("EMG", equivalent to a money game) of the
side that decides: money play: cubeful equity in points per game per unit of the present cube; match play: the
cubeful match-winning chance (MWC) turned into equity by the linear map ``E = (2 MWC - (W + L)) / (W - L)``,
``W``/``L`` the MWC after winning/losing the present cube (``mwc2eq``).  An error in EMG is turned back into
what it cost, as GNU Backgammon's "unnormalised" figures: match play ``(W - L) / 2 x error`` in MWC
(``eq2mwc(error) - eq2mwc(0)``), money play ``cube x error`` in points.

**Checker plays.**  Every legal play of the position and roll is ranked by its cubeful equity: the agent's
probabilities after the play with GNU Backgammon's 0-ply cube model (:func:`bgai.analysis.plays.rank_plays` with
the mover's cube state: after the play the opponent is on roll and takes his proper cube action; GNU
Backgammon's ``ScoreMove``); the error of a play is the best
play's equity minus the played one's; plays of equal equity rank by their cubeless equity (GNU Backgammon's
``CompareMoves``).  A play is *forced* when the roll has one legal play (or none): forced plays are not counted as
decisions.

**Cube decisions.**  Before each roll where the player on roll could double (:meth:`CubeState.may_double`,
GNU Backgammon's ``GetDPEq``; not the first roll of a game), and at every double, the position is evaluated
(:func:`bgai.game.cube.analyse_cube`: no double ``ND``, double/take ``DT``, double/pass ``DP = 1``, from the
doubler's view).  The optimal equity ``OPT`` is ``min(DT, DP)`` when ``DT >= ND`` and ``DP >= ND``, else
``ND`` (``FindBestCubeDecision``).  Errors:

* no double: *missed double* ``OPT - ND`` when ``ND < OPT`` ("above CP" when ``DT > 1``, i.e. a pass);
* double: *wrong double* ``OPT - min(DT, DP)`` when positive ("above TG" when ``ND > 1``, too good);
* take: *wrong take* ``DT - DP`` when ``DT > DP``; pass: *wrong pass* ``DP - DT`` when ``DP > DT``
  (the responder's error, in the doubler's normalised units, as GNU Backgammon books it).

A no-double decision counts as a decision only when it is *close*: ``OPT - min(DT, 1) < 0.16``
(``isCloseCubedecision``); doubles, takes and passes always count.

**Marks** (GNU Backgammon 1.07's default thresholds, ``arSkillLevel``; older versions used 0.04/0.08/0.16):
doubtful above 0.03, bad above 0.06, very bad above 0.12 EMG (:data:`SKILL_THRESHOLDS`).

**Luck** of a roll (``LuckNormal``): the equity of the best play of the roll made minus the average, over the
36 rolls, of the equity of each roll's best play, all at the agent's 0-ply cubeful evaluation with the roller's
cube (GNU Backgammon measures luck at 0-ply whatever the analysis ply).  The opening roll of a game (starting position, not a double: ``LuckFirst``) is measured against the 30
non-double opening rolls, 15 the roller's and 15 the opponent's (whose equities count negated).  Marks: lucky
above 0.3, very lucky above 0.6 EMG (unlucky, very unlucky below -0.3, -0.6).  The luck rating is GNU
Backgammon's on ten times the mean luck per move: "Go to Las Vegas" > 0.6, "Good dice, man!" > 0.3, "Bad dice,
man!" < -0.3, "Go to bed" < -0.6, else "None".

**Per player** (``formatgs.c``, ``getMWCFromError``): error rates in mEMG = 1000 x EMG lost per decision:
checker play per unforced move, cube per close-or-actual cube decision, overall per (unforced moves + close
cube decisions); the Snowie error rate divides the player's total by all moves of both players.  Ratings are
GNU Backgammon 1.07's (:data:`RATINGS`).  The actual result of each game (match play: the change of the
player's MWC from the start of the game to its end; money play: points) and the **luck-adjusted result**:
the actual result minus the player's luck plus the opponent's (unnormalised), summed over the games.

**PR** (eXtreme Gammon's Performance Rating): 500 x the average equity (EMG) lost per decision that is not
obvious -- "PR = (total equity lost / number of decisions) x 500", forced moves and obvious cube decisions
excluded (BackgammonDB's description of XG's PR: https://backgammondb.com/manual/match-statistics/performance-rating/;
also https://kevung.github.io/blunderDB/en/stats_parity.html).  XG's own list of "obvious" cube decisions is
not public in full; here the decisions counted are GNU Backgammon's (unforced moves and close or actual cube
decisions), so PR = error rate / 2.  XG's extra factor 1.5 for 1-point matches (BackgammonDB) is not applied.

Not analysed: resignations (GNU Backgammon analyses them but leaves them out of the statistics), beavers.  A roll
recorded without a play (:class:`~bgai.formats.matchrecord.Roll`, the roller resigned) gets its luck, which the
statistics leave out (as GNU Backgammon's do).

Batching and workers
--------------------
All rolls of all decisions of all files (each roll of a luck measurement is one *job*: a position, a roll and
a cube state) are cut into fixed units of ``chunk`` jobs, each ranked in one agent call
(:func:`bgai.analysis.plays.rank_plays`); the cube positions go through one ``probabilities`` call per
``chunk``.  ``workers > 1`` hands the units to that many processes (:func:`bgai.util.parallel.run_units`; each
worker builds the agent from its spec; ``backend='ray'``: Ray actors); the units do not depend on the number of workers, so the results do not either.  An agent searching at
``ply > 0`` ranks the plays made and the cube positions; luck is measured by the same agent at 0-ply (a second
set of jobs), as GNU Backgammon measures luck at 0-ply whatever the analysis depth.

Agents: only agents with probabilities (``gnubg``, neural models) can analyse (an equity is needed).  The
analysis is at the agent's own ply (``model.pt:ply=1``); GNU Backgammon's is 0-ply here
(``tests/data/matches/make_analysis_fixtures.sh`` makes gnubg's reference analyses).
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.agents.registry import agent_identity, make_agent, parse_spec, resolve_spec
from bgai.analysis.plays import rank_plays_batch
from bgai.core.board import BAR, NUM_CHECKERS, flip, pip_counts, starting_board
from bgai.core.movegen import legal_plays
from bgai.core.position_id import encode_position_id
from bgai.errors import AgentSpecError, BgaiError
from bgai.formats.matchfile import read_match
from bgai.formats.matchrecord import Decision, Double, Drop, MatchRecord, Move, Roll, Take, replay
from bgai.game.cube import (
    CENTRED,
    ME,
    CubeState,
    analyse_cube,
    cube_efficiency,
    cubeless_mwc,
    match_equity_after,
    met_for,
)
from bgai.util.fileio import atomic_write_bytes, atomic_write_json
from bgai.util.journal import Journal
from bgai.util.parallel import run_units

__all__ = [
    "CLOSE_CUBE_THRESHOLD",
    "LUCK_THRESHOLDS",
    "RATINGS",
    "SKILL_THRESHOLDS",
    "CubeAction",
    "MatchAnalysis",
    "MoveAnalysis",
    "PlayerStats",
    "RankedOption",
    "analyse_files",
    "analyse_records",
    "analysis_dict",
    "board_svg",
    "format_report",
    "format_totals",
    "match_files",
    "render_html",
    "total_by_player",
    "write_html",
    "write_json",
]

#: Error marks (EMG lost above each value): GNU Backgammon 1.07's ``arSkillLevel`` defaults.
SKILL_THRESHOLDS = {"doubtful": 0.03, "bad": 0.06, "very bad": 0.12}
#: Luck marks (|luck| above each value, EMG): GNU Backgammon's ``arLuckLevel``.
LUCK_THRESHOLDS = {"lucky": 0.3, "very lucky": 0.6}
#: A no-double decision is "close" when doubling loses less than this (``isCloseCubedecision``).
CLOSE_CUBE_THRESHOLD = 0.16
#: GNU Backgammon 1.07's ratings by error rate per decision (EMG), best last: (name, the rate must be below).
RATINGS = (("Awful!", math.inf), ("Beginner", 0.035), ("Casual player", 0.026), ("Intermediate", 0.018),
           ("Advanced", 0.012), ("Expert", 0.008), ("World class", 0.005), ("Supernatural", 0.002))
#: Worst errors per player drawn in the HTML report.
WORST_PER_PLAYER = 5
#: Jobs (position, roll, cube) per agent call.
DEFAULT_CHUNK = 4096
#: Match-file name endings read from a folder.
MATCH_FILE_SUFFIXES = (".sgf", ".mat", ".txt", ".gam")

MISSED_BELOW_CP, MISSED_ABOVE_CP = "missed double below CP", "missed double above CP"
WRONG_BELOW_DP, WRONG_ABOVE_TG = "wrong double below DP", "wrong double above TG"
WRONG_TAKE, WRONG_PASS = "wrong take", "wrong pass"
CUBE_ERROR_KINDS = (MISSED_BELOW_CP, MISSED_ABOVE_CP, WRONG_BELOW_DP, WRONG_ABOVE_TG, WRONG_TAKE, WRONG_PASS)
SKILLS = ("", "doubtful", "bad", "very bad")
LUCKS = ("very lucky", "lucky", "", "unlucky", "very unlucky")


# ------------------------------------------------------------------------------------------------------------
# the adapter: the only code that calls bgai's ranking and cube functions.  When bgai.analysis.api replaces
# them (rank_plays_batch / decide_cube, CubeState in bgai.core), only these two functions change.
# ------------------------------------------------------------------------------------------------------------


def _rank(agent: Agent, boards: np.ndarray, dice: np.ndarray, states: Sequence[CubeState]) -> list[list[tuple]]:
    """Every legal play of each (position, roll, cube), best first: ``[(afterstate, equity, mwc or None,
    probabilities (5,)), ...]`` per job, with the mover's 0-ply cubeful normalised equity (one agent call)."""
    ranked = rank_plays_batch(agent, boards, dice, list(states))
    return [[(r.afterstate, float(r.score if r.cubeful_equity is None else r.cubeful_equity), r.mwc, r.probabilities)
             for r in plays] for plays in ranked]


def _cube(agent: Agent, boards: np.ndarray, states: Sequence[CubeState]) -> dict[str, np.ndarray | list]:
    """Cube equities of positions before the roll (side on roll's view; one agent call): arrays ``nd``, ``dt``,
    ``dp`` (normalised), ``mwc`` ``(N, 3)`` (NaN in money play), ``can_gammon`` and the ``action`` names."""
    n = len(boards)
    probs = agent.probabilities(boards) if n else np.zeros((0, 5))
    eff = cube_efficiency(boards) if n else np.zeros(0)
    out = {"nd": np.zeros(n), "dt": np.zeros(n), "dp": np.zeros(n), "mwc": np.full((n, 3), np.nan),
           "action": [""] * n}
    groups: dict[CubeState, list[int]] = {}
    for i, st in enumerate(states):
        groups.setdefault(st, []).append(i)
    for st, idx in groups.items():
        a = analyse_cube(probs[idx], st, eff[idx])
        out["nd"][idx], out["dt"][idx], out["dp"][idx] = a.no_double, a.double_take, a.double_pass
        if not st.is_money:
            out["mwc"][idx] = np.stack([a.mwc_no_double, a.mwc_double_take, a.mwc_double_pass], axis=1)
        for k, i in enumerate(idx):
            out["action"][i] = a.action[k]
    return out


# ------------------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankedOption:
    """One legal play with its equity (normalised EMG, the mover's view) and, in match play, its MWC."""

    play: str
    equity: float
    mwc: float | None = None


@dataclass(frozen=True, eq=False)
class MoveAnalysis:
    """One roll of a player: its checker play (when played) and its luck.

    Attributes:
        game, move_number: the game (1, 2, ...) and the move number as a ``.mat`` file numbers it.
        player: 0 or 1, the roller.
        dice: the roll, as recorded.
        board: ``(2, 25)`` int8 position before the roll, the roller's view (row 0 = roller).
        cube: the roller's :class:`~bgai.game.cube.CubeState`.
        plays: number of legal plays (1 when nothing or only one thing can be played; 0 when the roll was not
            played: a :class:`~bgai.formats.matchrecord.Roll`).
        played, best: notation of the play made and of the agent's best play (``''`` = no play; None if the roll
            was not played).
        equity, best_equity: their equities (EMG, roller's view); None if not played.
        error: ``best_equity - equity`` (>= 0, EMG); 0 for forced plays.
        cost: the error in MWC (match play, 0..1) or in points (money: cube x error).
        skill: ``''``, ``'doubtful'``, ``'bad'`` or ``'very bad'`` (:data:`SKILL_THRESHOLDS`).
        top: the best plays (up to 5), best first.
        luck, luck_cost: the roll's luck (EMG; and in MWC or points).
        luck_mark: ``''``, ``'lucky'``, ``'very lucky'``, ``'unlucky'`` or ``'very unlucky'``.
    """

    game: int
    move_number: int
    player: int
    dice: tuple[int, int]
    board: np.ndarray = field(repr=False)
    cube: CubeState
    plays: int
    played: str | None
    best: str | None
    equity: float | None
    best_equity: float | None
    error: float
    cost: float
    skill: str
    top: tuple[RankedOption, ...]
    luck: float
    luck_cost: float
    luck_mark: str

    @property
    def forced(self) -> bool:
        """One legal play (or none): not a decision."""
        return self.plays <= 1

    @property
    def position_id(self) -> str:
        """GNU Backgammon Position ID of :attr:`board` (roller on roll)."""
        return encode_position_id(self.board)


@dataclass(frozen=True, eq=False)
class CubeAction:
    """One cube decision: a no-double before a roll, a double, a take or a pass.

    Attributes:
        game, move_number: where it was.
        player: who decided (the doubler for no double / double; the responder for take / pass).
        action: ``'no double'``, ``'double'``, ``'take'`` or ``'pass'``.
        doubler: the player on roll (whose view the equities are from).
        board: ``(2, 25)`` int8 position before the roll, the doubler's view.
        cube: the doubler's :class:`~bgai.game.cube.CubeState` before the double.
        no_double, double_take, double_pass: cubeful equities (EMG, doubler's view).
        mwc: match play: ``(no double, double/take, double/pass)`` MWC of the doubler; None in money play.
        available: the doubler may double (:meth:`CubeState.may_double`).
        proper: the proper cube action in GNU Backgammon's words (``'Double, take'``, ``'No redouble, take'``...).
        should_double, should_take: the verdicts: doubling is right (``DT >= ND`` and ``DP >= ND``, cube
            available); the responder should take (``DT < DP``).
        error, cost: equity lost by the decision (EMG, >= 0) and its cost (MWC or points).
        skill: ``''``, ``'doubtful'``, ``'bad'``, ``'very bad'``.
        close: counts as a decision (doubles, takes and passes always; no double when close).
        kind: the error's kind (:data:`CUBE_ERROR_KINDS`) or ``''``.
    """

    game: int
    move_number: int
    player: int
    action: str
    doubler: int
    board: np.ndarray = field(repr=False)
    cube: CubeState
    no_double: float
    double_take: float
    double_pass: float
    mwc: tuple[float, float, float] | None
    available: bool
    proper: str
    should_double: bool
    should_take: bool
    error: float
    cost: float
    skill: str
    close: bool
    kind: str

    @property
    def position_id(self) -> str:
        """GNU Backgammon Position ID of :attr:`board` (doubler on roll)."""
        return encode_position_id(self.board)


@dataclass
class PlayerStats:
    """One player's statistics over a match (or several files: :func:`total_by_player`).

    Counts: ``moves`` (rolls played or danced), ``unforced``, ``marks`` (checker plays per skill mark, forced
    included), ``cube_total`` (cube decisions analysed), ``cube_close`` (close or actual), ``doubles``, ``takes``,
    ``passes``, ``cube_errors`` (kind -> ``[count, EMG, cost]``), ``luck_marks``, ``rolls`` (rolls with a luck
    figure).  Sums: ``checker_error``/``checker_cost``, ``luck``/``luck_cost`` (EMG / unnormalised),
    ``actual_result`` and ``luck_adjusted`` (MWC change or points), ``games``, ``all_moves`` (moves of both
    players: the Snowie error rate's denominator), ``files``.
    """

    name: str
    money: bool
    moves: int = 0
    unforced: int = 0
    marks: dict = field(default_factory=lambda: dict.fromkeys(SKILLS, 0))
    checker_error: float = 0.0
    checker_cost: float = 0.0
    cube_total: int = 0
    cube_close: int = 0
    doubles: int = 0
    takes: int = 0
    passes: int = 0
    cube_errors: dict = field(default_factory=lambda: {k: [0, 0.0, 0.0] for k in CUBE_ERROR_KINDS})
    luck_marks: dict = field(default_factory=lambda: dict.fromkeys(LUCKS, 0))
    rolls: int = 0
    luck: float = 0.0
    luck_cost: float = 0.0
    actual_result: float = 0.0
    luck_adjusted: float = 0.0
    games: int = 0
    all_moves: int = 0
    files: int = 1

    # -- derived -----------------------------------------------------------------------------------------
    @property
    def cube_error(self) -> float:
        """EMG lost in cube decisions."""
        return sum(v[1] for v in self.cube_errors.values())

    @property
    def cube_cost(self) -> float:
        """Cube errors in MWC (match) or points (money)."""
        return sum(v[2] for v in self.cube_errors.values())

    @property
    def total_error(self) -> float:
        """EMG lost, checker play and cube."""
        return self.checker_error + self.cube_error

    @property
    def total_cost(self) -> float:
        return self.checker_cost + self.cube_cost

    @property
    def decisions(self) -> int:
        """Unforced moves plus close or actual cube decisions."""
        return self.unforced + self.cube_close

    @property
    def checker_rate(self) -> float | None:
        """Checker-play error rate, mEMG per unforced move (None without one)."""
        return 1000.0 * self.checker_error / self.unforced if self.unforced else None

    @property
    def cube_rate(self) -> float | None:
        """Cube error rate, mEMG per close or actual cube decision."""
        return 1000.0 * self.cube_error / self.cube_close if self.cube_close else None

    @property
    def error_rate(self) -> float | None:
        """Overall error rate ("Error rate mEMG"): mEMG per decision."""
        return 1000.0 * self.total_error / self.decisions if self.decisions else None

    @property
    def pr(self) -> float | None:
        """XG's Performance Rating: 500 x EMG lost per decision (see the module docstring)."""
        return 500.0 * self.total_error / self.decisions if self.decisions else None

    @property
    def snowie_rate(self) -> float | None:
        """Snowie's error rate: mEMG of the player's errors per move of both players."""
        return 1000.0 * self.total_error / self.all_moves if self.all_moves else None

    @property
    def luck_rate(self) -> float | None:
        """mEMG of luck per move."""
        return 1000.0 * self.luck / self.moves if self.moves else None

    @property
    def luck_rating(self) -> str | None:
        """GNU Backgammon's luck rating (on ten times the luck per move)."""
        if not self.moves:
            return None
        r = 10.0 * self.luck / self.moves
        if r > 0.6:
            return "Go to Las Vegas"
        if r > 0.3:
            return "Good dice, man!"
        if r < -0.6:
            return "Go to bed"
        if r < -0.3:
            return "Bad dice, man!"
        return "None"

    def rating(self, what: str = "overall") -> str | None:
        """GNU Backgammon 1.07's rating of the ``'overall'``, ``'checker'`` or ``'cube'`` error rate."""
        rate = {"overall": self.error_rate, "checker": self.checker_rate, "cube": self.cube_rate}[what]
        if rate is None:
            return None
        return _rating(rate / 1000.0)

    def add(self, other: PlayerStats) -> None:
        """Add ``other``'s counts and sums to this one."""
        for name in ("moves", "unforced", "checker_error", "checker_cost", "cube_total", "cube_close", "doubles",
                     "takes", "passes", "rolls", "luck", "luck_cost", "actual_result", "luck_adjusted", "games",
                     "all_moves", "files"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for k in self.marks:
            self.marks[k] += other.marks[k]
        for k in self.luck_marks:
            self.luck_marks[k] += other.luck_marks[k]
        for k, v in other.cube_errors.items():
            mine = self.cube_errors[k]
            for i in range(3):
                mine[i] += v[i]


def _rating(rate: float) -> str:
    for name, limit in reversed(RATINGS):
        if rate < limit:
            return name
    return RATINGS[0][0]  # pragma: no cover - the first limit is infinite


@dataclass
class MatchAnalysis:
    """The analysis of one match file.

    Attributes:
        source: the file (or a label).
        players: the players' names.
        length: match length (0 = money session).
        games: number of games.
        decisions: every roll (:class:`MoveAnalysis`) and every cube decision analysed (:class:`CubeAction`),
            in the order of the match.
        stats: per-player :class:`PlayerStats`.
        agent: the agent's spec or name.
    """

    source: str
    players: tuple[str, str]
    length: int
    games: int
    decisions: list
    stats: tuple[PlayerStats, PlayerStats]
    agent: str

    @property
    def money(self) -> bool:
        return self.length == 0

    @property
    def moves(self) -> list[MoveAnalysis]:
        """Every roll, in order."""
        return [d for d in self.decisions if isinstance(d, MoveAnalysis)]

    @property
    def cube(self) -> list[CubeAction]:
        """Every cube decision analysed, in order."""
        return [d for d in self.decisions if isinstance(d, CubeAction)]

    def worst(self, player: int, n: int = WORST_PER_PLAYER) -> list[MoveAnalysis | CubeAction]:
        """The player's ``n`` largest errors (checker plays and cube decisions), largest first."""
        errs: list[MoveAnalysis | CubeAction] = [m for m in self.moves if m.player == player and m.error > 0]
        errs += [c for c in self.cube if c.player == player and c.error > 0]
        errs.sort(key=lambda e: (-e.error, e.game, e.move_number))
        return errs[:n]


# ------------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------------


def _skill(error: float) -> str:
    mark = ""
    for name, limit in SKILL_THRESHOLDS.items():
        if error > limit:
            mark = name
    return mark


def _luck_mark(luck: float) -> str:
    if luck > LUCK_THRESHOLDS["very lucky"]:
        return "very lucky"
    if luck > LUCK_THRESHOLDS["lucky"]:
        return "lucky"
    if luck < -LUCK_THRESHOLDS["very lucky"]:
        return "very unlucky"
    if luck < -LUCK_THRESHOLDS["lucky"]:
        return "unlucky"
    return ""


def _win_lose(state: CubeState) -> tuple[float, float]:
    """Match play: the MWC ``(W, L)`` of the side on roll after winning / losing the present cube."""
    a0, a1 = state.away
    win = match_equity_after(met_for(state), a0, a1, 0, state.cube_value, 0, state.crawford)
    lose = match_equity_after(met_for(state), a0, a1, 0, state.cube_value, 1, state.crawford)
    return win, lose


def _cost_scale(state: CubeState) -> float:
    """Cost of one unit of normalised equity: ``(W - L) / 2`` in MWC (match play), the cube value (money)."""
    if state.is_money:
        return float(state.cube_value)
    win, lose = _win_lose(state)
    return 0.5 * (win - lose)


def _mwc_mid(state: CubeState) -> float:
    """Match play: ``(W + L) / 2``, the MWC of normalised equity 0 (GNU Backgammon's ``eq2mwc(0)``)."""
    win, lose = _win_lose(state)
    return 0.5 * (win + lose)


#: The 21 distinct rolls (high die first) and how many of the 36 each stands for.
_ROLLS = [(i, j) for i in range(1, 7) for j in range(1, i + 1)]
_WEIGHTS = [1.0 if i == j else 2.0 for i, j in _ROLLS]
#: The 15 non-double rolls, high die first (the opening rolls of one player).
_OPENING = [(i, j) for i, j in _ROLLS if i != j]


def _agent_label(agent: Agent) -> str:
    return str(getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__))


def _check_agent(agent: Agent) -> None:
    if not isinstance(agent, ProbabilityAgent):
        raise AgentSpecError(f"match analysis needs an agent with probabilities (gnubg or a neural model); "
                             f"{_agent_label(agent)!r} has none")


# ------------------------------------------------------------------------------------------------------------
# the plan: every job of every record
# ------------------------------------------------------------------------------------------------------------


class _Jobs:
    """Ranking jobs (position, roll, cube) of one agent, and which of them keep their whole ranking."""

    def __init__(self) -> None:
        self.boards: list[np.ndarray] = []
        self.dice: list[tuple[int, int]] = []
        self.states: list[CubeState] = []
        self.keep: list[bool] = []

    def add(self, board: np.ndarray, dice: tuple[int, int], state: CubeState, keep: bool = False) -> int:
        self.boards.append(board)
        self.dice.append(dice)
        self.states.append(state)
        self.keep.append(keep)
        return len(self.boards) - 1


class _Plan:
    """All jobs of a list of records: ranking jobs of the analysing agent (``main``: the plays made, the cube
    positions) and of the luck agent (``luck``: every roll of every luck measurement; the same list as ``main``
    when the analysing agent is the 0-ply agent), and per record the list of its items (:func:`_plan_record`)."""

    def __init__(self, separate_luck: bool) -> None:
        self.main = _Jobs()
        self.luck = _Jobs() if separate_luck else self.main
        self.cube_boards: list[np.ndarray] = []
        self.cube_states: list[CubeState] = []
        self.items: list[list[tuple]] = []

    def cube_job(self, board: np.ndarray, state: CubeState) -> int:
        self.cube_boards.append(board)
        self.cube_states.append(state)
        return len(self.cube_boards) - 1


def _plan_record(plan: _Plan, record: MatchRecord) -> None:
    """Add the jobs of one record.  Its items: ``('game', GameRecord)`` at the start of each game;
    ``('move', decision, luck_jobs, luck_actual, play_job)`` per roll (``luck_jobs``: ``(job, weight, sign)``
    of every roll the luck is measured against, in ``plan.luck``; ``luck_actual``: the roll made among them;
    ``play_job``: the ranking of the roll made in ``plan.main``, None for a roll not played);
    ``('cube', decision, kind, cube_job)`` per cube decision."""
    items: list[tuple] = []
    start = starting_board()
    last_game = 0
    double_job: int | None = None
    rolled = False
    shared = plan.luck is plan.main
    for d in replay(record):
        if d.game != last_game:
            items.append(("game", record.games[d.game - 1]))
            last_game = d.game
            double_job = None
            rolled = False
        a = d.action
        if isinstance(a, (Move, Roll)):
            state = d.cube
            board = np.array(d.board, dtype=np.int8)
            played = isinstance(a, Move)
            # no cube decision when the dice were already recorded (a Roll action before this Move)
            if played and not rolled and state.may_double() and not np.array_equal(board, start):
                items.append(("cube", d, "no double", plan.cube_job(board, state)))
            roll = (max(a.dice), min(a.dice))
            jobs = []
            actual = -1
            if np.array_equal(board, start) and roll[0] != roll[1]:
                opp_board, opp_state = flip(board), state.swapped()
                for r in _OPENING:
                    k = plan.luck.add(board, r, state, keep=shared and played and r == roll)
                    jobs.append((k, 1.0, 1.0))
                    actual = k if r == roll else actual
                for r in _OPENING:
                    jobs.append((plan.luck.add(opp_board, r, opp_state), 1.0, -1.0))
            else:
                for r, w in zip(_ROLLS, _WEIGHTS):
                    k = plan.luck.add(board, r, state, keep=shared and played and r == roll)
                    jobs.append((k, w, 1.0))
                    actual = k if r == roll else actual
            play_job = None
            if played:
                play_job = actual if shared else plan.main.add(board, roll, state, keep=True)
            rolled = not played
            items.append(("move", d, jobs, actual, play_job))
        if isinstance(a, Double):
            double_job = plan.cube_job(np.array(d.board, dtype=np.int8), d.cube)
            items.append(("cube", d, "double", double_job))
        elif isinstance(a, (Take, Drop)) and double_job is not None:
            items.append(("cube", d, "take" if isinstance(a, Take) else "pass", double_job))
    plan.items.append(items)


# ------------------------------------------------------------------------------------------------------------
# evaluation units (in this process or in workers)
# ------------------------------------------------------------------------------------------------------------


def _cubeless_key(probs: np.ndarray, state: CubeState) -> np.ndarray:
    """GNU Backgammon's secondary sort key of plays (``rScore2``, ``Utility``): the mover's cubeless equity with
    the gammon prices of the state (money: gammons count 0 under the Jacoby rule with a centred cube; match: the
    normalised equity of the cubeless MWC)."""
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if state.is_money:
        gp = 0.0 if (state.jacoby and state.owner == CENTRED) else 1.0
        return 2.0 * p[:, 0] - 1.0 + gp * (p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4])
    scale = _cost_scale(state)
    return (cubeless_mwc(p, state) - _mwc_mid(state)) / scale


def _order(ranking: list[tuple], state: CubeState) -> list[tuple]:
    """Plays best first as GNU Backgammon sorts them (``CompareMoves``): by cubeful equity, equal equities (to
    1e-9) by cubeless equity (:func:`_cubeless_key`), then in the order generated."""
    if len(ranking) < 2 or any(r[3] is None for r in ranking):
        return ranking
    second = _cubeless_key(np.stack([r[3] for r in ranking]), state)
    order = sorted(range(len(ranking)), key=lambda i: (-round(ranking[i][1], 9), -second[i], i))
    return [ranking[i] for i in order]


def _unit(agent: Agent, boards: np.ndarray, dice: np.ndarray, states: list, keep: np.ndarray):
    """Rank one unit of jobs: ``(best equity per job (J,), {job: [(afterstate bytes, equity, mwc), ...]})``
    with the full ranking (in :func:`_order`) kept for the jobs marked in ``keep``."""
    ranked = _rank(agent, boards, dice, states)
    best = np.array([r[0][1] for r in ranked], dtype=np.float64)
    kept = {int(i): [(a.tobytes(), eq, mwc) for a, eq, mwc, _ in _order(ranked[i], states[i])]
            for i in np.flatnonzero(keep)}
    return best, kept


def _worker_agents(specs: dict[str, str]) -> dict[str, Agent]:
    """The worker context of the ranking units: the agents built from their specs (one object per spec)."""
    built: dict[str, Agent] = {}
    return {which: built.setdefault(spec, make_agent(spec)) for which, spec in specs.items()}


def _run_rank_unit(agents: dict[str, Agent], args):
    """One ranking unit as a :func:`~bgai.util.parallel.run_units` unit."""
    which, u, boards, dice, states, keep = args
    return _unit(agents[which], boards, dice, states, keep)


def _encode_unit(res) -> dict:
    """A ranking unit's result for a journal, exactly (floats as IEEE bytes or round-trip JSON numbers)."""
    best, kept = res
    arr = np.ascontiguousarray(best, dtype="<f8")
    return {"best": base64.b64encode(arr.tobytes()).decode("ascii"),
            "kept": [[i, [[base64.b64encode(a).decode("ascii"), eq, mwc] for a, eq, mwc in ranking]]
                     for i, ranking in sorted(kept.items())]}


def _decode_unit(data: dict):
    best = np.frombuffer(base64.b64decode(data["best"]), dtype="<f8").astype(np.float64)
    kept = {int(i): [(base64.b64decode(a), eq, mwc) for a, eq, mwc in ranking] for i, ranking in data["kept"]}
    return best, kept


def _units_sha256(units: list) -> str:
    """sha256 of the ranking units' inputs (positions, rolls, cube states, which rankings are kept)."""
    h = hashlib.sha256()
    for which, u, boards, dice, states, keep in units:
        h.update(f"{which}:{u}:{len(boards)};".encode())
        h.update(np.ascontiguousarray(boards, dtype=np.int8).tobytes())
        h.update(np.ascontiguousarray(dice, dtype=np.int8).tobytes())
        h.update(np.ascontiguousarray(keep, dtype=bool).tobytes())
        h.update(repr(list(states)).encode())
    return h.hexdigest()


def _rank_units(lists: dict, chunk: int) -> list[tuple]:
    """The ranking units of the job lists ``{which: jobs}``: ``(which, unit, boards, dice, states, keep)`` of at most
    ``chunk`` jobs each, in order."""
    units = []
    for which, jobs in lists.items():
        n = len(jobs.boards)
        boards = np.stack(jobs.boards) if n else np.zeros((0, 2, 25), dtype=np.int8)
        dice = np.array(jobs.dice, dtype=np.int8).reshape(n, 2)
        keep = np.array(jobs.keep, dtype=bool)
        units += [(which, u, boards[s:s + chunk], dice[s:s + chunk], jobs.states[s:s + chunk], keep[s:s + chunk])
                  for u, s in enumerate(range(0, n, chunk))]
    return units


def _open_journal(journal: str | None, units: list[tuple], specs: dict[str, str | None], chunk: int,
                  take: Callable) -> Journal | None:
    """The analysis journal (None without one), its finished units already passed to ``take(which, unit, result)``.

    The agents are keyed by model sha256 and options, not by the specs as typed; the records by their jobs' sha256,
    not by their files' names (a unit's result depends on neither name)."""
    if journal is None:
        return None
    identities = {w: agent_identity(spec) if spec else None for w, spec in specs.items()}
    settings = {"agents": identities, "chunk": chunk, "units": len(units), "jobs_sha256": _units_sha256(units)}
    book = Journal(journal, "analyse", settings)
    for k in sorted(book.done):
        if 0 <= k < len(units):
            take(units[k][0], units[k][1], _decode_unit(book.done[k]))
    return book


def _evaluate(plan: _Plan, agents: dict[str, Agent], *, specs: dict[str, str | None], workers: int, chunk: int,
              progress: Callable[[int], None] | None, backend: str = "local", journal: str | None = None):
    """Run every ranking unit (those recorded in ``journal`` taken from it, the others recorded there as they
    finish) and the cube jobs.

    Returns:
        ``(best, kept, cube)``: ``best[which]`` the best play's equity per job of ``plan.main`` / ``plan.luck``,
        ``kept[which]`` ``{job: ranking}`` for the jobs that keep theirs, ``cube`` the cube equities per cube job.
    """
    lists = {"main": plan.main} if plan.luck is plan.main else {"main": plan.main, "luck": plan.luck}
    best = {w: np.zeros(len(j.boards)) for w, j in lists.items()}
    kept: dict[str, dict[int, list]] = {w: {} for w in lists}
    units = _rank_units(lists, chunk)

    def take(which: str, u: int, res) -> None:
        b, k = res
        s = u * chunk
        best[which][s:s + len(b)] = b
        kept[which].update({s + i: v for i, v in k.items()})
        if progress is not None:
            progress(len(b))

    book = _open_journal(journal, units, {w: specs.get(w) for w in lists}, chunk, take)
    todo = [k for k in range(len(units)) if book is None or k not in book.done]

    def collect(i: int, res) -> None:
        k = todo[i]
        if book is not None:
            book.record(k, _encode_unit(res))
        take(units[k][0], units[k][1], res)

    try:
        remote = backend != "local" or (workers > 1 and len(todo) > 1)
        if remote and not all(specs.get(w) for w in lists):
            raise BgaiError("workers > 1 needs the agent's spec string (an agent made by make_agent)")
        init = {w: specs[w] for w in lists} if remote else {}
        if todo:
            run = run_units(_run_rank_unit, [units[k] for k in todo], workers=workers if remote else 1,
                            setup=_worker_agents, setup_args=(init,), context=None if remote else agents,
                            backend=backend, on_result=collect)
            if run.interrupted:
                raise KeyboardInterrupt(f"analysis interrupted ({run.interrupted})")
    finally:
        if book is not None:
            book.close()
    m = len(plan.cube_boards)
    cube = {"nd": np.zeros(m), "dt": np.zeros(m), "dp": np.zeros(m), "mwc": np.full((m, 3), np.nan),
            "action": [""] * m}
    cb = np.stack(plan.cube_boards) if m else np.zeros((0, 2, 25), dtype=np.int8)
    for s in range(0, m, chunk):
        part = _cube(agents["main"], cb[s:s + chunk], plan.cube_states[s:s + chunk])
        for key in ("nd", "dt", "dp", "mwc"):
            cube[key][s:s + chunk] = part[key]
        cube["action"][s:s + chunk] = part["action"]
    return best, kept, cube


# ------------------------------------------------------------------------------------------------------------
# assembling the results
# ------------------------------------------------------------------------------------------------------------


def _move_analysis(d: Decision, jobs, actual: int, play_job: int | None, best: dict, kept: dict) -> MoveAnalysis:
    state = d.cube
    scale = _cost_scale(state)
    a = d.action
    board = np.array(d.board, dtype=np.int8)
    luck_best = best.get("luck", best["main"])
    total_w = sum(w for _, w, _ in jobs)
    mean = sum(w * s * luck_best[k] for k, w, s in jobs) / total_w
    luck = float(luck_best[actual] - mean)
    luck_cost = luck * scale
    if isinstance(a, Roll):
        return MoveAnalysis(game=d.game, move_number=d.move_number, player=d.player, dice=a.dice, board=board,
                            cube=state, plays=0, played=None, best=None, equity=None, best_equity=None, error=0.0,
                            cost=0.0, skill="", top=(), luck=luck, luck_cost=luck_cost, luck_mark=_luck_mark(luck))
    ranking = kept["main"][play_job]
    names = {p.afterstate.tobytes(): p.notation for p in legal_plays(board, a.dice)}
    key = np.asarray(d.play.afterstate, dtype=np.int8).tobytes()
    played = next(r for r in ranking if r[0] == key)
    top = tuple(RankedOption(names.get(r[0], ""), r[1], r[2]) for r in ranking[:5])
    error = max(0.0, ranking[0][1] - played[1]) if len(ranking) > 1 else 0.0
    return MoveAnalysis(game=d.game, move_number=d.move_number, player=d.player, dice=a.dice, board=board,
                        cube=state, plays=len(ranking), played=d.play.notation, best=top[0].play,
                        equity=played[1], best_equity=ranking[0][1], error=error, cost=error * scale,
                        skill=_skill(error), top=top, luck=luck, luck_cost=luck_cost, luck_mark=_luck_mark(luck))


def _cube_action(d: Decision, kind: str, j: int, cube: dict) -> CubeAction:
    state = d.cube
    nd, dt, dp = float(cube["nd"][j]), float(cube["dt"][j]), float(cube["dp"][j])
    available = state.may_double()
    should_double = available and dt >= nd and dp >= nd
    opt = min(dt, dp) if should_double else nd
    should_take = dt < dp
    error, err_kind = 0.0, ""
    if kind == "no double":
        if nd < opt:
            error, err_kind = opt - nd, (MISSED_ABOVE_CP if dt > 1.0 else MISSED_BELOW_CP)
        close = opt - min(dt, 1.0) < CLOSE_CUBE_THRESHOLD
    else:
        close = True
        if kind == "double" and min(dt, dp) < opt:
            error, err_kind = opt - min(dt, dp), (WRONG_ABOVE_TG if nd > 1.0 else WRONG_BELOW_DP)
        elif kind == "take" and dt > dp:
            error, err_kind = dt - dp, WRONG_TAKE
        elif kind == "pass" and dp > dt:
            error, err_kind = dp - dt, WRONG_PASS
    mwc = None if state.is_money else tuple(float(v) for v in cube["mwc"][j])
    return CubeAction(game=d.game, move_number=d.move_number, player=d.player, action=kind, doubler=d.on_roll,
                      board=np.array(d.board, dtype=np.int8), cube=state, no_double=nd, double_take=dt,
                      double_pass=dp, mwc=mwc, available=available, proper=cube["action"][j],
                      should_double=should_double, should_take=should_take, error=error,
                      cost=error * _cost_scale(state), skill=_skill(error), close=close, kind=err_kind)


def _game_result(record: MatchRecord, g) -> tuple[float, float]:
    """Actual result of game ``g`` for (player 0, player 1): MWC change (match) or points (money)."""
    if g.result is None:
        return 0.0, 0.0
    w, pts = g.result.winner, g.result.points
    if record.length == 0:
        return (float(pts), -float(pts)) if w == 0 else (-float(pts), float(pts))
    met = met_for(CubeState(match_length=record.length))
    n = record.length
    aw, al = n - g.score[w], n - g.score[1 - w]
    post = (aw == 1 or al == 1) and not g.crawford
    before = met.mwc(aw, al, post_crawford=post)
    after = met.mwc_after(aw, al, pts, crawford=g.crawford)
    gain = after - before
    return (gain, -gain) if w == 0 else (-gain, gain)


def _assemble(record: MatchRecord, items: list[tuple], best: dict, kept: dict, cube: dict, source: str,
              agent: str) -> MatchAnalysis:
    decisions: list = []
    stats = tuple(PlayerStats(name=record.players[p], money=record.length == 0) for p in (0, 1))
    game_luck = [0.0, 0.0]
    game = None

    def close_game() -> None:
        if game is None:
            return
        actual = _game_result(record, game)
        for p in (0, 1):
            stats[p].actual_result += actual[p]
            stats[p].luck_adjusted += actual[p] - game_luck[p] + game_luck[1 - p]
            stats[p].games += 1

    for item in items:
        if item[0] == "game":
            close_game()
            game = item[1]
            game_luck = [0.0, 0.0]
        elif item[0] == "move":
            _, d, jobs, actual, play_job = item
            m = _move_analysis(d, jobs, actual, play_job, best, kept)
            decisions.append(m)
            st = stats[m.player]
            if m.played is not None:  # GNU Backgammon's statistics leave out the luck of a roll not played
                st.rolls += 1
                st.luck += m.luck
                st.luck_cost += m.luck_cost
                st.luck_marks[m.luck_mark] += 1
                game_luck[m.player] += m.luck_cost
                st.moves += 1
                st.marks[m.skill] += 1
                if not m.forced:
                    st.unforced += 1
                    st.checker_error += m.error
                    st.checker_cost += m.cost
        else:
            _, d, kind, j = item
            c = _cube_action(d, kind, j, cube)
            decisions.append(c)
            st = stats[c.player]
            st.cube_total += 1
            st.cube_close += int(c.close)
            st.doubles += int(kind == "double")
            st.takes += int(kind == "take")
            st.passes += int(kind == "pass")
            if c.kind:
                e = st.cube_errors[c.kind]
                e[0] += 1
                e[1] += c.error
                e[2] += c.cost
    close_game()
    both = stats[0].moves + stats[1].moves
    for st in stats:
        st.all_moves = both
    return MatchAnalysis(source=source, players=record.players, length=record.length, games=len(record.games),
                         decisions=decisions, stats=stats, agent=agent)


# ------------------------------------------------------------------------------------------------------------
# entry points
# ------------------------------------------------------------------------------------------------------------


def _zero_ply(agent: Agent, spec: str | None, luck_agent: Agent | str | None) -> tuple[Agent | None, str | None]:
    """The 0-ply agent that measures luck (None: ``agent`` itself) and its spec."""
    if luck_agent is not None:
        if isinstance(luck_agent, str):
            return make_agent(luck_agent), luck_agent
        return luck_agent, getattr(luck_agent, "spec", None)
    if spec is None:
        if getattr(agent, "ply", 0):
            raise BgaiError(f"agent {_agent_label(agent)!r} searches at ply {agent.ply}: give its spec (or a 0-ply "
                            "luck_agent) so that luck is measured at 0-ply")
        return None, None
    name, options = parse_spec(resolve_spec(spec))
    if not options.get("ply"):
        return None, None
    rest = {k: v for k, v in options.items() if k != "ply"}
    zero = name + (":" + ",".join(f"{k}={v}" for k, v in rest.items()) if rest else "")
    return make_agent(zero), zero


def analyse_records(records: Sequence[MatchRecord], agent: Agent | str, *, sources: Sequence[str] | None = None,
                    workers: int = 1, chunk: int = DEFAULT_CHUNK, luck_agent: Agent | str | None = None,
                    progress: Callable[[int], None] | None = None,
                    on_total: Callable[[int], None] | None = None, backend: str = "local",
                    journal: str | None = None) -> list[MatchAnalysis]:
    """Analyse matches (all their decisions batched together).

    Args:
        records: the matches (:class:`~bgai.formats.matchrecord.MatchRecord`).
        agent: an agent with probabilities, or its spec (``'gnubg'``, ``'model.pt:ply=1'``).
        sources: a label per record (file names); default ``'match 1'``, ...
        luck_agent: the agent that measures luck, at 0-ply as GNU Backgammon does; default: ``agent`` itself, or
            for a spec with ``ply=N`` (N > 0) the same spec at 0-ply.
        workers: processes to rank in (>= 1; the agent is rebuilt from its spec in each).
        chunk: jobs (position, roll, cube) per agent call.
        progress: called with the number of jobs done after each unit.
        on_total: called once with the total number of jobs, before the first unit.
        backend: :func:`bgai.util.parallel.run_units` backend of the ranking units (``'local'``; ``'ray'`` once
            :func:`bgai.util.ray_backend.connect` ran: ``workers`` Ray actors).
        journal: a journal file (:class:`bgai.util.journal.Journal`): each finished ranking unit is appended to
            it; the units it holds already (an analysis of the same records, agents (model files by sha256) and
            ``chunk`` that was stopped, even killed) are taken from it, not run.  The results are those of an
            uninterrupted analysis, bit for bit.

    Returns:
        One :class:`MatchAnalysis` per record.  Results do not depend on ``workers``.

    Raises:
        AgentSpecError: an agent without probabilities, a bad spec; BgaiError: ``workers > 1`` with an agent that
        has no spec, bad arguments, a journal of another analysis; MatchRecordError: a record that does not
        replay; MatchStateError: a match longer than the match equity table.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise BgaiError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise BgaiError(f"chunk must be a positive integer, got {chunk!r}")
    spec = agent if isinstance(agent, str) else getattr(agent, "spec", None)
    agent_obj = make_agent(agent) if isinstance(agent, str) else agent
    _check_agent(agent_obj)
    luck_obj, luck_spec = _zero_ply(agent_obj, spec, luck_agent)
    if luck_obj is not None:
        _check_agent(luck_obj)
    sources = list(sources) if sources is not None else [f"match {i + 1}" for i in range(len(records))]
    if len(sources) != len(records):
        raise BgaiError(f"{len(sources)} sources for {len(records)} records")
    plan = _Plan(separate_luck=luck_obj is not None)
    for rec in records:
        if not isinstance(rec, MatchRecord):
            raise BgaiError(f"expected a MatchRecord, got {type(rec).__name__}")
        _plan_record(plan, rec)
    if on_total is not None:
        on_total(len(plan.main.boards) + (len(plan.luck.boards) if luck_obj is not None else 0))
    agents = {"main": agent_obj, "luck": luck_obj or agent_obj}
    best, kept, cube = _evaluate(plan, agents, specs={"main": spec, "luck": luck_spec or spec}, workers=workers,
                                 chunk=chunk, progress=progress, backend=backend, journal=journal)
    label = _agent_label(agent_obj)
    return [_assemble(rec, items, best, kept, cube, src, label)
            for rec, items, src in zip(records, plan.items, sources)]


_MAT_HEAD = re.compile(rb"\d+\s+point\s+match", re.IGNORECASE)


def _is_match_file(path: str) -> bool:
    """A folder's file to analyse: ``.sgf``, ``.mat``, ``.gam``, or a ``.txt`` file that starts like a ``.mat``
    file (an ``N point match`` line in its first 4 KB; other text files in the folder are skipped)."""
    low = path.lower()
    if not low.endswith(MATCH_FILE_SUFFIXES) or not os.path.isfile(path):
        return False
    if not low.endswith(".txt"):
        return True
    try:
        with open(path, "rb") as fh:
            return _MAT_HEAD.search(fh.read(4096)) is not None
    except OSError:
        return False


def match_files(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The match files named: files as given, folders expanded to their match files (``.sgf .mat .gam``, and
    ``.txt`` files that start like a ``.mat`` file; sorted, not recursive; where a folder has ``NAME.sgf`` and
    another file ``NAME.*`` of the same name, the same match in two formats, only the ``.sgf`` is taken).

    Raises:
        BgaiError: a path that does not exist, or a folder with no match file.
    """
    out: list[str] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p) if _is_match_file(os.path.join(p, f)))
            # the same match saved in both formats (bgai eval --save-format mat,sgf): analysed once, from .sgf
            sgf_stems = {os.path.splitext(f)[0] for f in found if f.lower().endswith(".sgf")}
            found = [f for f in found if f.lower().endswith(".sgf") or os.path.splitext(f)[0] not in sgf_stems]
            if not found:
                raise BgaiError(f"no match files ({', '.join(MATCH_FILE_SUFFIXES)}) in folder {p!r}")
            out.extend(found)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise BgaiError(f"no such file or folder: {p!r}")
    return out


def analyse_files(paths: Iterable[str | os.PathLike], agent: Agent | str, **kwargs) -> list[MatchAnalysis]:
    """Read the match files (folders expanded: :func:`match_files`) and analyse them all in one batch
    (:func:`analyse_records`; same keyword arguments).

    Raises:
        BgaiError, MatchRecordError: unreadable or bad files (the message names the file); see
        :func:`analyse_records`.
    """
    files = match_files(paths)
    records = [read_match(f) for f in files]
    return analyse_records(records, agent, sources=files, **kwargs)


def total_by_player(analyses: Sequence[MatchAnalysis]) -> list[PlayerStats]:
    """Every player's statistics summed over the analyses (players matched by name; money and match play kept
    apart), in order of first appearance."""
    out: dict[tuple[str, bool], PlayerStats] = {}
    for a in analyses:
        for st in a.stats:
            key = (st.name, st.money)
            if key not in out:
                out[key] = PlayerStats(name=st.name, money=st.money, files=0)
            out[key].add(st)
    return list(out.values())


# ------------------------------------------------------------------------------------------------------------
# text report
# ------------------------------------------------------------------------------------------------------------


def _unit_label(money: bool) -> str:
    return "EMG (Points)" if money else "EMG (MWC)"


def _cost_text(cost: float, money: bool, digits: int = 3) -> str:
    return f"{cost:+.{digits}f}" if money else f"{100 * cost:+.{digits}f}%"


def _total(err: float, cost: float, money: bool) -> str:
    return f"{-err:+.3f} ({_cost_text(-cost, money)})"


def _rate(err: float, cost: float, n: int, money: bool) -> str:
    if not n:
        return "n/a"
    return f"{-1000 * err / n:+.1f} ({_cost_text(-cost / n, money)})"


_CUBE_LABELS = {MISSED_BELOW_CP: "Missed doubles below CP", MISSED_ABOVE_CP: "Missed doubles above CP",
                WRONG_BELOW_DP: "Wrong doubles below DP", WRONG_ABOVE_TG: "Wrong doubles above TG",
                WRONG_TAKE: "Wrong takes", WRONG_PASS: "Wrong passes"}


def _rows(a: MatchAnalysis) -> list[tuple[str, str | None, str | None]]:
    """The statistics table: (label, player 0, player 1); a None label cell is a section title."""
    s0, s1 = a.stats
    money = a.money
    u = _unit_label(money)
    rows: list[tuple[str, str | None, str | None]] = []

    def row(label: str, f: Callable[[PlayerStats], object]) -> None:
        rows.append((label, *(("n/a" if (v := f(s)) is None else str(v)) for s in (s0, s1))))

    rows.append(("Chequerplay statistics", None, None))
    row("Total moves", lambda s: s.moves)
    row("Unforced moves", lambda s: s.unforced)
    row("Unmarked moves", lambda s: s.marks[""])
    row("Moves marked doubtful", lambda s: s.marks["doubtful"])
    row("Moves marked bad", lambda s: s.marks["bad"])
    row("Moves marked very bad", lambda s: s.marks["very bad"])
    row(f"Error total {u}", lambda s: _total(s.checker_error, s.checker_cost, money))
    row(f"Error rate m{u}", lambda s: _rate(s.checker_error, s.checker_cost, s.unforced, money))
    row("Chequerplay rating", lambda s: s.rating("checker"))
    rows.append(("Luck statistics", None, None))
    row("Rolls marked very lucky", lambda s: s.luck_marks["very lucky"])
    row("Rolls marked lucky", lambda s: s.luck_marks["lucky"])
    row("Rolls unmarked", lambda s: s.luck_marks[""])
    row("Rolls marked unlucky", lambda s: s.luck_marks["unlucky"])
    row("Rolls marked very unlucky", lambda s: s.luck_marks["very unlucky"])
    row(f"Luck total {u}", lambda s: f"{s.luck:+.3f} ({_cost_text(s.luck_cost, money)})")
    row(f"Luck rate m{u}", lambda s: _rate(-s.luck, -s.luck_cost, s.moves, money))
    row("Luck rating", lambda s: s.luck_rating)
    rows.append(("Cube statistics", None, None))
    row("Total cube decisions", lambda s: s.cube_total)
    row("Close or actual cube decisions", lambda s: s.cube_close)
    row("Doubles", lambda s: s.doubles)
    row("Takes", lambda s: s.takes)
    row("Passes", lambda s: s.passes)
    for k in CUBE_ERROR_KINDS:
        row(f"{_CUBE_LABELS[k]} ({u})", lambda s, k=k: str(s.cube_errors[k][0]) if not s.cube_errors[k][0]
            else f"{s.cube_errors[k][0]} ({_total(s.cube_errors[k][1], s.cube_errors[k][2], money)})")
    row(f"Error total {u}", lambda s: _total(s.cube_error, s.cube_cost, money))
    row(f"Error rate m{u}", lambda s: _rate(s.cube_error, s.cube_cost, s.cube_close, money))
    row("Cube decision rating", lambda s: s.rating("cube"))
    rows.append(("Overall statistics", None, None))
    row(f"Error total {u}", lambda s: _total(s.total_error, s.total_cost, money))
    row(f"Error rate m{u}", lambda s: _rate(s.total_error, s.total_cost, s.decisions, money))
    row("PR (XG's Performance Rating)", lambda s: None if s.pr is None else f"{s.pr:.2f}")
    row("Snowie error rate", lambda s: None if s.snowie_rate is None else f"{-s.snowie_rate:+.1f}")
    row("Overall rating", lambda s: s.rating("overall"))
    if money:
        row("Actual result (points)", lambda s: f"{s.actual_result:+.3f}")
        row("Luck adjusted result (points)", lambda s: f"{s.luck_adjusted:+.3f}")
        if s0.games:
            row("Advantage (actual) in ppg", lambda s: f"{s.actual_result / s.games:+.3f}")
            row("Advantage (luck adjusted) in ppg", lambda s: f"{s.luck_adjusted / s.games:+.3f}")
    else:
        row("Actual result", lambda s: f"{100 * s.actual_result:+.2f}%")
        row("Luck adjusted result", lambda s: f"{100 * s.luck_adjusted:+.2f}%")
    return rows


def _describe_error(a: MatchAnalysis, e: MoveAnalysis | CubeAction) -> str:
    if isinstance(e, MoveAnalysis):
        return (f"game {e.game} move {e.move_number}, {e.dice[0]}{e.dice[1]}: played {e.played or '(no play)'} "
                f"({e.equity:+.3f}), best {e.best} ({e.best_equity:+.3f}): {e.error:.3f} {e.skill}".rstrip())
    return (f"game {e.game} move {e.move_number}, cube: {e.action} ({e.kind}); proper {e.proper}; "
            f"ND {e.no_double:+.3f} DT {e.double_take:+.3f} DP {e.double_pass:+.3f}: {e.error:.3f} {e.skill}")\
        .rstrip()


def _title(a: MatchAnalysis) -> str:
    kind = "money session" if a.money else f"{a.length}-point match"
    return (f"{a.source}: {kind}, {a.players[0]} vs {a.players[1]}, {a.games} game{'s' if a.games != 1 else ''}; "
            f"analysed by {a.agent}")


def format_report(a: MatchAnalysis, *, worst: int = WORST_PER_PLAYER) -> str:
    """GNU Backgammon-like statistics of one analysed match (``show statistics match``), followed by each
    player's ``worst`` largest errors.  Error figures are shown as losses (negative), as GNU Backgammon does."""
    lines = [_title(a), "", f"{'Player':<40} {a.players[0]:<23} {a.players[1]:<23}"]
    for label, x, y in _rows(a):
        if x is None:
            lines += ["", label, ""]
        else:
            lines.append(f"{label:<40} {x:<23} {y:<23}".rstrip())
    lines += ["", f"Worst errors ({_unit_label(a.money)} lost)"]
    for p in (0, 1):
        errs = a.worst(p, worst)
        lines.append(f"  {a.players[p]}:" + ("" if errs else " none"))
        lines += [f"    {_describe_error(a, e)}" for e in errs]
    return "\n".join(lines) + "\n"


def format_totals(analyses: Sequence[MatchAnalysis]) -> str:
    """One line per player over several files: decisions, error rates, PR, luck rate."""
    lines = [f"Totals over {len(analyses)} files", "",
             (f"{'Player':<24} {'files':>5} {'games':>5} {'decisions':>9} {'ER mEMG':>8} {'checker':>8} "
              f"{'cube':>8} {'PR':>6} {'luck/move':>9}")]

    def f(v: float | None, fmt: str) -> str:
        return "n/a" if v is None else format(v, fmt)

    for st in total_by_player(analyses):
        name = st.name + (" (money)" if st.money else "")
        lines.append(f"{name:<24} {st.files:>5} {st.games:>5} {st.decisions:>9} {f(st.error_rate, '.1f'):>8} "
                     f"{f(st.checker_rate, '.1f'):>8} {f(st.cube_rate, '.1f'):>8} {f(st.pr, '.2f'):>6} "
                     f"{f(st.luck_rate, '+.1f'):>9}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------------------
# JSON
# ------------------------------------------------------------------------------------------------------------


def _r(v: float | None, n: int = 6) -> float | None:
    return None if v is None else round(float(v), n)


def _stats_dict(st: PlayerStats) -> dict:
    return {
        "name": st.name, "moves": st.moves, "unforced_moves": st.unforced,
        "marks": {k or "none": v for k, v in st.marks.items()},
        "checker_error": _r(st.checker_error), "checker_cost": _r(st.checker_cost),
        "checker_error_rate": _r(st.checker_rate, 3),
        "cube_decisions": st.cube_total, "close_cube_decisions": st.cube_close, "doubles": st.doubles,
        "takes": st.takes, "passes": st.passes,
        "cube_errors": {k: {"count": v[0], "error": _r(v[1]), "cost": _r(v[2])} for k, v in st.cube_errors.items()},
        "cube_error": _r(st.cube_error), "cube_cost": _r(st.cube_cost), "cube_error_rate": _r(st.cube_rate, 3),
        "total_error": _r(st.total_error), "total_cost": _r(st.total_cost), "decisions": st.decisions,
        "error_rate": _r(st.error_rate, 3), "pr": _r(st.pr, 3), "snowie_error_rate": _r(st.snowie_rate, 3),
        "rating": st.rating("overall"), "checker_rating": st.rating("checker"), "cube_rating": st.rating("cube"),
        "rolls": st.rolls, "luck": _r(st.luck), "luck_cost": _r(st.luck_cost), "luck_rate": _r(st.luck_rate, 3),
        "luck_marks": {k or "none": v for k, v in st.luck_marks.items()}, "luck_rating": st.luck_rating,
        "actual_result": _r(st.actual_result), "luck_adjusted_result": _r(st.luck_adjusted), "games": st.games,
    }


def _move_dict(m: MoveAnalysis) -> dict:
    return {
        "game": m.game, "move_number": m.move_number, "player": m.player, "dice": list(m.dice),
        "position_id": m.position_id, "plays": m.plays, "forced": m.forced, "play": m.played, "best": m.best,
        "equity": _r(m.equity), "best_equity": _r(m.best_equity), "error": _r(m.error), "cost": _r(m.cost),
        "skill": m.skill, "top": [{"play": t.play, "equity": _r(t.equity), "mwc": _r(t.mwc)} for t in m.top],
        "luck": _r(m.luck), "luck_cost": _r(m.luck_cost), "luck_mark": m.luck_mark,
        "cube_value": m.cube.cube_value,
    }


def _cube_dict(c: CubeAction) -> dict:
    d = {
        "game": c.game, "move_number": c.move_number, "player": c.player, "action": c.action,
        "doubler": c.doubler, "position_id": c.position_id, "cube_value": c.cube.cube_value,
        "equities": {"no_double": _r(c.no_double), "double_take": _r(c.double_take),
                     "double_pass": _r(c.double_pass)},
        "proper": c.proper, "should_double": c.should_double, "should_take": c.should_take,
        "error": _r(c.error), "cost": _r(c.cost), "skill": c.skill, "close": c.close, "kind": c.kind,
    }
    if c.mwc is not None:
        d["mwc"] = dict(zip(("no_double", "double_take", "double_pass"), (_r(v) for v in c.mwc)))
    return d


def analysis_dict(a: MatchAnalysis) -> dict:
    """A JSON-ready dict of one analysis: match info, per-player statistics, every move and cube decision.

    Units: equities and errors in normalised equity (EMG); costs and luck costs in MWC (match play, 0..1) or
    points (money play)."""
    return {
        "source": a.source, "players": list(a.players), "match_length": a.length, "games": a.games,
        "agent": a.agent, "units": {"equity": "EMG", "cost": "points" if a.money else "MWC"},
        "stats": [_stats_dict(s) for s in a.stats],
        "moves": [_move_dict(m) for m in a.moves],
        "cube_decisions": [_cube_dict(c) for c in a.cube],
    }


def write_json(path: str | os.PathLike, analyses: Sequence[MatchAnalysis]) -> None:
    """Write ``{"files": [analysis_dict, ...], "totals": [...]}`` to ``path`` atomically.

    Raises:
        BgaiError: the file cannot be written (nothing is left behind).
    """
    data = {"files": [analysis_dict(a) for a in analyses],
            "totals": [_stats_dict(s) | {"files": s.files, "money": s.money} for s in total_by_player(analyses)]}
    atomic_write_json(path, data)


# ------------------------------------------------------------------------------------------------------------
# HTML with board pictures
# ------------------------------------------------------------------------------------------------------------

_PW, _BAR_W, _TRAY = 36, 40, 60  # point width, bar width, bear-off tray width
_X0, _Y0, _BH = 20, 22, 356  # board's left edge, top edge, height
_LEFT = _X0
_BAR_X = _X0 + 6 * _PW
_RIGHT = _BAR_X + _BAR_W
_EDGE = _RIGHT + 6 * _PW
_R = 16  # checker radius


def _point_x(p: int) -> float:
    """Centre x of the roller's point ``p`` (1..24): 1-6 bottom right, 7-12 bottom left, 13-18 top left,
    19-24 top right."""
    if p <= 6:
        return _EDGE - (p - 0.5) * _PW
    if p <= 12:
        return _BAR_X - (p - 6.5) * _PW
    if p <= 18:
        return _LEFT + (p - 12.5) * _PW
    return _RIGHT + (p - 18.5) * _PW


def _die_svg(x: float, y: float, v: int, size: float = 30) -> str:
    pips = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)], 4: [(0, 0), (0, 2), (2, 0), (2, 2)],
            5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)], 6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)]}[v]
    out = [f'<rect x="{x:.1f}" y="{y:.1f}" width="{size}" height="{size}" rx="5" fill="#fffdf5" stroke="#333"/>']
    step = size / 4
    for cx, cy in pips:
        out.append(f'<circle cx="{x + step * (cx + 1):.1f}" cy="{y + step * (cy + 1):.1f}" r="3" fill="#222"/>')
    return "".join(out)


def board_svg(board: np.ndarray, *, dice: tuple[int, int] | None = None, cube_value: int = 1,
              cube_owner: int = CENTRED, names: tuple[str, str] = ("", "")) -> str:
    """An inline SVG picture of a position from the side on roll's view (its checkers light, at the bottom;
    its home board bottom right; point numbers are its own).

    Args:
        board: ``(2, 25)`` int8, row 0 the side on roll.
        dice: the roll to draw, or None.
        cube_value, cube_owner: the cube (owner relative to the side on roll: -1 centred, 0 on roll, 1 opponent).
        names: (side on roll, opponent) shown with their pip counts.

    Returns:
        An ``<svg>`` element as text (no external resources).
    """
    b = np.asarray(board, dtype=np.int16).reshape(2, 25)
    width, height = _EDGE + _TRAY + 20, _Y0 + _BH + 40
    bottom, top = _Y0 + _BH, _Y0
    tri = 0.42 * _BH
    s = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
          f'height="{height}" role="img" font-family="sans-serif">'),
         f'<rect x="{_X0 - 8}" y="{_Y0 - 8}" width="{_EDGE - _X0 + 16}" height="{_BH + 16}" fill="#5b3a1a" rx="6"/>',
         f'<rect x="{_LEFT}" y="{top}" width="{6 * _PW}" height="{_BH}" fill="#e9dcb8"/>',
         f'<rect x="{_RIGHT}" y="{top}" width="{6 * _PW}" height="{_BH}" fill="#e9dcb8"/>',
         f'<rect x="{_BAR_X}" y="{top}" width="{_BAR_W}" height="{_BH}" fill="#6e4a24"/>',
         f'<rect x="{_EDGE + 10}" y="{top}" width="{_TRAY - 10}" height="{_BH}" fill="#6e4a24" rx="4"/>']
    for p in range(1, 25):
        x = _point_x(p)
        colour = "#a4412c" if p % 2 else "#2f5d50"
        if p <= 12:
            pts = f"{x - _PW / 2:.1f},{bottom} {x + _PW / 2:.1f},{bottom} {x:.1f},{bottom - tri:.1f}"
            ty = bottom + 15
        else:
            pts = f"{x - _PW / 2:.1f},{top} {x + _PW / 2:.1f},{top} {x:.1f},{top + tri:.1f}"
            ty = top - 7
        s.append(f'<polygon points="{pts}" fill="{colour}"/>')
        s.append(f'<text x="{x:.1f}" y="{ty}" font-size="11" text-anchor="middle" fill="#333">{p}</text>')

    def stack(x: float, n: int, from_bottom: bool, mine: bool, limit: int = 5) -> None:
        fill, stroke, ink = ("#f7f3ea", "#333", "#222") if mine else ("#2a2a2a", "#000", "#fff")
        for k in range(min(n, limit)):
            y = (bottom - _R - 2 * _R * k) if from_bottom else (top + _R + 2 * _R * k)
            s.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_R - 1}" fill="{fill}" stroke="{stroke}" '
                     'stroke-width="1.5"/>')
            if k == min(n, limit) - 1 and n > limit:
                s.append(f'<text x="{x:.1f}" y="{y + 5:.1f}" font-size="14" font-weight="bold" text-anchor="middle" '
                         f'fill="{ink}">{n}</text>')

    for p in range(1, 25):
        mine, theirs = int(b[0, p - 1]), int(b[1, 24 - p])
        if mine:
            stack(_point_x(p), mine, p <= 12, True)
        if theirs:
            stack(_point_x(p), theirs, p <= 12, False)
    bar_x = _BAR_X + _BAR_W / 2
    mid = _Y0 + _BH / 2
    for n, mine, sign in ((int(b[0, BAR]), True, -1), (int(b[1, BAR]), False, 1)):
        for k in range(min(n, 3)):
            y = mid + sign * (_R + 4 + 2 * _R * k)
            fill, ink = ("#f7f3ea", "#222") if mine else ("#2a2a2a", "#fff")
            s.append(f'<circle cx="{bar_x}" cy="{y:.1f}" r="{_R - 1}" fill="{fill}" stroke="#000"/>')
            if k == min(n, 3) - 1 and n > 1:
                s.append(f'<text x="{bar_x}" y="{y + 5:.1f}" font-size="13" font-weight="bold" text-anchor="middle" '
                         f'fill="{ink}">{n}</text>')
    tray_x = _EDGE + 10 + (_TRAY - 10) / 2
    off_me, off_opp = NUM_CHECKERS - int(b[0].sum()), NUM_CHECKERS - int(b[1].sum())
    for n, y, mine in ((off_me, bottom - 12, True), (off_opp, top + 22, False)):
        if n:
            fill = "#f7f3ea" if mine else "#2a2a2a"
            s.append(f'<rect x="{tray_x - 16}" y="{y - 14}" width="32" height="18" fill="{fill}" stroke="#000"/>')
            s.append(f'<text x="{tray_x}" y="{y}" font-size="12" text-anchor="middle" '
                     f'fill="{"#222" if mine else "#fff"}">{n} off</text>')
    cube_y = {CENTRED: mid - 16, ME: bottom - 80, 1: top + 48}.get(cube_owner, mid - 16)
    s.append(f'<rect x="{tray_x - 16}" y="{cube_y:.1f}" width="32" height="32" rx="4" fill="#fff" stroke="#000"/>')
    s.append(f'<text x="{tray_x}" y="{cube_y + 22:.1f}" font-size="15" font-weight="bold" text-anchor="middle">'
             f'{64 if cube_owner == CENTRED and cube_value == 1 else cube_value}</text>')
    if dice is not None:
        x = _RIGHT + 3 * _PW - 35
        s.append(_die_svg(x, mid - 15, int(dice[0])) + _die_svg(x + 40, mid - 15, int(dice[1])))
    pips = pip_counts(b.astype(np.int8))[0]
    me, opp = (html.escape(n) for n in names)
    s.append(f'<text x="{_LEFT}" y="{height - 3}" font-size="12" fill="#222">{me + " " if me else ""}(light, on roll) '
             f'pips {int(pips[0])}</text>')
    s.append(f'<text x="{_EDGE}" y="{height - 3}" font-size="12" text-anchor="end" fill="#222">'
             f'{opp + " " if opp else ""}(dark) pips {int(pips[1])}</text>')
    s.append("</svg>")
    return "".join(s)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1d;background:#fbfaf7}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid #d9cfb8}
h3{font-size:15px;margin:18px 0 6px} .sub{color:#555;margin:0 0 14px}
table.stats{border-collapse:collapse;font-size:13px} table.stats td,table.stats th{padding:3px 10px;
border-bottom:1px solid #e6e0d2;text-align:right} table.stats td:first-child,table.stats th:first-child{text-align:left}
table.stats tr.sec td{background:#efe8d8;font-weight:600;text-align:left}
.match{display:grid;grid-template-columns:minmax(380px,max-content) minmax(0,1fr);gap:28px;align-items:start}
.cards{display:flex;flex-wrap:wrap;gap:14px} h3:first-child{margin-top:0}
.card{background:#fff;border:1px solid #ddd3bd;border-radius:8px;padding:10px;width:470px}
.card svg{width:100%;height:auto;display:block}
.card p{margin:6px 0 0;font-size:13px} .err{font-weight:600;color:#a12a1a}
.doubtful{color:#8a6d00} .bad{color:#b5470f} .verybad{color:#b0120a;font-weight:600}
table.moves{border-collapse:collapse;font-size:12px} table.moves td,table.moves th{padding:2px 8px;
border-bottom:1px solid #eee;text-align:left} details{margin:8px 0}
"""


def _error_card(a: MatchAnalysis, e: MoveAnalysis | CubeAction) -> str:
    p = e.player
    if isinstance(e, MoveAnalysis):
        who = a.players[p]
        svg = board_svg(e.board, dice=e.dice, cube_value=e.cube.cube_value, cube_owner=e.cube.owner,
                        names=(who, a.players[1 - p]))
        rows = "".join(f"<tr><td>{i + 1}.</td><td>{html.escape(t.play or '(no play)')}</td>"
                       f"<td>{t.equity:+.3f}</td></tr>" for i, t in enumerate(e.top))
        text = (f"<p><b>Game {e.game}, move {e.move_number}</b>: {html.escape(who)} to play {e.dice[0]}-{e.dice[1]}."
                f"</p><p>Played <b>{html.escape(e.played or '(no play)')}</b> ({e.equity:+.3f}); best "
                f"<b>{html.escape(e.best or '')}</b> ({e.best_equity:+.3f}). <span class='err'>Error {e.error:.3f}"
                f"{' (' + e.skill + ')' if e.skill else ''}</span>, {_cost_text(-e.cost, a.money)}"
                f"{'' if a.money else ' MWC'}.</p><table class='moves'>{rows}</table>")
    else:
        doubler = a.players[e.doubler]
        svg = board_svg(e.board, cube_value=e.cube.cube_value, cube_owner=e.cube.owner,
                        names=(doubler, a.players[1 - e.doubler]))
        eq = (f"No double {e.no_double:+.3f}, double/take {e.double_take:+.3f}, double/pass {e.double_pass:+.3f}"
              + ("" if e.mwc is None else f" (MWC {100 * e.mwc[0]:.1f}% / {100 * e.mwc[1]:.1f}% / "
                 f"{100 * e.mwc[2]:.1f}%)"))
        text = (f"<p><b>Game {e.game}, move {e.move_number}</b>: cube decision of {html.escape(a.players[p])}: "
                f"<b>{e.action}</b> ({e.kind}).</p><p>{eq}.<br>Proper cube action: <b>{html.escape(e.proper)}</b>. "
                f"<span class='err'>Error {e.error:.3f}{' (' + e.skill + ')' if e.skill else ''}</span>, "
                f"{_cost_text(-e.cost, a.money)}{'' if a.money else ' MWC'}.</p>")
    return f"<div class='card'>{svg}{text}</div>"


def _moves_table(a: MatchAnalysis) -> str:
    rows = []
    for d in a.decisions:
        who = html.escape(a.players[d.player])
        if isinstance(d, CubeAction):
            if d.action == "no double" and d.error == 0:
                continue
            rows.append(f"<tr><td>{d.game}</td><td>{d.move_number}</td><td>{who}</td><td></td><td>{d.action} "
                        f"(proper: {html.escape(d.proper)})</td><td class='{d.skill.replace(' ', '')}'>{d.error:.3f}"
                        f"</td><td>{d.skill}</td><td></td></tr>")
            continue
        play = "(not played)" if d.played is None else (d.played or "(no play)")
        if not d.forced and d.played != d.best:
            play += f" (best: {d.best})"
        rows.append(f"<tr><td>{d.game}</td><td>{d.move_number}</td><td>{who}</td><td>{d.dice[0]}{d.dice[1]}</td>"
                    f"<td>{html.escape(play)}</td><td class='{d.skill.replace(' ', '')}'>"
                    f"{'' if d.forced else f'{d.error:.3f}'}</td><td>{d.skill}</td>"
                    f"<td>{d.luck:+.3f} {d.luck_mark}</td></tr>")
    head = ("<tr><th>Game</th><th>Move</th><th>Player</th><th>Roll</th><th>Decision</th><th>Error</th>"
            "<th>Mark</th><th>Luck</th></tr>")
    return f"<table class='moves'>{head}{''.join(rows)}</table>"


def _html_section(a: MatchAnalysis, worst: int) -> str:
    out = [f"<h2>{html.escape(os.path.basename(a.source) or a.source)}</h2>",
           f"<p class='sub'>{html.escape(_title(a))}</p>",
           (f"<div class='match'><div><table class='stats'><tr><th>Player</th><th>{html.escape(a.players[0])}</th>"
            f"<th>{html.escape(a.players[1])}</th></tr>")]
    for label, x, y in _rows(a):
        if x is None:
            out.append(f"<tr class='sec'><td colspan='3'>{html.escape(label)}</td></tr>")
        else:
            out.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(x)}</td><td>{html.escape(y or '')}</td></tr>")
    out.append("</table></div><div>")
    for p in (0, 1):
        errs = a.worst(p, worst)
        out.append(f"<h3>Worst errors of {html.escape(a.players[p])}</h3>")
        out.append("<div class='cards'>" + "".join(_error_card(a, e) for e in errs) + "</div>" if errs
                   else "<p>No errors.</p>")
    out.append("</div></div>")
    out.append(f"<details><summary>Every decision ({len(a.moves)} rolls, {len(a.cube)} cube decisions)</summary>"
               f"{_moves_table(a)}</details>")
    return "".join(out)


def render_html(analyses: Sequence[MatchAnalysis], *, worst: int = WORST_PER_PLAYER) -> str:
    """A self-contained HTML report (inline CSS and SVG, no scripts or external files): per file, the statistics
    table, each player's ``worst`` largest errors with a picture of the position, and every decision."""
    title = "Match analysis" if len(analyses) != 1 else f"Match analysis: {os.path.basename(analyses[0].source)}"
    body = [f"<h1>{html.escape(title)}</h1>",
            ("<p class='sub'>Equities are normalised (EMG, as GNU Backgammon's analysis); errors are equity lost. "
             "PR = 500 x equity lost per decision.</p>")]
    body += [_html_section(a, worst) for a in analyses]
    if len(analyses) > 1:
        body.append(f"<h2>Totals</h2><pre>{html.escape(format_totals(analyses))}</pre>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n")


def write_html(path: str | os.PathLike, analyses: Sequence[MatchAnalysis], *, worst: int = WORST_PER_PLAYER) -> None:
    """Write :func:`render_html` to ``path`` atomically.

    Raises:
        BgaiError: the file cannot be written.
    """
    atomic_write_bytes(path, render_html(analyses, worst=worst).encode("utf-8"))
