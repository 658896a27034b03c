"""The compiled step reader: one numba kernel reading the steps of all the afterstates of one position and roll.

Plain Python in numba's subset; :mod:`bgai.analysis.plays` compiles it with :class:`bgai.util.jit.LazyKernel` when
numba is available and keeps its Python reader (``_direct_steps``) as the reference
(tests/test_jit_plays.py checks that both give the same steps on every play of thousands of positions and all 21
rolls).  A module of its own so that numba's cache of the machine code (keyed to this file) survives edits of the
rest of :mod:`bgai.analysis.plays`.

A play's steps come back packed in one int64 (:func:`unpack_steps` turns it into the steps tuple):

* bits 0..2: the number of steps (0 for a row equal to the board: nothing played);
* then 11 bits a step, in playing order: ``from | to << 5 | hit << 10`` (``from`` 25 = bar, ``to`` 1..24);
* :data:`SEARCH` (-1): not one of the cases read off directly (a checker borne off, a checker that uses both dice
  of a non-double passing through a point it could have stopped on differently, ...): the caller searches.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SEARCH", "direct_steps", "unpack_steps"]

#: The code of a row whose steps are not read off directly (the caller's search finds them).
SEARCH = -1


def unpack_steps(code: int) -> tuple:
    """The steps tuple ``((from, to, hit), ...)`` of a code of :func:`direct_steps` (not :data:`SEARCH`)."""
    return tuple(
        ((code >> s) & 31, (code >> (s + 5)) & 31, bool((code >> (s + 10)) & 1))
        for s in range(3, 3 + 11 * (code & 7), 11)
    )


def direct_steps(board, after, hi, lo):  # pragma: no cover - compiled by numba
    """The steps of each afterstate of one position and roll, as ``bgai.analysis.plays._direct_steps`` reads them.

    Args:
        board: ``(2, 25)`` int8 position (side to move in row 0).
        after: ``(M, 2, 25)`` int8 afterstates of ``board`` with the roll.
        hi, lo: the higher and the lower die.

    Returns:
        ``(M,)`` int64: each row's packed steps (module docstring), :data:`SEARCH` where not read off directly.
    """
    out = np.empty(after.shape[0], dtype=np.int64)
    me0 = board[0]
    opp0 = board[1]
    total0 = 0
    for c in range(25):
        total0 += me0[c]
    bar = me0[24]
    pend = np.zeros(26, dtype=np.int64)  # a double's steps still to place, by point
    opp = np.zeros(25, dtype=np.int64)
    sf = np.zeros(4, dtype=np.int64)  # the steps: from, to
    st = np.zeros(4, dtype=np.int64)
    for i in range(after.shape[0]):
        me_t = after[i, 0]
        opp_t = after[i, 1]
        changed = False
        total = 0
        for c in range(25):
            total += me_t[c]
            if me_t[c] != me0[c] or opp_t[c] != opp0[c]:
                changed = True
        if not changed:
            out[i] = 0  # nothing played
            continue
        if total != total0:  # a checker borne off
            out[i] = SEARCH
            continue
        n = 0
        ok = True
        if hi == lo:
            for p in range(1, 26):
                pend[p] = me0[p - 1] - me_t[p - 1]
            for p in range(25, 0, -1):
                k = pend[p]
                if k < 0 or (k > 0 and (p <= hi or n + k > 4)):
                    ok = False
                    break
                for _ in range(k):
                    sf[n] = p
                    st[n] = p - hi
                    n += 1
                if k > 0:
                    pend[p - hi] += k
        else:
            # the points that lost (src) and gained (dst) checkers, one entry a checker, highest first (at most
            # 2 of each are of use)
            ns = nd = 0
            a = b = za = zb = 0
            for p in range(25, 0, -1):
                k = me0[p - 1] - me_t[p - 1]
                if k > 0:
                    for _ in range(k):
                        if ns == 0:
                            a = p
                        elif ns == 1:
                            b = p
                        ns += 1
                elif k < 0:
                    for _ in range(-k):
                        if nd == 0:
                            za = p
                        elif nd == 1:
                            zb = p
                        nd += 1
            if ns == 2 and nd == 2:  # two checkers (a >= b), one die each; dst za >= zb
                if bar > 0 and (a != 25 or (b == 25) != (bar > 1)):
                    ok = False
                elif max(a - hi, b - lo) == za and min(a - hi, b - lo) == zb:
                    sf[0], st[0], sf[1], st[1] = a, a - hi, b, b - lo
                    n = 2
                elif max(a - lo, b - hi) == za and min(a - lo, b - hi) == zb:
                    if a == 25 and bar == 1:
                        sf[0], st[0], sf[1], st[1] = a, a - lo, b, b - hi
                    else:
                        sf[0], st[0], sf[1], st[1] = b, b - hi, a, a - lo
                    n = 2
                else:
                    ok = False
            elif ns != 1 or nd != 1:
                ok = False
            else:
                s, z = a, za
                if s - z == hi or s - z == lo:  # one die only
                    if bar > 0 and s != 25:
                        ok = False
                    else:
                        sf[0], st[0] = s, z
                        n = 1
                elif s - z != hi + lo or bar > (1 if s == 25 else 0):
                    ok = False
                else:
                    m1 = s - hi
                    m2 = s - lo
                    c1 = opp0[24 - m1]
                    c2 = opp0[24 - m2]
                    if c1 == 1 and opp_t[24 - m1] == 0:
                        m = m1
                    elif c2 == 1 and opp_t[24 - m2] == 0:
                        m = m2
                    elif c1 == 0:
                        m = m1
                    else:
                        m = m2
                    sf[0], st[0], sf[1], st[1] = s, m, m, z
                    n = 2
        if not ok:
            out[i] = SEARCH
            continue
        # the hits, in playing order: the first step landing on a blot hits it; the opponent's row must come out
        for c in range(25):
            opp[c] = opp0[c]
        code = 0
        for j in range(n):
            t = st[j]
            h = 0
            if opp[24 - t] == 1:
                h = 1
                opp[24 - t] = 0
                opp[24] += 1
            code |= (sf[j] | t << 5 | h << 10) << (3 + 11 * j)
        for c in range(25):
            if opp[c] != opp_t[c]:
                ok = False
        if not ok:
            out[i] = SEARCH
            continue
        if n == 2 and sf[1] > sf[0]:  # two steps listed from the back (equal sources: playing order)
            code = ((code >> 14) & 2047) << 3 | ((code >> 3) & 2047) << 14
        out[i] = code | n
    return out
