"""The ApiVersions answers of a server that is not built yet, for the early responder (early_responder.py).

`EarlyAnswers(share_enabled)` answers one request frame as the full server answers it on a
PLAINTEXT listener of a fresh `kgc serve` (net/dispatch.py and handlers/k18_api_versions.py): the
served table of features.py at generation 0, the features, KIP-511's v0 body for a version above
the maximum, INVALID_REQUEST for a v3+ software name Kafka's pattern refuses, response header v0.
The bodies are encoded here by hand: importing the codec and generating its encoder costs ~40 ms
of the first answer. Anything this module does not read with certainty (another API, a header or
body with tagged fields, a non-ASCII or null string, a truncated frame) gets None: that frame is
the server's. tests/coordinator/net/test_early_answers.py compares the answers with the server's
byte for byte. Imports only the standard library and light tables.
"""

from __future__ import annotations

import re
import struct
from typing import NamedTuple

from coordinator.cluster.features import FINALIZED_FEATURES_EPOCH, advertised, served_versions
from protocol.api import SUPPORTED_VERSIONS

API_VERSIONS = 18
FIRST_FLEXIBLE = 3  # ApiVersions v3+: request header v2, compact body (protocol/api.py)
HIGHEST_READABLE = 4  # the request versions this module can read (the codec's 0-4)
NONE, UNSUPPORTED_VERSION, INVALID_REQUEST = 0, 35, 42

# Kafka's ApiVersionsRequest.isValid: SOFTWARE_NAME_VERSION_PATTERN.matcher(...).matches(), a
# whole-string match (fullmatch: `$` would also accept a trailing newline). k18 uses it too.
CLIENT_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_SIZE = struct.Struct(">i")
_RANGE = struct.Struct(">hhh")
_PAIR = struct.Struct(">hh")


class Answer(NamedTuple):
    response: bytes  # the whole response frame: size, header v0, body
    software: tuple[str, str] | None  # (name, version) a valid v3+ request named (KIP-714 selectors)


class EarlyAnswers:
    def __init__(self, share_enabled: bool) -> None:
        """`share_enabled`: share groups are served (group.share.enable, not --processes)."""
        self._share = share_enabled
        self._table = sorted(served_versions(SUPPORTED_VERSIONS, share_enabled).items())
        self._low, self._high = dict(self._table)[API_VERSIONS]
        self._bodies: dict[tuple[int, int], bytes] = {}

    def answer(self, frame: bytes) -> Answer | None:
        """The answer to one request frame (without its size), or None: the frame is the server's."""
        if len(frame) < _HEADER.size:
            return None
        key, version, correlation_id, client_id = _HEADER.unpack_from(frame)
        if key != API_VERSIONS or version < self._low or client_id < -1:
            return None  # another API, or one the server closes the connection on
        pos = _HEADER.size + max(client_id, 0)
        if version > self._high:  # KIP-511: a v0 body, whatever was asked, the body not read
            if version >= FIRST_FLEXIBLE and frame[pos : pos + 1] != b"\x00":
                return None  # header tagged fields (or a truncated header): the server reads them
            return self._framed(correlation_id, 0, UNSUPPORTED_VERSION, None)
        if version < FIRST_FLEXIBLE:
            # No body fields; bytes after the header are ignored, as Kafka ignores them.
            return self._framed(correlation_id, version, NONE, None) if pos <= len(frame) else None
        if version > HIGHEST_READABLE or frame[pos : pos + 1] != b"\x00":
            return None
        name, pos = _compact_ascii(frame, pos + 1)
        software, pos = _compact_ascii(frame, pos)
        if name is None or software is None or frame[pos : pos + 1] != b"\x00":
            return None  # body tagged fields, null or non-ASCII strings, truncated: the server's
        if CLIENT_SOFTWARE.fullmatch(name) and CLIENT_SOFTWARE.fullmatch(software):
            return self._framed(correlation_id, version, NONE, (name, software))
        return self._framed(correlation_id, version, INVALID_REQUEST, None)

    def body(self, version: int, error: int) -> bytes:
        """The response body the server's handler encodes for (version, error)."""
        body = self._bodies.get((version, error))
        if body is None:
            body = self._bodies[(version, error)] = self._encode(version, error)
        return body

    def _framed(self, correlation_id: int, version: int, error: int, software: tuple[str, str] | None) -> Answer:
        body = self.body(version, error)
        return Answer(_SIZE.pack(4 + len(body)) + _SIZE.pack(correlation_id) + body, software)

    def _encode(self, version: int, error: int) -> bytes:
        if version < FIRST_FLEXIBLE:
            out = [struct.pack(">hi", error, len(self._table))]
            out += [_RANGE.pack(key, low, high) for key, (low, high) in self._table]
            if version >= 1:
                out.append(b"\x00\x00\x00\x00")  # throttle_time_ms
            return b"".join(out)
        out = [struct.pack(">h", error), _uvarint(len(self._table) + 1)]
        out += [_RANGE.pack(key, low, high) + b"\x00" for key, (low, high) in self._table]
        out.append(b"\x00\x00\x00\x00")  # throttle_time_ms
        # Tagged fields, written only when not at their default (the generated encoder's rule):
        # 0 SupportedFeatures, 1 FinalizedFeaturesEpoch, 2 FinalizedFeatures (3 ZkMigrationReady: false).
        features = advertised(self._share)
        supported = [f for f in features if version >= 4 or f.min_version > 0]  # KAFKA-17011
        finalized = [f for f in features if f.finalized > 0]
        tagged: list[tuple[int, bytes]] = []
        if supported:
            rows = [_compact(f.name) + _PAIR.pack(f.min_version, f.max_version) + b"\x00" for f in supported]
            tagged.append((0, _uvarint(len(rows) + 1) + b"".join(rows)))
        if FINALIZED_FEATURES_EPOCH != -1:
            tagged.append((1, struct.pack(">q", FINALIZED_FEATURES_EPOCH)))
        if finalized:
            rows = [_compact(f.name) + _PAIR.pack(f.finalized, f.finalized) + b"\x00" for f in finalized]
            tagged.append((2, _uvarint(len(rows) + 1) + b"".join(rows)))
        out.append(_uvarint(len(tagged)))
        out += [_uvarint(tag) + _uvarint(len(value)) + value for tag, value in tagged]
        return b"".join(out)


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _compact(text: str) -> bytes:
    raw = text.encode()
    return _uvarint(len(raw) + 1) + raw


def _compact_ascii(frame: bytes, pos: int) -> tuple[str | None, int]:
    """A compact string of ASCII at `pos` and the position after it; None for a null, non-ASCII
    or truncated one (a length above 127 is two bytes: not a software name)."""
    if pos >= len(frame) or not 1 <= frame[pos] < 0x80:
        return None, pos
    end = pos + frame[pos]
    raw = frame[pos + 1 : end]
    if end > len(frame) or not raw.isascii():
        return None, pos
    return raw.decode("ascii"), end
