"""The SASL mechanisms' server sides: RFC vectors, an independent client, and every refusal."""

from __future__ import annotations

import base64
import json

import pytest
from kafka.net.sasl.scram import ScramClient

from coordinator.security.jaas import JaasError, parse_jaas, plain_users
from coordinator.security.oauthbearer import InvalidToken, OAuthBearerServer, ValidatorOptions, validate_unsecured
from coordinator.security.plain import PlainServer
from coordinator.security.sasl import SaslAuthenticationError, SaslError
from coordinator.security.scram import ScramServer, credential_from_password, credential_from_salted, salted_password


# -- SCRAM ---------------------------------------------------------------------------------------
def test_scram_sha_256_rfc7677_example():
    """RFC 7677 section 3: user "user", password "pencil", every message byte for byte."""
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = credential_from_salted(
        "SCRAM-SHA-256", salted_password("SCRAM-SHA-256", "pencil", salt, 4096), salt, 4096
    )
    server = ScramServer(
        "SCRAM-SHA-256", {"user": credential}.get, server_nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.evaluate(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.principal == "user" and server.lifetime_ms is None


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_against_kafka_pythons_client(mechanism):
    credential = credential_from_password(mechanism, "alice-secret")
    server = ScramServer(mechanism, {"alice": credential}.get)
    client = ScramClient("alice", "alice-secret", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))  # raises if the signature is wrong
    assert server.complete and server.principal == "alice"


def test_scram_wrong_password_unknown_user_and_bad_messages_fail_generically():
    credential = credential_from_password("SCRAM-SHA-512", "right")
    server = ScramServer("SCRAM-SHA-512", {"alice": credential}.get)
    client = ScramClient("alice", "wrong", "SCRAM-SHA-512")
    client.process_server_first_message(server.evaluate(client.first_message()))
    with pytest.raises(SaslError):
        server.evaluate(client.final_message())
    assert not server.complete
    with pytest.raises(SaslError):  # nothing more after a failure
        server.evaluate(client.final_message())
    with pytest.raises(SaslError):
        ScramServer("SCRAM-SHA-512", {}.get).evaluate(b"n,,n=nobody,r=abc")
    for bad in (b"", b"garbage", b"p=tls-unique,,n=a,r=b", b"n,,n=a,r=b,ext=1", b"\xff" * 50):
        with pytest.raises(SaslError):
            ScramServer("SCRAM-SHA-512", {"a": credential}.get).evaluate(bad)
    server = ScramServer("SCRAM-SHA-512", {"alice": credential}.get)
    server.evaluate(b"n,,n=alice,r=abc")
    with pytest.raises(SaslError, match="nonce"):
        server.evaluate(b"c=biws,r=abcWRONG,p=AAAA")
    with pytest.raises(SaslAuthenticationError, match="authorization id"):
        ScramServer("SCRAM-SHA-512", {"alice": credential}.get).evaluate(b"n,a=bob,n=alice,r=abc")


def test_scram_escaped_names():
    credential = credential_from_password("SCRAM-SHA-256", "pw")
    server = ScramServer("SCRAM-SHA-256", {"a,b=c": credential}.get)
    server.evaluate(b"n,,n=a=2Cb=3Dc,r=nonce")  # the user "a,b=c" (RFC 5802 saslname escapes)
    assert server._user == "a,b=c"


# -- PLAIN ---------------------------------------------------------------------------------------
def test_plain():
    server = PlainServer({"alice": "alice-secret"})
    assert server.evaluate(b"\x00alice\x00alice-secret") == b"" and server.principal == "alice"
    assert PlainServer({"alice": "s"}).evaluate(b"alice\x00alice\x00s") == b""
    cases = [
        (b"\x00alice\x00wrong", "Invalid username or password"),
        (b"\x00bob\x00alice-secret", "Invalid username or password"),
        (b"alice-secret", "expected 3 tokens, got 1"),
        (b"\x00\x00pw", "username not specified"),
        (b"\x00alice\x00", "password not specified"),
        (b"bob\x00alice\x00alice-secret", "authorization id that is different"),
    ]
    for token, message in cases:
        with pytest.raises(SaslAuthenticationError, match=message) as info:
            PlainServer({"alice": "alice-secret"}).evaluate(token)
        assert "secret" not in str(info.value)  # no password in any message


# -- OAUTHBEARER ---------------------------------------------------------------------------------
def _b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def unsecured(claims: dict, header: dict | None = None) -> str:
    return f"{_b64(header or {'alg': 'none'})}.{_b64(claims)}."


NOW_MS = 1_700_000_000_000


def test_unsecured_jwt_validator():
    options = ValidatorOptions()
    token = validate_unsecured(unsecured({"sub": "alice", "exp": NOW_MS / 1000 + 60, "scope": "a b"}), options, NOW_MS)
    assert (token.principal, token.lifetime_ms, token.scope) == ("alice", NOW_MS + 60_000, frozenset({"a", "b"}))
    bad = [
        (unsecured({"sub": "a", "exp": NOW_MS / 1000 - 1}), "Expiration"),
        (unsecured({"sub": "a"}), "Required claim missing: exp"),
        (unsecured({"exp": NOW_MS / 1000 + 5}), "Required claim missing: sub"),
        (unsecured({"sub": "a", "exp": NOW_MS / 1000 + 5}, {"alg": "HS256"}), "'none'"),
        (unsecured({"sub": "a", "exp": NOW_MS / 1000 + 5}) + "sig", "signature"),
        (unsecured({"sub": "a", "exp": NOW_MS / 1000 + 5, "iat": NOW_MS / 1000 + 30}), "Issued At"),
        (unsecured({"sub": "a", "exp": "soon"}), "Number"),
        ("abc", "3 dot-separated"),
        ("a..", "'..'"),
        ("!!!.???.", "malformed JSON"),
    ]
    for text, reason in bad:
        with pytest.raises(InvalidToken, match=reason):
            validate_unsecured(text, options, NOW_MS)
    scoped = ValidatorOptions.from_jaas(
        {"unsecuredValidatorRequiredScope": "write", "unsecuredValidatorPrincipalClaimName": "uid"}
    )
    with pytest.raises(InvalidToken) as info:
        validate_unsecured(unsecured({"uid": "a", "exp": NOW_MS / 1000 + 5, "scope": ["read"]}), scoped, NOW_MS)
    assert info.value.scope == "write"
    skew = ValidatorOptions.from_jaas({"unsecuredValidatorAllowableClockSkewMs": "5000"})
    assert validate_unsecured(unsecured({"sub": "a", "exp": NOW_MS / 1000 - 1}), skew, NOW_MS).principal == "a"


def test_oauthbearer_exchange_and_error_challenge():
    token = unsecured({"sub": "alice", "exp": NOW_MS / 1000 + 60})
    server = OAuthBearerServer(ValidatorOptions(), lambda: NOW_MS)
    assert server.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode()) == b""
    assert server.complete and server.principal == "alice" and server.lifetime_ms == NOW_MS + 60_000
    expired = unsecured({"sub": "alice", "exp": NOW_MS / 1000 - 60})
    server = OAuthBearerServer(ValidatorOptions(), lambda: NOW_MS)
    challenge = server.evaluate(f"n,a=alice,\x01auth=Bearer {expired}\x01\x01".encode())
    assert challenge == b'{"status":"invalid_token"}' and not server.complete
    with pytest.raises(SaslAuthenticationError, match="invalid_token"):
        server.evaluate(b"\x01")
    with pytest.raises(SaslAuthenticationError, match="authorization id"):
        OAuthBearerServer(ValidatorOptions(), lambda: NOW_MS).evaluate(
            f"n,a=bob,\x01auth=Bearer {token}\x01\x01".encode()
        )
    for bad in (b"", b"n,,auth=Bearer x", f"n,,\x01auth=Basic {token}\x01\x01".encode(), b"n,,\x01x=y\x01\x01"):
        with pytest.raises(SaslError):
            OAuthBearerServer(ValidatorOptions(), lambda: NOW_MS).evaluate(bad)


# -- JAAS ----------------------------------------------------------------------------------------
def test_jaas_config_as_kafka_writes_it():
    modules = parse_jaas(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="a; \\"quoted\\"";'
    )
    assert modules[0].flag == "required" and modules[0].options["username"] == "admin"
    assert plain_users(modules) == {"admin": "admin-secret", "alice": 'a; "quoted"'}
    assert "secret" not in repr(modules)  # options never show in a repr
    two = parse_jaas("a.B optional x=1; c.D sufficient;")
    assert [(m.name, m.flag, m.options) for m in two] == [("a.B", "optional", {"x": "1"}), ("c.D", "sufficient", {})]
    for bad in (
        "",
        'Mod required user_a="x"',
        "Mod maybe;",
        'Mod required a="x;',
        "Mod required a=;",
        "Mod required a b;",
    ):
        with pytest.raises(JaasError) as info:
            parse_jaas(bad)
        assert '"x' not in str(info.value)
