"""The compiled Position ID encoder: one numba kernel doing the work of
:func:`bgai.core.position_id.encode_position_ids` for a batch of boards.

Plain Python in numba's subset; :mod:`bgai.core.position_id` compiles it with :class:`bgai.util.jit.LazyKernel`
when numba is available and keeps its numpy encoder as the reference (tests/test_jit_position_id.py checks that
both give the same IDs on thousands of boards).  A module of its own so that numba's cache of the machine code
(keyed to this file) survives edits of the rest of the module.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BASE64", "encode_ids"]

#: The standard Base64 alphabet as bytes (RFC 4648), the characters of a Position ID.
BASE64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8).copy()


def encode_ids(b, alphabet):  # pragma: no cover - compiled by numba
    """The Position IDs of a batch of boards, as their ASCII characters.

    Args:
        b: ``(N, 2, 25)`` int8 boards (bgai layout, side on roll in row 0).
        alphabet: :data:`BASE64`.

    Returns:
        ``(text, ok)``: ``text`` ``(N, 14)`` uint8, each row the 14 characters of a board's Position ID (the
        format: :mod:`bgai.core.position_id`); ``ok`` False when a board has a negative count or more than 30
        checkers in all (no key fits in 80 bits; ``text`` is then not complete).
    """
    n = b.shape[0]
    text = np.empty((n, 14), dtype=np.uint8)
    key = np.zeros(12, dtype=np.int64)  # 10 bytes of key and 2 of padding: 16 Base64 characters, 14 kept
    for i in range(n):
        for k in range(12):
            key[k] = 0
        pos = 0
        for side in range(2):  # gnubg order: the opponent (row 1) first, then the side on roll (row 0)
            row = 1 - side
            for c in range(25):
                count = b[i, row, c]
                if count < 0 or pos + count > 79:
                    return text, False
                for _ in range(count):  # count ones, then a zero
                    key[pos >> 3] |= 1 << (pos & 7)
                    pos += 1
                pos += 1
        for g in range(4):  # each 3 bytes -> 4 characters, most significant bits first
            v = key[3 * g] << 16 | key[3 * g + 1] << 8 | key[3 * g + 2]
            for k in range(4):
                j = 4 * g + k
                if j < 14:
                    text[i, j] = alphabet[(v >> (18 - 6 * k)) & 63]
    return text, True
