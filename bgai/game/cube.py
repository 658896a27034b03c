"""Cube decisions: cubeful equity from cubeless probabilities, money and match play.

Everything here works from the **cubeless outcome probabilities** of the side on roll, before it rolls
(``(N, 5)`` float64 in :data:`bgai.core.equity.OUTPUTS` order), and a :class:`CubeState` seen from that side.  It
follows GNU Backgammon's 0-ply cubeful evaluation (``eval.c``: ``Cl2CfMoney``, ``Cl2CfMatch``,
``FindBestCubeDecision``; ``matchequity.c``: ``GetPoints``, ``getME``), so that bgai's cube decisions can be
checked against GNU Backgammon's on the same probabilities (``scripts/compare_cube_gnubg.py``).

Money play (Janowski)
---------------------
Rick Janowski, "Take-points in money games" (1993, http://www.bkgm.com/articles/Janowski/cubeformulae.pdf):
the cubeful equity is interpolated between the dead-cube (cubeless) equity and a fully live-cube equity with
the **cube efficiency** ``x``::

    E_cubeful = (1 - x) * E_dead + x * E_live

With ``p`` = P(win), ``W = 1 + (P(wg) + P(wbg)) / p`` (average points won when winning) and
``L = 1 + (P(lg) + P(lbg)) / (1 - p)`` (average points lost), the live-cube equity is piecewise linear in ``p``
through the live take point ``TP = (L - 1/2) / (W + L + 1/2)`` (equity -1) and cash point
``CP = (L + 1) / (W + L + 1/2)`` (equity +1), from ``(0, -L)`` to ``(1, +W)``:

* centred cube: ``(0, -L) - (TP, -1) - (CP, +1) - (1, +W)``;
* cube owned by the side on roll: ``(0, -L) - (CP, +1) - (1, +W)``;
* cube owned by the opponent: ``(0, -L) - (TP, -1) - (1, +W)``.

Equities are per unit of the current cube.  No double = the formula for the present cube; double/take =
``2 x`` the formula with the cube owned by the opponent; double/pass = ``+1``.

Cube efficiency ``x`` (GNU Backgammon's defaults, ``eval.c`` ``EvalEfficiency``): 0.68 in contact (and
crashed) positions; in races ``0.55 + 0.00125 * pips`` of the side on roll, clamped to [0.6, 0.7] (0.6 at 40
pips, 0.7 at 120 pips, linear between); 0.6 in bear-offs (both sides all home); 0 when the game is over.
See :func:`cube_efficiency`.

**Jacoby rule** (money, centred cube): gammons and backgammons count as single games until the cube has been
turned.  As GNU Backgammon does, the dead-cube part then uses gammon price 0 and the live part is clamped to
-1/+1 outside the take/cash points (the opponent cannot win more than 1 before someone doubles); ``W`` and
``L`` keep the real gammon rates (they describe the game after a double).  After the cube is turned gammons
count.  **Cube limit**: an offer that would take the cube beyond the limit is not available; the Janowski
formulas themselves are not changed (an approximation).  Beavers are not supported.

Match play
----------
Match-winning chances (MWC) use a match equity table (:mod:`bgai.game.met`, Kazaross-XG2 by default).  The cubeful
MWC is Jørn Thyssen's generalisation of Janowski's model used by GNU Backgammon (``Cl2CfMatch``): dead-cube MWC
(cubeless probabilities x MET of every result) interpolated with a live-cube MWC that is piecewise linear
through the live-cube cash points of both sides; the cash points come from a recursion over the cube levels
(``GetPoints``: a doubled cube that the taker could redouble is live, otherwise dead; automatic redoubles are
accounted for).  The cube is **dead** (cubeless MWC) in the Crawford game, when both sides would win the match
with the present cube, and at 2-away/2-away.  The cube is not available to the side on roll in the Crawford
game, when its present cube already wins it the match, and to the post-Crawford leader; the post-Crawford
trailer's double comes out of the same model (in ordinary positions: double at once).  Equities are reported as
MWC and as GNU Backgammon's normalised money equity ``E = (2 MWC - (W + L)) / (W - L)`` where ``W``/``L`` are
the MWC after winning/losing the present cube.

Decisions follow ``FindBestCubeDecision``: with no-double ``ND``, double/take ``DT``, double/pass ``DP``
equities (same units, from the doubler's view): double when ``DT >= ND`` and ``DP >= ND``; the opponent takes
when ``DT < DP``; "too good" when ``ND`` beats both and the side can win a gammon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.core.board import as_batch, pip_counts
from bgai.core.cube_state import CENTRED, ME, OPPONENT, CubeState
from bgai.core.equity import OUTPUTS, cubeless_equity
from bgai.errors import BgaiError, MatchStateError
from bgai.game.met import MatchEquityTable, load_met

__all__ = [
    "CENTRED",
    "ME",
    "OPPONENT",
    "CubeState",
    "met_for",
    "CubeAnalysis",
    "CubeDecision",
    "cube_efficiency",
    "classify_positions",
    "money_cubeful_equity",
    "money_points",
    "match_cubeful_mwc",
    "match_cash_points",
    "match_take_points",
    "cubeless_mwc",
    "analyse_cube",
    "cube_decision",
    "CONTACT_EFFICIENCY",
    "JANOWSKI_POLICY",
    "CONSERVATIVE_POLICY",
    "BEAROFF_EFFICIENCY",
    "describe_state",
    "format_cube_decision",
    "cube_decision_dict",
    "cube_unavailable_reason",
]

#: GNU Backgammon's default cube efficiencies (``eval.c``: rContactX, rCrashedX, rOSCubeX, race parameters).
CONTACT_EFFICIENCY = 0.68
BEAROFF_EFFICIENCY = 0.6
RACE_FACTOR, RACE_COEFFICIENT, RACE_MIN, RACE_MAX = 0.00125, 0.55, 0.6, 0.7

#: Position classes returned by :func:`classify_positions` (GNU Backgammon's ``ClassifyPosition`` order).
CLASS_OVER, CLASS_BEAROFF2, CLASS_BEAROFF1, CLASS_RACE, CLASS_CRASHED, CLASS_CONTACT = 0, 1, 2, 3, 4, 5
CLASS_NAMES = ("over", "bearoff2", "bearoff1", "race", "crashed", "contact")


def met_for(state: CubeState) -> MatchEquityTable:
    """The match equity table of a state (:func:`bgai.game.met.load_met` of ``state.met_name``).

    Raises:
        MatchStateError: an unknown table name or a bad table file.
    """
    return load_met(state.met_name)


# ------------------------------------------------------------------------------------------------------------
# position classes and cube efficiency


def classify_positions(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's position classes for cube efficiency (``eval.c`` ``ClassifyPosition``).

    Args:
        boards: ``(N, 2, 25)`` int8, side on roll in row 0.

    Returns:
        ``(N,)`` int8: :data:`CLASS_OVER` 0 (a side has no checker left), :data:`CLASS_BEAROFF2` 1 (no contact,
        both sides all home with at most 6 checkers: GNU Backgammon's two-sided bear-off database),
        :data:`CLASS_BEAROFF1` 2 (no contact, both sides all home), :data:`CLASS_RACE` 3, :data:`CLASS_CRASHED`
        4 (contact, a side with 6 or fewer checkers left as GNU Backgammon counts them), :data:`CLASS_CONTACT` 5.
    """

    b = as_batch(boards).astype(np.int16)
    n = b.shape[0]
    occupied = b > 0
    idx = np.arange(25)
    back = np.where(occupied, idx, -1).max(axis=2)  # (N, 2) highest occupied column per side (24 = bar)
    over = (back < 0).any(axis=1)
    contact = back.sum(axis=1) > 22
    out = np.full(n, CLASS_RACE, dtype=np.int8)
    tot = b.sum(axis=2)
    # crashed test, per side (GNU Backgammon's rule with N = 6)
    crashed = np.zeros(n, dtype=bool)
    for side in (0, 1):
        t = tot[:, side]
        b0, b1 = b[:, side, 0], b[:, side, 1]
        c = t <= 6
        c |= (b0 > 1) & (t <= 6 + b0)
        c |= (b0 > 1) & ((1 + t - (b0 + b1)) <= 6) & (b1 > 1)
        c |= (b0 <= 1) & (t <= 6 + (b1 - 1))
        crashed |= c
    home = (back < 6).all(axis=1)
    small = (tot <= 6).all(axis=1)
    out[~contact & home] = CLASS_BEAROFF1
    out[~contact & home & small] = CLASS_BEAROFF2
    out[contact] = np.where(crashed[contact], CLASS_CRASHED, CLASS_CONTACT)
    out[over] = CLASS_OVER
    return out


def cube_efficiency(boards: np.ndarray) -> np.ndarray:
    """Janowski cube efficiency ``x`` per position, with GNU Backgammon's default settings.

    Contact and crashed positions 0.68; races ``0.55 + 0.00125 * pips`` of the side on roll clamped to [0.6, 0.7];
    bear-offs (both sides home) 0.6; finished games 0.  (GNU Backgammon: ``eval.c`` ``EvalEfficiency`` with
    rContactX = rCrashedX = 0.68, rOSCubeX = 0.6, rRaceFactorX = 0.00125, rRaceCoefficientX = 0.55,
    rRaceMin = 0.6, rRaceMax = 0.7.  In two-sided bear-offs GNU Backgammon uses exact cubeful bear-off
    databases instead; bgai uses 0.6.)

    Args:
        boards: ``(N, 2, 25)`` int8, side on roll in row 0.

    Returns:
        ``(N,)`` float64 in [0, 1].
    """

    b = as_batch(boards)
    cls = classify_positions(b)
    pips = pip_counts(b)[:, 0].astype(np.float64)
    race = np.clip(RACE_COEFFICIENT + RACE_FACTOR * pips, RACE_MIN, RACE_MAX)
    x = np.full(len(b), CONTACT_EFFICIENCY)
    x[cls == CLASS_RACE] = race[cls == CLASS_RACE]
    x[(cls == CLASS_BEAROFF1) | (cls == CLASS_BEAROFF2)] = BEAROFF_EFFICIENCY
    x[cls == CLASS_OVER] = 0.0
    return x


# ------------------------------------------------------------------------------------------------------------
# money play


def _probs(probs: np.ndarray) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] != 5:
        raise BgaiError(f"probabilities must have 5 outputs in the last axis, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or p.min(initial=0.0) < -1e-6 or p.max(initial=0.0) > 1 + 1e-6:
        raise BgaiError("probabilities must be finite numbers in [0, 1]")
    return p.reshape(-1, 5)


def _as_n(v, n: int) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return np.broadcast_to(a, (n,)) if a.ndim == 0 else a.reshape(n)


def money_cubeful_equity(
    probs: np.ndarray, efficiency: np.ndarray | float, owner: int, *, jacoby: bool = False
) -> np.ndarray:
    """Janowski's cubeful money equity for the side on roll, per unit of the present cube.

    Args:
        probs: ``(N, 5)`` cubeless probabilities of the side on roll.
        efficiency: cube efficiency ``x``, scalar or ``(N,)``.
        owner: :data:`CENTRED`, :data:`ME` or :data:`OPPONENT`.
        jacoby: Jacoby rule in effect (only matters with a centred cube).

    Returns:
        ``(N,)`` float64 equity in points per game per unit cube: ``(1 - x) E_dead + x E_live`` (module
        docstring).  When P(win) <= 1e-7 or >= 1 - 1e-7 the cube is dead: the cubeless equity (as GNU
        Backgammon's ``Cl2CfMoney``).
    """
    p = _probs(probs)
    n = len(p)
    x = _as_n(efficiency, n)
    w, wg, wbg, lg, lbg = p.T
    jac = bool(jacoby) and owner == CENTRED
    gp = 0.0 if jac else 1.0
    dead = 2.0 * w - 1.0 + gp * (wg - lg) + gp * (wbg - lbg)
    with np.errstate(divide="ignore", invalid="ignore"):
        W = 1.0 + (wg + wbg) / w
        L = 1.0 + (lg + lbg) / (1.0 - w)
        tp = (L - 0.5) / (W + L + 0.5)
        cp = (L + 1.0) / (W + L + 0.5)
        if owner == CENTRED:
            live = np.where(
                w < tp,
                -1.0 if jac else -L + (-1.0 + L) * w / tp,
                np.where(
                    w < cp,
                    -1.0 + 2.0 * (w - tp) / (cp - tp),
                    1.0 if jac else 1.0 + (W - 1.0) * (w - cp) / (1.0 - cp),
                ),
            )
        elif owner == ME:
            live = np.where(w < cp, -L + (1.0 + L) * w / cp, 1.0 + (W - 1.0) * (w - cp) / (1.0 - cp))
        elif owner == OPPONENT:
            live = np.where(w < tp, -L + (-1.0 + L) * w / tp, -1.0 + (W + 1.0) * (w - tp) / (1.0 - tp))
        else:
            raise MatchStateError(f"cube owner {owner!r} must be -1, 0 or 1")
    cf = dead * (1.0 - x) + live * x
    deadcube = (w <= 1e-7) | (w >= 0.9999999)
    return np.where(deadcube, dead, cf)


def money_points(probs: np.ndarray, efficiency: np.ndarray | float = 1.0) -> dict[str, np.ndarray]:
    """Janowski's money take point and cash point for the side on roll's double, at cube efficiency ``x``.

    ``W`` and ``L`` as in the module docstring (of the side on roll): the opponent's take point is the
    doubler's winning chance ``1 - (L_o - 1/2) / (W_o + L_o + x/2)`` where ``W_o = L``, ``L_o = W`` are the
    taker's averages (Janowski 1993: take point ``(L - 1/2) / (W + L + x/2)`` of the taker).

    Returns:
        dict of ``(N,)`` float64: ``take_point`` (the taker's minimum winning chance to take),
        ``cash_point`` (the doubler's winning chance above which the taker should pass, = 1 - take_point),
        ``take_point_dead`` and ``take_point_live`` (x = 0 and x = 1).
    """
    p = _probs(probs)
    x = _as_n(efficiency, len(p))
    w, wg, wbg, lg, lbg = p.T
    with np.errstate(divide="ignore", invalid="ignore"):
        W = np.where(w > 0, 1.0 + (wg + wbg) / w, 1.0)
        L = np.where(w < 1, 1.0 + (lg + lbg) / (1.0 - w), 1.0)
    # taker's view: wins L on average (our losses), loses W
    tp = (W - 0.5) / (L + W + 0.5 * x)
    return {
        "take_point": tp,
        "cash_point": 1.0 - tp,
        "take_point_dead": (W - 0.5) / (L + W),
        "take_point_live": (W - 0.5) / (L + W + 0.5),
    }


# ------------------------------------------------------------------------------------------------------------
# match play


def match_equity_after(
    met: MatchEquityTable, away0: int, away1: int, k: int, points: int, winner: int, crawf: bool
) -> float:
    """MWC of player ``k`` (0 = on roll) after ``winner`` (0 = on roll) wins ``points`` (GNU Backgammon's
    ``getME``); ``away0``/``away1`` are the points each still needs, ``crawf`` whether this is the Crawford game.
    """
    pts = points if winner == 0 else -points
    m0 = met.mwc_after(away0, away1, pts, crawford=crawf)
    return m0 if k == 0 else 1.0 - m0


def _ratios(p: np.ndarray) -> tuple[np.ndarray, ...]:
    w, wg, wbg, lg, lbg = p.T
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.where(w > 0, (wg - wbg) / w, 0.0)
        bg0 = np.where(w > 0, wbg / w, 0.0)
        g1 = np.where(w < 1, (lg - lbg) / (1.0 - w), 0.0)
        bg1 = np.where(w < 1, lbg / (1.0 - w), 0.0)
    return g0, bg0, g1, bg1


def _check_match(state: CubeState) -> MatchEquityTable:
    if state.is_money:
        raise MatchStateError("match-play cube functions need a match length > 0")
    met = met_for(state)
    if state.match_length > met.length:
        raise MatchStateError(
            f"a {state.match_length}-point match is longer than the {met.name} table ({met.length} points)"
        )
    return met


def cubeless_mwc(probs: np.ndarray, state: CubeState) -> np.ndarray:
    """Dead-cube (cubeless) match-winning chance of the side on roll: every result times its MET entry.

    Returns:
        ``(N,)`` float64 in [0, 1].
    """
    p = _probs(probs)
    met = _check_match(state)
    a0, a1 = state.away
    c, crawf = state.cube_value, state.crawford
    w, wg, wbg, lg, lbg = p.T
    me = lambda pts, who: match_equity_after(met, a0, a1, 0, pts, who, crawf)  # noqa: E731
    return (
        (w - wg) * me(c, 0)
        + (wg - wbg) * me(2 * c, 0)
        + wbg * me(3 * c, 0)
        + (1.0 - w - lg) * me(c, 1)
        + (lg - lbg) * me(2 * c, 1)
        + lbg * me(3 * c, 1)
    )


def _cube_prime(i: int, j: int, cube: int) -> int:
    # GNU Backgammon's GetCubePrimeValue: the taker redoubles at once when it cannot lose the match by it
    return 2 * cube if (i < 2 * cube) and (j >= 2 * cube) else cube


def match_cash_points(probs: np.ndarray, state: CubeState) -> tuple[np.ndarray, np.ndarray]:
    """Live-cube cash points of both sides at the present cube level (GNU Backgammon's ``GetPoints``).

    A side's cash point is its winning chance above which the other side should pass its double.  Computed
    from the top cube level down: at a level where the doubled cube would be dead, the dead-cube cash point
    (with the automatic redouble of the taker); below, ``CP_k = 1 - CP_other(next level) * (DP - DTW) /
    (RDP - DTW)`` (Jørn Thyssen's recursion, ``matchequity.c``).

    Args:
        probs: ``(N, 5)`` probabilities of the side on roll (its gammon rates and the opponent's).
        state: match state from the side on roll's view.

    Returns:
        ``(cp_me, cp_opp)``: ``(N,)`` float64 each, winning chances of the respective side.
    """
    p = _probs(probs)
    met = _check_match(state)
    a0, a1 = state.away
    i, j = a0 - 1, a1 - 1
    crawf = state.crawford
    g0, bg0, g1, bg1 = _ratios(p)
    G, BG = (g0, g1), (bg0, bg1)
    cube = state.cube_value
    n_dead, n_max = cube, 0
    while i >= 2 * n_dead and j >= 2 * n_dead:
        n_max += 1
        n_dead *= 2
    live: dict[tuple[int, int], np.ndarray] = {}
    cv, n = n_dead, n_max
    while cv >= cube:
        primes = (_cube_prime(i, j, cv), _cube_prime(j, i, cv))
        for k in (0, 1):
            o = 1 - k
            me = lambda pts, who: match_equity_after(met, a0, a1, k, pts, who, crawf)  # noqa: E731,B023
            if i < 2 * cv or j < 2 * cv:
                pr = primes[k]
                dtl = (1 - G[o] - BG[o]) * me(2 * pr, o) + G[o] * me(4 * pr, o) + BG[o] * me(6 * pr, o)
                dp = me(cv, k)
                dtw = (1 - G[k] - BG[k]) * me(2 * pr, k) + G[k] * me(4 * pr, k) + BG[k] * me(6 * pr, k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    live[(k, n)] = (dtl - dp) / (dtl - dtw)
            else:
                rdp = me(2 * cv, o)
                dp = me(cv, k)
                dtw = (1 - G[k] - BG[k]) * me(2 * cv, k) + G[k] * me(4 * cv, k) + BG[k] * me(6 * cv, k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    live[(k, n)] = 1.0 - live[(o, n + 1)] * (dp - dtw) / (rdp - dtw)
        cv //= 2
        n -= 1
    return live[(0, 0)], live[(1, 0)]


def match_take_points(probs: np.ndarray, state: CubeState) -> dict[str, np.ndarray]:
    """The opponent's take points against a double by the side on roll, in match play.

    ``take_point_dead``: the taker's winning chance at which taking and passing give the same MWC when the cube
    is dead after the take: ``(DP - DTL) / (DTW - DTL)`` of the doubler, one minus it for the taker, where DP is
    the doubler's MWC after a pass and DTW/DTL after winning/losing the doubled game with the doubler's and the
    taker's gammon rates (GNU Backgammon's ``getMatchPoints``).  ``take_point_live``: ``1 -`` the doubler's
    live-cube cash point of :func:`match_cash_points` (the taker can redouble).

    Returns:
        dict of ``(N,)`` float64 winning chances of the taker.
    """
    p = _probs(probs)
    met = _check_match(state)
    a0, a1 = state.away
    c, crawf = state.cube_value, state.crawford
    g0, bg0, g1, bg1 = _ratios(p)
    me = lambda pts, who: match_equity_after(met, a0, a1, 0, pts, who, crawf)  # noqa: E731
    dtw = (1 - g0 - bg0) * me(2 * c, 0) + g0 * me(4 * c, 0) + bg0 * me(6 * c, 0)
    dtl = (1 - g1 - bg1) * me(2 * c, 1) + g1 * me(4 * c, 1) + bg1 * me(6 * c, 1)
    dp = me(c, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cash_dead = (dp - dtl) / (dtw - dtl)
    cp0, _ = match_cash_points(p, state)
    return {"take_point_dead": 1.0 - cash_dead, "take_point_live": 1.0 - cp0}


def match_cubeful_mwc(probs: np.ndarray, state: CubeState, efficiency: np.ndarray | float) -> np.ndarray:
    """Cubeful match-winning chance of the side on roll (GNU Backgammon's ``Cl2CfMatch``).

    ``(1 - x) MWC_dead + x MWC_live``; ``MWC_live`` is linear in P(win) between: the side's MWC when losing
    (with its gammon mix) at p = 0, the opponent's cash (lose the present cube) at the opponent's cash point, the
    side's cash at its own cash point (centred or own cube), the side's MWC when winning at p = 1.  A dead cube
    (:meth:`CubeState.cube_is_dead`) gives the cubeless MWC.

    Returns:
        ``(N,)`` float64 in [0, 1].
    """
    p = _probs(probs)
    met = _check_match(state)
    n = len(p)
    x = _as_n(efficiency, n)
    dead = cubeless_mwc(p, state)
    if state.cube_is_dead():
        return dead
    a0, a1 = state.away
    c, crawf = state.cube_value, state.crawford
    me = lambda pts, who: match_equity_after(met, a0, a1, 0, pts, who, crawf)  # noqa: E731
    g0, bg0, g1, bg1 = _ratios(p)
    cp0, cp1 = match_cash_points(p, state)
    w = p[:, 0]
    ndw, ndl = me(c, 0), me(c, 1)
    mwc_win = (1 - g0 - bg0) * ndw + g0 * me(2 * c, 0) + bg0 * me(3 * c, 0)
    mwc_lose = (1 - g1 - bg1) * ndl + g1 * me(2 * c, 1) + bg1 * me(3 * c, 1)
    opp_tg = 1.0 - cp1  # below this the opponent is too good / cashes
    tg = cp0
    with np.errstate(divide="ignore", invalid="ignore"):
        if state.owner == CENTRED:
            low = np.where(opp_tg > 0, mwc_lose + (ndl - mwc_lose) * w / opp_tg, mwc_lose)
            mid = ndl + (ndw - ndl) * (w - opp_tg) / (tg - opp_tg)
            high = np.where(tg < 1, ndw + (mwc_win - ndw) * (w - tg) / (1 - tg), mwc_win)
            live = np.where(w <= opp_tg, low, np.where(w < tg, mid, high))
        elif state.owner == ME:
            low = np.where(tg > 0, mwc_lose + (ndw - mwc_lose) * w / tg, mwc_lose)
            high = np.where(tg < 1, ndw + (mwc_win - ndw) * (w - tg) / (1 - tg), mwc_win)
            live = np.where(w <= tg, low, high)
        else:
            low = np.where(opp_tg > 0, mwc_lose + (ndl - mwc_lose) * w / opp_tg, mwc_lose)
            high = ndl + (mwc_win - ndl) * (w - opp_tg) / (1.0 - opp_tg)
            live = np.where(w <= opp_tg, low, high)
    return dead * (1.0 - x) + live * x


def _mwc2eq(mwc: np.ndarray, state: CubeState) -> np.ndarray:
    met = met_for(state)
    a0, a1 = state.away
    win = match_equity_after(met, a0, a1, 0, state.cube_value, 0, state.crawford)
    lose = match_equity_after(met, a0, a1, 0, state.cube_value, 1, state.crawford)
    return (2.0 * np.asarray(mwc) - (win + lose)) / (win - lose)


# ------------------------------------------------------------------------------------------------------------
# decisions

#: Decision names, as GNU Backgammon prints them (``GetCubeRecommendation``).
NO_DOUBLE_TAKE = "No double, take"
DOUBLE_TAKE = "Double, take"
DOUBLE_PASS = "Double, pass"
TOO_GOOD_TAKE = "Too good to double, take"
TOO_GOOD_PASS = "Too good to double, pass"
OPTIONAL_DOUBLE_TAKE = "Optional double, take"
OPTIONAL_DOUBLE_PASS = "Optional double, pass"
NO_DOUBLE_DEAD = "Never double, take (dead cube)"
NOT_AVAILABLE = "Cube not available"

_RE = {
    NO_DOUBLE_TAKE: "No redouble, take",
    DOUBLE_TAKE: "Redouble, take",
    DOUBLE_PASS: "Redouble, pass",
    TOO_GOOD_TAKE: "Too good to redouble, take",
    TOO_GOOD_PASS: "Too good to redouble, pass",
    OPTIONAL_DOUBLE_TAKE: "Optional redouble, take",
    OPTIONAL_DOUBLE_PASS: "Optional redouble, pass",
    NO_DOUBLE_DEAD: "Never redouble, take (dead cube)",
    NOT_AVAILABLE: NOT_AVAILABLE,
}


@dataclass(frozen=True)
class CubeAnalysis:
    """Cube analysis of a batch of positions sharing one :class:`CubeState`.

    Attributes (arrays ``(N,)``):
        no_double, double_take, double_pass: cubeful equities from the side on roll's view.  Money: points per
            game per unit of the present cube (double/pass = 1).  Match: GNU Backgammon's normalised money
            equity of the MWC (double/pass = 1 unless it wins the match).
        mwc_no_double, mwc_double_take, mwc_double_pass: match-winning chances (match play; NaN in money).
        double: the side on roll should double (GNU Backgammon's "double" decisions, not "optional" ones).
        take: the opponent should take a double (``double_take < double_pass``).
        action: decision names as GNU Backgammon prints them (``'Double, take'``, ``'No redouble, take'``...).
        cubeless_equity: cubeless equity (money: with the Jacoby/gammon prices of the state; match: normalised
            equity of the cubeless MWC).
        efficiency: the cube efficiency used.
        available: the side on roll may double (:meth:`CubeState.may_double`).
    """

    no_double: np.ndarray
    double_take: np.ndarray
    double_pass: np.ndarray
    mwc_no_double: np.ndarray
    mwc_double_take: np.ndarray
    mwc_double_pass: np.ndarray
    double: np.ndarray
    take: np.ndarray
    action: tuple[str, ...]
    cubeless_equity: np.ndarray
    efficiency: np.ndarray
    available: bool

    @property
    def optimal(self) -> np.ndarray:
        """``(N,)`` the cubeful equity of the side on roll after best play by both sides."""
        dt_or_dp = np.minimum(self.double_take, self.double_pass)
        return np.where(self.double, dt_or_dp, self.no_double)

    def __len__(self) -> int:
        return len(self.no_double)


def analyse_cube(probs: np.ndarray, state: CubeState, efficiency: np.ndarray | float) -> CubeAnalysis:
    """Cube analysis (no double / double-take / double-pass and the decisions) for the side on roll.

    Args:
        probs: ``(N, 5)`` or ``(5,)`` cubeless probabilities of the side on roll before it rolls.
        state: the cube and score from the side on roll's view.
        efficiency: cube efficiency per position (:func:`cube_efficiency` of the boards), scalar or ``(N,)``.

    Returns:
        A :class:`CubeAnalysis`.

    Raises:
        MatchStateError: a match longer than the match equity table.
    """
    p = _probs(probs)
    n = len(p)
    x = _as_n(efficiency, n).astype(np.float64)
    nan = np.full(n, np.nan)
    if state.is_money:
        nd = money_cubeful_equity(p, x, state.owner, jacoby=state.jacoby)
        dt = 2.0 * money_cubeful_equity(p, x, OPPONENT, jacoby=state.jacoby)
        dp = np.ones(n)
        mnd = mdt = mdp = nan
        gp = 0.0 if (state.jacoby and state.owner == CENTRED) else 1.0
        w, wg, wbg, lg, lbg = p.T
        cubeless = 2 * w - 1 + gp * (wg - lg + wbg - lbg)
    else:
        met = _check_match(state)
        a0, a1 = state.away
        mnd = match_cubeful_mwc(p, state, x)
        mdt = match_cubeful_mwc(p, state.doubled(), x)
        mdp = np.full(n, match_equity_after(met, a0, a1, 0, state.cube_value, 0, state.crawford))
        nd, dt, dp = _mwc2eq(mnd, state), _mwc2eq(mdt, state), _mwc2eq(mdp, state)
        cubeless = _mwc2eq(cubeless_mwc(p, state), state)
    available = state.may_double()
    double, take, actions = _decide(nd, dt, dp, p[:, 1] > 0, state, available)
    return CubeAnalysis(
        no_double=nd,
        double_take=dt,
        double_pass=dp,
        mwc_no_double=mnd,
        mwc_double_take=mdt,
        mwc_double_pass=mdp,
        double=double,
        take=take,
        action=actions,
        cubeless_equity=cubeless,
        efficiency=x,
        available=available,
    )


def _decide(nd, dt, dp, can_gammon, state: CubeState, available: bool):
    n = len(nd)
    take = dt < dp
    if not available:
        if not state.is_money and state.owner in (CENTRED, ME):
            name = NO_DOUBLE_DEAD
        else:
            name = NOT_AVAILABLE
        if state.owner == ME:
            name = _RE[name]
        return np.zeros(n, dtype=bool), take, (name,) * n
    eps = 1e-5
    double = (dt >= nd) & (dp >= nd)
    names = []
    jacoby_centred = state.is_money and state.owner == CENTRED and state.jacoby
    for k in range(n):
        if double[k]:
            if dp[k] > dt[k]:
                name = OPTIONAL_DOUBLE_TAKE if abs(dt[k] - nd[k]) <= eps else DOUBLE_TAKE
            else:
                optional = abs(nd[k] - dp[k]) <= eps and can_gammon[k] and not jacoby_centred
                name = OPTIONAL_DOUBLE_PASS if optional else DOUBLE_PASS
        elif nd[k] > dt[k]:
            if dt[k] > dp[k]:
                name = TOO_GOOD_PASS if can_gammon[k] else DOUBLE_PASS
            elif nd[k] > dp[k]:
                name = TOO_GOOD_TAKE if can_gammon[k] else NO_DOUBLE_TAKE
            else:
                name = NO_DOUBLE_TAKE
        else:
            name = TOO_GOOD_PASS if can_gammon[k] else DOUBLE_PASS
        names.append(_RE[name] if state.owner == ME else name)
    # "optional" doubles are not made; a decision renamed to a plain double (no gammon possible) is made
    made = np.array([nm in (DOUBLE_TAKE, DOUBLE_PASS, _RE[DOUBLE_TAKE], _RE[DOUBLE_PASS]) for nm in names])
    return made, take, tuple(names)


#: Policy name of decisions made here from an agent's probabilities (:func:`cube_decision`).
JANOWSKI_POLICY = "bgai.game.cube"
#: Policy name of the fallback of agents without probabilities (:meth:`CubeDecision.conservative`).
CONSERVATIVE_POLICY = "never double, always take"


@dataclass(frozen=True)
class CubeDecision:
    """The cube decision of one position for the side on roll, before it rolls (what ``bgai hint`` prints
    without dice, the servers answer and terminal play uses).

    Attributes:
        action: e.g. ``'No double, take'``, ``'Double, pass'``, ``'Too good to double, pass'`` (GNU Backgammon's
            names); ``'Never double, always take'`` for the conservative policy.
        no_double, double_take, double_pass: cubeful equities (see :class:`CubeAnalysis`); None for the
            conservative policy (no evaluation).
        mwc: match play: ``(no double, double/take, double/pass)`` match-winning chances; None in money play.
        double: the side on roll should double (False whenever it may not: see :attr:`available`).
        take: the opponent should take a double.
        cubeless_equity: cubeless equity (money: with the Jacoby/gammon prices of the state; match: the
            normalised equity of the cubeless MWC); None for the conservative policy.
        probabilities: the ``(5,)`` probabilities used (side on roll, :data:`bgai.core.equity.OUTPUTS` order), or
            None.
        efficiency: cube efficiency used, or None.
        state: the cube state, from the side on roll's view.
        policy: :data:`JANOWSKI_POLICY` or :data:`CONSERVATIVE_POLICY`.
        beaver: money play: the opponent should beaver (bgai does not play beavers: always False).
    """

    action: str
    no_double: float | None
    double_take: float | None
    double_pass: float | None
    mwc: tuple[float, float, float] | None
    double: bool
    take: bool
    cubeless_equity: float | None
    probabilities: tuple[float, ...] | None
    efficiency: float | None
    state: CubeState
    policy: str = JANOWSKI_POLICY
    beaver: bool = False

    @classmethod
    def conservative(cls, state: CubeState) -> "CubeDecision":
        """The decision of an agent without probabilities: never double, always take (no equities).

        Never doubling only gives away the cube's value; always taking can cost more than a pass in hopeless
        positions -- an agent with probabilities is needed for real cube play.
        """
        return cls(
            action="Never double, always take", no_double=None, double_take=None, double_pass=None, mwc=None,
            double=False, take=True, cubeless_equity=None, probabilities=None, efficiency=None, state=state,
            policy=CONSERVATIVE_POLICY,
        )

    @property
    def available(self) -> bool:
        """The side on roll may double (:meth:`CubeState.may_double`)."""
        return self.state.may_double()

    @property
    def reason(self) -> str | None:
        """Why the side on roll may not double (:func:`cube_unavailable_reason`), or None when it may."""
        return cube_unavailable_reason(self.state)

    @property
    def optimal(self) -> float | None:
        """Cubeful equity after the proper cube action (None for the conservative policy)."""
        if self.no_double is None:
            return None
        return min(self.double_take, self.double_pass) if self.double else self.no_double

    @property
    def optimal_mwc(self) -> float | None:
        """Match play: the cubeful match-winning chance after the proper cube action; else None."""
        if self.mwc is None:
            return None
        return min(self.mwc[1], self.mwc[2]) if self.double else self.mwc[0]


def cube_decision(probs: np.ndarray, state: CubeState, efficiency: float) -> CubeDecision:
    """The cube decision of one position: :func:`analyse_cube` for a single ``(5,)`` probability vector."""
    a = analyse_cube(np.asarray(probs, dtype=np.float64).reshape(1, 5), state, efficiency)
    mwc = None
    if not state.is_money:
        mwc = (float(a.mwc_no_double[0]), float(a.mwc_double_take[0]), float(a.mwc_double_pass[0]))
    return CubeDecision(
        action=a.action[0],
        no_double=float(a.no_double[0]),
        double_take=float(a.double_take[0]),
        double_pass=float(a.double_pass[0]),
        mwc=mwc,
        double=bool(a.double[0]),
        take=bool(a.take[0]),
        cubeless_equity=float(a.cubeless_equity[0]),
        probabilities=tuple(float(v) for v in np.asarray(probs, dtype=np.float64).reshape(5)),
        efficiency=float(a.efficiency[0]),
        state=state,
    )


# ------------------------------------------------------------------------------------------------------------
# presentation (``bgai hint`` without dice)

_LABELS = {"nd": "No double", "dt": "Double, take", "dp": "Double, pass"}


def _order(action: str) -> tuple[str, str, str]:
    """GNU Backgammon's listing order of the three cube equities (``getCubeDecisionOrdering``)."""
    plain = {v: k for k, v in _RE.items()}.get(action, action)
    if plain == DOUBLE_TAKE:
        return ("dt", "dp", "nd")
    if plain == DOUBLE_PASS:
        return ("dp", "dt", "nd")
    if plain in (TOO_GOOD_PASS, OPTIONAL_DOUBLE_PASS):
        return ("nd", "dt", "dp")
    return ("nd", "dp", "dt")


def describe_state(state: CubeState) -> str:
    """One line describing the cube and score, e.g. ``'money game, cube 1 centred, Jacoby on'``."""
    owner = {CENTRED: "centred", ME: "owned by the side on roll", OPPONENT: "owned by the opponent"}[state.owner]
    if state.is_money:
        return f"money game, cube {state.cube_value} {owner}, Jacoby {'on' if state.jacoby else 'off'}"
    a, b = state.away
    post = state.post_crawford and state.match_length > 1  # a 1-point match has no Crawford game
    game = "Crawford game" if state.crawford else ("post-Crawford" if post else "")
    return (f"{state.match_length}-point match, score {state.score[0]}-{state.score[1]} ({a}-away vs {b}-away"
            f"{', ' + game if game else ''}), cube {state.cube_value} {owner}")


def cube_unavailable_reason(state: CubeState) -> str | None:
    """Why the side on roll cannot double in ``state`` (None when it can), in words (GNU Backgammon prints
    "You cannot double." for all of these)."""
    if state.may_double():
        return None
    if state.owner == OPPONENT:
        return "the cube is owned by the opponent: cube not available"
    if state.is_money:
        return f"the cube is at its limit ({state.cube_limit}): cube not available"
    if state.crawford:
        return "doubling is not allowed in the Crawford game"
    if state.score[0] + state.cube_value >= state.match_length:
        return "the present cube already wins the side on roll the match (dead cube)"
    return "the post-Crawford leader has no use for the cube (dead cube)"


def _cubeless_lines(d: CubeDecision) -> list[str]:
    """The cubeless equity lines: always the plain cubeless money equity (:func:`bgai.core.equity.cubeless_equity`);
    money play with the Jacoby rule and a centred cube adds the figure without gammons, labelled; match play
    adds the normalised equity of the cubeless MWC."""

    plain = float(cubeless_equity(np.asarray(d.probabilities, dtype=np.float64)))
    line = f"cubeless equity {plain:+.3f} (money)"
    if d.state.is_money:
        if abs(d.cubeless_equity - plain) > 5e-7:
            line += f", {d.cubeless_equity:+.3f} with the Jacoby rule (gammons do not count)"
    else:
        line += f", match {d.cubeless_equity:+.3f} (normalised equity of the cubeless MWC)"
    return [f"{line}   (cube efficiency {d.efficiency:.2f})"]


def format_cube_decision(d: CubeDecision, *, dice_rolled: bool = False) -> str:
    """A GNU Backgammon-like "Cube analysis" block for one :class:`CubeDecision` (equities to 3 decimals;
    match play adds the match-winning chances).

    "cubeless equity" is the plain cubeless money equity; a figure changed by the Jacoby rule or the match
    score is labelled as such.  When the side on roll cannot double (Crawford game, cube owned by the
    opponent, dead cube, cube limit) only the reason and the no-double equity are shown, no double/take lines.
    The conservative policy (an agent without probabilities) is one line naming it.

    Raises:
        MatchStateError: ``dice_rolled``: a cube decision is made before the roll (use checker play).
    """
    if dice_rolled:
        raise MatchStateError("the dice are already rolled: no cube decision now (ask for checker play instead)")
    if d.policy == CONSERVATIVE_POLICY:
        return f"Cube policy: {CONSERVATIVE_POLICY} (the agent has no probabilities to judge the cube)"
    p = d.probabilities
    redouble = d.state.owner == ME
    lines = ["Cube analysis", *_cubeless_lines(d),
             f"  win {p[0]:.3f}  win gammon {p[1]:.3f}  win bg {p[2]:.3f}  -  lose {1 - p[0]:.3f}  "
             f"lose gammon {p[3]:.3f}  lose bg {p[4]:.3f}"]
    reason = cube_unavailable_reason(d.state)
    if reason is not None:
        lines.append(f"You cannot double: {reason}.")
        line = f"Cubeful equity (no double) {d.no_double:+.3f}"
        if d.mwc:
            line += f"   MWC {100 * d.mwc[0]:.2f}%"
        lines.append(line)
        lines.append(f"Proper cube action: {d.action}")
        return "\n".join(lines)
    lines.append("Cubeful equities:")
    eq = {"nd": d.no_double, "dt": d.double_take, "dp": d.double_pass}
    mwc = dict(zip(("nd", "dt", "dp"), d.mwc)) if d.mwc else None
    order = _order(d.action)
    first = eq[order[0]]
    for i, key in enumerate(order, 1):
        label = _LABELS[key].replace("Double", "Redouble").replace("No double", "No redouble") if redouble \
            else _LABELS[key]
        line = f"{i}. {label:<18} {eq[key]:+.3f}"
        if i > 1:
            line += f"  ({eq[key] - first:+.3f})"
        if mwc:
            line += f"   MWC {100 * mwc[key]:.2f}%"
        lines.append(line)
    lines.append(f"Proper cube action: {d.action}")
    return "\n".join(lines)


def cube_decision_dict(d: CubeDecision, *, dice_rolled: bool = False) -> dict:
    """A JSON-ready dict of a :class:`CubeDecision`.

    ``cubeless_equity`` is the plain cubeless money equity (:func:`bgai.core.equity.cubeless_equity`);
    ``cubeless_equity_jacoby`` (money, Jacoby rule, centred cube: gammons not counted) and
    ``cubeless_match_equity`` (match: normalised equity of the cubeless MWC) are added where they apply.
    ``available`` says whether the side on roll may double; when it may not, ``reason`` says why and
    ``equities`` (and ``mwc``) hold only ``no_double``.  The conservative policy (an agent without
    probabilities) gives ``policy``, ``action``, ``available``, ``double`` False, ``take`` True and ``state``.

    Raises:
        MatchStateError: ``dice_rolled``: a cube decision is made before the roll (use checker play).
    """

    if dice_rolled:
        raise MatchStateError("the dice are already rolled: no cube decision now (ask for checker play instead)")
    reason = cube_unavailable_reason(d.state)
    if d.policy == CONSERVATIVE_POLICY:
        out = {"policy": d.policy, "action": d.action, "available": reason is None, "double": False, "take": True,
               "state": describe_state(d.state)}
        if reason is not None:
            out["reason"] = reason
        return out
    plain = float(cubeless_equity(np.asarray(d.probabilities, dtype=np.float64)))
    equities = {"no_double": d.no_double, "double_take": d.double_take, "double_pass": d.double_pass}
    out = {
        "policy": d.policy,
        "action": d.action,
        "available": reason is None,
        "double": d.double,
        "take": d.take,
        "equities": equities if reason is None else {"no_double": d.no_double},
        "cubeless_equity": plain,
        "probabilities": dict(zip(OUTPUTS, d.probabilities)),
        "cube_efficiency": d.efficiency,
        "state": describe_state(d.state),
    }
    if reason is not None:
        out["reason"] = reason
    if d.state.is_money:
        if abs(d.cubeless_equity - plain) > 5e-7:
            out["cubeless_equity_jacoby"] = d.cubeless_equity
    else:
        out["cubeless_match_equity"] = d.cubeless_equity
    if d.mwc:
        mwc = dict(zip(("no_double", "double_take", "double_pass"), d.mwc))
        out["mwc"] = mwc if reason is None else {"no_double": d.mwc[0]}
    return out
