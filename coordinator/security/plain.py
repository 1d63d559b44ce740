"""SASL/PLAIN's server side (RFC 4616), as Kafka's PlainSaslServer checks it.

The client's one message is `authzid NUL username NUL password`. Users and passwords come from
the PLAIN login module's `user_NAME="PASSWORD"` options (jaas.py). A wrong password and an
unknown user get the same answer, and no message names the password.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from coordinator.security.sasl import PLAIN, SaslAuthenticationError


class PlainServer:
    mechanism = PLAIN

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self._principal: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", errors="replace").split("\x00")
        if len(parts) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._users.get(username)
        # compare_digest even for an unknown user, so the answer takes as long either way
        matches = hmac.compare_digest(password.encode(), (expected or "\x00" + password).encode())
        if expected is None or not matches:
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self._principal = username
        return b""

    @property
    def complete(self) -> bool:
        return self._principal is not None

    @property
    def principal(self) -> str:
        assert self._principal is not None
        return self._principal

    @property
    def lifetime_ms(self) -> int | None:
        return None
