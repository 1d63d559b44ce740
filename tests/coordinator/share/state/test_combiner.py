"""Kafka's PersisterStateBatchCombinerTest, case for case (name, current, new, expected, start
offset); each batch is (first, last, delivery state, delivery count). Kafka runs only the cases
it marks shouldRun; every case runs here, and each one holds."""

from __future__ import annotations

import pytest

from coordinator.share.persister import StateBatch
from coordinator.share.state.combiner import combine_state_batches

B = tuple[int, int, int, int]

CASES: list[tuple[str, list[B], list[B], list[B], int]] = [
    # corner cases
    ("Current batches with start offset midway are pruned.", [(100, 130, 0, 1)], [], [(120, 130, 0, 1)], 120),
    ("New batches with start offset midway are pruned.", [], [(100, 130, 0, 1)], [(120, 130, 0, 1)], 120),
    ("Both current and new batches empty.", [], [], [], 120),
    # same state
    ("Same state. Same first and last offset.", [(100, 110, 0, 1)], [(100, 110, 0, 1)], [(100, 110, 0, 1)], -1),
    (
        "Same state. Same first offset, new last smaller.",
        [(100, 110, 0, 1)],
        [(100, 105, 0, 1)],
        [(100, 110, 0, 1)],
        -1,
    ),
    ("Same state. Same first offset, new last larger.", [(100, 110, 0, 1)], [(100, 115, 0, 1)], [(100, 115, 0, 1)], -1),
    ("Same state. New inside current.", [(100, 110, 0, 1)], [(105, 108, 0, 1)], [(100, 110, 0, 1)], -1),
    ("Same state. New first larger, last equal.", [(100, 110, 0, 1)], [(105, 110, 0, 1)], [(100, 110, 0, 1)], -1),
    ("Same state. New first and last larger.", [(100, 110, 0, 1)], [(105, 115, 0, 1)], [(100, 115, 0, 1)], -1),
    ("Same state. Contiguous.", [(100, 110, 0, 1)], [(111, 115, 0, 1)], [(100, 115, 0, 1)], -1),
    # complex
    (
        "Handle overlapping batches in newBatches, same state",
        [(100, 110, 0, 1), (121, 130, 0, 1)],
        [(111, 119, 2, 2), (116, 123, 2, 2)],
        [(100, 110, 0, 1), (111, 123, 2, 2), (124, 130, 0, 1)],
        -1,
    ),
    (
        "Handle overlapping batches in newBatches, different priority.",
        [(100, 110, 0, 1)],
        [(101, 105, 1, 2), (101, 115, 2, 2), (101, 120, 3, 2)],
        [(100, 100, 0, 1), (101, 120, 3, 2)],
        -1,
    ),
    (
        "Handle overlapping batches in newBatches, with pruning.",
        [(100, 110, 0, 1), (121, 130, 0, 1)],
        [(111, 119, 2, 2), (116, 123, 2, 2)],
        [(120, 123, 2, 2), (124, 130, 0, 1)],
        120,
    ),
    (
        "Multiple higher state batch updates.",
        [(111, 120, 0, 1)],
        [(111, 113, 0, 2), (114, 114, 2, 1), (115, 119, 0, 2)],
        [(111, 113, 0, 2), (114, 114, 2, 1), (115, 119, 0, 2), (120, 120, 0, 1)],
        -1,
    ),
    # different states
    (
        "newBatch higher state. Same first and last offset.",
        [(100, 110, 0, 1)],
        [(100, 110, 0, 2)],
        [(100, 110, 0, 2)],
        -1,
    ),
    (
        "newBatch lower state. Same first and last offset.",
        [(100, 110, 0, 3)],
        [(100, 110, 0, 1)],
        [(100, 110, 0, 3)],
        -1,
    ),
    (
        "newBatch higher state. Same first, last smaller.",
        [(100, 110, 0, 1)],
        [(100, 105, 0, 2)],
        [(100, 105, 0, 2), (106, 110, 0, 1)],
        -1,
    ),
    ("newBatch lower state. Same first, last smaller.", [(100, 110, 0, 3)], [(100, 105, 0, 1)], [(100, 110, 0, 3)], -1),
    ("newBatch higher state. Same first, last larger.", [(100, 110, 0, 1)], [(100, 115, 0, 2)], [(100, 115, 0, 2)], -1),
    (
        "newBatch lower state. Same first, last larger.",
        [(100, 110, 0, 3)],
        [(100, 115, 0, 1)],
        [(100, 110, 0, 3), (111, 115, 0, 1)],
        -1,
    ),
    (
        "newBatch higher state. New inside current.",
        [(100, 115, 0, 1)],
        [(105, 110, 1, 1)],
        [(100, 104, 0, 1), (105, 110, 1, 1), (111, 115, 0, 1)],
        -1,
    ),
    ("newBatch lower state. New inside current.", [(100, 115, 1, 1)], [(105, 110, 0, 1)], [(100, 115, 1, 1)], -1),
    (
        "newBatch higher state. First larger, last same.",
        [(100, 110, 0, 1)],
        [(105, 110, 0, 2)],
        [(100, 104, 0, 1), (105, 110, 0, 2)],
        -1,
    ),
    ("newBatch lower state. First larger, last same.", [(100, 110, 0, 2)], [(105, 110, 0, 1)], [(100, 110, 0, 2)], -1),
    (
        "newBatch higher state. First and last larger.",
        [(100, 110, 0, 1)],
        [(105, 115, 0, 2)],
        [(100, 104, 0, 1), (105, 115, 0, 2)],
        -1,
    ),
    (
        "newBatch lower state. First and last larger.",
        [(100, 110, 0, 2)],
        [(105, 115, 0, 1)],
        [(100, 110, 0, 2), (111, 115, 0, 1)],
        -1,
    ),
]


def _batches(raw: list[B]) -> list[StateBatch]:
    return [StateBatch(first, last, state, count) for first, last, state, count in raw]


@pytest.mark.parametrize(("name", "current", "new", "expected", "start"), CASES, ids=[c[0] for c in CASES])
def test_combiner_matches_kafka(name: str, current: list[B], new: list[B], expected: list[B], start: int) -> None:
    assert combine_state_batches(_batches(current), _batches(new), start) == tuple(_batches(expected))


def test_result_is_sorted_and_disjoint_for_random_inputs() -> None:
    """Whatever goes in, what comes out is sorted, non-overlapping and covers every offset that
    went in (at or past the start offset), each with the highest-priority delivery info offered."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        raw = []
        for _ in range(rng.randint(0, 8)):
            first = rng.randint(0, 40)
            raw.append(StateBatch(first, first + rng.randint(0, 10), rng.choice((0, 2, 4)), rng.randint(1, 3)))
        start = rng.choice((-1, 5, 20))
        split = rng.randint(0, len(raw))
        out = combine_state_batches(raw[:split], raw[split:], start)
        for a, b in zip(out, out[1:], strict=False):
            assert a.last_offset < b.first_offset
        best: dict[int, tuple[int, int]] = {}
        for b in raw:
            for offset in range(max(b.first_offset, start), b.last_offset + 1):
                best[offset] = max(best.get(offset, (-1, -1)), (b.delivery_count, b.delivery_state))
        got = {o: (b.delivery_count, b.delivery_state) for b in out for o in range(b.first_offset, b.last_offset + 1)}
        assert got == best
