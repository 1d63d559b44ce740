"""RecordBatch v2 (magic 2): the only package that knows Kafka's batch and record bytes.

Layout: FORMAT.md (Kafka's DefaultRecordBatch / DefaultRecord). Modules, one concern each:
`layout` (header fields, attributes, CRC, varints), `scan` (walking the batches of a file or
buffer and the records of a batch without building objects: recovery, the cleaner, reads, dump
and the verifier use it), `records` (Record objects: decode, encode, rebuild), `control` (transaction markers),
`compression`, `fold` (the loader's read of a segment file), `kernels` (the per-record loops of
a load, of the cleaner's map and of a coordinator's append; `native` runs their optional mypyc
build, which scripts/build_native.py makes).
A client's batch is stored byte-for-byte apart from its base offset and leader epoch (outside
the CRC).
"""

from .control import ABORT, COMMIT, CONTROL_TYPE_NAMES, Marker, control_type, encode_marker, read_marker
from .layout import (
    COMPRESSION_GZIP,
    COMPRESSION_LZ4,
    COMPRESSION_MASK,
    COMPRESSION_NAMES,
    COMPRESSION_NONE,
    COMPRESSION_SNAPPY,
    COMPRESSION_ZSTD,
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    HEADER_SIZE,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    HeaderFields,
    InvalidBatch,
    assign_base_offset,
    batch_attributes,
    batch_crc,
    batch_next_offset,
    batch_size,
    crc_matches,
    decode_header,
    empty_batch,
    peek_frame,
    validate_batch,
    verify_crc,
)
from .record_walk import KeySpan, RecordSpan, key_spans, record_spans, records_region
from .records import Record, encode_batch, encode_batch_and_header, iter_records, rebuild_kept
from .scan import Frame, FrameProblem, Frames, frame_bounds, whole_batches

__all__ = [
    "Record",
    "BatchHeader",
    "HeaderFields",
    "InvalidBatch",
    "HEADER_SIZE",
    "MAGIC",
    "LOG_OVERHEAD",
    "HEADER_SIZE_UP_TO_MAGIC",
    "peek_frame",
    "COMPRESSION_MASK",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "CONTROL_BIT",
    "DELETE_HORIZON_BIT",
    "encode_batch",
    "encode_batch_and_header",
    "batch_attributes",
    "batch_next_offset",
    "decode_header",
    "iter_records",
    "verify_crc",
    "validate_batch",
    "assign_base_offset",
    "batch_crc",
    "batch_size",
    "crc_matches",
    "empty_batch",
    "rebuild_kept",
    "Frames",
    "Frame",
    "FrameProblem",
    "frame_bounds",
    "whole_batches",
    "records_region",
    "record_spans",
    "RecordSpan",
    "key_spans",
    "KeySpan",
    "COMPRESSION_NONE",
    "COMPRESSION_GZIP",
    "COMPRESSION_SNAPPY",
    "COMPRESSION_LZ4",
    "COMPRESSION_ZSTD",
    "COMPRESSION_NAMES",
    "ABORT",
    "COMMIT",
    "CONTROL_TYPE_NAMES",
    "Marker",
    "control_type",
    "encode_marker",
    "read_marker",
]
