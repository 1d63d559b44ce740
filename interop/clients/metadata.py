"""Ask each real client for one topic's metadata and normalise the answer to `TopicMetadata`.

One function per client, all with the signature (bootstrap, topic, timeout) -> TopicMetadata,
collected in METADATA_CLIENTS so a test can parametrize over client names. Each one uses the
client's ordinary public API (what an application would call) and is bounded by `timeout`
seconds: the Python clients through their own timeouts, node scripts and kcat through a
subprocess deadline. Requests the clients send: protocol.md §3.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from interop.clients.kcat import run_kcat
from interop.clients.node import run_node


@dataclass(frozen=True)
class TopicMetadata:
    """One topic as a client saw it.

    `partitions` maps partition index -> leader node id; `brokers` maps node id -> (host, port).
    `error` is the client's own rendering of a topic-level error, or None. `raw` is the
    client's unnormalised answer (plus captured output for subprocesses), for failure messages.
    """

    client: str
    topic: str | None
    error: str | None
    partitions: dict[int, int]
    brokers: dict[int, tuple[str, int]]
    raw: str = field(repr=False, default="")

    def explain(self) -> str:
        return (
            f"{self.client} saw topic={self.topic!r} error={self.error!r} "
            f"partitions={self.partitions} brokers={self.brokers}\n{self.raw}"
        )


def confluent_kafka_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """confluent-kafka (librdkafka 2.16): AdminClient.list_topics (ApiVersions v3, Metadata v13)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kgc-interop-confluent"})
    failure = None
    try:
        md = admin.list_topics(topic=topic, timeout=timeout)
    except KafkaException as exc:
        failure = str(exc)  # keep the text, not the traceback: its frames hold `admin`
    finally:
        # AdminClient has no close(): librdkafka's handle is destroyed with its last reference.
        # Drop it now, or a failed call leaves it reconnecting and logging for the rest of the run.
        del admin
    if failure is not None:
        raise AssertionError(f"confluent-kafka list_topics failed: {failure}")
    found = md.topics.get(topic)
    return TopicMetadata(
        client="confluent-kafka",
        topic=found.topic if found else None,
        error=None if found is None or found.error is None else str(found.error),
        partitions={p.id: p.leader for p in found.partitions.values()} if found else {},
        brokers={b.id: (b.host, b.port) for b in md.brokers.values()},
        raw=f"topics={md.topics!r} brokers={md.brokers!r}",
    )


def kafka_python_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """kafka-python: KafkaAdminClient.describe_topics (ApiVersions v4, Metadata v13)."""
    from kafka import KafkaAdminClient
    from kafka.net.compat import KafkaNetClient

    # KafkaAdminClient bootstraps inside __init__ and, if that fails, leaves its IO thread
    # running with no object to close. Its `kafka_client` factory option lets us keep a handle
    # on the network client so a failed start is still shut down.
    made: list[KafkaNetClient] = []

    def network_client(**configs):
        made.append(KafkaNetClient(**configs))
        return made[-1]

    timeout_ms = int(timeout * 1000)
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap,
            client_id="kgc-interop-kafka-python",
            request_timeout_ms=timeout_ms,
            bootstrap_timeout_ms=timeout_ms,
            kafka_client=network_client,
        )
    except Exception:
        for client in made:
            client.close()
        raise
    try:
        topics = admin.describe_topics([topic])
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    found = next((t for t in topics if t["name"] == topic), None)
    return TopicMetadata(
        client="kafka-python",
        topic=found["name"] if found else None,
        error=None if found is None or found["error_code"] == 0 else f"error_code {found['error_code']}",
        partitions={p["partition_index"]: p["leader_id"] for p in found["partitions"]} if found else {},
        brokers={b["broker_id"]: (b["host"], b["port"]) for b in cluster["brokers"]},
        raw=f"topics={topics!r} cluster={cluster!r}",
    )


def aiokafka_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """aiokafka: AIOKafkaClient cluster metadata (ApiVersions v0, Metadata v5).

    Runs its own asyncio loop in this thread; the test itself stays synchronous.
    """
    try:
        return asyncio.run(asyncio.wait_for(_aiokafka_metadata(bootstrap, topic, timeout), timeout))
    except TimeoutError:
        raise AssertionError(f"aiokafka got no metadata for {topic!r} within {timeout:g}s") from None


async def _aiokafka_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    from aiokafka import AIOKafkaClient
    from aiokafka.structs import TopicPartition

    client = AIOKafkaClient(
        bootstrap_servers=bootstrap, client_id="kgc-interop-aiokafka", request_timeout_ms=int(timeout * 1000)
    )
    try:
        await client.bootstrap()
        updated = await client.set_topics([topic])
        cluster = client.cluster
        indexes = cluster.partitions_for_topic(topic)
        return TopicMetadata(
            client="aiokafka",
            topic=topic if indexes is not None else None,
            error=None if indexes is not None else f"topic not in metadata (update ok: {updated})",
            partitions={i: cluster.leader_for_partition(TopicPartition(topic, i)) for i in indexes or ()},
            brokers={b.nodeId: (b.host, b.port) for b in cluster.brokers()},
            raw=repr(cluster),
        )
    finally:
        await client.close()


def _from_node_json(result: dict, run_text: str) -> TopicMetadata:
    return TopicMetadata(
        client=result["client"],
        topic=result["topic"],
        error=result["error"],
        partitions={p["partition"]: p["leader"] for p in result["partitions"]},
        brokers={b["id"]: (b["host"], b["port"]) for b in result["brokers"]},
        raw=run_text,
    )


def kafkajs_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """kafkajs 2.2.4: admin.fetchTopicMetadata (ApiVersions v2, Metadata v6) via node."""
    result, run = run_node("kafkajs-metadata.mjs", bootstrap, topic, timeout=timeout)
    return _from_node_json(result, run.describe())


def platformatic_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """@platformatic/kafka: Admin.metadata (ApiVersions v3, Metadata v12) via node."""
    result, run = run_node("platformatic-metadata.mjs", bootstrap, topic, timeout=timeout)
    return _from_node_json(result, run.describe())


def kcat_metadata(bootstrap: str, topic: str, timeout: float) -> TopicMetadata:
    """kcat 1.7.1 / librdkafka 2.0.2: `kcat -L -J -t TOPIC` (ApiVersions v3, Metadata v4)."""
    result, run = run_kcat("-b", bootstrap, "-L", "-J", "-t", topic, timeout=timeout)
    found = next((t for t in result.get("topics", []) if t.get("topic") == topic), None)
    brokers = {}
    for b in result.get("brokers", []):
        host, _, port = b["name"].rpartition(":")  # "HOST:PORT"
        brokers[b["id"]] = (host, int(port))
    return TopicMetadata(
        client="kcat",
        topic=found["topic"] if found else None,
        error=found.get("error") if found else f"topic missing from {json.dumps(result)}",
        partitions={p["partition"]: p["leader"] for p in found["partitions"]} if found else {},
        brokers=brokers,
        raw=run.describe(),
    )


METADATA_CLIENTS: dict[str, Callable[[str, str, float], TopicMetadata]] = {
    "confluent-kafka": confluent_kafka_metadata,
    "kafka-python": kafka_python_metadata,
    "aiokafka": aiokafka_metadata,
    "kafkajs": kafkajs_metadata,
    "platformatic": platformatic_metadata,
    "kcat": kcat_metadata,
}
