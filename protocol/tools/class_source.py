"""The Python source of the generated message classes (generate_messages.py writes the
modules): a dataclass per struct whose __init__ is written out as 3.11's @dataclass would make it,
its __repr__ and __eq__ inherited from protocol.messages.Generated, so that importing a message
module compiles nothing; and the import block a module needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# One object of Kafka's message JSON (a message, a field, a struct).
Json = dict[str, Any]
# A dataclass attribute: (name, type hint, default source, about).
Attr = tuple[str, str, str, str]


@dataclass
class StructDef:
    name: str  # Python class name
    fields: list[Json]
    attrs: list[Attr] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)  # the messages it is part of (its docstring)


def dataclass_source(sd: StructDef, doc: str) -> list[str]:
    """The class of `sd`: a dataclass whose __init__ is written here, as @dataclass would make it,
    instead of by @dataclass when the module is imported (in 3.11 it compiles each method apart:
    ~0.3 ms per class, most of what importing the messages cost); __repr__ and __eq__ come from
    `Generated`. The fields, and so dataclasses.fields/replace/asdict, are @dataclass's as before."""
    lines = ["", "", "@dataclass(slots=True, init=False, repr=False, eq=False)", f"class {sd.name}(Generated):"]
    # a docstring of its own: without one, @dataclass computes one with inspect.signature
    lines.append(f'    """{doc or sd.name + " of " + " and ".join(sd.owners) + "."}"""')
    lines.append("")
    for name, hint, default, about in sd.attrs:
        if about:
            lines.append(f"    # {about}")
        lines.append(f"    {name}: {hint} = {_factory_call(default) or default}")
    return lines + _init(sd)


def _factory_call(default: str) -> str | None:
    """`field(default_factory=...)` for a default built per object (a list, a struct), else None."""
    if default == "[]":
        return "field(default_factory=list)"
    if default.endswith("()"):
        return f"field(default_factory={default[:-2]})"
    return None


def _init(sd: StructDef) -> list[str]:
    """__init__ with the behaviour of 3.11's @dataclass: positional or keyword arguments in field
    order, a fresh list or struct per object where the default is built (FACTORY marks the
    argument left out)."""
    params = ["self"]
    body: list[str] = []
    for name, hint, default, _ in sd.attrs:
        if _factory_call(default) is None:
            params.append(f"{name}: {hint} = {default}")
            body.append(f"        self.{name} = {name}")
        else:
            params.append(f"{name}: {hint} = FACTORY")
            body.append(f"        self.{name} = {default} if {name} is FACTORY else {name}")
    return ["", f"    def __init__({', '.join(params)}) -> None:", *(body or ["        pass"])]


def import_lines(body: str) -> list[str]:
    """The import block for a generated module: only what `body` uses (ruff- and mypy-clean)."""
    lines = ["import uuid"] if "uuid.UUID" in body else []
    lines.append("from dataclasses import dataclass" + (", field" if "field(" in body else ""))
    lines.append("")
    lines.append("from . import FACTORY, Generated" if "FACTORY" in body else "from . import Generated")
    if "ZERO_UUID" in body:
        lines.append("from ..ints import ZERO_UUID")
    lines.append("from ..schema import Field as F")
    lines.append("from ..schema import Message, Struct" if "Struct(" in body else "from ..schema import Message")
    return lines
