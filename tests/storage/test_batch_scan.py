"""storage.batch.scan: Frames over a buffer and over a file region (any chunk size) agree and stop
at the first bad batch with the right problem; the record walkers agree with iter_records."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.batch import (
    HEADER_SIZE,
    InvalidBatch,
    Record,
    assign_base_offset,
    encode_batch,
    frame_bounds,
    iter_records,
    whole_batches,
)
from storage.batch.record_walk import key_spans, record_spans, records_region
from storage.batch.scan import Frames


def batches(n: int, value: bytes = b"v" * 30) -> list[bytes]:
    return [encode_batch(i * 3, [Record(None, 10 + i, b"k%d" % j, value) for j in range(3)]) for i in range(n)]


def walk(source, **kw) -> tuple[list[tuple[int, int]], object]:
    frames = Frames(source, **kw)
    got = [(pos, fields[0]) for pos, buf, off, fields in frames if bytes(buf[off : off + fields[1] + 12])]
    return got, frames.problem


@pytest.mark.parametrize("chunk", [61, 100, 150, 1 << 20])
def test_fd_and_buffer_walks_agree_at_any_chunk_size(tmp_path, chunk):
    data = b"".join(batches(20))
    path = tmp_path / "x.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        by_fd = walk(fd, check_crc=True, chunk=chunk)
    finally:
        os.close(fd)
    by_buf = walk(data, check_crc=True)
    assert by_fd == by_buf
    assert [off for _, off in by_buf[0]] == [i * 3 for i in range(20)] and by_buf[1] is None


@pytest.mark.parametrize(
    "damage, reason, torn",
    [
        (lambda b, at: b[: at + 30], "torn tail: 30 bytes", True),
        (lambda b, at: b[: at + 70], "torn tail: batch of", True),
        (lambda b, at: b[: at + 16] + b"\x01" + b[at + 17 :], "bad magic 1", False),
        (lambda b, at: b[: at + 8] + (20).to_bytes(4, "big") + b[at + 12 :], "batch length 20 is too small", False),
        (lambda b, at: b[: at + 40] + bytes([b[at + 40] ^ 1]) + b[at + 41 :], "CRC-32C mismatch", False),
    ],
)
@pytest.mark.parametrize("by_fd", [False, True])
def test_the_walk_stops_at_the_first_bad_batch_and_says_why(tmp_path, damage, reason, torn, by_fd):
    good = batches(5)
    at = sum(len(b) for b in good[:3])
    data = damage(b"".join(good), at)
    if by_fd:
        path = tmp_path / "x.log"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            got, problem = walk(fd, check_crc=True, chunk=64)
        finally:
            os.close(fd)
    else:
        got, problem = walk(data, check_crc=True)
    assert [o for _, o in got] == [0, 3, 6]
    assert problem.position == at and problem.offset == 9 and problem.torn is torn
    assert problem.reason.startswith(reason)


def test_without_crc_check_a_corrupt_batch_is_handed_out():
    data = bytearray(b"".join(batches(3)))
    data[HEADER_SIZE + 5] ^= 1
    got, problem = walk(bytes(data))
    assert len(got) == 3 and problem is None


def test_a_region_ends_where_asked():
    data = b"".join(batches(4))
    size = len(batches(1)[0])
    got, problem = walk(data, start=size, end=3 * size)
    assert [o for _, o in got] == [3, 6] and problem is None


def test_frame_bounds_stop_at_a_partial_batch():
    data = b"".join(batches(3))
    assert [(p, b) for p, b, _ in frame_bounds(data[:-1])] == [(0, 0), (len(data) // 3, 3)]
    assert whole_batches(data[:-1]) == (2 * len(data) // 3, len(data) // 3)
    assert whole_batches(data) == (len(data), 2 * len(data) // 3)
    assert whole_batches(data[:5]) == (0, -1)


records = st.lists(
    st.builds(
        Record,
        st.none(),
        st.integers(0, 2**40),
        st.none() | st.binary(max_size=300),
        st.none() | st.binary(max_size=300),
        st.lists(st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=5)), max_size=2),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(records, st.sampled_from([0, 1, 4]))
def test_walkers_agree_with_iter_records(recs, codec):
    raw = assign_base_offset(encode_batch(0, recs, compression=codec), 1000)
    attrs = int.from_bytes(raw[21:23], "big")
    data, pos, end = records_region(raw, 0, len(raw), attrs)
    full = record_spans(data, pos, end, len(recs))
    keys = key_spans(data, pos, end, len(recs))
    decoded = list(iter_records(raw))
    assert [1000 + s[0] for s in full] == [r.offset for r in decoded] == [1000 + k[0] for k in keys]
    for (_, _, kp, kl, vp, vl, _, _, start), k, r in zip(full, keys, decoded):
        assert (None if kl < 0 else data[kp : kp + kl]) == r.key
        assert (None if vl < 0 else data[vp : vp + vl]) == r.value
        assert (None if k[2] < 0 else data[k[1] : k[1] + k[2]]) == r.key
        assert k[3] == (r.value is None) and k[4] == start


def test_record_walkers_reject_records_that_leave_their_batch():
    raw = bytearray(encode_batch(0, [Record(None, 1, b"k", b"value")] * 2))
    raw[HEADER_SIZE] = 0x7E  # the first record claims 63 bytes
    data, pos, end = records_region(bytes(raw), 0, len(raw), 0)
    with pytest.raises(InvalidBatch):
        record_spans(data, pos, end, 2)
    with pytest.raises(InvalidBatch):
        key_spans(data, pos, end, 2)
    with pytest.raises(InvalidBatch):
        list(iter_records(bytes(raw)))
