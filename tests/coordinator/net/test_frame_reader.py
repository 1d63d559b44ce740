"""FrameReader: frames out of the reads, the lone-whole-frame fast path, and waiting first once the
socket was drained (frame_reader.py)."""

from __future__ import annotations

import struct

import pytest
import trio

from coordinator.net.frame_reader import SCRATCH_BYTES, FrameReader
from coordinator.net.idle import ConnectionState
from coordinator.net.request_memory import RequestMemory
from coordinator.net.socket_io import RawSocket
from protocol.framing import FrameError


class ScriptedSocket(RawSocket):
    """A RawSocket whose reads return the scripted chunks; records how each read was asked for."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.fd = -1
        self.waited = False
        self.chunks = list(chunks)
        self.waits_first: list[bool] = []

    def recv_into_now(self, buffer: memoryview | bytearray) -> int | None:
        chunk = self.chunks.pop(0) if self.chunks else b""
        buffer[: len(chunk)] = chunk
        return len(chunk)

    async def recv_into(self, buffer: memoryview | bytearray, *, wait_first: bool = False) -> int:
        self.waits_first.append(wait_first)
        if wait_first:
            self.waited = True
        n = self.recv_into_now(buffer)
        assert n is not None
        return n


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def reader_for(
    chunks: list[bytes], max_frame: int = 1 << 20, *, plain: bool = True
) -> tuple[FrameReader, ScriptedSocket, ConnectionState]:
    sock = ScriptedSocket(chunks)
    state = ConnectionState(1, "test", 0.0)
    memory = RequestMemory(0)
    return FrameReader(sock, bytearray(SCRATCH_BYTES), max_frame, memory, state, wait_when_drained=plain), sock, state


async def test_lone_whole_frames_split_frames_and_the_end_of_the_stream():
    reader, sock, state = reader_for(
        [framed(b"one"), framed(b"two") + framed(b"three"), framed(b"four")[:5], framed(b"four")[5:]]
    )
    assert await reader.read() == [b"one"]
    assert await reader.read() == [b"two", b"three"]
    assert await reader.read() == [b"four"]  # its first bytes came in one read, the rest in the next
    assert state.frame_started is None
    assert await reader.read() is None
    # every read after one that left the socket drained waited for readability first
    assert sock.waits_first == [False, True, True, True, True]


async def test_a_tls_socket_never_waits_first():  # decrypted bytes may wait inside it, unseen by epoll
    reader, sock, _ = reader_for([framed(b"one"), framed(b"two")], plain=False)
    assert await reader.read() == [b"one"]
    assert await reader.read() == [b"two"]
    assert sock.waits_first == [False, False]


async def test_a_read_that_filled_the_buffer_reads_again_without_waiting():
    payloads = [bytes([i]) * 1000 for i in range(70)]  # 70 KB of whole frames: more than one read
    stream = b"".join(framed(p) for p in payloads)
    reader, sock, _ = reader_for([stream[:SCRATCH_BYTES], stream[SCRATCH_BYTES:]])
    got = await reader.read()
    got += await reader.read()
    assert got == payloads
    assert sock.waits_first == [False, False]  # the socket may hold more after a full read


@pytest.mark.parametrize("size", [-1, 2 << 20])
async def test_a_lone_frame_of_a_bad_size_is_refused(size: int):
    reader, _, _ = reader_for([struct.pack(">i", size) + b"x" * 8])
    with pytest.raises(FrameError):
        await reader.read()


async def test_a_frame_larger_than_the_limit_is_refused_even_when_it_is_whole():
    reader, _, _ = reader_for([framed(b"x" * 100)], max_frame=99)
    with pytest.raises(FrameError, match="exceeds the maximum 99"):
        await reader.read()
    await trio.lowlevel.checkpoint()
