"""What every SASL mechanism's server side is: Kafka's SaslServer, as the authenticator drives it.

A `SaslServer` takes the client's tokens one at a time (`evaluate`) and answers a token of its
own; once `complete`, `principal` names who authenticated and `lifetime_ms` when its credential
ends (a token's expiry; None: no end). Failures are one of Kafka's two kinds, because the client
sees them differently (SaslServerAuthenticator.handleSaslToken): `SaslAuthenticationError`'s text
reaches the client as the SaslAuthenticate error message; a `SaslError` reaches it only as
"Authentication failed during authentication due to invalid credentials with SASL mechanism M".
Neither message ever carries a secret.
"""

from __future__ import annotations

from typing import Protocol

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
OAUTHBEARER = "OAUTHBEARER"
SERVED_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER)


class SaslAuthenticationError(Exception):
    """Kafka's SaslAuthenticationException: its message is sent to the client."""


class SaslError(Exception):
    """Kafka's javax.security.sasl.SaslException: the client gets a generic message."""


class SaslServer(Protocol):
    mechanism: str

    def evaluate(self, token: bytes) -> bytes:
        """The answer to one client token; raises SaslAuthenticationError or SaslError."""
        ...

    @property
    def complete(self) -> bool: ...

    @property
    def principal(self) -> str:
        """The authenticated user's name (without the "User:" type), once complete."""
        ...

    @property
    def lifetime_ms(self) -> int | None:
        """When the credential expires (epoch ms), or None (Kafka's CREDENTIAL_LIFETIME_MS)."""
        ...
