"""Security for an embedded server or the pytest fixture in one object: `SecurityOptions`.

    with EmbeddedServer(security=SecurityOptions("SASL_SSL", users={"alice": "alice-secret"})) as s:
        Consumer({**s.client_settings("alice", "alice-secret", "SCRAM-SHA-512"), ...})

It turns into Kafka's own settings (one listener of `protocol`, sasl.enabled.mechanisms, the
PLAIN users in the listener's JAAS config, the ssl.* of throwaway certificates made with
coordinator/security/certs.py, authorizer.class.name and super.users), and after start every
user gets SCRAM credentials for each SCRAM mechanism enabled (salted and hashed as Kafka keeps
them). `client_settings` gives librdkafka-style settings (confluent-kafka, kcat) for a user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coordinator.security.credentials import CredentialStore
from coordinator.security.jaas import PLAIN_MODULE
from coordinator.security.sasl import PLAIN, SCRAM_SHA_256, SCRAM_SHA_512
from coordinator.security.scram import credential_from_password
from coordinator.security.standard_authorizer import AUTHORIZER_CLASSES

if TYPE_CHECKING:
    from coordinator.security.certs import CertFiles  # cryptography: imported only to make certificates

PROTOCOLS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class SecurityOptions:
    protocol: str = "SASL_PLAINTEXT"  # the one listener: SSL, SASL_PLAINTEXT or SASL_SSL
    users: Mapping[str, str] = field(default_factory=lambda: {"admin": "admin-secret"})  # name -> password
    mechanisms: tuple[str, ...] = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, "OAUTHBEARER")
    client_auth: str = "none"  # SSL listeners: required, requested or none
    authorizer: bool = False  # StandardAuthorizer with allow.everyone.if.no.acl.found=false
    super_users: tuple[str, ...] = ("User:admin",)
    reauth_ms: int = 0  # connections.max.reauth.ms (KIP-368)

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    def settings(self, certs: CertFiles | None) -> dict[str, Any]:
        """Kafka's settings for this listener (port and host come from the embedding)."""
        listener = self.protocol.lower()
        found: dict[str, Any] = {"listeners": f"{self.protocol}://127.0.0.1:0"}
        if self.sasl:
            found["sasl.enabled.mechanisms"] = ",".join(self.mechanisms)
            if PLAIN in self.mechanisms:
                entries = " ".join(f'user_{name}="{password}"' for name, password in self.users.items())
                found[f"listener.name.{listener}.plain.sasl.jaas.config"] = f"{PLAIN_MODULE} required {entries};"
        if self.tls:
            assert certs is not None
            found.update(certs.server_settings(self.client_auth))
        if self.authorizer:
            found["authorizer.class.name"] = AUTHORIZER_CLASSES[0]
            found["super.users"] = ";".join(self.super_users)
        if self.reauth_ms:
            found["connections.max.reauth.ms"] = self.reauth_ms
        return found

    def make_certs(self, directory: Path) -> CertFiles | None:
        if not self.tls:
            return None
        from coordinator.security.certs import make_certs

        return make_certs(directory)

    def add_scram_users(self, store: CredentialStore) -> None:
        """Every user, for every SCRAM mechanism enabled (call from the server's trio thread)."""
        upserts = {
            (user, mechanism): credential_from_password(mechanism, password)
            for user, password in self.users.items()
            for mechanism in self.mechanisms
            if mechanism in (SCRAM_SHA_256, SCRAM_SHA_512)
        }
        if upserts:
            store.apply(upserts, [])

    def client_settings(
        self, certs: CertFiles | None, user: str | None = None, password: str | None = None, mechanism: str = PLAIN
    ) -> dict[str, str]:
        """librdkafka's names (confluent-kafka, kcat) for a client of this listener."""
        found = {"security.protocol": self.protocol}
        if self.sasl:
            found["sasl.mechanism"] = mechanism
            if user is not None:
                found["sasl.username"] = user
                found["sasl.password"] = password if password is not None else self.users[user]
        if certs is not None:
            found["ssl.ca.location"] = str(certs.ca)
            if self.client_auth != "none":
                found["ssl.certificate.location"] = str(certs.client_cert)
                found["ssl.key.location"] = str(certs.client_key)
        return found
