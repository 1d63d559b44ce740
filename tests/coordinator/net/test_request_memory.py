"""RequestMemory (queued.max.request.bytes): the bound itself, deterministically."""

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
