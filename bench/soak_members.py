"""The soak's load generator: one member per connection, over the raw protocol (JoinGroup v5,
SyncGroup v3, Heartbeat v3, OffsetCommit v8, LeaveGroup v3), each group found at its coordinator
(FindCoordinator v4), with the counters the soak samples (Stats). bench/soak_bench.py drives it.
"""

from __future__ import annotations

import argparse
import random
import struct
import time

import trio

from protocol.api import ApiKey
from protocol.codec import decode_response, encode_request
from protocol.errors import ErrorCode
from protocol.headers import RequestHeader, decode_response_header, encode_request_header
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment

TOPIC = "soak"
SUBSCRIPTION = struct.pack(">hih4si", 0, 1, 4, b"soak", -1)
REJOIN = {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION}
SIZE = struct.Struct(">i")
HB_CID = struct.Struct(">i")  # at byte 8 of a frame: size, api key, version, correlation id
HB_ERROR = struct.Struct(">h")  # at byte 8 of a Heartbeat v3 response: correlation id, throttle


class Stats:
    def __init__(self) -> None:
        self.window: list[float] = []
        self.all: list[float] = []
        self.lag: list[float] = []  # the generator's own loop lag (lag_probe), this window
        self.all_lag: list[float] = []
        self.commits = 0
        self.commit_errors = 0
        self.deliberate = 0
        self.rejoins = 0  # members that rejoined because of a deliberate rebalance
        self.spurious = 0
        self.spurious_detail: list[str] = []
        self.unexpected: dict[str, int] = {}

    def spurious_event(self, what: str) -> None:
        self.spurious += 1
        if len(self.spurious_detail) < 20:
            self.spurious_detail.append(what)


class Conn:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream, self.buf, self.cid = stream, bytearray(), 0

    async def call(self, key: int, version: int, request: object) -> object:
        self.cid += 1
        payload = encode_request_header(RequestHeader(key, version, self.cid, "soak")) + encode_request(
            key, version, request
        )
        data = await self.round_trip(struct.pack(">i", len(payload)) + payload)
        _, offset = decode_response_header(data, key, version)
        return decode_response(key, version, data, offset)

    async def heartbeat(self, frame: bytearray) -> int:
        """A Heartbeat v3 from a frame `heartbeat_frame` built; its error code (read in place: the
        response is a v0 header, throttle_time_ms, error_code)."""
        self.cid += 1
        HB_CID.pack_into(frame, 8, self.cid)
        data = await self.round_trip(frame)
        return HB_ERROR.unpack_from(data, 8)[0]

    async def round_trip(self, frame: bytes | bytearray) -> bytes:
        await self.stream.send_all(frame)
        buf = self.buf
        while True:
            if len(buf) >= 4:
                (size,) = SIZE.unpack_from(buf)
                if len(buf) >= 4 + size:
                    data = bytes(buf[4 : 4 + size])
                    del buf[: 4 + size]
                    return data
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk


def heartbeat_frame(group_id: str, generation: int, member_id: str) -> bytearray:
    """A whole Heartbeat v3 frame (size prefix included) whose correlation id `Conn.heartbeat`
    fills in: the generator encodes each member's heartbeat once per generation, not per beat."""
    request = HeartbeatRequest(group_id=group_id, generation_id=generation, member_id=member_id)
    payload = encode_request_header(RequestHeader(ApiKey.HEARTBEAT, 3, 0, "soak")) + encode_request(
        ApiKey.HEARTBEAT, 3, request
    )
    return bytearray(SIZE.pack(len(payload)) + payload)


class Group:
    def __init__(self, name: str) -> None:
        self.name = name
        self.port = 0  # its coordinator's (FindCoordinator)
        self.members: list[Member] = []
        self.churning_until = float("inf")  # a deliberate change (or formation) in progress until then
        self.churn_lock = trio.Lock()

    def quiet(self) -> bool:
        """No deliberate change in progress: its grace period is over and every member has joined
        the same generation (a deliberate rebalance that outlasts the grace on a busy machine is
        still deliberate until the whole group has come through it)."""
        if time.monotonic() < self.churning_until:
            return False
        generations = {m.generation for m in self.members}
        return len(generations) == 1


class Member:
    def __init__(self, group: Group, index: int, conn: Conn, args: argparse.Namespace, stats: Stats) -> None:
        self.group, self.index, self.conn, self.args, self.stats = group, index, conn, args, stats
        self.member_id, self.generation = "", -1
        self._beat: tuple[int, str, bytearray] | None = None  # (generation, member id, frame)
        self.leave_asked = trio.Event()
        self.left = trio.Event()

    async def join(self) -> None:
        """JoinGroup (with the KIP-394 member-id round trip) then SyncGroup, until synced."""
        for _ in range(50):
            joined = await self.conn.call(
                ApiKey.JOIN_GROUP,
                5,
                JoinGroupRequest(
                    group_id=self.group.name,
                    session_timeout_ms=self.args.session_ms,
                    rebalance_timeout_ms=self.args.session_ms,
                    member_id=self.member_id,
                    protocol_type="consumer",
                    protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
                ),
            )
            error = joined.error_code  # type: ignore[attr-defined]
            if error == ErrorCode.MEMBER_ID_REQUIRED:
                self.member_id = joined.member_id  # type: ignore[attr-defined]
                continue
            if error == ErrorCode.UNKNOWN_MEMBER_ID:
                self.member_id = ""
                continue
            if error != ErrorCode.NONE:
                self.stats.unexpected[f"join {ErrorCode(error).name}"] = (
                    self.stats.unexpected.get(f"join {ErrorCode(error).name}", 0) + 1
                )
                await trio.sleep(0.1)
                continue
            self.member_id, self.generation = joined.member_id, joined.generation_id  # type: ignore[attr-defined]
            members = joined.members if joined.leader == self.member_id else []  # type: ignore[attr-defined]
            synced = await self.conn.call(
                ApiKey.SYNC_GROUP,
                3,
                SyncGroupRequest(
                    group_id=self.group.name,
                    generation_id=self.generation,
                    member_id=self.member_id,
                    assignments=[SyncGroupRequestAssignment(member_id=m.member_id, assignment=b"") for m in members],
                ),
            )
            if synced.error_code == ErrorCode.NONE:  # type: ignore[attr-defined]
                return
        raise RuntimeError(f"{self.group.name}/{self.index} never synced")

    async def join_then_run(self, until: list[float], synced: trio.Semaphore) -> None:
        await self.join()
        synced.release()
        await self.run(until)

    async def run(self, until: float | list[float]) -> None:
        box = until if isinstance(until, list) else [until]
        interval = self.args.heartbeat_ms / 1000
        next_beat = time.monotonic() + random.uniform(0, interval)
        next_commit = time.monotonic() + random.uniform(0, self.args.commit_s)
        offset = 0
        while True:
            now = time.monotonic()
            if now >= box[0]:
                return
            wake = min(next_beat, next_commit)
            if wake > now:
                with trio.move_on_after(wake - now):
                    await self.leave_asked.wait()
            if self.leave_asked.is_set():
                await self._leave()
                return
            if time.monotonic() >= next_commit:
                next_commit = time.monotonic() + self.args.commit_s  # as a client: no catching up
                offset += 1
                response = await self.conn.call(
                    ApiKey.OFFSET_COMMIT,
                    8,
                    OffsetCommitRequest(
                        group_id=self.group.name,
                        generation_id_or_member_epoch=self.generation,
                        member_id=self.member_id,
                        topics=[
                            OffsetCommitRequestTopic(
                                name=TOPIC,
                                partitions=[
                                    OffsetCommitRequestPartition(partition_index=self.index, committed_offset=offset)
                                ],
                            )
                        ],
                    ),
                )
                error = response.topics[0].partitions[0].error_code  # type: ignore[attr-defined]
                if error == ErrorCode.NONE:
                    self.stats.commits += 1
                else:
                    self.stats.commit_errors += 1
                    await self._trouble(ErrorCode(error), "commit")
                continue
            next_beat = time.monotonic() + interval  # the next one an interval after this one is sent
            beat = self._beat
            if beat is None or beat[0] != self.generation or beat[1] != self.member_id:
                beat = self._beat = (
                    self.generation,
                    self.member_id,
                    heartbeat_frame(self.group.name, self.generation, self.member_id),
                )
            sent = time.perf_counter()
            error = await self.conn.heartbeat(beat[2])
            self.stats.window.append(time.perf_counter() - sent)
            if error != ErrorCode.NONE:
                await self._trouble(ErrorCode(error), "heartbeat")

    async def _trouble(self, error: ErrorCode, where: str) -> None:
        if not self.group.quiet():
            if error in REJOIN or error == ErrorCode.UNKNOWN_MEMBER_ID:
                if error == ErrorCode.UNKNOWN_MEMBER_ID:
                    self.member_id = ""
                self.stats.rejoins += 1
                await self.join()
            return
        self.stats.spurious_event(
            f"{time.strftime('%H:%M:%S')} {self.group.name}/{self.index}: {where} got {error.name} in a quiet group"
        )
        if error == ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id = ""
        await self.join()

    async def _leave(self) -> None:
        await self.conn.call(
            ApiKey.LEAVE_GROUP,
            3,
            LeaveGroupRequest(group_id=self.group.name, members=[MemberIdentity(member_id=self.member_id)]),
        )
        await self.conn.stream.aclose()
        self.left.set()


async def connect(port: int) -> Conn:
    return Conn(await trio.open_tcp_stream("127.0.0.1", port))


async def find_coordinators(port: int, groups: list[Group]) -> None:
    """Each group's coordinator port, as a client learns it: FindCoordinator v4 (every key in one
    request), again for keys not yet served (a coordinator still loading)."""
    conn = await connect(port)
    pending = {g.name: g for g in groups}
    for _ in range(100):
        response = await conn.call(
            ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=list(pending))
        )
        for found in response.coordinators:  # type: ignore[attr-defined]
            if found.error_code == ErrorCode.NONE:
                pending.pop(found.key).port = found.port
        if not pending:
            break
        await trio.sleep(0.1)
    await conn.stream.aclose()
    if pending:
        raise RuntimeError(f"no coordinator for {len(pending)} groups")
