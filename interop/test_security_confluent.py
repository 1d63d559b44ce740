"""confluent-kafka (librdkafka 2.x) against kgc's security, the paths only a real client shows:
an unsecured OAUTHBEARER token and a KIP-368 re-authentication that keeps the group stable; ACLs
made with the AdminClient, one denying GROUP READ (the client reports GROUP_AUTHORIZATION_FAILED);
mTLS whose certificate DN is the principal the ACLs see."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from coordinator.embed.embedded import EmbeddedServer
from coordinator.embed.security import SecurityOptions

pytestmark = pytest.mark.interop
DEADLINE_S = 20.0


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_oauthbearer_token_and_reauthentication_keep_the_group_stable(tmp_path):
    transcript = tmp_path / "t.jsonl"
    options = SecurityOptions("SASL_PLAINTEXT", mechanisms=("OAUTHBEARER",), reauth_ms=2000)
    with EmbeddedServer(tmp_path / "d", security=options, settings={"transcript.file": str(transcript)}) as server:
        server.create_topic("t", 1)
        oauth = {
            "bootstrap.servers": server.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=alice lifeSeconds=3600",
        }
        producer = Producer(oauth)
        for i in range(3):
            producer.produce("t", f"v{i}".encode())
        assert producer.flush(DEADLINE_S) == 0
        assignments: list[list[int]] = []
        consumer = Consumer({**oauth, "group.id": "g", "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe(["t"], on_assign=lambda _c, parts: assignments.append([p.partition for p in parts]))
        consumed = 0
        deadline = time.monotonic() + DEADLINE_S
        reauthenticated = []
        while time.monotonic() < deadline and not (consumed == 3 and reauthenticated):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                consumed += 1
                consumer.commit(message, asynchronous=False)
            # The consumer's group connection re-authenticates before its 2 s session ends.
            reauthenticated = [e for e in events(transcript) if e["type"] == "authenticated" and e["reauthentication"]]
        consumer.close()
        assert consumed == 3 and reauthenticated, (consumed, reauthenticated)
        everything = events(transcript)
        assert reauthenticated[0]["principal"] == "User:alice" and reauthenticated[0]["mechanism"] == "OAUTHBEARER"
        sasl_authenticates = [e for e in everything if e["type"] == "sasl" and e["api"] == "SaslAuthenticate"]
        conn = reauthenticated[0]["conn"]
        assert len([e for e in sasl_authenticates if e["conn"] == conn]) >= 2  # a second SaslAuthenticate
        joins = [e for e in everything if e["type"] == "response" and e["api"] == "JoinGroup" and not e["errors"]]
        assert assignments == [[0]] and len({e["body"]["generation_id"] for e in joins}) == 1  # no rebalance
        assert all(e["session_lifetime_ms"] == 2000 for e in everything if e["type"] == "authenticated")
        assert "eyJ" not in transcript.read_text()  # no token (a JWT starts eyJ) was written


def test_acls_from_the_admin_client_and_group_authorization_failed(tmp_path):
    users = {"admin": "admin-secret", "alice": "alice-secret"}
    options = SecurityOptions("SASL_PLAINTEXT", users=users, mechanisms=("PLAIN",), authorizer=True)
    with EmbeddedServer(tmp_path / "d", security=options, topics={"t": 1}) as server:
        admin = AdminClient(server.client_settings("admin"))
        wanted = [
            AclBinding(
                ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*", op, AclPermissionType.ALLOW
            )
            for op in (AclOperation.READ, AclOperation.WRITE)
        ] + [
            AclBinding(
                ResourceType.GROUP,
                "allowed",
                ResourcePatternType.LITERAL,
                "User:alice",
                "*",
                AclOperation.READ,
                AclPermissionType.ALLOW,
            ),
            AclBinding(
                ResourceType.GROUP,
                "denied",
                ResourcePatternType.PREFIXED,
                "User:alice",
                "*",
                AclOperation.READ,
                AclPermissionType.DENY,
            ),
        ]
        for future in admin.create_acls(wanted).values():
            future.result(DEADLINE_S)
        listed = admin.describe_acls(
            AclBindingFilter(
                ResourceType.ANY,
                None,
                ResourcePatternType.ANY,
                "User:alice",
                None,
                AclOperation.ANY,
                AclPermissionType.ANY,
            )
        ).result(DEADLINE_S)
        assert sorted((b.name, b.operation.name, b.permission_type.name) for b in listed) == [
            ("allowed", "READ", "ALLOW"),
            ("denied", "READ", "DENY"),
            ("t", "READ", "ALLOW"),
            ("t", "WRITE", "ALLOW"),
        ]
        alice = server.client_settings("alice")
        producer = Producer(alice)
        producer.produce("t", b"x")
        assert producer.flush(DEADLINE_S) == 0
        refused = Consumer({**alice, "group.id": "denied-1", "auto.offset.reset": "earliest"})
        refused.subscribe(["t"])
        error = None
        deadline = time.monotonic() + DEADLINE_S
        while error is None and time.monotonic() < deadline:
            message = refused.poll(0.2)
            if message is not None and message.error() is not None:
                error = message.error()
        refused.close()
        assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error
        allowed = Consumer({**alice, "group.id": "allowed", "auto.offset.reset": "earliest"})
        allowed.subscribe(["t"])
        deadline = time.monotonic() + DEADLINE_S
        message = None
        while message is None and time.monotonic() < deadline:
            message = allowed.poll(0.2)
        assert message is not None and message.error() is None and message.value() == b"x"
        allowed.close()
        no_rights = AdminClient(server.client_settings("alice"))
        with pytest.raises(KafkaException) as info:
            list(no_rights.create_acls(wanted[:1]).values())[0].result(DEADLINE_S)
        assert info.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_mtls_principal_is_the_certificate_dn(tmp_path):
    options = SecurityOptions("SSL", client_auth="required", authorizer=True)
    with EmbeddedServer(tmp_path / "d", security=options, topics={"mine": 1, "other": 1}) as server:
        assert server.certs is not None
        principal = server.certs.client_principal  # "User:CN=kgc-client,OU=kgc,O=kgc-test"
        server.add_acl("TOPIC", "mine", principal, "WRITE")
        client = server.client_settings()
        delivered: list[tuple[str, int]] = []

        def report(err, msg):
            delivered.append((msg.topic(), err.code() if err else 0))

        producer = Producer({**client, "on_delivery": report, "message.timeout.ms": 5000})
        producer.produce("mine", b"ok")
        producer.produce("other", b"refused")
        producer.flush(DEADLINE_S)
        assert sorted(delivered) == [("mine", 0), ("other", KafkaError.TOPIC_AUTHORIZATION_FAILED)]
