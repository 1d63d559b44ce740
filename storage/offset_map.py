"""The cleaner's key -> latest offset map with a fixed memory budget (Kafka's SkimpyOffsetMap).

Keys are their 16-byte MD5 digests (as SkimpyOffsetMap hashes them), held in a dict digest ->
offset that grows with the keys actually mapped: a round over few keys costs little memory, and
none is preallocated. The budget `memory_bytes` (`log.cleaner.dedupe.buffer.size`) bounds it:
at most `max_entries` = (memory_bytes // BYTES_PER_ENTRY) x load factor digests, where
BYTES_PER_ENTRY is what one entry costs in CPython (digest object, offset int, dict slot).
Invariants: `put` only moves a key's offset forward (the dirty section is scanned in offset
order); `latest_offset` is the last offset the map covers (Kafka's updateLatestOffset), -1 if none.
"""

from __future__ import annotations

from collections.abc import Iterator

try:  # CPython's own MD5: the same digests as hashlib's OpenSSL md5, at half the cost per key
    from _md5 import md5  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # a build without it
    from hashlib import md5

from .batch import native
from .batch.layout import Buffer

__all__ = ["OffsetMap", "key_digest", "DIGEST_SIZE", "BYTES_PER_ENTRY"]

DIGEST_SIZE = 16
# A dict entry's share of the table (~2/3 full: 3 words + an 8-byte index, /0.67), the 16-byte
# bytes object (49 bytes) and the int offset (32 bytes), rounded up.
BYTES_PER_ENTRY = 160


def key_digest(key: Buffer) -> bytes:
    """MD5 of the key, as SkimpyOffsetMap hashes (collisions: 2^-128 per pair)."""
    digest: bytes = md5(key).digest()
    return digest


class OffsetMap:
    def __init__(self, memory_bytes: int, load_factor: float = 0.9) -> None:
        self.slots = max(4, memory_bytes // BYTES_PER_ENTRY)
        self.max_entries = max(1, int(self.slots * load_factor))
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    @property
    def size(self) -> int:
        return len(self._map)

    @property
    def is_full(self) -> bool:
        return len(self._map) >= self.max_entries

    def room(self) -> int:
        """How many more distinct keys fit."""
        return self.max_entries - len(self._map)

    def clear(self) -> None:
        self._map = {}
        self.latest_offset = -1

    def put(self, digest: bytes, offset: int) -> None:
        """Record `offset` as the latest for `digest`. The caller checks `room()` first (Kafka
        stops building the map when it is full); putting a new key into a full map raises."""
        if digest not in self._map and len(self._map) >= self.max_entries:
            raise OverflowError("offset map is full")
        self._map[digest] = offset
        if offset > self.latest_offset:
            self.latest_offset = offset

    def get(self, digest: bytes) -> int:
        """The latest offset for `digest`, -1 if the key is not in the map."""
        return self._map.get(digest, -1)

    def update_latest_offset(self, offset: int) -> None:
        """Cover an offset range with no keyed records (SkimpyOffsetMap.updateLatestOffset)."""
        if offset > self.latest_offset:
            self.latest_offset = offset

    def offsets(self) -> Iterator[int]:
        """The latest offset of every mapped key (in first-insertion order of the keys)."""
        return iter(self._map.values())

    def put_records(
        self, buf: Buffer, pos: int, end: int, count: int, base: int, start: int, keyless_bits: bytearray
    ) -> bool:
        """Map every keyed record of one batch (its `count` records in buf[pos:end], base offset
        `base`) whose offset is >= start; set the bit (offset - start) of keyless records in
        `keyless_bits`. Returns True if a tombstone was seen. This is the cleaner's hottest loop
        (one pass per dirty record): batch.kernels.map_records walks the records itself,
        jumping by each record's length (the batch's CRC was checked), instead of building
        spans first. The caller checked room(). Raises InvalidBatch."""
        if not isinstance(buf, bytes):
            buf, pos, end = bytes(buf[pos:end]), 0, end - pos
        has_tomb, latest = native.KERNELS.map_records(buf, pos, end, count, base, start, keyless_bits, self._map, md5)
        if latest > self.latest_offset:
            self.latest_offset = latest
        return bool(has_tomb)
