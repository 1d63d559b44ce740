"""A minimal Kafka client over a real socket, built on our own codec, for integration tests.

It speaks the protocol one frame at a time so tests can also send what no real client would
(truncated frames, garbage, unknown keys) and see exactly what comes back.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import trio

from protocol.codec import decode_response, encode_request
from protocol.headers import RequestHeader, decode_response_header, encode_request_header

_correlation = itertools.count(1)


class RawClient:
    def __init__(self, stream: trio.SocketStream, client_id: str | None = "raw-test") -> None:
        self.stream = stream
        self.client_id = client_id
        self._buffer = bytearray()

    @classmethod
    async def connect(cls, host: str, port: int) -> RawClient:
        return cls(await trio.open_tcp_stream(host, port))

    async def aclose(self) -> None:
        await self.stream.aclose()

    def encode(self, api_key: int, version: int, request: Any, correlation_id: int | None = None) -> tuple[int, bytes]:
        cid = next(_correlation) if correlation_id is None else correlation_id
        header = RequestHeader(api_key=api_key, api_version=version, correlation_id=cid, client_id=self.client_id)
        payload = encode_request_header(header) + encode_request(api_key, version, request)
        return cid, struct.pack(">i", len(payload)) + payload

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def receive_frame(self) -> bytes | None:
        """The next response payload, or None when the server closed the connection."""
        while True:
            if len(self._buffer) >= 4:
                size = struct.unpack_from(">i", self._buffer)[0]
                if len(self._buffer) >= 4 + size:
                    payload = bytes(self._buffer[4 : 4 + size])
                    del self._buffer[: 4 + size]
                    return payload
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                return None
            if not data:
                return None
            self._buffer += data

    async def request(self, api_key: int, version: int, request: Any) -> Any:
        cid, data = self.encode(api_key, version, request)
        await self.send_raw(data)
        return await self.read_response(api_key, version, cid)

    async def read_response(self, api_key: int, version: int, correlation_id: int) -> Any:
        payload = await self.receive_frame()
        assert payload is not None, "server closed the connection instead of answering"
        header, offset = decode_response_header(payload, api_key, version)
        assert header.correlation_id == correlation_id
        return decode_response(api_key, version, payload, offset)

    async def closed_by_server(self) -> bool:
        """True when the server closes without sending anything more."""
        return await self.receive_frame() is None
