"""Turn a schema table (protocol/schema.py) into specialised decode/encode functions.

For one (Message, version) the generators write straight-line Python source -- fixed-width runs
as one precompiled `struct` call, strings/bytes/arrays/tagged sections inlined, nested structs
unrolled (codegen_decode.py, codegen_encode.py say how) -- then it is `compile`d and `exec`d
once. protocol/codec.py calls `build` lazily and caches the result, so importing the package
compiles nothing.

    decode(data: bytes, pos: int) -> (obj, new_pos)    raises DecodeError
    encode(obj) -> bytes                               raises EncodeError

Strings decode strictly (the fast path); the first malformed one hands the whole message to a
second decoder, compiled on first need, that replaces malformed UTF-8 as Kafka does
(protocol/utf8.py), so valid input never pays for the replacement rule.

`source(msg, version, "decode"|"encode")` returns the generated text for reading and debugging.
"""

from __future__ import annotations

from typing import Any

from .codegen_base import GenBase
from .codegen_decode import DecodeGen
from .codegen_encode import EncodeGen
from .schema import Message


class _Fallback:
    """The replacing decoder of one (message, version): compiled when first needed."""

    __slots__ = ("fn", "msg", "version")

    def __init__(self, msg: Message, version: int) -> None:
        self.msg = msg
        self.version = version
        self.fn: Any = None

    def __call__(self, data: bytes, pos: int) -> Any:
        if self.fn is None:
            self.fn = build(self.msg, self.version, "decode", replace=True)
        return self.fn(data, pos)


def _generator(msg: Message, version: int, op: str, replace: bool) -> tuple[GenBase, str]:
    if op == "decode":
        dec = DecodeGen(msg, version, replace)
        return dec, dec.source()
    if op == "encode":
        enc = EncodeGen(msg, version)
        return enc, enc.source()
    raise ValueError(f"op must be 'decode' or 'encode', not {op!r}")


def source(msg: Message, version: int, op: str, *, replace: bool = False) -> str:
    return _generator(msg, version, op, replace)[1]


def build(msg: Message, version: int, op: str, *, replace: bool = False) -> Any:
    """Compile the decode or encode function for `msg` at `version`; `replace=True` builds the
    decoder that replaces malformed UTF-8 (the strict one falls back to it by itself)."""
    gen, src = _generator(msg, version, op, replace)
    if op == "decode" and not replace:
        gen.ns["_fallback"] = _Fallback(msg, version)
    code = compile(src, f"<protocol {op} {msg.name} v{version}>", "exec")
    exec(code, gen.ns)  # noqa: S102  (source generated here from the schema tables, never from input)
    fn = gen.ns[op]
    fn.__qualname__ = fn.__name__ = f"{op}_{msg.name}_v{version}{'_replacing' if replace else ''}"
    fn.source = src
    return fn
