"""The broker link of --processes in one trio run: a transaction coordinator and its logs (the
"other process", node 0) served over a real socketpair as cluster/peer_link.py serves it, asked by
a PeerLink of node 1. Verification (AddPartitionsToTxn v5) and markers (WriteTxnMarkers v2, user
and __consumer_offsets partitions) over the link, the authorizer's answers, the marker channel's
routing and retries, and a peer that is gone or silent (errors, never hangs). MockClock time.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import trio
import trio.testing

from coordinator.broker.topics import Topic
from coordinator.cluster.cluster import BrokerNode, Cluster
from coordinator.cluster.peer_client import PeerClient, PeerUnavailable
from coordinator.cluster.peer_link import PeerLink, serve_peers
from coordinator.control.versions import VersionLimits
from coordinator.groups.lifecycle import OFFSETS_TOPIC_ID
from coordinator.groups.offset_requests import CommitPartition, FetchGroup, OffsetFetchParams
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams
from coordinator.handlers import k27_write_txn_markers
from coordinator.handlers.request_context import BrokerContext, RequestContext
from coordinator.net.request_memory import RequestMemory
from coordinator.processes import ENV_PEERS, _peer_fds, _socketpairs, peer_sockets
from coordinator.security.standard_authorizer import StandardAuthorizer
from coordinator.txn.ops import AddPartitionsParams
from coordinator.txn.service import TxnService
from coordinator.txn.state import TransactionState as S
from protocol.api import ApiKey
from protocol.codec import decode_request, encode_response
from protocol.errors import ErrorCode as E
from protocol.framing import FrameDecoder
from protocol.headers import RequestHeader, decode_request_header, encode_response_header
from protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from tests.support.runtime import OneBroker
from tests.support.txn import TxnHarness


@dataclass
class Marker:
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int = 0
    transaction_version: int = 0


class ElsewhereLeads:
    """Node 0 (the served one) leads everything: node 1 asks it over the link."""

    def leader(self, topic_name: str, partition: int) -> int:
        return 0


def _broker(h: TxnHarness, authorizer: StandardAuthorizer | None) -> BrokerContext:
    node = BrokerNode(0, "127.0.0.1", 9092)
    return BrokerContext(
        config=h.config,
        topics=h.topics,
        data=h.data,
        cluster=Cluster([node], h.topics),
        groups=h.groups,
        tap=None,
        node=node,
        versions=VersionLimits(),
        txn=TxnService(h.runtime, OneBroker(), 0, h.config.transaction_max_timeout_ms, markers=h.markers),
        authorizer=authorizer,
    )


async def _linked(h: TxnHarness, nursery: trio.Nursery) -> tuple[PeerLink, PeerClient, trio.SocketStream]:
    """Node 0 (the harness) serving node 1's requests; node 1's link to it."""
    offsets = Topic(OFFSETS_TOPIC, h.groups_runtime.num_partitions, OFFSETS_TOPIC_ID, internal=True)
    h.topics.register_internal(offsets)  # as server.py does: the link drops a partition of no topic
    asking, answering = socket.socketpair()
    served = trio.SocketStream(trio.socket.from_stdlib_socket(answering))
    client = PeerClient(trio.SocketStream(trio.socket.from_stdlib_socket(asking)), "broker 0", "kgc-broker-1", 30_000)
    # no ACL at all and allow.everyone.if.no.acl.found off: only the broker principal may act
    await nursery.start(
        serve_peers, _broker(h, StandardAuthorizer()), {0: client}, [(1, served)], RequestMemory(1 << 20)
    )
    return PeerLink(ElsewhereLeads(), h.topics, 1, {0: client}), client, served  # type: ignore[arg-type]


async def test_verification_and_markers_cross_the_link(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running(), trio.open_nursery() as nursery:
        link, _, _ = await _linked(h, nursery)
        pid = (await h.init()).producer_id
        assert await h.add(pid, 0, ("t", 0)) == E.NONE
        both = AddPartitionsParams("tx", pid, 0, (("t", 0), ("t", 1)))
        assert await link.verify(0, both, add=False) == {("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE}
        add = AddPartitionsParams("tx", pid, 0, (("t", 1),), client_version=2)
        assert await link.verify(0, add, add=True) == {("t", 1): E.NONE}  # a transaction.version 2 add
        assert h.meta().partitions == {("t", 0), ("t", 1)}
        assert await link.verify(0, AddPartitionsParams("tx", pid, 7, (("t", 0),)), add=False) == {
            ("t", 0): E.PRODUCER_FENCED  # (the produce path turns it into INVALID_PRODUCER_EPOCH)
        }

        await h.produce(pid, 0, 0, b"a")
        group = partition_for("g")
        assert await h.add_offsets(pid, 0, "g") == E.NONE
        committed = await h.groups.commit_transactional_offsets(
            TxnOffsetCommitParams("tx", "g", pid, 0, [("t", [CommitPartition(0, 42)])])
        )
        assert committed.error == E.NONE
        part = h.data.partition("t", 0)
        assert part.last_stable_offset == 0
        assert await link.write_marker("t", 0, Marker(pid, 0, commit=True)) == E.NONE
        assert part.last_stable_offset == 2  # the record and its COMMIT marker
        assert await link.write_marker(OFFSETS_TOPIC, group, Marker(pid, 0, commit=True)) == E.NONE
        stable = OffsetFetchParams([FetchGroup("g", [("t", [0])])], require_stable=True)
        [fetched] = await h.groups.fetch_offsets(stable)
        assert (fetched.topics[0][1][0].error, fetched.topics[0][1][0].offset) == (E.NONE, 42)
        assert await link.write_marker("gone", 0, Marker(pid, 0, commit=True)) == E.NONE  # deleted: dropped
        nursery.cancel_scope.cancel()


async def test_write_txn_markers_answers_and_authorization(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running(), trio.open_nursery() as nursery:
        _, client, _ = await _linked(h, nursery)
        request = WriteTxnMarkersRequest(
            [WritableTxnMarker(5, 0, True, [WritableTxnMarkerTopic("t", [0]), WritableTxnMarkerTopic("nope", [0])])]
        )
        response = await client.call(ApiKey.WRITE_TXN_MARKERS, 2, request)
        errors = {(t.name, p.partition_index): p.error_code for t in response.markers[0].topics for p in t.partitions}
        assert errors == {("t", 0): E.NONE, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
        # an ordinary principal (what any client connection carries) is refused CLUSTER_ACTION
        ctx = RequestContext(
            _broker(h, StandardAuthorizer()),
            RequestHeader(ApiKey.WRITE_TXN_MARKERS, 2, 1),
            "127.0.0.1",
            1,
            "User:alice",
        )
        refused = await k27_write_txn_markers.handle(ctx, request)
        assert {p.error_code for t in refused.markers[0].topics for p in t.partitions} == {
            E.CLUSTER_AUTHORIZATION_FAILED
        }
        nursery.cancel_scope.cancel()


async def test_a_peer_that_is_gone_gives_errors_not_hangs(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)  # (only its topics: nothing here answers)
    asking, answering = socket.socketpair()
    client = PeerClient(trio.SocketStream(trio.socket.from_stdlib_socket(asking)), "broker 0", "kgc-broker-1", 30_000)
    link = PeerLink(ElsewhereLeads(), h.topics, 1, {0: client})  # type: ignore[arg-type]
    other_process = trio.socket.from_stdlib_socket(answering)

    async def dies_after_one_request() -> None:
        await other_process.recv(1 << 16)
        other_process.close()

    with trio.fail_after(1):  # (MockClock: fails only if a call waited for its 30 s timeout)
        async with trio.open_nursery() as nursery:
            await nursery.start(client.run)
            nursery.start_soon(dies_after_one_request)
            params = AddPartitionsParams("tx", 1, 0, (("t", 0),))
            assert await link.verify(0, params, add=False) == {("t", 0): E.NETWORK_EXCEPTION}  # cut off mid-call
            assert client.dead is not None
            assert await link.write_marker("t", 0, Marker(1, 0, commit=True)) == E.NETWORK_EXCEPTION  # at once
            nursery.cancel_scope.cancel()
    h.close()


async def test_the_marker_channel_routes_by_leader_and_retries_a_moved_one(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    sent: list[tuple[str, int, E]] = []
    answers = [E.NOT_LEADER_OR_FOLLOWER, E.NONE]  # the leader moved, then the new one wrote it

    class Peers:
        def leads_here(self, topic: str, index: int) -> bool:
            return (topic, index) != ("t", 1)

        def exists(self, topic: str, index: int) -> bool:
            return True

        async def write_marker(self, topic: str, index: int, marker: object) -> E:
            sent.append((topic, index, answers[0]))
            return answers.pop(0)

    h.markers.peers = Peers()
    async with h.running():
        pid = (await h.init()).producer_id
        assert await h.add(pid, 0, ("t", 0), ("t", 1)) == E.NONE
        await h.produce(pid, 0, 0, b"a")
        assert await h.end(pid, 0, commit=True) == E.NONE
        done = await h.settled()
        assert done.state is S.COMPLETE_COMMIT
        assert sent == [("t", 1, E.NOT_LEADER_OR_FOLLOWER), ("t", 1, E.NONE)]
        assert h.data.partition("t", 0).last_stable_offset == 2  # written here
        assert h.data.partition("t", 1).last_stable_offset == 0  # not: another process leads it


async def test_pipelined_answers_find_their_calls_and_a_silent_peer_times_out(autojump_clock):
    near, far = trio.testing.memory_stream_pair()
    client = PeerClient(near, "broker 0", "kgc-broker-1", 30_000)
    results: dict[int, object] = {}

    async def ask(producer_id: int) -> None:
        request = WriteTxnMarkersRequest([WritableTxnMarker(producer_id, 0, True, [])])
        try:
            response = await client.call(ApiKey.WRITE_TXN_MARKERS, 2, request)
            results[producer_id] = [m.producer_id for m in response.markers]
        except PeerUnavailable as exc:
            results[producer_id] = exc

    async def requests(n: int) -> list[tuple[int, int]]:
        """(correlation id, producer id) of the next n requests the far end reads."""
        decoder, found = FrameDecoder(), []
        while len(found) < n:
            for payload in decoder.feed(await far.receive_some()):
                header, offset = decode_request_header(payload)
                body = decode_request(header.api_key, header.api_version, payload, offset)
                found.append((header.correlation_id, body.markers[0].producer_id))
        return found

    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)
        nursery.start_soon(ask, 1)
        nursery.start_soon(ask, 2)
        for correlation_id, producer_id in reversed(await requests(2)):  # answered out of order
            answer = WriteTxnMarkersResponse([WritableTxnMarkerResult(producer_id, [])])
            payload = encode_response_header(correlation_id, ApiKey.WRITE_TXN_MARKERS, 2) + encode_response(
                ApiKey.WRITE_TXN_MARKERS, 2, answer
            )
            await far.send_all(len(payload).to_bytes(4, "big") + payload)
        nursery.start_soon(requests, 1)  # read, never answered
        await ask(3)
        nursery.cancel_scope.cancel()
    assert results == {1: [1], 2: [2], 3: results[3]}
    assert isinstance(results[3], PeerUnavailable) and "no answer within 30000 ms" in str(results[3])


def test_every_broker_process_gets_one_end_of_a_socketpair_per_peer_and_direction():
    pairs = _socketpairs(3)
    try:
        ends = {}
        for index in range(3):
            fds = _peer_fds(pairs, index)
            env = {ENV_PEERS: ",".join(f"{name}:{os.dup(fd)}" for name, fd in fds.items())}
            ends[index] = peer_sockets(env)
        assert all(sorted(e.asking) == sorted(e.answering) == sorted({0, 1, 2} - {i}) for i, e in ends.items())
        for a, b in pairs:  # what a asks on its end to b arrives where b answers a, and back
            ends[a].asking[b].sendall(b"ask %d" % a)
            assert ends[b].answering[a].recv(16) == b"ask %d" % a
            ends[b].answering[a].sendall(b"answer")
            assert ends[a].asking[b].recv(16) == b"answer"
        assert peer_sockets({}) is None  # not a child of --processes
    finally:
        for pair in pairs.values():
            for end in pair:
                end.close()
        for e in ends.values():
            for sock in (*e.asking.values(), *e.answering.values()):
                sock.close()


async def test_a_partition_led_here_whose_log_is_not_open_yet_is_retried_not_dropped(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    misses: list[tuple[str, int]] = []

    class LastLeaderStillHolds:  # the first look finds no open log (the last leader lets go meanwhile)
        def partition(self, topic: str, index: int) -> object:
            if (topic, index) == ("t", 1) and not misses:
                misses.append((topic, index))
                return None
            return h.data.partition(topic, index)

    class Peers:
        def leads_here(self, topic: str, index: int) -> bool:
            return True

        def exists(self, topic: str, index: int) -> bool:
            return h.topics.get(topic) is not None

        async def write_marker(self, topic: str, index: int, marker: object) -> E:
            raise AssertionError("everything is led here")

    h.markers.data, h.markers.peers = LastLeaderStillHolds(), Peers()
    async with h.running():
        pid = (await h.init()).producer_id
        assert await h.add(pid, 0, ("t", 0), ("t", 1)) == E.NONE
        await h.produce(pid, 0, 1, b"a")
        assert await h.end(pid, 0, commit=True) == E.NONE
        assert (await h.settled()).state is S.COMPLETE_COMMIT
        assert misses == [("t", 1)]
        assert h.data.partition("t", 1).last_stable_offset == 2  # its marker, written on the retry
