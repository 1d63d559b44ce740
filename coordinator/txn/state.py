"""A transactional id's state machine and metadata (Kafka's TransactionState and TransactionMetadata).

`TransactionState` has one table of valid previous states (Kafka's validPreviousStates) and the
ids written to TransactionLogValue.TransactionStatus; `check_transition` is the one place that
enforces it. What each state answers:
- Empty: InitProducerId bumps the epoch; AddPartitions/AddOffsets start a transaction (Ongoing);
  a v2 EndTxn(abort) aborts nothing with an epoch bump (PrepareAbort).
- Ongoing: more partitions; EndTxn -> PrepareCommit/PrepareAbort; InitProducerId, or the
  transaction timeout, fences: PrepareEpochFence -> PrepareAbort with the epoch bumped.
- PrepareCommit / PrepareAbort: the decision is durable, markers are being written; requests get
  CONCURRENT_TRANSACTIONS (a retry of the same EndTxn too); the last marker -> Complete*.
- CompleteCommit / CompleteAbort: like Empty, and the EndTxn retry of the same outcome succeeds.
- Dead: the id expired (transactional.id.expiration.ms); its tombstone removes it.
- PrepareEpochFence: never written (Kafka keeps it as a pending state only): the fencing op goes
  through it to PrepareAbort in one step, which is what the log records.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_EPOCH = 32767  # Short.MaxValue


class TransactionState(enum.Enum):
    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    def __init__(self, state_id: int, kafka_name: str) -> None:
        self.id = state_id
        self.kafka_name = kafka_name

    def __str__(self) -> str:
        return self.kafka_name

    @classmethod
    def from_id(cls, state_id: int) -> TransactionState:
        for state in cls:
            if state.id == state_id:
                return state
        raise ValueError(f"Unknown transaction state id {state_id} from the transaction status message")

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        return next((s for s in cls if s.kafka_name == name), None)

    @property
    def is_expiration_allowed(self) -> bool:
        return self in _EXPIRABLE

    @property
    def is_complete_or_empty(self) -> bool:
        return self in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)

    @property
    def is_prepare(self) -> bool:
        return self in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)


S = TransactionState
VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    # KIP-890 part 2: a v2 client may abort when it does not know whether anything was added.
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}
_EXPIRABLE = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})


class IllegalTransition(RuntimeError):
    """A transition the state table forbids: a bug, never a client's doing."""


def check_transition(transactional_id: str, old: TransactionState, new: TransactionState) -> None:
    """TransactionMetadata.prepareTransitionTo's check."""
    if old not in VALID_PREVIOUS[new]:
        raise IllegalTransition(f"transactional id {transactional_id!r}: {new} is not reachable from {old}")


def is_epoch_exhausted(epoch: int) -> bool:
    """TransactionMetadata.isEpochExhausted: epochs stop one short of Short.MaxValue."""
    return epoch >= MAX_EPOCH - 1


@dataclass
class TransactionMetadata:
    """One transactional id's state, as the shard holds it (rebuilt from its latest record)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1  # txnStartTimestamp: when the first partition was added
    last_update_ms: int = -1
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    # Not in TransactionLogValue: Kafka keeps it in memory only (a reload sets -1), so a
    # retried InitProducerId is recognised only while the coordinator has not moved.
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    # The transaction.version the client spoke at the last transition (TransactionLogValue v1
    # tag 2): 2 makes every EndTxn bump the epoch (KIP-890 part 2), 0 is the classic protocol.
    client_version: int = 0

    @property
    def supports_epoch_bump(self) -> bool:
        """TransactionVersion.supportsEpochBump of the client's version."""
        return self.client_version >= 2

    def sorted_partitions(self) -> list[tuple[str, int]]:
        return sorted(self.partitions)
