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

from .batch.layout import Buffer, InvalidBatch, read_varint

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
        (one pass per dirty record), so it walks the records itself, as batch.scan.key_spans
        does (jumping by each record's length; the batch's CRC was checked), instead of
        building spans first. The caller checked room(). Raises InvalidBatch."""
        the_map, md5_ = self._map, md5
        latest = self.latest_offset
        has_tomb = False
        try:
            for _ in range(count):
                b = buf[pos]
                if b < 0x80:  # record length (never negative)
                    pos += 1
                    nxt = pos + (b >> 1)
                elif buf[pos + 1] < 0x80:
                    nxt = pos + 2 + (((b & 0x7F) | (buf[pos + 1] << 7)) >> 1)
                    pos += 2
                else:
                    length, pos = read_varint(buf, pos)
                    nxt = pos + length
                if nxt > end:
                    raise IndexError
                # pos: attributes; then timestampDelta (skipped) and offsetDelta, one byte each
                # in the common case
                if buf[pos + 1] < 0x80 and (b := buf[pos + 2]) < 0x80:
                    o, p = base + ((b >> 1) ^ -(b & 1)), pos + 3
                else:
                    p = pos + 1
                    while buf[p] >= 0x80:
                        p += 1
                    delta, p = read_varint(buf, p + 1)
                    o = base + delta
                b = buf[p]
                if b < 0x80:
                    klen, p = (b >> 1) ^ -(b & 1), p + 1
                elif buf[p + 1] < 0x80:
                    klen, p = ((b & 0x7F) | (buf[p + 1] << 7)) >> 1, p + 2
                else:
                    klen, p = read_varint(buf, p)
                pos = nxt
                if o < start:  # a batch straddling the first dirty offset
                    continue
                if klen < 0:
                    if buf[p] == 0x01:  # valueLength zigzag(-1): a tombstone
                        has_tomb = True
                    keyless_bits[(o - start) >> 3] |= 1 << ((o - start) & 7)
                    continue
                if buf[p + klen] == 0x01:
                    has_tomb = True
                the_map[md5_(buf[p : p + klen]).digest()] = o
                latest = o  # offsets only grow within a batch and across calls
        except IndexError:
            raise InvalidBatch("records run past the end of the batch") from None
        finally:
            self.latest_offset = max(latest, self.latest_offset)
        if pos != end:
            raise InvalidBatch(f"records end at {pos}, the batch at {end}")
        return has_tomb
