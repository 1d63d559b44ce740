"""Error answers of the share-group APIs (KIP-932), for error_responses.error_response:
ShareGroupDescribe and DescribeShareGroupOffsets (one entry per group), the others the
top-level code (ShareGroupHeartbeat, ShareFetch and ShareAcknowledge without partitions, as
Kafka's getErrorResponse builds them; Alter/DeleteShareGroupOffsets with the message).
"""

from __future__ import annotations

from typing import Any

from protocol.messages import describe_share_group_offsets, share_group_describe

__all__ = ["share_group_describe_error", "describe_share_group_offsets_error"]


def share_group_describe_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = share_group_describe
    return m.ShareGroupDescribeResponse(
        groups=[m.DescribedGroup(group_id=g, error_code=code, error_message=message) for g in req.group_ids]
    )


def describe_share_group_offsets_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_share_group_offsets
    return m.DescribeShareGroupOffsetsResponse(
        groups=[
            m.DescribeShareGroupOffsetsResponseGroup(group_id=g.group_id, error_code=code, error_message=message)
            for g in req.groups
        ]
    )
