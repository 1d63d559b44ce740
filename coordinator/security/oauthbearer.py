"""SASL/OAUTHBEARER (RFC 7628) with Kafka's unsecured-JWT validator.

The client's first message is `n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A...]^A`. The
token is an unsecured JWS (`header.claims.`, alg "none", no signature) checked as Kafka's
OAuthBearerUnsecuredValidatorCallbackHandler checks it: the principal claim (`sub` unless
unsecuredValidatorPrincipalClaimName says otherwise) present and a string, `exp` present and
not past (minus unsecuredValidatorAllowableClockSkewMs), `iat` not in the future, exp after iat,
and every scope of unsecuredValidatorRequiredScope granted. A bad token is answered, as RFC 7628
says, with a JSON error challenge; the client acknowledges with ^A and the exchange fails with
that JSON as its message (OAuthBearerSaslServer). The token's expiry bounds the session (KIP-368).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.security.sasl import OAUTHBEARER, SaslAuthenticationError, SaslError

_SEP = "\x01"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


@dataclass(frozen=True, slots=True)
class ValidatorOptions:
    """The unsecuredValidator* options of the OAUTHBEARER login module (jaas.py)."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    clock_skew_ms: int = 0

    @classmethod
    def from_jaas(cls, options: Mapping[str, str]) -> ValidatorOptions:
        skew = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip() or "0"
        if not skew.isdigit():
            raise ValueError(f"unsecuredValidatorAllowableClockSkewMs must be a non-negative integer, got {skew!r}")
        return cls(
            principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub",
            scope_claim=options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope",
            required_scope=tuple(options.get("unsecuredValidatorRequiredScope", "").split()),
            clock_skew_ms=int(skew),
        )


@dataclass(frozen=True, slots=True)
class Token:
    principal: str
    lifetime_ms: int
    scope: frozenset[str]


class InvalidToken(Exception):
    """Why a token was refused; `scope` set when a required scope was missing."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


def _b64_json(part: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed JSON") from None
    if not isinstance(value, dict):
        raise InvalidToken("malformed JSON")
    return value


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidToken(f"The '{name}' claim was not of type Number")
    return float(value)


def validate_unsecured(token: str, options: ValidatorOptions, now_ms: int) -> Token:
    """Kafka's OAuthBearerUnsecuredJws + OAuthBearerValidationUtils; raises InvalidToken."""
    if ".." in token:
        raise InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        if len(parts) == 3:
            raise InvalidToken("Unsecured JWS must not contain a digital signature")
        raise InvalidToken("Unsecured JWS compact serializations must have 3 dot-separated values, the third empty")
    header, claims = _b64_json(parts[0]), _b64_json(parts[1])
    if header.get("alg") != "none":
        raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    principal = claims.get(options.principal_claim)
    if principal is None:
        raise InvalidToken(f"Required claim missing: {options.principal_claim}")
    if not isinstance(principal, str) or not principal:
        raise InvalidToken(f"The {options.principal_claim} claim had the incorrect type")
    exp, iat = _number(claims, "exp"), _number(claims, "iat")
    skew = options.clock_skew_ms
    if iat is not None and 1000 * iat > now_ms + skew:
        raise InvalidToken("The Issued At value was after the indicated time plus allowable clock skew")
    if exp is None:
        raise InvalidToken("Required claim missing: exp")
    if now_ms - skew >= 1000 * exp:
        raise InvalidToken("The indicated time minus allowable clock skew was on or after the Expiration Time value")
    if iat is not None and exp <= iat:
        raise InvalidToken("The Expiration Time time was not after the Issued At time")
    raw_scope = claims.get(options.scope_claim)
    if isinstance(raw_scope, str):
        scope = frozenset(raw_scope.split())
    elif isinstance(raw_scope, list):
        scope = frozenset(str(s) for s in raw_scope)
    else:
        scope = frozenset()
    for wanted in options.required_scope:
        if wanted not in scope:
            raise InvalidToken("The provided scope was missing a required scope", " ".join(options.required_scope))
    return Token(principal, int(1000 * exp), scope)


class OAuthBearerServer:
    mechanism = OAUTHBEARER

    def __init__(self, options: ValidatorOptions, now_ms: Callable[[], int]) -> None:
        self._options = options
        self._now_ms = now_ms
        self._token: Token | None = None
        self._error: str | None = None  # the JSON challenge sent; the client must acknowledge it

    def evaluate(self, response: bytes) -> bytes:
        if response == b"\x01" and self._error is not None:
            raise SaslAuthenticationError(self._error)
        self._error = None
        match = _INITIAL.fullmatch(response.decode("utf-8", errors="replace"))
        if match is None:
            raise SaslError("Invalid OAUTHBEARER client first message")
        pairs = dict(p.split("=", 1) for p in match["kvpairs"].split(_SEP) if p)
        auth = pairs.pop("auth", None)
        if auth is None:
            raise SaslError("Invalid OAUTHBEARER client first message: 'auth' not specified")
        auth_match = _AUTH.fullmatch(auth)
        if auth_match is None:
            raise SaslError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if auth_match["scheme"].lower() != "bearer":
            raise SaslError("Invalid scheme in OAUTHBEARER client first message")
        try:
            token = validate_unsecured(auth_match["token"], self._options, self._now_ms())
        except InvalidToken as exc:
            status = "insufficient_scope" if exc.scope is not None else "invalid_token"
            body = {"status": status} | ({"scope": exc.scope} if exc.scope is not None else {})
            error = json.dumps(body, separators=(",", ":"))
            self._error = error
            return error.encode()
        authzid = match["authzid"] or ""
        if authzid and authzid != token.principal:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from "
                "the token's principal name"
            )
        self._token = token
        return b""

    @property
    def complete(self) -> bool:
        return self._token is not None

    @property
    def principal(self) -> str:
        assert self._token is not None
        return self._token.principal

    @property
    def lifetime_ms(self) -> int | None:
        return None if self._token is None else self._token.lifetime_ms
