"""RequestMemory (queued.max.request.bytes): the bound itself and its two budgets, deterministically.

Most tests use a capacity below the small-frame reserve's floor, so the whole capacity is the
small budget (frames of up to 100 bytes here); the last ones use sizes where both budgets exist."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from coordinator.net.request_memory import RequestMemory


def test_reservations_within_the_capacity_are_immediate():
    memory = RequestMemory(100)
    assert memory.try_reserve(60)
    assert memory.try_reserve(40)
    assert not memory.try_reserve(1)
    assert (memory.used, memory.peak) == (100, 100)
    memory.release(100)
    assert memory.used == 0


def test_a_frame_larger_than_the_capacity_passes_alone():
    memory = RequestMemory(100)
    assert memory.try_reserve(150)  # nothing else held: within socket.request.max.bytes, so let through
    assert not memory.try_reserve(1)
    memory.release(150)
    assert memory.try_reserve(1)


def test_no_bound_when_the_capacity_is_not_positive():
    memory = RequestMemory(-1)
    assert all(memory.try_reserve(1 << 30) for _ in range(8))


@pytest.mark.trio
async def test_waiters_are_granted_in_arrival_order_as_memory_comes_back():
    memory = RequestMemory(100)
    assert memory.try_reserve(90)
    granted: list[str] = []

    async def want(name: str, size: int) -> None:
        await memory.reserve(size)
        granted.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(want, "big", 80)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(want, "small", 5)  # would fit now, but must not overtake "big"
        await trio.testing.wait_all_tasks_blocked()
        assert granted == [] and memory.waiting == 2 and memory.used == 90
        memory.release(90)
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(granted) == ["big", "small"]  # both granted (which task runs first is trio's choice)
    assert memory.used == 85 and memory.peak == 90


@pytest.mark.trio
async def test_a_cancelled_waiter_leaves_no_reservation_and_unblocks_those_behind_it():
    memory = RequestMemory(100)
    assert memory.try_reserve(50)
    granted: list[int] = []

    async def want(size: int, scope: trio.CancelScope | None = None) -> None:
        await memory.reserve(size)
        granted.append(size)

    async with trio.open_nursery() as nursery:
        blocked = trio.CancelScope()

        async def cancellable() -> None:
            with blocked:
                await want(90)

        nursery.start_soon(cancellable)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(want, 40)  # fits, but queued behind the 90
        await trio.testing.wait_all_tasks_blocked()
        assert granted == []
        blocked.cancel()
        await trio.testing.wait_all_tasks_blocked()
    assert granted == [40] and memory.used == 90 and memory.waiting == 0


MIB = 1 << 20


def test_the_capacity_splits_into_a_small_reserve_and_a_large_budget():
    memory = RequestMemory(100 * MIB)
    assert memory.small_reserve == 100 * MIB // 8
    assert memory.try_reserve(87 * MIB)  # large frames share what the reserve leaves
    assert not memory.try_reserve(1 * MIB)  # 88 MiB of large frames would eat into the reserve
    assert all(memory.try_reserve(64 << 10) for _ in range(200))  # small frames: 12.5 MiB of their own
    assert not memory.try_reserve(64 << 10)
    assert memory.used == 87 * MIB + 200 * (64 << 10) <= memory.capacity


@pytest.mark.trio
async def test_small_frames_never_queue_behind_large_ones():
    """Issue 27: eight 90 MiB frames hold or wait for the large budget; heartbeats still pass."""
    memory = RequestMemory(100 * MIB)
    assert memory.try_reserve(90 * MIB)  # alone in its budget: let through (lone-frame rule)
    granted: list[int] = []

    async def want(size: int) -> None:
        await memory.reserve(size)
        granted.append(size)

    async with trio.open_nursery() as nursery:
        for _ in range(7):
            nursery.start_soon(want, 90 * MIB)
        await trio.testing.wait_all_tasks_blocked()
        assert memory.waiting == 7 and memory.waiting_small == 0
        assert memory.try_reserve(100)  # a heartbeat, at once
        await want(64 << 10)  # the largest small frame: no wait either
        assert granted == [64 << 10]
        memory.release(100)
        memory.release(64 << 10)
        for _ in range(8):  # the large frames pass one at a time, in arrival order
            assert memory.used == 90 * MIB and memory.peak <= 90 * MIB + 100 + (64 << 10)
            memory.release(90 * MIB)
            await trio.testing.wait_all_tasks_blocked()
    assert memory.used == 0 and memory.waiting == 0


@pytest.mark.trio
async def test_small_frames_wait_for_their_reserve_in_arrival_order():
    memory = RequestMemory(8 * MIB)  # reserve: 1 MiB
    assert memory.small_reserve == MIB
    assert all(memory.try_reserve(64 << 10) for _ in range(16))
    granted: list[str] = []

    async def want(name: str, size: int) -> None:
        await memory.reserve(size)
        granted.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(want, "first", 64 << 10)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(want, "second", 10)
        await trio.testing.wait_all_tasks_blocked()
        assert granted == [] and memory.waiting_small == 2
        assert memory.try_reserve(7 * MIB)  # the large budget is untouched by the small waiters
        memory.release(64 << 10)
        await trio.testing.wait_all_tasks_blocked()
        assert granted == ["first"]
        memory.release(64 << 10)
        await trio.testing.wait_all_tasks_blocked()
    assert granted == ["first", "second"]
