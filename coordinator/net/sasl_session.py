"""One SASL listener connection's authentication: Kafka's SaslServerAuthenticator state machine.

Before authentication only ApiVersions and SaslHandshake (17) may come; after a SaslHandshake v1
the mechanism's tokens come in SaslAuthenticate (36) requests, after a v0 one as raw size-framed
tokens (answered the same way). Anything else closes the connection: a request out of order, an
unserved version, an unparseable header, a frame over sasl.server.max.receive.size (the frame
reader refuses those before reading them). A failed authentication is counted, answered (Kafka's
SASL_AUTHENTICATION_FAILED or UNSUPPORTED_SASL_MECHANISM; ILLEGAL_SASL_STATE for a request out of
order once the mechanism is chosen) after connection.failed.authentication.delay.ms, then closed;
nothing else is touched. Once authenticated, requests pass for one attribute check; with a session
lifetime (connections.max.reauth.ms, a token's expiry: KIP-368) each request also checks the
session: a SaslHandshake starts a re-authentication (at most one a second) that must keep the
mechanism and principal, and any other request after expiry closes the connection.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from coordinator.handlers.request_context import CloseConnection
from coordinator.net.socket_io import ConnectionLost, RawSocket
from coordinator.observe.logs import get_logger, log_event
from coordinator.security.listeners import ListenerPlan, SaslConfig
from coordinator.security.sasl import SaslAuthenticationError, SaslError, SaslServer
from protocol.api import SUPPORTED_VERSIONS, ApiKey, api_name
from protocol.codec import decode_request, encode_response
from protocol.errors import DecodeError, ErrorCode
from protocol.framing import frame
from protocol.headers import RequestHeader, decode_request_header, encode_response_header
from protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from protocol.messages.sasl_handshake import SaslHandshakeResponse

if TYPE_CHECKING:
    from coordinator.observe.tap import Tap

_log = get_logger("sasl")
PASS: Any = object()  # `receive`'s answer when the request goes on to the handlers
_MIN_REAUTH_INTERVAL_MS = 1000  # KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS
_HANDSHAKE = SUPPORTED_VERSIONS.get(ApiKey.SASL_HANDSHAKE, (0, 1))
_AUTHENTICATE = SUPPORTED_VERSIONS.get(ApiKey.SASL_AUTHENTICATE, (0, 2))


class _State(enum.Enum):
    HANDSHAKE_OR_VERSIONS = 1
    AUTHENTICATE = 2  # SaslAuthenticate framing (SaslHandshake v1)
    AUTHENTICATE_RAW = 3  # raw tokens (SaslHandshake v0)
    COMPLETE = 4
    REAUTH_BAD_MECHANISM = 5


class SaslSession:
    PASS = PASS

    def __init__(self, plan: ListenerPlan, conn: Any, tap: Tap | None, now_ms: Any) -> None:
        assert plan.sasl is not None
        self._config: SaslConfig = plan.sasl
        self._plan = plan
        self._conn = conn  # dispatch.Connection: its principal is set here
        self._tap = tap
        self._now_ms = now_ms
        self._state = _State.HANDSHAKE_OR_VERSIONS
        self._server: SaslServer | None = None
        self._mechanism: str | None = None
        self._expires_ms: int | None = None
        self._reauth_started_ms: int | None = None
        self._reauthenticating = False
        self.failed = False  # an authentication failed: the connection lingers, then closes
        self._changed_principal = ""  # why a re-authentication was refused
        self._set_limit: Callable[[int], None] | None = None
        self._limit = 0

    def on_authenticated(self, set_limit: Callable[[int], None], limit: int) -> None:
        """Once authenticated, frames may be as large as `limit` (the reader's bound is
        sasl.server.max.receive.size until then, so an unauthenticated client cannot make the
        server read a large frame)."""
        self._set_limit, self._limit = set_limit, limit

    @property
    def authenticating(self) -> bool:
        return self._state is not _State.COMPLETE

    @property
    def mechanism(self) -> str | None:
        return self._mechanism

    def intercepts(self) -> bool:
        """Must this request pass through `receive`? (False: straight to the handlers.)"""
        return self._state is not _State.COMPLETE or self._expires_ms is not None

    async def receive(self, payload: bytes) -> tuple[bytes, bytes] | Any:
        if self._state is _State.AUTHENTICATE_RAW:
            return await self._raw_token(payload)
        try:
            header, offset = decode_request_header(payload)
        except DecodeError as exc:
            if self._state is _State.COMPLETE:
                return PASS  # dispatch closes it, as for any connection
            await self._fail(f"unparseable request during SASL authentication: {exc}")
        key = header.api_key
        if self._state is _State.COMPLETE:
            if not self._begins_reauthentication(header):
                return PASS
            return await self._handshake(header, payload, offset)
        if self._state is _State.REAUTH_BAD_MECHANISM:
            await self._fail(f"SASL mechanism changed during re-authentication (from {self._mechanism})")
        if self._state is _State.HANDSHAKE_OR_VERSIONS:
            if key == ApiKey.API_VERSIONS and not self._reauthenticating:
                # Kafka also answers ApiVersions once only; a second one is answered here too
                # (an unsupported-version or invalid answer leaves Kafka in this state as well).
                return PASS
            if key != ApiKey.SASL_HANDSHAKE:
                self._plan.stats.illegal_sasl_state += 1
                await self._fail(f"Unexpected Kafka request of type {_api(key)} during SASL handshake.")
            return await self._handshake(header, payload, offset)
        if key != ApiKey.SASL_AUTHENTICATE:
            self._plan.stats.illegal_sasl_state += 1
            reason = f"Unexpected Kafka request of type {_api(key)} during SASL authentication."
            await self._fail(reason, self._illegal_state_answer(header, payload, offset, reason))
        return await self._authenticate(header, payload, offset)

    # -- the steps -------------------------------------------------------------------------------
    def _begins_reauthentication(self, header: RequestHeader) -> bool:
        """An authenticated connection with a session lifetime: a SaslHandshake (at most one a
        second) begins a re-authentication (KafkaChannel.maybeBeginServerReauthentication); any
        other request after the session expired closes the connection (SocketServer)."""
        now = self._now_ms()
        if header.api_key == ApiKey.SASL_HANDSHAKE and (
            self._reauth_started_ms is None or now - self._reauth_started_ms >= _MIN_REAUTH_INTERVAL_MS
        ):
            self._reauth_started_ms = now
            self._reauthenticating = True
            self._state = _State.HANDSHAKE_OR_VERSIONS
            return True
        assert self._expires_ms is not None
        if now >= self._expires_ms:
            self._plan.stats.expired_sessions_closed += 1
            raise CloseConnection("SASL session expired (KIP-368: the client did not re-authenticate in time)")
        return False

    async def _handshake(self, header: RequestHeader, payload: bytes, offset: int) -> tuple[bytes, bytes]:
        version = header.api_version
        if not _HANDSHAKE[0] <= version <= _HANDSHAKE[1]:
            raise CloseConnection(f"SaslHandshake v{version} is not served")
        request = self._decode(header, payload, offset)
        mechanism = request.mechanism
        enabled = list(self._config.mechanisms)
        if mechanism not in enabled:
            answer = SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled)
            self._event(header, ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanism)
            await self._fail(f"Unsupported SASL mechanism {mechanism}", self._answer(header, answer))
        if self._reauthenticating and mechanism != self._mechanism:
            self._state = _State.REAUTH_BAD_MECHANISM  # Kafka answers this handshake, then fails
        else:
            self._mechanism = mechanism
            self._server = self._config.server(mechanism)
            self._state = _State.AUTHENTICATE if version >= 1 else _State.AUTHENTICATE_RAW
        self._event(header, ErrorCode.NONE, mechanism)
        return self._answer(header, SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=enabled))

    async def _authenticate(self, header: RequestHeader, payload: bytes, offset: int) -> tuple[bytes, bytes]:
        version = header.api_version
        if not _AUTHENTICATE[0] <= version <= _AUTHENTICATE[1]:
            raise CloseConnection(f"SaslAuthenticate v{version} is not served")
        request = self._decode(header, payload, offset)
        try:
            token = self._evaluate(request.auth_bytes)
        except SaslAuthenticationError as exc:
            await self._refuse(header, str(exc))
        except SaslError:
            await self._refuse(header, self._generic_failure())
        lifetime = 0
        if self._server is not None and self._server.complete:
            lifetime = self._complete()
            if lifetime < 0:
                await self._refuse(header, self._changed_principal)
        self._event(header, ErrorCode.NONE, self._mechanism)
        return self._answer(
            header,
            SaslAuthenticateResponse(error_code=0, error_message=None, auth_bytes=token, session_lifetime_ms=lifetime),
        )

    async def _raw_token(self, token: bytes) -> tuple[bytes, bytes]:
        try:
            answer = self._evaluate(token)
        except (SaslAuthenticationError, SaslError) as exc:
            await self._fail(f"SASL authentication failed ({self._mechanism}, raw tokens): {exc}")
        if self._server is not None and self._server.complete and self._complete() < 0:
            await self._fail(self._changed_principal)
        return b"", answer  # a size-framed token, no Kafka header (SaslHandshake v0)

    def _evaluate(self, token: bytes) -> bytes:
        assert self._server is not None
        return self._server.evaluate(token)

    def _complete(self) -> int:
        """Authentication succeeded: the principal set, the session lifetime (ms; 0 = none) sent to
        the client; -1 when a re-authentication named another principal."""
        server = self._server
        assert server is not None and self._mechanism is not None
        principal = "User:" + server.principal
        conn = self._conn
        if self._reauthenticating and principal != conn.principal:
            self._changed_principal = (
                f"Cannot change principals during re-authentication from {conn.principal.replace(':', '.', 1)}: "
                f"{principal.replace(':', '.', 1)}"
            )
            return -1
        now = self._now_ms()
        # SaslServerAuthenticator.ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs
        max_reauth = self._config.reauth_ms.get(self._mechanism, 0)
        credential_end = server.lifetime_ms
        lifetime = 0
        if credential_end is not None or max_reauth > 0:
            if credential_end is None:
                lifetime = max(0, max_reauth)
            elif max_reauth <= 0:
                lifetime = max(0, credential_end - now)
            else:
                lifetime = max(0, min(credential_end - now, max_reauth))
            self._expires_ms = now + lifetime
        else:
            self._expires_ms = None
        stats = self._plan.stats
        if self._reauthenticating:
            stats.reauthentications += 1
        else:
            stats.authentications += 1
        conn.principal = principal
        seen = self._plan.connections.get(conn.connection_id)
        if seen is not None:
            seen.update(principal=principal, mechanism=self._mechanism)
        self._state = _State.COMPLETE
        if self._set_limit is not None:
            self._set_limit(self._limit)
        reauth, self._reauthenticating = self._reauthenticating, False
        log_event(
            _log,
            "sasl.authenticated",
            logging.DEBUG,
            conn=conn.connection_id,
            principal=principal,
            mechanism=self._mechanism,
            reauthentication=reauth,
            session_lifetime_ms=lifetime,
        )
        if self._tap is not None:
            self._tap.authenticated(conn.connection_id, conn.client_host, principal, self._mechanism, reauth, lifetime)
        return lifetime

    # -- answers and failures --------------------------------------------------------------------
    def _generic_failure(self) -> str:
        what = "re-authentication" if self._reauthenticating else "authentication"
        return f"Authentication failed during {what} due to invalid credentials with SASL mechanism {self._mechanism}"

    async def _refuse(self, header: RequestHeader, message: str) -> None:
        self._event(header, ErrorCode.SASL_AUTHENTICATION_FAILED, self._mechanism)
        answer = SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=message)
        await self._fail(message, self._answer(header, answer))

    async def _fail(self, reason: str, answer: tuple[bytes, bytes] | None = None) -> None:
        """Count, wait connection.failed.authentication.delay.ms (Kafka's Selector delays the answer
        and the close), then close with `answer` as the last frame. Never returns."""
        self._plan.stats.failed_authentications += 1
        self.failed = answer is not None
        self._state = _State.HANDSHAKE_OR_VERSIONS
        self._server = None
        delay = self._config.failed_delay_ms
        if delay > 0:
            await trio.sleep(delay / 1000)
        raise CloseConnection(f"authentication failed: {reason}", final=frame(*answer) if answer else None)

    def _decode(self, header: RequestHeader, payload: bytes, offset: int) -> Any:
        try:
            return decode_request(header.api_key, header.api_version, payload, offset, strict=False)
        except DecodeError as exc:
            raise CloseConnection(f"malformed {_api(header.api_key)} during SASL authentication: {exc}") from None

    def _answer(self, header: RequestHeader, response: Any) -> tuple[bytes, bytes]:
        head = encode_response_header(header.correlation_id, header.api_key, header.api_version)
        return head, encode_response(header.api_key, header.api_version, response)

    def _illegal_state_answer(
        self, header: RequestHeader, payload: bytes, offset: int, reason: str
    ) -> tuple[bytes, bytes] | None:
        """Kafka answers a request that comes in place of SaslAuthenticate with that API's own
        error response (ILLEGAL_SASL_STATE), when it can parse it."""
        versions = SUPPORTED_VERSIONS.get(header.api_key)  # type: ignore[call-overload]
        if versions is None or not versions[0] <= header.api_version <= versions[1]:
            return None
        from coordinator.control.error_responses import error_response  # rare: loaded when needed

        try:
            request = decode_request(header.api_key, header.api_version, payload, offset, strict=False)
            response = error_response(header.api_key, header.api_version, request, ErrorCode.ILLEGAL_SASL_STATE, reason)
        except (DecodeError, KeyError):
            return None
        return None if response is None else self._answer(header, response)

    def _event(self, header: RequestHeader, error: int, mechanism: str | None) -> None:
        if self._tap is not None:
            self._tap.sasl(
                self._conn.connection_id,
                self._conn.client_host,
                api_name(header.api_key),
                header.api_version,
                error,
                mechanism,
                self._reauthenticating,
            )


LINGER_S = 0.05


async def linger(sock: RawSocket) -> None:
    """After a failed authentication's answer, wait up to LINGER_S for the client to close first
    (what it sends meanwhile is dropped). Kafka closes at once; a client that reads the answer and
    the close in one read loop may then drop the answer (kafka-python 3.0 does), so kgc lets the
    answer arrive alone. Bounded: a client that never closes costs its connection 50 ms more."""
    scratch = bytearray(256)
    with trio.move_on_after(LINGER_S):
        try:
            while await sock.recv_into(scratch):
                pass
        except ConnectionLost:
            pass


def _api(key: int) -> str:
    try:
        return ApiKey(key).name
    except ValueError:
        return str(key)
