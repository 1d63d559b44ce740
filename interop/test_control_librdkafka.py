"""librdkafka's own mock-cluster tests 0106 (session timeout) and 0116 (consumer close), against
kgc through its control plane, with confluent-kafka (issue 13, "Show").

librdkafka's tests/0106-cgrp_sess_timeout.c and tests/0116-kafkaconsumer_close.cpp drive a
consumer against `rd_kafka_mock_cluster_new(3)`; here the same steps run against a 3-broker kgc,
with the control plane in place of each rd_kafka_mock_* call:

  rd_kafka_mock_coordinator_set(mcluster, "group", g, 1)  -> control.move_coordinator(g, 1)
  rd_kafka_mock_push_request_errors(Heartbeat, 9, ...)    -> control.fail("Heartbeat", errors=[...])
  rd_kafka_mock_broker_set_down(mcluster, 1)              -> control.broker(1).down()

Times are scaled down (session 2 s and heartbeats every 400 ms instead of 5 s and 1 s), and
where 0106 sleeps a second "so the broker times out the member too", this waits for the group
view to show the member gone. 0116's close-with-queue variants use a C++ API the Python binding
does not have; the other eight combinations run, and the control plane's request log and group
view show what the consumer told the coordinator.
"""

from __future__ import annotations

import gc

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

from coordinator.control.errors import ControlError
from coordinator.embed.embedded import EmbeddedServer
from interop.clients.cluster import requests_since
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

SETTINGS = {"group.min.session.timeout.ms": 500}
SESSION_MS, HEARTBEAT_MS = 2000, 400


def _seed(bootstrap, topic, count):
    """test_produce_msgs_easy_v(topic, 0, partition 0, 0, count, 10, "batch.num.messages", "10")."""
    producer = Producer({"bootstrap.servers": bootstrap, "batch.num.messages": 10})
    for i in range(count):
        producer.produce(topic, value=f"msg-{i}".encode(), partition=0)
    assert producer.flush(20) == 0


def _consumer(bootstrap, group, **conf):
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": f"kgc-interop-{group}",
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "auto.offset.reset": "earliest",
            **conf,
        }
    )


def _poll_until(consumer, predicate, timeout, what):
    """Serve the consumer (its callbacks run inside poll) until `predicate()` holds."""

    def step():
        consumer.poll(0.05)
        return predicate()

    wait_until(step, timeout, interval=0.0, message=what)


def _consume(consumer, count, timeout):
    """test_consumer_poll: poll until `count` messages arrived (callbacks are served meanwhile)."""
    got = []

    def step():
        message = consumer.poll(0.05)
        if message is not None and message.error() is None:
            got.append(message.offset())
        return len(got) >= count

    wait_until(step, timeout, interval=0.0, message=lambda: f"{count} messages consumed, have {len(got)}")


def _member_gone(control, group, member_id):
    try:
        return member_id not in {m.member_id for m in control.group(group).members}
    except ControlError:  # the group itself is gone (or not loaded): so is the member
        return True


@pytest.mark.parametrize("commit_type", ["sync", "async", "auto"])
def test_0106_session_timeout(tmp_path, topic_name, commit_type):
    """do_test_session_timeout: two good heartbeats, then seven NOT_COORDINATOR; the consumer
    times itself out (its session passes without a successful heartbeat), revokes, and joins
    again. A sync commit in the revoke callback, once the coordinator has timed the member out
    too, fails with UNKNOWN_MEMBER_ID; an async one returns no error; the final revoke in
    close() commits fine."""
    group = f"mygroup-{commit_type}"
    with EmbeddedServer(tmp_path / "data", brokers=3, settings=SETTINGS, topics={topic_name: 1}) as server:
        control = server.control
        assert control.move_coordinator(group, 1).leader == 1
        _seed(server.bootstrap, topic_name, 100)
        events: list[tuple[str, object]] = []
        expect = {"commit": None}

        def on_assign(consumer, partitions):
            events.append(("assign", len(partitions)))

        def on_revoke(consumer, partitions):
            result = None
            if commit_type != "auto":
                positions = consumer.position(partitions)
                member_id = consumer.memberid()
                if expect["commit"] == KafkaError.UNKNOWN_MEMBER_ID:
                    wait_until(
                        lambda: _member_gone(control, group, member_id),
                        10,
                        message="the coordinator times the member out too",
                    )
                try:
                    consumer.commit(offsets=positions, asynchronous=commit_type == "async")
                except KafkaException as exc:
                    result = exc.args[0].code()
            events.append(("revoke", result))

        rule = control.fail("Heartbeat", errors=["NONE", "NONE"] + ["NOT_COORDINATOR"] * 7, group=group)
        consumer = _consumer(server.bootstrap, group, **{"enable.auto.commit": commit_type == "auto"})
        consumer.subscribe([topic_name], on_assign=on_assign, on_revoke=on_revoke)
        try:
            _poll_until(consumer, lambda: ("assign", 1) in events, 7, "initial assignment")
            _consume(consumer, 10, 10)
            expect["commit"] = KafkaError.UNKNOWN_MEMBER_ID
            _poll_until(
                consumer, lambda: any(kind == "revoke" for kind, _ in events), 2 + 5 + 2, "session timeout revoke"
            )
            revoke = next(result for kind, result in events if kind == "revoke")
            assert revoke == (KafkaError.UNKNOWN_MEMBER_ID if commit_type == "sync" else None), events
            _poll_until(consumer, lambda: [k for k, _ in events].count("assign") == 2, 5 + 2, "second assignment")
            faulted = [e for e in requests_since(control, 0, api="Heartbeat", group=group) if e["fault"] == rule]
            assert [x["name"] for e in faulted for x in e["errors"]][2:4] == ["NOT_COORDINATOR"] * 2, faulted
            expect["commit"] = None
        finally:
            consumer.close()  # the final rebalance: its commit works
        assert [kind for kind, _ in events] == ["assign", "revoke", "assign", "revoke"], events
        assert events[-1][1] in (None, KafkaError._NO_OFFSET), events


def test_0106_commit_on_lost(tmp_path, topic_name):
    """do_test_commit_on_lost: the coordinator's broker goes down. In librdkafka's mock nothing
    takes over; here __consumer_offsets has replication factor 1, so its partition is left
    without a leader too (COORDINATOR_NOT_AVAILABLE) and the consumer's session passes: it
    loses its assignment, and a manual commit then fails."""
    group = "mygroup-lost"
    settings = {**SETTINGS, "offsets.topic.replication.factor": 1}
    with EmbeddedServer(tmp_path / "data", brokers=3, settings=settings, topics={topic_name: 1}) as server:
        control = server.control
        assert control.move_coordinator(group, 1).replicas == [1]
        _seed(server.bootstrap, topic_name, 100)
        lost = []
        consumer = _consumer(server.bootstrap, group, **{"enable.auto.commit": False})
        consumer.subscribe([topic_name], on_lost=lambda c, partitions: lost.append(len(partitions)))
        try:
            _consume(consumer, 10, 10)
            control.broker(1).down()
            _poll_until(consumer, lambda: lost, 10, "the assignment is lost")
            with pytest.raises(KafkaException):
                consumer.commit(asynchronous=False)
        finally:
            consumer.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedServer(
        tmp_path_factory.mktemp("kgc-0116"), brokers=3, settings=SETTINGS, topics={"some_topic": 1}
    ) as server:
        _seed(server.bootstrap, "some_topic", 10)
        yield server


@pytest.mark.parametrize("do_close", [False, True], ids=["destroy", "close"])
@pytest.mark.parametrize("do_unsubscribe", [False, True], ids=["", "unsubscribe"])
@pytest.mark.parametrize("do_subscribe", [False, True], ids=["", "subscribe"])
def test_0116_consumer_close(cluster, do_subscribe, do_unsubscribe, do_close):
    """do_test_consumer_close(subscribe, unsubscribe, close, queue=false): consume 10 (messages
    or empty polls), maybe unsubscribe, maybe close (a second close is harmless; librdkafka's
    C++ API answers it with ERR__DESTROY, the Python binding with nothing), then commit
    asynchronously (C++: no use-after-free; Python: a clean RuntimeError once closed) and
    destroy. A subscribed consumer that closes leaves the group (LeaveGroup in the request log);
    one that is only destroyed does not (the Python binding destroys without closing, unlike
    the C++ destructor), and the coordinator's session timeout removes it. Either way the group
    ends with no member."""
    group = f"mygroup-{int(do_subscribe)}{int(do_unsubscribe)}{int(do_close)}"
    control = cluster.control
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": group,
            "client.id": f"kgc-{group}",
            "auto.offset.reset": "beginning",
            "session.timeout.ms": 1000,
            "heartbeat.interval.ms": 300,
        }
    )
    if do_subscribe:
        consumer.subscribe(["some_topic"])
    received = 0
    while received < 10:  # the C++ test counts every consume() return, timeouts included
        message = consumer.poll(0.5 if do_subscribe else 0.01)
        received += message is not None or not do_subscribe
    if do_unsubscribe:
        consumer.unsubscribe()
    if do_close:
        consumer.close()
        consumer.close()
        with pytest.raises(RuntimeError, match="closed"):
            consumer.commit(asynchronous=True)
    else:
        try:
            consumer.commit(asynchronous=True)
        except KafkaException as exc:  # nothing consumed yet (unsubscribed or never subscribed)
            assert exc.args[0].code() == KafkaError._NO_OFFSET
    del consumer
    gc.collect()  # the binding closes a consumer it destroys
    if do_subscribe:
        wait_until(lambda: control.group(group).members == [], 10, message=f"{group} has no member left")
    if do_subscribe and do_close:
        assert [e for e in requests_since(control, 0, api="LeaveGroup", group=group) if not e["errors"]], (
            f"{group} closed without LeaveGroup"
        )
