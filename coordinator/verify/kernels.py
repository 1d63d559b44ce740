"""Compiled kernels of the verifier's scan (numba over the raw bytes of a mapped segment).

`frame` walks the batch chain of a byte range (Frames' rules: magic 2, size >= 61, whole
batch inside the file) and CRC-checks each batch; `records` validates the records of every
trusted batch with storage's record grammar (record_spans) and, as each batch's mode says
(txn.py), checks G1 and aggregates them per (region, key), or per (region, producer, key) for
deferred transactional records, in an open-addressing table, in file order. Both mirror scan.py's pure-Python
path exactly (tests/verify/test_fast_scan.py compares the two); what they cannot phrase
(decompression, the text of a record error) is left to the caller. Sums (base + delta) wrap
at 64 bits. Importing this module without numba sets AVAILABLE = False and defines nothing.
"""

from __future__ import annotations

from typing import Any

from coordinator.verify.primitives import AVAILABLE

if AVAILABLE:
    import numpy as np

    from coordinator.verify.primitives import be as _be
    from coordinator.verify.primitives import crc32c, njit
    from coordinator.verify.primitives import hash_bytes as _hash
    from coordinator.verify.primitives import same_bytes as _same
    from coordinator.verify.primitives import signed as _signed

__all__ = ["AVAILABLE", "H", "K", "frame", "records", "crc32c"]

# Columns of frame()'s batch table.
(
    H_POS,
    H_BASE,
    H_SIZE,
    H_CRC,
    H_ATTRS,
    H_LOD,
    H_BASE_TS,
    H_MAX_TS,
    H_PID,
    H_PEP,
    H_SEQ,
    H_COUNT,
    H_VALID,
    H_PREV_LAST,
    H_CRC_OK,
) = range(15)
H = 15
# frame()'s problem vector: kind (0 none, 1 torn header, 2 bad magic, 3 short length, 4 torn
# batch), position, base offset (has_base), bytes left, magic, batch length.
P_KIND, P_POS, P_BASE, P_HAS_BASE, P_LEFT, P_MAGIC, P_LENGTH = range(7)
# Columns of records()'s key table.
(
    K_REGION,
    K_NULL,
    K_KOFF,
    K_KLEN,
    K_COUNT,
    K_FIRST_OFF,
    K_FIRST_POS,
    K_LAST_OFF,
    K_LAST_POS,
    K_TS,
    K_VSRC,
    K_VPOS,
    K_VLEN,
    K_HOR,
    K_HAS_HOR,
    K_HASH,
    K_PID,
) = range(17)
K = 17  # K_PID: the producer of a deferred row, -1 for the aggregate of counted records
# Mode bits (txn.py's AGGREGATE, G1, DEFER).
M_AGGREGATE, M_G1, M_DEFER = 1, 2, 4
# records()'s violation kinds.
V_S2, V_G1 = 0, 1

if AVAILABLE:

    @njit(cache=True, nogil=True)
    def frame(b: Any, start: int, end: int, size: int, stop_base: int) -> Any:
        """The batch chain of b from `start` while the position is below `end` (and the base
        offset not above `stop_base`): one row per framed batch, and why the walk stopped."""
        cap = 1024
        out = np.empty((cap, H), dtype=np.int64)
        prob = np.zeros(7, dtype=np.int64)
        n = 0
        pos = start
        prev_last = -1
        has_prev = False
        while pos < end:
            left = size - pos
            if left < 61:
                prob[P_KIND], prob[P_POS], prob[P_LEFT] = 1, pos, left
                if left >= 8:
                    prob[P_BASE], prob[P_HAS_BASE] = _be(b, pos, 8), 1
                break
            base = _be(b, pos, 8)
            length = _signed(_be(b, pos + 8, 4), 32)
            magic = _signed(np.int64(b[pos + 16]), 8)
            bsize = length + 12
            if magic != 2 or bsize < 61 or bsize > left:
                prob[P_KIND] = 2 if magic != 2 else (3 if bsize < 61 else 4)
                prob[P_POS], prob[P_BASE], prob[P_HAS_BASE], prob[P_LEFT] = pos, base, 1, left
                prob[P_MAGIC], prob[P_LENGTH] = magic, length
                break
            if base > stop_base:
                break
            if n == cap:
                cap *= 2
                grown = np.empty((cap, H), dtype=np.int64)
                grown[:n] = out[:n]
                out = grown
            r = out[n]
            r[H_POS], r[H_BASE], r[H_SIZE] = pos, base, bsize
            r[H_CRC] = _be(b, pos + 17, 4)
            r[H_ATTRS] = _signed(_be(b, pos + 21, 2), 16)
            r[H_LOD] = _signed(_be(b, pos + 23, 4), 32)
            r[H_BASE_TS] = _be(b, pos + 27, 8)
            r[H_MAX_TS] = _be(b, pos + 35, 8)
            r[H_PID] = _be(b, pos + 43, 8)
            r[H_PEP] = _signed(_be(b, pos + 51, 2), 16)
            r[H_SEQ] = _signed(_be(b, pos + 53, 4), 32)
            r[H_COUNT] = _signed(_be(b, pos + 57, 4), 32)
            ok = crc32c(b, pos + 21, pos + bsize) == r[H_CRC]
            r[H_CRC_OK] = 1 if ok else 0
            r[H_VALID] = 1 if ok and r[H_LOD] >= 0 and r[H_COUNT] >= 0 else 0
            r[H_PREV_LAST] = prev_last if has_prev else -(1 << 63)
            if r[H_VALID]:
                prev_last, has_prev = base + r[H_LOD], True
            n += 1
            pos += bsize
        return out[:n], prob

    # -- records ---------------------------------------------------------------------------

    @njit(cache=True, inline="always")
    def _varint(b: Any, p: int, end: int) -> Any:
        """ZigZag varint at p -> (value, next, status): 0 ok, 1 past the end, 2 longer than 10
        bytes, 3 outside int64 (value then carries only the sign)."""
        r = np.uint64(0)
        shift = 0
        while True:
            if p >= end:
                return 0, p, 1
            x = b[p]
            p += 1
            if shift == 63 and (x & 0x7F) > 1:
                return -1 if r & np.uint64(1) else 1, p, 3 if x < 0x80 else 2
            r |= np.uint64(x & 0x7F) << np.uint64(shift)
            if x < 0x80:
                break
            shift += 7
            if shift > 63:
                return 0, p, 2
        return np.int64(r >> np.uint64(1)) ^ -np.int64(r & np.uint64(1)), p, 0

    @njit(cache=True)
    def _utf8_ok(b: Any, p: int, e: int) -> bool:
        """Strict UTF-8 (Python's decoder: no overlongs, surrogates or code points > U+10FFFF)."""
        while p < e:
            c = b[p]
            if c < 0x80:
                p += 1
                continue
            if 0xC2 <= c <= 0xDF:
                n, lo, hi = 1, 0x80, 0xBF
            elif c == 0xE0:
                n, lo, hi = 2, 0xA0, 0xBF
            elif 0xE1 <= c <= 0xEC or c == 0xEE or c == 0xEF:
                n, lo, hi = 2, 0x80, 0xBF
            elif c == 0xED:
                n, lo, hi = 2, 0x80, 0x9F
            elif c == 0xF0:
                n, lo, hi = 3, 0x90, 0xBF
            elif 0xF1 <= c <= 0xF3:
                n, lo, hi = 3, 0x80, 0xBF
            elif c == 0xF4:
                n, lo, hi = 3, 0x80, 0x8F
            else:
                return False
            if p + n >= e:  # a truncated sequence
                return False
            if not lo <= b[p + 1] <= hi:
                return False
            for k in range(2, n + 1):
                if not 0x80 <= b[p + k] <= 0xBF:
                    return False
            p += n + 1
        return True

    @njit(cache=True, nogil=True)
    def _walk(b: Any, p: int, end: int, count: int, sp: Any) -> bool:
        """storage.batch.record_spans' grammar over b[p:end]; fills sp[i] = (od, tsd, kp, kl,
        vp, vl). False where record_spans raises (or a delta is outside int64)."""
        for i in range(count):
            length, p, st = _varint(b, p, end)
            if st:
                return False
            body = p
            p += 1  # attributes (not read)
            tsd, p, st = _varint(b, p, end)
            if st:
                return False
            od, p, st = _varint(b, p, end)
            if st:
                return False
            kl, p, st = _varint(b, p, end)
            if st == 3 and kl < 0:
                st = 0
            if st:
                return False
            kp = p
            if kl > 0:
                p += kl
            else:
                kl = -1 if kl < 0 else 0
            vl, p, st = _varint(b, p, end)
            if st == 3 and vl < 0:
                st = 0
            if st:
                return False
            vp = p
            if vl > 0:
                p += vl
            else:
                vl = -1 if vl < 0 else 0
            hc, p, st = _varint(b, p, end)
            if st or hc < 0:
                return False
            for _ in range(hc):
                hk, p, st = _varint(b, p, end)
                if st or hk < 0 or p + hk > end or not _utf8_ok(b, p, p + hk):
                    return False
                p += hk
                hv, p, st = _varint(b, p, end)
                if st == 3 and hv < 0:
                    st = 0
                if st:
                    return False
                if hv > 0:
                    p += hv
            if p - body != length or p > end:
                return False
            sp[i, 0], sp[i, 1], sp[i, 2], sp[i, 3], sp[i, 4], sp[i, 5] = od, tsd, kp, kl, vp, vl
        return p == end

    @njit(cache=True)
    def _g1(b: Any, kp: int, kl: int, vp: int, vl: int) -> Any:
        """scan._g1 as (code, key type, value version); code 0 = fine."""
        if kl < 2:
            return 1, 0, 0
        kt = _signed(_be(b, kp, 2), 16)
        if 0 <= kt <= 2:
            if vl >= 0:
                if vl < 2:
                    return 2, kt, 0
                vv = _signed(_be(b, vp, 2), 16)
                if not 0 <= vv <= 4:
                    return 3, kt, vv
            return 0, kt, 0
        if 3 <= kt <= 16:
            return 0, kt, 0
        return 4, kt, 0

    @njit(cache=True, nogil=True)
    def records(
        b: Any,
        aux: Any,
        hdr: Any,
        src: Any,
        rstart: Any,
        rend: Any,
        region: Any,
        mode: Any,
        is_off: bool,
        want_values: bool,
    ) -> Any:
        """Records of the batches with src >= 0 (0: in b, 1: in aux) between rstart and rend,
        in row order, each as its mode says; see the module docstring. Returns (status per batch: 1 where the records
        do not parse, records per batch, violations (kind, batch row, offset, code, key type,
        value version), key table, key bytes, last-value CRC per key, last values, their ends)."""
        n = hdr.shape[0]
        status = np.zeros(n, np.int8)
        nrec = np.zeros(n, np.int64)
        viol = np.empty((16, 6), np.int64)
        nv = 0
        kv = np.empty((1024, K), np.int64)
        nk = 0
        arena = np.empty(1 << 16, np.uint8)
        used = 0
        tmask = 2047
        table = np.full(tmask + 1, -1, np.int64)
        most = 0
        for i in range(n):
            if src[i] >= 0:
                most = max(most, min(hdr[i, H_COUNT], (rend[i] - rstart[i]) // 7 + 1))
        sp = np.empty((most, 6), np.int64)
        for i in range(n):
            if src[i] < 0:
                continue
            buf = b if src[i] == 0 else aux
            count = hdr[i, H_COUNT]
            if count > (rend[i] - rstart[i]) // 7 or not _walk(buf, rstart[i], rend[i], count, sp):
                status[i] = 1  # every record takes at least 7 bytes
                continue
            nrec[i] = count
            base, lod, pos = hdr[i, H_BASE], hdr[i, H_LOD], hdr[i, H_POS]
            log_append = hdr[i, H_ATTRS] & 0x08
            has_hor = 1 if hdr[i, H_ATTRS] & 0x40 else 0
            reg = region[i]
            m = mode[i]
            collect = (m & (M_AGGREGATE | M_DEFER)) != 0
            pid = hdr[i, H_PID] if m & M_DEFER else -1
            prev_od = -1
            for j in range(count):
                od, tsd, kp, kl, vp, vl = sp[j, 0], sp[j, 1], sp[j, 2], sp[j, 3], sp[j, 4], sp[j, 5]
                code, kt, vv = 0, 0, 0
                if is_off and m & M_G1:
                    code, kt, vv = _g1(buf, kp, kl, vp, vl)
                bad_od = od <= prev_od or od > lod
                prev_od = od
                off = base + od
                if bad_od or code:
                    if nv + 2 > viol.shape[0]:
                        grown = np.empty((viol.shape[0] * 2, 6), np.int64)
                        grown[:nv] = viol[:nv]
                        viol = grown
                    if bad_od:
                        viol[nv, 0], viol[nv, 1], viol[nv, 2], viol[nv, 3] = V_S2, i, off, od
                        nv += 1
                    if code:
                        viol[nv, 0], viol[nv, 1], viol[nv, 2] = V_G1, i, off
                        viol[nv, 3], viol[nv, 4], viol[nv, 5] = code, kt, vv
                        nv += 1
                if not collect:
                    continue
                ts = hdr[i, H_MAX_TS] if log_append else hdr[i, H_BASE_TS] + tsd
                null = 1 if kl < 0 else 0
                klen = 0 if kl < 0 else kl
                h = _hash(buf, kp, klen, reg * 2 + null + ((pid + 1) << 2))
                slot = h & tmask
                while True:
                    kid = table[slot]
                    if kid < 0:
                        break
                    if (
                        kv[kid, K_HASH] == h
                        and kv[kid, K_REGION] == reg
                        and kv[kid, K_NULL] == null
                        and kv[kid, K_PID] == pid
                        and kv[kid, K_KLEN] == klen
                        and _same(arena, kv[kid, K_KOFF], buf, kp, klen)
                    ):
                        break
                    slot = (slot + 1) & tmask
                if kid < 0:
                    if nk == kv.shape[0]:
                        grown = np.empty((nk * 2, K), np.int64)
                        grown[:nk] = kv[:nk]
                        kv = grown
                    if used + klen > arena.shape[0]:
                        bigger = np.empty(max(arena.shape[0] * 2, used + klen), np.uint8)
                        bigger[:used] = arena[:used]
                        arena = bigger
                    arena[used : used + klen] = buf[kp : kp + klen]
                    kid = nk
                    nk += 1
                    r = kv[kid]
                    r[K_REGION], r[K_NULL], r[K_KOFF], r[K_KLEN], r[K_HASH] = reg, null, used, klen, h
                    r[K_PID] = pid
                    r[K_COUNT], r[K_FIRST_OFF], r[K_FIRST_POS] = 0, off, pos
                    used += klen
                    table[slot] = kid
                    if nk * 2 > tmask:  # keep the table at most half full
                        tmask = tmask * 2 + 1
                        table = np.full(tmask + 1, -1, np.int64)
                        for k in range(nk):
                            s = kv[k, K_HASH] & tmask
                            while table[s] >= 0:
                                s = (s + 1) & tmask
                            table[s] = k
                r = kv[kid]
                r[K_COUNT] += 1
                r[K_LAST_OFF], r[K_LAST_POS], r[K_TS] = off, pos, ts
                r[K_VSRC], r[K_VPOS], r[K_VLEN] = src[i], vp, vl
                r[K_HOR], r[K_HAS_HOR] = hdr[i, H_BASE_TS] if has_hor else 0, has_hor
        vh = np.empty(nk, np.int64)
        vends = np.zeros(nk + 1, np.int64)
        for k in range(nk):
            vl = kv[k, K_VLEN]
            vends[k + 1] = vends[k] + (vl if want_values and vl > 0 else 0)
        vals = np.empty(vends[nk], np.uint8)
        for k in range(nk):
            vl, vp = kv[k, K_VLEN], kv[k, K_VPOS]
            buf = b if kv[k, K_VSRC] == 0 else aux
            vh[k] = crc32c(buf, vp, vp + vl) if vl >= 0 else -1
            if want_values and vl > 0:
                vals[vends[k] : vends[k + 1]] = buf[vp : vp + vl]
        return status, nrec, viol[:nv], kv[:nk], arena[:used], vh, vals, vends
