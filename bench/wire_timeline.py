"""Where a transaction's wall time goes, per request, as seen on the wire (loopback).

    sudo .venv/bin/python bench/wire_timeline.py [--server kgc|mock|both] [--size 1] [--seconds 3]
                                                 [--flush-mode group_commit] [--set NAME=VALUE]...
                                                 [--baseline DIR]

Runs one confluent-kafka transactional producer (bench/txn_bench.py's loop: begin -> SIZE messages
-> commit) against kgc and/or librdkafka's mock while a capture process reads every TCP packet on
`lo` (an AF_PACKET socket, so it needs root) with the kernel's receive timestamp, rebuilds the
Kafka frames of each connection, and pairs requests with responses by correlation id. It prints,
per transaction (median and p90 over all of them): the server's time on each request
(AddPartitionsToTxn, Produce, EndTxn, ...), the client's time between them, how many requests of
each kind a transaction sent, and the error codes of AddPartitionsToTxn / EndTxn answers (e.g. a
CONCURRENT_TRANSACTIONS that sends librdkafka into its 20 ms backoff). The same measure for both
servers, so the gap between them has names. Figures only: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

API_NAMES = {0: "Produce", 3: "Metadata", 10: "FindCoordinator", 18: "ApiVersions", 22: "InitProducerId",
             24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
             71: "GetTelemetrySubscriptions", 72: "PushTelemetry"}  # fmt: skip
SO_TIMESTAMPNS, PACKET_OUTGOING, ETH_P_ALL = 35, 4, 0x0003


# -- capture (its own process: `wire_timeline.py capture`, JSON lines on stdout) -------------------
def capture(ports: set[int]) -> None:
    """Every Kafka frame on lo to and from the servers listening on `ports`: {"c": conn, "d":
    "req"|"resp", "t": seconds, "k": key, "v": version, "id": correlation id, "body": the answer's
    first bytes} until SIGINT. A connection is known from its SYN (other servers' traffic on lo,
    e.g. other test runs, is left out)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: past rmem_max
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(("lo", 0))
    servers: dict[tuple[int, int], int] = {}  # (client port, server port) -> connection number
    streams: dict[tuple[int, int], list[Any]] = {}  # (src, dst) port -> [next seq, buffer, first-byte time]
    stop = False

    def on_signal(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    sock.settimeout(0.2)
    while not stop:
        try:
            data, anc, _flags, addr = sock.recvmsg(65600, 64)
        except (TimeoutError, InterruptedError):
            continue
        if addr[2] == PACKET_OUTGOING or len(data) < 34 or data[12:14] != b"\x08\x00" or data[23] != 6:
            continue
        ts = time.time()
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                ts = sec + nsec / 1e9
        ip = 14
        ihl = (data[ip] & 0x0F) * 4
        total = struct.unpack_from(">H", data, ip + 2)[0]
        tcp = ip + ihl
        sport, dport, seq = struct.unpack_from(">HHI", data, tcp)
        flags = data[tcp + 13]
        payload = data[tcp + (data[tcp + 12] >> 4) * 4 : ip + total]
        if flags & 0x02 and not flags & 0x10 and dport in ports:  # SYN: sport is the client
            servers[(sport, dport)] = len(servers)
            streams[(sport, dport)] = [seq + 1, bytearray(), 0.0]
            continue
        if flags & 0x12 == 0x12 and (dport, sport) in servers:  # SYN-ACK
            streams[(sport, dport)] = [seq + 1, bytearray(), 0.0]
            continue
        stream = streams.get((sport, dport))
        if stream is None or not payload or seq != stream[0]:
            continue  # unknown connection, a bare ACK, or a retransmission
        stream[0] = (seq + len(payload)) & 0xFFFFFFFF
        if not stream[1]:
            stream[2] = ts
        stream[1] += payload
        is_req = (sport, dport) in servers
        conn = servers[(sport, dport)] if is_req else servers[(dport, sport)]
        buf = stream[1]
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack_from(">i", buf)[0]:
            size = struct.unpack_from(">i", buf)[0]
            frame = bytes(buf[4 : 4 + size])
            del buf[: 4 + size]
            if is_req:
                key, ver, corr = struct.unpack_from(">hhi", frame)
                rec = {"c": conn, "d": "req", "t": ts, "t0": stream[2], "k": key, "v": ver, "id": corr}
            else:
                (corr,) = struct.unpack_from(">i", frame)
                rec = {"c": conn, "d": "resp", "t": ts, "id": corr, "body": frame[4:68].hex()}
            stream[2] = ts
            out.write(json.dumps(rec) + "\n")
    out.flush()


def _errors(key: int, ver: int, body: bytes) -> list[int]:
    """Error codes of an AddPartitionsToTxn v0-v2 / EndTxn v0-v2 answer (non-flexible only)."""
    try:
        if key == 26 and ver <= 2:
            return [struct.unpack_from(">h", body, 4)[0]]
        if key == 24 and ver <= 2:
            pos, codes = 4, []
            (topics,) = struct.unpack_from(">i", body, pos)
            pos += 4
            for _ in range(topics):
                (n,) = struct.unpack_from(">h", body, pos)
                pos += 2 + n
                (parts,) = struct.unpack_from(">i", body, pos)
                pos += 4
                for _ in range(parts):
                    codes.append(struct.unpack_from(">h", body, pos + 4)[0])
                    pos += 6
            return codes
    except struct.error:
        pass  # the first 64 bytes only
    return []


# -- analysis ---------------------------------------------------------------------------------------
def rpcs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Requests paired with their answers, in the order they were sent."""
    pending: dict[tuple[int, int], dict[str, Any]] = {}
    done = []
    for rec in lines:
        if rec.get("d") == "req":
            pending[(rec["c"], rec["id"])] = rec
        elif rec.get("d") == "resp" and (req := pending.pop((rec["c"], rec["id"]), None)) is not None:
            body = bytes.fromhex(rec["body"])
            done.append({**req, "end": rec["t"], "err": _errors(req["k"], req["v"], body)})
    return sorted(done, key=lambda r: r["t0"])


def breakdown(calls: list[dict[str, Any]]) -> None:
    """Per transaction (from one EndTxn answer to the next): each request's server time and the
    client's time between requests."""
    txns: list[list[dict[str, Any]]] = [[]]
    for call in calls:
        txns[-1].append(call)
        if call["k"] == 26:
            txns.append([])
    txns = [t for t in txns[1:-1] if t]  # whole transactions only (after the first EndTxn)
    if not txns:
        print("  no whole transaction captured")
        return
    segments: dict[str, list[float]] = defaultdict(list)
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    walls = []
    prev_end = None
    for n, txn in enumerate(txns):
        # the previous transaction's EndTxn answer starts this one
        start = prev_end if prev_end is not None else txn[0]["t0"]
        walls.append(txn[-1]["end"] - start)
        last = start
        seen: Counter[str] = Counter()
        for call in txn:
            name = API_NAMES.get(call["k"], str(call["k"]))
            seen[name] += 1
            tag = name if seen[name] == 1 else f"{name}#{seen[name]}"
            segments[f"client before {tag}"].append(max(call["t0"] - last, 0.0))
            segments[f"server {tag}"].append(call["end"] - call["t0"])
            last = max(last, call["end"])
            for code in call["err"]:
                if code:
                    errors[f"{name} error {code}"] += 1
        counts.update(seen)
        prev_end = txn[-1]["end"]
        del n
    total = len(txns)
    print(f"  {total} transactions, wall per txn median {1e3 * statistics.median(walls):.3f} ms "
          f"(mean {1e3 * statistics.mean(walls):.3f} ms)")  # fmt: skip
    print(f"  requests per txn: {', '.join(f'{k} {v / total:.2f}' for k, v in counts.most_common())}")
    if errors:
        print(f"  errors: {', '.join(f'{k}: {v}' for k, v in errors.items())}")
    print(f"  {'segment':<40} {'n':>6} {'mean ms':>9} {'p50 ms':>8} {'p90 ms':>8} {'ms/txn':>8}")
    for name, values in segments.items():
        ordered = sorted(values)
        print(
            f"  {name:<40} {len(values):>6} {1e3 * statistics.mean(values):9.3f} "
            f"{1e3 * ordered[len(ordered) // 2]:8.3f} {1e3 * ordered[int(0.9 * (len(ordered) - 1))]:8.3f} "
            f"{1e3 * sum(values) / total:8.3f}"
        )


def drive(args: argparse.Namespace) -> None:
    from servers import start_kgc, start_mock
    from txn_bench import PARTITIONS, TOPIC, produce_loop

    targets = ["kgc", "mock"] if args.server == "both" else [args.server]
    for target in targets:
        with tempfile.TemporaryDirectory() as tmp:
            settings = {"log.flush.mode": args.flush_mode, **dict(kv.split("=", 1) for kv in args.set)}
            if target == "kgc":
                server = start_kgc(
                    os.path.join(tmp, "data"), settings=settings, topics={TOPIC: PARTITIONS}, baseline=args.baseline
                )
                label = f"{server.name} ({args.flush_mode})"
            else:
                server = start_mock({TOPIC: PARTITIONS}, brokers=3)
                label = "librdkafka mock (3)"
            log_path = os.path.join(tmp, "frames.jsonl")
            log_file = open(log_path, "w")  # a file, not a pipe: a full pipe would stall the capture
            ports = [a.rsplit(":", 1)[1] for a in server.bootstrap.split(",")]
            cap = subprocess.Popen([sys.executable, os.path.abspath(__file__), "capture", *ports], stdout=log_file)
            try:
                while os.path.getsize(log_path) == 0:  # {"ready": true}
                    time.sleep(0.01)
                out: dict[str, Any] = {}
                produce_loop(server.bootstrap, args.size, args.seconds, "w", out)
                time.sleep(0.2)
            finally:
                cap.send_signal(signal.SIGINT)
                cap.wait()
                log_file.close()
                server.stop()
            with open(log_path) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            n = len(out.get("committed", {}))
            print(f"{label}: {args.size} msg/txn, {n / out['elapsed']:.1f} txn/s under capture")
            breakdown(rpcs(lines))


def main() -> None:
    if sys.argv[1:2] == ["capture"]:
        capture({int(port) for port in sys.argv[2:]})
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default="both", choices=["kgc", "mock", "both"])
    parser.add_argument("--size", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--flush-mode", default="group_commit", choices=["group_commit", "every_append", "interval"])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a kgc setting")
    parser.add_argument("--baseline", help="run the kgc of this checkout instead")
    drive(parser.parse_args())


if __name__ == "__main__":
    main()
