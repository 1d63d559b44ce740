"""The loader's record loop (`fold_records`), alone in its module so that it can be compiled.

Pure Python and the only source of the loop: `make native` compiles a copy of this file with
mypyc (storage/batch/native.py), and `record_walk.fold_latest` runs the compiled copy only
while its recorded source hash matches this file; otherwise this module. Invariant: a record is
folded only once its key and value lie inside it and it ends inside the batch; anything else
raises InvalidBatch.
"""

from __future__ import annotations

from .layout import InvalidBatch, read_varint


def fold_records(buf: bytes, pos: int, end: int, count: int, latest: dict[bytes, bytes | None]) -> int:
    """`fold_latest` over the `count` records in buf[pos:end] (see its docstring)."""
    pop, unkeyed = latest.pop, 0
    value: bytes | None
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
            # pos: attributes; then timestampDelta, offsetDelta, keyLength
            if buf[pos + 1] < 0x80 and buf[pos + 2] < 0x80:
                b, p = buf[pos + 3], pos + 4
            else:
                p = pos + 1
                while buf[p] >= 0x80:
                    p += 1
                p += 1
                while buf[p] >= 0x80:
                    p += 1
                b, p = buf[p + 1], p + 2
            # b: keyLength's first byte; p: the byte after it
            if b < 0x80:
                if b & 1:  # negative: a null key
                    unkeyed += 1
                    pos = nxt
                    continue
                kend = p + (b >> 1)
            elif buf[p] < 0x80:
                kend = p + 1 + (((b & 0x7F) | (buf[p] << 7)) >> 1)
                p += 1
            else:
                klen, p = read_varint(buf, p - 1)
                if klen < 0:
                    unkeyed += 1
                    pos = nxt
                    continue
                kend = p + klen
            key = buf[p:kend]
            b = buf[kend]  # valueLength's first byte
            if b < 0x80:
                if b & 1:
                    value, p = None, kend + 1
                else:
                    p = kend + 1 + (b >> 1)
                    value = buf[kend + 1 : p]
            elif buf[kend + 1] < 0x80:  # two bytes, read as a length (as key_spans reads them)
                p = kend + 2 + (((b & 0x7F) | (buf[kend + 1] << 7)) >> 1)
                value = buf[kend + 2 : p]
            else:
                vlen, p = read_varint(buf, kend)
                value = None if vlen < 0 else buf[p : p + vlen]
                p += max(vlen, 0)
            if p > nxt:
                raise IndexError
            pop(key, None)
            latest[key] = value
            pos = nxt
    except IndexError:
        raise InvalidBatch("records run past the end of the batch") from None
    if pos != end:
        raise InvalidBatch(f"records end at {pos}, the batch at {end}")
    return count - unkeyed
