"""FrameReader: frames out of the reads, including the lone-whole-frame fast path (frame_reader.py)."""

from __future__ import annotations

import struct

import pytest

from coordinator.net.frame_reader import SCRATCH_BYTES, FrameReader
from coordinator.net.idle import ConnectionState
from coordinator.net.request_memory import RequestMemory
from coordinator.net.socket_io import RawSocket
from protocol.framing import FrameError


class ScriptedSocket(RawSocket):
    """A RawSocket whose reads return the scripted chunks, then the end of the stream."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.fd = -1
        self.waited = False
        self.chunks = list(chunks)

    def recv_into_now(self, buffer: memoryview | bytearray) -> int | None:
        chunk = self.chunks.pop(0) if self.chunks else b""
        buffer[: len(chunk)] = chunk
        return len(chunk)


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def reader_for(chunks: list[bytes], max_frame: int = 1 << 20) -> tuple[FrameReader, ConnectionState]:
    state = ConnectionState(1, "test", 0.0)
    return FrameReader(ScriptedSocket(chunks), bytearray(SCRATCH_BYTES), max_frame, RequestMemory(0), state), state


async def test_lone_whole_frames_split_frames_and_the_end_of_the_stream():
    reader, state = reader_for(
        [framed(b"one"), framed(b"two") + framed(b"three"), framed(b"four")[:5], framed(b"four")[5:]]
    )
    assert await reader.read() == [b"one"]
    assert await reader.read() == [b"two", b"three"]
    assert await reader.read() == [b"four"]  # its first bytes came in one read, the rest in the next
    assert state.frame_started is None
    assert await reader.read() is None


async def test_a_frame_split_after_its_size_starts_the_stalled_frame_clock():
    reader, state = reader_for([framed(b"one") + framed(b"two")[:6]])
    assert await reader.read() == [b"one"]
    assert state.frame_started is not None  # "two" is still arriving


async def test_reads_that_fill_the_buffer_keep_their_frames_whole():
    payloads = [bytes([i]) * 1000 for i in range(70)]  # 70 KB of whole frames: more than one read
    stream = b"".join(framed(p) for p in payloads)
    reader, _ = reader_for([stream[:SCRATCH_BYTES], stream[SCRATCH_BYTES:]])
    got = await reader.read()
    got += await reader.read()
    assert got == payloads


@pytest.mark.parametrize("size", [-1, 2 << 20])
async def test_a_lone_frame_of_a_bad_size_is_refused(size: int):
    reader, _ = reader_for([struct.pack(">i", size) + b"x" * 8])
    with pytest.raises(FrameError):
        await reader.read()


async def test_a_whole_frame_larger_than_the_limit_is_refused():
    reader, _ = reader_for([framed(b"x" * 100)], max_frame=99)
    with pytest.raises(FrameError, match="exceeds the maximum 99"):
        await reader.read()
