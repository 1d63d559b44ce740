"""DescribeUserScramCredentials (key 50), v0.

Kafka's KafkaApis.handleDescribeUserScramCredentialsRequest and ScramImage.describe: the
principal needs DESCRIBE on the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED); no users named (null
or empty) lists every user with credentials; a user named twice gets DUPLICATE_RESOURCE, one
without credentials RESOURCE_NOT_FOUND. Only mechanisms and iterations leave: never a salt or key.
"""

from __future__ import annotations

from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from coordinator.security.scram import MECHANISM_TYPES
from protocol.errors import ErrorCode
from protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)


async def handle(
    ctx: RequestContext, request: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return DescribeUserScramCredentialsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None
        )
    store = ctx.broker.credentials
    known = store.users() if store is not None else {}
    named: dict[str, bool] = {}  # user -> named more than once
    if request.users:
        for asked in request.users:
            named[asked.name] = asked.name in named
    else:
        named = dict.fromkeys(known, False)
    results = []
    for user, duplicate in named.items():
        if duplicate:
            results.append(
                DescribeUserScramCredentialsResult(
                    user=user,
                    error_code=ErrorCode.DUPLICATE_RESOURCE,
                    error_message="Cannot describe SCRAM credentials for the same user twice in a single request: "
                    + user,
                )
            )
        elif user not in known:
            results.append(
                DescribeUserScramCredentialsResult(
                    user=user,
                    error_code=ErrorCode.RESOURCE_NOT_FOUND,
                    error_message=f"Attempt to describe a user credential that does not exist: {user}",
                )
            )
        else:
            infos = [CredentialInfo(MECHANISM_TYPES[m], iterations) for m, iterations in sorted(known[user].items())]
            results.append(
                DescribeUserScramCredentialsResult(user=user, error_code=0, error_message=None, credential_infos=infos)
            )
    return DescribeUserScramCredentialsResponse(error_code=ErrorCode.NONE, error_message=None, results=results)
