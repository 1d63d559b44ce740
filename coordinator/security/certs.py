"""Throwaway certificates for tests and local TLS: a CA, a server certificate and a client one.

`make_certs(directory)` writes, with the `cryptography` package (nothing hand-written):
ca.pem (the CA certificate: clients trust it, the server trusts client certificates it signed),
server.pem (the server's certificate and key in one PEM file: ssl.keystore.type=PEM,
ssl.keystore.location), server.crt/server.key, and client.crt/client.key (a certificate for
mTLS whose subject is `CN=<client_cn>,OU=kgc,O=kgc-test`: the principal
"User:CN=...,OU=kgc,O=kgc-test"). The server certificate names localhost, 127.0.0.1 and ::1
(and any hosts given). Keys are EC P-256, unencrypted, written 0600; the CA's key is not kept.
Never use these for anything but tests.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True, slots=True)
class CertFiles:
    directory: Path
    ca: Path
    server: Path  # certificate and key, one PEM file
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    client_principal: str

    def server_settings(self, client_auth: str = "none") -> dict[str, str]:
        """Kafka's ssl.* settings for a TLS listener using these files."""
        return {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.server),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca),
            "ssl.client.auth": client_auth,
        }


def _name(cn: str, ou: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kgc-test")]
    if ou:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(parts)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def make_certs(
    directory: str | Path, hosts: Sequence[str] = (), client_cn: str = "kgc-client", days: int = 30
) -> CertFiles:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("kgc test CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(subject: x509.Name, usage: x509.ObjectIdentifier, sans: list[x509.GeneralName]) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(ca_key, hashes.SHA256()).public_bytes(Encoding.PEM), _key_pem(key)

    names = ["localhost", *hosts]
    sans: list[x509.GeneralName] = []
    for host in dict.fromkeys(names):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    sans += [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("::1"))]
    server_cert, server_key = leaf(_name("localhost"), ExtendedKeyUsageOID.SERVER_AUTH, sans)
    client_subject = _name(client_cn, "kgc")
    client_cert, client_key = leaf(client_subject, ExtendedKeyUsageOID.CLIENT_AUTH, [])
    files = CertFiles(
        out,
        out / "ca.pem",
        out / "server.pem",
        out / "server.crt",
        out / "server.key",
        out / "client.crt",
        out / "client.key",
        "User:" + client_subject.rfc4514_string(),
    )
    _write(files.ca, ca.public_bytes(Encoding.PEM))
    _write(files.server_cert, server_cert)
    _write(files.server_key, server_key, private=True)
    _write(files.server, server_cert + server_key, private=True)
    _write(files.client_cert, client_cert)
    _write(files.client_key, client_key, private=True)
    return files
