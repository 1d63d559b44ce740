"""Populated sample objects and hypothesis strategies derived from the schema tables.

`sample(msg, version, seed)` fills EVERY field present in `version` with a non-default value
(arrays get elements, nullable fields get values, tagged fields differ from their defaults), so
a round trip or a byte comparison exercises the whole layout; `nulls=True` sets every field that
is nullable in that version to None instead; `big=True` uses long strings/bytes so compact
lengths need multi-byte uvarints.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from hypothesis import strategies as st

from protocol.api import CODEC_VERSIONS
from protocol.codec import message_schema
from protocol.schema import ZERO, Field, Message

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def all_codecs() -> list[tuple[int, int, bool]]:
    """(api_key, version, is_response) for every codec."""
    return [
        (int(k), v, resp) for k, (lo, hi) in CODEC_VERSIONS.items() for v in range(lo, hi + 1) for resp in (False, True)
    ]


def codec_id(case: tuple[int, int, bool]) -> str:
    k, v, resp = case
    return f"{message_schema(k, resp).name}-v{v}"


def _default(f: Field) -> Any:
    if f.default is ZERO:
        return {
            "bool": False,
            "string": "",
            "bytes": b"",
            "records": None,
            "uuid": uuid.UUID(int=0),
            "float64": 0.0,
        }.get(f.type, 0)
    return f.default


def _scalar(t: str, rng: random.Random, avoid: Any, big: bool) -> Any:
    while True:
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]
            small = rng.randint(max(lo, -300), min(hi, 300))
            v: Any = rng.choice([lo, hi, rng.randint(lo, hi), small])
        elif t == "bool":
            v = not avoid if isinstance(avoid, bool) else True
        elif t == "float64":
            v = rng.uniform(-1e9, 1e9)
        elif t == "string":
            n = rng.randint(130, 300) if big else rng.randint(1, 12)
            v = "".join(rng.choice("abcXYZ-._019éü€😀") for _ in range(n))
        elif t in ("bytes", "records"):
            n = rng.randint(130, 300) if big else rng.randint(1, 12)
            v = bytes(rng.getrandbits(8) for _ in range(n))
        elif t == "uuid":
            v = uuid.UUID(int=rng.getrandbits(128) or 1)
        else:
            raise AssertionError(t)
        if v != avoid:
            return v


def sample_struct(
    fields: tuple[Field, ...], cls: type, version: int, rng: random.Random, nulls: bool, big: bool
) -> Any:
    kwargs = {}
    for f in fields:
        if f.present_in(version):
            kwargs[f.name] = sample_value(f, version, rng, nulls, big)
    return cls(**kwargs)


def sample_value(f: Field, version: int, rng: random.Random, nulls: bool, big: bool) -> Any:
    if nulls and f.nullable_in(version):
        return None
    if f.is_array:
        n = rng.randint(1, 3)
        if f.struct is not None:
            return [sample_struct(f.struct.fields, f.struct.cls, version, rng, nulls, big) for _ in range(n)]
        return [_scalar(f.element_type, rng, None, big) for _ in range(n)]
    if f.struct is not None:
        return sample_struct(f.struct.fields, f.struct.cls, version, rng, nulls, big)
    return _scalar(f.type, rng, _default(f), big)


def sample(msg: Message, version: int, seed: int = 0, nulls: bool = False, big: bool = False) -> Any:
    return sample_struct(msg.fields, msg.cls, version, random.Random(seed), nulls, big)


# --- hypothesis ------------------------------------------------------------------------------


def _scalar_strategy(t: str) -> st.SearchStrategy:
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        return st.integers(lo, hi)
    return {
        "bool": st.booleans(),
        "float64": st.floats(allow_nan=False),
        "string": st.text(max_size=20) | st.text(min_size=127, max_size=140),
        "bytes": st.binary(max_size=20) | st.binary(min_size=127, max_size=140),
        "records": st.none() | st.binary(max_size=40),
        "uuid": st.uuids() | st.just(uuid.UUID(int=0)),
    }[t]


def _value_strategy(f: Field, version: int) -> st.SearchStrategy:
    if f.is_array:
        if f.struct is not None:
            elem = struct_strategy(f.struct.fields, f.struct.cls, version)
        else:
            elem = _scalar_strategy(f.element_type)
        s = st.lists(elem, max_size=3)
    elif f.struct is not None:
        s = struct_strategy(f.struct.fields, f.struct.cls, version)
    else:
        s = _scalar_strategy(f.type)
    if f.nullable_in(version) and f.type != "records":
        s = st.none() | s
    return s


def struct_strategy(fields: tuple[Field, ...], cls: type, version: int) -> st.SearchStrategy:
    return st.builds(cls, **{f.name: _value_strategy(f, version) for f in fields if f.present_in(version)})


def message_strategy(msg: Message, version: int) -> st.SearchStrategy:
    return struct_strategy(msg.fields, msg.cls, version)
