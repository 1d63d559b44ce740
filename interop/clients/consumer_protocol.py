"""KIP-848 group members for interop tests: confluent-kafka (librdkafka 2.16) with
`group.protocol=consumer`, whose rebalances the coordinator drives with ConsumerGroupHeartbeat.

`ConsumerProtocolMember` is groups.ConfluentMember (its own poll thread, rebalance callbacks into a
shared Ownership) without the classic-only settings, which librdkafka refuses with this protocol
(the session timeout and heartbeat interval are the broker's group.consumer.* settings).
`describe_group` asks the coordinator (ConsumerGroupDescribe, through the client's AdminClient) for
its view: state, epochs and each member's current and target assignment.

`python -m interop.clients.consumer_protocol BOOTSTRAP GROUP TOPIC [CONFIG_JSON]` runs one member
as a child process (to SIGKILL it), printing one JSON line per rebalance callback.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from interop.clients.groups import ConfluentMember, Event, Ownership

# Settings of the classic protocol that librdkafka rejects with group.protocol=consumer.
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")

# The broker's group.consumer.* settings the interop tests run with: shortened (heartbeat 300 ms,
# session 3 s) so that the suite stays quick.
FAST_SESSION_MS = 3000
FAST_SETTINGS = {
    "group.consumer.heartbeat.interval.ms": 300,
    "group.consumer.min.heartbeat.interval.ms": 100,
    "group.consumer.session.timeout.ms": FAST_SESSION_MS,
    "group.consumer.min.session.timeout.ms": 1000,
    "group.consumer.regex.batch.refresh.min.interval.ms": 500,
}


class ConsumerProtocolMember(ConfluentMember):
    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topics: list[str],
        ownership: Ownership,
        config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, bootstrap, group, topics, ownership, config, **kwargs)
        for key in CLASSIC_ONLY:
            self.config.pop(key, None)
        self.config["group.protocol"] = "consumer"


def describe_group(bootstrap: str, group: str, timeout: float = 10.0) -> Any:
    """The coordinator's description of `group` (confluent AdminClient.describe_consumer_groups)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    return admin.describe_consumer_groups([group], request_timeout=timeout)[group].result(timeout)


def _child_main(argv: list[str]) -> None:
    bootstrap, group, topic = argv[:3]
    config = json.loads(argv[3]) if len(argv) > 3 else {}

    def emit(event: Event) -> None:
        print(json.dumps({"event": event.kind, "partitions": sorted(event.tps), "detail": event.detail}), flush=True)

    member = ConsumerProtocolMember("child", bootstrap, group, [topic], Ownership(), config, on_event=emit)
    member.start()
    print(json.dumps({"event": "started"}), flush=True)
    sys.stdin.read()  # EOF: the parent wants a clean close
    member.close()
    print(json.dumps({"event": "closed"}), flush=True)


if __name__ == "__main__":
    _child_main(sys.argv[1:])
