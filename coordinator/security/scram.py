"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer runs them.

Credentials are kept as Kafka keeps them (UserScramCredentialRecord): salt, StoredKey =
H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key") and the
iteration count; never the password. AlterUserScramCredentials hands over SaltedPassword (the
client ran PBKDF2), `credential_from_salted` turns it into a credential; `credential_from_password`
does the client's part too (the fixture, the control plane). The exchange is two rounds:
client-first -> server-first (nonce, salt, iterations), client-final (proof) -> server-final
(signature). Every failure is a SaslError (the client sees Kafka's generic message), except an
authorization id that differs from the user name (SaslAuthenticationError, as in Kafka).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from coordinator.security.sasl import SCRAM_SHA_256, SCRAM_SHA_512, SaslAuthenticationError, SaslError

# Kafka's ScramMechanism: the wire type (AlterUserScramCredentials, DescribeUserScramCredentials)
# and the iteration bounds (ScramMechanism.minIterations, ScramControlManager.MAX_ITERATIONS).
MECHANISM_TYPES = {SCRAM_SHA_256: 1, SCRAM_SHA_512: 2}
MECHANISM_NAMES = {code: name for name, code in MECHANISM_TYPES.items()}
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
_HASHES = {SCRAM_SHA_256: "sha256", SCRAM_SHA_512: "sha512"}

# ScramMessages' grammar: saslname excludes ',' and '=' unless escaped; printable excludes ','.
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_BASE64 = r"[A-Za-z0-9+/]*={0,2}"
_EXTENSIONS = r"(?:,[A-Za-z]+=[\x01-\x2b\x2d-\x7f]+)*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?P<bare>n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS}))"
)
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),p=(?P<proof>{_BASE64})"
)
_SUPPORTED_EXTENSIONS = frozenset({"tokenauth"})


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(mechanism: str) -> Callable[[bytes, bytes], bytes]:
    name = _HASHES[mechanism]
    return lambda key, data: hmac.new(key, data, name).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802 Hi(): PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode("utf-8"), salt, iterations)


def credential_from_salted(mechanism: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
    """Kafka's ScramControlManager.finishUpsertion: SaltedPassword -> StoredKey and ServerKey."""
    mac = _hmac(mechanism)
    client_key = mac(salted, b"Client Key")
    stored_key = hashlib.new(_HASHES[mechanism], client_key).digest()
    return ScramCredential(salt, stored_key, mac(salted, b"Server Key"), iterations)


def credential_from_password(mechanism: str, password: str, iterations: int = MIN_ITERATIONS) -> ScramCredential:
    salt = secrets.token_bytes(32)
    return credential_from_salted(mechanism, salted_password(mechanism, password, salt, iterations), salt, iterations)


def username_from_saslname(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


def _b64decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise SaslError("invalid base64") from None


class ScramServer:
    """One authentication exchange; `lookup(user)` finds the stored credential (None: unknown)."""

    def __init__(
        self,
        mechanism: str,
        lookup: Callable[[str], ScramCredential | None],
        server_nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24),
    ) -> None:
        self.mechanism = mechanism
        self._server_nonce = server_nonce
        self._lookup = lookup
        self._mac = _hmac(mechanism)
        self._hash = _HASHES[mechanism]
        self._state = "first"
        self._user: str | None = None
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def evaluate(self, token: bytes) -> bytes:
        try:
            if self._state == "first":
                return self._client_first(token)
            if self._state == "final":
                return self._client_final(token)
            raise SaslError("unexpected SCRAM message after the exchange ended")
        except (SaslError, SaslAuthenticationError):
            self._state = "failed"
            self._credential = None
            raise

    def _client_first(self, token: bytes) -> bytes:
        match = _CLIENT_FIRST.fullmatch(token.decode("utf-8", errors="replace"))
        if match is None:
            raise SaslError("Invalid SCRAM client first message format")
        extensions = {item.split("=", 1)[0] for item in match["extensions"].split(",") if item}
        if not extensions <= _SUPPORTED_EXTENSIONS:
            raise SaslError("Some extensions are not supported")
        user = username_from_saslname(match["saslname"])
        authzid = match["authzid"]
        if authzid and username_from_saslname(authzid) != user:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        credential = self._lookup(user)
        if credential is None:
            raise SaslError("Authentication failed: Invalid user credentials")
        if credential.iterations < MIN_ITERATIONS:
            raise SaslError("Iterations below the mechanism's minimum")
        self._user, self._credential = user, credential
        self._nonce = match["nonce"] + self._server_nonce()
        salt = base64.b64encode(credential.salt).decode()
        self._client_first_bare = match["bare"]
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode()

    def _client_final(self, token: bytes) -> bytes:
        match = _CLIENT_FINAL.fullmatch(token.decode("utf-8", errors="replace"))
        if match is None:
            raise SaslError("Invalid SCRAM client final message format")
        # Kafka's ScramSaslServer checks endsWith, not equality: librdkafka before 2.x sent the
        # client nonce twice (kcat 1.7 on Debian still does), and Kafka accepts it.
        if not match["nonce"].endswith(self._nonce):
            raise SaslError("Invalid client nonce in the final client message.")
        credential = self._credential
        assert credential is not None
        auth_message = f"{self._client_first_bare},{self._server_first},{match['without_proof']}".encode()
        proof = _b64decode(match["proof"])
        signature = self._mac(credential.stored_key, auth_message)
        if len(proof) != len(signature):
            raise SaslError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(), credential.stored_key):
            raise SaslError("Invalid client credentials")
        self._state = "complete"
        server_signature = self._mac(credential.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    @property
    def principal(self) -> str:
        assert self._user is not None
        return self._user

    @property
    def lifetime_ms(self) -> int | None:
        return None
