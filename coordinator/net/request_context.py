"""What a handler may see: the broker's shared parts and the request it is answering.

`BrokerContext` is built once by the server and shared by every connection; handlers reach the
config, the topic registry and (as they arrive) the group runtime and the data path through it.
`RequestContext` adds the per-request facts Kafka's `RequestContext` carries: header, client
address, connection.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coordinator.broker.topics import TopicRegistry
from coordinator.config import Config
from protocol.headers import RequestHeader


@dataclass(slots=True)
class BrokerContext:
    config: Config
    topics: TopicRegistry
    advertised_host: str
    advertised_port: int
    # Later parts (group runtime, data path, transcript) hang here by name.
    services: dict[str, Any] = field(default_factory=dict)

    @property
    def node_id(self) -> int:
        return self.config.node_id


@dataclass(slots=True)
class RequestContext:
    broker: BrokerContext
    header: RequestHeader
    client_host: str
    connection_id: int

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""
