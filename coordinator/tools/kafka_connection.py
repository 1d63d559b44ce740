"""One blocking connection to one Kafka broker, for the command-line tools (kafka_client.py).

It opens with ApiVersions v0 (which every broker answers) and then sends each request at the
highest version both sides know, capped where the tools only build the older request layout
(`_CAPS`). Requests go one at a time; a response whose correlation id does not match is a
ConnectionError. Kafka errors raise `KafkaError`, named by the error's Kafka name.
"""

from __future__ import annotations

import itertools
import socket
import struct
from collections.abc import Callable
from typing import Any

from protocol.api import ApiKey
from protocol.codec import decode_response, encode_request, message_module, message_schema
from protocol.errors import ErrorCode
from protocol.headers import RequestHeader, decode_response_header, encode_request_header

__all__ = ["Connection", "KafkaError", "error_name"]

# Highest versions whose request layout this client builds (newer ones add topic ids etc.).
_CAPS = {
    ApiKey.OFFSET_FETCH: 9,
    ApiKey.OFFSET_COMMIT: 9,
    ApiKey.FIND_COORDINATOR: 6,
    ApiKey.METADATA: 12,
    ApiKey.LIST_OFFSETS: 7,
    ApiKey.DESCRIBE_GROUPS: 5,
    ApiKey.LIST_GROUPS: 5,
    ApiKey.DELETE_GROUPS: 2,
    ApiKey.OFFSET_DELETE: 0,
}


class KafkaError(Exception):
    def __init__(self, code: int, context: str = "") -> None:
        self.code = code
        self.name = error_name(code)
        super().__init__(f"{context}: {self.name}" if context else self.name)


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


class Connection:
    """One socket to one broker; requests are sent one at a time."""

    def __init__(self, host: str, port: int, client_id: str, timeout: float) -> None:
        self.host, self.port = host, port
        self.client_id = client_id
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self._ids = itertools.count(1)
        self.versions: dict[int, tuple[int, int]] = {}
        api = self.send(ApiKey.API_VERSIONS, 0, message_module(ApiKey.API_VERSIONS).ApiVersionsRequest())
        if api.error_code:
            raise KafkaError(api.error_code, "ApiVersions")
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in api.api_keys}

    def version(self, key: ApiKey) -> int:
        """The highest version both this client and the broker speak."""
        low, high = message_schema(key, False).versions
        high = min(high, _CAPS.get(key, high))
        if key not in self.versions:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"the broker does not serve {key.name}")
        broker_low, broker_high = self.versions[key]
        if max(low, broker_low) > min(high, broker_high):
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"no common {key.name} version")
        return min(high, broker_high)

    def request(self, key: ApiKey, build: Callable[[int], Any]) -> tuple[int, Any]:
        """Send `build(version)` at the best version; returns (version, decoded response)."""
        version = self.version(key)
        return version, self.send(key, version, build(version))

    def send(self, key: int, version: int, body: Any) -> Any:
        cid = next(self._ids)
        header = RequestHeader(int(key), version, cid, self.client_id)
        payload = encode_request_header(header) + encode_request(key, version, body)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        (size,) = struct.unpack(">i", self._read(4))
        frame = self._read(size)
        head, offset = decode_response_header(frame, key, version)
        if head.correlation_id != cid:
            raise ConnectionError(f"correlation id {head.correlation_id} != {cid}")
        return decode_response(key, version, frame, offset)

    def _read(self, n: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            chunk = self.sock.recv(n - len(chunks))
            if not chunk:
                raise ConnectionError(f"{self.host}:{self.port} closed the connection")
            chunks += chunk
        return bytes(chunks)

    def close(self) -> None:
        self.sock.close()
