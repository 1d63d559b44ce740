"""The serving process's garbage-collector policy: full collections on real growth or a period."""

from __future__ import annotations

import gc
import weakref

import pytest
import trio

from coordinator.runtime.gc_governor import (
    NO_AUTOMATIC_FULL,
    GcPolicy,
    due,
    full_collection,
    govern,
    install,
    resident_bytes,
)


def test_due_on_growth_past_a_quarter_or_after_the_period() -> None:
    policy = GcPolicy(growth=1.25, min_growth_bytes=100, full_every_s=600)
    assert not due(1_250, 1_000, 10, policy)
    assert due(1_251, 1_000, 10, policy)
    assert not due(900, 1_000, 599, policy)  # shrinking never asks
    assert due(900, 1_000, 600, policy)
    assert not due(150, 100, 10, policy)  # half again, but only 50 bytes: not worth a collection
    assert due(250, 100, 10, policy)


async def test_govern_collects_when_the_oldest_generation_grew_and_then_rebases(autojump_clock: object) -> None:
    sizes = iter([1_000, 1_100, 1_300, 1_300, 1_400, 1_600, 1_300])
    collected: list[float] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, min_growth_bytes=0, full_every_s=600)
    with trio.move_on_after(45):
        await govern(policy, measure=lambda: next(sizes), collect=lambda: collected.append(trio.current_time()))
    # t=10: 1,100 (no); t=20: 1,300 > 1,250 → collect, rebase on 1,300; t=30: 1,400 (no); t=40: 1,600 < 1,625 (no)
    assert collected == [20]


async def test_govern_collects_every_period_without_growth(autojump_clock: object) -> None:
    collected: list[float] = []
    policy = GcPolicy(check_every_s=10, growth=1.25, full_every_s=60)
    with trio.move_on_after(185):
        await govern(policy, measure=lambda: 1_000, collect=lambda: collected.append(trio.current_time()))
    assert collected == [60, 120, 180]


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
