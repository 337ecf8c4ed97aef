"""Move times in about two bits a move: an adaptive binary range coder, one model per seat.

A bot's move times cluster (a fast bot answers in 0-2 ms, a searching one in 3-8 ms), and
each seat's are alike, so :func:`pack` codes every time with a model that learns, as it goes,
how often each value comes from *that seat*; :func:`unpack` learns the same way while it
decodes, so nothing about the models is stored. The coder is LZMA's binary range coder
(11-bit probabilities, adapting by 1/32 of the error per bit), ended on the value of its final
interval with the most trailing zeros, which are not stored.

A time *t* (whole milliseconds) is coded as its Exp-Golomb class ``c = bit_length(t + 1) - 1``
in unary, each unary bit with its own adaptive probability (per seat and position), then the
``c`` low bits of ``t + 1``: the first :data:`TREE_BITS` of them through a bit tree of
adaptive probabilities (per seat and class), the rest at even odds.

>>> times = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
>>> seats = [s % 2 for s in range(len(times))]
>>> unpack(pack(times, seats), seats) == times
True
>>> len(pack([1, 2] * 200, [0, 1] * 200)) < 400 * 2 // 8  # well under the 2 bits of order-0 Exp-Golomb
True
"""

from __future__ import annotations

from collections.abc import Sequence

PROB_BITS = 11
ONE = 1 << PROB_BITS
MOVE_BITS = 5
TOP = 1 << 24
MAX_CLASS = 40
"""Times below 2**40 ms (35 years) are coded; a longer one is refused."""
TREE_BITS = 4
"""Low bits of a time's class coded through adaptive bit trees (the rest at even odds)."""


class _Models:
    """The adaptive probabilities of one seat (of a 0 bit, out of :data:`ONE`)."""

    def __init__(self) -> None:
        self.unary = [ONE // 2] * (MAX_CLASS + 1)
        self.trees = [[ONE // 2] * (1 << TREE_BITS) for _ in range(MAX_CLASS + 1)]


class _Encoder:
    def __init__(self) -> None:
        self.low, self.range, self.cache, self.cache_size = 0, 0xFFFFFFFF, 0, 1
        self.out = bytearray()

    def bit(self, probs: list[int], i: int, bit: int) -> None:
        p = probs[i]
        bound = (self.range >> PROB_BITS) * p
        if bit:
            self.low += bound
            self.range -= bound
            probs[i] = p - (p >> MOVE_BITS)
        else:
            self.range = bound
            probs[i] = p + ((ONE - p) >> MOVE_BITS)
        while self.range < TOP:
            self.range <<= 8
            self._shift_low()

    def direct(self, value: int, count: int) -> None:
        for k in range(count - 1, -1, -1):
            self.range >>= 1
            if (value >> k) & 1:
                self.low += self.range
            while self.range < TOP:
                self.range <<= 8
                self._shift_low()

    def _shift_low(self) -> None:
        if self.low < 0xFF000000 or self.low >= 1 << 32:
            carry = self.low >> 32
            temp = self.cache
            while True:
                self.out.append((temp + carry) & 0xFF)
                temp = 0xFF
                self.cache_size -= 1
                if not self.cache_size:
                    break
            self.cache = (self.low >> 24) & 0xFF
        self.cache_size += 1
        self.low = (self.low & 0x00FFFFFF) << 8

    def finish(self) -> bytes:
        """The code: the value in the final interval with the most trailing zero bits, flushed, its
        trailing zero bytes dropped (the decoder reads zeros past the end)."""
        for k in range(32, -1, -1):
            value = ((self.low + (1 << k) - 1) >> k) << k
            if value < self.low + self.range:
                self.low = value
                break
        for _ in range(5):
            self._shift_low()
        return bytes(self.out[1:]).rstrip(b"\0")  # the first byte the coder emits is always 0


class _Decoder:
    def __init__(self, data: bytes) -> None:
        """``data`` as :meth:`_Encoder.finish` wrote it (without the coder's leading zero byte)."""
        self.data, self.pos = data, 0
        self.range, self.code = 0xFFFFFFFF, 0
        for _ in range(4):
            self.code = (self.code << 8) | self._next()

    def _next(self) -> int:
        self.pos += 1
        return self.data[self.pos - 1] if self.pos <= len(self.data) else 0

    def bit(self, probs: list[int], i: int) -> int:
        p = probs[i]
        bound = (self.range >> PROB_BITS) * p
        if self.code < bound:
            self.range = bound
            probs[i] = p + ((ONE - p) >> MOVE_BITS)
            bit = 0
        else:
            self.code -= bound
            self.range -= bound
            probs[i] = p - (p >> MOVE_BITS)
            bit = 1
        while self.range < TOP:
            self.range <<= 8
            self.code = ((self.code << 8) | self._next()) & 0xFFFFFFFF
        return bit

    def direct(self, count: int) -> int:
        value = 0
        for _ in range(count):
            self.range >>= 1
            bit = 1 if self.code >= self.range else 0
            self.code -= self.range * bit
            value = (value << 1) | bit
            while self.range < TOP:
                self.range <<= 8
                self.code = ((self.code << 8) | self._next()) & 0xFFFFFFFF
        return value


def pack(times_ms: Sequence[int], seats: Sequence[int]) -> bytes:
    """The times, coded; ``seats[i]`` says whose move time ``times_ms[i]`` is (the model it uses)."""
    if len(times_ms) != len(seats):
        raise ValueError(f"{len(times_ms)} move times for {len(seats)} moves")
    enc, models = _Encoder(), dict[int, _Models]()
    for t, seat in zip(times_ms, seats, strict=True):
        if not isinstance(t, int) or t < 0 or t + 1 >= 1 << MAX_CLASS:
            raise ValueError(f"move time {t!r} is not a whole number of ms from 0 to 2**{MAX_CLASS} - 2")
        m = models.setdefault(seat, _Models())
        value = t + 1
        cls = value.bit_length() - 1
        for k in range(cls):
            enc.bit(m.unary, k, 1)
        if cls < MAX_CLASS:
            enc.bit(m.unary, cls, 0)
        tree_bits = min(cls, TREE_BITS)
        high = (value - (1 << cls)) >> (cls - tree_bits)
        node = 1
        for k in range(tree_bits - 1, -1, -1):
            bit = (high >> k) & 1
            enc.bit(m.trees[cls], node, bit)
            node = (node << 1) | bit
        enc.direct(value & ((1 << (cls - tree_bits)) - 1), cls - tree_bits)
    return enc.finish()


def unpack(data: bytes, seats: Sequence[int]) -> list[int]:
    """The ``len(seats)`` times :func:`pack` coded. The code has no length of its own: a damaged or
    short one decodes to other times, so the caller checks the bytes (a compact record's checksum)."""
    dec, models = _Decoder(data), dict[int, _Models]()
    out: list[int] = []
    for seat in seats:
        m = models.setdefault(seat, _Models())
        cls = 0
        while cls < MAX_CLASS and dec.bit(m.unary, cls):
            cls += 1
        tree_bits = min(cls, TREE_BITS)
        node = 1
        for _ in range(tree_bits):
            node = (node << 1) | dec.bit(m.trees[cls], node)
        high = node - (1 << tree_bits)
        low_bits = cls - tree_bits
        value = (1 << cls) | (high << low_bits) | dec.direct(low_bits)
        out.append(value - 1)
    return out
