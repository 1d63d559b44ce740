"""The serving process's garbage-collector policy: a collection of the unfrozen objects on growth
and every period, a full one when the process doubled."""

from __future__ import annotations

import gc
import weakref

import pytest
import trio

from coordinator.runtime.gc_governor import (
    GcPolicy,
    full_collection,
    govern,
    grown,
    install,
    periodic_collection,
    resident_bytes,
)


def test_grown_past_a_quarter_and_the_minimum() -> None:
    policy = GcPolicy(growth=1.25, min_growth_bytes=100)
    assert not grown(1_250, 1_000, policy)
    assert grown(1_251, 1_000, policy)
    assert not grown(900, 1_000, policy)  # shrinking never asks
    assert not grown(150, 100, policy)  # half again, but only 50 bytes: not worth a collection
    assert grown(250, 100, policy)


async def test_govern_walks_what_is_new_on_growth_and_everything_when_doubled(autojump_clock: object) -> None:
    def size_at(t: float) -> int:  # resident bytes by time: grows, then doubles, then flat
        return 1_000 if t < 20 else 1_300 if t < 40 else 1_700 if t < 50 else 2_100

    runs: list[tuple[str, float]] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, min_growth_bytes=0, full_growth=2.0, collect_every_s=600)
    with trio.move_on_after(75):
        await govern(
            policy,
            measure=lambda: size_at(trio.current_time()),
            periodic=lambda: runs.append(("periodic", trio.current_time())),
            full=lambda: runs.append(("full", trio.current_time())),
        )
    # t=20: 1,300 > 1,250 → periodic, rebased on 1,300; t=40: 1,700 > 1,625 → periodic again;
    # t=50: 2,100 > 2 x 1,000 (the last full: the start) → full; t=60, 70: flat, nothing
    assert runs == [("periodic", 20), ("periodic", 40), ("full", 50)]


async def test_govern_collects_the_unfrozen_every_period_the_process_did_not_grow(autojump_clock: object) -> None:
    runs: list[tuple[str, float]] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, min_growth_bytes=0, full_growth=2.5, collect_every_s=60)
    with trio.move_on_after(185):
        await govern(
            policy,
            measure=lambda: 1_000 if trio.current_time() < 70 else 2_000,
            periodic=lambda: runs.append(("periodic", trio.current_time())),
            full=lambda: runs.append(("full", trio.current_time())),
        )
    # t=60 the period; t=70 grew to 2,000 (under 2.5 x): periodic, the period restarts; then 130
    assert runs == [("periodic", 60), ("periodic", 70), ("periodic", 130)]


def test_resident_bytes_reads_this_process() -> None:
    before = resident_bytes()
    block = bytearray(64 << 20)  # touched pages: resident
    assert resident_bytes() >= before + (48 << 20)
    del block


@pytest.fixture
def restore_gc():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_install_freezes_and_turns_automatic_collections_off(restore_gc: None) -> None:
    install()
    assert gc.get_freeze_count() > 0
    assert not gc.isenabled()


def test_a_full_collection_frees_cyclic_garbage_that_was_frozen(restore_gc: None) -> None:
    class Node:
        pass

    node = Node()
    node.self = node  # type: ignore[attr-defined]
    alive = weakref.ref(node)
    install()
    del node
    gc.collect()
    assert alive() is not None  # frozen: the ordinary collections never look at it
    full_collection()
    assert alive() is None
    assert gc.get_freeze_count() > 0  # the survivors are frozen again


def test_a_periodic_collection_frees_new_cyclic_garbage_but_not_frozen(restore_gc: None) -> None:
    class Node:
        pass

    old = Node()
    old.self = old  # type: ignore[attr-defined]
    old_alive = weakref.ref(old)
    install()  # `old` frozen, as what start-up built is
    del old
    fresh = Node()
    fresh.self = fresh  # type: ignore[attr-defined]
    fresh_alive = weakref.ref(fresh)
    del fresh
    periodic_collection()
    assert fresh_alive() is None  # made since the freeze: freed
    assert old_alive() is not None  # frozen: left for a full collection, which frees it
    full_collection()
    assert old_alive() is None


def test_new_cycles_wait_for_the_governor_not_for_allocations(restore_gc: None) -> None:
    class Node:
        pass

    install()
    node = Node()
    node.self = node  # type: ignore[attr-defined]
    alive = weakref.ref(node)
    del node
    keep = [[] for _ in range(10 * gc.get_threshold()[0])]  # past every automatic threshold
    assert alive() is not None  # no automatic collection walked it
    periodic_collection()
    assert alive() is None
    del keep
