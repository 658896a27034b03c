"""The compiled move generator: one numba kernel doing the work of :func:`bgai.core.movegen.afterstates`.

Plain Python in numba's subset; :mod:`bgai.core.movegen` compiles it with :func:`bgai.util.jit.compile_kernel` when
numba is available and keeps its numpy generator as the reference (tests/test_jit_movegen.py checks that both give
the same rows in the same order).  A module of its own so that numba's cache of the machine code (keyed to this
file) survives edits of the rest of the move generator.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEBRUIJN", "MAX_PLAYS", "generate"]

#: index of the lowest set bit of a 32-bit mask ``m``: ``DEBRUIJN[((m & -m) * 0x077CB531 & 0xFFFFFFFF) >> 27]``
#: (multiplication by a de Bruijn sequence)
DEBRUIJN = np.array(
    [0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
     31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9],
    dtype=np.int64,
)
#: most plays one input can have in the compiled generator's scratch: a double's plays are non-increasing
#: sequences of at most 4 sources out of 25 (C(28, 4) = 20475); a non-double has fewer than 2 * 25 * 25 + 26
MAX_PLAYS = 20480


def generate(b, dice, check, bear, debruijn):  # pragma: no cover - compiled by numba
    """The plays of a batch, as :func:`bgai.core.movegen.afterstates` gives them (its numpy path is the reference).

    Args:
        b: ``(N, 2, 25)`` int8 boards (bgai layout, side to move in row 0), C-contiguous.
        dice: ``(N, 2)`` int64 dice, checked here (1..6).
        check: validate the boards (counts 0..15, at most 15 checkers a side, no point held by both sides).
        bear: ``bgai.core.movegen._BEAR`` as int64: the sources that bear off, by ``die << 7 | home points``.
        debruijn: :data:`DEBRUIJN`.

    Returns:
        ``(after, src, status)``: ``after`` ``(M, 2, 25)`` int8 and ``src`` ``(M,)`` int64 as ``afterstates``
        returns them, and status 0; or empty arrays and status -1 (an invalid board, with ``check``) or -2 (dice
        outside 1..6).

    Per input it follows the steps of ``bgai.core.movegen._plan_one`` on int64 masks (non-doubles: the high die
    first, then the low-die-first plays the high-die-first order cannot give, the possible duplicates removed by
    the same local keys, then one die only, then no play; doubles: sources non-increasing, depth first, which
    lists the plays with the most steps in the order of the numpy planner's breadth-first levels) and keeps each
    play as its single steps ``(from, to, hit)``; each output row is the input row with those steps applied (the
    same change as the numpy path's table rows).
    """
    n = b.shape[0]
    cap = 64 + 20 * n  # about 20 rows a position; grown when needed (pages never written cost no memory)
    out = np.empty((cap, 50), dtype=np.int8)
    src = np.empty(cap, dtype=np.int64)
    m32 = 0xFFFFFFFF
    # one input's plays, each packed in an int64: the step count (4 bits), then up to 4 steps of 12 bits each,
    # from | (to + 8) << 5 | hit << 11 (from 25 = the bar, to <= 0 = off)
    plays = np.empty(MAX_PLAYS, dtype=np.int64)
    # a non-double's risky plays (may duplicate another): the play and its sort key (local key, then as found)
    rplay = np.empty(2 * 25 * 25, dtype=np.int64)
    rkey = np.empty(2 * 25 * 25, dtype=np.int64)
    order = np.empty(2 * 25 * 25, dtype=np.int64)
    cnt = np.zeros(26, dtype=np.int64)
    # doubles' depth-first search: per level the sources left, occupied points, hit mask; the path
    lv_m = np.zeros(5, dtype=np.int64)
    lv_occ = np.zeros(5, dtype=np.int64)
    lv_hs = np.zeros(5, dtype=np.int64)
    path = np.zeros(4, dtype=np.int64)
    hits = np.zeros(4, dtype=np.int64)
    row = 0
    status = 0
    for i in range(n):
        # masks (bit p = the mover's point p, bit 25 its bar): occupied, >= 2 checkers, open, opponent blot
        occ = 0
        l2 = 0
        op = 0
        bl = 0
        held = 0
        tot_me = 0
        tot_op = 0
        bad = False
        for j in range(25):
            c = np.int64(b[i, 0, j])
            cnt[j + 1] = c
            tot_me += c
            if c > 0:
                occ |= 1 << (j + 1)
                if c > 1:
                    l2 |= 1 << (j + 1)
            if c < 0 or c > 15:
                bad = True
        for j in range(25):
            c = np.int64(b[i, 1, j])  # the opponent's point 25 - p is the mover's point p = 24 - j
            tot_op += c
            if c < 0 or c > 15:
                bad = True
            if j < 24:
                p = 24 - j
                if c < 2:
                    op |= 1 << p
                    if c == 1:
                        bl |= 1 << p
                if c > 0:
                    held |= 1 << p
        if check and (bad or tot_me > 15 or tot_op > 15 or (occ & held) != 0):
            status = -1
            row = 0
            break
        d1 = dice[i, 0]
        d2 = dice[i, 1]
        if d1 < 1 or d1 > 6 or d2 < 1 or d2 > 6:
            status = -2
            row = 0
            break
        a = max(d1, d2)
        c = min(d1, d2)
        np_ = 0
        if a != c:
            ta = ((op << a) & ~((2 << a) - 1)) & m32
            tc = ((op << c) & ~((2 << c) - 1)) & m32
            La = occ & ta
            if occ >> 25:
                La &= 1 << 25
            if occ < 128:
                La |= bear[(a << 7) | (occ & 127)]
            Lb = occ & tc
            if occ >> 25:
                Lb &= 1 << 25
            if occ < 128:
                Lb |= bear[(c << 7) | (occ & 127)]
            on_bar = (occ >> 25) != 0
            above = occ >> 7
            special = on_bar or (above & (above - 1)) == 0
            Lb_chain = Lb & (m32 if special else (ta << c))
            has2 = False
            nr = 0
            for way in range(2):
                if way == 0:
                    first, second, m1, t2nd = a, c, La, tc
                else:
                    first, second, m1, t2nd = c, a, Lb_chain, ta
                while m1:
                    low = m1 & -m1
                    m1 ^= low
                    s1 = debruijn[((low * 0x077CB531) & m32) >> 27]
                    t1 = s1 - first
                    tb = (1 << t1) if t1 >= 1 else 0
                    sb = 1 << s1
                    o1 = (occ & ~(sb & ~l2)) | tb  # occupied after the first step
                    if way == 0:
                        L2 = o1 & t2nd
                        if o1 >> 25:
                            L2 &= 1 << 25
                        if o1 < 128:
                            L2 |= bear[(second << 7) | (o1 & 127)]
                    else:
                        L2 = tb & t2nd
                        if on_bar or ((occ & ~sb) >> 7) == 0:
                            L2 = o1 & t2nd
                            if o1 >> 25:
                                L2 &= 1 << 25
                            if o1 < 128:
                                L2 |= bear[(second << 7) | (o1 & 127)]
                            L2 &= ~La | tb
                        if L2 == 0:
                            continue
                    if L2:
                        has2 = True
                    h1 = 1 if (bl & tb) != 0 else 0
                    step1 = (s1 | ((t1 + 8) << 5) | (h1 << 11)) << 4
                    hs = (bl & ~tb) << second
                    lowm = ((2 << second) - 1) if t1 <= 0 else 0
                    R = L2 & (tb | (sb << second) | lowm)
                    m2 = L2 & ~R
                    while m2:
                        low = m2 & -m2
                        m2 ^= low
                        s2 = debruijn[((low * 0x077CB531) & m32) >> 27]
                        plays[np_] = 2 | step1 | ((s2 | ((s2 - second + 8) << 5) | (((hs >> s2) & 1) << 11)) << 16)
                        np_ += 1
                    m2 = R
                    while m2:
                        low = m2 & -m2
                        m2 ^= low
                        s2 = debruijn[((low * 0x077CB531) & m32) >> 27]
                        t2 = s2 - second
                        chain = s2 == t1
                        land = t2 == s1
                        y = s2 if land else s1
                        w = way + 1 if (chain and h1 == 1) else 0
                        if chain or land:
                            local = y * 3 + w
                        else:
                            local = 78 + (max(s1, s2) - 1) * 6 + (min(s1, s2) - 1)
                        rplay[nr] = 2 | step1 | ((s2 | ((t2 + 8) << 5) | (((hs >> s2) & 1) << 11)) << 16)
                        rkey[nr] = local * 4096 + nr  # sorted: by local key, then as found (stable)
                        order[nr] = nr
                        nr += 1
            if nr:
                for x in range(1, nr):  # insertion sort of a few keys
                    v = order[x]
                    y = x - 1
                    while y >= 0 and rkey[order[y]] > rkey[v]:
                        order[y + 1] = order[y]
                        y -= 1
                    order[y + 1] = v
                last = -1
                for x in range(nr):
                    r = order[x]
                    local = rkey[r] >> 12
                    if local != last:
                        last = local
                        plays[np_] = rplay[r]
                        np_ += 1
            if not has2:
                one = La | (Lb if La == 0 else 0)
                die = a if La != 0 else c
                while one:
                    low = one & -one
                    one ^= low
                    s = debruijn[((low * 0x077CB531) & m32) >> 27]
                    t = s - die
                    h = 1 if (t >= 1 and (bl >> t) & 1) else 0
                    plays[np_] = 1 | ((s | ((t + 8) << 5) | (h << 11)) << 4)
                    np_ += 1
                if La == 0 and Lb == 0:
                    plays[np_] = 0
                    np_ += 1
        else:
            # doubles: depth first, sources non-increasing; the plays with the most steps, in the order found
            tg = ((op << a) & ~((2 << a) - 1)) & m32
            m = occ & tg
            if occ >> 25:
                m &= 1 << 25
            if occ < 128:
                m |= bear[(a << 7) | (occ & 127)]
            if m == 0:
                plays[0] = 0
                np_ = 1
            else:
                best = 0
                k = 0
                lv_m[0] = m
                lv_occ[0] = occ
                lv_hs[0] = bl << a
                while k >= 0:
                    m = lv_m[k]
                    if m == 0:  # level done: back up one step
                        k -= 1
                        if k >= 0:
                            s = path[k]
                            cnt[s] += 1
                            if s - a >= 1:
                                cnt[s - a] -= 1
                        continue
                    low = m & -m
                    lv_m[k] = m ^ low
                    s = debruijn[((low * 0x077CB531) & m32) >> 27]
                    path[k] = s
                    hits[k] = (lv_hs[k] >> s) & 1
                    o = lv_occ[k]
                    cnt[s] -= 1
                    if cnt[s] <= 0:
                        o &= ~(1 << s)
                    t = s - a
                    if t >= 1:
                        cnt[t] += 1
                        o |= 1 << t
                    nm = 0
                    if k < 3:
                        nm = o & tg
                        if o >> 25:
                            nm &= 1 << 25
                        if o < 128:
                            nm |= bear[(a << 7) | (o & 127)]
                        nm &= (2 << s) - 1  # sources not above this one
                    if nm == 0:  # a leaf: a play of k + 1 steps
                        depth = k + 1
                        if depth > best:
                            best = depth
                            np_ = 0
                        if depth == best:
                            code = depth
                            for x in range(depth):
                                code |= (path[x] | ((path[x] - a + 8) << 5) | (hits[x] << 11)) << (4 + 12 * x)
                            plays[np_] = code
                            np_ += 1
                        cnt[s] += 1
                        if t >= 1:
                            cnt[t] -= 1
                    else:
                        k += 1
                        lv_m[k] = nm
                        lv_occ[k] = o
                        lv_hs[k] = lv_hs[k - 1] & ~(1 << s)
        if row + np_ > cap:
            cap = max(cap + cap // 2, row + np_ + 20 * (n - i))
            out2 = np.empty((cap, 50), dtype=np.int8)
            src2 = np.empty(cap, dtype=np.int64)
            for r in range(row):  # (loops: a slice assignment here doubled the kernel's compile time)
                for j in range(50):
                    out2[r, j] = out[r, j]
                src2[r] = src[r]
            out = out2
            src = src2
        for x in range(np_):
            for j in range(25):
                out[row, j] = b[i, 0, j]
                out[row, 25 + j] = b[i, 1, j]
            code = plays[x]
            for y in range(code & 15):
                step = code >> (4 + 12 * y)
                s = step & 31
                t = ((step >> 5) & 63) - 8
                out[row, s - 1] -= 1
                if t >= 1:
                    out[row, t - 1] += 1
                    if (step >> 11) & 1:
                        out[row, 49 - t] -= 1
                        out[row, 49] += 1
            src[row] = i
            row += 1
    return out[:row].reshape((row, 2, 25)), src[:row], status
