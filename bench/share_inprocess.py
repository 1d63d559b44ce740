"""ShareGroupHeartbeat steady state inside one process: this tree's server started in the bench's
own trio run, and dispatch() called directly (decode, handler, the runtime's op, the empty append,
encode), no sockets, no load generator on the other core. Part 3 of share_bench.py measures the
whole server; this separates the request path from the network. `cprofile` writes a cProfile of the
timed loops only. Prints figures through share_bench.py; asserts nothing about time.
"""

from __future__ import annotations

import cProfile
import tempfile
import time
import uuid
from typing import Any

import trio

from protocol.api import ApiKey
from protocol.codec import decode_response, encode_request
from protocol.headers import RequestHeader, decode_response_header, encode_request_header
from protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest

TOPIC, PARTITIONS, MEMBERS, ROUNDS, PER_ROUND = "bench", 4, 10, 9, 2000


def _frame(request: ShareGroupHeartbeatRequest) -> bytes:
    header = RequestHeader(ApiKey.SHARE_GROUP_HEARTBEAT, 1, 1, "bench")
    return encode_request_header(header) + encode_request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, request)


def steady_heartbeat_cpu(profile: str | None = None) -> float:
    """CPU µs per steady-state heartbeat (best of ROUNDS rounds of PER_ROUND, MEMBERS members in
    one group on PARTITIONS partitions, each re-heartbeating at its epoch)."""
    from coordinator.config import Config
    from coordinator.net.dispatch import Connection, dispatch
    from coordinator.server import serve

    async def call(broker: Any, conn: Connection, request: ShareGroupHeartbeatRequest) -> Any:
        answer = await dispatch(_frame(request), conn, broker)
        assert answer is not None
        payload = answer[0] + answer[1]
        _, offset = decode_response_header(payload, ApiKey.SHARE_GROUP_HEARTBEAT, 1)
        response = decode_response(ApiKey.SHARE_GROUP_HEARTBEAT, 1, payload, offset)
        assert response.error_code == 0, response
        return response

    async def run(root: str) -> float:
        config = Config({"data.dir": root, "host": "127.0.0.1", "port": 0})
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve, config, {TOPIC: PARTITIONS})
            try:
                await server.runtime.loaded.wait()
                broker, conn = server.broker, Connection(1, "127.0.0.1")
                epochs: dict[str, int] = {}
                for _ in range(MEMBERS):
                    member_id = str(uuid.uuid4())
                    request = ShareGroupHeartbeatRequest(
                        group_id="g", member_id=member_id, member_epoch=0, subscribed_topic_names=[TOPIC]
                    )
                    epochs[member_id] = (await call(broker, conn, request)).member_epoch
                for _ in range(2):  # every member on the last group epoch
                    for member_id, epoch in epochs.items():
                        request = ShareGroupHeartbeatRequest(group_id="g", member_id=member_id, member_epoch=epoch)
                        epochs[member_id] = (await call(broker, conn, request)).member_epoch
                frames = [
                    _frame(ShareGroupHeartbeatRequest(group_id="g", member_id=m, member_epoch=e))
                    for m, e in epochs.items()
                ]
                profiler = cProfile.Profile() if profile else None
                best = float("inf")
                for _ in range(ROUNDS):
                    if profiler is not None:
                        profiler.enable()
                    began = time.process_time()
                    for i in range(PER_ROUND):
                        await dispatch(frames[i % len(frames)], conn, broker)
                    best = min(best, (time.process_time() - began) / PER_ROUND * 1e6)
                    if profiler is not None:
                        profiler.disable()
                if profiler is not None and profile is not None:
                    profiler.dump_stats(profile)
                return best
            finally:
                server.stop()

    with tempfile.TemporaryDirectory(prefix="kgc-share-inprocess-") as root:
        return trio.run(run, root)
