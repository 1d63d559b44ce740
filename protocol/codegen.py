"""Turn a schema table (protocol/schema.py) into specialised decode/encode functions.

For one (Message, version) this writes straight-line Python source -- fixed-width runs become
one precompiled `struct.Struct` call, strings/bytes/arrays/tagged sections are inlined, nested
structs are unrolled -- then `compile`s and `exec`s it once. protocol/codec.py calls this lazily
and caches the result, so importing the package compiles nothing.

    decode(data: bytes, pos: int) -> (obj, new_pos)    raises DecodeError
    encode(obj) -> bytes                               raises EncodeError

Strings decode strictly (the fast path); the first malformed one hands the whole message to a
second decoder, compiled on first need, that replaces malformed UTF-8 as Kafka does
(protocol/utf8.py), so valid input never pays for the replacement rule.

`source(msg, version, "decode"|"encode")` returns the generated text for reading and debugging.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from .errors import DecodeError, EncodeError
from .ints import ZERO_UUID, read_uvarint, write_uvarint
from .schema import FIXED_FORMATS, ZERO, Field, Message
from .utf8 import ERRORS

_FIXED_WIDTH = {t: struct.calcsize(">" + f) for t, f in FIXED_FORMATS.items()}
_SCALAR_ZEROS: dict[str, Any] = {
    "int8": 0, "int16": 0, "uint16": 0, "int32": 0, "uint32": 0, "int64": 0, "float64": 0.0,
    "bool": False, "string": "", "bytes": b"", "records": None, "uuid": ZERO_UUID,
}


def _fail(msg: str) -> None:
    raise DecodeError(msg)


def _write_tagged(out: bytearray, tagged: list[tuple[int, bytearray]]) -> None:
    out += write_uvarint(len(tagged))
    for tag, raw in tagged:
        out += write_uvarint(tag)
        out += write_uvarint(len(raw))
        out += raw


def _skip_tagged(data: bytes, pos: int, count: int) -> int:
    """Skip `count` unknown tagged fields starting at `pos`."""
    end = len(data)
    for _ in range(count):
        _tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        pos += size
        if pos > end:
            raise DecodeError("tagged field runs past the end")
    return pos


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


class _Gen:
    def __init__(self, msg: Message, version: int, replace: bool = False) -> None:
        self.msg = msg
        self.version = version
        self.replace = replace  # decode strings with Kafka's replacement rule (the fallback)
        self.flex = msg.is_flexible(version)
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_DecodeError": DecodeError,
            "_EncodeError": EncodeError,
            "_struct_error": struct.error,
            "_fail": _fail,
            "_uv": read_uvarint,
            "_wuv": write_uvarint,
            "_skip_tagged": _skip_tagged,
            "_write_tagged": _write_tagged,
            "_UUID": uuid.UUID,
            "_unpack_from": struct.unpack_from,
            "_pack": struct.pack,
        }
        self._consts: dict[tuple[str, Any], str] = {}
        self._n = 0

    # -- helpers ------------------------------------------------------------------------------
    def emit(self, ind: int, line: str) -> None:
        self.lines.append(" " * ind + line)

    def tmp(self, prefix: str) -> str:
        self._n += 1
        return f"_{prefix}{self._n}"

    def const(self, kind: str, value: Any) -> str:
        key = (kind, value if kind not in ("cls", "dstruct") else id(value))
        name = self._consts.get(key)
        if name is None:
            name = f"_{kind}{len(self._consts)}"
            if kind == "unpack":
                self.ns[name] = struct.Struct(value).unpack_from
            elif kind == "pack":
                self.ns[name] = struct.Struct(value).pack
            elif kind == "dstruct":  # the default instance, compared against, never handed out
                self.ns[name] = value()
            else:
                self.ns[name] = value
            self._consts[key] = name
        return name

    def cls(self, c: type) -> str:
        return self.const("cls", c)

    def default_expr(self, f: Field) -> str:
        if f.is_array:
            return "None" if f.default is None else "[]"
        if f.struct is not None:
            return "None" if f.default is None else self.cls(f.struct.cls) + "()"
        value = _SCALAR_ZEROS[f.type] if f.default is ZERO else f.default
        if value is None or isinstance(value, (bool, int, float)):
            return repr(value)
        return self.const("d", value)

    def split(self, fields: tuple[Field, ...]) -> tuple[list[Field], list[Field]]:
        v = self.version
        present = [f for f in fields if f.present_in(v)]
        tagged = [f for f in present if self.flex and f.tagged_in(v)]
        regular = [f for f in present if not (self.flex and f.tagged_in(v))]
        tagged.sort(key=lambda f: f.tag)  # type: ignore[arg-type, return-value]
        return regular, tagged

    @staticmethod
    def runs(fields: list[Field]) -> list[list[Field]]:
        """Group consecutive fixed-width scalars into runs; other fields stand alone."""
        out: list[list[Field]] = []
        for f in fields:
            fixed = not f.is_array and f.struct is None and f.type in FIXED_FORMATS
            if fixed and out and out[-1][0].type in FIXED_FORMATS and not out[-1][0].is_array and out[-1][0].struct is None:
                out[-1].append(f)
            else:
                out.append([f])
        return out

    # -- decode -------------------------------------------------------------------------------
    def uvarint_into(self, ind: int, var: str) -> None:
        self.emit(ind, f"{var} = data[pos]")
        self.emit(ind, f"if {var} < 128:")
        self.emit(ind + 4, "pos += 1")
        self.emit(ind, "else:")
        self.emit(ind + 4, f"{var}, pos = _uv(data, pos)")

    def length_into(self, ind: int, var: str, width: str) -> None:
        """Read a length/count into `var`: uvarint-1 when flexible, else int16/int32."""
        if self.flex:
            self.uvarint_into(ind, var)
            self.emit(ind, f"{var} -= 1")
        else:
            fmt = ">h" if width == "h" else ">i"
            self.emit(ind, f"{var}, = {self.const('unpack', fmt)}(data, pos)")
            self.emit(ind, f"pos += {2 if width == 'h' else 4}")

    def dec_struct(self, fields: tuple[Field, ...], cls: type, target: str, ind: int) -> None:
        regular, tagged = self.split(fields)
        names: dict[str, str] = {}
        for run in self.runs(regular):
            f0 = run[0]
            if len(run) > 1 or (f0.type in FIXED_FORMATS and not f0.is_array and f0.struct is None):
                fmt = ">" + "".join(FIXED_FORMATS[f.type] for f in run)
                vars_ = [self.tmp(f.name + "_") for f in run]
                for f, var in zip(run, vars_, strict=True):
                    names[f.name] = var
                lhs = ", ".join(vars_) + ("," if len(run) == 1 else "")
                self.emit(ind, f"{lhs} = {self.const('unpack', fmt)}(data, pos)")
                self.emit(ind, f"pos += {struct.calcsize(fmt)}")
                for f, var in zip(run, vars_, strict=True):
                    if f.type == "uuid":
                        self.emit(ind, f"{var} = _UUID(bytes={var})")
            else:
                var = self.tmp(f0.name + "_")
                names[f0.name] = var
                self.dec_value(f0, var, ind)
        if self.flex:
            for f in tagged:
                var = self.tmp(f.name + "_")
                names[f.name] = var
                self.emit(ind, f"{var} = {self.default_expr(f)}")
            nt = self.tmp("nt")
            self.emit(ind, "if data[pos]:")  # usually 0: an empty tagged-field section
            i1 = ind + 4
            self.emit(i1, f"{nt}, pos = _uv(data, pos)")
            if tagged:
                self.emit(i1, f"for _ in range({nt}):")
                i2 = i1 + 4
                tag, size, te = self.tmp("tag"), self.tmp("sz"), self.tmp("te")
                self.emit(i2, f"{tag}, pos = _uv(data, pos)")
                self.emit(i2, f"{size}, pos = _uv(data, pos)")
                self.emit(i2, f"{te} = pos + {size}")
                self.emit(i2, f"if {te} > end:")
                self.emit(i2 + 4, "_fail('tagged field runs past the end')")
                for k, f in enumerate(tagged):
                    self.emit(i2, f"{'if' if k == 0 else 'elif'} {tag} == {f.tag}:")
                    self.dec_value(f, names[f.name], i2 + 4)
                    self.emit(i2 + 4, f"if pos != {te}:")
                    self.emit(i2 + 8, f"_fail('tagged field {f.name} has the wrong size')")
                self.emit(i2, f"pos = {te}")
            else:
                self.emit(i1, f"pos = _skip_tagged(data, pos, {nt})")
            self.emit(ind, "else:")
            self.emit(ind + 4, "pos += 1")
        # cls's field order is the schema's field order
        args = [names.get(f.name) or self.default_expr(f) for f in fields]
        self.emit(ind, f"{target} = {self.cls(cls)}({', '.join(args)})")

    def dec_value(self, f: Field, target: str, ind: int) -> None:
        nullable = f.nullable_in(self.version)
        t = f.element_type
        if f.is_array:
            n = self.tmp("n")
            self.length_into(ind, n, "i")
            self.emit(ind, f"if {n} < 0:")
            if nullable:
                self.emit(ind + 4, f"if {n} != -1:")
                self.emit(ind + 8, f"_fail('invalid array length %d' % {n})")
                self.emit(ind + 4, f"{target} = None")
            else:
                self.emit(ind + 4, f"_fail('invalid array length %d for {f.name}' % {n})")
            self.emit(ind, "else:")
            i2 = ind + 4
            if f.struct is None and t in FIXED_FORMATS and t != "uuid":
                w = _FIXED_WIDTH[t]
                self.emit(i2, f"if {n} * {w} > end - pos:")
                self.emit(i2 + 4, f"_fail('array count %d for {f.name} runs past the end' % {n})")
                fc = FIXED_FORMATS[t]
                self.emit(i2, f"{target} = list(_unpack_from('>%d{fc}' % {n}, data, pos))")
                self.emit(i2, f"pos += {n} * {w}")
                return
            self.emit(i2, f"if {n} > end - pos:")
            self.emit(i2 + 4, f"_fail('array count %d for {f.name} runs past the end' % {n})")
            self.emit(i2, f"{target} = []")
            app = self.tmp("append")
            self.emit(i2, f"{app} = {target}.append")
            self.emit(i2, f"for _ in range({n}):")
            elem = self.tmp("e")
            if f.struct is not None:
                self.dec_struct(f.struct.fields, f.struct.cls, elem, i2 + 4)
            else:
                self.dec_scalar(t, False, elem, i2 + 4, f.name)
            self.emit(i2 + 4, f"{app}({elem})")
            return
        if f.struct is not None:
            if nullable:
                m = self.tmp("m")
                self.emit(ind, f"{m} = data[pos]")
                self.emit(ind, "pos += 1")
                self.emit(ind, f"if {m} >= 128:")
                self.emit(ind + 4, f"{target} = None")
                self.emit(ind, "else:")
                self.dec_struct(f.struct.fields, f.struct.cls, target, ind + 4)
            else:
                self.dec_struct(f.struct.fields, f.struct.cls, target, ind)
            return
        self.dec_scalar(t, nullable, target, ind, f.name)

    def dec_scalar(self, t: str, nullable: bool, target: str, ind: int, what: str) -> None:
        if t in FIXED_FORMATS:
            fmt = ">" + FIXED_FORMATS[t]
            self.emit(ind, f"{target}, = {self.const('unpack', fmt)}(data, pos)")
            self.emit(ind, f"pos += {_FIXED_WIDTH[t]}")
            if t == "uuid":
                self.emit(ind, f"{target} = _UUID(bytes={target})")
            return
        n, e = self.tmp("n"), self.tmp("end")
        self.length_into(ind, n, "h" if t == "string" else "i")
        utf8 = f"'utf-8', {ERRORS!r}" if self.replace else ""
        get = f"data[pos:{e}].decode({utf8})" if t == "string" else f"data[pos:{e}]"
        nullable = nullable or t == "records"
        if nullable:
            self.emit(ind, f"if {n} >= 0:")
            i2 = ind + 4
        else:
            self.emit(ind, f"if {n} < 0:")
            self.emit(ind + 4, f"_fail('invalid length %d for {what}' % {n})")
            i2 = ind
        self.emit(i2, f"{e} = pos + {n}")
        self.emit(i2, f"if {e} > end:")
        self.emit(i2 + 4, f"_fail('{what} runs past the end')")
        self.emit(i2, f"{target} = {get}")
        self.emit(i2, f"pos = {e}")
        if nullable:
            self.emit(ind, f"elif {n} == -1:")
            self.emit(ind + 4, f"{target} = None")
            self.emit(ind, "else:")
            self.emit(ind + 4, f"_fail('invalid length %d for {what}' % {n})")

    def decoder_source(self) -> str:
        m = self.msg
        self.emit(0, "def decode(data, pos):")
        self.emit(4, "start = pos")
        self.emit(4, "end = len(data)")
        self.emit(4, "try:")
        self.dec_struct(m.fields, m.cls, "obj", 8)
        self.emit(4, "except (_struct_error, IndexError) as exc:")
        self.emit(8, f"raise _DecodeError('truncated {m.name} v{self.version}: %s' % exc) from None")
        if not self.replace:
            self.emit(4, "except UnicodeDecodeError:")  # malformed UTF-8: decode again, replacing
            self.emit(8, "return _fallback(data, start)")
            self.ns["_fallback"] = _Fallback(m, self.version)
        self.emit(4, "return obj, pos")
        return "\n".join(self.lines) + "\n"

    # -- encode -------------------------------------------------------------------------------
    def uvarint_out(self, ind: int, out: str, expr: str) -> None:
        var = self.tmp("u")
        self.emit(ind, f"{var} = {expr}")
        self.emit(ind, f"if {var} < 128:")
        self.emit(ind + 4, f"{out}.append({var})")
        self.emit(ind, "else:")
        self.emit(ind + 4, f"{out} += _wuv({var})")

    def length_out(self, ind: int, out: str, expr: str, width: str) -> None:
        if self.flex:
            self.uvarint_out(ind, out, f"{expr} + 1")
        else:
            self.emit(ind, f"{out} += {self.const('pack', '>h' if width == 'h' else '>i')}({expr})")

    def null_out(self, ind: int, out: str, width: str) -> None:
        if self.flex:
            self.emit(ind, f"{out}.append(0)")
        else:
            marker = b"\xff\xff" if width == "h" else b"\xff\xff\xff\xff"
            self.emit(ind, f"{out} += {marker!r}")

    def enc_struct(self, fields: tuple[Field, ...], src: str, out: str, ind: int) -> None:
        regular, tagged = self.split(fields)
        for run in self.runs(regular):
            f0 = run[0]
            if len(run) > 1 or (f0.type in FIXED_FORMATS and not f0.is_array and f0.struct is None):
                fmt = ">" + "".join(FIXED_FORMATS[f.type] for f in run)
                args = [f"{src}.{f.name}.bytes" if f.type == "uuid" else f"{src}.{f.name}" for f in run]
                self.emit(ind, f"{out} += {self.const('pack', fmt)}({', '.join(args)})")
            else:
                self.enc_value(f0, f"{src}.{f0.name}", out, ind)
        if not self.flex:
            return
        if not tagged:
            self.emit(ind, f"{out}.append(0)")
            return
        tg = self.tmp("tg")
        self.emit(ind, f"{tg} = []")
        for f in tagged:
            var = self.tmp("t")
            self.emit(ind, f"{var} = {src}.{f.name}")
            self.emit(ind, f"if {self.differs(f, var)}:")
            tb = self.tmp("tb")
            self.emit(ind + 4, f"{tb} = bytearray()")
            self.enc_value(f, var, tb, ind + 4)
            self.emit(ind + 4, f"{tg}.append(({f.tag}, {tb}))")
        self.emit(ind, f"if {tg}:")
        self.emit(ind + 4, f"_write_tagged({out}, {tg})")
        self.emit(ind, "else:")
        self.emit(ind + 4, f"{out}.append(0)")

    def differs(self, f: Field, var: str) -> str:
        """Expression: `var` is not the field's default (tagged fields are omitted when default)."""
        if f.is_array:
            return f"{var} is not None" if f.default is None else var
        if f.struct is not None:
            if f.default is None:
                return f"{var} is not None"
            inner = f.struct.fields
            if all(not g.is_array and g.struct is None for g in inner):
                # compare field by field: much cheaper than dataclass __eq__ (it builds tuples)
                return "(" + " or ".join(self.differs(g, f"{var}.{g.name}") for g in inner) + ")"
            return f"{var} != {self.const('dstruct', f.struct.cls)}"
        value = _SCALAR_ZEROS[f.type] if f.default is ZERO else f.default
        if value is None:
            return f"{var} is not None"
        if isinstance(value, (bool, int, float)):
            return f"{var} != {value!r}"
        return f"{var} != {self.const('d', value)}"

    def enc_value(self, f: Field, expr: str, out: str, ind: int) -> None:
        nullable = f.nullable_in(self.version)
        t = f.element_type
        if f.is_array:
            items = self.tmp("items")
            self.emit(ind, f"{items} = {expr}")
            i2 = ind
            if nullable:
                self.emit(ind, f"if {items} is None:")
                self.null_out(ind + 4, out, "i")
                self.emit(ind, "else:")
                i2 = ind + 4
            self.length_out(i2, out, f"len({items})", "i")
            if f.struct is None and t in FIXED_FORMATS and t != "uuid":
                self.emit(i2, f"{out} += _pack('>%d{FIXED_FORMATS[t]}' % len({items}), *{items})")
                return
            it = self.tmp("it")
            self.emit(i2, f"for {it} in {items}:")
            if f.struct is not None:
                self.enc_struct(f.struct.fields, it, out, i2 + 4)
            else:
                self.enc_scalar(t, False, it, out, i2 + 4)
            return
        if f.struct is not None:
            if nullable:
                var = self.tmp("s")
                self.emit(ind, f"{var} = {expr}")
                self.emit(ind, f"if {var} is None:")
                self.emit(ind + 4, f"{out}.append(255)")
                self.emit(ind, "else:")
                self.emit(ind + 4, f"{out}.append(1)")
                self.enc_struct(f.struct.fields, var, out, ind + 4)
            else:
                self.enc_struct(f.struct.fields, expr, out, ind)
            return
        self.enc_scalar(t, nullable, expr, out, ind)

    def enc_scalar(self, t: str, nullable: bool, expr: str, out: str, ind: int) -> None:
        if t in FIXED_FORMATS:
            arg = f"{expr}.bytes" if t == "uuid" else expr
            self.emit(ind, f"{out} += {self.const('pack', '>' + FIXED_FORMATS[t])}({arg})")
            return
        width = "h" if t == "string" else "i"
        var = self.tmp("v")
        self.emit(ind, f"{var} = {expr}")
        i2 = ind
        if nullable or t == "records":
            self.emit(ind, f"if {var} is None:")
            self.null_out(ind + 4, out, width)
            self.emit(ind, "else:")
            i2 = ind + 4
        if t == "string":
            self.emit(i2, f"{var} = {var}.encode()")
        self.length_out(i2, out, f"len({var})", width)
        self.emit(i2, f"{out} += {var}")

    def encoder_source(self) -> str:
        m = self.msg
        self.emit(0, "def encode(obj):")
        self.emit(4, "out = bytearray()")
        self.emit(4, "try:")
        self.emit(8, "pass")
        self.enc_struct(m.fields, "obj", "out", 8)
        self.emit(4, "except (_struct_error, TypeError, AttributeError, OverflowError, UnicodeEncodeError) as exc:")
        self.emit(8, f"raise _EncodeError('cannot encode {m.name} v{self.version}: %r' % (exc,)) from exc")
        self.emit(4, "return bytes(out)")
        return "\n".join(self.lines) + "\n"


def source(msg: Message, version: int, op: str, *, replace: bool = False) -> str:
    gen = _Gen(msg, version, replace)
    return gen.decoder_source() if op == "decode" else gen.encoder_source()


def build(msg: Message, version: int, op: str, *, replace: bool = False) -> Any:
    """Compile the decode or encode function for `msg` at `version`; `replace=True` builds the
    decoder that replaces malformed UTF-8 (the strict one falls back to it by itself)."""
    gen = _Gen(msg, version, replace)
    src = gen.decoder_source() if op == "decode" else gen.encoder_source()
    code = compile(src, f"<protocol {op} {msg.name} v{version}>", "exec")
    exec(code, gen.ns)  # noqa: S102  (source generated here from the schema tables, never from input)
    fn = gen.ns[op]
    fn.__qualname__ = fn.__name__ = f"{op}_{msg.name}_v{version}{'_replacing' if replace else ''}"
    fn.source = src
    return fn
