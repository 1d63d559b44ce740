"""storage.cleaner: what a round keeps, drops and rewrites (Kafka's LogCleaner rules), with
real files and an injected clock. Crash safety of the swap: test_cleaner_swap.py."""

from __future__ import annotations

import os

from storage.batch import Record, decode_header, encode_batch, iter_records, verify_crc
from storage.cleaner import CLEANER_CHECKPOINT_FILE, Cleaner, CleanerConfig, read_cleaner_checkpoint
from storage.log import Log
from storage.offset_map import BYTES_PER_ENTRY
from tests.storage.helpers import FakeClock
from tests.storage.test_cleaner_helpers import (
    batch_headers,
    check_compacted,
    check_structure,
    compact_config,
    latest,
    open_compacted,
    put,
    records,
)


def overwrite_rounds(log: Log, rounds: int, keys: int, tag: bytes = b"") -> None:
    for r in range(rounds):
        for k in range(keys):
            put(log, b"key-%d" % k, b"value-%d-%d%s" % (k, r, tag))


def test_latest_value_per_key_survives_with_its_offset(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock)
    overwrite_rounds(log, 5, 20)
    pre = records(log)
    active_bytes = log.read(log.active_segment.base_offset, 1 << 20)
    stats = Cleaner().clean(log)
    assert stats is not None and stats.end_offset == log.active_segment.base_offset
    post = records(log)
    check_compacted(pre, post, stats.end_offset)
    check_structure(log)
    assert len(post) < len(pre) and log.size_bytes < sum(len(r[3] or b"") for r in pre) * 3
    # Overwritten values are gone below the end; the active segment is byte-identical (C4).
    assert [r for r in post if r[0] < stats.end_offset and r[3].endswith(b"-0")] == []
    assert log.read(log.active_segment.base_offset, 1 << 20) == active_bytes
    # Reopening reads the same.
    log.close()
    assert records(open_compacted(tmp_path, clock)) == post


def test_offsets_are_never_renumbered_and_batch_envelopes_kept(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    for r in range(4):  # 3-record batches, one key per record rewritten every round
        log.append_records(
            [Record(key=b"a%d" % i, value=b"%d" % r) for i in range(3)],
            producer_id=7,
            producer_epoch=1,
            base_sequence=3 * r,
        )
    log.append_records([Record(key=b"a0", value=b"again")])  # a0 only: batch 3 partly kept
    log.roll()
    put(log, b"z", b"active")
    pre_headers = {h.base_offset: h for h in batch_headers(log)}
    pre = records(log)
    stats = Cleaner().clean(log, force=True)
    check_compacted(pre, records(log), stats.end_offset)
    for h in batch_headers(log):  # C5: same envelope and producer fields as some pre batch
        o = pre_headers[h.base_offset]
        assert (h.last_offset, h.producer_id, h.producer_epoch, h.base_sequence) == (
            o.last_offset,
            o.producer_id,
            o.producer_epoch,
            o.base_sequence,
        )
    rebuilt = [h for h in batch_headers(log) if h.base_offset == 9]
    assert rebuilt and rebuilt[0].records_count == 2 and rebuilt[0].last_offset == 11
    assert [(r[0], r[2]) for r in records(log) if 9 <= r[0] <= 11] == [(10, b"a1"), (11, b"a2")]
    assert log.log_end_offset == 14


def test_fully_retained_batches_are_copied_byte_for_byte(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    overwrite_rounds(log, 1, 30)
    raw_before = [d for seg in log.non_active_segments() for _, _, d in seg.iter_batches()]
    Cleaner().clean(log, force=True)
    raw_after = [d for seg in log.non_active_segments() for _, _, d in seg.iter_batches()]
    assert raw_after == raw_before


def test_compressed_partial_batch_is_rebuilt_with_its_codec(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    log.append_records([Record(key=b"k%d" % i, value=b"x" * 50) for i in range(6)], compression=4)
    log.append_records([Record(key=b"k%d" % i, value=b"y" * 50) for i in range(0, 6, 2)], compression=4)
    log.roll()
    put(log, b"tail", b"t")
    pre = records(log)
    Cleaner().clean(log, force=True)
    first = next(log.segments[0].iter_batches())[2]
    h = decode_header(first)
    assert h.compression == 4 and h.base_offset == 0 and h.last_offset == 5 and verify_crc(first)
    assert [r.offset for r in iter_records(first)] == [1, 3, 5]
    check_compacted(pre, records(log), 9)


def test_keyless_records_and_control_batches_are_kept(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    put(log, b"k", b"1")
    log.append_records([Record(key=None, value=b"no key")])
    control = encode_batch(
        0,
        [Record(key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x05", timestamp=1)],
        control=True,
        transactional=True,
        producer_id=3,
    )
    log.append_batch(control)
    put(log, b"k", b"2")
    log.roll()
    put(log, b"tail", b"t")
    Cleaner().clean(log, force=True)
    offsets = [(r[0], r[2]) for r in records(log)]
    assert offsets == [(1, None), (2, b"\x00\x00\x00\x01"), (3, b"k"), (4, b"tail")]


def test_tombstone_survives_first_cleaning_then_goes_after_delete_retention(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock, delete_retention_ms=10_000)
    overwrite_rounds(log, 2, 5)
    put(log, b"key-1", None)
    log.roll()
    put(log, b"other", b"o")
    cleaner = Cleaner()
    cleaner.clean(log, force=True)
    tomb = [h for h in batch_headers(log) if h.base_offset == 10]
    assert tomb and tomb[0].delete_horizon_ms == clock.now_ms + 10_000
    assert (10, None) in [(r[0], r[3]) for r in records(log)]
    assert b"key-1" not in {r[2] for r in records(log) if r[3] is not None}  # no resurrection
    clock.advance(9_999)  # horizon not reached: a second round keeps it
    cleaner.clean(log, force=True)
    assert (10, None) in [(r[0], r[3]) for r in records(log)]
    clock.advance(1)
    cleaner.clean(log, force=True)
    rows = records(log)
    assert 10 not in [r[0] for r in rows] and b"key-1" not in {r[2] for r in rows}
    assert {r[2] for r in rows} == {b"key-0", b"key-2", b"key-3", b"key-4", b"other"}


def test_min_compaction_lag_keeps_recent_segments_dirty(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock, min_compaction_lag_ms=60_000)
    overwrite_rounds(log, 3, 10)  # old segments
    old_end = log.log_end_offset
    clock.advance(120_000)
    overwrite_rounds(log, 3, 10, tag=b"-new")  # written "now": inside the lag
    first_new_seg = next(s for s in log.segments if s.next_offset > old_end)
    pre = records(log)
    stats = Cleaner().clean(log, force=True)
    assert stats.end_offset <= first_new_seg.base_offset
    post = records(log)
    assert [r for r in post if r[0] >= first_new_seg.base_offset] == [
        r for r in pre if r[0] >= first_new_seg.base_offset
    ]
    check_compacted(pre, post, stats.end_offset)
    clock.advance(120_000)  # now every segment is old enough
    stats = Cleaner().clean(log, force=True)
    assert stats.end_offset == log.active_segment.base_offset


def test_dirty_ratio_threshold(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock, min_cleanable_dirty_ratio=0.5)
    cleaner = Cleaner()
    overwrite_rounds(log, 4, 20)
    assert cleaner.cleanable(log).ratio == 1.0 and cleaner.needs_cleaning(log)
    assert cleaner.clean(log) is not None
    assert read_cleaner_checkpoint(str(tmp_path)) == log.active_segment.base_offset
    # A little new dirty data against a larger clean part: below the ratio, nothing happens.
    info = cleaner.cleanable(log)
    assert info.dirty_bytes == 0 and not cleaner.needs_cleaning(log)
    while cleaner.cleanable(log).dirty_bytes == 0:
        put(log, b"key-1", b"one more")
    info = cleaner.cleanable(log)
    assert 0 < info.ratio <= 0.5
    assert cleaner.clean(log) is None
    overwrite_rounds(log, 4, 20, tag=b"-more")
    assert cleaner.cleanable(log).ratio > 0.5
    assert cleaner.clean(log) is not None


def test_checkpoint_file_format_and_reopen(tmp_path):
    d = tmp_path / "__consumer_offsets-7"
    clock = FakeClock()
    log = open_compacted(d, clock)
    overwrite_rounds(log, 3, 10)
    Cleaner().clean(log)
    with open(d / CLEANER_CHECKPOINT_FILE) as f:
        assert f.read() == f"0\n1\n__consumer_offsets 7 {log.active_segment.base_offset}\n"
    log.close()
    log = open_compacted(d, clock)
    assert Cleaner().cleanable(log).first_dirty == log.active_segment.base_offset


def test_small_segments_are_grouped(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock)
    overwrite_rounds(log, 10, 8)
    n_before = len(log.non_active_segments())
    assert n_before >= 4
    stats = Cleaner().clean(log)
    # After the first round the survivors are small: a forced round packs them together.
    stats = Cleaner().clean(log, force=True)
    assert stats.segments_in > stats.segments_out == len(stats.groups)
    total = sum(s.size for s in log.non_active_segments())
    assert total <= log.config.segment_bytes and len(log.non_active_segments()) == 1
    check_structure(log)


def test_group_respects_segment_bytes(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    for k in range(40):  # unique keys: nothing to drop, so outputs are as big as inputs
        put(log, b"u%d" % k, b"v" * 60)
    stats = Cleaner().clean(log, force=True)
    for seg in log.non_active_segments():
        assert seg.size <= log.config.segment_bytes
    assert stats.segments_out == stats.segments_in  # each ~full segment alone in its group


def test_read_at_a_removed_offset_returns_the_next_record(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    overwrite_rounds(log, 3, 10)
    Cleaner().clean(log)
    kept = [r[0] for r in records(log)]
    removed = next(o for o in range(log.log_end_offset) if o not in kept)
    nxt = min(o for o in kept if o > removed)
    # A consumer fetching at `removed` gets the next record (empty batches kept by the
    # cleaner only move its position forward, as with Kafka).
    position, got = removed, None
    while got is None:
        raw = log.read(position, 1)
        assert raw, "ran off the log end"
        h = decode_header(raw)
        got = next((r.offset for r in iter_records(raw[: h.size]) if r.offset >= removed), None)
        position = h.next_offset
    assert got == nxt
    assert next(log.iter_records(removed)).offset == nxt


def test_appends_and_reads_continue_during_a_round(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock)
    overwrite_rounds(log, 4, 12)
    pre = records(log)
    round_ = Cleaner().start(log)
    round_.build_map()
    groups = round_.groups()
    assert len(groups) >= 2
    round_.clean_group(groups[0])
    put(log, b"key-3", b"during")  # append mid-round
    log.roll()
    put(log, b"key-4", b"during-2")
    assert log.read(0, 1 << 20)  # reads see the half-cleaned log
    mid = records(log)
    assert mid[-2:] == [r for r in mid if r[3] in (b"during", b"during-2")]
    for g in groups[1:]:
        round_.clean_group(g)
        assert records(log)[-1][3] == b"during-2"
    round_.finish()
    post = records(log)
    check_compacted(mid, post, round_.end)
    assert latest(post)[b"key-3"][1] == b"during" and latest(post)[b"key-0"] == latest(pre)[b"key-0"]
    log.close()
    assert records(open_compacted(tmp_path, clock)) == post


def test_bounded_map_cleans_up_to_where_it_fit_then_the_rest(tmp_path):
    clock = FakeClock()
    log = open_compacted(tmp_path, clock)
    for k in range(60):  # 60 distinct keys, then all rewritten
        put(log, b"key-%d" % k, b"first")
    for k in range(60):
        put(log, b"key-%d" % k, b"second")
    log.roll()
    pre = records(log)
    cleaner = Cleaner(CleanerConfig(dedupe_buffer_size=40 * BYTES_PER_ENTRY))  # 40 slots, 36 entries
    stats = cleaner.clean(log)
    assert stats.map_full and stats.map_entries == 36 and stats.end_offset == 36
    assert read_cleaner_checkpoint(str(tmp_path)) == 36
    post = records(log)
    check_compacted(pre, post, 36)
    # The first 36 keys' first values were not yet overwritten inside the mapped range.
    assert len(post) == len(pre)
    stats = cleaner.clean(log)  # next round: [36, 72), then the rest
    assert stats.end_offset == 72
    check_compacted(pre, records(log), 72)
    rounds = 2
    while cleaner.cleanable(log).dirty_bytes:  # below the ratio now: force the rest
        cleaner.clean(log, force=True)
        rounds += 1
    assert rounds == 4  # 120 offsets, 36 at a time
    post = records(log)
    assert len(post) == 60 and all(r[3] == b"second" for r in post)
    check_compacted(pre, post, 120)


def test_empty_batch_kept_for_its_producer_last_sequence(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    log.append_records([Record(key=b"p", value=b"1")], producer_id=42, producer_epoch=0, base_sequence=0)
    put(log, b"x", b"1")
    put(log, b"p", b"2")  # overwrites producer 42's only record
    put(log, b"x", b"2")
    log.roll()
    put(log, b"tail", b"t")
    Cleaner().clean(log, force=True)
    headers = {h.base_offset: h for h in batch_headers(log)}
    assert headers[0].records_count == 0 and headers[0].producer_id == 42
    assert headers[0].base_sequence == 0 and headers[0].last_offset == 0
    assert 1 not in headers  # an emptied batch of no producer is dropped
    # the group's last batch is always kept (it holds the segment's last offset)
    assert [r[0] for r in records(log)] == [2, 3, 4]


def test_policy_delete_logs_are_not_cleaned(tmp_path):
    log = Log.open(tmp_path, compact_config(cleanup_policy="delete"), FakeClock())
    overwrite_rounds(log, 3, 10)
    assert Cleaner().clean(log, force=True) is None
    assert not os.path.exists(tmp_path / CLEANER_CHECKPOINT_FILE)


def test_partial_batch_keeps_record_timestamps_and_recomputes_max(tmp_path):
    log = open_compacted(tmp_path, FakeClock())
    log.append_records(
        [
            Record(key=b"a", value=b"1", timestamp=1000),
            Record(key=b"b", value=b"1", timestamp=3000, headers=[("h", b"v")]),
            Record(key=b"c", value=b"1", timestamp=2000),
        ]
    )
    put(log, b"b", b"2")
    log.roll()
    put(log, b"tail", b"t")
    pre = records(log)
    Cleaner().clean(log, force=True)
    raw = next(log.segments[0].iter_batches())[2]
    h = decode_header(raw)
    assert verify_crc(raw) and h.records_count == 2 and h.last_offset == 2
    assert h.max_timestamp == 2000
    assert [(r.offset, r.timestamp) for r in iter_records(raw)] == [(0, 1000), (2, 2000)]
    check_compacted(pre, records(log), 4)


async def test_clean_in_thread_while_appending_and_reading(tmp_path):
    import trio

    clock = FakeClock()
    log = open_compacted(tmp_path, clock)
    overwrite_rounds(log, 6, 12)
    pre = records(log)
    appended = []

    async def appender():
        for i in range(30):
            appended.append(put(log, b"key-1", b"live-%d" % i))
            assert log.read(0, 1 << 16)
            await trio.sleep(0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(appender)
        stats = await Cleaner().clean_in_thread(log)
    assert stats is not None and stats.segments_in > 0
    post = records(log)
    assert latest(post)[b"key-1"] == (appended[-1], b"live-29")
    rows_pre = pre + [r for r in post if r[0] >= pre[-1][0] + 1]
    check_compacted(rows_pre, post, stats.end_offset)
    log.close()
    assert records(open_compacted(tmp_path, clock)) == post


def test_cleaned_log_passes_the_dump_checker(tmp_path):
    from storage.dump import check

    clock = FakeClock()
    log = open_compacted(tmp_path / "t-0", clock, index_interval_bytes=64)
    overwrite_rounds(log, 6, 15)
    put(log, b"key-2", None)
    log.roll()
    Cleaner(CleanerConfig(write_chunk_bytes=200)).clean(log)  # several chunks, several entries
    Cleaner(CleanerConfig(write_chunk_bytes=200)).clean(log, force=True)
    assert any(len(s.offset_index) for s in log.non_active_segments())
    log.close()
    assert check(tmp_path) == []


def test_a_round_on_a_log_closed_meanwhile_leaves_no_files(tmp_path):
    import pytest

    from storage.log import LogFailedError

    log = open_compacted(tmp_path, FakeClock())
    overwrite_rounds(log, 3, 10)
    round_ = Cleaner().start(log)
    round_.build_map()
    group = round_.groups()[0]
    new = round_.write_group(group)
    log.close()  # e.g. the partition was reloaded or its topic deleted
    with pytest.raises(LogFailedError):
        round_.swap_group(group, new)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".cleaned")]
