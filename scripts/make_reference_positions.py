"""Make the reference-position fixture for the move-generator cross-check (tests/test_movegen_reference.py).

Positions come from real play, seeded: games between two GNU Backgammon 0-ply players
(``gnubg_nn.best_move``) and games between two random players (a uniformly random legal play from
``gnubg_nn.moves``).  From the pooled positions (side to move's view, bgai layout) the script picks a
quota of each kind -- opening, middle game, random play, two or more on the bar, closed entry board,
race, bear-off (with gaps) -- and stores them in ``tests/data/reference_positions.npz``:

* ``boards``: ``(P, 2, 25)`` int8, bgai layout (row 0 side to move);
* ``kinds``: ``(P,)`` uint8, index into ``kind_names``;
* ``kind_names``: the names of the kinds;
* ``seed``: the seed used.

The test pairs every position with all 21 rolls.  The move generator used to play the games is
gnubg's own, so the fixture does not depend on bgai's move generator.

Usage: ``python scripts/make_reference_positions.py [--seed 20261130] [--out tests/data/reference_positions.npz]``
"""

from __future__ import annotations

import os
import tempfile

import gnubg_nn
import numpy as np

from bgai.cli.args import BgaiArgumentParser

KIND_NAMES = ("opening", "middle", "random", "bar2", "closed", "race", "bearoff")
QUOTA = {"opening": 60, "middle": 260, "random": 240, "bar2": 130, "closed": 100, "race": 120, "bearoff": 220}


def _start() -> np.ndarray:
    row = np.zeros(25, dtype=np.int8)
    row[[23, 12, 7, 5]] = [2, 5, 3, 5]
    return np.stack([row, row.copy()])


def play_game(rng: np.random.Generator, player: str, max_turns: int = 400) -> list[tuple[np.ndarray, int]]:
    """One game; returns (board before the move in bgai layout, turn number) for every turn."""
    board = _start()
    out = []
    d1, d2 = rng.choice(6, size=2, replace=False) + 1  # opening roll: never a double
    for turn in range(max_turns):
        out.append((board.copy(), turn))
        gb = [board[1].tolist(), board[0].tolist()]  # gnubg: [opponent, side on roll]
        if player == "gnubg":
            _, key = gnubg_nn.best_move(gb, int(d1), int(d2), b=1)
        else:
            keys = gnubg_nn.moves(gb, int(d1), int(d2))
            key = keys[rng.integers(len(keys))] if keys else None
        if key is None:  # no legal move: the turn passes
            after = gb
        else:
            after = gnubg_nn.boardfromkey(key)
        # gnubg's afterstate is [opponent, mover]; read in bgai layout it is the next side's position
        board = np.array(after, dtype=np.int8)
        if (board[1].sum() == 0) or (board[0].sum() == 0):
            break
        d1, d2 = rng.integers(1, 7, size=2)
    return out


def classify(board: np.ndarray, turn: int, player: str) -> list[str]:
    me, opp = board[0].astype(int), board[1].astype(int)
    kinds = []
    if turn < 4:
        kinds.append("opening")
    elif player == "gnubg":
        kinds.append("middle")
    else:
        kinds.append("random")
    if me[24] >= 2:
        kinds.append("bar2")
    # opponent points that block my entry: my points 19..24 = opponent columns 5..0
    blocked = int((opp[0:6] >= 2).sum())
    if blocked >= 5 or (blocked >= 4 and me[24] >= 1):
        kinds.append("closed")
    my_back = max((c for c in range(25) if me[c] > 0), default=-1)
    opp_back_on_my_numbers = min((23 - c for c in range(24) if opp[c] > 0), default=99)
    if opp[24] == 0 and me[24] == 0 and my_back < opp_back_on_my_numbers:
        kinds.append("race")
    if me[6:].sum() == 0 and me.sum() > 0:
        kinds.append("bearoff")
    return kinds


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--games", type=int, default=500, help="games of each kind (gnubg, random)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "reference_positions.npz"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    pools: dict[str, dict[bytes, np.ndarray]] = {k: {} for k in KIND_NAMES}
    for g in range(args.games):
        for player in ("gnubg", "random"):
            for board, turn in play_game(rng, player):
                for kind in classify(board, turn, player):
                    pools[kind].setdefault(board.tobytes(), board)
    chosen: dict[bytes, tuple[np.ndarray, int]] = {}
    for ki, kind in enumerate(KIND_NAMES):
        keys = sorted(k for k in pools[kind] if k not in chosen)
        take = rng.permutation(len(keys))[: QUOTA[kind]]
        for i in sorted(take):
            chosen[keys[i]] = (pools[kind][keys[i]], ki)
        print(f"{kind:8s} pool {len(pools[kind]):6d} chosen {min(QUOTA[kind], len(keys))}")
    boards = np.stack([b for b, _ in chosen.values()]).astype(np.int8)
    kinds = np.array([k for _, k in chosen.values()], dtype=np.uint8)
    out = os.path.abspath(args.out)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), suffix=".npz")
    os.close(fd)
    np.savez_compressed(tmp, boards=boards, kinds=kinds, kind_names=np.array(KIND_NAMES), seed=np.int64(args.seed))
    os.replace(tmp, out)
    print(f"{len(boards)} positions x 21 rolls = {21 * len(boards)} pairs -> {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
