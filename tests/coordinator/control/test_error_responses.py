"""error_response: for every API and every version the codec knows (a superset of the served
ones), a populated request gives an error answer that encodes, decodes back, and carries the
code where Kafka's getErrorResponse puts it, once per partition / group / key of the request."""

from __future__ import annotations

from typing import Any

import pytest

from coordinator.control.error_responses import error_response, with_throttle
from protocol.api import CODEC_VERSIONS, SUPPORTED_VERSIONS, ApiKey
from protocol.codec import decode_request, decode_response, encode_request, encode_response, message_schema
from protocol.errors import ErrorCode
from tests.protocol.protocol_samples import sample

K = ApiKey
CODE = int(ErrorCode.NOT_COORDINATOR)


def _values(obj: Any, path: str) -> list[Any]:
    """Every value at a dotted path, flattening lists on the way ("topics.partitions.error_code")."""
    items = [obj]
    for name in path.split("."):
        nxt: list[Any] = []
        for item in items:
            value = getattr(item, name)
            if isinstance(value, list):
                nxt.extend(value)
            elif value is not None:
                nxt.append(value)
        items = nxt
    return items


# Where the code goes: (response path to error codes, request path whose entries each get one;
# None = exactly one code).
def _places(key: int, version: int) -> list[tuple[str, str | None]]:
    partitioned = {
        K.PRODUCE: ("responses.partition_responses.error_code", "topic_data.partition_data"),
        K.LIST_OFFSETS: ("topics.partitions.error_code", "topics.partitions"),
        K.OFFSET_COMMIT: ("topics.partitions.error_code", "topics.partitions"),
        K.OFFSET_FOR_LEADER_EPOCH: ("topics.partitions.error_code", "topics.partitions"),
        K.TXN_OFFSET_COMMIT: ("topics.partitions.error_code", "topics.partitions"),
        K.WRITE_TXN_MARKERS: ("markers.topics.partitions.error_code", "markers.topics.partition_indexes"),
        K.DESCRIBE_PRODUCERS: ("topics.partitions.error_code", "topics.partition_indexes"),
        K.METADATA: ("topics.error_code", "topics"),
        K.DESCRIBE_GROUPS: ("groups.error_code", "groups"),
        K.DELETE_GROUPS: ("results.error_code", "groups_names"),
        K.DESCRIBE_TRANSACTIONS: ("transaction_states.error_code", "transactional_ids"),
        K.CONSUMER_GROUP_DESCRIBE: ("groups.error_code", "group_ids"),
        K.CREATE_TOPICS: ("topics.error_code", "topics"),
        K.DELETE_TOPICS: ("responses.error_code", "topics" if version >= 6 else "topic_names"),
        K.DELETE_RECORDS: ("topics.partitions.error_code", "topics.partitions"),
        K.DESCRIBE_CONFIGS: ("results.error_code", "resources"),
        K.ALTER_CONFIGS: ("responses.error_code", "resources"),
        K.INCREMENTAL_ALTER_CONFIGS: ("responses.error_code", "resources"),
        K.CREATE_PARTITIONS: ("results.error_code", "topics"),
        K.DESCRIBE_TOPIC_PARTITIONS: ("topics.error_code", "topics"),
        K.CREATE_ACLS: ("results.error_code", "creations"),
        K.DELETE_ACLS: ("filter_results.error_code", "filters"),
        K.SHARE_GROUP_DESCRIBE: ("groups.error_code", "group_ids"),
        K.DESCRIBE_SHARE_GROUP_OFFSETS: ("groups.error_code", "groups"),
    }
    if key in partitioned:
        return [partitioned[key]]
    if key == K.FETCH:
        top = [("error_code", None)] if version >= 7 else []
        return top + ([] if version >= 13 else [("responses.partitions.error_code", "topics.partitions")])
    if key == K.OFFSET_FETCH:
        if version >= 8:
            return [("groups.error_code", "groups")]
        if version >= 2:
            return [("error_code", None)]
        return [("topics.partitions.error_code", "topics.partition_indexes")]
    if key == K.FIND_COORDINATOR:
        return [("coordinators.error_code", "coordinator_keys")] if version >= 4 else [("error_code", None)]
    if key == K.DESCRIBE_LOG_DIRS:
        return [("error_code", None)] if version >= 3 else []  # v1-2 have no error code at all
    if key == K.ELECT_LEADERS:
        top = [("error_code", None)] if version >= 1 else []
        return top + [("replica_election_results.partition_result.error_code", "topic_partitions.partitions")]
    if key == K.DESCRIBE_USER_SCRAM_CREDENTIALS:
        return [("error_code", None), ("results.error_code", "users")]
    if key == K.ALTER_USER_SCRAM_CREDENTIALS:
        return [("results.error_code", DISTINCT_USERS)]
    if key == K.ADD_PARTITIONS_TO_TXN:
        if version >= 4:
            return [("error_code", None)]
        return [
            (
                "results_by_topic_v3_and_below.results_by_partition.partition_error_code",
                "v3_and_below_topics.partitions",
            )
        ]
    return [("error_code", None)]


DISTINCT_USERS = "<one per distinct user of deletions and upsertions>"


def _expected(request: Any, request_path: str | None) -> int:
    if request_path is None:
        return 1
    if request_path == DISTINCT_USERS:
        return len({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return len(_values(request, request_path))


def _all_codes(obj: Any) -> list[int]:
    """Every non-zero *error_code field anywhere in a response."""
    found: list[int] = []
    for name in getattr(obj, "__dataclass_fields__", ()):
        value = getattr(obj, name)
        if name.endswith("error_code") and value:
            found.append(value)
        for item in value if isinstance(value, list) else [value]:
            if hasattr(item, "__dataclass_fields__"):
                found.extend(_all_codes(item))
    return found


CASES = [(int(k), v) for k, (lo, hi) in CODEC_VERSIONS.items() for v in range(lo, hi + 1)]


def _request(key: int, version: int, seed: int, nulls: bool) -> Any:
    """A populated request, as the dispatcher would have decoded it from the wire."""
    req = sample(message_schema(key, False), version, seed=seed, nulls=nulls)
    if key == K.PRODUCE:
        req.acks = -1
    return decode_request(key, version, encode_request(key, version, req))


@pytest.mark.parametrize(("key", "version"), CASES, ids=[f"{ApiKey(k).name}-v{v}" for k, v in CASES])
@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
def test_every_api_and_version_answers_a_well_formed_error(key: int, version: int, nulls: bool) -> None:
    for seed in range(3):
        request = _request(key, version, seed, nulls)
        response = error_response(key, version, request, CODE)
        decoded = decode_response(key, version, encode_response(key, version, response))
        places = _places(key, version)
        total = 0
        for response_path, request_path in places:
            codes = _values(decoded, response_path)
            expected = _expected(request, request_path)
            assert codes == [CODE] * expected, (response_path, codes, expected)
            total += expected
        # Nowhere else: the code appears exactly where Kafka puts it.
        assert _all_codes(decoded) == [CODE] * total


def test_every_served_api_has_a_case() -> None:
    served = {
        (int(k), v) for k, (lo, hi) in SUPPORTED_VERSIONS.items() for v in range(max(lo, CODEC_VERSIONS[k][0]), hi + 1)
    }
    assert served <= set(CASES)


def test_produce_with_acks_0_gets_no_response() -> None:
    request = _request(K.PRODUCE, 9, 0, False)
    request.acks = 0
    assert error_response(K.PRODUCE, 9, request, CODE) is None


def test_kafka_details() -> None:
    # JoinGroup v7+ answers a null protocol name, older versions "" (JoinGroupRequest.getErrorResponse).
    join = _request(K.JOIN_GROUP, 7, 0, False)
    assert error_response(K.JOIN_GROUP, 7, join, CODE).protocol_name is None
    assert error_response(K.JOIN_GROUP, 6, _request(K.JOIN_GROUP, 6, 0, False), CODE).protocol_name == ""
    # FindCoordinator answers Node.noNode().
    old = error_response(K.FIND_COORDINATOR, 3, _request(K.FIND_COORDINATOR, 3, 0, False), CODE)
    assert (old.node_id, old.host, old.port) == (-1, "", -1)
    # ApiVersions with UNSUPPORTED_VERSION lists its own range (KIP-511).
    unsupported = error_response(
        K.API_VERSIONS, 3, _request(K.API_VERSIONS, 3, 0, False), ErrorCode.UNSUPPORTED_VERSION
    )
    assert [(a.api_key, a.min_version, a.max_version) for a in unsupported.api_keys] == [
        (18, *SUPPORTED_VERSIONS[K.API_VERSIONS])
    ]
    # Fetch keeps the session id the client sent.
    fetch = _request(K.FETCH, 12, 0, False)
    assert error_response(K.FETCH, 12, fetch, CODE).session_id == fetch.session_id
    # Per-partition answers keep the partition indexes in request order.
    commit = _request(K.OFFSET_COMMIT, 8, 1, False)
    answer = error_response(K.OFFSET_COMMIT, 8, commit, CODE)
    assert _values(answer, "topics.partitions.partition_index") == _values(commit, "topics.partitions.partition_index")
    assert _values(answer, "topics.name") == _values(commit, "topics.name")


def test_with_throttle_sets_the_field_where_it_exists() -> None:
    response = error_response(K.HEARTBEAT, 4, _request(K.HEARTBEAT, 4, 0, False), CODE)
    assert with_throttle(response, 250).throttle_time_ms == 250
    markers = error_response(K.WRITE_TXN_MARKERS, 1, _request(K.WRITE_TXN_MARKERS, 1, 0, False), CODE)
    assert not hasattr(with_throttle(markers, 250), "throttle_time_ms")
