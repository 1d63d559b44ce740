"""The cleaner's key -> latest offset map with a fixed memory budget (Kafka's SkimpyOffsetMap).

An open-addressing hash table of 16-byte MD5 key digests -> int64 offset, 24 bytes per slot
plus 8 per used slot (the list of used slots, so that walking the entries costs the entries,
not the table), preallocated from `memory_bytes` (`log.cleaner.dedupe.buffer.size`).
Invariants: at most `max_entries` (= slots x load factor 0.9) distinct digests are stored;
`put` only moves a key's offset forward (the dirty section is scanned in offset order);
`latest_offset` is the last offset the map covers (Kafka's updateLatestOffset), -1 if none.
"""

from __future__ import annotations

from array import array
from hashlib import md5
from typing import Iterable, Iterator

from .batch.layout import Buffer
from .batch.scan import KeySpan

__all__ = ["OffsetMap", "key_digest", "DIGEST_SIZE", "BYTES_PER_ENTRY"]

DIGEST_SIZE = 16
BYTES_PER_ENTRY = DIGEST_SIZE + 8 + 8  # digest, offset, used-slot list entry


def key_digest(key: Buffer) -> bytes:
    """MD5 of the key, as SkimpyOffsetMap hashes (collisions: 2^-128 per pair)."""
    return md5(key).digest()


class OffsetMap:
    def __init__(self, memory_bytes: int, load_factor: float = 0.9) -> None:
        self.slots = max(4, memory_bytes // BYTES_PER_ENTRY)
        self.max_entries = max(1, int(self.slots * load_factor))
        self._digests = bytearray(self.slots * DIGEST_SIZE)
        self._offsets = array("q", [-1]) * self.slots  # -1 = empty slot
        self._used = array("q")  # slots in insertion order
        self.size = 0
        self.latest_offset = -1

    @property
    def is_full(self) -> bool:
        return self.size >= self.max_entries

    def room(self) -> int:
        """How many more distinct keys fit."""
        return self.max_entries - self.size

    def clear(self) -> None:
        offsets = self._offsets
        for slot in self._used:
            offsets[slot] = -1
        self._used = array("q")
        self.size = 0
        self.latest_offset = -1

    def _slot(self, digest: bytes) -> int:
        """The slot holding `digest`, or the empty slot where it belongs (linear probing)."""
        slots, offsets, digests = self.slots, self._offsets, self._digests
        slot = hash(digest) % slots  # siphash of the MD5: cheaper than int.from_bytes here
        while True:
            if offsets[slot] < 0:
                return slot
            i = slot * DIGEST_SIZE
            if digests[i:i + DIGEST_SIZE] == digest:
                return slot
            slot += 1
            if slot == slots:
                slot = 0

    def put(self, digest: bytes, offset: int) -> None:
        """Record `offset` as the latest for `digest`. The caller checks `room()` first (Kafka
        stops building the map when it is full); putting into a full map raises."""
        slot = self._slot(digest)
        if self._offsets[slot] < 0:
            if self.size >= self.max_entries:
                raise OverflowError("offset map is full")
            i = slot * DIGEST_SIZE
            self._digests[i:i + DIGEST_SIZE] = digest
            self._used.append(slot)
            self.size += 1
        self._offsets[slot] = offset
        if offset > self.latest_offset:
            self.latest_offset = offset

    def get(self, digest: bytes) -> int:
        """The latest offset for `digest`, -1 if the key is not in the map."""
        return self._offsets[self._slot(digest)]

    def update_latest_offset(self, offset: int) -> None:
        """Cover an offset range with no keyed records (SkimpyOffsetMap.updateLatestOffset)."""
        if offset > self.latest_offset:
            self.latest_offset = offset

    def offsets(self) -> Iterator[int]:
        """The latest offset of every mapped key (in first-insertion order of the keys)."""
        offsets = self._offsets
        return (offsets[slot] for slot in self._used)

    def put_spans(self, buf: Buffer, spans: Iterable[KeySpan], base: int, start: int,
                  keyless_bits: bytearray) -> bool:
        """Map every keyed record of one batch (its `spans` from batch.scan.key_spans over
        `buf`; base offset `base`) whose offset is >= start; set the bit (offset - start) of
        keyless records in `keyless_bits`. Returns True if a tombstone was seen. This is the
        cleaner's hottest loop (one pass per dirty record), so MD5 and the probe of `put` are
        inlined. The caller checked room()."""
        slots, offsets, digests, used, md5_ = self.slots, self._offsets, self._digests, self._used, md5
        latest, size = self.latest_offset, self.size
        has_tomb = False
        try:
            for delta, kp, klen, tomb, _ in spans:
                o = base + delta
                if o < start:  # a batch straddling the first dirty offset
                    continue
                if tomb:
                    has_tomb = True
                if klen < 0:
                    keyless_bits[(o - start) >> 3] |= 1 << ((o - start) & 7)
                    continue
                digest = md5_(buf[kp:kp + klen]).digest()
                slot = hash(digest) % slots  # siphash of the MD5: cheaper than int.from_bytes here
                while True:
                    i = slot * DIGEST_SIZE
                    if offsets[slot] < 0:
                        digests[i:i + DIGEST_SIZE] = digest
                        used.append(slot)
                        size += 1
                        break
                    if digests[i:i + DIGEST_SIZE] == digest:
                        break
                    slot += 1
                    if slot == slots:
                        slot = 0
                offsets[slot] = o
                latest = o  # offsets only grow within a batch and across calls
        finally:
            self.latest_offset, self.size = max(latest, self.latest_offset), size
        return has_tomb
