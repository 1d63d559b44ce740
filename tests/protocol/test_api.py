"""The version tables: advertised ⊆ decodable, and the literal tables agree with the schemas."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import api
from protocol.api import CODEC_VERSIONS, FIRST_FLEXIBLE_VERSION, MODULE_NAMES, SUPPORTED_VERSIONS, ApiKey, is_flexible
from protocol.codec import message_schema, request_type, response_type
from protocol.schema import parse_versions

ROOT = Path(__file__).resolve().parents[2]


def test_every_api_key_has_a_codec_range_and_module() -> None:
    assert set(CODEC_VERSIONS) == set(ApiKey) == set(MODULE_NAMES)
    assert set(SUPPORTED_VERSIONS) <= set(ApiKey)


@pytest.mark.parametrize("key", list(SUPPORTED_VERSIONS), ids=lambda k: k.name)
def test_advertised_versions_are_decodable(key: ApiKey) -> None:
    lo, hi = SUPPORTED_VERSIONS[key]
    clo, chi = CODEC_VERSIONS[key]
    assert lo <= hi
    assert hi <= chi
    if key == ApiKey.PRODUCE:
        # KAFKA-18659: Produce is advertised from v0 for old librdkafka; v0-2 are rejected.
        assert lo == 0 and clo == 3
    else:
        assert clo <= lo


@pytest.mark.parametrize("key", list(ApiKey), ids=lambda k: k.name)
def test_literal_tables_match_the_schemas(key: ApiKey) -> None:
    req = message_schema(key, False)
    resp = message_schema(key, True)
    assert req.api_key == resp.api_key == key
    assert req.versions == resp.versions == CODEC_VERSIONS[key]
    assert req.flexible == resp.flexible
    flex = parse_versions(req.flexible)
    assert FIRST_FLEXIBLE_VERSION[key] == (None if flex is None else flex[0])
    lo, hi = CODEC_VERSIONS[key]
    for v in range(lo, hi + 1):
        assert is_flexible(key, v) == req.is_flexible(v)
    mod = importlib.import_module(f"protocol.messages.{MODULE_NAMES[key]}")
    assert request_type(key) is getattr(mod, req.name)
    assert response_type(key) is getattr(mod, resp.name)
    assert key == mod.API_KEY


def test_is_flexible_for_unknown_keys_is_false() -> None:
    assert not is_flexible(9999, 5)
    assert not is_flexible(17, 1)  # SaslHandshake: never flexible
    assert is_flexible(36, 2)  # SaslAuthenticate: no codec here, but the header rule is known


def test_is_supported() -> None:
    assert api.is_supported(ApiKey.JOIN_GROUP, 5)
    assert not api.is_supported(ApiKey.FETCH, 3)
    assert not api.is_supported(9999, 0)


def test_package_import_is_cheap_and_self_contained() -> None:
    code = (
        "import sys, time; t = time.perf_counter();"
        "import protocol.codec, protocol.headers, protocol.framing, protocol.api, protocol.errors;"
        "dt = time.perf_counter() - t;"
        "assert not any(m.startswith('protocol.messages.') for m in sys.modules), 'messages imported eagerly';"
        "assert 'protocol.codegen' not in sys.modules;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('coordinator', 'storage', 'kafka', 'construct')];"
        "assert not bad, bad;"
        "print(dt)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert float(out.stdout) < 0.5


def test_generated_modules_do_not_import_kafka_python() -> None:
    for path in (ROOT / "protocol" / "messages").glob("*.py"):
        text = path.read_text()
        assert "import kafka" not in text and "from kafka" not in text, path


def test_generated_modules_are_up_to_date() -> None:
    pytest.importorskip("kafka.protocol.schemas.resources")
    from protocol.tools import generate_messages

    assert generate_messages.main(["--check"]) == 0


def _walk(fields, cls):
    yield fields, cls
    for f in fields:
        if f.struct is not None:
            yield from _walk(f.struct.fields, f.struct.cls)


@pytest.mark.parametrize("key", list(ApiKey), ids=lambda k: k.name)
def test_dataclass_defaults_match_the_schema_tables(key: ApiKey) -> None:
    """The codec fills absent fields and omits tagged fields from the table's defaults; a handler
    constructs objects from the dataclass defaults: they must agree."""
    import dataclasses
    import uuid

    from protocol.schema import ZERO

    zeros = {"bool": False, "string": "", "bytes": b"", "records": None, "uuid": uuid.UUID(int=0), "float64": 0.0}
    for resp in (False, True):
        msg = message_schema(key, resp)
        for fields, cls in _walk(msg.fields, msg.cls):
            obj = cls()
            assert [f.name for f in dataclasses.fields(cls)] == [f.name for f in fields]
            for f in fields:
                if f.is_array:
                    expected = None if f.default is None else []
                elif f.struct is not None:
                    expected = None if f.default is None else f.struct.cls()
                else:
                    expected = zeros.get(f.type, 0) if f.default is ZERO else f.default
                assert getattr(obj, f.name) == expected, (cls.__name__, f.name)


# The group coordinator's APIs, each advertised at exactly the range Kafka 4.3 advertises (its
# message JSON's validVersions, none of them marked unstable: CODEC_VERSIONS). TxnOffsetCommit is
# left to the transactions work (v5 is KIP-890 part 2).
GROUP_COORDINATOR_APIS = [
    ApiKey.OFFSET_COMMIT,
    ApiKey.OFFSET_FETCH,
    ApiKey.FIND_COORDINATOR,
    ApiKey.JOIN_GROUP,
    ApiKey.HEARTBEAT,
    ApiKey.LEAVE_GROUP,
    ApiKey.SYNC_GROUP,
    ApiKey.DESCRIBE_GROUPS,
    ApiKey.LIST_GROUPS,
    ApiKey.DELETE_GROUPS,
    ApiKey.OFFSET_DELETE,
    ApiKey.CONSUMER_GROUP_HEARTBEAT,
    ApiKey.CONSUMER_GROUP_DESCRIBE,
]


@pytest.mark.parametrize("key", GROUP_COORDINATOR_APIS, ids=lambda k: k.name)
def test_group_coordinator_apis_are_advertised_at_kafka_4_3_ranges(key: ApiKey) -> None:
    assert SUPPORTED_VERSIONS[key] == CODEC_VERSIONS[key]
