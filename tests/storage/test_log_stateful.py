"""Hypothesis state machine: the Log against a list-of-batches model, through appends,
reads at any offset, rolls, flushes, clean reopen and crash-and-recover (with the unsynced
tail of the active segment optionally cut at a random byte)."""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from storage.batch import Record, decode_header, encode_batch, iter_records
from storage.log import Log
from tests.storage.helpers import FakeClock, small_config

values = st.one_of(st.none(), st.just(b""), st.binary(min_size=1, max_size=60))
keys = st.one_of(st.none(), st.binary(min_size=1, max_size=8))
headers = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.one_of(st.none(), st.binary(max_size=4))), max_size=2)
records = st.lists(st.tuples(keys, values, headers), min_size=1, max_size=5)


class LogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="logsm-")
        self.clock = FakeClock()
        self.config = small_config(segment_bytes=900, index_interval_bytes=128)
        self.log = Log.open(self.dir, self.config, self.clock)
        # Model: batches as (segment base, end position in segment, next offset,
        # [(offset, key, value, headers)])
        self.batches: list[tuple[int, int, int, list[tuple]]] = []
        self.next_offset = 0
        self.synced = (0, 0)  # (active segment base, bytes of it known to be fsynced)

    def teardown(self) -> None:
        self.log.abandon()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _note(self, rows: list[tuple], next_offset: int) -> None:
        seg = self.log.active_segment
        self.batches.append((seg.base_offset, seg.size, next_offset, rows))
        self.next_offset = next_offset

    def model_rows(self) -> list[tuple]:
        return [row for *_, rows in self.batches for row in rows]

    @rule(recs=records, compression=st.sampled_from([0, 0, 1, 4]))
    def append_records(self, recs, compression):
        self.clock.advance(7)
        base = self.log.append_records([Record(key=k, value=v, headers=h) for k, v, h in recs], compression=compression)
        assert base == self.next_offset
        self._note([(base + i, k, v, h) for i, (k, v, h) in enumerate(recs)], base + len(recs))

    @rule(recs=records, gap=st.integers(0, 3), tail=st.integers(0, 3))
    def append_client_batch_with_gaps(self, recs, gap, tail):
        """A client-built batch whose record offsets have gaps (as after compaction)."""
        deltas = [i * (gap + 1) for i in range(len(recs))]
        raw = encode_batch(
            9999,
            [Record(9999 + d, self.clock.time_ms(), k, v, h) for d, (k, v, h) in zip(deltas, recs)],
            last_offset_delta=deltas[-1] + tail,
        )
        base, last = self.log.append_batch(raw)
        assert (base, last) == (self.next_offset, self.next_offset + deltas[-1] + tail)
        self._note([(base + d, k, v, h) for d, (k, v, h) in zip(deltas, recs)], last + 1)

    @precondition(lambda self: self.next_offset > 0)
    @rule(data=st.data())
    def read_at_any_offset(self, data):
        offset = data.draw(st.integers(0, self.next_offset - 1))
        raw = self.log.read(offset, data.draw(st.integers(1, 2000)))
        h = decode_header(raw)
        assert h.last_offset >= offset
        got = [(r.offset, r.key, r.value, r.headers) for r in iter_records(raw[: h.size])]
        assert got == next(rows for *_, nxt, rows in self.batches if nxt > offset)

    @precondition(lambda self: self.next_offset > 0)
    @rule(data=st.data())
    def iter_from_any_offset(self, data):
        start = data.draw(st.integers(0, self.next_offset))
        got = [(r.offset, r.key, r.value, r.headers) for r in self.log.iter_records(start)]
        assert got == [row for row in self.model_rows() if row[0] >= start]

    @rule()
    def roll(self):
        self.log.roll()
        self.synced = (self.log.active_segment.base_offset, 0)

    @rule()
    def flush(self):
        self.log.flush()
        self.synced = (self.log.active_segment.base_offset, self.log.active_segment.size)

    @rule()
    def close_and_reopen(self):
        self.log.close()
        self.log = Log.open(self.dir, self.config, self.clock)
        assert self.log.load_result.clean_shutdown
        self.synced = (self.log.active_segment.base_offset, self.log.active_segment.size)

    @rule(cut=st.one_of(st.none(), st.floats(0, 1)))
    def crash_and_recover(self, cut):
        active = self.log.active_segment
        base, size = active.base_offset, active.size
        self.log.abandon()
        # Rolls fsync the old segment; in the active one only bytes past the last fsync may vanish.
        synced = self.synced[1] if self.synced[0] == base else 0
        if cut is not None:
            keep = synced + int((size - synced) * cut)
            os.truncate(os.path.join(self.dir, f"{base:020d}.log"), keep)
            self.batches = [b for b in self.batches if b[0] != base or b[1] <= keep]
            self.next_offset = self.batches[-1][2] if self.batches else 0
        self.log = Log.open(self.dir, self.config, self.clock)
        assert self.log.log_end_offset == self.next_offset
        assert not self.log.load_result.clean_shutdown
        assert self.model_rows() == [(r.offset, r.key, r.value, r.headers) for r in self.log.iter_records()]
        self.synced = (self.log.active_segment.base_offset, self.log.active_segment.size)

    @invariant()
    def offsets_agree(self):
        assert self.log.log_start_offset == 0
        assert self.log.log_end_offset == self.next_offset
        if self.batches:
            assert self.batches[-1][3][-1][0] < self.next_offset


TestLogMachine = LogMachine.TestCase
TestLogMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
