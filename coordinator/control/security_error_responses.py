"""Error answers of the SASL, ACL and SCRAM-credential APIs, for error_responses.error_response:
SaslHandshake and SaslAuthenticate and DescribeAcls (the top-level code), CreateAcls (one result per
creation), DeleteAcls (one per filter), DescribeUserScramCredentials (the top-level code and one
result per named user), AlterUserScramCredentials (one result per user, sorted). Each copies
Kafka's `<Api>Request.getErrorResponse`.
"""

from __future__ import annotations

from typing import Any

from protocol.messages import (
    alter_user_scram_credentials,
    create_acls,
    delete_acls,
    describe_acls,
    describe_user_scram_credentials,
    sasl_authenticate,
    sasl_handshake,
)

__all__ = [
    "sasl_handshake_error",
    "sasl_authenticate_error",
    "describe_acls_error",
    "create_acls_error",
    "delete_acls_error",
    "describe_user_scram_credentials_error",
    "alter_user_scram_credentials_error",
]


def sasl_handshake_error(version: int, req: Any, code: int, message: str | None) -> Any:
    return sasl_handshake.SaslHandshakeResponse(error_code=code, mechanisms=[])


def sasl_authenticate_error(version: int, req: Any, code: int, message: str | None) -> Any:
    return sasl_authenticate.SaslAuthenticateResponse(error_code=code, error_message=message)


def describe_acls_error(version: int, req: Any, code: int, message: str | None) -> Any:
    return describe_acls.DescribeAclsResponse(error_code=code, error_message=message)


def create_acls_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = create_acls
    return m.CreateAclsResponse(
        results=[m.AclCreationResult(error_code=code, error_message=message) for _ in req.creations]
    )


def delete_acls_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = delete_acls
    return m.DeleteAclsResponse(
        filter_results=[m.DeleteAclsFilterResult(error_code=code, error_message=message) for _ in req.filters]
    )


def describe_user_scram_credentials_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_user_scram_credentials
    return m.DescribeUserScramCredentialsResponse(
        error_code=code,
        error_message=message,
        results=[m.DescribeUserScramCredentialsResult(error_code=code, error_message=message) for _ in req.users or ()],
    )


def alter_user_scram_credentials_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = alter_user_scram_credentials
    users = sorted({d.name for d in req.deletions} | {u.name for u in req.upsertions})
    return m.AlterUserScramCredentialsResponse(
        results=[m.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=message) for user in users]
    )
