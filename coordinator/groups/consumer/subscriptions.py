"""Subscription bookkeeping shared by the group model and the heartbeat (Kafka SubscriptionCount,
Utils.incValue/decValue, ConsumerGroup.subscriptionType).

A topic is subscribed by name (members listing it) and/or by regex (resolved regexes matching
it); a count that drops to zero removes the entry, as Java's Map.compute with a null result does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from coordinator.groups.assignors.spec import SubscriptionType


@dataclass(frozen=True, slots=True)
class SubscriptionCount:
    by_name: int = 0
    by_regex: int = 0


def inc_name(c: SubscriptionCount | None) -> SubscriptionCount:
    return SubscriptionCount(1, 0) if c is None else SubscriptionCount(c.by_name + 1, c.by_regex)


def dec_name(c: SubscriptionCount | None) -> SubscriptionCount | None:
    if c is None or (c.by_name == 1 and c.by_regex == 0):
        return None
    return SubscriptionCount(c.by_name - 1, c.by_regex)


def inc_regex(c: SubscriptionCount | None) -> SubscriptionCount:
    return SubscriptionCount(0, 1) if c is None else SubscriptionCount(c.by_name, c.by_regex + 1)


def dec_regex(c: SubscriptionCount | None) -> SubscriptionCount | None:
    if c is None or (c.by_regex == 1 and c.by_name == 0):
        return None
    return SubscriptionCount(c.by_name, c.by_regex - 1)


def inc_value(v: int | None) -> int:
    return 1 if v is None else v + 1


def dec_value(v: int | None) -> int | None:
    return None if v is None or v == 1 else v - 1


def subscription_type(
    regexes: Mapping[str, int], names: Mapping[str, SubscriptionCount], num_members: int
) -> SubscriptionType:
    """Kafka ConsumerGroup.subscriptionType: homogeneous when every member subscribes to the same
    topics by name, or every member to one single regex and nothing by name."""
    if not regexes:
        for count in names.values():
            if count.by_name != num_members:
                return SubscriptionType.HETEROGENEOUS
        return SubscriptionType.HOMOGENEOUS
    first = next(iter(regexes.values()))
    if first == num_members:
        for count in names.values():
            if count.by_regex != 1 or count.by_name > 0:
                return SubscriptionType.HETEROGENEOUS
        return SubscriptionType.HOMOGENEOUS
    return SubscriptionType.HETEROGENEOUS


def compute(counts: MutableMapping[Any, Any], key: Any, step: Callable[[Any], Any]) -> None:
    """Java Map.compute(key, step): store the new value, or drop the key when it is None."""
    value = step(counts.get(key))
    if value is None:
        counts.pop(key, None)
    else:
        counts[key] = value
