"""SASL and TLS on the wire, with our own raw client: Kafka's authentication rules, byte for byte.

Each refusal closes the connection (answered first where Kafka answers), is counted on the
listener, and leaves the server and its other connections unharmed.
"""

from __future__ import annotations

import io
import json
import ssl
import struct

import pytest
import trio
from kafka.net.sasl.scram import ScramClient

from coordinator.embed.embedded import open_server
from coordinator.embed.security import SecurityOptions
from coordinator.security.certs import make_certs
from coordinator.tools.transcript_render import render
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages import produce
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.metadata import MetadataRequest
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.integration.raw_client import RawClient

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
NO_DELAY = {"connection.failed.authentication.delay.ms": 0}


def stats(server):
    return server.security.plans[0].stats


async def handshake(client, mechanism="PLAIN", version=1):
    return await client.request(ApiKey.SASL_HANDSHAKE, version, SaslHandshakeRequest(mechanism=mechanism))


async def authenticate(client, token, version=2):
    return await client.request(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=token))


async def plain_login(client, user="alice", password="alice-secret"):
    assert (await handshake(client)).error_code == 0
    return await authenticate(client, f"\x00{user}\x00{password}".encode())


async def metadata_ok(client):
    response = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    return response.brokers


@pytest.fixture
async def sasl_server(tmp_path):
    options = SecurityOptions("SASL_PLAINTEXT", users=USERS)
    async with open_server(tmp_path / "data", security=options, settings=NO_DELAY, topics={"t": 1}) as server:
        yield server


async def test_plain_and_scram_authenticate_then_requests_flow(sasl_server):
    client = await RawClient.connect(sasl_server.host, sasl_server.port)
    versions = await client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest("raw", "1"))
    assert {ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE} <= {k.api_key for k in versions.api_keys}
    answer = await handshake(client)
    assert answer.error_code == 0 and set(answer.mechanisms) == {
        "PLAIN",
        "SCRAM-SHA-256",
        "SCRAM-SHA-512",
        "OAUTHBEARER",
    }
    done = await authenticate(client, b"\x00alice\x00alice-secret")
    assert (done.error_code, done.session_lifetime_ms) == (0, 0)
    assert await metadata_ok(client)
    big = produce.ProduceRequest(
        None,
        1,
        1000,
        [produce.TopicProduceData("t", partition_data=[produce.PartitionProduceData(0, b"\x00" * 600_000)])],
    )  # over sasl.server.max.receive.size
    answered = await client.request(ApiKey.PRODUCE, 9, big)  # authenticated: socket.request.max.bytes applies
    assert answered.responses[0].partition_responses[0].error_code != 0  # not a batch, but answered
    # After authentication, a SaslHandshake with no session to renew reaches KafkaApis: ILLEGAL_SASL_STATE.
    assert (await handshake(client)).error_code == ErrorCode.ILLEGAL_SASL_STATE
    await client.aclose()

    client = await RawClient.connect(sasl_server.host, sasl_server.port)
    scram = ScramClient("bob", "bob-secret", "SCRAM-SHA-512")
    assert (await handshake(client, "SCRAM-SHA-512")).error_code == 0
    first = await authenticate(client, scram.first_message())
    scram.process_server_first_message(first.auth_bytes)
    final = await authenticate(client, scram.final_message())
    scram.process_server_final_message(final.auth_bytes)  # verifies the server's signature
    assert final.error_code == 0 and await metadata_ok(client)
    view = sasl_server.control.snapshot()["security"]  # the control plane's (and live page's) view
    assert [(c["principal"], c["mechanism"]) for c in view["listeners"][0]["connections"]] == [
        ("User:bob", "SCRAM-SHA-512")
    ]
    assert "secret" not in json.dumps(view)
    await client.aclose()
    assert stats(sasl_server).authentications == 2 and stats(sasl_server).failed_authentications == 0


async def test_v0_handshake_takes_raw_tokens(sasl_server):
    client = await RawClient.connect(sasl_server.host, sasl_server.port)
    assert (await handshake(client, version=0)).error_code == 0
    token = b"\x00alice\x00alice-secret"
    await client.send_raw(struct.pack(">i", len(token)) + token)
    assert await client.receive_frame() == b""  # PLAIN's empty answer, size-framed, no header
    assert await metadata_ok(client)
    await client.aclose()


async def test_refusals_close_only_their_connection_and_are_counted(sasl_server):
    server = sasl_server
    healthy = await RawClient.connect(server.host, server.port)
    await plain_login(healthy)

    wrong = await RawClient.connect(server.host, server.port)
    refused = await plain_login(wrong, password="nope")
    assert refused.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert refused.error_message == "Authentication failed: Invalid username or password"
    assert await wrong.closed_by_server()

    early = await RawClient.connect(server.host, server.port)  # a request before authentication
    await early.send_raw(early.encode(ApiKey.METADATA, 12, MetadataRequest(topics=None))[1])
    assert await early.closed_by_server()

    order = await RawClient.connect(server.host, server.port)  # SaslAuthenticate before the handshake
    await order.send_raw(order.encode(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"x"))[1])
    assert await order.closed_by_server()

    unknown = await RawClient.connect(server.host, server.port)
    answer = await handshake(unknown, "GSSAPI")
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM and "PLAIN" in answer.mechanisms
    assert await unknown.closed_by_server()

    instead = await RawClient.connect(server.host, server.port)  # another request in place of SaslAuthenticate
    await handshake(instead)
    await instead.send_raw(instead.encode(ApiKey.METADATA, 12, MetadataRequest(topics=None))[1])
    payload = await instead.receive_frame()  # Metadata's own error answer: ILLEGAL_SASL_STATE
    assert payload is not None and await instead.closed_by_server()

    big = await RawClient.connect(server.host, server.port)  # over sasl.server.max.receive.size
    await big.send_raw(struct.pack(">i", 600_000) + b"\x00" * 1000)
    assert await big.closed_by_server()

    garbage = await RawClient.connect(server.host, server.port)  # a malformed SCRAM token
    await handshake(garbage, "SCRAM-SHA-256")
    bad = await authenticate(garbage, b"\xff\x00not scram")
    assert bad.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert bad.error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
    )
    assert await garbage.closed_by_server()

    header_only = await RawClient.connect(server.host, server.port)
    await header_only.send_raw(struct.pack(">i", 3) + b"\x00\x11\x00")  # an unparseable header
    assert await header_only.closed_by_server()

    s = stats(server)
    assert s.failed_authentications == 7 and s.illegal_sasl_state == 3 and s.authentications == 1
    assert await metadata_ok(healthy)  # untouched by all of it
    for c in (healthy, wrong, early, order, unknown, instead, big, garbage, header_only):
        await c.aclose()


async def test_a_failed_authentication_is_answered_after_the_delay(tmp_path, autojump_clock):
    options = SecurityOptions("SASL_PLAINTEXT", users=USERS)
    async with open_server(tmp_path / "d", security=options) as server:  # Kafka's default: 100 ms
        client = await RawClient.connect(server.host, server.port)
        await handshake(client)
        start = trio.current_time()
        refused = await authenticate(client, b"\x00alice\x00wrong")
        assert refused.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert trio.current_time() - start >= 0.1  # virtual time: the delay was taken, nothing slept
        await client.aclose()


async def test_a_flood_of_failed_authentications_costs_bounded_memory(sasl_server):
    """200 clients with the wrong password, 20 at a time: every one refused, none held afterwards."""

    async def one_failure() -> None:
        client = await RawClient.connect(sasl_server.host, sasl_server.port)
        assert (await plain_login(client, password="nope")).error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert await client.closed_by_server()
        await client.aclose()

    for _ in range(10):
        async with trio.open_nursery() as nursery:
            for _ in range(20):
                nursery.start_soon(one_failure)
    assert stats(sasl_server).failed_authentications == 200
    assert sasl_server.request_memory.used == 0  # nothing reserved by the refused connections
    ok = await RawClient.connect(sasl_server.host, sasl_server.port)
    assert (await plain_login(ok)).error_code == 0
    await ok.aclose()


async def test_reauthentication_and_session_expiry(tmp_path, mock_clock):
    """KIP-368 with connections.max.reauth.ms: the lifetime is sent, a SaslHandshake before expiry
    re-authenticates (same principal), any other request after expiry closes the connection."""
    options = SecurityOptions("SASL_PLAINTEXT", users=USERS, reauth_ms=10_000)
    async with open_server(tmp_path / "d", security=options, settings=NO_DELAY) as server:
        client = await RawClient.connect(server.host, server.port)
        assert (await plain_login(client)).session_lifetime_ms == 10_000
        mock_clock.jump(8)
        assert (await plain_login(client)).session_lifetime_ms == 10_000  # re-authenticated
        mock_clock.jump(8)
        assert await metadata_ok(client)  # 8 s into the new session
        other = await plain_login(client, user="bob", password="bob-secret")  # another principal: refused
        assert other.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and "Cannot change principals" in (
            other.error_message or ""
        )
        client = await RawClient.connect(server.host, server.port)
        await plain_login(client)
        mock_clock.jump(11)
        await client.send_raw(client.encode(ApiKey.METADATA, 12, MetadataRequest(topics=None))[1])
        assert await client.closed_by_server()
        s = stats(server)
        assert (s.reauthentications, s.expired_sessions_closed) == (1, 1)


async def closed(stream) -> bool:
    """True once the server ends the stream (EOF or reset), whatever it sent before."""
    try:
        with trio.fail_after(10):
            while await stream.receive_some(4096):
                pass
    except trio.BrokenResourceError:
        pass
    await stream.aclose()
    return True


async def test_tls_mtls_principal_garbage_and_half_open(tmp_path):
    certs = make_certs(tmp_path / "certs")
    options = SecurityOptions("SSL", client_auth="required")
    settings = {"connections.max.idle.ms": 300, "transcript.file": str(tmp_path / "t.jsonl")}
    async with open_server(tmp_path / "d", security=options, certs=certs, settings=settings) as server:
        plan = server.security.plans[0]
        context = ssl.create_default_context(cafile=certs.ca)
        context.load_cert_chain(certs.client_cert, certs.client_key)
        client = RawClient(await trio.open_ssl_over_tcp_stream(server.host, server.port, ssl_context=context))
        assert await metadata_ok(client)
        await client.aclose()

        no_cert = ssl.create_default_context(cafile=certs.ca)  # ssl.client.auth=required: refused
        stream = await trio.open_ssl_over_tcp_stream(server.host, server.port, ssl_context=no_cert)
        with pytest.raises(trio.BrokenResourceError):
            await stream.send_all(b"\x00\x00\x00\x01x")
            await stream.receive_some(10)

        garbage = await trio.open_tcp_stream(server.host, server.port)
        await garbage.send_all(b"GET / HTTP/1.1\r\n\r\n" * 10)
        assert await closed(garbage)

        half_open = await trio.open_tcp_stream(server.host, server.port)
        await half_open.send_all(b"\x16\x03\x01\x00\xc8\x01")  # the start of a ClientHello, never finished
        assert await closed(half_open)  # by connections.max.idle.ms (300 ms here)

        assert plan.stats.tls_handshakes == 1 and plan.stats.failed_tls_handshakes == 2
        again = RawClient(await trio.open_ssl_over_tcp_stream(server.host, server.port, ssl_context=context))
        assert await metadata_ok(again)  # the server is unharmed
        await again.aclose()
        events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
        authenticated = [e for e in events if e["type"] == "authenticated"]
        assert authenticated[0]["principal"] == certs.client_principal == "User:CN=kgc-client,OU=kgc,O=kgc-test"
        assert authenticated[0]["mechanism"] == "SSL"
        requests = [e for e in events if e["type"] == "request" and e["api"] == "Metadata"]
        assert requests[0]["principal"] == certs.client_principal
        shown = io.StringIO()  # `kgc transcript` shows who authenticated, and how
        with open(tmp_path / "t.jsonl") as lines:
            render(lines, None, shown)
        assert f"authenticated as {certs.client_principal} (SSL)" in shown.getvalue()


async def test_two_listeners_on_each_of_two_brokers(tmp_path):
    """PLAINTEXT first, SASL_PLAINTEXT second, --brokers 2: Metadata names the endpoints of the
    listener it was asked on; a broker going down and up takes both its listeners with it."""
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
    settings = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
        **NO_DELAY,
    }
    async with open_server(tmp_path / "d", settings=settings, brokers=2) as server:
        sasl_ports = [n.endpoints["SASL_PLAINTEXT"][1] for n in server.cluster.nodes.values()]
        plain_ports = [b.advertised_port for b in server.brokers]
        assert len(set(sasl_ports + plain_ports)) == 4 and 0 not in sasl_ports
        plain = await RawClient.connect(server.host, plain_ports[1])
        assert sorted(b.port for b in await metadata_ok(plain)) == sorted(plain_ports)
        secured = await RawClient.connect(server.host, sasl_ports[1])
        await plain_login(secured)
        assert sorted(b.port for b in await metadata_ok(secured)) == sorted(sasl_ports)
        node = server.brokers[1].node_id
        await server.control.broker_down(node)
        assert await secured.closed_by_server() and await plain.closed_by_server()
        await server.control.broker_up(node)
        again = await RawClient.connect(server.host, sasl_ports[1])  # the same port, listening again
        await plain_login(again)
        assert await metadata_ok(again)
        for c in (plain, secured, again):
            await c.aclose()


async def test_ssl_principal_mapping_rules(tmp_path):
    certs = make_certs(tmp_path / "certs", client_cn="Alice")
    context = ssl.create_default_context(cafile=certs.ca)
    context.load_cert_chain(certs.client_cert, certs.client_key)
    for rules, principal in (("RULE:^CN=([^,]+),.*$/$1/L, DEFAULT", "User:alice"), ("RULE:^OU=nobody$/x/", None)):
        settings = {"ssl.principal.mapping.rules": rules, "transcript.file": str(tmp_path / f"{bool(principal)}.jsonl")}
        options = SecurityOptions("SSL", client_auth="required")
        async with open_server(tmp_path / f"d{bool(principal)}", security=options, certs=certs, settings=settings) as s:
            stream = await trio.open_ssl_over_tcp_stream(s.host, s.port, ssl_context=context)
            client = RawClient(stream)
            if principal is None:  # no rule applies: no principal, no connection (Kafka's NoMatchingRule)
                await client.send_raw(client.encode(ApiKey.METADATA, 12, MetadataRequest(topics=None))[1])
                assert await closed(stream)
                assert s.security.plans[0].stats.failed_authentications == 1
                continue
            assert await metadata_ok(client)
            await client.aclose()
            events = [json.loads(line) for line in (tmp_path / "True.jsonl").read_text().splitlines()]
            assert [e["principal"] for e in events if e["type"] == "authenticated"] == [principal]
