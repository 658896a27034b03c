"""Open Sage (PyPI ``bgsage``, MPL-2.0) as a bgai agent: the strongest open engine, as a yardstick.

Open Sage is a C++ engine with Python bindings (the module ``bgbot_cpp``, wrapped by the package ``bgsage``): its
production model (``bgsage.weights.PRODUCTION_MODEL``, "stage11": 24 nets chosen by the game plans of both sides,
1 race net of 100 hidden units and 23 contact nets of 400) plus an exact one-sided bear-off database, and an
N-ply search over it.  Install it with ``pip install 'bgai[bgsage]'`` (the ``bgsage`` package).

Ply numbering.  bgsage follows eXtreme Gammon's numbering, one more than GNU Backgammon's and bgai's: bgsage's
"1-ply" is the static evaluation (bgai's and gnubg's 0-ply), its "2-ply" a look-ahead over the 21 rolls (bgai's
1-ply).  This agent takes bgai's numbering: ``bgsage`` and ``bgsage:ply=0`` are bgsage's "1ply", ``bgsage:ply=N``
its "(N+1)ply" (N = 0..3; bgsage's search stops at its "4ply").

Board layout.  bgsage's board is a list of 26 ints from the view of the side on roll (``bgsage.STARTING_BOARD``):
index ``i`` = 1..24 is that side's point ``i`` (its ace point is 1), holding ``+n`` for ``n`` of its own checkers
or ``-n`` for ``n`` of the opponent's; index 25 is its bar and index 0 the opponent's bar, both as positive counts;
checkers borne off are implicit.  From bgai's ``(2, 25)`` board (:mod:`bgai.core.board`)::

    sage[i]  = board[0, i - 1] - board[1, 24 - i]     (i = 1..24: the mover's point i is the opponent's 25 - i)
    sage[25] = board[0, 24]                           (mover's bar)
    sage[0]  = board[1, 24]                           (opponent's bar)

(:func:`to_sage`, :func:`from_sage`; checked against bgsage's own pip counts and move generator in
``tests/test_agents_bgsage.py``).  The same layout serves for post-move boards: it is then the view of the player
who has just moved.

What it answers (bgsage's own calls, all batched in C++ and run on one thread here; evaluation series run several
processes instead):

* plays (:meth:`BgsageAgent.choose`): ``bgbot_cpp.batch_checker_play`` -- bgsage's move generator, every play
  scored at its static level, and at ``ply >= 1`` the best plays (bgsage's filter: at most 5 within 0.08) searched
  deeper; the agent plays the highest **cubeless** equity among the plays scored at the deepest level (a cubeless
  money game; bgsage ranks by cubeful equity, a difference only in cube play).  bgsage chooses the net for each
  candidate from the position **before** the play (all candidates of a roll are scored by the same net), as its
  analyser does;
* probabilities of positions before the roll (:meth:`BgsageAgent.probabilities`): ``batch_evaluate_positions``;
* probabilities of afterstates without the position before the play (:meth:`BgsageAgent.afterstate_probabilities`,
  used by bgai's hint and analysis): ``batch_evaluate_post_move``, which picks the net from the afterstate itself,
  so its ranking can differ from :meth:`choose`'s in rare positions; :meth:`BgsageAgent.evaluate_plays` (given the
  positions before the plays) scores as :meth:`choose` does;
* exact bear-off probabilities from bgsage's one-sided database at every level (``bgbot_cpp.BearoffStrategy``,
  ``multipy_set_bearoff_db``), as bgsage's ``BgBotAnalyzer`` does by default; finished games are scored exactly by
  bgai (:func:`bgai.core.equity.finished_or_evaluate`).
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Capabilities, ProbabilityAgent, finished_or_evaluate
from bgai.core.board import as_batch, flip, validate
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.errors import AgentSpecError, InvalidDiceError

#: Highest bgai ply the agent offers (bgsage's search goes to its "4ply" = bgai's 3-ply).
MAX_PLY = 3
#: bgsage's move filter for its N-ply search (its defaults: keep at most 5 plays within 0.08 equity of the best).
FILTER_MAX_MOVES = 5
FILTER_THRESHOLD = 0.08


def import_bgsage():
    """Import and return ``(bgbot_cpp, bgsage.weights)``: bgsage's C++ core and its model registry.

    Raises:
        AgentSpecError: bgsage is not installed (with the command that installs it).
    """
    try:
        import bgbot_cpp
        from bgsage import weights
    except ImportError as exc:
        raise AgentSpecError(
            "agent 'bgsage' needs the optional package bgsage (Open Sage), which is not installed "
            "(pip install 'bgai[bgsage]' or pip install bgsage)"
        ) from exc
    return bgbot_cpp, weights


def to_sage(boards: np.ndarray) -> np.ndarray:
    """bgai boards -> bgsage boards (layout in the module docstring).

    Args:
        boards: ``(N, 2, 25)`` (or one ``(2, 25)``) int8, side on roll (or the player who just moved) in row 0.

    Returns:
        ``(N, 26)`` int32 bgsage boards, from row 0's view.
    """
    b = as_batch(boards).astype(np.int32)
    out = np.empty((b.shape[0], 26), dtype=np.int32)
    out[:, 1:25] = b[:, 0, :24] - b[:, 1, 23::-1]
    out[:, 25] = b[:, 0, 24]
    out[:, 0] = b[:, 1, 24]
    return out


def from_sage(sage) -> np.ndarray:
    """bgsage boards -> bgai boards (the inverse of :func:`to_sage`).

    Args:
        sage: ``(N, 26)`` integer bgsage boards (array or lists), one side's view.

    Returns:
        ``(N, 2, 25)`` int8 bgai boards with that side in row 0.

    Raises:
        AgentSpecError: not ``(N, 26)``.
    """
    s = np.asarray(sage, dtype=np.int32)
    if s.ndim != 2 or s.shape[1] != 26:
        raise AgentSpecError(f"bgsage boards must have shape (N, 26), got {s.shape}")
    pts = s[:, 1:25]
    out = np.zeros((s.shape[0], 2, 25), dtype=np.int8)
    out[:, 0, :24] = np.maximum(pts, 0)
    out[:, 1, :24] = np.maximum(-pts, 0)[:, ::-1]
    out[:, 0, 24] = s[:, 25]
    out[:, 1, 24] = s[:, 0]
    return out


class BgsageAgent(ProbabilityAgent):
    """Open Sage's production model at ``ply`` (bgai numbering: 0 = static evaluation), cubeless money equity.

    Args:
        ply: look-ahead in bgai's numbering, 0..:data:`MAX_PLY` (bgsage's "1ply".."4ply").

    Raises:
        AgentSpecError: bgsage is not installed; ``ply`` out of range; bgsage's weight files missing.
    """

    def __init__(self, ply: int = 0) -> None:
        if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or not 0 <= ply <= MAX_PLY:
            raise AgentSpecError(f"bgsage ply must be 0..{MAX_PLY} (bgai numbering), got {ply!r}")
        self._cpp, weights = import_bgsage()
        cpp = self._cpp
        self.ply = int(ply)
        self.name = "bgsage" if self.ply == 0 else f"bgsage:ply={self.ply}"
        #: 0-ply scores the plays of several hundred positions per second per core; 1-ply about 150x fewer.
        self.batch_games = 256 if self.ply == 0 else 16
        self._weights = weights.default_weights()
        w = self._weights
        try:
            w.validate()
        except FileNotFoundError as exc:
            raise AgentSpecError(f"bgsage is installed without its weights: {exc}") from None
        self._db = None
        path = weights.bearoff_db_path()
        if path:
            db = cpp.BearoffDB()
            if db.load(path):
                self._db = db
        static = cpp.create_strategy(w.strategy_type, w.weight_paths_list, w.hidden_sizes_list)
        self._static = static if self._db is None else cpp.BearoffStrategy(static, self._db)
        self._search = None
        if self.ply > 0:
            self._search = cpp.create_multipy(
                w.strategy_type, w.weight_paths_list, w.hidden_sizes_list, n_plies=self.ply + 1,
                filter_max_moves=FILTER_MAX_MOVES, filter_threshold=FILTER_THRESHOLD,
                parallel_evaluate=False, parallel_threads=0,
            )
            if self._db is not None:
                cpp.multipy_set_bearoff_db(self._search, self._db)
        self._centered = cpp.CubeOwner.CENTERED

    @property
    def capabilities(self) -> Capabilities:
        """Probabilities, play values and cube decisions, evaluated at this agent's ``ply``."""
        return Capabilities(play_scores=True, probabilities=True, cube=True, ply=self.ply)

    def at_ply(self, ply: int) -> "BgsageAgent":
        """The same engine evaluating at ``ply`` (bgai numbering); ``self`` when that is its own.

        Raises:
            AgentSpecError: ``ply`` out of 0..:data:`MAX_PLY`.
        """
        return self if ply == self.ply else BgsageAgent(ply)

    @property
    def _strategy(self):
        return self._static if self._search is None else self._search

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """bgsage's play for each position (see the module docstring): ``(N, 2, 25)`` int8 afterstates, mover's
        view; the unchanged position where no play is legal.

        Raises:
            InvalidPositionError: a board that breaks the rules (:func:`bgai.core.board.validate`).
            InvalidDiceError: dice not ``(N, 2)`` with values 1..6.
        """
        b = validate(as_batch(boards))
        d = np.asarray(dice)
        if d.shape != (b.shape[0], 2) or not np.issubdtype(d.dtype, np.integer) or ((d < 1) | (d > 6)).any():
            raise InvalidDiceError(f"dice must be ({b.shape[0]}, 2) integers 1..6, got shape {d.shape}")
        d = d.astype(np.int64)
        inputs = [
            {"board": s, "die1": d1, "die2": d2, "cube_value": 1, "cube_owner": self._centered}
            for s, (d1, d2) in zip(to_sage(b).tolist(), d.tolist())
        ]
        cpp = self._cpp
        if self._search is None:
            results = cpp.batch_checker_play(inputs, self._static, FILTER_MAX_MOVES, FILTER_THRESHOLD, 1,
                                             jacoby=False)
        else:
            results = cpp.batch_checker_play(inputs, self._static, self._search, FILTER_MAX_MOVES,
                                             FILTER_THRESHOLD, 1, jacoby=False)
        if self._search is not None:
            self._search.clear_cache()  # bgsage's position cache grows without bound otherwise
        level = f"{self.ply + 1}-ply"
        out = b.copy()
        rows, chosen = [], []
        for i, r in enumerate(results):
            moves = r["moves"]
            if not moves:
                continue
            best, best_eq = None, -np.inf
            for m in moves:
                if m["eval_level"] == level and m["cubeless_equity"] > best_eq:
                    best, best_eq = m, m["cubeless_equity"]
            rows.append(i)
            chosen.append((best or moves[0])["board"])
        if rows:
            out[rows] = from_sage(chosen)
        return out

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float64 probabilities at this agent's ply for the side on roll of each ``(N, 2, 25)`` board,
        before it rolls (``bgbot_cpp.batch_evaluate_positions``); exact for finished games."""
        return finished_or_evaluate(as_batch(boards), self._pre_roll)

    def _pre_roll(self, boards: np.ndarray) -> np.ndarray:
        owner = self._centered
        positions = [(s, 1, owner) for s in to_sage(boards).tolist()]
        res = self._cpp.batch_evaluate_positions(positions, self._strategy, 1, jacoby=False, beaver=False)
        if self._search is not None:
            self._search.clear_cache()
        return np.array([r["probs"] for r in res], dtype=np.float64).reshape(-1, 5)

    def afterstate_probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """``(M, 5)`` float64 probabilities at this agent's ply for the player who moved into each ``(M, 2, 25)``
        afterstate (``bgbot_cpp.batch_evaluate_post_move``: the net is chosen from the afterstate); exact for
        finished games."""
        a = as_batch(afterstates)
        return swap_perspective(finished_or_evaluate(flip(a), lambda fb: swap_perspective(self._post_move(flip(fb)))))

    def _post_move(self, after: np.ndarray) -> np.ndarray:
        owner = self._centered
        positions = [(s, owner) for s in to_sage(after).tolist()]
        res = self._cpp.batch_evaluate_post_move(positions, self._strategy, 1, jacoby=False)
        if self._search is not None:
            self._search.clear_cache()
        return np.array([r["probs"] for r in res], dtype=np.float64).reshape(-1, 5)

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Cubeless equity ``(M,)`` float64 of each afterstate for the player who moved, scored as :meth:`choose`
        scores its candidates (the net chosen from the position before the play, ``boards[src]``)."""
        b = as_batch(boards)
        a = as_batch(afterstates)
        pre = to_sage(b).tolist()
        src = np.asarray(src, dtype=np.int64)

        def pinned(fb: np.ndarray, idx: np.ndarray) -> np.ndarray:
            evaluate = self._strategy.evaluate_board
            return np.array([evaluate(s, pre[j])["probs"] for s, j in zip(to_sage(flip(fb)).tolist(), idx.tolist())],
                            dtype=np.float64).reshape(-1, 5)

        flipped = flip(a)
        live = ~((flipped[:, 0].sum(axis=1) == 0) | (flipped[:, 1].sum(axis=1) == 0))
        probs = swap_perspective(finished_or_evaluate(flipped, lambda fb: swap_perspective(pinned(fb, src[live]))))
        return cubeless_equity(probs)
