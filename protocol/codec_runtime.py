"""What generated codec code calls at run time, besides `struct` and the message classes: the
small helpers of the exec'd functions (codegen.py) and of the generated modules in
protocol/codecs/ (codegen_module.py), which both name them.

Kept apart from the generators so a generated module (and its compiled copy) imports no code
generator: the replacing decoder of a message (malformed UTF-8, protocol/utf8.py) is the one
thing still built by `codegen` on demand, the first time such input arrives.
"""

from __future__ import annotations

from typing import Any

from .errors import DecodeError
from .ints import read_uvarint, write_uvarint

# One-byte uvarints, indexed by value: a compact length below 128 costs a tuple index.
SMALL_UVARINTS = tuple(bytes((i,)) for i in range(128))


def fail(msg: str) -> None:
    raise DecodeError(msg)


def skip_tagged(data: bytes, pos: int, count: int) -> int:
    """Skip `count` unknown tagged fields starting at `pos`."""
    end = len(data)
    for _ in range(count):
        _tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        pos += size
        if pos > end:
            raise DecodeError("tagged field runs past the end")
    return pos


def tagged_section(tagged: list[tuple[int, bytes]]) -> bytes:
    """A tagged-field section from (tag, encoded value) pairs already in ascending tag order."""
    if not tagged:
        return b"\x00"
    out = [write_uvarint(len(tagged))]
    for tag, raw in tagged:
        out += (write_uvarint(tag), write_uvarint(len(raw)), raw)
    return b"".join(out)


_REPLACING: dict[tuple[int, bool, int], Any] = {}


def decode_replacing(api_key: int, response: bool, version: int, data: bytes, pos: int) -> tuple[Any, int]:
    """Decode again with malformed UTF-8 replaced, as Kafka does: what a generated module's strict
    decoder hands a message to on UnicodeDecodeError (generated and compiled on first need)."""
    fn = _REPLACING.get((api_key, response, version))
    if fn is None:
        from .codec import message_schema
        from .codegen import build

        fn = build(message_schema(api_key, response), version, "decode", replace=True)
        _REPLACING[(api_key, response, version)] = fn
    result: tuple[Any, int] = fn(data, pos)
    return result
