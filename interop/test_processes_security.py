"""`kgc serve --brokers 2 --processes` with SASL and ACLs, through confluent-kafka: a SCRAM user
and an ACL made through broker 0's process (the AdminClient) hold at broker 1's process too, and
an ACL deleted through broker 1 stops the user at broker 0 (coordinator/security/shared_file.py),
as every Kafka broker sees one metadata image. Waits are on conditions; deadlines bound hangs.
"""

from __future__ import annotations

import pytest

from coordinator.embed.security import SecurityOptions
from tests.support.serve_process import start_serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

DEADLINE = 30.0
TOPIC = "secured"
OPTIONS = SecurityOptions("SASL_PLAINTEXT", users={"admin": "admin-secret"}, authorizer=True)


def test_scram_users_and_acls_made_through_one_broker_process_hold_at_the_other(tmp_path):
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    settings = [arg for key, value in OPTIONS.settings(None).items() for arg in ("--set", f"{key}={value}")]
    proc, bootstrap = start_serve(str(tmp_path / "data"), "--brokers", "2", "--processes", *settings)
    first, second = bootstrap.split(",")
    try:
        admin = AdminClient({"bootstrap.servers": first, **OPTIONS.client_settings(None, "admin")})
        admin.create_topics([NewTopic(TOPIC, 4, 1)])[TOPIC].result(DEADLINE)
        leaders = {p.leader for p in admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions.values()}
        assert leaders == {0, 1}  # both processes lead partitions of it
        upsert = UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw")
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(DEADLINE)
        write = AclBinding(
            ResourceType.TOPIC,
            TOPIC,
            ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            AclOperation.WRITE,
            AclPermissionType.ALLOW,
        )
        for future in admin.create_acls([write]).values():
            future.result(DEADLINE)

        alice = {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "alice",
            "sasl.password": "pw",
            "message.timeout.ms": 5000,
        }

        def produce_everywhere(bootstrap_servers: str) -> list:
            """The delivery errors of one record to each partition (both processes lead some)."""
            errors: list = []
            producer = Producer({"bootstrap.servers": bootstrap_servers, **alice})
            for partition in range(4):
                producer.produce(TOPIC, b"x", partition=partition, on_delivery=lambda err, _m: errors.append(err))
            producer.flush(DEADLINE)
            return errors

        # alice authenticates (SCRAM) and writes at both processes: the credential and the ACL
        # were made through broker 0, and the other process took them up.
        # (`is None`: confluent's KafkaError cannot be compared with None)
        wait_until(lambda: all(e is None for e in produce_everywhere(second)), DEADLINE, message="alice writes")

        deleter = AdminClient({"bootstrap.servers": second, **OPTIONS.client_settings(None, "admin")})
        any_write = AclBindingFilter(
            ResourceType.TOPIC,
            TOPIC,
            ResourcePatternType.LITERAL,
            "User:alice",
            None,
            AclOperation.WRITE,
            AclPermissionType.ANY,
        )
        deleted = [future.result(DEADLINE) for future in deleter.delete_acls([any_write]).values()]
        assert [len(bindings) for bindings in deleted] == [1]

        def refused_everywhere() -> bool:
            errors = produce_everywhere(first)
            return all(e is not None and e.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED for e in errors)

        wait_until(refused_everywhere, DEADLINE, message="alice is refused at both processes")
    finally:
        proc.terminate()
        assert proc.wait(DEADLINE) == 0
