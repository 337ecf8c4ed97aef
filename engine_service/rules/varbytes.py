"""The compact record form's bytes: varints, length-prefixed strings, and a reader that names where a blob
broke (:mod:`engine_service.rules.compact` says what the bytes mean)."""

from __future__ import annotations

from .errors import CompactRecordError


class Reader:
    """Reads varints, strings and byte strings from a blob's body, naming the position on error."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def where(self) -> str:
        return f"byte {self.pos}"

    def byte(self, what: str) -> int:
        if self.pos >= len(self.data):
            raise CompactRecordError(f"compact record: truncated at byte {self.pos} (reading {what})")
        self.pos += 1
        return self.data[self.pos - 1]

    def fixed(self, n: int, what: str) -> bytes:
        """The next ``n`` bytes (defined before the methods named ``bytes`` and ``str``, which would shadow
        the types in these annotations)."""
        if self.pos + n > len(self.data):
            raise CompactRecordError(f"compact record: truncated at byte {self.pos} (reading {what})")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def varint(self, what: str) -> int:
        value, shift = 0, 0
        while True:
            b = self.byte(what)
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise CompactRecordError(f"compact record: byte {self.pos}: {what}: a varint longer than 9 bytes")

    def bytes(self, what: str) -> bytes:
        n = self.varint(what)
        if self.pos + n > len(self.data):
            raise CompactRecordError(
                f"compact record: truncated at byte {self.pos} ({what}: {n} bytes, {len(self.data) - self.pos} left)"
            )
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def str(self, what: str) -> str:
        return self.bytes(what).decode("utf-8")


def put_varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)


def put_bytes(out: bytearray, data: bytes) -> None:
    put_varint(out, len(data))
    out += data


def put_str(out: bytearray, s: str) -> None:
    put_bytes(out, s.encode("utf-8"))
