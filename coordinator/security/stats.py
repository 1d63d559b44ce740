"""What the security layer counts, per listener: authentications, failures, re-authentications,
sessions closed because they expired, TLS handshakes that failed, and connections closed for a
request out of order. Plain counters (one trio loop): the control plane and the live page read
them; nothing here is a secret."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(slots=True)
class SecurityStats:
    authentications: int = 0
    failed_authentications: int = 0
    reauthentications: int = 0
    expired_sessions_closed: int = 0
    tls_handshakes: int = 0
    failed_tls_handshakes: int = 0
    illegal_sasl_state: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
