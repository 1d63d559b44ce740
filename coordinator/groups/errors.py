"""The Kafka error codes the group state machine answers with.

Numbers are Kafka's (org.apache.kafka.common.protocol.Errors) so handlers can put them on the
wire unchanged. Kept local so the group core does not depend on the protocol package.
"""

from enum import IntEnum


class Error(IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    GROUP_AUTHORIZATION_FAILED = 30
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
