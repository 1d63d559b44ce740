"""The generated codec modules (protocol/codecs/): committed source matches the generators, it
gives the same bytes and objects as the exec'd functions of the same generators, and its
compiled copies (`make native`, protocol/native.py) give the same as the source, malformed input
included."""

from __future__ import annotations

import pytest

from protocol import codegen, codegen_module, native
from protocol.api import MODULE_NAMES, ApiKey
from protocol.codec import message_schema
from protocol.errors import DecodeError

from .protocol_samples import all_codecs, codec_id, sample

CASES = [c for c in all_codecs() if MODULE_NAMES[ApiKey(c[0])] in codegen_module.CODEC_MODULES]
COMPILED = {name: native.compiled_codec(name) for name in codegen_module.CODEC_MODULES}
BUILT = all(m is not None for m in COMPILED.values())


def _functions(module: object, key: int, version: int, resp: bool) -> tuple[object, object]:
    kind = "RESPONSE" if resp else "REQUEST"
    return getattr(module, f"DECODE_{kind}")[version], getattr(module, f"ENCODE_{kind}")[version]


def _source_module(key: int) -> object:
    import importlib

    return importlib.import_module(f"protocol.codecs.{MODULE_NAMES[ApiKey(key)]}")


def test_committed_modules_match_the_generators() -> None:
    assert codegen_module.write_all(check=True) == [], "run: python -m protocol.codegen_module"


@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_module_equals_the_execd_functions(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    decode, encode = _functions(_source_module(key), key, version, resp)
    exec_decode, exec_encode = codegen.build(msg, version, "decode"), codegen.build(msg, version, "encode")
    for seed, nulls in ((0, False), (1, True)):
        obj = sample(msg, version, seed, nulls=nulls)
        data = encode(obj)  # type: ignore[operator]
        assert data == exec_encode(obj)
        assert decode(data, 0) == exec_decode(data, 0)  # type: ignore[operator]


@pytest.mark.skipif(not BUILT, reason="codecs not compiled (scripts/build_native.py --only codecs)")
@pytest.mark.parametrize("case", CASES, ids=codec_id)
def test_compiled_module_equals_the_source(case: tuple[int, int, bool]) -> None:
    key, version, resp = case
    msg = message_schema(key, resp)
    pure = _functions(_source_module(key), key, version, resp)
    compiled = _functions(COMPILED[MODULE_NAMES[ApiKey(key)]], key, version, resp)
    for seed, nulls, big in ((0, False, False), (1, True, False), (2, False, True)):
        obj = sample(msg, version, seed, nulls=nulls, big=big)
        data = pure[1](obj)  # type: ignore[operator]
        assert compiled[1](obj) == data  # type: ignore[operator]
        assert compiled[0](b"\x99" + data, 1) == pure[0](b"\x99" + data, 1)  # type: ignore[operator]
        for cut in range(0, len(data), max(1, len(data) // 16)):  # truncated: the same error
            errors = []
            for decode, _ in (pure, compiled):
                with pytest.raises(DecodeError) as exc:
                    obj, pos = decode(data[:cut], 0)  # type: ignore[operator]
                    if pos > cut:
                        raise AssertionError("read past the end")
                    raise DecodeError("short")  # a prefix that decodes: caught by codec's length check
                errors.append(str(exc.value))
            assert errors[0] == errors[1]


def test_a_compiled_copy_runs_only_when_built_from_this_source(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    stale = types.SimpleNamespace(SOURCE_SHA256="0" * 64, __file__="stale.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: stale)
    assert native.compiled_codec("heartbeat") is None
    fresh = types.SimpleNamespace(SOURCE_SHA256=native.source_digest("heartbeat"), __file__="fresh.so")
    monkeypatch.setattr(native.importlib, "import_module", lambda name: fresh)
    assert native.compiled_codec("heartbeat") is fresh
