"""FaultRules: the installed fault rules, and the one question the dispatcher asks per request.

The dispatcher checks `rules.active` (a plain bool) before anything else, so a server with no
rule pays one attribute read per request. With rules, `match(info)` looks up the rules for the
request's API key in an index rebuilt on every change (rules for any API are in every entry),
and evaluates them in the order they were added; the first one whose conditions all hold acts
and the rest are not consulted. A rule that ends (count, FIFO errors used up, time) stays
listed with its hits until removed, but leaves the index.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.control.errors import not_found
from coordinator.control.fault_spec import ANY_API, CompiledRule, FaultSpec, compile_rule
from coordinator.control.request_fields import (
    API_NAMES,
    TopicResolver,
    request_groups,
    request_members,
    request_partitions,
)
from coordinator.runtime.clock import Clock
from protocol.api import SUPPORTED_VERSIONS

GroupStateOf = Callable[[str], str | None]


class RequestInfo:
    """One request as rules see it. Groups, members and partitions are extracted on first use,
    and the group state is asked (through `group_state`) only when a rule names a state."""

    __slots__ = (
        "api_key",
        "version",
        "broker",
        "client_id",
        "connection_id",
        "request",
        "group_state",
        "resolve_topic",
        "_groups",
        "_members",
        "_partitions",
    )

    def __init__(
        self,
        api_key: int,
        version: int,
        broker: int,
        client_id: str,
        connection_id: int,
        request: Any,
        group_state: GroupStateOf | None = None,
        resolve_topic: TopicResolver | None = None,
    ) -> None:
        self.api_key = api_key
        self.version = version
        self.broker = broker
        self.client_id = client_id
        self.connection_id = connection_id
        self.request = request
        self.group_state = group_state
        self.resolve_topic = resolve_topic
        self._groups: tuple[str, ...] | None = None
        self._members: tuple[str, ...] | None = None
        self._partitions: list[tuple[str | None, int | None]] | None = None

    @property
    def groups(self) -> tuple[str, ...]:
        if self._groups is None:
            self._groups = request_groups(self.request)
        return self._groups

    @property
    def members(self) -> tuple[str, ...]:
        if self._members is None:
            self._members = request_members(self.request)
        return self._members

    @property
    def partitions(self) -> list[tuple[str | None, int | None]]:
        if self._partitions is None:
            self._partitions = request_partitions(self.request, self.resolve_topic)
        return self._partitions


@dataclass(frozen=True, slots=True)
class Decision:
    """What the dispatcher does with one request (see docs/control-plane.md, "Dispatcher")."""

    rule_id: int
    error_code: int | None = None  # answer with this code (error_responses) instead of applying
    delay_ms: int = 0  # hold the response (or the error answer) this long
    drop_response: bool = False  # apply, then send nothing
    close_before: bool = False  # close the connection without applying
    close_after: bool = False  # apply, then close instead of answering
    throttle_ms: int | None = None  # set the response's throttle_time_ms

    @property
    def applies(self) -> bool:
        """True when the handler runs (the request takes effect)."""
        return self.error_code is None and not self.close_before


@dataclass(frozen=True, slots=True)
class FaultView:
    id: int
    rule: dict[str, Any]  # the spec's fields that were set
    api: str | None  # Kafka's name of the API it matches, None for every API
    hits: int  # requests it acted on
    matched: int  # requests that met every condition (more than hits while nth skips)
    remaining: int | None  # actions left before it ends; None: until removed or until_ms
    until_ms: int | None
    active: bool


@dataclass(frozen=True, slots=True)
class _ApiRules:
    """The live rules for one API key, in the order they were added: those without a group
    condition, and those with one by group (so 100 rules for other groups cost one lookup)."""

    general: tuple[CompiledRule, ...]
    by_group: dict[str, tuple[CompiledRule, ...]]


class FaultRules:
    def __init__(
        self,
        clock: Clock,
        served: Mapping[int, tuple[int, int]] | None = None,
        node_ids: Callable[[], Collection[int]] | None = None,
    ) -> None:
        self._clock = clock
        self._served = {int(k): v for k, v in (served or SUPPORTED_VERSIONS).items()}
        self._node_ids = node_ids
        self._rules: dict[int, CompiledRule] = {}
        self._ids = itertools.count(1)
        self._index: dict[int, _ApiRules] = {}
        self.active = False  # any live rule: the dispatcher's only check when there is none

    # -- changes ---------------------------------------------------------------------------------
    def add(self, spec: FaultSpec) -> int:
        """Validate and install a rule; returns its id. ControlError(400) says what is wrong."""
        rule = compile_rule(next(self._ids), spec, self._clock.time_ms(), self._served, self._node_ids)
        self._rules[rule.id] = rule
        self._reindex()
        return rule.id

    def remove(self, rule_id: int) -> None:
        if self._rules.pop(rule_id, None) is None:
            raise not_found(f"no fault rule {rule_id}")
        self._reindex()

    def clear(self) -> int:
        removed = len(self._rules)
        self._rules.clear()
        self._reindex()
        return removed

    def wants(self, api_key: int) -> bool:
        """True when some live rule may match this API (lets a caller skip building the info)."""
        return api_key in self._index

    def list(self) -> list[FaultView]:
        self._expire_by_time()
        return [_view(rule) for rule in self._rules.values()]

    def _reindex(self) -> None:
        live = [r for r in self._rules.values() if r.active]
        keys = set(API_NAMES) if any(r.api_key == ANY_API for r in live) else {r.api_key for r in live}
        index: dict[int, _ApiRules] = {}
        for key in keys:
            rules = [r for r in live if r.api_key in (key, ANY_API)]
            by_group: dict[str, list[CompiledRule]] = {}
            for r in rules:
                if r.group is not None:
                    by_group.setdefault(r.group, []).append(r)
            index[key] = _ApiRules(
                tuple(r for r in rules if r.group is None), {g: tuple(rs) for g, rs in by_group.items()}
            )
        self._index = index
        self.active = bool(index)

    def _end(self, rule: CompiledRule) -> None:
        rule.active = False
        self._reindex()

    def _expire_by_time(self) -> None:
        now = self._clock.time_ms()
        for rule in self._rules.values():
            if rule.active and rule.until_ms is not None and now >= rule.until_ms:
                self._end(rule)

    # -- the per-request question ----------------------------------------------------------------
    def match(self, info: RequestInfo) -> Decision | None:
        entry = self._index.get(info.api_key)
        if entry is None:
            return None
        rules = entry.general
        if entry.by_group:  # rules naming a group are looked up by the request's groups
            grouped = [r for g in info.groups for r in entry.by_group.get(g, ())]
            if grouped:
                rules = tuple(sorted((*rules, *grouped), key=_rule_id))
        version, broker, client_id = info.version, info.broker, info.client_id
        for rule in rules:
            # The cheap conditions inline; groups, members, topics and the state in _matches.
            if version < rule.min_version or version > rule.max_version:
                continue
            if rule.broker is not None and rule.broker != broker:
                continue
            if rule.client_id is not None and rule.client_id != client_id:
                continue
            if rule.until_ms is not None and self._clock.time_ms() >= rule.until_ms:
                self._end(rule)
                continue
            if rule.deep and not _matches(rule, info):
                continue
            rule.matched += 1
            if rule.matched < rule.nth:
                continue
            return self._act(rule)
        return None

    def _act(self, rule: CompiledRule) -> Decision:
        rule.hits += 1
        code = rule.error
        if rule.errors is not None:
            code = rule.errors.pop(0) or None  # NONE in the FIFO lets this one request through
        if rule.remaining is not None:
            rule.remaining -= 1
            if rule.remaining <= 0:
                self._end(rule)
        return Decision(
            rule.id, code, rule.delay_ms, rule.drop_response, rule.close_before, rule.close_after, rule.throttle_ms
        )


def _matches(rule: CompiledRule, info: RequestInfo) -> bool:
    """The conditions that look inside the request; the group state is asked last."""
    if rule.group is not None and rule.group not in info.groups:
        return False
    if rule.member is not None and rule.member not in info.members:
        return False
    if rule.topic is not None and not any(
        t == rule.topic and (rule.partition is None or p == rule.partition) for t, p in info.partitions
    ):
        return False
    if rule.group_state is not None:
        groups = (rule.group,) if rule.group is not None else info.groups
        if info.group_state is None or not groups:
            return False
        state = info.group_state(groups[0])
        if state is None or state.lower() != rule.group_state:
            return False
    return True


def _rule_id(rule: CompiledRule) -> int:
    return rule.id


def _view(rule: CompiledRule) -> FaultView:
    return FaultView(
        rule.id,
        rule.spec.to_json(),
        None if rule.api_key == ANY_API else API_NAMES[rule.api_key],
        rule.hits,
        rule.matched,
        rule.remaining,
        rule.until_ms,
        rule.active,
    )
