"""connections.max.idle.ms: idle connections and frames still arriving are closed (idle.py)."""

from __future__ import annotations

import pytest

from coordinator.net.idle import ConnectionState, ConnectionWatch


def state(now: float = 0.0) -> ConnectionState:
    return ConnectionState(1, "127.0.0.1", now)


def test_an_idle_connection_expires_after_max_idle():
    s = state()
    assert s.expired(0.9, 1.0) is None
    assert s.expired(1.1, 1.0) == "idle"


def test_a_frame_still_arriving_expires_however_recently_bytes_came():
    s = state()
    s.frame_started = 0.0
    s.last_active = 1.05  # a byte just arrived: a slow-loris sender keeps the socket "active"
    assert s.expired(1.1, 1.0) == "frame still arriving after connections.max.idle.ms"


def test_busy_connections_and_those_waiting_for_memory_never_expire():
    s = state()
    s.busy = True  # a parked JoinGroup
    assert s.expired(100.0, 1.0) is None
    s.busy, s.waiting_memory, s.frame_started = False, True, 0.0
    assert s.expired(100.0, 1.0) is None


@pytest.mark.trio
async def test_the_watch_closes_expired_connections_only():
    watch = ConnectionWatch(1000)
    old, fresh = state(0.0), state(5.0)
    watch.add(old)
    watch.add(fresh)
    assert watch.sweep(5.5) == 1
    assert old.closed_because == "idle" and old.scope.cancel_called
    assert fresh.closed_because is None and not fresh.scope.cancel_called
    assert watch.connections == {fresh}
