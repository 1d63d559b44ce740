"""A share side of one broker for tests: a real DataPath on a temp dir, an in-memory persister,
the manager and service, and requests built the way clients send them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coordinator.cluster.cluster import Leadership
from coordinator.runtime.clock import TrioClock
from coordinator.share.fetch import BrokerLogs, ShareFetchParams
from coordinator.share.manager import SharePartitionManager
from coordinator.share.partition import ACCEPT, AckBatch
from coordinator.share.service import AckPartition, ShareAnswer, ShareRequest, ShareService
from coordinator.share.settings import ShareSettings
from tests.coordinator.broker.conftest import batch, make_data
from tests.support.share_persister import MemoryPersister


class OneBroker:
    """Broker 0 leads everything (epochs can be bumped to simulate a leader move and back)."""

    def __init__(self) -> None:
        self.epoch = 0
        self.leader = 0

    def leadership(self, topic: str, partition: int) -> Leadership:
        return Leadership((0,), self.leader, self.epoch)


@dataclass
class Share:
    data: Any
    manager: SharePartitionManager
    service: ShareService
    persister: MemoryPersister
    cluster: OneBroker
    epochs: dict[str, int] = field(default_factory=dict)

    @property
    def topic_id(self) -> Any:
        return self.data.topics.get("t").topic_id

    async def produce(self, *values: bytes, partition: int = 0) -> None:
        await self.data.partition("t", partition).append(batch(*values), 1 << 20)

    def request(self, member: str, epoch: int | None = None, acks=(), partitions=(0,), **fetch: Any) -> ShareRequest:
        if epoch is None:
            epoch = self.epochs.get(member, 0)
        params = ShareFetchParams(
            "g",
            member,
            fetch.get("max_wait_ms", 0),
            fetch.get("min_bytes", 1),
            fetch.get("max_bytes", 1 << 20),
            fetch.get("max_records", 500),
            fetch.get("batch_size", 500),
        )
        return ShareRequest(
            "g",
            member,
            epoch,
            acks=tuple(acks),
            connection_id=fetch.get("connection_id", 1),
            fetch=params,
            wanted=[(self.topic_id, p) for p in partitions],
        )

    async def fetch(self, member: str, epoch: int | None = None, acks=(), **kw: Any) -> ShareAnswer:
        answer = await self.service.share_fetch(self.request(member, epoch, acks, **kw), lambda topic: True)
        if not answer.error:
            self.epochs[member] = (
                1 if epoch in (None, 0) and self.epochs.get(member, 0) == 0 else self.epochs[member] + 1
            )
        return answer

    def ack(self, first: int, last: int, *types: int, partition: int = 0) -> AckPartition:
        return AckPartition(self.topic_id, partition, (AckBatch(first, last, types or (ACCEPT,)),))


def make_share(tmp_path: Path, partitions: int = 1, **settings: Any) -> Share:
    data = make_data(tmp_path, clock=TrioClock(0), topics={"t": partitions})
    cluster = OneBroker()
    persister = MemoryPersister()
    config = ShareSettings(**{"auto_offset_reset": "earliest", **settings})
    manager = SharePartitionManager(0, BrokerLogs(data.topics, cluster, data), persister, config, None, TrioClock(0))
    return Share(data, manager, ShareService(manager), persister, cluster)
