"""`kgc serve --brokers 2 --processes` with confluent-kafka's AdminClient: configs altered through
one broker process hold at the other, as every Kafka broker sees one metadata image. A topic's
max.message.bytes set through broker 0 makes both processes refuse a bigger record (the other
process reconfigured its logs); a group's config set through broker 1 is what broker 0 describes
(broker configs: tests/coordinator/admin/test_shared_configs.py). Waits are on conditions; deadlines bound hangs.
"""

from __future__ import annotations

import pytest

from tests.support.serve_process import start_serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
TOPIC = "configured"


def test_configs_altered_through_one_broker_process_hold_at_the_other(tmp_path):
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    proc, bootstrap = start_serve(str(tmp_path / "data"), "--brokers", "2", "--processes")
    first, second = bootstrap.split(",")
    try:
        through_first = AdminClient({"bootstrap.servers": first})
        through_second = AdminClient({"bootstrap.servers": second})
        through_first.create_topics([NewTopic(TOPIC, 4, 1)])[TOPIC].result(DEADLINE)
        leaders = {p.leader for p in through_first.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions.values()}
        assert leaders == {0, 1}  # both processes lead partitions of it

        def alter(admin: AdminClient, rtype: object, name: str, key: str, value: str) -> None:
            entry = ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)
            resource = ConfigResource(rtype, name, incremental_configs=[entry])
            for future in admin.incremental_alter_configs([resource]).values():
                future.result(DEADLINE)

        def described(admin: AdminClient, rtype: object, name: str, key: str) -> str | None:
            (future,) = admin.describe_configs([ConfigResource(rtype, name)]).values()
            entry = future.result(DEADLINE).get(key)
            return None if entry is None else entry.value

        alter(through_first, ConfigResource.Type.TOPIC, TOPIC, "max.message.bytes", "200")

        def refused_everywhere() -> bool:
            errors: list = []
            producer = Producer({"bootstrap.servers": second})
            for partition in range(4):
                producer.produce(TOPIC, b"x" * 500, partition=partition, on_delivery=lambda e, _m: errors.append(e))
            producer.flush(DEADLINE)
            return all(e is not None and e.code() == KafkaError.MSG_SIZE_TOO_LARGE for e in errors)

        wait_until(refused_everywhere, DEADLINE, message="both processes refuse a record over max.message.bytes")

        alter(through_second, ConfigResource.Type.GROUP, "readers", "consumer.session.timeout.ms", "50000")
        assert described(through_first, ConfigResource.Type.GROUP, "readers", "consumer.session.timeout.ms") == "50000"
    finally:
        proc.terminate()
        assert proc.wait(DEADLINE) == 0
