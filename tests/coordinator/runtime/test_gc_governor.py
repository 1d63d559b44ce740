"""The serving process's garbage-collector policy: a full collection on real growth, one of the
unfrozen objects every period."""

from __future__ import annotations

import gc
import weakref

import pytest
import trio

from coordinator.runtime.gc_governor import (
    NO_AUTOMATIC_FULL,
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


async def test_govern_walks_everything_when_the_process_grew_and_then_rebases(autojump_clock: object) -> None:
    sizes = iter([1_000, 1_100, 1_300, 1_300, 1_400, 1_600, 1_300])
    runs: list[tuple[str, float]] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, min_growth_bytes=0, collect_every_s=600)
    with trio.move_on_after(45):
        await govern(
            policy,
            measure=lambda: next(sizes),
            periodic=lambda: runs.append(("periodic", trio.current_time())),
            full=lambda: runs.append(("full", trio.current_time())),
        )
    # t=10: 1,100 (no); t=20: 1,300 > 1,250 → full, rebase on 1,300; t=30: 1,400 (no); t=40: 1,600 < 1,625 (no)
    assert runs == [("full", 20)]


async def test_govern_collects_the_unfrozen_every_period_the_process_did_not_grow(autojump_clock: object) -> None:
    sizes = iter([1_000] * 7 + [2_000] + [2_000] * 20)
    runs: list[tuple[str, float]] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, min_growth_bytes=0, collect_every_s=60)
    with trio.move_on_after(185):
        await govern(
            policy,
            measure=lambda: next(sizes),
            periodic=lambda: runs.append(("periodic", trio.current_time())),
            full=lambda: runs.append(("full", trio.current_time())),
        )
    # t=60 periodic; t=70 grew to 2,000: full (the period restarts); then periodic at 130 only
    assert runs == [("periodic", 60), ("full", 70), ("periodic", 130)]


def test_resident_bytes_reads_this_process() -> None:
    before = resident_bytes()
    block = bytearray(64 << 20)  # touched pages: resident
    assert resident_bytes() >= before + (48 << 20)
    del block


@pytest.fixture
def restore_gc():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_install_freezes_and_turns_automatic_full_collections_off(restore_gc: None) -> None:
    young, middle, _ = gc.get_threshold()
    install()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (young, middle, NO_AUTOMATIC_FULL)


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
