"""Byte-level primitives of the compiled scan (numba): unaligned 8-byte loads, CRC-32C (the
SSE4.2 crc32 instruction through an LLVM intrinsic where the CPU has it, slicing-by-8 tables
elsewhere: the same values as the crc32c package), big-endian fields, a 64-bit hash and
equality of byte ranges. AVAILABLE is False (and nothing else is defined) without numba, or
with KGC_VERIFY_NUMBA=0 (the pure-Python scan then runs alone).
"""

from __future__ import annotations

import os
from typing import Any

try:
    import numba
    import numba.extending
    import numpy as np
    from llvmlite import binding as llvm
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils

    # Kernels are typed by numba, not by mypy: their decorators are opaque to it.
    njit: Any = numba.njit
    intrinsic: Any = numba.extending.intrinsic
    AVAILABLE = os.environ.get("KGC_VERIFY_NUMBA", "1") != "0"
except ImportError:  # the `verify` extra installs numba
    AVAILABLE = False

__all__ = ["AVAILABLE", "njit", "crc32c", "crc32c_tables", "be", "signed", "hash_bytes", "same_bytes"]

if AVAILABLE:

    @intrinsic
    def _load64(typingctx: Any, arr: Any, idx: Any) -> Any:
        """The 8 bytes at arr[idx:idx + 8] as one native-order word (an unaligned load)."""

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
            return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)

        return types.uint64(arr, idx), codegen

    _POLY = 0x82F63B78

    def _tables() -> Any:
        t = np.zeros((8, 256), dtype=np.uint32)
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ _POLY if c & 1 else c >> 1
            t[0, i] = c
        for i in range(256):
            for k in range(1, 8):
                t[k, i] = (t[k - 1, i] >> 8) ^ t[0, t[k - 1, i] & 0xFF]
        return t

    _T = _tables()

    @njit(cache=True, nogil=True)
    def crc32c_tables(b: Any, start: int, end: int) -> int:
        """CRC-32C of b[start:end] (slicing by 8: where the CPU has no crc32 instruction)."""
        t = _T
        c = np.uint32(0xFFFFFFFF)
        p = start
        while p + 8 <= end:
            c ^= (
                np.uint32(b[p]) | (np.uint32(b[p + 1]) << 8) | (np.uint32(b[p + 2]) << 16) | (np.uint32(b[p + 3]) << 24)
            )
            c = (
                t[7, c & 0xFF]
                ^ t[6, (c >> 8) & 0xFF]
                ^ t[5, (c >> 16) & 0xFF]
                ^ t[4, c >> 24]
                ^ t[3, b[p + 4]]
                ^ t[2, b[p + 5]]
                ^ t[1, b[p + 6]]
                ^ t[0, b[p + 7]]
            )
            p += 8
        while p < end:
            c = t[0, (c ^ b[p]) & 0xFF] ^ (c >> 8)
            p += 1
        return int(c ^ np.uint32(0xFFFFFFFF))

    crc32c = crc32c_tables
    if llvm.get_host_cpu_features().get("sse4.2", False):

        @intrinsic
        def _crc_word(typingctx: Any, crc: Any, word: Any) -> Any:
            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.sse42.crc32.64.64")
                return builder.call(fn, args)

            return types.uint64(types.uint64, types.uint64), codegen

        @intrinsic
        def _crc_byte(typingctx: Any, crc: Any, byte: Any) -> Any:
            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(8)])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.sse42.crc32.32.8")
                return builder.call(fn, args)

            return types.uint32(types.uint32, types.uint8), codegen

        @njit(cache=True, nogil=True)
        def crc32c_sse42(b: Any, start: int, end: int) -> int:
            """CRC-32C of b[start:end] (the SSE4.2 crc32 instruction, 8 bytes at a time)."""
            c = np.uint64(0xFFFFFFFF)
            p = start
            while p + 8 <= end:
                c = _crc_word(c, _load64(b, p))
                p += 8
            c32 = np.uint32(c)
            while p < end:
                c32 = _crc_byte(c32, b[p])
                p += 1
            return int(c32 ^ np.uint32(0xFFFFFFFF))

        crc32c = crc32c_sse42

    @njit(cache=True, inline="always")
    def be(b: Any, p: int, n: int) -> Any:
        v: Any = 0
        for i in range(n):
            v = (v << 8) | np.int64(b[p + i])
        return v

    @njit(cache=True, inline="always")
    def signed(v: int, bits: int) -> int:
        return v - (1 << bits) if v >= (1 << (bits - 1)) else v

    @njit(cache=True)
    def hash_bytes(b: Any, p: int, n: int, seed: int) -> Any:
        """A 64-bit hash of b[p:p + n] (8 bytes per step; only compared within one run)."""
        h = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(n)
        i = 0
        while i + 8 <= n:
            h = (h ^ _load64(b, p + i)) * np.uint64(0xFF51AFD7ED558CCD)
            h ^= h >> np.uint64(32)
            i += 8
        while i < n:
            h = (h ^ np.uint64(b[p + i])) * np.uint64(0x100000001B3)
            i += 1
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> np.uint64(32)
        return np.int64(h)

    @njit(cache=True)
    def same_bytes(a: Any, pa: int, b: Any, pb: int, n: int) -> bool:
        i = 0
        while i + 8 <= n:
            if _load64(a, pa + i) != _load64(b, pb + i):
                return False
            i += 8
        while i < n:
            if a[pa + i] != b[pb + i]:
                return False
            i += 1
        return True
