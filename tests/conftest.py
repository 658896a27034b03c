"""Shared test helpers: comparing bgai afterstates with GNU Backgammon's move generator (gnubg_nn)."""

from __future__ import annotations

import types

import numpy as np
import pytest

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
