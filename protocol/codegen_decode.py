"""Generate the decoder of one (Message, version): straight-line Python, compiled once.

    decode(data: bytes, pos: int) -> (obj, new_pos)    raises DecodeError

What makes it fast (issue 16), all decided at generation time:
- a run of fixed-width fields is one precompiled `struct` call that also reads what follows the
  run: a classic length or count, the first byte of a compact length (uvarint, usually one
  byte), a nullable struct's marker, or the tagged-field count (usually 0);
- objects are made with `object.__new__` and filled slot by slot (no `__init__` call);
- string and bytes lengths are checked for sign where they are read but against the end of the
  buffer once, at the end: a slice past the end comes back short, so `pos` ends past `end`
  (and a count checked against `end - pos` fails early), which the final check reports;
- strings decode strictly; `replace=True` generates the variant that replaces malformed UTF-8
  (protocol/utf8.py), which the strict one hands the message to on UnicodeDecodeError.
"""

from __future__ import annotations

import struct

from .codegen_base import FIXED_WIDTH, GenBase, is_fixed
from .schema import FIXED_FORMATS, Field, Message
from .utf8 import ERRORS


class DecodeGen(GenBase):
    def __init__(self, msg: Message, version: int, replace: bool = False) -> None:
        super().__init__(msg, version)
        self.replace = replace

    def source(self) -> str:
        m, v = self.msg, self.version
        self.emit(0, "def decode(data, pos):")
        if not self.replace:
            self.emit(4, "start = pos")
        self.emit(4, "end = len(data)")
        self.emit(4, "try:")
        self.struct_fields(m.fields, m.cls, "obj", 8)
        self.emit(8, "if pos > end:")
        self.emit(12, f"_fail('truncated {m.name} v{v}: %d bytes short' % (pos - end))")
        self.emit(4, "except (_struct_error, IndexError) as exc:")
        self.emit(8, f"raise _DecodeError('truncated {m.name} v{v}: %s' % exc) from None")
        if not self.replace:
            self.emit(4, "except UnicodeDecodeError:")  # malformed UTF-8: decode again, replacing
            self.emit(8, "return _fallback(data, start)")
        self.emit(4, "return obj, pos")
        return "\n".join(self.lines) + "\n"

    # -- what a field starts with -------------------------------------------------------------
    def prefix(self, f: Field) -> str | None:
        """The struct format of the fixed-width thing field `f` starts with, or None (an inline
        struct starts with its own fields)."""
        if f.struct is not None and not f.is_array:
            return "B" if f.nullable_in(self.version) else None  # marker: >= 128 (-1) is null
        if f.is_array:
            return "B" if self.flex else "i"
        return self.length_format(f.type)

    def length_format(self, t: str) -> str:
        """A string/bytes length: the first byte of a uvarint if flexible, else int16/int32."""
        if self.flex:
            return "B"
        return "h" if t == "string" else "i"

    def read_prefix(self, fmt: str | None, var: str, ind: int) -> None:
        """Read a prefix of format `fmt` into `var` on its own (no fixed run before it)."""
        if fmt == "B":
            self.emit(ind, f"{var} = data[pos]")
            self.emit(ind, "pos += 1")
        elif fmt is not None:
            self.emit(ind, f"{var}, = {self.const('unpack', '>' + fmt)}(data, pos)")
            self.emit(ind, f"pos += {struct.calcsize('>' + fmt)}")

    def finish_length(self, var: str, ind: int) -> None:
        """A compact length's first byte is in `var` and `pos` is after it: complete the uvarint
        (rarely more than one byte) and remove the +1 (so null is -1, as classic)."""
        self.emit(ind, f"if {var} >= 128:")
        self.emit(ind + 4, f"{var}, pos = _uv(data, pos - 1)")
        self.emit(ind, f"{var} -= 1")

    # -- structs ------------------------------------------------------------------------------
    def struct_fields(self, fields: tuple[Field, ...], cls: type, target: str, ind: int) -> None:
        regular, tagged = self.split(fields)
        self.emit(ind, f"{target} = _new({self.cls(cls)})")
        for f in fields:  # absent in this version, or tagged: the default (a tag may override it)
            if f not in regular:
                self.emit(ind, f"{target}.{f.name} = {self.default_expr(f)}")
        i = 0
        tags_done = False
        while i < len(regular):
            f = regular[i]
            if not is_fixed(f):
                var = self.tmp("n")
                self.read_prefix(self.prefix(f), var, ind)
                self.value(f, f"{target}.{f.name}", var, ind)
                i += 1
                continue
            j = i
            while j < len(regular) and is_fixed(regular[j]):
                j += 1
            run, nxt = regular[i:j], (regular[j] if j < len(regular) else None)
            extra = self.prefix(nxt) if nxt is not None else ("B" if self.flex else None)
            self.fixed_run(run, target, extra, ind)
            if extra is None:
                i = j  # an inline struct follows: its own fields come next
            elif nxt is None:
                self.tags(tagged, target, "_x", ind)
                tags_done = True
                i = j
            else:
                self.value(nxt, f"{target}.{nxt.name}", "_x", ind)
                i = j + 1
        if self.flex and not tags_done:
            self.tags(tagged, target, None, ind)

    def fixed_run(self, run: list[Field], target: str, extra: str | None, ind: int) -> None:
        """One unpack for `run` (straight into the object's slots) and, if `extra`, the prefix
        of what follows into `_x` (a local reused by every run: it is consumed at once)."""
        fmt = ">" + "".join(FIXED_FORMATS[f.type] for f in run) + (extra or "")
        lhs = []
        uuids = []
        for f in run:
            if f.type == "uuid":
                var = self.tmp("u")
                uuids.append((f, var))
                lhs.append(var)
            else:
                lhs.append(f"{target}.{f.name}")
        if extra:
            lhs.append("_x")
        comma = "," if len(lhs) == 1 else ""
        self.emit(ind, f"{', '.join(lhs)}{comma} = {self.const('unpack', fmt)}(data, pos)")
        self.emit(ind, f"pos += {struct.calcsize(fmt)}")
        for f, var in uuids:
            self.emit(ind, f"{target}.{f.name} = _UUID_OF({var})")

    def tags(self, tagged: list[Field], target: str, first: str | None, ind: int) -> None:
        """The tagged-field section; `first` holds its first byte if a fixed run read it."""
        nt = self.tmp("nt")
        if first is None:
            self.emit(ind, "if data[pos]:")  # usually 0: an empty section
            self.emit(ind + 4, f"{nt}, pos = _uv(data, pos)")
        else:
            self.emit(ind, f"if {first}:")
            self.emit(ind + 4, f"{nt}, pos = _uv(data, pos - 1)")
        i1 = ind + 4
        if tagged:
            tag, size, te = self.tmp("tag"), self.tmp("sz"), self.tmp("te")
            self.emit(i1, f"for _ in range({nt}):")
            i2 = i1 + 4
            self.emit(i2, f"{tag}, pos = _uv(data, pos)")
            self.emit(i2, f"{size}, pos = _uv(data, pos)")
            self.emit(i2, f"{te} = pos + {size}")
            self.emit(i2, f"if {te} > end:")
            self.emit(i2 + 4, "_fail('tagged field runs past the end')")
            for k, f in enumerate(tagged):
                self.emit(i2, f"{'if' if k == 0 else 'elif'} {tag} == {f.tag}:")
                self.single(f, f"{target}.{f.name}", i2 + 4)
                self.emit(i2 + 4, f"if pos != {te}:")
                self.emit(i2 + 8, f"_fail('tagged field {f.name} has the wrong size')")
            self.emit(i2, f"pos = {te}")
        else:
            self.emit(i1, f"pos = _skip_tagged(data, pos, {nt})")
        if first is None:
            self.emit(ind, "else:")
            self.emit(ind + 4, "pos += 1")

    # -- values -------------------------------------------------------------------------------
    def single(self, f: Field, dest: str, ind: int) -> None:
        """Decode `f` on its own (a tagged field's value)."""
        if is_fixed(f):
            self.scalar(f.type, False, dest, None, ind, f.name)
            return
        var = self.tmp("n")
        self.read_prefix(self.prefix(f), var, ind)
        self.value(f, dest, var, ind)

    def value(self, f: Field, dest: str, n: str, ind: int) -> None:
        """Decode non-fixed `f` into `dest`; its prefix (length, count or marker) is in `n`."""
        nullable = f.nullable_in(self.version)
        if f.is_array:
            if self.flex:
                self.finish_length(n, ind)
            self.array(f, dest, n, nullable, ind)
        elif f.struct is not None:
            var = self.tmp("s")
            if nullable:
                self.emit(ind, f"if {n} >= 128:")
                self.emit(ind + 4, f"{dest} = None")
                self.emit(ind, "else:")
                ind += 4
            self.struct_fields(f.struct.fields, f.struct.cls, var, ind)
            self.emit(ind, f"{dest} = {var}")
        else:
            self.scalar(f.type, nullable, dest, n, ind, f.name)

    def array(self, f: Field, dest: str, n: str, nullable: bool, ind: int) -> None:
        self.emit(ind, f"if {n} < 0:")
        if nullable:
            self.emit(ind + 4, f"if {n} != -1:")
            self.emit(ind + 8, f"_fail('invalid array length %d for {f.name}' % {n})")
            self.emit(ind + 4, f"{dest} = None")
        else:
            self.emit(ind + 4, f"_fail('invalid array length %d for {f.name}' % {n})")
        self.emit(ind, "else:")
        i2 = ind + 4
        t = f.element_type
        if f.struct is None and t in FIXED_FORMATS and t != "uuid":
            w = FIXED_WIDTH[t]
            self.emit(i2, f"if {n} * {w} > end - pos:")
            self.emit(i2 + 4, f"_fail('array count %d for {f.name} runs past the end' % {n})")
            self.emit(i2, f"{dest} = list(_unpack_from('>%d{FIXED_FORMATS[t]}' % {n}, data, pos))")
            self.emit(i2, f"pos += {n} * {w}")
            return
        # every element takes at least one byte: a count larger than what is left is malformed
        self.emit(i2, f"if {n} > end - pos:")
        self.emit(i2 + 4, f"_fail('array count %d for {f.name} runs past the end' % {n})")
        items, app, elem = self.tmp("items"), self.tmp("append"), self.tmp("e")
        self.emit(i2, f"{items} = []")
        self.emit(i2, f"{app} = {items}.append")
        self.emit(i2, f"for _ in range({n}):")
        if f.struct is not None:
            self.struct_fields(f.struct.fields, f.struct.cls, elem, i2 + 4)
        else:
            var = None if t in FIXED_FORMATS else self.tmp("n")
            if var is not None:
                self.read_prefix(self.length_format(t), var, i2 + 4)
            self.scalar(t, False, elem, var, i2 + 4, f.name)
        self.emit(i2 + 4, f"{app}({elem})")
        self.emit(i2, f"{dest} = {items}")

    def scalar(self, t: str, nullable: bool, dest: str, n: str | None, ind: int, what: str) -> None:
        """A scalar into `dest`; for string/bytes/records, `n` holds the length prefix read."""
        if t in FIXED_FORMATS:
            fmt = ">" + FIXED_FORMATS[t]
            var = self.tmp("v") if t == "uuid" else dest
            self.emit(ind, f"{var}, = {self.const('unpack', fmt)}(data, pos)")
            self.emit(ind, f"pos += {FIXED_WIDTH[t]}")
            if t == "uuid":
                self.emit(ind, f"{dest} = _UUID_OF({var})")
            return
        assert n is not None
        if self.flex:
            self.finish_length(n, ind)
        utf8 = f"'utf-8', {ERRORS!r}" if self.replace else ""
        get = f"data[pos:pos + {n}].decode({utf8})" if t == "string" else f"data[pos:pos + {n}]"
        if t == "string":  # an empty string (common: metadata, ids) is the constant, no slice and decode
            self.emit(ind, f"if {n} > 0:")
            self.emit(ind + 4, f"{dest} = {get}")
            self.emit(ind + 4, f"pos += {n}")
            self.emit(ind, f"elif {n} == 0:")
            self.emit(ind + 4, f"{dest} = ''")
            if nullable:
                self.emit(ind, f"elif {n} == -1:")
                self.emit(ind + 4, f"{dest} = None")
            self.emit(ind, "else:")
            self.emit(ind + 4, f"_fail('invalid length %d for {what}' % {n})")
        elif nullable or t == "records":
            self.emit(ind, f"if {n} >= 0:")
            self.emit(ind + 4, f"{dest} = {get}")
            self.emit(ind + 4, f"pos += {n}")
            self.emit(ind, f"elif {n} == -1:")
            self.emit(ind + 4, f"{dest} = None")
            self.emit(ind, "else:")
            self.emit(ind + 4, f"_fail('invalid length %d for {what}' % {n})")
        else:
            self.emit(ind, f"if {n} < 0:")
            self.emit(ind + 4, f"_fail('invalid length %d for {what}' % {n})")
            self.emit(ind, f"{dest} = {get}")
            self.emit(ind, f"pos += {n}")
