"""Kafka's PersisterStateBatchCombiner: current state batches + new ones -> one sorted list of
non-overlapping batches.

Batches wholly below the start offset are dropped and one straddling it is cut at it (when the
start offset is not -1). Then, in Kafka's TreeSet order (first offset, last offset, delivery
count, delivery state; equal batches collapse into one), the first overlapping pair, or adjacent
pair with the same delivery count and state, is combined until none is left: the same delivery
info merges into one batch; otherwise the batch of higher priority (higher delivery count, then
higher delivery state: compareBatchDeliveryInfo) keeps the offsets they share and the other keeps
the rest. Priority, not recency, decides an overlap, as in Kafka.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from coordinator.share.persister import StateBatch


def _order(b: StateBatch) -> tuple[int, int, int, int]:
    """PersisterStateBatch.compareTo."""
    return (b.first_offset, b.last_offset, b.delivery_count, b.delivery_state)


def _priority(b1: StateBatch, b2: StateBatch) -> int:
    """compareBatchDeliveryInfo: >0 when b1 wins, <0 when b2 wins, 0 when they are the same."""
    if b1.delivery_count != b2.delivery_count:
        return b1.delivery_count - b2.delivery_count
    return b1.delivery_state - b2.delivery_state


class _SortedBatches:
    """The TreeSet: distinct batches in `_order`."""

    def __init__(self, batches: Iterable[StateBatch]) -> None:
        self._keys: list[tuple[int, int, int, int]] = []
        self._items: list[StateBatch] = []
        for b in batches:
            self.add(b)

    def add(self, b: StateBatch) -> None:
        key = _order(b)
        i = bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            return
        self._keys.insert(i, key)
        self._items.insert(i, b)

    def remove(self, b: StateBatch) -> None:
        i = bisect_left(self._keys, _order(b))
        del self._keys[i], self._items[i]

    def take_prefix(self, n: int) -> list[StateBatch]:
        taken = self._items[:n]
        del self._keys[:n], self._items[:n]
        return taken

    def items(self) -> list[StateBatch]:
        return self._items


def combine_state_batches(
    so_far: Iterable[StateBatch], new: Iterable[StateBatch], start_offset: int
) -> tuple[StateBatch, ...]:
    """PersisterStateBatchCombiner(soFar, new, startOffset).combineStateBatches()."""
    combined = [*so_far, *new]
    if start_offset != -1:
        combined = [
            b
            if b.first_offset >= start_offset
            else StateBatch(start_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in combined
            if b.last_offset >= start_offset
        ]
    if len(combined) < 2:
        return tuple(combined)
    batches = _SortedBatches(combined)
    final: list[StateBatch] = []
    while (pair := _merge_candidates(batches, final)) is not None:
        prev, candidate = pair
        batches.remove(prev)
        batches.remove(candidate)
        for b in _combine_pair(prev, candidate):
            batches.add(b)
    final.extend(batches.items())
    return tuple(final)


def _merge_candidates(batches: _SortedBatches, final: list[StateBatch]) -> tuple[StateBatch, StateBatch] | None:
    """getMergeCandidatePair: the first overlapping (or adjacent and alike) pair; the batches
    before it can never merge again and move to `final`."""
    items = batches.items()
    if not items:
        return None
    for i in range(1, len(items)):
        prev, candidate = items[i - 1], items[i]
        if candidate.first_offset <= prev.last_offset or (
            prev.last_offset + 1 == candidate.first_offset and _priority(prev, candidate) == 0
        ):
            final.extend(batches.take_prefix(i - 1))
            return prev, candidate
    final.extend(batches.take_prefix(len(items) - 1))
    return None


def _combine_pair(prev: StateBatch, cand: StateBatch) -> list[StateBatch]:
    """What replaces an overlapping (or adjacent and alike) pair; prev sorts before cand."""
    wins = _priority(cand, prev)
    if wins == 0:  # handleSameStateMerge
        return [
            StateBatch(
                prev.first_offset, max(prev.last_offset, cand.last_offset), prev.delivery_state, prev.delivery_count
            )
        ]

    def prev_part(first: int, last: int) -> StateBatch:
        return StateBatch(first, last, prev.delivery_state, prev.delivery_count)

    def cand_part(first: int, last: int) -> StateBatch:
        return StateBatch(first, last, cand.delivery_state, cand.delivery_count)

    if cand.first_offset == prev.first_offset:  # handleDiffStateOverlapFirstOffsetAligned
        if cand.last_offset == prev.last_offset:
            return [cand]  # the TreeSet order puts the higher priority last
        if wins < 0:
            return [prev, cand_part(prev.last_offset + 1, cand.last_offset)]
        return [cand]
    if cand.last_offset < prev.last_offset:  # prev swallows candidate
        if wins < 0:
            return [prev]
        return [
            prev_part(prev.first_offset, cand.first_offset - 1),
            cand,
            prev_part(cand.last_offset + 1, prev.last_offset),
        ]
    if cand.last_offset == prev.last_offset:  # last offsets aligned
        if wins < 0:
            return [prev]
        return [prev_part(prev.first_offset, cand.first_offset - 1), cand]
    if wins < 0:  # candidate reaches further
        return [prev, cand_part(prev.last_offset + 1, cand.last_offset)]
    return [prev_part(prev.first_offset, cand.first_offset - 1), cand]


__all__ = ["combine_state_batches"]
