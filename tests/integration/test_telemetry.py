"""Client telemetry (KIP-714) over real sockets: GetTelemetrySubscriptions and PushTelemetry with
Kafka's answers to bad pushes (nothing else disturbed), CLIENT_METRICS subscriptions through the
config APIs (durable across a restart), the control plane's view over HTTP and `kgc control`, and
the transcript's summary of a push. Real clients: interop/test_telemetry_clients.py."""

from __future__ import annotations

import json
import uuid

import trio

from coordinator.admin.config_model import AlterOp, ConfigSource, ResourceType
from coordinator.control.cli import main as control_cli
from coordinator.control.http_api import serve_control
from coordinator.embed.embedded import open_server
from protocol.api import ApiKey
from protocol.errors import ErrorCode as E
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest
from protocol.messages.list_config_resources import ListConfigResourcesRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.push_telemetry import PushTelemetryRequest
from storage.batch.compression import compress
from tests.integration.raw_client import RawClient
from tests.integration.test_admin_apis import _alter, _configs, _describe
from tests.support import otlp

DEADLINE = 30
CM = ResourceType.CLIENT_METRICS
PAYLOAD = otlp.sample()
ZERO = uuid.UUID(int=0)


async def _get(client, instance_id=ZERO):
    return await client.request(
        ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, GetTelemetrySubscriptionsRequest(client_instance_id=instance_id)
    )


async def _push(client, got, *, sid=None, codec=0, metrics=PAYLOAD, terminating=False, instance_id=None):
    request = PushTelemetryRequest(
        client_instance_id=got.client_instance_id if instance_id is None else instance_id,
        subscription_id=got.subscription_id if sid is None else sid,
        terminating=terminating,
        compression_type=codec,
        metrics=metrics,
    )
    return (await client.request(ApiKey.PUSH_TELEMETRY, 0, request)).error_code


async def test_bad_pushes_get_kafkas_codes_and_disturb_nothing(tmp_path):
    settings = {"client.metrics.default.metrics": "*", "telemetry.max.bytes": 2048}
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data", settings=settings) as server:
            client = await RawClient.connect(server.host, server.port)
            versions = await client.request(
                ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="raw", client_software_version="1")
            )
            served = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
            assert served[ApiKey.GET_TELEMETRY_SUBSCRIPTIONS] == (0, 0) and served[ApiKey.PUSH_TELEMETRY] == (0, 0)

            got = await _get(client)
            assert got.error_code == E.NONE and got.client_instance_id != ZERO
            assert (got.requested_metrics, got.push_interval_ms) == (["*"], 300000)
            assert (got.accepted_compression_types, got.telemetry_max_bytes, got.delta_temporality) == (
                [4, 3, 1, 2],
                2048,
                True,
            )
            assert (await _get(client, got.client_instance_id)).error_code == E.THROTTLING_QUOTA_EXCEEDED

            # A push without ever asking for a subscription: the instance is made, its id is not 0.
            assert await _push(client, got, instance_id=uuid.uuid4(), sid=0) == E.UNKNOWN_SUBSCRIPTION_ID
            assert await _push(client, got, instance_id=ZERO) == E.INVALID_REQUEST
            cases = [
                ({"sid": got.subscription_id ^ 1}, E.UNKNOWN_SUBSCRIPTION_ID),
                ({"metrics": b"\x01" * 2049}, E.TELEMETRY_TOO_LARGE),
                ({"codec": 1, "metrics": compress(1, b"\0" * 100_000)}, E.TELEMETRY_TOO_LARGE),  # a bomb
                ({"metrics": b"\xff\xfe garbled"}, E.INVALID_RECORD),
                ({"codec": 9}, E.UNSUPPORTED_COMPRESSION_TYPE),
            ]
            for kwargs, code in cases:
                fresh = await _get(client)  # each case on its own instance: its first push is in time
                assert await _push(client, fresh, **kwargs) == code, kwargs
            fresh = await _get(client)
            assert await _push(client, fresh, codec=4, metrics=compress(4, PAYLOAD)) == E.NONE
            assert await _push(client, fresh) == E.THROTTLING_QUOTA_EXCEEDED  # sooner than 5 minutes
            assert await _push(client, fresh, terminating=True) == E.NONE  # even within the interval
            assert await _push(client, fresh, terminating=True) == E.INVALID_REQUEST  # nothing after it

            # Nothing else was disturbed: the connection still answers, the good push was kept.
            assert (await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))).cluster_id
            pushed = server.control.telemetry_client(str(fresh.client_instance_id))
            assert pushed["pushes"] == 2 and pushed["terminating"] and pushed["software"] == "raw/1"
            assert {m["name"] for m in pushed["metrics"]} == {
                otlp.PREFIX + "node.request.latency.avg",
                otlp.PREFIX + "connection.creation.total",
            }
            await client.aclose()


async def test_subscriptions_are_client_metrics_configs_and_survive_a_restart(tmp_path):
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data") as server:
            client = await RawClient.connect(server.host, server.port)
            before = await _get(client)
            assert before.requested_metrics == []
            ops = [("metrics", AlterOp.SET, "org.apache.kafka.producer."), ("interval.ms", AlterOp.SET, "500")]
            assert await _alter(client, 1, [(CM, "producers", ops)]) == [E.NONE]
            assert await _alter(
                client, 1, [(CM, "producers", [("metrics", AlterOp.APPEND, "org.apache.kafka.consumer.")])]
            ) == [E.NONE]
            for name, op, value, code in [
                ("interval.ms", AlterOp.SET, "50", E.INVALID_REQUEST),
                ("interval.ms", AlterOp.SET, "often", E.INVALID_CONFIG),
                ("match", AlterOp.SET, "colour=red", E.INVALID_CONFIG),
                ("colour", AlterOp.SET, "red", E.INVALID_REQUEST),
                ("interval.ms", AlterOp.APPEND, "5", E.INVALID_CONFIG),  # not a LIST
            ]:
                assert await _alter(client, 1, [(CM, "producers", [(name, op, value)])]) == [code], (name, value)
            assert await _alter(client, 1, [(CM, "", [("metrics", AlterOp.SET, "*")])]) == [E.INVALID_REQUEST]
            described = _configs(await _describe(client, 4, CM, "producers"))
            assert described == {
                "metrics": (
                    "org.apache.kafka.producer.,org.apache.kafka.consumer.",
                    ConfigSource.CLIENT_METRICS_CONFIG,
                ),
                "interval.ms": ("500", ConfigSource.CLIENT_METRICS_CONFIG),
                "match": ("", ConfigSource.DEFAULT_CONFIG),
            }
            # The subscription changed: the same instance's next Get is answered at once, newly.
            after = await _get(client, before.client_instance_id)
            assert after.error_code == E.NONE and after.push_interval_ms == 500
            assert sorted(after.requested_metrics) == ["org.apache.kafka.consumer.", "org.apache.kafka.producer."]
            assert after.subscription_id != before.subscription_id
            v0 = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 0, ListConfigResourcesRequest())
            v1 = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 1, ListConfigResourcesRequest(resource_types=[16]))
            assert [(r.resource_name, r.resource_type) for r in v0.config_resources] == [("producers", 16)]
            assert [(r.resource_name, r.resource_type) for r in v1.config_resources] == [("producers", 16)]
            await client.aclose()
        async with open_server(tmp_path / "data") as server:
            client = await RawClient.connect(server.host, server.port)
            assert (await _get(client)).push_interval_ms == 500
            removed = [("metrics", AlterOp.DELETE, None), ("interval.ms", AlterOp.DELETE, None)]
            assert await _alter(client, 1, [(CM, "producers", removed)]) == [E.NONE]
            v0 = await client.request(ApiKey.LIST_CONFIG_RESOURCES, 0, ListConfigResourcesRequest())
            assert v0.config_resources == []
            await client.aclose()


async def test_the_control_plane_sets_subscriptions_and_shows_what_clients_pushed(tmp_path):
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data", settings={"client.metrics.default.metrics": "org."}) as server:
            async with trio.open_nursery() as nursery:
                http = await nursery.start(serve_control, server.control, "127.0.0.1", 0)

                def cli(*args: str) -> tuple[int, object]:
                    import contextlib
                    import io

                    out, err = io.StringIO(), io.StringIO()
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                        status = control_cli(["--url", http.url, *args])
                    return status, json.loads(out.getvalue()) if status == 0 else err.getvalue()

                status, answer = await trio.to_thread.run_sync(
                    cli, "telemetry-subscribe", "fast", "--metrics", "*", "--interval-ms", "100"
                )
                assert status == 0 and answer == {"name": "fast", "configs": {"metrics": "*", "interval.ms": "100"}}
                status, error = await trio.to_thread.run_sync(cli, "telemetry-subscribe", "bad", "--interval-ms", "5")
                assert status == 2 and "interval must be between 100 and 3600000" in error
                status, subs = await trio.to_thread.run_sync(cli, "telemetry-subscriptions")
                assert [(s["name"], s["source"]) for s in subs] == [("fast", "config"), ("kgc-default", "setting")]

                client = await RawClient.connect(server.host, server.port)
                client.client_id = "raw-producer"
                got = await _get(client)
                assert got.push_interval_ms == 100 and got.requested_metrics == ["*"]
                assert await _push(client, got, codec=3, metrics=compress(3, PAYLOAD)) == E.NONE
                status, clients = await trio.to_thread.run_sync(cli, "telemetry")
                assert [(c["client_id"], c["pushes"], c["subscriptions"]) for c in clients] == [
                    ("raw-producer", 1, ["fast", "kgc-default"])
                ]
                status, one = await trio.to_thread.run_sync(
                    cli, "telemetry", "raw-producer", "--prefix", otlp.PREFIX + "node."
                )
                assert [(m["name"], m["value"], m["attributes"]) for m in one["metrics"]] == [
                    (otlp.PREFIX + "node.request.latency.avg", 2.5, {"node.id": 0})
                ]
                status, error = await trio.to_thread.run_sync(cli, "telemetry", "nobody")
                assert status == 2 and "404" in error
                status, _ = await trio.to_thread.run_sync(cli, "telemetry-unsubscribe", "fast")
                assert status == 0 and [s["name"] for s in server.control.telemetry_subscriptions()] == ["kgc-default"]
                await client.aclose()
                nursery.cancel_scope.cancel()


async def test_the_transcript_summarises_a_push(tmp_path):
    transcript = tmp_path / "transcript.jsonl"
    settings = {"client.metrics.default.metrics": "*", "transcript.file": str(transcript)}
    with trio.fail_after(DEADLINE):
        async with open_server(tmp_path / "data", settings=settings) as server:
            client = await RawClient.connect(server.host, server.port)
            got = await _get(client)
            assert await _push(client, got, codec=2, metrics=compress(2, PAYLOAD)) == E.NONE
            fresh = await _get(client)
            assert await _push(client, fresh, metrics=b"\xff garbled") == E.INVALID_RECORD
            await client.aclose()
    pushes = [
        json.loads(line)
        for line in transcript.read_text().splitlines()
        if '"PushTelemetry"' in line and '"type": "request"' in line.replace('":"', '": "')
    ]
    assert len(pushes) == 2
    good, bad = pushes
    assert good["telemetry"]["compression"] == "snappy" and good["telemetry"]["metrics"] == 2
    assert good["telemetry"]["names"] == [
        otlp.PREFIX + "node.request.latency.avg",
        otlp.PREFIX + "connection.creation.total",
    ]
    assert good["body"]["metrics"] == {"telemetry_bytes": len(compress(2, PAYLOAD))}
    assert "not OTLP MetricsData" in bad["telemetry"]["undecodable"]
