"""FrameDecoder: split frames across feeds, many per feed, bounded buffering, bad sizes."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.framing import FrameDecoder, FrameError, frame, frame_response


def test_frame_adds_size_prefix() -> None:
    assert frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert frame(b"") == b"\x00\x00\x00\x00"


def test_frame_response_frames_header_and_body() -> None:
    assert frame_response(b"head", b"body!") == frame(b"head", b"body!") == b"\x00\x00\x00\x09headbody!"
    assert frame_response(b"\x00\x00\x00\x07", b"") == b"\x00\x00\x00\x04\x00\x00\x00\x07"


def test_one_frame_one_feed() -> None:
    d = FrameDecoder()
    assert d.feed(frame(b"hello")) == [b"hello"]
    assert d.buffered == 0


def test_many_frames_in_one_feed() -> None:
    payloads = [b"a", b"", b"bc" * 100, bytes(range(256))]
    d = FrameDecoder()
    assert d.feed(b"".join(frame(x) for x in payloads)) == payloads
    assert d.buffered == 0


def test_frame_split_at_every_position() -> None:
    stream = frame(b"first") + frame(b"second!") + frame(b"")
    for cut in range(len(stream) + 1):
        d = FrameDecoder()
        got = d.feed(stream[:cut]) + d.feed(stream[cut:])
        assert got == [b"first", b"second!", b""]
        assert d.buffered == 0


def test_byte_by_byte() -> None:
    stream = frame(b"xyz") * 3
    d = FrameDecoder()
    got = []
    for i in range(len(stream)):
        got += d.feed(stream[i : i + 1])
    assert got == [b"xyz"] * 3


@given(st.lists(st.binary(max_size=50), max_size=8), st.lists(st.integers(0, 400), max_size=10))
def test_any_split(payloads: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(frame(p) for p in payloads)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    d = FrameDecoder()
    got = []
    for a, b in itertools.pairwise(points):
        got += d.feed(stream[a:b])
    assert got == payloads
    assert d.buffered == 0


def test_partial_frame_is_buffered_and_feed_accepts_bytearray_and_memoryview() -> None:
    d = FrameDecoder()
    assert d.feed(bytearray(frame(b"abcdef")[:7])) == []
    assert d.buffered == 7
    assert d.feed(memoryview(frame(b"abcdef")[7:] + frame(b"z"))) == [b"abcdef", b"z"]


def test_oversize_frame_is_rejected_before_buffering() -> None:
    d = FrameDecoder(max_frame_size=10)
    assert d.feed(frame(b"x" * 10)) == [b"x" * 10]
    with pytest.raises(FrameError, match="exceeds"):
        d.feed(struct.pack(">i", 11))
    assert d.buffered == 0
    with pytest.raises(FrameError):  # the stream is out of sync for good
        d.feed(frame(b"ok"))


def test_oversize_frame_after_good_frames_in_same_feed() -> None:
    d = FrameDecoder(max_frame_size=100)
    with pytest.raises(FrameError) as info:
        d.feed(frame(b"ok") + struct.pack(">i", 101) + b"zz")
    assert info.value.frames == [b"ok"]


def test_negative_size() -> None:
    d = FrameDecoder()
    with pytest.raises(FrameError, match="negative"):
        d.feed(b"\xff\xff\xff\xff")
    d = FrameDecoder()
    assert d.feed(b"\x80\x00") == []
    with pytest.raises(FrameError):
        d.feed(b"\x00\x00")


def test_default_max_is_kafkas() -> None:
    assert FrameDecoder().max_frame_size == 104857600
    d = FrameDecoder()
    with pytest.raises(FrameError):
        d.feed(struct.pack(">i", 104857601))


def test_buffer_never_exceeds_one_max_frame() -> None:
    limit = 1000
    d = FrameDecoder(max_frame_size=limit)
    chunk = frame(b"q" * limit)
    peak = 0
    for i in range(0, len(chunk) * 3, 97):
        stream = chunk * 3
        d.feed(stream[i : i + 97])
        peak = max(peak, d.buffered)
    assert peak <= limit + 4


def test_invalid_max() -> None:
    with pytest.raises(ValueError):
        FrameDecoder(max_frame_size=-1)


def test_frame_of_several_parts_is_the_frame_of_their_concatenation():
    assert frame(b"head", b"", b"body") == frame(b"headbody") == b"\x00\x00\x00\x08headbody"
