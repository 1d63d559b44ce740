"""The Kafka error an operation answers with, as an exception carrying code and message.

Operations raise `ConsumerGroupError` where Kafka throws an ApiException; the operation's entry
point catches it, explains it (the transcript's reason) and answers the code and message. Because
operations emit their records only at the end, a raised error leaves the groups untouched.
"""

from __future__ import annotations

from protocol.errors import ErrorCode


class ConsumerGroupError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ConsumerGroupError({self.code.name}, {self.message!r})"


def invalid_request(message: str) -> ConsumerGroupError:
    return ConsumerGroupError(ErrorCode.INVALID_REQUEST, message)


def group_id_not_found(message: str) -> ConsumerGroupError:
    return ConsumerGroupError(ErrorCode.GROUP_ID_NOT_FOUND, message)


def unknown_member(member_id: str, group_id: str) -> ConsumerGroupError:
    return ConsumerGroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
