"""StandardAuthorizer: Kafka's StandardAuthorizerTest cases as data, ACL filters, and persistence."""

from __future__ import annotations

import pytest

from coordinator.security.acls import AclBinding, AclFilter, PatternType, validate_binding
from coordinator.security.acls import AclPermissionType as P
from coordinator.security.authorization import AclOperation as O
from coordinator.security.authorization import ResourceType as R
from coordinator.security.files import StoreError
from coordinator.security.standard_authorizer import StandardAuthorizer, parse_super_users

L, X = PatternType.LITERAL, PatternType.PREFIXED
LOCAL = "127.0.0.1"


def acl(rtype, name, ptype, principal, host, op, perm):
    return AclBinding(rtype, name, ptype, principal, host, op, perm)


def authorizer(*acls, allow_if_no_acl=False):
    a = StandardAuthorizer(super_users=parse_super_users("User:superman"), allow_if_no_acl=allow_if_no_acl)
    a.create(list(acls))
    return a


def check(a, user, cases, host=LOCAL):
    got = [a.authorize(f"User:{user}", host, op, rtype, name) for op, rtype, name, _ in cases]
    assert got == [want for *_, want in cases]


def test_allow_everyone_if_no_acl_found():
    """testAllowEveryoneIfNoAclFoundConfigEnabled / Disabled."""
    rule = acl(R.TOPIC, "topic1", L, "User:Alice", "*", O.READ, P.ALLOW)
    check(
        authorizer(rule, allow_if_no_acl=True),
        "Bob",
        [(O.READ, R.TOPIC, "topic1", False), (O.READ, R.TOPIC, "topic2", True)],
    )
    check(authorizer(rule), "Bob", [(O.READ, R.TOPIC, "topic1", False), (O.READ, R.TOPIC, "topic2", False)])
    assert parse_super_users("User:alice;User:chris") == {"User:alice", "User:chris"}


def test_find_result_implication():
    """testFindResultImplication: READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies
    DESCRIBE_CONFIGS, only in ALLOW ACLs; CREATE implies nothing."""
    for op in (O.DESCRIBE, O.READ, O.WRITE, O.DELETE, O.ALTER):
        check(
            authorizer(acl(R.TOPIC, "foo_", X, "User:bob", "*", op, P.ALLOW)),
            "bob",
            [(O.DESCRIBE, R.TOPIC, "foo_bar", True)],
        )
    check(
        authorizer(acl(R.TOPIC, "foo_", X, "User:bob", "*", O.CREATE, P.ALLOW)),
        "bob",
        [(O.DESCRIBE, R.TOPIC, "foo_bar", False)],
    )
    for op in (O.READ, O.WRITE, O.DELETE, O.ALTER):  # a DENY of READ does not deny DESCRIBE
        a = authorizer(acl(R.TOPIC, "foo_", X, "User:bob", "*", op, P.DENY), allow_if_no_acl=True)
        a.create([acl(R.TOPIC, "foo_", X, "User:bob", "*", O.DESCRIBE, P.ALLOW)])
        check(a, "bob", [(O.DESCRIBE, R.TOPIC, "foo_bar", True)])
    for op in (O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS):
        check(
            authorizer(acl(R.TOPIC, "foo_", X, "User:bob", "*", op, P.ALLOW)),
            "bob",
            [(O.DESCRIBE_CONFIGS, R.TOPIC, "foo_bar", True)],
        )
    check(
        authorizer(acl(R.TOPIC, "foo_", X, "User:bob", "*", O.ALTER_CONFIGS, P.DENY)),
        "bob",
        [(O.ALTER_CONFIGS, R.TOPIC, "foo_bar", False)],
    )


def test_principal_matching_and_simple_authorizations():
    """testFindResultPrincipalMatching / testSimpleAuthorizations."""
    a = authorizer(
        acl(R.TOPIC, "foo_", X, "User:bob", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "foo_", X, "User:bob", "*", O.WRITE, P.ALLOW),
        acl(R.GROUP, "bar", L, "User:*", "*", O.DESCRIBE_CONFIGS, P.ALLOW),
        acl(R.GROUP, "bar", L, "User:*", "*", O.ALTER_CONFIGS, P.ALLOW),
    )
    check(a, "bob", [(O.READ, R.TOPIC, "foo_", True), (O.READ, R.TOPIC, "foo_bar", True)])
    check(a, "alice", [(O.READ, R.TOPIC, "foo_bar", False)])
    check(a, "fred", [(O.ALTER_CONFIGS, R.GROUP, "bar", True)])
    check(authorizer(acl(R.GROUP, "bar", L, "User:*", "*", O.READ, P.DENY)), "alice", [(O.READ, R.GROUP, "bar", False)])


def test_deny_precedence_with_operation_all():
    a = authorizer(
        acl(R.TOPIC, "foo", L, "User:alice", "*", O.ALL, P.DENY),
        acl(R.TOPIC, "foo", X, "User:alice", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "foo", L, "User:*", "*", O.ALL, P.DENY),
        acl(R.TOPIC, "foo", X, "User:*", "*", O.DESCRIBE, P.ALLOW),
    )
    check(
        a,
        "alice",
        [
            (O.WRITE, R.TOPIC, "foo", False),
            (O.READ, R.TOPIC, "foo", False),
            (O.DESCRIBE, R.TOPIC, "foo", False),
            (O.READ, R.TOPIC, "foobar", True),
        ],
    )
    check(
        a,
        "bob",
        [
            (O.DESCRIBE, R.TOPIC, "foo", False),
            (O.READ, R.TOPIC, "foo", False),
            (O.WRITE, R.TOPIC, "foo", False),
            (O.DESCRIBE, R.TOPIC, "foobaz", True),
            (O.READ, R.TOPIC, "foobaz", False),
        ],
    )


def test_topic_acl_with_operation_all():
    a = authorizer(
        acl(R.TOPIC, "foo", L, "User:*", "*", O.ALL, P.ALLOW),
        acl(R.TOPIC, "bar", X, "User:alice", "*", O.ALL, P.ALLOW),
        acl(R.TOPIC, "baz", L, "User:bob", "*", O.ALL, P.ALLOW),
    )
    check(
        a,
        "alice",
        [
            (O.WRITE, R.TOPIC, "foo", True),
            (O.DESCRIBE_CONFIGS, R.TOPIC, "bar", True),
            (O.DESCRIBE, R.TOPIC, "baz", False),
        ],
    )
    check(
        a, "bob", [(O.WRITE, R.TOPIC, "foo", True), (O.READ, R.TOPIC, "bar", False), (O.DESCRIBE, R.TOPIC, "baz", True)]
    )
    check(
        a,
        "malory",
        [(O.DESCRIBE, R.TOPIC, "foo", True), (O.WRITE, R.TOPIC, "bar", False), (O.READ, R.TOPIC, "baz", False)],
    )


def test_host_address_acl_validation():
    host1, host2 = "192.168.1.1", "192.168.1.2"
    a = authorizer(
        acl(R.TOPIC, "foo", L, "User:alice", host1, O.READ, P.DENY),
        acl(R.TOPIC, "foo", L, "User:alice", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "bar", L, "User:bob", host2, O.READ, P.ALLOW),
        acl(R.TOPIC, "bar", L, "User:*", LOCAL, O.DESCRIBE, P.ALLOW),
    )
    actions = [(O.READ, R.TOPIC, "foo"), (O.READ, R.TOPIC, "bar"), (O.DESCRIBE, R.TOPIC, "bar")]
    for user, host, want in [
        ("alice", LOCAL, [True, False, True]),
        ("alice", host1, [False, False, False]),
        ("alice", host2, [True, False, False]),
        ("bob", LOCAL, [False, False, True]),
        ("bob", host1, [False, False, False]),
        ("bob", host2, [False, True, True]),
    ]:
        check(a, user, [(*action, w) for action, w in zip(actions, want, strict=True)], host=host)


def test_authorization_with_many_acls():
    a = authorizer(
        acl(R.TOPIC, "green2", L, "User:*", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "green", X, "User:bob", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "betamax4", L, "User:bob", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "betamax", L, "User:bob", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "beta", X, "User:*", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "alpha", X, "User:*", "*", O.READ, P.ALLOW),
        acl(R.TOPIC, "alp", X, "User:bob", "*", O.READ, P.DENY),
        acl(R.GROUP, "*", L, "User:bob", "*", O.WRITE, P.ALLOW),
        acl(R.GROUP, "wheel", L, "User:*", "*", O.WRITE, P.DENY),
    )
    check(a, "bob", [(O.READ, R.TOPIC, "green1", True), (O.WRITE, R.GROUP, "wheel", False)])
    check(
        a,
        "bob",
        [(O.READ, R.TOPIC, "alpha", False), (O.WRITE, R.GROUP, "arbitrary", True), (O.READ, R.TOPIC, "ala", False)],
    )


def test_prefix_acls_and_super_users():
    a = authorizer(
        acl(R.TOPIC, "fooa", X, "User:alice", "*", O.ALL, P.ALLOW),
        acl(R.TOPIC, "foobar", L, "User:bob", "*", O.ALL, P.ALLOW),
        acl(R.TOPIC, "f", X, "User:bob", "*", O.ALL, P.ALLOW),
        acl(R.TOPIC, "*", L, "User:superman", "*", O.ALL, P.DENY),
    )
    check(
        a,
        "bob",
        [(O.WRITE, R.TOPIC, "foobarr", True), (O.READ, R.TOPIC, "goobar", False), (O.READ, R.TOPIC, "fooa", True)],
    )
    check(
        a,
        "alice",
        [(O.DESCRIBE, R.TOPIC, "fooa", True), (O.WRITE, R.TOPIC, "bar", False), (O.READ, R.TOPIC, "baz", False)],
    )
    check(a, "superman", [(O.DELETE, R.TOPIC, "anything", True)])  # super users ignore even DENY


def test_authorize_by_resource_type():
    """Kafka's AuthorizerTest / KIP-679 cases: a DENY that dominates every ALLOW denies."""
    a = authorizer(acl(R.TOPIC, "t", L, "User:alice", "*", O.WRITE, P.ALLOW))
    assert a.authorize_by_resource_type("User:alice", LOCAL, O.WRITE, R.TOPIC)
    assert not a.authorize_by_resource_type("User:bob", LOCAL, O.WRITE, R.TOPIC)
    a.create([acl(R.TOPIC, "t", L, "User:alice", "*", O.WRITE, P.DENY)])
    assert not a.authorize_by_resource_type("User:alice", LOCAL, O.WRITE, R.TOPIC)
    a.create([acl(R.TOPIC, "u", X, "User:alice", "*", O.WRITE, P.ALLOW)])
    assert a.authorize_by_resource_type("User:alice", LOCAL, O.WRITE, R.TOPIC)
    a.create([acl(R.TOPIC, "u", X, "User:alice", "*", O.WRITE, P.DENY)])
    assert not a.authorize_by_resource_type("User:alice", LOCAL, O.WRITE, R.TOPIC)
    assert a.authorize_by_resource_type("User:superman", LOCAL, O.WRITE, R.TOPIC)
    b = authorizer(acl(R.TOPIC, "*", L, "User:*", "*", O.WRITE, P.ALLOW))
    assert b.authorize_by_resource_type("User:x", LOCAL, O.WRITE, R.TOPIC)
    b.create([acl(R.TOPIC, "*", L, "User:x", "*", O.WRITE, P.DENY)])
    assert not b.authorize_by_resource_type("User:x", LOCAL, O.WRITE, R.TOPIC)
    assert authorizer(allow_if_no_acl=True).authorize_by_resource_type("User:x", LOCAL, O.WRITE, R.TOPIC)


def test_filters_list_and_delete():
    """testListAcls, and the MATCH pattern filter (ResourcePatternFilter.matches)."""
    foo_read = acl(R.TOPIC, "foo_", X, "User:bob", "*", O.READ, P.ALLOW)
    foo_write = acl(R.TOPIC, "foo_", X, "User:bob", "*", O.WRITE, P.ALLOW)
    bar = acl(R.GROUP, "bar", L, "User:*", "*", O.DESCRIBE_CONFIGS, P.DENY)
    star = acl(R.TOPIC, "*", L, "User:bob", "*", O.READ, P.ALLOW)
    a = authorizer(foo_read, foo_write, bar, star)
    assert set(a.acls(AclFilter())) == {foo_read, foo_write, bar, star}
    assert set(a.acls(AclFilter(resource_type=R.TOPIC, pattern_type=PatternType.MATCH, name="foo_x"))) == {
        foo_read,
        foo_write,
        star,
    }
    assert a.acls(AclFilter(resource_type=R.TOPIC, pattern_type=PatternType.LITERAL, name="foo_")) == []
    assert a.acls(AclFilter(operation=O.WRITE)) == [foo_write]
    assert a.delete([AclFilter(operation=O.WRITE), AclFilter(principal="User:nobody")]) == [[foo_write], []]
    assert set(a.acls()) == {foo_read, bar, star}
    assert AclFilter(operation=O.UNKNOWN).unknown_reason() == "Unknown entryFilter."
    assert AclFilter(pattern_type=PatternType.UNKNOWN).unknown_reason() == "Unknown patternFilter."


def test_validate_binding():
    good = acl(R.TOPIC, "t", L, "User:a", "*", O.READ, P.ALLOW)
    assert validate_binding(good) is None
    cases = {
        "Invalid resourceType ANY": acl(R.ANY, "t", L, "User:a", "*", O.READ, P.ALLOW),
        "Invalid patternType MATCH": acl(R.TOPIC, "t", PatternType.MATCH, "User:a", "*", O.READ, P.ALLOW),
        "Invalid operation ANY": acl(R.TOPIC, "t", L, "User:a", "*", O.ANY, P.ALLOW),
        "Invalid permissionType ANY": acl(R.TOPIC, "t", L, "User:a", "*", O.READ, P.ANY),
        "Resource name should not be empty": acl(R.TOPIC, "", L, "User:a", "*", O.READ, P.ALLOW),
        "kafka-cluster": acl(R.CLUSTER, "other", L, "User:a", "*", O.ALTER, P.ALLOW),
        "principalType:principalName": acl(R.TOPIC, "t", L, "alice", "*", O.READ, P.ALLOW),
        "Invalid operation 99": acl(R.TOPIC, "t", L, "User:a", "*", 99, P.ALLOW),
    }
    for message, binding in cases.items():
        assert message in (validate_binding(binding) or "")


def test_acls_persist_and_a_damaged_file_stops_the_server(tmp_path):
    path = tmp_path / "acls.json"
    rule = acl(R.GROUP, "g", X, "User:a", "*", O.READ, P.DENY)
    a = StandardAuthorizer(path=path)
    a.create([rule])
    assert StandardAuthorizer(path=path).acls() == [rule]
    assert not (tmp_path / "acls.json.tmp").exists()
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    (tmp_path / "acls.json.tmp").write_text("half a write")  # a crash mid-write leaves the old file whole
    assert StandardAuthorizer(path=path).acls() == [rule]
    path.write_text("{not json")
    with pytest.raises(StoreError, match="damaged"):
        StandardAuthorizer(path=path)
