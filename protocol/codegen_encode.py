"""Generate the encoder of one (Message, version): straight-line Python, compiled once.

    encode(obj) -> bytes                               raises EncodeError

The output is a list of parts joined once (`b"".join`), which is about twice as fast as
appending to a bytearray for the small messages a coordinator sends. Decided at generation time:
- a run of fixed-width fields is one precompiled `struct` pack that also writes what follows:
  a classic length or count, or the empty tagged-field section of a flexible struct (a pad
  byte), so HeartbeatResponse v4 is a single `pack` call;
- parts are collected as expressions and written with one list literal or `extend` per
  straight-line stretch; null is normalised up front (None -> empty, length -1 or compact 0),
  so nullable fields need no branch at the point they are written;
- an array is a loop that extends the parts once per element (for the few elements of a
  coordinator's arrays this beats a comprehension, a function call in 3.11, and its join).
"""

from __future__ import annotations

from .codegen_base import SCALAR_ZEROS, GenBase, is_fixed
from .schema import FIXED_FORMATS, ZERO, Field


class Parts:
    """Part expressions waiting to be written to the list `out`; fixed-width values wait in
    `fixed` so that the next length prefix (or pad) joins their pack."""

    def __init__(self, gen: EncodeGen, out: str, created: bool) -> None:
        self.gen = gen
        self.out = out
        self.created = created
        self.exprs: list[str] = []
        self.fixed: list[tuple[str, str | None]] = []  # (format, argument; None for a pad)

    def add_fixed(self, fmt: str, arg: str | None) -> None:
        self.fixed.append((fmt, arg))

    def add(self, expr: str) -> None:
        self.close_fixed()
        self.exprs.append(expr)

    def close_fixed(self) -> None:
        if not self.fixed:
            return
        args = [a for _, a in self.fixed if a is not None]
        if not args:  # only the pad bytes of empty tagged sections
            self.exprs.append(self.gen.const("d", b"\x00" * len(self.fixed)))
        else:
            fmt = ">" + "".join(f for f, _ in self.fixed)
            self.exprs.append(f"{self.gen.const('pack', fmt)}({', '.join(args)})")
        self.fixed = []

    def flush(self, ind: int) -> None:
        """Write what is waiting (the list is created by its first flush)."""
        self.close_fixed()
        if not self.exprs:
            return
        if not self.created:
            self.gen.emit(ind, f"{self.out} = [{', '.join(self.exprs)}]")
            self.created = True
        elif len(self.exprs) == 1:
            self.gen.emit(ind, f"{self.out}.append({self.exprs[0]})")
        else:
            self.gen.emit(ind, f"{self.out}.extend(({', '.join(self.exprs)}))")
        self.exprs = []

    def flush_for_branch(self, ind: int) -> None:
        """Flush and make sure the list exists: code in a loop or branch appends to it."""
        self.flush(ind)
        if not self.created:
            self.gen.emit(ind, f"{self.out} = []")
            self.created = True


class EncodeGen(GenBase):
    def source(self) -> str:
        m = self.msg
        self.emit(0, "def encode(obj):")
        self.emit(4, "try:")
        parts = Parts(self, "parts", created=False)
        self.struct_fields(m.fields, "obj", parts, 8)
        parts.close_fixed()
        if not parts.created and not parts.exprs:
            self.emit(8, "return b''")  # an empty body (ApiVersionsRequest v0-2)
        elif not parts.created and len(parts.exprs) == 1 and parts.exprs[0].startswith("_pack"):
            self.emit(8, f"return {parts.exprs[0]}")  # one pack call is bytes already (any other
            # single part may be a caller's bytearray or memoryview: it goes through the join)
        elif not parts.created:
            self.emit(8, f"return b''.join(({', '.join(parts.exprs)},))")
        else:
            parts.flush(8)
            self.emit(8, "return b''.join(parts)")
        errors = "_struct_error, TypeError, AttributeError, OverflowError, ValueError"
        self.emit(4, f"except ({errors}) as exc:")
        self.emit(8, f"raise _EncodeError('cannot encode {m.name} v{self.version}: %r' % (exc,)) from exc")
        return "\n".join(self.lines) + "\n"

    # -- structs ------------------------------------------------------------------------------
    def struct_fields(self, fields: tuple[Field, ...], src: str, parts: Parts, ind: int) -> None:
        regular, tagged = self.split(fields)
        for f in regular:
            self.value(f, f"{src}.{f.name}", parts, ind)
        if not self.flex:
            return
        if not tagged:
            parts.add_fixed("x", None)  # an empty tagged-field section: one zero byte
            return
        # Tagged fields are written only when they differ from their default, which they seldom
        # do: one test for all of them, and the usual section is the constant zero byte.
        tvars = [(f, self.tmp("t")) for f in tagged]
        for f, var in tvars:
            self.emit(ind, f"{var} = {src}.{f.name}")
        section, tg = self.tmp("ts"), self.tmp("tg")
        self.emit(ind, f"if {' or '.join(self.differs(f, var) for f, var in tvars)}:")
        i1 = ind + 4
        self.emit(i1, f"{tg} = []")
        for f, var in tvars:
            self.emit(i1, f"if {self.differs(f, var)}:")
            raw = self.tmp("tb")
            sub = Parts(self, raw, created=False)
            self.value(f, var, sub, i1 + 4)
            sub.flush(i1 + 4)
            if not sub.created:
                self.emit(i1 + 4, f"{raw} = []")
            self.emit(i1 + 4, f"{tg}.append(({f.tag}, b''.join({raw})))")
        self.emit(i1, f"{section} = _tagged_section({tg})")
        self.emit(ind, "else:")
        self.emit(ind + 4, f"{section} = {self.const('d', bytes(1))}")
        parts.add(section)

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
        value = SCALAR_ZEROS[f.type] if f.default is ZERO else f.default
        if value is None:
            return f"{var} is not None"
        if isinstance(value, (bool, int, float)):
            return f"{var} != {value!r}"
        return f"{var} != {self.const('d', value)}"

    # -- values -------------------------------------------------------------------------------
    def length(self, parts: Parts, n: str, classic_fmt: str, ind: int) -> None:
        """A length or count `n` (an expression; -1 for null): classic int16/int32, or a compact
        uvarint n+1."""
        if self.flex:
            u = self.tmp("u")
            self.emit(ind, f"{u} = {n} + 1")
            parts.add(f"(_B[{u}] if {u} < 128 else _wuv({u}))")
        else:
            parts.add_fixed(classic_fmt, n)

    def value(self, f: Field, expr: str, parts: Parts, ind: int) -> None:
        nullable = f.nullable_in(self.version)
        t = f.element_type
        if is_fixed(f):
            parts.add_fixed(FIXED_FORMATS[t], f"{expr}.bytes" if t == "uuid" else expr)
        elif f.is_array:
            self.array(f, expr, nullable, parts, ind)
        elif f.struct is not None:
            var = self.tmp("s")
            self.emit(ind, f"{var} = {expr}")
            if not nullable:
                self.struct_fields(f.struct.fields, var, parts, ind)
                return
            parts.flush_for_branch(ind)
            self.emit(ind, f"if {var} is None:")
            self.emit(ind + 4, f"{parts.out}.append(b'\\xff')")
            self.emit(ind, "else:")
            inner = Parts(self, parts.out, created=True)
            inner.add_fixed("b", "1")
            self.struct_fields(f.struct.fields, var, inner, ind + 4)
            inner.flush(ind + 4)
        else:
            self.sized(t, nullable or t == "records", expr, parts, ind)

    def sized(self, t: str, nullable: bool, expr: str, parts: Parts, ind: int) -> None:
        """A string or bytes value: its length (null normalised to -1 and no bytes), then it."""
        v, n = self.tmp("v"), self.tmp("n")
        enc = ".encode()" if t == "string" else ""
        if nullable:
            self.emit(ind, f"{v} = {expr}")
            self.emit(ind, f"if {v} is None:")
            self.emit(ind + 4, f"{n} = -1")
            self.emit(ind + 4, f"{v} = b''")
            self.emit(ind, "else:")
            if enc:
                self.emit(ind + 4, f"{v} = {v}{enc}")
            self.emit(ind + 4, f"{n} = len({v})")
        else:
            self.emit(ind, f"{v} = {expr}{enc}")
            n = f"len({v})"
        self.length(parts, n, "h" if t == "string" else "i", ind)
        parts.add(v)

    def array(self, f: Field, expr: str, nullable: bool, parts: Parts, ind: int) -> None:
        items, n = self.tmp("items"), self.tmp("n")
        self.emit(ind, f"{items} = {expr}")
        if nullable:
            self.emit(ind, f"if {items} is None:")
            self.emit(ind + 4, f"{n} = -1")
            self.emit(ind + 4, f"{items} = ()")
            self.emit(ind, "else:")
            self.emit(ind + 4, f"{n} = len({items})")
        else:
            n = f"len({items})"
        self.length(parts, n, "i", ind)
        t = f.element_type
        if f.struct is None and t in FIXED_FORMATS:
            if t == "uuid":
                parts.add(f"b''.join([_x.bytes for _x in {items}])")
            else:
                parts.add(f"_pack('>%d{FIXED_FORMATS[t]}' % len({items}), *{items})")
            return
        # a plain loop: for the few elements of a coordinator's arrays it beats a comprehension
        # (a function call in 3.11) and b"".join of its list
        it = self.tmp("it")
        parts.flush_for_branch(ind)
        self.emit(ind, f"for {it} in {items}:")
        elem = Parts(self, parts.out, created=True)
        if f.struct is not None:
            self.struct_fields(f.struct.fields, it, elem, ind + 4)
        else:
            self.sized(t, False, it, elem, ind + 4)
        elem.flush(ind + 4)
