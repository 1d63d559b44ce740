"""What a decoded request is about: API names, groups, members, topics and partitions.

Fault rules and request tracking ask these questions of any request object from
protocol/messages without knowing its API: the answers come from field names the message JSON
uses throughout (group_id, member_id, group_instance_id, topics[].name/topic/topic_id,
partitions[].partition_index/partition/index). Nothing here runs unless a rule or a reader asks.
API names are Kafka's (ApiKeys.name: "OffsetCommit"); lookups also take the key or the enum name.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

from coordinator.control.errors import bad_request
from protocol.api import ApiKey, api_name

TopicResolver = Callable[[uuid.UUID], str | None]

API_NAMES: dict[int, str] = {int(key): api_name(key) for key in ApiKey}
_BY_NAME: dict[str, int] = {}
for _key in ApiKey:
    _BY_NAME[api_name(_key).lower()] = int(_key)
    _BY_NAME[_key.name.replace("_", "").lower()] = int(_key)


def api_key_of(api: str | int) -> int:
    """The key of an API given as Kafka's name ("OffsetCommit"), the enum name or the key."""
    if isinstance(api, bool):
        raise bad_request(f"unknown API {api!r}")
    if isinstance(api, int):
        if api in API_NAMES:
            return api
        raise bad_request(f"unknown API key {api}")
    text = api.strip()
    if text.lstrip("-").isdigit():
        return api_key_of(int(text))
    key = _BY_NAME.get(text.replace("_", "").replace("-", "").lower())
    if key is None:
        raise bad_request(f"unknown API {api!r} (Kafka's names, e.g. OffsetCommit, JoinGroup, Fetch)")
    return key


_GROUP_FIELDS = ("group_id", "groups", "groups_names", "group_ids", "coordinator_keys", "key")
_GROUP_PLANS: dict[type, tuple[str, ...]] = {}  # request class -> the group fields it has


def request_groups(request: Any) -> tuple[str, ...]:
    """The group ids a request names (FindCoordinator only for key type 0, groups)."""
    plan = _GROUP_PLANS.get(type(request))
    if plan is None:
        plan = _GROUP_PLANS[type(request)] = tuple(n for n in _GROUP_FIELDS if hasattr(request, n))
    if plan == ("group_id",):  # most group APIs: one string, no list to walk
        group = request.group_id
        return (group,) if isinstance(group, str) and group else ()
    found: list[str] = []
    for name in plan:
        value = getattr(request, name)
        if value is None:
            continue
        if name in ("key", "coordinator_keys") and getattr(request, "key_type", 0) != 0:
            continue
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v if isinstance(v, str) else getattr(v, "group_id", "") for v in value)
    return tuple(g for g in dict.fromkeys(found) if g)


def request_members(request: Any) -> tuple[str, ...]:
    """Member ids and group instance ids a request names (LeaveGroup v3+ and OffsetFetch v9+
    name them per entry)."""
    found: list[str] = []
    holders = [request, *_structs(getattr(request, "members", None)), *_structs(getattr(request, "groups", None))]
    for holder in holders:
        for name in ("member_id", "group_instance_id", "instance_id"):
            value = getattr(holder, name, None)
            if isinstance(value, str) and value:
                found.append(value)
    return tuple(dict.fromkeys(found))


def _structs(value: Any) -> Iterable[Any]:
    return [v for v in value if not isinstance(v, str)] if isinstance(value, list) else ()


# Lists of topic entries, and lists of structs that hold such lists (OffsetFetch v8+ groups,
# WriteTxnMarkers markers, AddPartitionsToTxn v4+ transactions).
_TOPIC_LISTS = ("topics", "topic_data", "v3_and_below_topics", "topic_partitions", "topic_names")
_HOLDERS = ("groups", "markers", "transactions")
_PARTITION_LISTS = ("partitions", "partition_data", "partition_indexes")
_PARTITION_INDEX = ("partition_index", "partition", "index")


def request_partitions(request: Any, resolve: TopicResolver | None = None) -> list[tuple[str | None, int | None]]:
    """(topic, partition) pairs a request names; partition None where it names a whole topic
    (Metadata, CreateTopics); topic None where it names a topic id nobody could resolve."""
    out: list[tuple[str | None, int | None]] = []
    holders = [request, *(s for name in _HOLDERS for s in _structs(getattr(request, name, None)))]
    for holder in holders:
        for list_name in _TOPIC_LISTS:
            topics = getattr(holder, list_name, None)
            if isinstance(topics, list):
                for topic in topics:
                    _add_topic(out, topic, resolve)
    return out


def _add_topic(out: list[tuple[str | None, int | None]], topic: Any, resolve: TopicResolver | None) -> None:
    if isinstance(topic, str):
        out.append((topic, None))
        return
    name = getattr(topic, "name", None) or getattr(topic, "topic", None) or getattr(topic, "topic_name", None)
    if not name:
        topic_id = getattr(topic, "topic_id", None)
        name = resolve(topic_id) if resolve is not None and isinstance(topic_id, uuid.UUID) else None
    partitions = None
    for list_name in _PARTITION_LISTS:
        partitions = getattr(topic, list_name, None)
        if partitions is not None:
            break
    if not isinstance(partitions, list):
        out.append((name, None))
        return
    for p in partitions:
        if isinstance(p, int):
            out.append((name, p))
        else:
            out.append((name, next((getattr(p, a) for a in _PARTITION_INDEX if hasattr(p, a)), None)))
