"""The board representation of bgai, written down once and used everywhere.

Batches of positions
--------------------
A batch of positions is an ``int8`` array of shape ``(N, 2, 25)``:

* row 0 is the **side to move** (the player on roll), row 1 the **opponent**;
* columns 0..23 hold a side's checkers on its points 1..24, counted **from that side's own home board**
  (column 0 = its ace point, the deepest point of its home board; column 23 = its 24-point, where its back
  checkers start); column 24 (:data:`BAR`) holds its checkers on the bar;
* checkers borne off are implicit: ``15 - row.sum()``.

So the mover's point ``p`` (1..24) is column ``p - 1`` of row 0, and the same physical point is the
opponent's point ``25 - p``, column ``24 - p`` of row 1.  Turning the board to the other side's view is
swapping the two rows (:func:`flip`).  This is GNU Backgammon's ``anBoard`` layout with the rows in the
opposite order (gnubg keeps the opponent in row 0).

Dice are ``(N, 2)`` integer arrays with values 1..6.  A single position is a batch of one; the friendly
:class:`bgai.core.position.Position` type wraps one ``(2, 25)`` board for users.

Rules implemented here (and their source): checkers per side 15; a point cannot be held by both sides;
result of a finished game single 1 / gammon 2 / backgammon 3, where a gammon means the loser has borne off no
checker and a backgammon that he also still has a checker on the bar or in the winner's home board (the
standard rules, e.g. the USBGF/WBF rules of backgammon; the same as GNU Backgammon's ``GameStatus``).
"""

from __future__ import annotations

import numpy as np

from bgai.errors import InvalidPositionError

NUM_CHECKERS = 15
NUM_POINTS = 24
BAR = 24
BOARD_SHAPE = (2, 25)

#: Result kinds of a finished game, in points before the cube.
SINGLE, GAMMON, BACKGAMMON = 1, 2, 3


def _starting_row() -> np.ndarray:
    row = np.zeros(25, dtype=np.int8)
    row[23] = 2  # 24-point
    row[12] = 5  # 13-point (mid-point)
    row[7] = 3  # 8-point
    row[5] = 5  # 6-point
    return row


def starting_board() -> np.ndarray:
    """The starting position as a ``(2, 25)`` ``int8`` board (both sides: 24:2, 13:5, 8:3, 6:5)."""
    row = _starting_row()
    return np.stack([row, row.copy()])


def as_batch(boards: np.ndarray) -> np.ndarray:
    """Return ``boards`` as an ``int8`` batch ``(N, 2, 25)``; a single ``(2, 25)`` board becomes a batch of one.

    Raises:
        InvalidPositionError: wrong shape, or values that do not fit a checker count.
    """
    arr = np.asarray(boards)
    if arr.shape == BOARD_SHAPE:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != BOARD_SHAPE:
        raise InvalidPositionError(f"boards must have shape (N, 2, 25) or (2, 25), got {arr.shape}")
    if arr.dtype != np.int8:
        if arr.size and (arr.min() < -128 or arr.max() > 127):
            raise InvalidPositionError("checker counts out of range for int8")
        arr = arr.astype(np.int8)
    return arr


def validation_errors(boards: np.ndarray) -> list[str | None]:
    """Say, for each board of a batch, what is wrong with it (``None`` when it is a legal position).

    Args:
        boards: ``(N, 2, 25)`` or ``(2, 25)`` integer array in bgai's layout.

    Returns:
        A list of ``N`` entries: ``None`` or a message such as ``'side to move has 16 checkers (max 15)'``.
    """
    b = as_batch(boards).astype(np.int16)
    n = b.shape[0]
    out: list[str | None] = [None] * n
    neg = (b < 0).any(axis=(1, 2))
    totals = b.sum(axis=2)
    # both sides on the same physical point: mover column c is opponent column 23 - c
    clash = ((b[:, 0, :24] > 0) & (b[:, 1, 23::-1] > 0)).any(axis=1)
    both_off = (totals == 0).all(axis=1)
    bad = neg | (totals > NUM_CHECKERS).any(axis=1) | clash | both_off
    names = ("side to move", "opponent")
    for i in np.flatnonzero(bad):
        msgs = []
        if neg[i]:
            side, col = np.argwhere(b[i] < 0)[0]
            msgs.append(f"{names[side]} has a negative count ({b[i, side, col]}) at {_column_name(col)}")
        for side in (0, 1):
            if totals[i, side] > NUM_CHECKERS:
                msgs.append(f"{names[side]} has {totals[i, side]} checkers on the board and bar (max 15)")
        if both_off[i]:
            msgs.append("both sides have borne off all their checkers (at most one side can have finished)")
        if clash[i]:
            cols = np.flatnonzero((b[i, 0, :24] > 0) & (b[i, 1, 23::-1] > 0))
            pts = ", ".join(str(c + 1) for c in cols)
            msgs.append(f"point(s) {pts} (side to move's numbering) held by both sides")
        out[i] = "; ".join(msgs)
    return out


def _column_name(col: int) -> str:
    return "the bar" if col == BAR else f"point {col + 1}"


def validate(boards: np.ndarray) -> np.ndarray:
    """Check a batch of boards and return it as ``int8`` ``(N, 2, 25)``.

    Raises:
        InvalidPositionError: naming the first bad board (its index in the batch) and what is wrong with it:
            at most 15 checkers a side on the board and bar, no negative counts, no point held by both sides, not
            both sides borne off.  (A finished game, one side with no checker left, is a valid position.)
    """
    arr = as_batch(boards)
    if arr.shape[0] == 1 and _legal_one(*arr[0].tolist()):  # one board (a request): plain Python, a few us
        return arr
    for i, msg in enumerate(validation_errors(arr)):
        if msg is not None:
            where = f"board {i}: " if arr.shape[0] > 1 else ""
            raise InvalidPositionError(f"invalid position: {where}{msg}")
    return arr


def _legal_one(me: list[int], opp: list[int]) -> bool:
    """Whether one board's rows pass every check of :func:`validation_errors` (which names the fault otherwise)."""
    n_me, n_opp = sum(me), sum(opp)
    return (
        min(me) >= 0 and min(opp) >= 0 and n_me <= NUM_CHECKERS and n_opp <= NUM_CHECKERS and n_me + n_opp > 0
        and not any(me[c] and opp[23 - c] for c in range(24))
    )


def off_counts(boards: np.ndarray) -> np.ndarray:
    """Checkers borne off per side: ``(N, 2)`` int16 from ``(N, 2, 25)`` boards."""
    return NUM_CHECKERS - as_batch(boards).sum(axis=2, dtype=np.int16)


_PIP_WEIGHTS = np.arange(1, 26, dtype=np.int32)


def pip_counts(boards: np.ndarray) -> np.ndarray:
    """Pip counts ``(N, 2)`` int32 (row 0 side to move, row 1 opponent); a checker on the bar counts 25."""
    return as_batch(boards).astype(np.int32) @ _PIP_WEIGHTS


def flip(boards: np.ndarray) -> np.ndarray:
    """The same positions from the other side's view (rows swapped); works on ``(N, 2, 25)`` and ``(2, 25)``."""
    arr = np.asarray(boards)
    return arr[..., ::-1, :].copy()


def is_game_over(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: one side has borne off all its checkers."""
    return (as_batch(boards).sum(axis=2, dtype=np.int16) == 0).any(axis=1)


def result_kind(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Winner and result of finished games.

    Args:
        boards: ``(N, 2, 25)`` finished positions (one side has no checker left).

    Returns:
        ``(winner, points)``: ``winner`` ``(N,)`` int8, the row (0 or 1) that has borne off all 15 checkers;
        ``points`` ``(N,)`` int8, 1 single, 2 gammon (loser has borne off nothing), 3 backgammon (also a loser's
        checker on the bar or in the winner's home board = the loser's points 19..24, columns 18..24).
        Before the cube.

    Raises:
        InvalidPositionError: a board in which no side has finished (or both have).
    """
    b = as_batch(boards)
    left = b.sum(axis=2, dtype=np.int16)
    done = left == 0
    if not np.all(done.sum(axis=1) == 1):
        bad = int(np.flatnonzero(done.sum(axis=1) != 1)[0])
        raise InvalidPositionError(f"board {bad} is not a finished game (exactly one side must have borne off all)")
    winner = np.where(done[:, 0], 0, 1).astype(np.int8)
    loser_rows = b[np.arange(b.shape[0]), 1 - winner]
    loser_off = NUM_CHECKERS - loser_rows.sum(axis=1, dtype=np.int16)
    in_winner_home = loser_rows[:, 18:25].sum(axis=1, dtype=np.int16) > 0
    points = np.where(loser_off > 0, SINGLE, np.where(in_winner_home, BACKGAMMON, GAMMON)).astype(np.int8)
    return winner, points


def render(board: np.ndarray, *, me: str = "X", opponent: str = "O") -> str:
    """An ASCII drawing of one ``(2, 25)`` board from the side to move's view (gnubg's layout).

    The side to move (``me``) moves from 24 down to 1 along the bottom-right and top; its home board is the
    bottom right.  Point numbers are the side to move's.
    """
    b = as_batch(board)[0]
    cells = []
    for p in range(1, 25):
        mine = int(b[0, p - 1])
        theirs = int(b[1, 24 - p])
        cells.append((me, mine) if mine else (opponent, theirs) if theirs else ("", 0))

    def column(p: int, height: int = 5) -> list[str]:
        sym, n = cells[p - 1]
        col = []
        for k in range(height):
            if n > height and k == height - 1:
                col.append(f"{n:>2}"[-2:].strip().rjust(1))
            else:
                col.append(sym if k < n else (":" if p % 2 else "."))
        return [c.center(3) for c in col]

    top_pts = list(range(13, 25))
    bot_pts = list(range(12, 0, -1))
    lines = [" " + "".join(f"{p:^3}" for p in top_pts[:6]) + "|   |" + "".join(f"{p:^3}" for p in top_pts[6:])]
    lines.append("+" + "-" * 18 + "+---+" + "-" * 18 + "+")
    top_cols = [column(p) for p in top_pts]
    for k in range(5):
        lines.append("|" + "".join(c[k] for c in top_cols[:6]) + "|   |" + "".join(c[k] for c in top_cols[6:]) + "|")
    bar_me, bar_opp = int(b[0, BAR]), int(b[1, BAR])
    left = f"{opponent} on bar: {bar_opp}" if bar_opp else ""
    right = f"{me} on bar: {bar_me}" if bar_me else ""
    bar_line = f"|{left:^18}|BAR|{right:^18}|"
    lines.append(bar_line)
    bot_cols = [column(p) for p in bot_pts]
    for k in reversed(range(5)):
        lines.append("|" + "".join(c[k] for c in bot_cols[:6]) + "|   |" + "".join(c[k] for c in bot_cols[6:]) + "|")
    lines.append("+" + "-" * 18 + "+---+" + "-" * 18 + "+")
    lines.append(" " + "".join(f"{p:^3}" for p in bot_pts[:6]) + "|   |" + "".join(f"{p:^3}" for p in bot_pts[6:]))
    pc = pip_counts(b)[0]
    oc = off_counts(b)[0]
    lines.append(
        f"{me} (on roll): bar {int(b[0, BAR])}, off {int(oc[0])}, pips {int(pc[0])}   "
        f"{opponent}: bar {int(b[1, BAR])}, off {int(oc[1])}, pips {int(pc[1])}"
    )
    return "\n".join(lines)
