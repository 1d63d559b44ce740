"""The early ApiVersions answers (net/early_answers.py) are the full server's, byte for byte.

Each case sends the same request frames to a real server (in this trio run, over a socket) and to
`EarlyAnswers` built from the same settings, and compares the whole response frames; the frames
the early path must leave to the server get None. A change to the versions table, the features,
the share switch, the KIP-511 or software-name rules, or the codec's layout fails here.
"""

from __future__ import annotations

import struct

import pytest

from coordinator.config import Config
from coordinator.embed.embedded import open_server
from coordinator.net.early_answers import EarlyAnswers
from coordinator.net.early_responder import early_plan
from protocol.codec import encode_request
from protocol.headers import RequestHeader, encode_request_header
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from tests.integration.raw_client import RawClient


def _frame(version: int, body: bytes, correlation_id: int, client_id: str | None = "early-test") -> bytes:
    payload = encode_request_header(RequestHeader(18, version, correlation_id, client_id)) + body
    return struct.pack(">i", len(payload)) + payload


def _api_versions(version: int, correlation_id: int, name: str = "kgc-test", software: str = "1.0.0") -> bytes:
    return _frame(version, encode_request(18, version, ApiVersionsRequest(name, software)), correlation_id)


# Requests the early path answers: every version, both errors, the header's corner cases.
ANSWERED = [
    *(_api_versions(v, 100 + v) for v in range(5)),
    _api_versions(3, 7, name="bad name!"),  # INVALID_REQUEST (Kafka's software pattern)
    _api_versions(4, 8, software="1.0\n"),  # a trailing newline is refused too (Java's matches())
    _api_versions(3, 9, name=""),
    _frame(0, b"", -5, client_id=None),  # null client id, negative correlation id
    _frame(1, b"\x01\x02\x03", 10),  # bytes after the body are ignored, as Kafka ignores them
    _frame(4, encode_request(18, 4, ApiVersionsRequest("kgc-test", "1")) + b"\xff", 11),
    _frame(5, b"\x00", 12),  # KIP-511: a v0 body with UNSUPPORTED_VERSION
    _frame(9, b"\x07future\x02\x01\xff\xfe", 2**31 - 1),
]

# Frames the early path leaves unread for the server.
LEFT = [
    struct.pack(">i", 0),
    _frame(3, b"\x02a", 20)[:-1],  # truncated
    _frame(3, b"\x05caf\xc3\xa9\x021\x00", 21),  # non-ASCII software name
    _frame(3, b"\x00\x021\x00", 22),  # null software name
    _frame(3, b"\x02a\x021\x01\x00\x00", 23),  # a tagged field in the body
    _frame(-1, b"", 24),
]


@pytest.mark.parametrize(
    "settings",
    [{}, {"group.share.enable": False}, {"cluster.brokers": 2, "group.share.enable": True}],
    ids=["defaults", "share-off", "two-brokers"],
)
async def test_early_answers_are_the_servers_byte_for_byte(tmp_path, settings):
    answers = early_plan(Config({"data.dir": str(tmp_path / "data"), **settings}))
    assert answers is not None
    async with open_server(tmp_path / "data", settings=settings) as server:
        for broker in server.brokers:
            client = await RawClient.connect(broker.advertised_host, broker.advertised_port)
            try:
                for request in ANSWERED:
                    await client.send_raw(request)
                    payload = await client.receive_frame()
                    assert payload is not None
                    early = answers.answer(request[4:])
                    assert early is not None
                    assert early.response == struct.pack(">i", len(payload)) + payload
            finally:
                await client.aclose()


def test_the_software_a_valid_request_names_is_kept_for_telemetry():
    answers = EarlyAnswers(share_enabled=True)
    assert answers.answer(_api_versions(3, 1, "librdkafka", "2.11.0")[4:]).software == ("librdkafka", "2.11.0")
    assert answers.answer(_api_versions(3, 1, "bad name!")[4:]).software is None
    assert answers.answer(_api_versions(2, 1)[4:]).software is None


@pytest.mark.parametrize("frame", LEFT)
def test_what_the_early_path_cannot_read_is_left_to_the_server(frame):
    assert EarlyAnswers(share_enabled=True).answer(frame[4:]) is None


def test_other_apis_are_left_to_the_server():
    header = encode_request_header(RequestHeader(3, 12, 1, "early-test"))
    assert EarlyAnswers(share_enabled=False).answer(header + encode_request(3, 12, MetadataRequest())) is None


@pytest.mark.parametrize(
    "settings",
    [
        {"listeners": "PLAINTEXT://127.0.0.1:0"},  # any listener setting: TLS/SASL are possible
        {"transcript.file": "t.jsonl"},
        {"metrics.port": 0},
        {"control.enable": True},
        {"control.port": 0},
        {"cluster.processes": True},
    ],
)
def test_the_early_path_is_off_where_more_than_the_tables_shape_the_answer(settings):
    assert early_plan(Config(settings)) is None
    assert early_plan(Config({})) is not None


async def test_servers_of_one_process_each_answer_from_their_own_table(tmp_path):
    """k18 caches encoded bodies: per table, not per generation (two servers, share groups on and
    off, both at generation 0, once shared the first one's KIP-511 body)."""
    request = _frame(9, b"\x00", 5)
    for share in (True, False, True):
        async with open_server(tmp_path / f"data-{share}", settings={"group.share.enable": share}) as server:
            client = await RawClient.connect(server.host, server.port)
            try:
                await client.send_raw(request)
                payload = await client.receive_frame()
            finally:
                await client.aclose()
        assert payload is not None
        assert struct.pack(">i", len(payload)) + payload == EarlyAnswers(share).answer(request[4:]).response
