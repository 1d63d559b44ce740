"""Sans-IO frame splitter: `int32 Size` + `Size` bytes (protocol.md §1.1).

`FrameDecoder.feed()` takes whatever bytes arrived and returns the complete frame payloads (the
bytes after the size prefix). A negative size or one above `max_frame_size` raises `FrameError`
as soon as the 4 size bytes are in, before any of the frame is buffered, so the decoder never
holds more than one maximal frame plus its 4-byte prefix between calls. After a `FrameError`
the stream is out of sync: every later `feed()` raises again, and the caller closes the socket.
"""

from __future__ import annotations

import struct

DEFAULT_MAX_FRAME_SIZE = 104857600  # Kafka's socket.request.max.bytes default

_SIZE = struct.Struct(">i")


class FrameError(ValueError):
    """The stream announced a frame that must not be read (negative or too large).

    `frames` holds the complete frames that came before the bad size in the same feed."""

    def __init__(self, message: str, frames: list[bytes] | None = None) -> None:
        super().__init__(message)
        self.frames: list[bytes] = frames if frames is not None else []


def frame(*parts: bytes) -> bytes:
    """Prefix the concatenation of `parts` (e.g. response header and body) with its int32 size,
    copying each part once."""
    return b"".join((_SIZE.pack(sum(map(len, parts))), *parts))


def frame_response(head: bytes, body: bytes) -> bytes:
    """`frame(head, body)` for the one call per response: the size prefix, then both parts."""
    return b"".join((_SIZE.pack(len(head) + len(body)), head, body))


class FrameDecoder:
    __slots__ = ("_buf", "_error", "max_frame_size")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_frame_size < 0:
            raise ValueError("max_frame_size must be >= 0")
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._error: str | None = None

    @property
    def buffered(self) -> int:
        """Bytes held back waiting for the rest of a frame."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        if self._error is not None:
            raise FrameError(self._error)
        buf = self._buf
        if buf:
            buf += data
            src: bytes | bytearray = buf
        else:
            src = data
        n = len(src)
        pos = 0
        frames: list[bytes] = []
        unpack_from = _SIZE.unpack_from
        limit = self.max_frame_size
        error = None
        with memoryview(src) as view:
            while n - pos >= 4:
                (size,) = unpack_from(view, pos)
                if size < 0 or size > limit:
                    error = (
                        f"negative frame size {size}" if size < 0 else f"frame size {size} exceeds the maximum {limit}"
                    )
                    break
                end = pos + 4 + size
                if end > n:
                    break
                frames.append(bytes(view[pos + 4 : end]))
                pos = end
            if error is None and src is not buf and pos < n:
                buf += view[pos:]
        # the view is released: the bytearray may shrink now
        if error is not None:
            self._error = error
            buf.clear()
            raise FrameError(error, frames)  # with the complete frames that preceded the bad size
        if src is buf and pos:
            del buf[:pos]
        return frames
