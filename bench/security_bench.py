"""What security costs: a TLS handshake and a SCRAM authentication per connection, and
synchronous commits/s over SASL_SSL (SCRAM-SHA-512) against PLAINTEXT, in the same run.

    .venv/bin/python bench/security_bench.py [--connections 200] [--seconds 5]

Two kgc processes (PLAINTEXT; SASL_SSL with PLAIN for the admin and SCRAM-SHA-512 for the bench
user, whose credential the confluent AdminClient creates with AlterUserScramCredentials):
1. N connections, one after another: TCP + TLS handshake + ApiVersions, against TCP + ApiVersions
   on PLAINTEXT: wall time and server CPU per connection.
2. N SCRAM-SHA-512 authentications (ApiVersions, SaslHandshake, two SaslAuthenticate) over
   SASL_SSL; the client caches its SaltedPassword, so the figures are the server's and the wire's.
3. One confluent-kafka consumer in a group commits one partition synchronously for --seconds on
   each server: commits/s, p50/p99 latency, server CPU per commit.
Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import os
import secrets
import socket
import ssl
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import cpu_seconds, start_kgc  # noqa: E402

from coordinator.security.certs import make_certs  # noqa: E402
from protocol.api import ApiKey  # noqa: E402
from protocol.codec import decode_response, encode_request  # noqa: E402
from protocol.headers import RequestHeader, decode_response_header, encode_request_header  # noqa: E402
from protocol.messages.api_versions import ApiVersionsRequest  # noqa: E402
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest  # noqa: E402
from protocol.messages.sasl_handshake import SaslHandshakeRequest  # noqa: E402

TOPIC = "bench"
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";'


class Wire:
    """A blocking Kafka connection (plain or TLS) speaking one request at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.correlation = sock, 0

    def request(self, key: int, version: int, body: object) -> object:
        self.correlation += 1
        header = RequestHeader(api_key=key, api_version=version, correlation_id=self.correlation, client_id="bench")
        payload = encode_request_header(header) + encode_request(key, version, body)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._read(4))[0]
        data = self._read(size)
        _, offset = decode_response_header(data, key, version)
        return decode_response(key, version, data, offset)

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(left)
            if not chunk:
                raise ConnectionError("closed")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def connect(port: int, context: ssl.SSLContext | None) -> Wire:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if context is not None:
        sock = context.wrap_socket(sock, server_hostname="localhost")
    return Wire(sock)


_SALTED: dict[bytes, bytes] = {}


def scram_login(wire: Wire, user: str, password: str) -> None:
    """SCRAM-SHA-512's client side, SaltedPassword cached per salt (the server's work is measured)."""
    wire.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-512"))
    nonce = secrets.token_urlsafe(18)
    bare = f"n={user},r={nonce}"
    first = wire.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(f"n,,{bare}".encode()))
    server_first = first.auth_bytes.decode()  # type: ignore[attr-defined]
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salt = base64.b64decode(fields["s"])
    salted = _SALTED.get(salt)
    if salted is None:
        salted = _SALTED[salt] = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, int(fields["i"]))
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{bare},{server_first},{without_proof}".encode()
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    signature = hmac.new(hashlib.sha512(client_key).digest(), auth_message, "sha512").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    final = wire.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(f"{without_proof},p={proof}".encode()))
    assert final.error_code == 0, final  # type: ignore[attr-defined]


def per_connection(label: str, pid: int, n: int, open_one) -> None:
    cpu0, start = cpu_seconds(pid), time.perf_counter()
    for _ in range(n):
        wire = open_one()
        wire.sock.close()
    wall, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu0
    print(f"  {label:<44} {wall / n * 1e3:7.2f} ms/connection   server CPU {cpu / n * 1e3:6.2f} ms/connection")


def commits(label: str, pid: int, settings: dict[str, str], seconds: float) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**settings, "group.id": f"g-{label}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    consumer.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)  # connections made
    latencies, offset = [], 1
    cpu0, end = cpu_seconds(pid), time.perf_counter() + seconds
    while time.perf_counter() < end:
        offset += 1
        began = time.perf_counter()
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, offset)], asynchronous=False)
        latencies.append(time.perf_counter() - began)
    cpu = cpu_seconds(pid) - cpu0
    consumer.close()
    latencies.sort()
    n = len(latencies)
    print(
        f"  {label:<14} {n / seconds:8.0f} commits/s   p50 {latencies[n // 2] * 1e3:6.2f} ms   "
        f"p99 {latencies[int(n * 0.99)] * 1e3:6.2f} ms   server CPU {cpu / n * 1e6:6.0f} us/commit"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    with tempfile.TemporaryDirectory(prefix="kgc-security-bench-") as tmp:
        certs = make_certs(os.path.join(tmp, "certs"))
        plain = start_kgc(os.path.join(tmp, "plain"), topics={TOPIC: 1})
        secure = start_kgc(
            os.path.join(tmp, "secure"),
            topics={TOPIC: 1},
            settings={
                "listeners": "SASL_SSL://127.0.0.1:0",
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
                **certs.server_settings(),
            },
        )
        try:
            tls = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(certs.ca)}
            admin = AdminClient(
                {
                    "bootstrap.servers": secure.bootstrap,
                    **tls,
                    "sasl.mechanism": "PLAIN",
                    "sasl.username": "admin",
                    "sasl.password": "admin-secret",
                }
            )
            upsert = UserScramCredentialUpsertion(
                "bench", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"bench-pw"
            )
            for future in admin.alter_user_scram_credentials([upsert]).values():
                future.result(30)
            context = ssl.create_default_context(cafile=str(certs.ca))
            n = args.connections
            print(f"per connection, {n} connections one after another (kgc, TLS 1.3 with an EC P-256 certificate)")
            versions = ApiVersionsRequest("bench", "1")

            def plain_one() -> Wire:
                wire = connect(plain.port, None)
                wire.request(ApiKey.API_VERSIONS, 3, versions)
                return wire

            def tls_one() -> Wire:
                wire = connect(secure.port, context)
                wire.request(ApiKey.API_VERSIONS, 3, versions)
                return wire

            def scram_one() -> Wire:
                wire = tls_one()
                scram_login(wire, "bench", "bench-pw")
                return wire

            per_connection("PLAINTEXT: TCP + ApiVersions", plain.pid, n, plain_one)
            per_connection("SASL_SSL: TCP + TLS handshake + ApiVersions", secure.pid, n, tls_one)
            per_connection("SASL_SSL: ... + SCRAM-SHA-512 authentication", secure.pid, n, scram_one)
            print(f"synchronous commits, one confluent-kafka consumer, {args.seconds:g} s each")
            commits("PLAINTEXT", plain.pid, {"bootstrap.servers": plain.bootstrap}, args.seconds)
            scram = {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bench", "sasl.password": "bench-pw"}
            commits("SASL_SSL/SCRAM", secure.pid, {"bootstrap.servers": secure.bootstrap, **tls, **scram}, args.seconds)
        finally:
            plain.stop()
            secure.stop()


if __name__ == "__main__":
    main()
