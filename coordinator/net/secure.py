"""Making a new connection what its listener asks: the TLS handshake (SSL, SASL_SSL) and, for
SASL listeners, the session that authenticates it before anything else is dispatched.

With ssl.client.auth the client certificate's subject becomes the principal of an SSL listener's
connection (Kafka's DefaultKafkaPrincipalBuilder); on SASL_SSL the SASL identity wins, as in
Kafka. Handshakes are counted per listener (security/stats.py); a failed one raises TlsFailed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordinator.net.dispatch import Connection
from coordinator.net.sasl_session import SaslSession
from coordinator.net.socket_io import RawSocket
from coordinator.net.tls import TlsFailed, start_tls
from coordinator.security.listeners import ListenerPlan

if TYPE_CHECKING:
    from coordinator.observe.tap import Tap


async def secure_connection(plan: ListenerPlan, sock: RawSocket, conn: Connection, tap: Tap | None) -> RawSocket:
    conn.listener = None if plan.primary else plan.name
    plan.connections[conn.connection_id] = {"host": conn.client_host, "principal": conn.principal, "mechanism": None}
    if plan.ssl_context is not None:
        try:
            tls = await start_tls(sock, plan.ssl_context)
        except TlsFailed:
            plan.stats.failed_tls_handshakes += 1
            raise
        plan.stats.tls_handshakes += 1
        sock = tls
        if plan.client_auth != "none" and plan.sasl is None:
            from coordinator.security.ssl_context import subject_dn

            dn = subject_dn(tls.ssl_socket.getpeercert(binary_form=True))
            if dn is not None:
                assert plan.principal_mapper is not None
                name = plan.principal_mapper.name(dn)
                if name is None:  # Kafka's NoMatchingRule: no principal, no connection
                    plan.stats.failed_authentications += 1
                    tls.detach()
                    raise TlsFailed(f"no ssl.principal.mapping.rules rule applies to the client's DN {dn}")
                principal = "User:" + name
                conn.principal = principal
                plan.connections[conn.connection_id].update(principal=principal, mechanism="SSL")
                if tap is not None:
                    tap.authenticated(conn.connection_id, conn.client_host, principal, "SSL", False, 0)
    if plan.sasl is not None:
        conn.session = SaslSession(plan, conn, tap, plan.sasl.now_ms)
    return sock
