"""Share sessions: which partitions a member fetches, and the epoch of its next request (Kafka's
ShareSessionCache, ShareSession and SharePartitionManager.newContext / acknowledgeSessionUpdate).

A ShareFetch with epoch 0 opens a session (replacing the member's previous one; piggybacked
acknowledgements are INVALID_REQUEST there; a full cache is SHARE_SESSION_LIMIT_REACHED); the
session then expects epoch 1, 2, ... (wrapping to 1), and each request adds its partitions and
drops its forgotten ones. Epoch -1 ends the session (it must exist). ShareAcknowledge never opens
one: epoch 0 is INVALID_SHARE_SESSION_EPOCH, -1 leaves it as it is, any other must match and
moves it on. A wrong epoch is INVALID_SHARE_SESSION_EPOCH, a missing session
SHARE_SESSION_NOT_FOUND. Sessions belong to the connection that opened them: when it closes they
go, and their members' records are released (Kafka's ConnectionDisconnectListener).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from protocol.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

TopicIdPartition = tuple[uuid.UUID, int]
SessionKey = tuple[str, str]  # (group id, member id)


def next_epoch(epoch: int) -> int:
    """Kafka ShareRequestMetadata.nextEpoch."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_EPOCH else epoch + 1


class SessionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ShareSession:
    key: SessionKey
    connection_id: int
    epoch: int = 1  # the epoch the next request must carry
    # partition -> whether it must appear in the next answer even without data (new in the session)
    partitions: dict[TopicIdPartition, bool] = field(default_factory=dict)


class ContextKind(enum.Enum):
    FULL = "full"  # epoch 0: a new session; every partition is answered
    INCREMENTAL = "incremental"  # answered: partitions with data, errors or news
    FINAL = "final"  # epoch -1: acknowledgements only, then the session is released


@dataclass
class FetchContext:
    kind: ContextKind
    session: ShareSession | None
    partitions: list[TopicIdPartition]  # what this fetch reads: the session's partitions


class ShareSessionCache:
    def __init__(self, max_sessions: Callable[[], int]) -> None:
        self._max = max_sessions  # group.share.max.share.sessions, read at use (a live setting)
        self._sessions: dict[SessionKey, ShareSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, key: SessionKey) -> ShareSession | None:
        return self._sessions.get(key)

    def remove(self, key: SessionKey) -> ShareSession | None:
        return self._sessions.pop(key, None)

    def sessions(self) -> list[ShareSession]:
        return list(self._sessions.values())

    def of_connection(self, connection_id: int) -> list[ShareSession]:
        return [s for s in self._sessions.values() if s.connection_id == connection_id]

    def new_context(
        self,
        key: SessionKey,
        epoch: int,
        wanted: Iterable[TopicIdPartition],
        forgotten: Iterable[TopicIdPartition],
        has_acks: bool,
        connection_id: int,
    ) -> FetchContext:
        """Kafka SharePartitionManager.newContext; raises SessionError."""
        if epoch == FINAL_EPOCH:
            session = self._sessions.get(key)
            if session is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {key[1]}")
            return FetchContext(ContextKind.FINAL, session, list(session.partitions))
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise SessionError(
                    ErrorCode.INVALID_REQUEST, "Acknowledge data present in the initial share fetch request"
                )
            self._sessions.pop(key, None)
            if len(self._sessions) >= self._max():
                raise SessionError(
                    ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                    f"the share session cache is full ({self._max()} sessions: group.share.max.share.sessions)",
                )
            session = ShareSession(key, connection_id, next_epoch(INITIAL_EPOCH))
            for tp in wanted:
                session.partitions[tp] = True
            self._sessions[key] = session
            return FetchContext(ContextKind.FULL, session, list(session.partitions))
        session = self._expect(key, epoch)
        for tp in wanted:
            session.partitions.setdefault(tp, True)
        for tp in forgotten:
            session.partitions.pop(tp, None)
        session.epoch = next_epoch(session.epoch)
        return FetchContext(ContextKind.INCREMENTAL, session, list(session.partitions))

    def acknowledge_update(self, key: SessionKey, epoch: int) -> ShareSession:
        """Kafka acknowledgeSessionUpdate (ShareAcknowledge); raises SessionError."""
        if epoch == INITIAL_EPOCH:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a share session")
        if epoch == FINAL_EPOCH:
            session = self._sessions.get(key)
            if session is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {key[1]}")
            return session
        session = self._expect(key, epoch)
        session.epoch = next_epoch(session.epoch)
        return session

    def _expect(self, key: SessionKey, epoch: int) -> ShareSession:
        session = self._sessions.get(key)
        if session is None:
            raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"no share session for member {key[1]}")
        if session.epoch != epoch:
            raise SessionError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH, f"expected share session epoch {session.epoch}, got {epoch}"
            )
        return session
