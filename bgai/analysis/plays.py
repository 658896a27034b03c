"""Ranked plays (hints): every legal play of a position with the agent's evaluation, best first.

What a play is ranked by (:attr:`RankedPlay.score_kind`):

* ``'equity'``: agents with probabilities (gnubg, neural models): cubeless money equity in points per game
  (:func:`bgai.core.equity.cubeless_equity`) -- or, when a money cube state is given, the mover's cubeful
  money equity per unit of the cube (GNU Backgammon's 0-ply cubeful checker play);
* ``'mwc'``: agents with probabilities and a match cube state: the mover's cubeful match-winning chance;
* ``'score'``: agents without probabilities (pubeval, the heuristics): the agent's own score, in its own
  units (not points per game); a cube state is not used.

An agent without any evaluation (``random``) cannot rank plays (:class:`~bgai.errors.AgentCapabilityError`).

The plays (steps, notation) come from the move generator's afterstates themselves (:func:`afterstate_plays`, the
same plays as :func:`bgai.core.movegen.legal_plays`), read when first asked for: one move generation per ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent
from bgai.analysis.plays_jit import SEARCH, direct_steps, unpack_steps
from bgai.core.board import as_batch, flip, validate
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import Play, afterstates
from bgai.errors import AgentCapabilityError, BgaiError, IllegalMoveError, InvalidDiceError
from bgai.game.cube import analyse_cube, cube_efficiency, match_equity_after, met_for
from bgai.util.jit import LazyKernel

__all__ = [
    "RankedPlay",
    "SCORE_KINDS",
    "rank_plays",
    "rank_plays_batch",
    "score_plays",
    "cubeful_afterstate_equities",
    "agent_at_ply",
    "afterstate_plays",
    "use_compiled",
]

#: The values :attr:`RankedPlay.score_kind` takes.
SCORE_KINDS = ("equity", "mwc", "score")


@dataclass(frozen=True, eq=False)
class RankedPlay:
    """One legal play with the agent's evaluation of it.

    Attributes:
        play: the :class:`bgai.core.movegen.Play` (``.steps``, ``.notation``, ``.afterstate`` from the mover's
            view); with no legal play, the one "play" with no steps that leaves the position unchanged.
        score: the value plays are ranked by (higher is better for the mover), in the unit ``score_kind``
            names.
        score_kind: ``'equity'`` (points per game: cubeless, or cubeful per unit of the cube with a money cube
            state), ``'mwc'`` (cubeful match-winning chance 0..1) or ``'score'`` (the agent's own units); a
            server listing the plays of an agent without evaluation (:meth:`bgai.serve.bot.Bot.rank_plays`)
            uses ``'none'`` with ``score`` NaN.
        probabilities: ``(5,)`` float64 cubeless outcome probabilities of the mover after the play
            (:data:`bgai.core.equity.OUTPUTS` order), or None for agents without probabilities.
        cubeless_equity: cubeless money equity (ppg) from the probabilities, or None.
        cubeful_equity: with a cube state (agents with probabilities): money play, the mover's cubeful equity per
            unit of the cube; match play, GNU Backgammon's normalised equity of the cubeful MWC; else None.
        mwc: match play with a cube state: the mover's cubeful match-winning chance; else None.
    """

    play: Play
    score: float
    score_kind: str
    probabilities: np.ndarray | None = None
    cubeless_equity: float | None = None
    cubeful_equity: float | None = None
    mwc: float | None = None

    @property
    def afterstate(self) -> np.ndarray:
        """``(2, 25)`` int8 position after the play, mover's view."""
        return self.play.afterstate

    @property
    def notation(self) -> str:
        """The play in standard notation (``''`` when no play is legal)."""
        return self.play.notation

    @property
    def equity(self) -> float | None:
        """The equity shown for the play: cubeful (with a cube state) or else cubeless, in points per game (match
        play: normalised equity); None for agents without probabilities (their value is :attr:`score`)."""
        return self.cubeful_equity if self.cubeful_equity is not None else self.cubeless_equity


def agent_at_ply(agent: Agent, ply: int | None) -> Agent:
    """``agent`` evaluating at ``ply`` (None: its own ply, ``agent.capabilities.ply``).

    Raises:
        AgentCapabilityError: the agent has no evaluation, or cannot evaluate at ``ply``.
    """
    caps = agent.capabilities
    if ply is None or ply == caps.ply:
        return agent
    if not caps.probabilities:
        raise AgentCapabilityError(
            f"agent {getattr(agent, 'name', agent)!r} evaluates at {caps.ply}-ply only, not {ply}-ply")
    return agent.at_ply(ply)


def score_plays(agent: Agent, boards: np.ndarray, after: np.ndarray, src: np.ndarray):
    """The agent's value of each afterstate: ``(scores (M,) float64, probabilities (M, 5) or None)``.

    Agents with probabilities (``agent.capabilities.probabilities``): cubeless equity and the probabilities;
    other agents that score plays: ``agent.evaluate_plays(boards, after, src)`` (pubeval's and the heuristics'
    scores depend on the position before the play).

    Raises:
        AgentCapabilityError: the agent has no evaluation (e.g. ``random``).
    """
    caps = agent.capabilities
    if caps.probabilities:
        probs = np.asarray(agent.afterstate_probabilities(after), dtype=np.float64)
        return cubeless_equity(probs), probs
    if caps.play_scores:
        return np.asarray(agent.evaluate_plays(boards, after, src), dtype=np.float64), None
    raise AgentCapabilityError(f"agent {getattr(agent, 'name', agent)!r} has no evaluation to rank plays with")


def cubeful_afterstate_equities(
    after: np.ndarray, probs: np.ndarray, state: CubeState
) -> tuple[np.ndarray, np.ndarray | None]:
    """The mover's cubeful equity of afterstates, GNU Backgammon's 0-ply cubeful checker-play evaluation.

    After the play the opponent is on roll and has the cube decision: its cubeful equity is that of the proper
    cube action (:func:`bgai.game.cube.analyse_cube` ``optimal``: no double, or the smaller of double/take and
    double/pass) with its cubeless probabilities and the cube efficiency of the position with it on roll;
    the mover gets the complement (GNU Backgammon ``eval.c`` ``EvaluatePositionCubeful4`` at 0 ply, not top
    level).

    Args:
        after: ``(M, 2, 25)`` int8 afterstates, mover's view (mover in row 0).
        probs: ``(M, 5)`` float64 cubeless probabilities of the mover after each play.
        state: :class:`~bgai.core.cube_state.CubeState` of the mover (before its roll).

    Returns:
        ``(equity (M,), mwc (M,) or None)``: money play: the mover's cubeful equity in ppg per unit of the
        present cube, ``mwc`` None; match play: the mover's cubeful MWC (0..1) and its normalised equity
        ``(2 MWC - (W + L)) / (W - L)`` with ``W``/``L`` the MWC after winning/losing the present cube.

    Raises:
        MatchStateError: a match longer than the match equity table.
    """
    after = np.asarray(after)
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if len(after) == 0:
        return np.zeros(0), (None if state.is_money else np.zeros(0))
    opp_boards = flip(after)
    opp = analyse_cube(swap_perspective(probs), state.swapped(), cube_efficiency(opp_boards))
    if state.is_money:
        return -opp.optimal, None
    opp_mwc = np.where(opp.double, np.minimum(opp.mwc_double_take, opp.mwc_double_pass), opp.mwc_no_double)
    mwc = 1.0 - opp_mwc
    met = met_for(state)
    a0, a1 = state.away
    win = match_equity_after(met, a0, a1, 0, state.cube_value, 0, state.crawford)
    lose = match_equity_after(met, a0, a1, 0, state.cube_value, 1, state.crawford)
    return (2.0 * mwc - (win + lose)) / (win - lose), mwc


def _cubeful_scores(after: np.ndarray, probs: np.ndarray, src: np.ndarray, cube_states, scores: np.ndarray,
                    kind: list[str]) -> tuple[list, list]:
    """Cubeful equity (and match winning chance) of each afterstate whose position has a cube state.

    ``scores`` and ``kind`` are updated in place: such afterstates are ranked by cubeful equity (money) or MWC
    (match, ``kind`` ``'mwc'``).  Returns ``(cubeful, mwcs)``, lists of ``len(after)`` floats or None (no state, or
    no MWC in money play)."""
    m = len(after)
    cubeful = np.full(m, np.nan)
    mwcs = np.full(m, np.nan)
    groups: dict[CubeState, list[int]] = {}
    for i, st in enumerate(cube_states):
        if st is not None:
            groups.setdefault(st, []).append(i)
    for st, idx in groups.items():
        rows = np.flatnonzero(np.isin(src, idx))
        eq, mwc = cubeful_afterstate_equities(after[rows], probs[rows], st)
        cubeful[rows] = eq
        if mwc is None:
            scores[rows] = eq
        else:
            mwcs[rows] = mwc
            scores[rows] = mwc
            for r in rows.tolist():
                kind[r] = "mwc"
    return [None if x != x else x for x in cubeful.tolist()], [None if x != x else x for x in mwcs.tolist()]


def rank_plays_batch(
    agent: Agent,
    boards: np.ndarray,
    dice,
    cube_states=None,
    *,
    ply: int | None = None,
) -> list[list[RankedPlay]]:
    """Every legal play of each position, ranked by the agent, best first; the whole batch in one agent call.

    Args:
        agent: an agent that scores plays (``agent.capabilities.play_scores``).
        boards: ``(N, 2, 25)`` int8 positions, side on roll in row 0 (validated).
        dice: ``N`` rolls (an ``(N, 2)`` array, or anything :meth:`bgai.core.dice.Dice.parse` reads, each).
        cube_states: optional ``N`` :class:`~bgai.core.cube_state.CubeState` (or None entries) of the side on
            roll: for agents with probabilities, positions with a state are ranked by the mover's cubeful equity
            (match play: by cubeful MWC), see :func:`cubeful_afterstate_equities`.  Agents without probabilities
            always rank by their own cubeless score.
        ply: evaluate at this ply (:func:`agent_at_ply`); None: the agent's own.

    Returns:
        ``N`` lists of :class:`RankedPlay` (a single entry, the unchanged position, where no play is legal).
        Ties keep the move generator's order.

    Raises:
        InvalidPositionError, InvalidDiceError: bad input; AgentCapabilityError: the agent cannot evaluate, or
        not at ``ply``; MatchStateError: a match longer than the match equity table.
    """
    agent = agent_at_ply(agent, ply)
    boards = validate(boards)
    n = len(boards)
    rolls = [Dice.parse(d) for d in dice]
    if len(rolls) != n:
        raise InvalidDiceError(f"{len(rolls)} rolls for {n} positions")
    if cube_states is not None and len(cube_states) != n:
        raise BgaiError(f"cube_states: {len(cube_states)} cube states for {n} positions")
    dice_arr = np.array([d.as_tuple() for d in rolls], dtype=np.int64).reshape(n, 2)
    after, src = afterstates(boards, dice_arr, validate=False)  # (validated above)
    scores, probs = score_plays(agent, boards, after, src)
    scores = np.array(scores, dtype=np.float64)
    m = len(scores)
    kind = ["score" if probs is None else "equity"] * m
    cubeless = None if probs is None else scores.tolist()
    cubeful = mwcs = None
    if cube_states is not None and probs is not None:
        cubeful, mwcs = _cubeful_scores(after, probs, src, cube_states, scores, kind)
    order = np.lexsort((np.arange(m), -scores, src)).tolist()
    # each afterstate's play (steps, notation) from the afterstates themselves: no second move generation
    bounds = np.searchsorted(src, np.arange(n + 1)).tolist()
    plays: list[Play] = []
    for j in range(n):
        plays.extend(afterstate_plays(boards[j], after[bounds[j] : bounds[j + 1]], rolls[j].as_tuple(), lazy=True))
    score_l = scores.tolist()
    prob_rows = None if probs is None else np.array(probs, dtype=np.float64)  # one copy; each play its own row
    src_l = src.tolist()
    out: list[list[RankedPlay]] = [[] for _ in range(n)]
    for i in order:
        out[src_l[i]].append(
            _ranked_play(
                plays[i],
                score_l[i],
                kind[i],
                None if prob_rows is None else prob_rows[i],
                None if cubeless is None else cubeless[i],
                None if cubeful is None else cubeful[i],
                None if mwcs is None else mwcs[i],
            )
        )
    return out


def _ranked_play(play, score, score_kind, probabilities, cubeless_equity, cubeful_equity, mwc) -> RankedPlay:
    """``RankedPlay(play, score, ...)`` with its fields in that order, made without the frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` call per field: about 3 us a play, a tenth of a ranking of one
    position); the same object."""
    rp = object.__new__(RankedPlay)
    rp.__dict__.update(play=play, score=score, score_kind=score_kind, probabilities=probabilities,
                       cubeless_equity=cubeless_equity, cubeful_equity=cubeful_equity, mwc=mwc)
    return rp


def rank_plays(
    agent: Agent,
    board: np.ndarray,
    dice,
    cube_state: CubeState | None = None,
    *,
    ply: int | None = None,
) -> list[RankedPlay]:
    """Every legal play of one position with the roll, ranked by the agent, best first.

    Args:
        agent: an agent that scores plays.
        board: ``(2, 25)`` int8 position, side on roll in row 0.
        dice: the roll (anything :meth:`bgai.core.dice.Dice.parse` reads).
        cube_state: the cube and score of the side on roll, or None for cubeless ranking (see
            :func:`rank_plays_batch`).
        ply: evaluate at this ply; None: the agent's own.

    Returns:
        The :class:`RankedPlay` list (one entry, the unchanged position, when no play is legal).

    Raises:
        see :func:`rank_plays_batch`.
    """
    b = as_batch(board)
    if b.shape[0] != 1:
        raise BgaiError(f"rank_plays takes one position, got {b.shape[0]}; use rank_plays_batch")
    return rank_plays_batch(agent, b, [dice], None if cube_state is None else [cube_state], ply=ply)[0]


# ----------------------------------------------------------------------------------------------------------
# the plays of the generator's afterstates (steps and notation without a second move generation)
# ----------------------------------------------------------------------------------------------------------


def afterstate_plays(board: np.ndarray, after: np.ndarray, dice, *, lazy: bool = False) -> list[Play]:
    """The :class:`~bgai.core.movegen.Play` of each afterstate of one position, as
    :func:`bgai.core.movegen.legal_plays` gives it (the same steps, in the same order, with the same hits),
    derived from the afterstates themselves instead of a second move generation.

    A play's steps follow from the difference between the board and the afterstate: the number of the mover's
    checkers that cross each point, and the opponent's blots that are gone.  ``legal_plays`` keeps, of the
    orders that reach an afterstate, the first its search finds (higher die first, sources from the back; a
    double with sources non-increasing) and lists its steps from the back; so a hit goes to the step that lands
    on the blot first, and a checker that uses both dice of a non-double goes through the point the higher die
    reaches unless that point is closed to it or holds a blot the play does not hit.  The usual plays (no
    checker on the bar for a non-double, nothing borne off) are read off directly; the others by a search for
    that one afterstate in ``legal_plays``'s order, pruned to the steps that can still reach it (a checker
    crossing a point can never cross back).  ``tests/test_afterstate_plays.py`` checks every play of thousands of
    positions and all 21 rolls against ``legal_plays``.

    Args:
        board: ``(2, 25)`` int8 position, side on roll in row 0 (valid).
        after: ``(M, 2, 25)`` int8 afterstates of ``board`` with ``dice``, e.g. the rows of
            :func:`bgai.core.movegen.afterstates` for it (mover's view).
        dice: ``(d1, d2)``, each 1..6.
        lazy: read each play's steps only when they are first asked for (``play.steps`` or ``play.notation``):
            a caller that wants the best play's notation only pays for that one (:func:`rank_plays` does this).

    Returns:
        ``M`` plays, in the order of ``after``; their ``afterstate`` is a read-only copy of the row.  An
        afterstate equal to ``board`` (nothing can be played) gets no steps.

    Raises:
        IllegalMoveError: a row that no legal play of the roll reaches (with ``lazy``, when its steps are asked
            for).
    """
    b = np.array(board, dtype=np.int8).reshape(2, 25)
    after = np.array(after, dtype=np.int8).reshape(-1, 2, 25)  # a copy: the plays keep read-only views of it
    after.setflags(write=False)
    d1, d2 = (int(x) for x in dice)
    reader = _StepReader(b, after, max(d1, d2), min(d1, d2))
    if lazy:
        return _lazy_plays(reader, after)
    return [Play(steps=reader.steps(i), afterstate=after[i]) for i in range(len(after))]


class _StepReader:
    """The steps of the afterstates of one position and roll (:func:`afterstate_plays`), one afterstate at a
    time: the first few read each compare their afterstate with the board; from the third on, the differences of
    all the afterstates are taken at once (one conversion to lists, about 0.04 ms)."""

    def __init__(self, board: np.ndarray, after: np.ndarray, hi: int, lo: int) -> None:
        self.after, self.hi, self.lo = after, hi, lo
        self.board = board
        self.me0, self.opp0 = board.tolist()
        self.net = None
        self.reads = 0
        self.codes = None  # the compiled reader's packed steps of every row (plays_jit.direct_steps)

    def _prepare(self) -> None:
        # one conversion, then plain Python: cheaper than numpy passes over a position's few tens of afterstates
        # (40 instead of 55 us), and much cheaper when the caches are cold (70 instead of 150 us)
        me0 = self.me0
        rows = self.after.tolist()
        self.opp_t = [r[1] for r in rows]
        # per afterstate: the mover's points that lost (> 0) or gained (< 0) checkers, highest point first
        cols = range(24, -1, -1)
        self.net = [[(c + 1, me0[c] - me_t[c]) for c in cols if me0[c] != me_t[c]] for me_t, _ in rows]
        total = sum(me0)
        self.off = [total - sum(me_t) for me_t, _ in rows]  # checkers borne off by each play

    def steps(self, i: int) -> tuple:
        """The steps of afterstate ``i`` (IllegalMoveError when no legal play reaches it)."""
        codes = self.codes
        if codes is None and self.net is None and self.reads == 0:
            kernel = _STEP_READER.get(len(self.after))
            if kernel is not None:  # every row at once (about as fast as one row in Python)
                codes = self.codes = kernel(self.board, self.after, self.hi, self.lo).tolist()
        if codes is not None:
            code = codes[i]
            if code != SEARCH:
                steps = _STEPS_OF_CODE.get(code)
                if steps is None:
                    if len(_STEPS_OF_CODE) >= _MAX_REMEMBERED:
                        _STEPS_OF_CODE.clear()
                    steps = _STEPS_OF_CODE[code] = unpack_steps(code)
                return steps
            me_t, opp_t = self.after[i].tolist()
            return _searched_steps(self.me0, self.opp0, me_t, opp_t, self.hi, self.lo)
        if self.net is None and self.reads < 2:
            self.reads += 1
            me0 = self.me0
            me_t, opp_t = self.after[i].tolist()
            net = [(p, me0[p - 1] - me_t[p - 1]) for p in range(25, 0, -1) if me0[p - 1] != me_t[p - 1]]
            off = sum(me0) - sum(me_t)
        else:
            if self.net is None:
                self._prepare()
            net, opp_t, off = self.net[i], self.opp_t[i], self.off[i]
        opp0 = self.opp0
        if not net and opp_t == opp0:
            return ()
        steps = None if off else _direct_steps(net, self.me0[24], opp0, opp_t, self.hi, self.lo)
        if steps is None:
            steps = _searched_steps(self.me0, opp0, self.after[i, 0].tolist(), opp_t, self.hi, self.lo)
        return steps


def _prime_step_reader(kernel) -> None:
    """One call of the compiled step reader (compiles it or reads its machine code from numba's cache), with the
    read-only afterstates :func:`afterstate_plays` passes."""
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 7] = board[1, 7] = 1
    after = board[None].copy()
    after[0, 0, 7], after[0, 0, 3] = 0, 1
    after.setflags(write=False)
    kernel(board, after, 3, 1)


#: Afterstates read on the Python path after which the step reader loads its compiled kernel
#: (:class:`bgai.util.jit.LazyKernel`; about 6 us a row in Python, so about 0.6 s, the kernel's load time).
LOAD_AFTER_ROWS = 100_000
_STEP_READER = LazyKernel(direct_steps, LOAD_AFTER_ROWS, prime=_prime_step_reader, owner=__name__)
#: The steps tuples of the compiled reader's codes, remembered (a few thousand distinct plays recur).
_STEPS_OF_CODE: dict[int, tuple] = {}
_MAX_REMEMBERED = 1 << 16


def use_compiled(on: bool = True) -> bool:
    """Turn the compiled step reader of :func:`afterstate_plays` on (loading it now) or off (the Python reader,
    the reference; the same steps) for the following plays (:meth:`bgai.util.jit.LazyKernel.use`).  By default it
    is loaded after :data:`LOAD_AFTER_ROWS` afterstates read in Python.

    Returns:
        Whether the compiled reader is now in use: ``False`` when turned off, or without compiled kernels (numba
        not installed, or ``BGAI_NUMBA=0``; see :func:`bgai.util.jit.compile_kernel`).
    """
    return _STEP_READER.use(on)


def _lazy_plays(reader: _StepReader, after: np.ndarray) -> list:
    """``[_LazyPlay(reader, i, after[i]) for i ...]``, each made without ``__init__`` (its attributes set as one
    ``__dict__``: a third of the cost, which counts at tens of plays per request); the same objects."""
    new, set_attr = object.__new__, object.__setattr__
    plays = []
    for i, row in enumerate(after):
        p = new(_LazyPlay)
        set_attr(p, "__dict__", {"afterstate": row, "_reader": reader, "_index": i})
        plays.append(p)
    return plays


class _LazyPlay(Play):
    """A :class:`~bgai.core.movegen.Play` whose steps (and so its notation) are read off its afterstate when
    first asked for (:func:`afterstate_plays` with ``lazy``)."""

    def __init__(self, reader: _StepReader, index: int, afterstate: np.ndarray) -> None:
        object.__setattr__(self, "afterstate", afterstate)
        object.__setattr__(self, "_reader", reader)
        object.__setattr__(self, "_index", index)

    @property
    def steps(self) -> tuple:  # type: ignore[override]
        """See :class:`~bgai.core.movegen.Play`."""
        d = self.__dict__
        if "_steps" not in d:
            object.__setattr__(self, "_steps", self._reader.steps(self._index))
        return d["_steps"]


def _direct_steps(net: list[tuple[int, int]], bar0: int, opp0: list[int], opp_t: list[int], hi: int, lo: int):
    """The steps of a play that bears nothing off, from ``net``: ``(point, checkers it lost)`` of the mover's
    changed points (bar = 25), highest first, and ``bar0`` the mover's checkers on the bar before the play; None
    when not one of the cases read off directly (then :func:`_searched_steps`)."""
    steps = _double_steps(net, hi) if hi == lo else _nondouble_steps(net, bar0, opp0, opp_t, hi, lo)
    return None if steps is None else _with_hits(steps, opp0, opp_t)


def _double_steps(net: list[tuple[int, int]], d: int):
    """A double's steps: n(p) checkers step from p, n(p) = (checkers p lost) + n(p + d) (the steps landing on p);
    None when that does not work out."""
    pending = dict(net)
    steps = []
    while pending:
        p = max(pending)
        k = pending.pop(p)
        if k < 0 or (k and p <= d) or len(steps) + k > 4:
            return None
        if k:
            steps.extend([(p, p - d)] * k)
            pending[p - d] = pending.get(p - d, 0) + k
    return steps


def _nondouble_steps(net: list[tuple[int, int]], bar: int, opp0: list[int], opp_t: list[int], hi: int, lo: int):
    """A non-double's steps in playing order (``bar``: the mover's checkers on the bar before the play), or None."""
    src = []  # the points that lost checkers (one entry a checker), highest first
    dst = []  # ... that gained
    for p, k in net:
        if k > 0:
            src += [p] * k
        else:
            dst += [p] * -k
    if len(src) == 2 and len(dst) == 2:  # two checkers (a >= b), one die each
        a, b = src
        if bar and (a != 25 or (b == 25) != (bar > 1)):  # every checker on the bar enters first
            return None
        if sorted((a - hi, b - lo)) == sorted(dst):
            return [(a, a - hi), (b, b - lo)]  # higher die first
        if sorted((a - lo, b - hi)) == sorted(dst):
            # higher die first, unless the one checker on the bar enters with the lower die (it moves first)
            return [(a, a - lo), (b, b - hi)] if a == 25 and bar == 1 else [(b, b - hi), (a, a - lo)]
        return None
    if len(src) != 1 or len(dst) != 1:
        return None
    s, z = src[0], dst[0]
    if s - z in (hi, lo):  # one die only
        return None if bar and s != 25 else [(s, z)]
    if s - z != hi + lo or bar > (s == 25):  # not one checker with both dice, or a checker left on the bar
        return None
    m1, m2 = s - hi, s - lo
    c1, c2 = opp0[24 - m1], opp0[24 - m2]
    if c1 == 1 and opp_t[24 - m1] == 0:
        m = m1  # hits on the higher die's point
    elif c2 == 1 and opp_t[24 - m2] == 0:
        m = m2  # hits on the lower die's point
    else:
        m = m1 if c1 == 0 else m2  # the higher die first unless its point is closed or keeps its blot
    return [(s, m), (m, z)]


def _with_hits(steps: list[tuple[int, int]], opp0: list[int], opp_t: list[int]):
    """``steps`` with their hits in playing order (the first step landing on a blot hits it), two steps listed from
    the back (equal sources: playing order); None when the opponent's row does not come out as ``opp_t``."""
    opp = opp0.copy()
    out = []
    for p, t in steps:
        hit = opp[24 - t] == 1
        if hit:
            opp[24 - t] = 0
            opp[24] += 1
        out.append((p, t, hit))
    if opp != opp_t:
        return None
    if len(out) == 2 and out[1][0] > out[0][0]:
        out.reverse()
    return tuple(out)


def _searched_steps(me0: list[int], opp0: list[int], me_t: list[int], opp_t: list[int], hi: int, lo: int):
    """The steps :func:`bgai.core.movegen.legal_plays` gives the afterstate ``(me_t, opp_t)``: its search
    (orders, sources from the back, a double's sources non-increasing, the first of the longest plays found),
    pruned to steps that can still reach the afterstate.

    Pruning: ``X[p]`` = the mover's checkers on points >= ``p`` (bar = 25) now minus in the afterstate; a step
    from ``p`` to ``t`` lowers ``X`` on ``t+1 .. p`` by one and checkers never move back, so it must keep ``X >=
    0`` there; a blot the afterstate keeps is never hit.  The search stops at the first play using every die.
    """
    double = hi == lo
    orders = ((hi, hi, hi, hi),) if double else ((hi, lo), (lo, hi))
    n_dice = len(orders[0])
    X = [0] * 26
    c0 = ct = 0
    for p in range(25, 0, -1):
        c0 += me0[p - 1]
        ct += me_t[p - 1]
        X[p] = c0 - ct
    found: list = [None, -1]  # steps, number of steps

    def can_step(me, opp, d, max_src):
        """Whether any step with die ``d`` from a source <= ``max_src`` is legal (legal_plays' rules)."""
        if me[24] > 0:
            return max_src >= 25 and opp[d - 1] < 2  # entering on 25 - d
        all_home = sum(me[6:24]) == 0
        for p in range(min(24, max_src), 0, -1):
            if me[p - 1]:
                to = p - d
                if to >= 1:
                    if opp[24 - to] < 2:
                        return True
                elif all_home and (to == 0 or sum(me[p:24]) == 0):
                    return True
        return False

    def rec(me, opp, X, pips, order, k, steps, max_src):
        if me == me_t and opp == opp_t:
            if (k == n_dice or not can_step(me, opp, order[k], max_src)) and k > found[1]:
                found[0], found[1] = steps, k
            return
        if k == n_dice or pips > sum(order[k:]):
            return
        d = order[k]
        if me[24] > 0:
            srcs = [25] if max_src >= 25 else []
            all_home = False
        else:
            srcs = [p for p in range(min(24, max_src), 0, -1) if me[p - 1] and X[p] > 0]
            all_home = bool(srcs) and srcs[-1] <= d and sum(me[6:24]) == 0
        for p in srcs:
            to = p - d
            hit = False
            if to >= 1:
                c = opp[24 - to]
                if c >= 2 or (c == 1 and opp_t[24 - to]):
                    continue
                hit = c == 1
            elif all_home and (to == 0 or sum(me[p:24]) == 0):
                to = 0
            else:
                continue
            if min(X[to + 1 : p + 1]) < 1:
                continue
            me2 = me.copy()
            me2[p - 1] -= 1
            if to:
                me2[to - 1] += 1
            opp2 = opp
            if hit:
                opp2 = opp.copy()
                opp2[24 - to] = 0
                opp2[24] += 1
            X2 = X.copy()
            for q in range(to + 1, p + 1):
                X2[q] -= 1
            rec(me2, opp2, X2, pips - (p - to), order, k + 1, steps + ((p, to, hit),), p if double else 25)
            if found[1] == n_dice:
                return

    for order in orders:
        rec(me0, opp0, X, sum(X), order, 0, (), 25)
        if found[1] == n_dice:
            break
    if found[0] is None:
        raise IllegalMoveError("not a position any legal play of the roll reaches")
    return tuple(sorted(found[0], key=_source_desc))


def _source_desc(step: tuple) -> int:
    return -step[0]
