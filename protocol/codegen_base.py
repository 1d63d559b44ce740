"""What the decoder and encoder generators share: source emission, the namespace the generated
code runs in (constants, precompiled structs, runtime helpers), field classification and
defaults.

A generator writes one function's source into `lines` and every object that source names
into `ns`; names are unique per function (`tmp()`), so nested structs and arrays can be
unrolled inline. Nothing here depends on the direction.
"""

from __future__ import annotations

import struct
from typing import Any

from .errors import DecodeError, EncodeError
from .ints import ZERO_UUID, read_uvarint, uuid_of, write_uvarint
from .schema import FIXED_FORMATS, ZERO, Field, Message

FIXED_WIDTH = {t: struct.calcsize(">" + f) for t, f in FIXED_FORMATS.items()}
SCALAR_ZEROS: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "uint16": 0,
    "int32": 0,
    "uint32": 0,
    "int64": 0,
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
    "records": None,
    "uuid": ZERO_UUID,
}
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


def is_fixed(f: Field) -> bool:
    """A scalar of fixed width: it can share one struct call with its neighbours."""
    return not f.is_array and f.struct is None and f.type in FIXED_FORMATS


class GenBase:
    def __init__(self, msg: Message, version: int) -> None:
        self.msg = msg
        self.version = version
        self.flex = msg.is_flexible(version)
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_DecodeError": DecodeError,
            "_EncodeError": EncodeError,
            "_struct_error": struct.error,
            "_fail": fail,
            "_uv": read_uvarint,
            "_wuv": write_uvarint,
            "_skip_tagged": skip_tagged,
            "_tagged_section": tagged_section,
            "_UUID_OF": uuid_of,
            "_unpack_from": struct.unpack_from,
            "_pack": struct.pack,
            "_new": object.__new__,
            "_B": SMALL_UVARINTS,
        }
        self._consts: dict[tuple[str, Any], str] = {}
        self._n = 0

    def emit(self, ind: int, line: str) -> None:
        self.lines.append(" " * ind + line)

    def tmp(self, prefix: str) -> str:
        self._n += 1
        return f"_{prefix}{self._n}"

    def const(self, kind: str, value: Any) -> str:
        """A name in `ns` for `value`: "unpack"/"pack" take a struct format and bind the
        precompiled method; "dstruct" takes a class and holds a default instance (compared
        against, never handed out); anything else is stored as is."""
        key = (kind, value if kind not in ("cls", "dstruct") else id(value))
        name = self._consts.get(key)
        if name is None:
            name = f"_{kind}{len(self._consts)}"
            if kind == "unpack":
                self.ns[name] = struct.Struct(value).unpack_from
            elif kind == "pack":
                self.ns[name] = struct.Struct(value).pack
            elif kind == "dstruct":
                self.ns[name] = value()
            else:
                self.ns[name] = value
            self._consts[key] = name
        return name

    def cls(self, c: type) -> str:
        return self.const("cls", c)

    def default_expr(self, f: Field) -> str:
        """Source for a fresh default value of `f` (a new list or struct each time)."""
        if f.is_array:
            return "None" if f.default is None else "[]"
        if f.struct is not None:
            return "None" if f.default is None else self.cls(f.struct.cls) + "()"
        value = SCALAR_ZEROS[f.type] if f.default is ZERO else f.default
        if value is None or isinstance(value, (bool, int, float)):
            return repr(value)
        return self.const("d", value)

    def split(self, fields: tuple[Field, ...]) -> tuple[list[Field], list[Field]]:
        """The fields present in this version: (regular in order, tagged by tag)."""
        v = self.version
        present = [f for f in fields if f.present_in(v)]
        tagged = [f for f in present if self.flex and f.tagged_in(v)]
        regular = [f for f in present if not (self.flex and f.tagged_in(v))]
        tagged.sort(key=lambda f: f.tag if f.tag is not None else -1)
        return regular, tagged
