"""Hypothesis state machine: a compacted Log under appends, overwrites, deletes (tombstones),
rolls, cleaning rounds (normal, forced, with a tiny offset map), clock moves, reads at any
offset, clean reopen and crash-after-fsync reopen, against a dict model. After every step:
every key's latest value is readable, no removed or overwritten value resurfaces, and every
record in the log is exactly the one written at its offset."""

from __future__ import annotations

import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from storage.batch import Record, decode_header, iter_records
from storage.cleaner import Cleaner, CleanerConfig
from storage.log import Log
from storage.offset_map import BYTES_PER_ENTRY
from tests.storage.helpers import FakeClock
from tests.storage.test_cleaner_helpers import compact_config

keys = st.sampled_from([b"a", b"b", b"c", b"d", b"e", b"f", b"g"])
values = st.binary(min_size=0, max_size=40)


class CleanerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="cleanersm-")
        self.clock = FakeClock()
        self.config = compact_config(segment_bytes=500, index_interval_bytes=96, delete_retention_ms=5_000)
        self.log = Log.open(self.dir, self.config, self.clock)
        self.model: dict[bytes, bytes] = {}  # live key -> value
        self.written: dict[int, tuple[bytes, bytes | None]] = {}  # offset -> (key, value)

    def teardown(self) -> None:
        self.log.abandon()
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- writes -------------------------------------------------------------------------------
    @rule(
        items=st.lists(st.tuples(keys, st.one_of(st.none(), values)), min_size=1, max_size=4),
        compression=st.sampled_from([0, 0, 4]),
    )
    def append(self, items, compression):
        base = self.log.append_records([Record(key=k, value=v) for k, v in items], compression=compression)
        for i, (k, v) in enumerate(items):
            self.written[base + i] = (k, v)
            if v is None:
                self.model.pop(k, None)
            else:
                self.model[k] = v

    @rule()
    def roll(self):
        self.log.roll()

    @rule(ms=st.integers(0, 8_000))
    def advance(self, ms):
        self.clock.advance(ms)

    # -- cleaning -----------------------------------------------------------------------------
    @rule(force=st.booleans(), tiny_map=st.booleans())
    def clean(self, force, tiny_map):
        size = 6 * BYTES_PER_ENTRY if tiny_map else 1 << 16  # 6 slots: rounds stop early
        stats = Cleaner(CleanerConfig(dedupe_buffer_size=size)).clean(self.log, force=force)
        if stats is not None:  # C3: below the round's end every key appears at most once
            below = [r.key for o, r in self._log_records() if o < stats.end_offset]
            assert len(below) == len(set(below))

    # -- reopen -------------------------------------------------------------------------------
    @rule(crash=st.booleans())
    def reopen(self, crash):
        if crash:
            self.log.flush()  # everything fsynced, then the process dies
            self.log.abandon()
        else:
            self.log.close()
        self.log = Log.open(self.dir, self.config, self.clock)

    # -- reads --------------------------------------------------------------------------------
    @rule(data=st.data())
    def read_at(self, data):
        end = self.log.log_end_offset
        if end == self.log.log_start_offset:
            return
        offset = data.draw(st.integers(self.log.log_start_offset, end - 1))
        expected = min((o for o, _ in self._log_records() if o >= offset), default=None)
        position, got = offset, None
        while got is None and position < end:
            raw = self.log.read(position, 1)
            h = decode_header(raw)
            got = next((r.offset for r in iter_records(raw[: h.size]) if r.offset >= offset), None)
            position = h.next_offset
        assert got == expected

    def _log_records(self):
        return [(r.offset, r) for r in self.log.iter_records()]

    # -- invariants ---------------------------------------------------------------------------
    @invariant()
    def log_matches_model(self):
        state: dict[bytes, bytes] = {}
        last_offset: dict[bytes, int] = {}
        prev = -1
        for offset, r in self._log_records():
            assert offset > prev
            prev = offset
            assert self.written[offset] == (r.key, r.value), f"offset {offset} altered"
            last_offset[r.key] = offset  # type: ignore[index]
            if r.value is None:
                state.pop(r.key, None)  # type: ignore[arg-type]
            else:
                state[r.key] = r.value  # type: ignore[index]
        assert state == self.model  # latest values readable, nothing resurfaces
        for key in self.model:  # the latest write of a live key is in the log
            latest = max(o for o, (k, _) in self.written.items() if k == key)
            assert last_offset[key] == latest
        assert self.log.log_end_offset == (max(self.written) + 1 if self.written else 0)


CleanerMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=40, derandomize=True, deadline=None)
TestCleanerMachine = CleanerMachine.TestCase
