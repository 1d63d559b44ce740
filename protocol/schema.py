"""Schema tables: what a message looks like in every version.

The modules in protocol/messages/ declare each request and response as a `Message` holding a
tuple of `Field`s; nested structs are `Struct`s with their own fields. Field names are the Python
attribute names (snake_case of Kafka's JSON names, which are kept in `kafka_name`); types, version
ranges, nullable versions, tags and defaults are Kafka's, so a table reads like the JSON it came
from. `protocol/codegen.py` turns a (Message, version) into specialised decode/encode functions.

Version strings use Kafka's syntax: "3+", "0-7", "5", "none".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_VERSION = 0x7FFF

# Fixed-width types and their struct format characters.
FIXED_FORMATS: dict[str, str] = {
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "bool": "?",
    "uuid": "16s",
}
VARIABLE_TYPES = frozenset({"string", "bytes", "records"})
PRIMITIVE_TYPES = frozenset(FIXED_FORMATS) | VARIABLE_TYPES


def parse_versions(spec: str | None) -> tuple[int, int] | None:
    """ "3+" -> (3, MAX_VERSION); "0-7" -> (0, 7); "5" -> (5, 5); "none"/None -> None."""
    if spec is None or spec == "none":
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), MAX_VERSION
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


def in_versions(spec: str | None, version: int) -> bool:
    rng = parse_versions(spec)
    return rng is not None and rng[0] <= version <= rng[1]


class _Required:
    """Marker default: the type's zero value (0, "", b"", False, [], zero UUID, a default struct)."""

    def __repr__(self) -> str:
        return "REQUIRED"


ZERO = _Required()


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: str  # Kafka type: "int32", "string", "bytes", "records", "uuid", "[]int32", "[]Name", "Name"
    versions: str
    nullable: str | None = None  # nullableVersions
    default: Any = ZERO  # Python value of Kafka's "default" (None for "null")
    tag: int | None = None
    tagged: str | None = None  # taggedVersions
    struct: Struct | None = None  # for "Name" and "[]Name"
    kafka_name: str = ""

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.struct is not None

    def present_in(self, version: int) -> bool:
        return in_versions(self.versions, version)

    def nullable_in(self, version: int) -> bool:
        return in_versions(self.nullable, version)

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and in_versions(self.tagged, version)


@dataclass(frozen=True, slots=True)
class Struct:
    cls: type
    fields: tuple[Field, ...]

    @property
    def name(self) -> str:
        return self.cls.__name__


@dataclass(frozen=True, slots=True)
class Message:
    cls: type
    api_key: int
    kind: str  # "request" or "response"
    valid: str  # validVersions
    flexible: str  # flexibleVersions
    fields: tuple[Field, ...]

    @property
    def name(self) -> str:
        return self.cls.__name__

    @property
    def versions(self) -> tuple[int, int]:
        rng = parse_versions(self.valid)
        assert rng is not None
        return rng

    def is_flexible(self, version: int) -> bool:
        return in_versions(self.flexible, version)
