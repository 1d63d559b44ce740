"""Compression of a batch's records blob: gzip=1, snappy=2, lz4=3, zstd=4 (Kafka's CompressionType).

Snappy from the Java client and librdkafka uses xerial framing (SnappyOutputStream: a 16-byte
header, then int32-length-prefixed raw snappy blocks); raw and framed snappy are also accepted
on input. LZ4 is the LZ4 frame format. Invariant: a blob that does not decompress raises
InvalidBatch, never a codec library's own exception.
"""

from __future__ import annotations

import struct

import cramjam

from .layout import (
    COMPRESSION_GZIP,
    COMPRESSION_LZ4,
    COMPRESSION_NAMES,
    COMPRESSION_SNAPPY,
    COMPRESSION_ZSTD,
    InvalidBatch,
)

__all__ = ["compress", "decompress"]

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"
_XERIAL_BLOCK = 32 * 1024
_BLOCK_LENGTH = struct.Struct(">i")


def compress(codec: int, data: bytes) -> bytes:
    if codec == COMPRESSION_GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == COMPRESSION_SNAPPY:
        out = bytearray(_XERIAL_HEADER)
        for i in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(data[i : i + _XERIAL_BLOCK]))
            out += _BLOCK_LENGTH.pack(len(block)) + block
        return bytes(out)
    if codec == COMPRESSION_LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == COMPRESSION_ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression type {codec}")


def decompress(codec: int, data: bytes) -> bytes:
    try:
        if codec == COMPRESSION_GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec == COMPRESSION_SNAPPY:
            if data.startswith(_XERIAL_MAGIC):
                out = bytearray()
                pos, end = 16, len(data)
                while pos < end:
                    (n,) = _BLOCK_LENGTH.unpack_from(data, pos)
                    out += bytes(cramjam.snappy.decompress_raw(data[pos + 4 : pos + 4 + n]))
                    pos += 4 + n
                return bytes(out)
            if data.startswith(_SNAPPY_FRAMED_MAGIC):
                return bytes(cramjam.snappy.decompress(data))
            return bytes(cramjam.snappy.decompress_raw(data))
        if codec == COMPRESSION_LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == COMPRESSION_ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (cramjam.DecompressionError, struct.error, ValueError) as exc:
        raise InvalidBatch(f"cannot decompress {COMPRESSION_NAMES[codec]} records: {exc}") from exc
    raise InvalidBatch(f"unknown compression type {codec}")
