"""FaultSpec: what a fault rule says, and its validation into a `CompiledRule`.

A spec names what to match (API, versions, broker, client, group, member, topic/partition,
group state, the n-th match), what to do (error codes, delay, drop the response, close,
throttle) and how long to live (a count, until a time, until removed). `compile_rule` refuses,
with a one-line ControlError, anything unknown or anything that could never match, so a typo
fails at add time instead of silently never firing. The FIFO `errors` list copies
rd_kafka_mock_push_request_errors: one code per matching request, the rule ends when it is empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from coordinator.control.errors import bad_request
from coordinator.control.request_fields import API_NAMES, api_key_of
from coordinator.groups.consumer.group import ConsumerGroupState
from coordinator.groups.state import GroupState
from protocol.api import ApiKey
from protocol.errors import ErrorCode

ANY_API = -1

# Kafka's ClassicGroupState and ConsumerGroup.ConsumerGroupState names, compared case-insensitively.
GROUP_STATES: dict[str, str] = {s.value.lower(): s.value for s in (*GroupState, *ConsumerGroupState)}

# APIs whose requests name a group / a member / a topic: a rule that asks for one of these on
# any other API can never match.
GROUP_APIS = frozenset(
    int(k)
    for k in (
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.FIND_COORDINATOR,
        ApiKey.JOIN_GROUP,
        ApiKey.HEARTBEAT,
        ApiKey.LEAVE_GROUP,
        ApiKey.SYNC_GROUP,
        ApiKey.DESCRIBE_GROUPS,
        ApiKey.DELETE_GROUPS,
        ApiKey.OFFSET_DELETE,
        ApiKey.TXN_OFFSET_COMMIT,
        ApiKey.ADD_OFFSETS_TO_TXN,
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        ApiKey.CONSUMER_GROUP_DESCRIBE,
    )
)
MEMBER_APIS = frozenset(
    int(k)
    for k in (
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.JOIN_GROUP,
        ApiKey.HEARTBEAT,
        ApiKey.LEAVE_GROUP,
        ApiKey.SYNC_GROUP,
        ApiKey.TXN_OFFSET_COMMIT,
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
    )
)
TOPIC_APIS = frozenset(
    int(k)
    for k in (
        ApiKey.PRODUCE,
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.METADATA,
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.CREATE_TOPICS,
        ApiKey.DELETE_TOPICS,
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.WRITE_TXN_MARKERS,
        ApiKey.TXN_OFFSET_COMMIT,
        ApiKey.OFFSET_DELETE,
        ApiKey.DESCRIBE_PRODUCERS,
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
    )
)


@dataclass
class FaultSpec:
    """One fault rule as the caller states it (JSON body of POST /v1/faults). Unset = any."""

    # -- match
    api: str | int | None = None  # Kafka's name ("OffsetCommit") or key; None = every API
    min_version: int | None = None
    max_version: int | None = None
    broker: int | None = None  # node id that received the request
    client_id: str | None = None
    group: str | None = None
    member: str | None = None  # a member id or a group instance id
    topic: str | None = None
    partition: int | None = None  # needs topic
    group_state: str | None = None  # e.g. "CompletingRebalance": only while the group is in it
    nth: int | None = None  # act from the n-th matching request on (then count, default 1)
    # -- act
    errors: list[str | int] | None = None  # FIFO: one per matching request; the rule ends when empty
    error: str | int | None = None  # the same code every time
    delay_ms: int | None = None  # hold the response (or the error answer) this long
    drop_response: bool = False  # apply the request, answer nothing
    close: Literal["before", "after"] | None = None  # close without applying / apply then close
    throttle_ms: int | None = None  # answer with throttle_time_ms set
    # -- live
    count: int | None = None  # act on this many requests, then end
    until_ms: int | None = None  # end at this server-clock time
    for_ms: int | None = None  # end this long after it was added

    def to_json(self) -> dict[str, Any]:
        """The fields that were set (the rule as listed back)."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) not in (None, False)
        }


# Pydantic (the HTTP layer) reads this: unknown keys in a posted rule are an error, not ignored.
FaultSpec.__pydantic_config__ = {"extra": "forbid"}  # type: ignore[attr-defined]


@dataclass(slots=True)
class CompiledRule:
    """A validated rule, as FaultRules keeps and matches it."""

    id: int
    spec: FaultSpec
    api_key: int  # ANY_API for every API
    min_version: int
    max_version: int
    broker: int | None
    client_id: str | None
    group: str | None
    member: str | None
    topic: str | None
    partition: int | None
    group_state: str | None  # lower case
    nth: int
    errors: list[int] | None  # FIFO, consumed from the front
    error: int | None
    delay_ms: int
    drop_response: bool
    close_before: bool
    close_after: bool
    throttle_ms: int | None
    remaining: int | None  # None: until removed (or until_ms)
    until_ms: int | None
    deep: bool = False  # has conditions that look inside the request (group, member, topic, state)
    matched: int = 0  # requests that matched every condition
    hits: int = 0  # requests it acted on
    active: bool = True


def error_code_of(value: str | int) -> int:
    if isinstance(value, bool):
        raise bad_request(f"unknown error {value!r}")
    if isinstance(value, int) or value.strip().lstrip("-").isdigit():
        try:
            return int(ErrorCode(int(value)))
        except ValueError:
            raise bad_request(f"unknown error code {value}") from None
    try:
        return int(ErrorCode[value.strip().upper()])
    except KeyError:
        raise bad_request(f"unknown error {value!r} (Kafka's names, e.g. NOT_COORDINATOR)") from None


def _non_negative(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or value < 0):
        raise bad_request(f"{name} must be a non-negative integer, got {value!r}")


def compile_rule(
    rule_id: int,
    spec: FaultSpec,
    now_ms: int,
    served: Mapping[int, tuple[int, int]],
    node_ids: Callable[[], Collection[int]] | None = None,
) -> CompiledRule:
    """Validate `spec` against what this server serves; a ControlError(400) says what is wrong."""
    api_key = ANY_API if spec.api is None else api_key_of(spec.api)
    name = "any API" if api_key == ANY_API else API_NAMES[api_key]
    lo, hi = _versions(spec, api_key, name, served)
    _matchers(spec, api_key, name, node_ids)
    errors, error = _errors(spec)
    for field_name in ("delay_ms", "throttle_ms", "count", "for_ms", "nth", "until_ms"):
        _non_negative(field_name, getattr(spec, field_name))
    if spec.close not in (None, "before", "after"):
        raise bad_request(f'close must be "before" or "after", got {spec.close!r}')
    _actions(spec, errors, error)
    remaining = _count(spec, errors)
    until = _until(spec, now_ms)
    return CompiledRule(
        rule_id,
        spec,
        api_key,
        lo,
        hi,
        spec.broker,
        spec.client_id,
        spec.group,
        spec.member,
        spec.topic,
        spec.partition,
        spec.group_state.lower() if spec.group_state else None,
        spec.nth or 1,
        errors,
        error,
        spec.delay_ms or 0,
        spec.drop_response,
        spec.close == "before",
        spec.close == "after",
        spec.throttle_ms,
        remaining,
        until,
        deep=any(v is not None for v in (spec.group, spec.member, spec.topic, spec.group_state)),
    )


def _versions(spec: FaultSpec, api_key: int, name: str, served: Mapping[int, tuple[int, int]]) -> tuple[int, int]:
    _non_negative("min_version", spec.min_version)
    _non_negative("max_version", spec.max_version)
    if api_key == ANY_API:
        lo, hi = 0, 2**15 - 1
    elif api_key not in served:
        raise bad_request(f"{name} is not served by this broker: a rule for it could never match")
    else:
        lo, hi = served[api_key]
    if spec.min_version is not None and spec.max_version is not None and spec.min_version > spec.max_version:
        raise bad_request(f"min_version {spec.min_version} is above max_version {spec.max_version}")
    want_lo = lo if spec.min_version is None else spec.min_version
    want_hi = hi if spec.max_version is None else spec.max_version
    if want_hi < lo or want_lo > hi:
        raise bad_request(f"{name} v{want_lo}-v{want_hi} is never served (this broker serves v{lo}-v{hi})")
    return max(lo, want_lo), min(hi, want_hi)


def _matchers(spec: FaultSpec, api_key: int, name: str, node_ids: Callable[[], Collection[int]] | None) -> None:
    if spec.broker is not None and node_ids is not None:
        known = sorted(node_ids())
        if spec.broker not in known:
            raise bad_request(f"unknown broker {spec.broker} (brokers: {', '.join(map(str, known))})")
    if spec.partition is not None:
        _non_negative("partition", spec.partition)
        if spec.topic is None:
            raise bad_request("partition needs topic")
    if spec.group_state is not None and spec.group_state.lower() not in GROUP_STATES:
        raise bad_request(f"unknown group state {spec.group_state!r} (one of {', '.join(GROUP_STATES.values())})")
    if api_key == ANY_API:
        return
    needs = [
        ("group", spec.group, GROUP_APIS),
        ("group_state", spec.group_state, GROUP_APIS),
        ("member", spec.member, MEMBER_APIS),
        ("topic", spec.topic, TOPIC_APIS),
    ]
    for field_name, value, apis in needs:
        if value is not None and api_key not in apis:
            raise bad_request(f"{name} requests never name a {field_name.split('_')[0]}: the rule could never match")


def _errors(spec: FaultSpec) -> tuple[list[int] | None, int | None]:
    if spec.errors is not None and spec.error is not None:
        raise bad_request("give errors (a FIFO list) or error (one code every time), not both")
    if spec.errors is not None:
        if not spec.errors:
            raise bad_request("errors is empty")
        return [error_code_of(e) for e in spec.errors], None
    if spec.error is not None:
        code = error_code_of(spec.error)
        if code == 0:
            raise bad_request("error NONE is no error (NONE is allowed inside errors, to let one request pass)")
        return None, code
    return None, None


def _actions(spec: FaultSpec, errors: list[int] | None, error: int | None) -> None:
    answers = errors is not None or error is not None
    if not (answers or spec.delay_ms or spec.drop_response or spec.close or spec.throttle_ms is not None):
        raise bad_request("a rule needs an action: errors, error, delay_ms, drop_response, close or throttle_ms")
    if spec.close == "before" and (answers or spec.delay_ms or spec.drop_response or spec.throttle_ms is not None):
        raise bad_request('close "before" closes without answering: it takes no other action')
    if spec.drop_response and (answers or spec.close):
        raise bad_request("drop_response applies the request and answers nothing: no errors or close with it")
    if spec.close == "after" and answers:
        raise bad_request('close "after" applies the request: use close "before" to refuse it')


def _count(spec: FaultSpec, errors: list[int] | None) -> int | None:
    if spec.count == 0:
        raise bad_request("count must be at least 1")
    if spec.nth == 0:
        raise bad_request("nth counts from 1")
    if errors is not None:
        if spec.count is not None and spec.count > len(errors):
            raise bad_request(
                f"count {spec.count} exceeds the {len(errors)} errors listed (use error for one code every time)"
            )
        return spec.count or len(errors)
    if spec.count is None and spec.nth is not None:
        return 1  # "the n-th request": that one only
    return spec.count


def _until(spec: FaultSpec, now_ms: int) -> int | None:
    if spec.until_ms is not None and spec.for_ms is not None:
        raise bad_request("give until_ms or for_ms, not both")
    if spec.for_ms is not None:
        if spec.for_ms == 0:
            raise bad_request("for_ms must be positive")
        return now_ms + spec.for_ms
    if spec.until_ms is not None and spec.until_ms <= now_ms:
        raise bad_request(f"until_ms {spec.until_ms} is not after now ({now_ms}): the rule could never match")
    return spec.until_ms
