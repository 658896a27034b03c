"""gnubg's race and contact inputs (bgai.model.gnubg_inputs).

Three kinds of checks:

* every expert feature on hand-built positions, the value worked out in the comments;
* the vectorised encoders against a slow per-position reference written straight from the definitions in gnubg's
  ``eval.c`` (loops over points, dice and rolls; nothing shared with the vectorised code but the board layout);
* the whole vectors against GNU Backgammon itself.  ``gnubg_nn`` has no call that returns net inputs, so the test
  reads them through its nets: for each input ``k`` it loads a weights file (``gnubg_nn.net_load``) whose nets
  have one hidden unit fed by input ``k`` alone, with weights and thresholds that keep both sigmoids on the first
  segment of gnubg's piecewise sigmoid (``1 / (1 + e[0] (10 + 10 x))`` for ``0 <= x < 0.1``); the win output of
  ``gnubg_nn.probabilities`` then inverts exactly to the input's value (to float precision, ~1e-5).  gnubg_nn is
  gnubg-nn's engine, whose PIPLOSS heuristic counts made home-board points (``hit_rule="gnubg-nn"``); gnubg's
  ``eval.c`` counts occupied ones (the default), the only difference between the two.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.core.board import flip, starting_board, validation_errors
from bgai.core.movegen import afterstates
from bgai.errors import CheckpointError, ConfigError, InvalidPositionError
from bgai.model.classes import (
    CLASS_BEAROFF,
    CLASS_CONTACT,
    CLASS_CRASHED,
    CLASS_RACE,
    classify,
)
from bgai.model.features import ENCODERS, check_encoding, get_encoder
from bgai.model.gnubg_inputs import (
    CONTACT_INPUT_NAMES,
    CONTACT_SIZE,
    HALF_FEATURES,
    RACE_INPUT_NAMES,
    RACE_SIZE,
    contact_inputs,
    escapes_table,
    race_inputs,
)

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)
ME = {name: 200 + k for k, name in enumerate(HALF_FEATURES)}  # the side on roll's block
OPP = {name: 225 + k for k, name in enumerate(HALF_FEATURES)}


def board(me=None, opp=None):
    """A bgai board from {point: checkers} per side, points 1..24 in that side's numbering, 25 = bar."""
    b = np.zeros((2, 25), dtype=np.int8)
    for row, side in ((0, me or {}), (1, opp or {})):
        for p, n in side.items():
            b[row, p - 1] = n
    return b


# ---- the slow reference ------------------------------------------------------------------------------------

def ref_escapes(blocked, beyond_first=False):
    """Rolls of 36 with which a checker escapes; ``blocked`` = the set of distances (1..12) that are closed."""
    if beyond_first and not blocked:
        return 0
    first = min(blocked) if blocked else 99
    total = 0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            if d1 + d2 in blocked or (d1 in blocked and d2 in blocked):
                continue
            if beyond_first and d1 + d2 <= first:
                continue
            total += 1 if d1 == d2 else 2
    return total


def ref_E(side, n, beyond_first=False):
    """gnubg's Escapes(side, n): a checker with ``side``'s indices 24 - n, 25 - n, ... 1, 2, ... pips ahead."""
    blocked = {k + 1 for k in range(min(n, 12)) if side[24 - n + k] >= 2}
    return ref_escapes(blocked, beyond_first)


def ref_ways(lo, hi):
    """gnubg's ways to hit for roll (lo, hi): (pips, steps, all_required, direct), in gnubg's order."""
    if lo == hi:
        ways = [(lo, (), True, True)]
        for k in (2, 3, 4):
            if k * lo <= 24:
                ways.append((k * lo, tuple(lo * s for s in range(1, k)), True, False))
        return ways
    return [(lo, (), True, True), (hi, (), True, True), (lo + hi, (lo, hi), False, False)]


def ref_shots(me, opp, hit_rule):
    """(pips, rolls hitting 1+, rolls hitting 2+) of ``me`` at ``opp``'s blots: gnubg's heuristic, literally."""
    home = sum(1 for i in range(6) if (me[i] >= 2 if hit_rule == "gnubg-nn" else me[i] >= 1))
    last_blot = 23 if home > 2 else 21  # opp's indices considered for a blot

    def hitters(pips, steps, all_required):
        found = set()
        for j in range(25):  # j = my index of the hitter, 24 = bar
            if me[j] == 0 or (j < 6 and me[j] == 2):
                continue
            i = 23 + pips - j  # opp's index of the point hit
            if not 0 <= i <= last_blot or opp[i] != 1:
                continue
            open_ = [opp[i - s] < 2 for s in steps]
            if steps and (not all(open_) if all_required else not any(open_)):
                continue
            found.add(j)
        return found

    total_pips = n1 = n2 = 0
    rolls = [(lo, hi) for hi in range(1, 7) for lo in range(1, hi + 1)]
    for lo, hi in rolls:
        ways = ref_ways(lo, hi)
        cnt = lost = 0
        if me[24] == 0:
            last_direct = None
            for pips, steps, all_required, direct in ways:
                hit = hitters(pips, steps, all_required)
                if not hit:
                    continue
                k = max(hit)
                lost = max(lost, k - pips + 1)
                if direct:
                    if last_direct != k or me[k] > 1:
                        cnt += 1
                    last_direct = k
                    if lo == hi and len(hit) > 1:
                        cnt += 1
                else:
                    cnt = max(cnt, 1)
                    if any(opp[23 - k + s] == 1 for s in steps):
                        cnt += 1
        elif me[24] == 1:
            used = False
            for idx, (pips, steps, all_required, direct) in enumerate(ways):
                hit = hitters(pips, steps, all_required)
                if not hit:
                    continue
                if direct:
                    for k in sorted(hit, reverse=True):
                        if k != 24:
                            if used:
                                break
                            other = ways[1 - idx][0]
                            if opp[other - 1] > 1:  # the other die cannot enter
                                break
                            used = True
                        cnt += 1
                        lost = max(lost, k - pips + 1)
                elif 24 in hit:
                    cnt = max(cnt, 1)
                    lost = max(lost, 25 - pips)
                    if any(opp[s + 1] == 1 for s in steps):
                        cnt += 1
        else:
            for pips, steps, all_required, direct in ways[:2]:
                if direct and 24 in hitters(pips, steps, all_required):
                    cnt += 1
                    lost = max(lost, 25 - pips)
        weight = 1 if lo == hi else 2
        total_pips += weight * lost
        n1 += weight * (cnt >= 1)
        n2 += weight * (cnt >= 2)
    return total_pips, n1, n2


def ref_half(me, opp, hit_rule="gnubg"):
    """The 25 features of ``me`` against ``opp`` (rows of 25 ints), OFF1..3 of ``me``'s own checkers off."""
    me, opp = [int(v) for v in me], [int(v) for v in opp]
    f = {}
    off = 15 - sum(me)
    f["OFF1"], f["OFF2"], f["OFF3"] = (
        (1, 1, (off - 6) / 3) if off >= 6 else (1, (off - 3) / 3, 0) if off >= 3 else (off / 3, 0, 0)
    )
    opp_top = max([i for i in range(25) if opp[i]], default=-1)
    ob = 23 - opp_top
    f["BREAK_CONTACT"] = sum((i + 1 - ob) * me[i] for i in range(25) if i > ob) / 167
    f["FREEPIP"] = sum((i + 1) * me[i] for i in range(25) if i < ob) / 100
    t = 24 * me[24]
    no = me[24]
    for i in range(6, 24):
        n = me[i]
        if i >= 12 and i > ob:
            n = 0 if n in (0, 2) else 1 if n == 1 else n - 2
        t += i * n
        no += n
    for i in range(5, -1, -1):
        if me[i] > 2:
            t += i * (me[i] - 2)
            no += me[i] - 2
        elif me[i] < 2 and no >= 2 - me[i]:
            t -= i * (2 - me[i])
            no -= 2 - me[i]
    f["TIMING"] = max(t, 0) / 100
    back = max([i for i in range(25) if me[i]], default=-1)
    f["BACK_CHEQUER"] = back / 24
    anchor = max([i for i in range(24) if me[i] >= 2], default=-1)
    f["BACK_ANCHOR"] = anchor / 24
    fwd = [i for i in range(18, 24) if me[i] >= 2]
    fwd = min(fwd) if fwd else max([i for i in range(12, 18) if me[i] >= 2], default=None)
    f["FORWARD_ANCHOR"] = 2.0 if fwd is None else (24 - fwd) / 6
    pips, n1, n2 = ref_shots(me, opp, hit_rule)
    f["PIPLOSS"], f["P1"], f["P2"] = pips / 432, n1 / 36, n2 / 36
    f["BACKESCAPES"] = ref_E(me, 23 - ob) / 36 if ob <= 23 else 1.0
    f["BACKRESCAPES"] = ref_E(me, 23 - ob, True) / 36 if ob <= 23 else 0.0
    a = min([ref_E(me, k) for k in range(15, 24 - ob)], default=36)
    c = min(ref_E(me, k) for k in range(15, 24))
    f["ACONTAIN"], f["ACONTAIN2"] = (36 - a) / 36, ((36 - a) / 36) ** 2
    f["CONTAIN"], f["CONTAIN2"] = (36 - c) / 36, ((36 - c) / 36) ** 2
    f["MOBILITY"] = sum((i - 5) * me[i] * ref_E(opp, i) for i in range(6, 25)) / 3600
    total = sum(me)
    mean = -(-sum(i * me[i] for i in range(25)) // total) if total else 0
    above = [(i - mean) ** 2 for i in range(mean + 1, 25) for _ in range(me[i])]
    f["MOMENT2"] = (-(-sum(above) // len(above)) if above else 0) / 400
    closed = [opp[i] >= 2 for i in range(6)]
    if me[24]:
        two = me[24] >= 2
        loss = 0
        for i in range(6):
            for j in range(i + 1, 6):
                if closed[i] and closed[j]:
                    loss += 2 * (i + j + 2)
                elif two and (closed[i] or closed[j]):
                    loss += 2 * (i + 1 if closed[i] else j + 1)
            if closed[i]:
                loss += 4 * (i + 1)
        f["ENTER"] = loss / (36 * 49 / 6)
    else:
        f["ENTER"] = 0.0
    f["ENTER2"] = (36 - (sum(closed) - 6) ** 2) / 36
    made = [i for i in range(1, 24) if me[i] >= 2]
    if len(made) >= 2:
        top = max(made)
        weights = [11 if d <= 6 else 13 - d if d <= 11 else 0 for d in range(25)]
        f["BACKBONE"] = 1 - sum(weights[top - j] for j in made if j < top) / (11 * (len(made) - 1))
    else:
        f["BACKBONE"] = 0.0
    anchors = sum(1 for i in range(18, 24) if me[i] >= 2)
    tot = sum(me[18:25])
    f["BACKG"] = (tot - 3) / 4 if anchors > 1 else 0.0
    f["BACKG1"] = tot / 8 if anchors == 1 else 0.0
    return [f[name] for name in HALF_FEATURES]


def ref_point_units(n, bar=False):
    over = (n - 3) / 2 if n > 3 else 0.0
    return [n >= 1, n >= 2, n >= 3, over] if bar else [n == 1, n == 2, n >= 3, over]


def ref_contact(b, hit_rule="gnubg"):
    units = []
    for side in (1, 0):  # gnubg: opponent first
        for c in range(24):
            units += ref_point_units(int(b[side, c]))
        units += ref_point_units(int(b[side, 24]), bar=True)
    me_half = ref_half(b[0], b[1], hit_rule)
    opp_half = ref_half(b[1], b[0], hit_rule)
    me_half[:3], opp_half[:3] = opp_half[:3], me_half[:3]  # gnubg's switched OFF units
    return np.array(units + me_half + opp_half, dtype=np.float64)


def ref_race(b):
    units = []
    for side in (1, 0):
        row = [int(v) for v in b[side]]
        for c in range(23):
            units += ref_point_units(row[c])
        off = 15 - sum(row)
        units += [off == k for k in range(1, 15)]
        units.append(sum(n * (c // 6) for c, n in enumerate(row[:24]) if c >= 6) / 10)
    return np.array(units, dtype=np.float64)


# ---- positions ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_play():
    """Unique afterstates (side on roll in row 0) of every fixture position and roll, and their classes."""
    data = np.load(FIXTURE)
    boards = data["boards"]
    after, _ = afterstates(np.repeat(boards, len(ROLLS), axis=0), np.tile(ROLLS, (len(boards), 1)))
    after = np.ascontiguousarray(flip(after))
    _, first = np.unique(after.reshape(len(after), -1).view("V50")[:, 0], return_index=True)  # unique boards
    after = after[np.sort(first)]
    return after, classify(after)


def sample(boards, classes, wanted, n, seed, bar_share=0.3):
    """``n`` boards of the classes ``wanted``, about ``bar_share`` of them with the side on roll on the bar."""
    rng = np.random.default_rng(seed)
    pool = boards[np.isin(classes, wanted)]
    on_bar = pool[pool[:, 0, 24] > 0]
    off_bar = pool[pool[:, 0, 24] == 0]
    k = min(int(n * bar_share), len(on_bar))
    pick = [on_bar[rng.choice(len(on_bar), k, replace=False)]] if k else []
    pick.append(off_bar[rng.choice(len(off_bar), n - k, replace=False)])
    return np.concatenate(pick)


# ---- hand-built positions, one or more per feature -------------------------------------------------------------

def enc(me=None, opp=None, rule="gnubg"):
    b = board(me, opp)
    assert validation_errors(b) == [None]
    return contact_inputs(b, hit_rule=rule)[0].astype(np.float64)


def test_off_units_are_switched_like_gnubg():
    # the opponent has borne off 4 (11 left), the side on roll 7 (8 left)
    v = enc({6: 5, 8: 3}, {6: 5, 13: 4, 24: 2})
    # the side on roll's block holds the opponent's 4 off: (1, (4 - 3) / 3, 0)
    assert v[[ME["OFF1"], ME["OFF2"], ME["OFF3"]]] == pytest.approx([1, 1 / 3, 0])
    # and the opponent's block the side on roll's 7 off: (1, 1, (7 - 6) / 3)
    assert v[[OPP["OFF1"], OPP["OFF2"], OPP["OFF3"]]] == pytest.approx([1, 1, 1 / 3])
    assert enc({6: 13}, {6: 15})[[OPP["OFF1"], OPP["OFF2"]]] == pytest.approx([2 / 3, 0])


def test_break_contact_and_freepip():
    # the opponent's rearmost checker on its 20-point = my 5-point (index 4): opp_back = 4.  My 2 checkers on my
    # 24-point need 20 pips each to pass it, my 3 on the 13-point 9 each: (40 + 27) / 167
    v = enc({24: 2, 13: 3, 3: 4}, {20: 1, 6: 14})
    assert v[ME["BREAK_CONTACT"]] == pytest.approx(67 / 167)
    # my 4 checkers on my 3-point (index 2 < 4) are past it: 4 * 3 pips = 12
    assert v[ME["FREEPIP"]] == pytest.approx(0.12)
    # the opponent against me: my rearmost on my 24-point = its 1-point (its index 0): it must pass index 0;
    # its 14 checkers on its 6-point need 6 pips each, the one on its 20-point 20: (84 + 20) / 167
    assert v[OPP["BREAK_CONTACT"]] == pytest.approx(104 / 167)
    assert v[OPP["FREEPIP"]] == 0


def test_back_chequer_back_anchor_forward_anchor():
    v = enc({18: 1, 21: 2, 19: 2, 6: 5}, {9: 5})
    assert v[ME["BACK_CHEQUER"]] == pytest.approx(20 / 24)  # the 21-point is index 20
    assert v[ME["BACK_ANCHOR"]] == pytest.approx(20 / 24)
    # anchors in the opponent's home board on my 19- and 21-points: the lowest, index 18, gives (24 - 18) / 6
    assert v[ME["FORWARD_ANCHOR"]] == pytest.approx(1.0)
    # none there: the highest anchor on indices 12..17, my 17-point (index 16): 8 / 6
    v = enc({15: 2, 17: 2, 23: 1, 25: 1}, {9: 5})
    assert v[ME["BACK_CHEQUER"]] == 1.0  # on the bar
    assert v[ME["BACK_ANCHOR"]] == pytest.approx(16 / 24)
    assert v[ME["FORWARD_ANCHOR"]] == pytest.approx(8 / 6)
    # no anchor at all: 2, and BACK_ANCHOR -1 / 24
    v = enc({24: 1, 13: 1, 10: 1}, {9: 5})
    assert v[ME["FORWARD_ANCHOR"]] == 2.0 and v[ME["BACK_ANCHOR"]] == pytest.approx(-1 / 24)


def test_pip_loss_one_shooter():
    # my 2 checkers on my 13-point (index 12) against an opponent blot on its 16-point = my 9-point (index 8),
    # 4 pips away; I hold no home-board point, so blots on the opponent's 23/24-points would be ignored (none).
    # Rolls that hit: any 4 (41 42 43 54 64: 10 rolls, 44: 1), 31 (2, via the 1 or the 3), 22 (1), 11 (1)
    # = 15.  Each sends a checker from its 16-point back: 9 pips.  Never two checkers hit.
    v = enc({13: 2}, {16: 1, 6: 14})
    assert v[ME["P1"]] == pytest.approx(15 / 36)
    assert v[ME["PIPLOSS"]] == pytest.approx(15 * 9 / 432)
    assert v[ME["P2"]] == 0
    # block my 10- and 12-points (the opponent's 15- and 13-points): 31 is blocked both ways (13-1 = 12,
    # 13-3 = 10 closed), 11 too (its first step lands on 12); 22 still goes 13-11-9.
    v = enc({13: 2}, {16: 1, 15: 2, 13: 2, 6: 10})
    assert v[ME["P1"]] == pytest.approx(12 / 36)
    assert v[ME["PIPLOSS"]] == pytest.approx(12 * 9 / 432)


def test_pip_loss_two_blots_and_bar():
    # hitters on my 15- and 13-points (indices 14, 12; 3 checkers each), opponent blots on my 11- and 9-points
    # (indices 10, 8: they lose 11 and 9 pips), nothing blocked.  Distances: 14-10 = 4, 12-8 = 4, 12-10 = 2,
    # 14-8 = 6.  Rolls that hit nothing: 53, 55 (3 rolls): P1 = 33 / 36.  Two checkers hit (P2): 44 (two
    # hitters for the 4s), 42 and 62 (different hitters for the two dice), 64 (the same hitter, index 14, for
    # both dice, but it holds 3 checkers), 22 (its 6 = 2+2+2 path from 14 crosses the blot on 10): 1+2+2+2+1 =
    # 8.  Pips: the blot on index 10 (11 pips) for 23 rolls (11 21 22 31 32 41 42 43 44 52 54 62 64), the one
    # on index 8 (9 pips) for the other 10 (33 51 61 63 65 66): 253 + 90 = 343.
    v = enc({15: 3, 13: 3}, {14: 1, 16: 1, 6: 13})
    assert v[ME["P1"]] == pytest.approx(33 / 36)
    assert v[ME["P2"]] == pytest.approx(8 / 36)
    assert v[ME["PIPLOSS"]] == pytest.approx(343 / 432)
    # two on the bar: only direct hits from the bar count.  A blot on the opponent's 3-point (my 22-point) is
    # hit by any 3 (31 32 43 53 63: 10 rolls, 33: 1) = 11, each costing it 22 pips.
    v = enc({25: 2, 6: 5}, {3: 1, 6: 5})
    assert v[ME["P1"]] == pytest.approx(11 / 36)
    assert v[ME["PIPLOSS"]] == pytest.approx(11 * 22 / 432)
    assert v[ME["P2"]] == 0


def test_escapes_of_the_opponents_back_checker():
    # the opponent's rearmost checker on its 24-point = my 1-point (index 0); my points on indices 5 and 6 block
    # 5 and 6 pips ahead of it.  Escaping rolls (sum open, one die open): 11 22 44, 21 31 43 52 53 54 61 62
    # 63 64 = 3 + 10 * 2 = 23.  Beyond the first block (sum > 5) only: 44, 43 52 53 54 61 62 63 64 = 17.
    v = enc({6: 2, 7: 2, 13: 5}, {24: 1, 6: 5})
    assert v[ME["BACKESCAPES"]] == pytest.approx(23 / 36)
    assert v[ME["BACKRESCAPES"]] == pytest.approx(17 / 36)
    assert escapes_table()[0b110000] == 23 and escapes_table(True)[0b110000] == 17
    assert escapes_table()[0] == 36 and escapes_table(True)[0] == 0


def test_containment():
    # my 5-prime on my 4- to 8-points (indices 3..7) and my 13-point (index 12).  Escapes of a checker on
    # index 2 (blocks 1..5 and 10 pips ahead): rolls with a 6 whose sum is not 10: 61 62 63 65 66 = 9; on index
    # 1 (blocks 2..6, 11): only 61 (2); on index 0 (blocks 3..7, 12): 11 and 62 (3); higher up more.
    # CONTAIN = 1 - 2 / 36.  The opponent's rearmost on my 3-point (index 2): ACONTAIN only looks from there
    # up: 1 - 9 / 36.
    v = enc({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 13: 5}, {22: 1, 6: 5, 8: 5})
    assert v[ME["CONTAIN"]] == pytest.approx(34 / 36)
    assert v[ME["CONTAIN2"]] == pytest.approx((34 / 36) ** 2)
    assert v[ME["ACONTAIN"]] == pytest.approx(27 / 36)
    assert v[ME["ACONTAIN2"]] == pytest.approx((27 / 36) ** 2)


def test_mobility():
    # my 2 checkers on my 13-point (index 12): (12 - 5) * 2 * escapes; with the opponent's point on my 10-point
    # (its 15-point), 3 pips ahead, the rolls 21 and 33 do not get past: 33 escapes.  2 * 7 * 33 / 3600.
    v = enc({13: 2}, {15: 2, 6: 5})
    assert v[ME["MOBILITY"]] == pytest.approx(2 * 7 * 33 / 3600)
    assert enc({13: 2}, {6: 5})[ME["MOBILITY"]] == pytest.approx(2 * 7 * 36 / 3600)


def test_moment2():
    # checkers on indices 0, 0, 5, 9, 9: mean 23 / 5 = 4.6, rounded up to 5; above it the two on index 9, each
    # (9 - 5)^2 = 16: mean 16 / 400
    v = enc({1: 2, 6: 1, 10: 2}, {6: 5})
    assert v[ME["MOMENT2"]] == pytest.approx(16 / 400)


def test_enter_and_enter2():
    # one on the bar against closed points on the opponent's 1- and 3-points: 11 loses 4 pips, 33 loses 12, 31
    # (2 rolls) loses 4: 24 pips of 36 rolls, / (36 * 49 / 6)
    v = enc({25: 1, 6: 5}, {1: 2, 3: 2, 8: 5})
    assert v[ME["ENTER"]] == pytest.approx(24 / 294)
    assert v[ME["ENTER2"]] == pytest.approx((36 - (2 - 6) ** 2) / 36)
    # two on the bar: also each roll with one closed die and one open one loses that die: 56 by gnubg's count
    assert enc({25: 2, 6: 5}, {1: 2, 3: 2, 8: 5})[ME["ENTER"]] == pytest.approx(56 / 294)
    assert enc({6: 5}, {1: 2, 3: 2, 8: 5})[ME["ENTER"]] == 0


def test_timing():
    # opp_back = 3 (the opponent's rearmost on my 4-point).  Indices 12..23 above it count spares: 3 on index
    # 15 -> 1, 2 on 13 -> 0, 1 on 12 -> 1; index 8 counts all (2): t = 15 + 12 + 16 = 43, 4 checkers.  Home
    # board from index 5 down: 4 on 5 -> +2 spares (t 53, 6); 0 on 4 takes 2 (t 45, 4); 0 on 3 takes 2 (t 39,
    # 2); 1 on 2 takes 1 (t 37, 1); 0 on 1 needs 2, only 1 left: skipped; 2 on 0: nothing.  37 / 100.
    v = enc({16: 3, 14: 2, 13: 1, 9: 2, 6: 4, 3: 1, 1: 2}, {21: 1, 6: 5})
    assert v[ME["TIMING"]] == pytest.approx(0.37)


def test_backbone():
    # points on indices 20 (3 checkers), 15, 12, 5: the top one is 20; distances 5 (11), 8 (13 - 8 = 5), 15 (0)
    # over 3 lower points: 1 - 16 / 33
    v = enc({21: 3, 16: 2, 13: 2, 6: 2}, {6: 5})
    assert v[ME["BACKBONE"]] == pytest.approx(1 - 16 / 33)
    assert enc({21: 3}, {6: 5})[ME["BACKBONE"]] == 0


def test_backgame_units():
    # two anchors on indices 18 and 20, one checker on 22 and one on the bar: 6 checkers back, (6 - 3) / 4
    v = enc({19: 2, 21: 2, 23: 1, 25: 1, 6: 5}, {7: 5})
    assert v[ME["BACKG"]] == pytest.approx(0.75) and v[ME["BACKG1"]] == 0
    # one anchor (3 on index 19) and one on index 23: 4 back, 4 / 8
    v = enc({20: 3, 24: 1, 6: 5}, {7: 5})
    assert v[ME["BACKG1"]] == pytest.approx(0.5) and v[ME["BACKG"]] == 0


def test_point_units_and_layout():
    b = board({6: 5, 8: 3, 13: 5, 22: 1, 25: 1}, {1: 1, 2: 2, 6: 7, 25: 4})
    assert validation_errors(b) == [None]
    v = contact_inputs(b)[0]
    assert v.shape == (CONTACT_SIZE,) and v.dtype == np.float32
    # opponent first: its 1-point (1 checker), 2-point (2), 6-point (7 -> over 3 = 2), bar (4)
    assert v[0:4].tolist() == [1, 0, 0, 0] and v[4:8].tolist() == [0, 1, 0, 0]
    assert v[20:24].tolist() == [0, 0, 1, 2.0]
    assert v[96:100].tolist() == [1, 1, 1, 0.5]
    # then the side on roll: its 6-point (5: over 3 = 1), 22-point, bar
    assert v[120:124].tolist() == [0, 0, 1, 1.0]
    assert v[184:188].tolist() == [1, 0, 0, 0] and v[196:200].tolist() == [1, 0, 0, 0]
    assert CONTACT_INPUT_NAMES[120] == "me.pt6.eq1" and CONTACT_INPUT_NAMES[200] == "me.OFF1"
    assert len(CONTACT_INPUT_NAMES) == CONTACT_SIZE and len(RACE_INPUT_NAMES) == RACE_SIZE


def test_race_units():
    b = board({13: 2, 10: 3, 8: 4, 3: 1}, {1: 2, 5: 6, 11: 1})
    assert validation_errors(b) == [None] and classify(b)[0] == CLASS_RACE
    v = race_inputs(b)[0]
    assert v.shape == (RACE_SIZE,) and v.dtype == np.float32
    # opponent: 9 on the board, 6 off; NCROSS: one checker on its 11-point (1 crossing) -> 0.1
    assert v[92:106].tolist() == [float(k == 6) for k in range(1, 15)]
    assert v[106] == pytest.approx(0.1)
    assert v[16:20].tolist() == [0, 0, 1, 1.5]  # its 5-point, 6 checkers
    # me: 10 on the board, 5 off; NCROSS: 2 on the 13-point (2 each) + 3 on the 10-point (1) + 4 on the
    # 8-point (1) = 4 + 3 + 4 = 11 -> 1.1
    assert v[107 + 92 : 107 + 106].tolist() == [float(k == 5) for k in range(1, 15)]
    assert v[213] == pytest.approx(1.1)
    assert v[107 + 48 : 107 + 52].tolist() == [0, 1, 0, 0]  # my 13-point
    assert np.allclose(v, ref_race(b))


# ---- against the reference, many positions ---------------------------------------------------------------------

def test_contact_inputs_equal_reference(real_play):
    boards, classes = real_play
    picks = [sample(boards, classes, [CLASS_CONTACT], 500, 1, bar_share=0.4),
             sample(boards, classes, [CLASS_CRASHED], 200, 2, bar_share=0.3),
             sample(boards, classes, [CLASS_RACE, CLASS_BEAROFF], 100, 3, bar_share=0.0),
             np.stack([starting_board(), board({25: 3, 1: 12}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 5}),
                       board({}, {6: 5, 25: 1}), board({6: 5, 24: 2}, {}), board({25: 15}, {25: 15}),
                       np.zeros((2, 25), dtype=np.int8)])]
    test_boards = np.concatenate(picks)
    assert (test_boards[:, 0, 24] == 1).sum() >= 100 and (test_boards[:, 0, 24] >= 2).sum() >= 30
    for rule in ("gnubg", "gnubg-nn"):
        mine = contact_inputs(test_boards, hit_rule=rule)
        ref = np.stack([ref_contact(b, rule) for b in test_boards])
        err = np.abs(mine - ref)
        worst = np.unravel_index(np.argmax(err), err.shape)
        assert err.max() <= 2e-7, (rule, CONTACT_INPUT_NAMES[worst[1]], test_boards[worst[0]].tolist())


def test_contact_inputs_of_the_other_side(real_play):
    # seen from the other side, the two point blocks and the two feature blocks trade places
    boards, _ = real_play
    some = boards[::97]
    v, w = contact_inputs(some), contact_inputs(flip(some))
    assert np.array_equal(v[:, :100], w[:, 100:200]) and np.array_equal(v[:, 100:200], w[:, :100])
    assert np.array_equal(v[:, 200:225], w[:, 225:250]) and np.array_equal(v[:, 225:250], w[:, 200:225])


def test_race_inputs_equal_reference(real_play):
    boards, classes = real_play
    test_boards = sample(boards, classes, [CLASS_RACE, CLASS_BEAROFF], 800, 4, bar_share=0.0)
    mine = race_inputs(test_boards)
    ref = np.stack([ref_race(b) for b in test_boards])
    assert np.abs(mine - ref).max() <= 1e-7


def test_chunks_and_single_boards_agree(real_play):
    boards, _ = real_play
    big = boards[np.random.default_rng(5).choice(len(boards), 9000, replace=False)]  # more than two chunks
    whole = contact_inputs(big)
    assert np.array_equal(whole[4100:4105], contact_inputs(big[4100:4105]))
    assert np.array_equal(whole[0], contact_inputs(big[0])[0])
    assert contact_inputs(np.zeros((0, 2, 25), dtype=np.int8)).shape == (0, CONTACT_SIZE)


# ---- against GNU Backgammon (gnubg_nn), reading its inputs through probe nets --------------------------------

T_HIDDEN, T_OUTPUT, V_OUTPUT = -0.5, -2.0, 4.0


class GnubgInputs:
    """Reads gnubg_nn's race / contact net inputs: one probe weights file per input index (see the docstring)."""

    def __init__(self, tmpdir, contact_scale, race_scale):
        import gnubg_nn

        self.g = gnubg_nn
        path = os.path.join(os.path.dirname(gnubg_nn.__file__), "data", "gnubg.weights")
        with open(path) as fh:
            lines = fh.read().split("\n")
        self.nets, i = [], 1
        while i < len(lines) and lines[i].strip():
            n_in, n_hidden, n_out = (int(v) for v in lines[i + 1].split()[:3])
            self.nets.append((lines[i], n_in))
            i += 2 + n_in * n_hidden + n_hidden * n_out + n_hidden + n_out
        assert [name.split()[0] for name, _ in self.nets] == ["race", "prune", "crashed", "prune", "contact",
                                                              "prune"]
        # input k feeds the hidden unit with weight 0.45 / scale: |w x| <= 0.45 keeps it on the first segment
        self.w_contact = np.float32(0.45) / np.asarray(contact_scale, dtype=np.float32)
        self.w_race = np.float32(0.45) / np.asarray(race_scale, dtype=np.float32)
        self.original = gnubg_nn.net_load(path)  # made active again after each read
        self.handles = []
        for k in range(max(CONTACT_SIZE, RACE_SIZE)):
            text = [lines[0]]
            for name, n_in in self.nets:
                w = np.zeros(n_in, dtype=np.float32)
                if name.startswith("contact") and k < CONTACT_SIZE:
                    w[k] = self.w_contact[k]
                elif name == "race" and k < RACE_SIZE:
                    w[k] = self.w_race[k]
                text += [name, f"{n_in} 1 5 0 0.1000000 1.0000000"]
                text += [f"{x:.9g}" for x in w] + [f"{V_OUTPUT}"] * 5 + [f"{T_HIDDEN}"] + [f"{T_OUTPUT}"] * 5
            file = os.path.join(tmpdir, f"probe{k}.weights")
            with open(file, "w") as fh:
                fh.write("\n".join(text) + "\n")
            self.handles.append(gnubg_nn.net_load(file, 0))

    def read(self, boards, race):
        """gnubg's inputs ``(N, K)`` float64 and ``(N,)`` bool: whether every probe stayed on its segment."""
        g = self.g
        w = (self.w_race if race else self.w_contact).astype(np.float64)
        ply = g.p_race if race else 0
        gnubg_boards = [[b[1].tolist(), b[0].tolist()] for b in np.asarray(boards, dtype=np.int64)]
        out = np.empty((len(gnubg_boards), len(w)))
        try:
            for k in range(len(w)):
                g.net_use(self.handles[k])
                out[:, k] = [g.probabilities(gb, ply)[0] for gb in gnubg_boards]
        finally:
            g.net_use(self.original)
        # on the segment both layers are h = 1 / (2 + 10 x / 10) with x = -beta * z: out = 1 / (2 - r),
        # r = T_OUTPUT + V h, h = 1 / (2 - 0.1 z), z = T_HIDDEN + w input
        ok = ((out > 1 / 2.1) & (out <= 0.5)).all(axis=1)
        out = np.where(ok[:, None], out, 0.5)
        h = (2.0 - 1.0 / out - T_OUTPUT) / V_OUTPUT
        z = 10.0 * (2.0 - 1.0 / h)
        return (z - T_HIDDEN) / w, ok


@pytest.fixture(scope="module")
def gnubg_probe(tmp_path_factory):
    pytest.importorskip("gnubg_nn")
    # scales: the largest magnitude each input can reach, with room (values beyond would leave the segment
    # and show up as probe failures, not as silent agreement)
    contact_scale = np.full(CONTACT_SIZE, 1.1, dtype=np.float32)
    contact_scale[3::4][:50] = 6.6  # (n - 3) / 2 units, up to 6
    for name, top in (("BREAK_CONTACT", 2.4), ("FORWARD_ANCHOR", 2.2), ("TIMING", 3.7), ("FREEPIP", 3.7),
                      ("PIPLOSS", 2.1),
                      ("MOBILITY", 3.0), ("MOMENT2", 1.6), ("BACKG", 3.1), ("BACKG1", 2.0)):
        contact_scale[[ME[name], OPP[name]]] = top
    contact_scale[[ME["BACK_ANCHOR"], OPP["BACK_ANCHOR"], ME["BACK_CHEQUER"], OPP["BACK_CHEQUER"]]] = 1.1
    race_scale = np.full(RACE_SIZE, 1.1, dtype=np.float32)
    race_scale[3:92:4] = race_scale[107 + 3 : 107 + 92 : 4] = 6.6
    race_scale[[106, 213]] = 4.6  # NCROSS: at most 15 * 3 / 10
    return GnubgInputs(str(tmp_path_factory.mktemp("probe")), contact_scale, race_scale)


def test_contact_inputs_equal_gnubg(real_play, gnubg_probe):
    boards, classes = real_play
    test_boards = sample(boards, classes, [CLASS_CONTACT], 2000, 11, bar_share=0.3)
    theirs, ok = gnubg_probe.read(test_boards, race=False)
    assert ok.all()  # contact positions go straight to the contact net
    mine = contact_inputs(test_boards, hit_rule="gnubg-nn").astype(np.float64)
    tol = 1e-5 / gnubg_probe.w_contact.astype(np.float64)
    err = np.abs(mine - theirs) / tol
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= 1.0, (CONTACT_INPUT_NAMES[worst[1]], mine[worst], theirs[worst],
                              test_boards[worst[0]].tolist())
    # gnubg's own hit rule differs from gnubg-nn's only in PIPLOSS/P1/P2, and only in some positions
    ours = contact_inputs(test_boards)
    diff = np.flatnonzero(np.abs(ours - mine.astype(np.float32)).max(axis=0) > 0)
    assert {CONTACT_INPUT_NAMES[k].split(".")[1] for k in diff} <= {"PIPLOSS", "P1", "P2"}


def test_race_inputs_equal_gnubg(real_play, gnubg_probe):
    boards, classes = real_play
    test_boards = sample(boards, classes, [CLASS_RACE, CLASS_BEAROFF], 1500, 12, bar_share=0.0)
    theirs, ok = gnubg_probe.read(test_boards, race=True)
    # gnubg overrides the race net's output for decided races (certain wins): those cannot be read
    assert ok.sum() >= 800
    g = gnubg_probe.g
    for b in test_boards[~ok][:20]:
        assert g.probabilities([b[1].tolist(), b[0].tolist()], g.p_race)[0] in (0.0, 1.0)
    mine = race_inputs(test_boards[ok]).astype(np.float64)
    tol = 1e-5 / gnubg_probe.w_race.astype(np.float64)
    err = np.abs(mine - theirs[ok]) / tol
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= 1.0, (RACE_INPUT_NAMES[worst[1]], mine[worst], theirs[ok][worst])


# ---- registry and errors ---------------------------------------------------------------------------------------

def test_registered_encoders():
    race, contact = get_encoder("race"), get_encoder("contact")
    assert race.describe() == {"name": "race", "version": 1, "size": RACE_SIZE}
    assert contact.describe() == {"name": "contact", "version": 1, "size": CONTACT_SIZE}
    assert ENCODERS["contact"] is contact and check_encoding(contact.describe()) is contact
    b = starting_board()
    assert np.array_equal(contact(b), contact_inputs(b))
    with pytest.raises(CheckpointError):
        check_encoding({"name": "contact", "version": 1, "size": 249})


def test_bad_input():
    with pytest.raises(InvalidPositionError):
        contact_inputs(np.zeros((2, 24), dtype=np.int8))
    too_many = starting_board()
    too_many[0, 0] = 3
    with pytest.raises(InvalidPositionError, match="more than 15"):
        contact_inputs(too_many)
    with pytest.raises(InvalidPositionError, match="race"):
        race_inputs(starting_board())  # checkers on the 24-points
    with pytest.raises(ConfigError, match="hit_rule"):
        contact_inputs(starting_board(), hit_rule="xg")
