"""GNU Backgammon Position ID: encode and decode, one position or a whole batch.

Format (source: the GNU Backgammon manual, "A technical description of the Position ID", and gnubg's
``positionid.c``; test vectors in ``tests/test_position_id.py``):

1. A bit string: first the player **not** on roll, then the player on roll; for each of them, for each of his
   points from his ace point up to his 24-point and then his bar (25 slots), one ``1`` per checker followed by
   a ``0``.  Borne-off checkers are implicit.
2. Padded with ``0`` to 80 bits, packed little-endian by bit (bit *k* of the string is bit *k* mod 8 of byte
   *k* // 8) into 10 bytes.
3. Standard Base64 of the 10 bytes without the ``==`` padding: 14 characters.  The starting position is
   ``4HPwATDgc/ABMA``.

In bgai's layout (:mod:`bgai.core.board`) row 0 is the side on roll and row 1 the opponent, each on its own point
numbers, so the bit string is row 1 (columns 0..24) followed by row 0 (columns 0..24).

The batch functions are vectorised with numpy (no per-position Python loop except building the strings); the
batch encoder has a compiled kernel too (:func:`use_compiled`, :mod:`bgai.core.position_id_jit`), the numpy path
staying the reference.
"""

from __future__ import annotations

import base64
from typing import Iterable

import numpy as np

from bgai.core.board import as_batch, validation_errors
from bgai.core.board import validate as validate_boards
from bgai.core.position_id_jit import BASE64, encode_ids
from bgai.errors import PositionIDError
from bgai.util.jit import LazyKernel

__all__ = [
    "POSITION_ID_LENGTH",
    "encode_position_id",
    "decode_position_id",
    "encode_position_ids",
    "decode_position_ids",
    "use_compiled",
]

#: Length of a Position ID in characters.
POSITION_ID_LENGTH = 14
_KEY_BITS = 80
_SLOTS = 50  # 25 per side
_MAX_ONES = _KEY_BITS - _SLOTS  # 30 checkers at most in all

_ALPHABET = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", dtype=np.uint8)
_DECODE = np.full(256, -1, dtype=np.int16)
_DECODE[_ALPHABET] = np.arange(64, dtype=np.int16)
_SLOT_INDEX = np.arange(_SLOTS, dtype=np.int16)
_BIT_INDEX = np.arange(_KEY_BITS, dtype=np.int16)


def encode_position_ids(boards: np.ndarray, *, validate: bool = True) -> list[str]:
    """Position IDs of a batch of boards.

    Args:
        boards: ``(N, 2, 25)`` (or one ``(2, 25)``) integer array in bgai's layout (row 0 = side on roll).
        validate: check the boards first; pass ``False`` for boards known to be legal (e.g. the move
            generator's afterstates of a validated position), whose IDs are then made without the check.

    Returns:
        ``N`` Position IDs, 14 characters each.

    Raises:
        InvalidPositionError: a board that is not a legal position (see :func:`bgai.core.board.validate`).
    """
    b = validate_boards(boards) if validate else as_batch(boards)
    n = b.shape[0]
    if n == 0:
        return []
    kernel = _ENCODER.get(n)
    if kernel is not None and b.dtype == np.int8:
        if not (b.flags.c_contiguous and b.flags.writeable):  # the one array type the kernel is compiled for
            b = b.copy()
        text, ok = kernel(b, BASE64)
        if ok:
            text = text.tobytes().decode("ascii")
            return [text[k : k + POSITION_ID_LENGTH] for k in range(0, POSITION_ID_LENGTH * n, POSITION_ID_LENGTH)]
    # gnubg order: opponent (row 1) first, then the side on roll (row 0); 50 slots of "n ones then a zero".
    ends = np.cumsum(b[:, ::-1].reshape(n, _SLOTS), axis=1, dtype=np.int16)
    ends += _SLOT_INDEX  # position of each slot's terminating zero, (N, 50)
    if ends[:, -1].max() >= _KEY_BITS or b.min() < 0:  # not a position (passed with validate=False)
        validate_boards(b)  # raises, naming the fault
    bits = _BIT_INDEX < ends[:, -1:]  # ones up to the last slot's zero, the padding after it zero
    bits.reshape(-1)[(ends + (np.arange(n, dtype=np.int64) * _KEY_BITS)[:, None]).ravel()] = False
    keys = np.zeros((n, 12), dtype=np.uint8)  # 10 bytes and 2 of padding: 16 Base64 characters, 14 kept
    keys[:, :10] = np.packbits(bits, axis=1, bitorder="little")
    text = base64.b64encode(keys.tobytes()).decode("ascii")
    return [text[k : k + POSITION_ID_LENGTH] for k in range(0, 16 * n, 16)]


def _prime(kernel) -> None:
    """One call of the compiled encoder, which compiles it or loads its machine code from numba's cache."""
    one = np.zeros((1, 2, 25), dtype=np.int8)
    one[0, 0, 0] = one[0, 1, 0] = 1
    kernel(one, BASE64)


#: Boards encoded on the numpy path after which :func:`encode_position_ids` loads its compiled kernel
#: (:class:`bgai.util.jit.LazyKernel`; the numpy path takes about 2 us a board in batches of tens, so about 0.4 s).
LOAD_AFTER_BOARDS = 200_000
_ENCODER = LazyKernel(encode_ids, LOAD_AFTER_BOARDS, prime=_prime, owner=__name__)


def use_compiled(on: bool = True) -> bool:
    """Turn the compiled encoder of :func:`encode_position_ids` on (loading it now) or off (the numpy path, the
    reference; the same IDs) for the following calls (:meth:`bgai.util.jit.LazyKernel.use`).  By default it is
    loaded after :data:`LOAD_AFTER_BOARDS` boards encoded with numpy.

    Returns:
        Whether the compiled encoder is now in use: ``False`` when turned off, or without compiled kernels (numba
        not installed, or ``BGAI_NUMBA=0``; see :func:`bgai.util.jit.compile_kernel`).
    """
    return _ENCODER.use(on)


def _decode_one(s: str) -> np.ndarray | None:
    """The board of one well-formed Position ID of a legal position, decoded with Python ints (about 0.02 ms
    instead of the batch decoder's 0.1 ms for one ID); None for anything else (the batch decoder then names the
    fault).  Both give the same boards (tests/test_position_id.py)."""
    if len(s) != POSITION_ID_LENGTH or not s.isascii():
        return None
    try:
        raw = base64.b64decode(s + "==", validate=True)
    except ValueError:
        return None
    if _DECODE[ord(s[-1])] & 15:  # bits beyond the 80-bit key
        return None
    key = int.from_bytes(raw, "little")
    runs = format(key, "080b")[::-1].split("0")  # the checkers of each slot, then the padding
    if len(runs) <= _SLOTS or any(runs[_SLOTS:]):
        return None
    counts = [len(r) for r in runs[:_SLOTS]]
    opp, me = counts[:25], counts[25:]
    n_me, n_opp = sum(me), sum(opp)
    if n_me > 15 or n_opp > 15 or n_me + n_opp == 0 or any(me[c] and opp[23 - c] for c in range(24)):
        return None
    return np.array([me, opp], dtype=np.int8)


def encode_position_id(board: np.ndarray) -> str:
    """The Position ID of one board.

    Args:
        board: ``(2, 25)`` integer array (row 0 = side on roll), or a :class:`bgai.core.position.Position`.

    Returns:
        The 14-character Position ID, e.g. ``'4HPwATDgc/ABMA'`` for the starting position.

    Raises:
        InvalidPositionError: a board of the wrong shape or not a legal position.
    """
    board = getattr(board, "board", board)
    arr = as_batch(board)
    if arr.shape[0] != 1:
        raise PositionIDError(f"encode_position_id takes one (2, 25) board, got shape {arr.shape}")
    validate_boards(arr)
    # one board: the bit string as a Python int (a few microseconds; the batch encoder's numpy calls cost more)
    key = pos = 0
    me, opp = arr[0].tolist()
    for count in opp + me:  # gnubg order: opponent first; each slot "count ones, then a zero"
        key |= ((1 << count) - 1) << pos
        pos += count + 1
    return base64.b64encode(key.to_bytes(12, "little")).decode("ascii")[:POSITION_ID_LENGTH]


def decode_position_ids(position_ids: Iterable[str]) -> np.ndarray:
    """Decode a batch of Position IDs into validated boards.

    Args:
        position_ids: Position ID strings (surrounding whitespace is ignored).

    Returns:
        ``(N, 2, 25)`` ``int8`` boards in bgai's layout (row 0 = side on roll).

    Raises:
        PositionIDError: naming the first bad ID (its index and text) and the fault: wrong length, a character
            outside the Base64 alphabet (quoted, with its place), more than 30 checkers, bits set beyond the
            end of the key, or a key that decodes to an impossible position (e.g. 16 checkers for one side,
            a point held by both sides).
    """
    ids = [_clean(s, i) for i, s in enumerate(position_ids)]
    n = len(ids)
    if n == 0:
        return np.zeros((0, 2, 25), dtype=np.int8)
    for i, s in enumerate(ids):
        if len(s) != POSITION_ID_LENGTH:
            _fail(i, s, n, f"wrong length {len(s)} (a Position ID has {POSITION_ID_LENGTH} characters)")
    raw = np.frombuffer("".join(ids).encode("latin-1"), dtype=np.uint8).reshape(n, POSITION_ID_LENGTH)
    sextets = _DECODE[raw]
    bad = sextets < 0
    if bad.any():
        i, j = np.argwhere(bad)[0]
        hint = " (not in the Base64 alphabet)" if ids[i][j] != " " else (
            " (not in the Base64 alphabet; a '+' in a URL's query string arrives as a space: write it %2B)")
        _fail(i, ids[i], n, f"bad character {ids[i][j]!r} at position {j + 1}{hint}")
    # 14 sextets = 84 bits, most significant bit of each sextet first (Base64 is big-endian within a sextet).
    sbits = ((sextets[:, :, None] >> np.arange(5, -1, -1)) & 1).astype(np.uint8).reshape(n, 84)
    extra = sbits[:, _KEY_BITS:].any(axis=1)
    if extra.any():
        i = int(np.flatnonzero(extra)[0])
        _fail(i, ids[i], n, f"last character {ids[i][-1]!r} sets bits beyond the 80-bit key")
    keys = np.packbits(sbits[:, :_KEY_BITS], axis=1)  # (N, 10) bytes, big-endian bit order = Base64 order
    bits = np.unpackbits(keys, axis=1, bitorder="little").astype(np.int16)  # key bit k -> column k
    ones = bits.sum(axis=1)
    too_many = ones > _MAX_ONES
    if too_many.any():
        i = int(np.flatnonzero(too_many)[0])
        _fail(i, ids[i], n, f"too many checkers: {ones[i]} in the key, at most {_MAX_ONES} (15 a side)")
    zeros = 1 - bits
    slot = np.cumsum(zeros, axis=1) - zeros  # for a one-bit: the number of zeros before it = its slot
    past_end = (bits == 1) & (slot >= _SLOTS)
    if past_end.any():
        i = int(np.flatnonzero(past_end.any(axis=1))[0])
        _fail(i, ids[i], n, "too many bits: checkers after the 50th point slot (the padding must be zero)")
    flat = (np.arange(n)[:, None] * _SLOTS + np.minimum(slot, _SLOTS - 1))[bits == 1]
    counts = np.bincount(flat, minlength=n * _SLOTS).reshape(n, _SLOTS).astype(np.int8)
    boards = np.stack([counts[:, 25:], counts[:, :25]], axis=1)
    errors = validation_errors(boards)
    for i, msg in enumerate(errors):
        if msg is not None:
            _fail(i, ids[i], n, f"impossible position: {msg}")
    return boards


def decode_position_id(position_id: str) -> np.ndarray:
    """Decode one Position ID into a validated board.

    Args:
        position_id: 14-character Position ID, e.g. ``'4HPwATDgc/ABMA'`` (surrounding whitespace is ignored).

    Returns:
        ``(2, 25)`` ``int8`` board in bgai's layout (row 0 = side on roll).

    Raises:
        PositionIDError: naming the fault (see :func:`decode_position_ids`).
    """
    if isinstance(position_id, str):
        board = _decode_one(position_id.strip())
        if board is not None:
            return board
    return decode_position_ids([position_id])[0]


def _clean(s: object, index: int) -> str:
    if not isinstance(s, str):
        raise PositionIDError(f"Position ID must be a string, got {type(s).__name__} (item {index})")
    s = s.strip()
    if not s.isascii():
        bad = next(c for c in s if not c.isascii())
        raise PositionIDError(f"Position ID {s!r}: bad character {bad!r} (not in the Base64 alphabet)")
    return s


def _fail(i: int, s: str, n: int, what: str) -> None:
    where = f" (item {i})" if n > 1 else ""
    raise PositionIDError(f"Position ID {s!r}{where}: {what}")

