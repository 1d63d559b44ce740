"""Group types as data: what the timeline page and the live page know about each kind of group.

One row per type (Kafka's GroupType: classic, consumer, share): a label, its state machine in
order with a colour per state, the states that are a rebalance, and the APIs only its members
send. The pages draw from this table
alone, so a new type is a new row here. `group_type(events)` decides a transcript group's type:
the `group_type` a transition names if the writer gives one, else states only one type has, else
the APIs its requests used (the most specific type first), else classic (a group that only
commits offsets is a classic group in Kafka too).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

GROUP_TYPES: dict[str, dict[str, Any]] = {
    "classic": {
        "label": "classic group",
        "colour": "#4e6a87",
        "states": {
            "Empty": "#c3c8ce",
            "PreparingRebalance": "#f2b33d",
            "CompletingRebalance": "#86b2ee",
            "Stable": "#72c285",
            "Dead": "#5f656c",
        },
        "apis": ["JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"],
        "rebalancing": ["PreparingRebalance", "CompletingRebalance"],
    },
    "consumer": {  # KIP-848 (ConsumerGroup.ConsumerGroupState)
        "label": "consumer group (KIP-848)",
        "colour": "#17868a",
        "states": {
            "Empty": "#c3c8ce",
            "Assigning": "#b79ce6",
            "Reconciling": "#86b2ee",
            "Stable": "#72c285",
            "Dead": "#5f656c",
        },
        "apis": ["ConsumerGroupHeartbeat", "ConsumerGroupDescribe"],
        "rebalancing": ["Assigning", "Reconciling"],
    },
    "share": {  # KIP-932 (ShareGroup.ShareGroupState)
        "label": "share group (KIP-932)",
        "colour": "#a3541d",
        "states": {"Empty": "#c3c8ce", "Stable": "#72c285", "Dead": "#5f656c"},
        "apis": ["ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge"],
        "rebalancing": [],
    },
}
_BY_API = ("share", "consumer", "classic")  # the most specific first: a consumer group may have classic members


def group_type(events: Iterable[dict[str, Any]]) -> str:
    """The type of the group whose events these are (see the module docstring)."""
    states: set[str] = set()
    apis: set[str] = set()
    for e in events:
        if e["type"] == "transition":
            if e.get("group_type") in GROUP_TYPES:
                return str(e["group_type"])
            states.update(str(e.get(end)) for end in ("from", "to"))
        elif e["type"] in ("request", "response"):
            apis.add(str(e.get("api")))
    distinctive = [name for name, kind in GROUP_TYPES.items() if states & (kind["states"].keys() - _shared(name))]
    if len(distinctive) == 1:
        return distinctive[0]
    for name in _BY_API:
        if apis & set(GROUP_TYPES[name]["apis"]):
            return name
    return "classic"


def _shared(name: str) -> set[str]:
    """The states of `name` that another type has too (they cannot tell the type)."""
    return {s for other, kind in GROUP_TYPES.items() if other != name for s in kind["states"]}
