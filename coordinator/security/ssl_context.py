"""TLS for SSL and SASL_SSL listeners: Kafka's ssl.* settings -> an `ssl.SSLContext`, and the
principal a client certificate names.

Keystores: PEM (a file holding the chain and key at ssl.keystore.location, or the PEM text in
ssl.keystore.certificate.chain and ssl.keystore.key) and PKCS12 (a "JKS" store is read as PKCS12,
which is what `keytool` has written by default since Java 9; a real JKS file gets a clear error).
Truststores the same way. ssl.client.auth maps to CERT_REQUIRED / CERT_OPTIONAL / CERT_NONE,
ssl.enabled.protocols to the context's version range. The principal of a client certificate is
"User:" + its subject DN as X500Principal.getName() writes it (RFC 2253: "CN=alice,OU=eng,O=example")
mapped by ssl.principal.mapping.rules (ssl_principal.py), as Kafka's default principal builder does.
Key material passes through private temporary files only (ssl loads chains from paths).
"""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    pkcs12,
)

from coordinator.config import ConfigError


class TlsConfigError(ConfigError):
    """An ssl.* setting kgc cannot use; the text names the setting, never a password."""


_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def server_context(config: Any, listener: str) -> ssl.SSLContext:
    def get(name: str) -> Any:
        return config.for_listener(listener, name)

    prefix = f"listener {listener}: "
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = [v.strip() for v in get("ssl.enabled.protocols").split(",") if v.strip()]
    known = [_VERSIONS[v] for v in versions if v in _VERSIONS]
    if not known:
        raise TlsConfigError(f"{prefix}ssl.enabled.protocols must name TLSv1.2 and/or TLSv1.3")
    context.minimum_version, context.maximum_version = min(known), max(known)
    chain, key = _keystore(get, prefix)
    with tempfile.TemporaryDirectory(prefix="kgc-tls-") as private:  # mode 0700
        cert_file, key_file = Path(private, "chain.pem"), Path(private, "key.pem")
        _write_private(cert_file, chain)
        _write_private(key_file, key)
        try:
            context.load_cert_chain(cert_file, key_file, password=get("ssl.key.password") or None)
        except (ssl.SSLError, ValueError) as exc:
            raise TlsConfigError(
                f"{prefix}the keystore's certificate and key do not load ({exc.__class__.__name__})"
            ) from None
    context.verify_mode = _CLIENT_AUTH[get("ssl.client.auth")]
    trusted = _truststore(get, prefix)
    if trusted:
        context.load_verify_locations(cadata=trusted)
    elif context.verify_mode != ssl.CERT_NONE:
        raise TlsConfigError(f"{prefix}ssl.client.auth={get('ssl.client.auth')} needs a truststore (ssl.truststore.*)")
    return context


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _read(location: str, setting: str, prefix: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise TlsConfigError(f"{prefix}{setting}={location}: {exc.strerror or exc}") from None


def _keystore(get: Any, prefix: str) -> tuple[bytes, bytes]:
    """(PEM chain, PEM key) of the server."""
    kind, location = get("ssl.keystore.type").upper(), get("ssl.keystore.location")
    if kind == "PEM":
        if location:
            data = _read(location, "ssl.keystore.location", prefix)
            return data, data  # one file holding both, as Kafka's PEM keystore file does
        chain, key = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
        if not chain or not key:
            raise TlsConfigError(
                f"{prefix}a TLS listener needs ssl.keystore.location, or ssl.keystore.certificate.chain "
                "and ssl.keystore.key"
            )
        return chain.encode(), key.encode()
    if not location:
        raise TlsConfigError(f"{prefix}a TLS listener needs a keystore: ssl.keystore.location (PKCS12 or PEM)")
    if kind not in ("PKCS12", "JKS"):
        raise TlsConfigError(f"{prefix}ssl.keystore.type={kind}: kgc reads PEM and PKCS12")
    password = get("ssl.keystore.password")
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(
            _read(location, "ssl.keystore.location", prefix), password.encode() if password else None
        )
    except ValueError:
        raise TlsConfigError(
            f"{prefix}ssl.keystore.location does not open as PKCS12 with ssl.keystore.password (a JKS store? "
            "convert it: keytool -importkeystore -deststoretype PKCS12)"
        ) from None
    if key is None or cert is None:
        raise TlsConfigError(f"{prefix}the keystore holds no private key and certificate")
    key_password = get("ssl.key.password")
    encryption = BestAvailableEncryption(key_password.encode()) if key_password else NoEncryption()
    chain = b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *(extra or [])])
    return chain, key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption)


def _truststore(get: Any, prefix: str) -> str | None:
    kind, location = get("ssl.truststore.type").upper(), get("ssl.truststore.location")
    if kind == "PEM":
        if location:
            return _read(location, "ssl.truststore.location", prefix).decode()
        return get("ssl.truststore.certificates") or None
    if not location:
        return None
    password = get("ssl.truststore.password")
    try:
        stored = pkcs12.load_pkcs12(
            _read(location, "ssl.truststore.location", prefix), password.encode() if password else None
        )
    except ValueError:
        raise TlsConfigError(
            f"{prefix}ssl.truststore.location does not open as PKCS12 with ssl.truststore.password"
        ) from None
    certs = [c.certificate for c in stored.additional_certs] + ([stored.cert.certificate] if stored.cert else [])
    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs) or None


def subject_dn(der: bytes | None) -> str | None:
    """A certificate's subject as Java's X500Principal.getName() writes it (RFC 2253), which is
    what ssl.principal.mapping.rules see (Kafka's DefaultKafkaPrincipalBuilder)."""
    if not der:
        return None
    return x509.load_der_x509_certificate(der).subject.rfc4514_string()
