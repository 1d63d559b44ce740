"""ACLs, SCRAM credentials and authorization on the wire: the admin APIs (29-31, 50-51), Kafka's
checks in the group and data APIs, and both stores surviving a restart and a kill -9."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kafka.net.sasl.scram import ScramClient

from coordinator.embed.embedded import open_server
from coordinator.embed.security import SecurityOptions
from coordinator.security.acls import AclPermissionType as P
from coordinator.security.acls import PatternType
from coordinator.security.authorization import AclOperation as O
from coordinator.security.authorization import ResourceType as R
from protocol.api import ApiKey
from protocol.errors import ErrorCode
from protocol.messages import alter_user_scram_credentials as alter
from protocol.messages import (
    create_acls,
    delete_acls,
    describe_acls,
    join_group,
    metadata,
    offset_commit,
    sasl_authenticate,
    sasl_handshake,
)
from protocol.messages import describe_user_scram_credentials as describe_creds
from tests.integration.raw_client import RawClient

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
SETTINGS = {"connection.failed.authentication.delay.ms": 0}


async def login(server, user, password=None, mechanism="PLAIN"):
    client = await RawClient.connect(server.host, server.port)
    await client.request(ApiKey.SASL_HANDSHAKE, 1, sasl_handshake.SaslHandshakeRequest(mechanism))
    if mechanism == "PLAIN":
        token = f"\x00{user}\x00{password or USERS[user]}".encode()
        done = await client.request(ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.SaslAuthenticateRequest(token))
    else:
        scram = ScramClient(user, password, mechanism)
        first = await client.request(
            ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.SaslAuthenticateRequest(scram.first_message())
        )
        if first.error_code:
            return first
        scram.process_server_first_message(first.auth_bytes)
        done = await client.request(
            ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.SaslAuthenticateRequest(scram.final_message())
        )
    assert done.error_code == 0, done
    return client


def creation(rtype, name, principal, op, perm=P.ALLOW, ptype=PatternType.LITERAL):
    return create_acls.AclCreation(rtype, name, ptype, principal, "*", op, perm)


async def create(client, *creations):
    response = await client.request(ApiKey.CREATE_ACLS, 3, create_acls.CreateAclsRequest(list(creations)))
    return [(r.error_code, r.error_message) for r in response.results]


async def described(client, **filters):
    request = describe_acls.DescribeAclsRequest(
        resource_type_filter=filters.get("rtype", R.ANY),
        resource_name_filter=filters.get("name"),
        pattern_type_filter=filters.get("ptype", PatternType.ANY),
        principal_filter=filters.get("principal"),
        host_filter=None,
        operation=filters.get("op", O.ANY),
        permission_type=P.ANY,
    )
    response = await client.request(ApiKey.DESCRIBE_ACLS, 3, request)
    if response.error_code:
        return response.error_code
    return sorted(
        (r.resource_type, r.resource_name, a.principal, a.operation) for r in response.resources for a in r.acls
    )


async def join(client, group):
    request = join_group.JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=[join_group.JoinGroupRequestProtocol("range", b"")],
    )
    return (await client.request(ApiKey.JOIN_GROUP, 9, request)).error_code


async def test_without_an_authorizer_acl_apis_answer_security_disabled(tmp_path):
    async with open_server(tmp_path / "d", security=SecurityOptions(users=USERS), settings=SETTINGS) as server:
        client = await login(server, "alice")
        assert await described(client) == ErrorCode.SECURITY_DISABLED
        assert await create(client, creation(R.TOPIC, "t", "User:x", O.READ)) == [
            (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
        ]
        assert await join(client, "anything") == ErrorCode.MEMBER_ID_REQUIRED  # everything allowed
        await client.aclose()


async def test_acls_decide_and_persist(tmp_path):
    options = SecurityOptions(users=USERS, authorizer=True)
    async with open_server(tmp_path / "d", security=options, settings=SETTINGS, topics={"t": 1, "hidden": 1}) as server:
        admin, alice = await login(server, "admin"), await login(server, "alice")
        assert await create(alice, creation(R.GROUP, "g", "User:alice", O.READ)) == [
            (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
        ]
        results = await create(
            admin,
            creation(R.GROUP, "g", "User:alice", O.READ),
            creation(R.TOPIC, "t", "User:alice", O.READ),
            creation(R.GROUP, "g-", "User:alice", O.READ, P.DENY, PatternType.PREFIXED),
            creation(R.CLUSTER, "not-the-cluster", "User:alice", O.ALTER),
            creation(R.TOPIC, "t", "alice-without-type", O.READ),
        )
        assert [code for code, _ in results] == [0, 0, 0, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]
        assert await described(admin, rtype=R.GROUP) == [
            (R.GROUP, "g", "User:alice", O.READ),
            (R.GROUP, "g-", "User:alice", O.READ),
        ]
        assert await described(admin, rtype=R.GROUP, name="g-1", ptype=PatternType.MATCH) == [
            (R.GROUP, "g-", "User:alice", O.READ)
        ]
        assert await described(alice) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        # JoinGroup: READ on the group; a PREFIXED DENY wins over nothing; no ACL at all: denied.
        assert await join(alice, "g") == ErrorCode.MEMBER_ID_REQUIRED
        assert await join(alice, "g-1") == ErrorCode.GROUP_AUTHORIZATION_FAILED
        assert await join(alice, "other") == ErrorCode.GROUP_AUTHORIZATION_FAILED
        assert await join(admin, "other") == ErrorCode.MEMBER_ID_REQUIRED  # a super user
        # Metadata: the topics alice may not DESCRIBE are left out of "all topics"...
        every = await alice.request(ApiKey.METADATA, 12, metadata.MetadataRequest(topics=None))
        assert [t.name for t in every.topics] == ["t"]
        named = await alice.request(
            ApiKey.METADATA, 12, metadata.MetadataRequest([metadata.MetadataRequestTopic(name="hidden")], False)
        )
        assert named.topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # ...and refused by name
        commit = offset_commit.OffsetCommitRequest(
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[
                offset_commit.OffsetCommitRequestTopic(
                    "t", partitions=[offset_commit.OffsetCommitRequestPartition(0, 5)]
                ),
                offset_commit.OffsetCommitRequestTopic(
                    "hidden", partitions=[offset_commit.OffsetCommitRequestPartition(0, 5)]
                ),
            ],
        )
        answer = await alice.request(ApiKey.OFFSET_COMMIT, 9, commit)
        assert {t.name: t.partitions[0].error_code for t in answer.topics} == {
            "t": ErrorCode.NONE,
            "hidden": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        }
        deleted = await admin.request(
            ApiKey.DELETE_ACLS,
            3,
            delete_acls.DeleteAclsRequest(
                [delete_acls.DeleteAclsFilter(R.GROUP, "g", PatternType.LITERAL, None, None, O.ANY, P.ANY)]
            ),
        )
        assert [m.resource_name for m in deleted.filter_results[0].matching_acls] == ["g"]
        assert await join(alice, "g") == ErrorCode.GROUP_AUTHORIZATION_FAILED
        for c in (admin, alice):
            await c.aclose()
    async with open_server(tmp_path / "d", security=options, settings=SETTINGS) as server:  # a restart
        admin = await login(server, "admin")
        assert await described(admin) == [(R.TOPIC, "t", "User:alice", O.READ), (R.GROUP, "g-", "User:alice", O.READ)]
        await admin.aclose()


def _salted(password: str, salt: bytes, iterations: int, mechanism: str = "SCRAM-SHA-256") -> bytes:
    return hashlib.pbkdf2_hmac("sha256" if mechanism.endswith("256") else "sha512", password.encode(), salt, iterations)


async def test_scram_credential_apis(tmp_path):
    options = SecurityOptions(users={"admin": "admin-secret"}, authorizer=True, mechanisms=("PLAIN", "SCRAM-SHA-256"))
    transcript = tmp_path / "t.jsonl"
    settings = {**SETTINGS, "transcript.file": str(transcript)}
    async with open_server(tmp_path / "d", security=options, settings=settings) as server:
        admin = await login(server, "admin")
        salt = b"0123456789abcdef"
        request = alter.AlterUserScramCredentialsRequest(
            deletions=[alter.ScramCredentialDeletion("nobody", 1), alter.ScramCredentialDeletion("", 1)],
            upsertions=[
                alter.ScramCredentialUpsertion("carol", 1, 4096, salt, _salted("carol-pw", salt, 4096)),
                alter.ScramCredentialUpsertion("dave", 1, 100, salt, b"x"),
                alter.ScramCredentialUpsertion("erin", 9, 4096, salt, b"x"),
                alter.ScramCredentialUpsertion("frank", 2, 4096, salt, b"x"),
                alter.ScramCredentialUpsertion("frank", 1, 4096, salt, b"x"),
            ],
        )
        answer = await admin.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, request)
        assert {r.user: r.error_code for r in answer.results} == {
            "carol": 0,
            "nobody": ErrorCode.RESOURCE_NOT_FOUND,
            "": ErrorCode.UNACCEPTABLE_CREDENTIAL,
            "dave": ErrorCode.UNACCEPTABLE_CREDENTIAL,
            "erin": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
            "frank": ErrorCode.DUPLICATE_RESOURCE,
        }
        listed = await admin.request(
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
            0,
            describe_creds.DescribeUserScramCredentialsRequest(
                [describe_creds.UserName("carol"), describe_creds.UserName("ghost"), describe_creds.UserName("admin")]
            ),
        )
        assert {
            r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in listed.results
        } == {
            "carol": (0, [(1, 4096)]),
            "ghost": (ErrorCode.RESOURCE_NOT_FOUND, []),
            "admin": (0, [(1, 4096)]),  # the fixture made SCRAM credentials for its users
        }
        carol = await login(server, "carol", "carol-pw", "SCRAM-SHA-256")  # the new credential works
        refused = await carol.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, request)
        assert {r.error_code for r in refused.results} == {ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
        for c in (admin, carol):
            await c.aclose()
    text = transcript.read_text()
    assert "carol-pw" not in text and base64_of(_salted("carol-pw", salt, 4096)) not in text
    assert '"salted_password": "[hidden]"' in text
    assert "admin-secret" not in text  # nor any SASL token


def base64_of(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


# -- kill -9 -------------------------------------------------------------------------------------
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";'


def _serve(data_dir: Path) -> tuple[subprocess.Popen[str], int]:
    command = [
        str(Path(sys.executable).with_name("kgc")),
        "serve",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        "--set",
        "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        "--set",
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
        "--set",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}",
        "--set",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "--set",
        "super.users=User:admin",
        "--set",
        "connection.failed.authentication.delay.ms=0",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("kgc: serving bootstrap=127.0.0.1:"), line
    return proc, int(line.split("bootstrap=127.0.0.1:")[1].split()[0])


class _At:
    def __init__(self, port: int) -> None:
        self.host, self.port = "127.0.0.1", port


async def test_acls_and_credentials_survive_kill_9(tmp_path):
    proc, port = _serve(tmp_path / "d")
    try:
        admin = await login(_At(port), "admin")
        assert await create(admin, creation(R.TOPIC, "orders", "User:zoe", O.WRITE)) == [(0, None)]
        salt = b"salt-salt-salt!!"
        upsert = alter.ScramCredentialUpsertion("zoe", 2, 4096, salt, _salted("zoe-pw", salt, 4096, "SCRAM-SHA-512"))
        done = await admin.request(
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, alter.AlterUserScramCredentialsRequest([], [upsert])
        )
        assert done.results[0].error_code == 0  # acknowledged: it must survive what follows
        await admin.aclose()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc, port = _serve(tmp_path / "d")
    try:
        admin = await login(_At(port), "admin")
        assert await described(admin) == [(R.TOPIC, "orders", "User:zoe", O.WRITE)]
        zoe = await login(_At(port), "zoe", "zoe-pw", "SCRAM-SHA-512")
        for c in (admin, zoe):
            await c.aclose()
    finally:
        proc.terminate()
        proc.wait()
    acls = json.loads((tmp_path / "d" / "security" / "acls.json").read_text())
    assert acls["acls"][0]["principal"] == "User:zoe"
    credentials = (tmp_path / "d" / "security" / "scram-credentials.json").read_text()
    assert "zoe-pw" not in credentials and '"iterations": 4096' in credentials


async def test_the_control_plane_adds_acls_and_scram_users(tmp_path):
    """In process (the fixture's .control) as over HTTP: an ACL decides at once, a SCRAM user can
    log in, and no answer carries the password."""
    options = SecurityOptions(users={"admin": "admin-secret"}, authorizer=True, mechanisms=("PLAIN", "SCRAM-SHA-256"))
    async with open_server(tmp_path / "d", security=options, settings=SETTINGS) as server:
        from coordinator.control.errors import ControlError
        from coordinator.control.security_control import AclSpec, ScramUserSpec

        control = server.control
        answer = control.add_scram_user(ScramUserSpec("zed", "zed-password", "SCRAM-SHA-256"))
        assert answer == {"user": "zed", "mechanism": "SCRAM-SHA-256", "iterations": 4096}
        zed = await login(server, "zed", "zed-password", "SCRAM-SHA-256")
        assert await join(zed, "g") == ErrorCode.GROUP_AUTHORIZATION_FAILED
        control.add_acl(AclSpec("GROUP", "g", "User:zed", "READ"))
        assert await join(zed, "g") == ErrorCode.MEMBER_ID_REQUIRED
        assert control.acls() == [
            {
                "resource_type": "GROUP",
                "name": "g",
                "pattern_type": "LITERAL",
                "principal": "User:zed",
                "host": "*",
                "operation": "READ",
                "permission": "ALLOW",
            }
        ]
        with pytest.raises(ControlError, match="principalType:principalName"):
            control.add_acl(AclSpec("GROUP", "g", "zed", "READ"))
        with pytest.raises(ControlError, match="unknown operation"):
            control.add_acl(AclSpec("GROUP", "g", "User:zed", "EAT"))
        security = control.security()
        assert security["acls"] == 1 and "zed-password" not in json.dumps(security)
        assert {c["principal"] for c in security["listeners"][0]["connections"]} == {"User:zed"}
        await zed.aclose()
