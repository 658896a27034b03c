"""Shared test helpers: comparing bgai afterstates with GNU Backgammon's move generator (gnubg_nn); hand-built
boards and the afterstates of the reference positions; the error a call raises; whether gnubg_nn is installed
and the agent to serve; uvicorn on a free loopback port.  Test modules import the plain helpers with ``from conftest import ...``
(tests/ is on sys.path under pytest)."""

from __future__ import annotations

import os
import socket
import threading
import time
import types

import numpy as np
import pytest

from bgai.core.board import flip
from bgai.core.movegen import afterstates
from bgai.errors import BgaiError

#: The seeded real-play positions (scripts/make_reference_positions.py).
REFERENCE_POSITIONS = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
#: The 21 rolls (d1 >= d2), int64 ``(21, 2)``.
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)

_NIBBLES = str.maketrans("ABCDEFGHIJKLMNOP", "0123456789abcdef")


def gnubg_keys(boards: np.ndarray) -> list[bytes]:
    """GNU Backgammon's 10-byte position keys (as ``gnubg_nn.moves`` returns them) of bgai ``(M, 2, 25)`` boards.

    gnubg orders the rows [opponent, side on roll], i.e. bgai's rows reversed; the key writes, for each of the
    50 slots, as many 1-bits as checkers then a 0-bit, packed little-endian.
    """
    b = np.asarray(boards, dtype=np.int64).reshape(-1, 2, 25)[:, ::-1, :].reshape(-1, 50)
    term = np.cumsum(b + 1, axis=1) - 1  # bit index of each slot's terminating 0
    bits = np.arange(80)[None, :] < term[:, -1:]
    np.put_along_axis(bits, term, False, axis=1)
    packed = np.packbits(bits, axis=1, bitorder="little")
    return [row.tobytes() for row in packed]


def gnubg_move_keys(board: np.ndarray, d1: int, d2: int) -> list[bytes]:
    """Keys of the afterstates ``gnubg_nn.moves`` lists for one bgai board (empty list: no legal play)."""
    import gnubg_nn

    gb = [board[1].tolist(), board[0].tolist()]
    return [bytes.fromhex(k.translate(_NIBBLES)) for k in gnubg_nn.moves(gb, int(d1), int(d2))]


@pytest.fixture(scope="session")
def gnubg_ref():
    """Namespace with :func:`gnubg_keys` and :func:`gnubg_move_keys` (skips when gnubg_nn is missing)."""
    pytest.importorskip("gnubg_nn")
    return types.SimpleNamespace(keys=gnubg_keys, move_keys=gnubg_move_keys)


def board_from_points(me=None, opp=None) -> np.ndarray:
    """A bgai board from {point: checkers} per side, points 1..24 in that side's numbering, 25 = bar."""
    b = np.zeros((2, 25), dtype=np.int8)
    for row, side in ((0, me or {}), (1, opp or {})):
        for p, n in side.items():
            b[row, p - 1] = n
    return b


@pytest.fixture(scope="session")
def reference_afterstates() -> np.ndarray:
    """Unique afterstates (side on roll in row 0, read-only ``(M, 2, 25)`` int8, in order of first appearance) of
    every reference position with each of the 21 rolls: several hundred thousand real-play positions."""
    boards = np.load(REFERENCE_POSITIONS)["boards"]
    after, _ = afterstates(np.repeat(boards, len(ROLLS), axis=0), np.tile(ROLLS, (len(boards), 1)))
    after = np.ascontiguousarray(flip(after))
    _, first = np.unique(after.reshape(len(after), -1).view("V50")[:, 0], return_index=True)  # unique boards
    after = after[np.sort(first)]
    after.setflags(write=False)
    return after


def error_of(fn, *args) -> tuple[type, str] | None:
    """``(type, message)`` of the :class:`bgai.errors.BgaiError` that ``fn(*args)`` raises, ``None`` if it returns:
    to check that two paths reject bad input with the same error."""
    try:
        fn(*args)
    except BgaiError as exc:
        return type(exc), str(exc)
    return None


def has_gnubg_nn() -> bool:
    """Whether gnubg_nn (GNU Backgammon's nets, the dev extra) is installed."""
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return False
    return True


def probability_agent_spec() -> str:
    """An agent with probabilities to serve ("gnubg") when gnubg_nn is installed, else "pubeval"."""
    return "gnubg" if has_gnubg_nn() else "pubeval"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 just now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UvicornThread:
    """uvicorn serving ``config`` (a ``uvicorn.Config`` on 127.0.0.1) in a daemon thread, started when this
    returns (RuntimeError after 10 s); ``port``, ``url``; ``stop()`` ends it."""

    def __init__(self, config) -> None:
        import uvicorn

        self.port = config.port
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("uvicorn did not start")
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def legal_positions(mover_on_board: bool = False):
    """A hypothesis strategy of legal boards ``(2, 25)`` int8: 15 checkers a side on points, bar and off, no point
    held by both; half of the draws with the side to move in or near its home board (bear-offs).  With
    ``mover_on_board`` the side to move keeps at least one checker (else at least one checker is on the board)."""
    from hypothesis import strategies as st

    from bgai.core.board import validate

    @st.composite
    def positions(draw):
        board = np.zeros((2, 25), dtype=np.int8)
        top = 8 if draw(st.booleans()) else 25
        for loc in draw(st.lists(st.integers(0, top), min_size=15, max_size=15)):  # 0 = off, 25 = bar
            if loc:
                board[0, loc - 1] += 1
        taken = {24 - (c + 1) for c in range(24) if board[0, c] > 0}
        free = [c for c in range(24) if c not in taken]
        for c in draw(st.lists(st.sampled_from(free + [-1, 24]), min_size=15, max_size=15)):  # -1 = off, 24 = bar
            if c >= 0:
                board[1, c] += 1
        if not (board[0] if mover_on_board else board).any():
            board[0, 0] = 1
        return validate(board)[0]

    return positions()


def compiled_kernel_fixture(use_compiled, kernel):
    """A module-scoped autouse fixture for a test module of one compiled kernel: skips the module when kernels are
    off (``BGAI_NUMBA=0``, no numba), turns the kernel on (``use_compiled(True)``) for its tests, and afterwards
    resets ``kernel`` (its :class:`bgai.util.jit.LazyKernel`), so that the other test modules start as a fresh
    process does (the numpy / Python path until loaded).  Use: ``compiled = compiled_kernel_fixture(use, K)``."""
    from bgai.util import jit

    @pytest.fixture(scope="module", autouse=True)
    def compiled():
        if not jit.AVAILABLE:
            pytest.skip("compiled kernels turned off (BGAI_NUMBA=0)")
        assert use_compiled(True)
        yield
        kernel.reset()

    return compiled


@pytest.fixture(autouse=True)
def _default_signal_handlers(request):
    """Every test starts with Python's own SIGINT handler (KeyboardInterrupt).  A suite started with SIGINT ignored
    (as a shell starts a background job: ``bash .ci/run &``) has no KeyboardInterrupt handler in its processes, and
    passes the ignored signal on to the subprocesses its tests start (it stays ignored across exec): the Ctrl-C
    tests then fail (tests/test_eval_interrupt.py).  ``$BGAI_SIGNAL_LEAKS`` names a file to list the tests that
    started with another handler in (a test or fixture that left one behind)."""
    import signal

    handler = signal.getsignal(signal.SIGINT)
    if handler is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with open(os.environ.get("BGAI_SIGNAL_LEAKS", os.devnull), "a") as f:
            f.write(f"{request.node.nodeid} started with SIGINT {handler}\n")
    yield
