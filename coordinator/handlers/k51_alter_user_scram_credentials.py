"""AlterUserScramCredentials (key 51), v0.

Kafka's ControllerApis/ScramControlManager.alterCredentials: the principal needs ALTER on the
CLUSTER (else every user gets CLUSTER_AUTHORIZATION_FAILED); a user altered twice in one request
gets DUPLICATE_RESOURCE; an empty name UNACCEPTABLE_CREDENTIAL, an unknown mechanism
UNSUPPORTED_SASL_MECHANISM, iterations outside 4096..16384 UNACCEPTABLE_CREDENTIAL, deleting a
credential that does not exist RESOURCE_NOT_FOUND. Upserts carry SaltedPassword; what is stored
is Kafka's StoredKey/ServerKey (security/scram.py), persisted before the answer. The request's
salts and salted passwords never reach a log or the transcript.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from coordinator.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_NAMES,
    MIN_ITERATIONS,
    ScramCredential,
    credential_from_salted,
)
from protocol.errors import ErrorCode
from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)

_TWICE = "A user credential cannot be altered twice in the same request"


def _name_and_mechanism(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


async def handle(ctx: RequestContext, request: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse:
    users = [d.name for d in request.deletions] + [u.name for u in request.upsertions]
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return AlterUserScramCredentialsResponse(
            results=[
                AlterUserScramCredentialsResult(user, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
                for user in sorted(set(users))
            ]
        )
    store = ctx.broker.credentials
    assert store is not None
    errors: dict[str, tuple[int, str]] = {}
    deletions: dict[str, tuple[str, str]] = {}
    upserts: dict[str, tuple[tuple[str, str], ScramCredential]] = {}
    for d in request.deletions:
        if d.name in errors:
            continue
        if deletions.pop(d.name, None) is not None:
            errors[d.name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            continue
        problem = _name_and_mechanism(d.name, d.mechanism)
        if problem is None and store.lookup(d.name, MECHANISM_NAMES[d.mechanism]) is None:
            problem = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        if problem is not None:
            errors[d.name] = problem
        else:
            deletions[d.name] = (d.name, MECHANISM_NAMES[d.mechanism])
    for u in request.upsertions:
        if u.name in errors:
            continue
        if deletions.pop(u.name, None) is not None or upserts.pop(u.name, None) is not None:
            errors[u.name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            continue
        problem = _name_and_mechanism(u.name, u.mechanism)
        if problem is None and u.iterations < MIN_ITERATIONS:
            problem = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
        elif problem is None and u.iterations > MAX_ITERATIONS:
            problem = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
        if problem is not None:
            errors[u.name] = problem
            continue
        mechanism = MECHANISM_NAMES[u.mechanism]
        credential = credential_from_salted(mechanism, u.salted_password, u.salt, u.iterations)
        upserts[u.name] = ((u.name, mechanism), credential)
    if deletions or upserts:
        store.apply(dict(upserts.values()), list(deletions.values()))
    results = [AlterUserScramCredentialsResult(user, ErrorCode.NONE, None) for user in [*deletions, *upserts]]
    results += [AlterUserScramCredentialsResult(user, code, message) for user, (code, message) in errors.items()]
    return AlterUserScramCredentialsResponse(results=results)
