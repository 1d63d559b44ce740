"""cluster.processes: the ACLs and SCRAM credentials of one data dir, changed through any broker
process, reach the others (cluster/shared_file.py), and no process overwrites another's change."""

from __future__ import annotations

import trio

from coordinator.cluster.shared_file import follow_every
from coordinator.security.acls import AclBinding, AclFilter, PatternType
from coordinator.security.acls import AclPermissionType as P
from coordinator.security.authorization import AclOperation as O
from coordinator.security.authorization import ResourceType as R
from coordinator.security.credentials import CredentialStore
from coordinator.security.scram import ScramCredential
from coordinator.security.setup import Security
from coordinator.security.standard_authorizer import StandardAuthorizer

ALICE_READS = AclBinding(R.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", O.READ, P.ALLOW)
BOB_READS = AclBinding(R.TOPIC, "orders", PatternType.LITERAL, "User:bob", "*", O.READ, P.ALLOW)
CREDENTIAL = ScramCredential(b"salt", b"stored-key", b"server-key", 4096)


def _reads(authorizer: StandardAuthorizer, user: str) -> bool:
    return authorizer.authorize(f"User:{user}", "127.0.0.1", O.READ, R.TOPIC, "orders")


def test_an_acl_made_through_one_process_reaches_the_other_and_neither_overwrites(tmp_path):
    path = tmp_path / "security" / "acls.json"
    first, second = (StandardAuthorizer(path=path, shared=True) for _ in range(2))
    first.create([ALICE_READS])
    second.create([BOB_READS])  # second has not read alice's ACL yet: made on the newest file anyway
    assert sorted(StandardAuthorizer(path=path).acls()) == sorted([ALICE_READS, BOB_READS])
    assert _reads(second, "alice")
    assert first.acls() == sorted([ALICE_READS, BOB_READS])  # a describe reads the newest
    first.delete([AclFilter(R.TOPIC, "orders", PatternType.LITERAL, "User:alice")])
    second.follow()
    assert not _reads(second, "alice") and _reads(second, "bob")


def test_one_process_stores_do_not_follow_the_file(tmp_path):
    """Without cluster.processes the store is the file's only writer: no stat, no re-read."""
    path = tmp_path / "security" / "acls.json"
    first, second = StandardAuthorizer(path=path), StandardAuthorizer(path=path)
    first.create([ALICE_READS])
    second.follow()
    assert second.acls() == []


def test_a_scram_user_made_through_one_process_authenticates_at_the_other(tmp_path):
    path = tmp_path / "security" / "scram-credentials.json"
    first, second = (CredentialStore(path, shared=True) for _ in range(2))
    first.apply({("alice", "SCRAM-SHA-256"): CREDENTIAL}, [])
    second.apply({("carol", "SCRAM-SHA-256"): CREDENTIAL}, [])  # made on the newest file
    assert second.lookup("alice", "SCRAM-SHA-256") == CREDENTIAL
    second.apply({("bob", "SCRAM-SHA-512"): CREDENTIAL}, [("alice", "SCRAM-SHA-256")])
    assert first.users() == {"bob": {"SCRAM-SHA-512": 4096}, "carol": {"SCRAM-SHA-256": 4096}}
    assert first.lookup("alice", "SCRAM-SHA-256") is None


async def test_a_process_takes_up_acl_changes_by_itself_within_the_follow_interval(tmp_path, autojump_clock):
    path = tmp_path / "security" / "acls.json"
    writer = StandardAuthorizer(path=path, shared=True)
    follower = StandardAuthorizer(path=path, shared=True)
    security = Security(CredentialStore(None), follower, [])
    async with trio.open_nursery() as nursery:
        await nursery.start(follow_every, [security.follow])
        writer.create([ALICE_READS])
        assert not _reads(follower, "alice")  # authorize reads no file: the request path stays cheap
        await trio.sleep(0.11)
        assert _reads(follower, "alice")
        nursery.cancel_scope.cancel()
