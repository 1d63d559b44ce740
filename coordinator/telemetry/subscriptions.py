"""Client-metrics subscriptions (KIP-714): the CLIENT_METRICS config resources and kgc's default.

A subscription is what Kafka's ClientMetricsConfigs validates (`metrics`: metric-name prefixes,
"*" for all; `interval.ms`: 100..3600000; `match`: `selector=regex` client selectors, all of which
must match) and ClientMetricsManager keeps as SubscriptionInfo. `Subscriptions` holds every named
one, the cluster-wide set all brokers' managers read, plus kgc's own default subscription from the
settings `client.metrics.default.metrics` / `.interval.ms` (named DEFAULT_NAME, matching every
client, never persisted nor listed as a config resource). Every change bumps `version`, which is
how a client instance learns that its subscription must be recomputed (Kafka's
subscriptionUpdateVersion). A named change is made durable by `persist` before it is served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from protocol.errors import ErrorCode

METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
NAMES = (METRICS, INTERVAL_MS, MATCH)  # ClientMetricsConfigs' ConfigDef, in its order
ALL_METRICS = "*"
INTERVAL_MS_DEFAULT = 5 * 60 * 1000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
DEFAULT_NAME = "kgc-default"  # the subscription of the client.metrics.default.* settings

# ClientMetricsConfigs' selectors: the attributes of a client instance a `match` may name.
CLIENT_INSTANCE_ID = "client_instance_id"
CLIENT_ID = "client_id"
CLIENT_SOFTWARE_NAME = "client_software_name"
CLIENT_SOFTWARE_VERSION = "client_software_version"
CLIENT_SOURCE_ADDRESS = "client_source_address"
CLIENT_SOURCE_PORT = "client_source_port"
SELECTORS = frozenset(
    {
        CLIENT_INSTANCE_ID,
        CLIENT_ID,
        CLIENT_SOFTWARE_NAME,
        CLIENT_SOFTWARE_VERSION,
        CLIENT_SOURCE_ADDRESS,
        CLIENT_SOURCE_PORT,
    }
)
DOCS = {
    METRICS: "Telemetry metric name prefix list",
    INTERVAL_MS: "Metrics push interval in milliseconds",
    MATCH: "Client match criteria",
}


class SubscriptionError(ValueError):
    """A subscription Kafka refuses: `code` is INVALID_REQUEST or INVALID_CONFIG, the text Kafka's."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Subscription:
    """ClientMetricsManager.SubscriptionInfo: one subscription, parsed."""

    name: str
    metrics: frozenset[str]
    interval_ms: int
    match: tuple[tuple[str, Any], ...] = ()  # (selector, compiled RE2 pattern)
    configs: Mapping[str, str] = field(default_factory=dict)  # as set, canonical text

    def matches(self, attributes: Mapping[str, str | None]) -> bool:
        """ClientMetricsInstanceMetadata.isMatch: no selector matches every client; otherwise
        every selector's attribute must be known and match its pattern whole."""
        for selector, pattern in self.match:
            value = attributes.get(selector)
            if value is None or pattern.fullmatch(value) is None:
                return False
        return True


def parse_list(text: str) -> list[str]:
    """ConfigDef.Type.LIST: comma-separated, trimmed; blank text is the empty list."""
    return [] if not text.strip() else [item.strip() for item in text.split(",")]


def validate(name: str, configs: Mapping[str, str]) -> dict[str, str]:
    """ClientMetricsConfigs.validate, in its order: the name, unknown configs (INVALID_REQUEST),
    values that do not parse (INVALID_CONFIG), the interval's range (INVALID_REQUEST), the match
    patterns (INVALID_CONFIG). Returns the configs as canonical text."""
    if not name:
        raise SubscriptionError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in NAMES:
            raise SubscriptionError(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    canonical = {k: ",".join(parse_list(v)) for k, v in configs.items() if k != INTERVAL_MS}
    if INTERVAL_MS in configs:
        text = configs[INTERVAL_MS]
        try:
            interval = int(text.strip())
        except ValueError:
            interval = None
        if interval is None or not -(2**31) <= interval < 2**31:
            raise SubscriptionError(
                ErrorCode.INVALID_CONFIG,
                f"Invalid value {text} for configuration {INTERVAL_MS}: Not a number of type INT",
            )
        if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
            raise SubscriptionError(
                ErrorCode.INVALID_REQUEST,
                f"Invalid value {interval} for {INTERVAL_MS}, interval must be between 100 and 3600000 (1 hour)",
            )
        canonical[INTERVAL_MS] = str(interval)
    if MATCH in configs:
        parse_match(parse_list(configs[MATCH]))
    return {k: canonical[k] for k in NAMES if k in canonical}


def parse_match(patterns: list[str]) -> tuple[tuple[str, Any], ...]:
    """ClientMetricsConfigs.parseMatchingPatterns: each `selector=regex` (split at every '=',
    so exactly one is allowed), a known selector, a regex that compiles. kgc compiles with RE2
    (as Kafka does since it moved off java.util.regex): linear time against hostile client ids."""
    parsed: dict[str, Any] = {}
    for pattern in patterns:
        parts = pattern.split("=")
        if len(parts) != 2 or parts[0].strip() not in SELECTORS:
            raise SubscriptionError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        re2, options = _re2()
        try:
            parsed[parts[0].strip()] = re2.compile(parts[1].strip(), options)
        except re2.error:
            raise SubscriptionError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}") from None
    return tuple(parsed.items())


@cache
def _re2() -> tuple[Any, Any]:
    """RE2, imported when the first match pattern is compiled (start-up does not pay for it)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2, options


def subscription(name: str, configs: Mapping[str, str]) -> Subscription:
    """A validated subscription's SubscriptionInfo; unset configs take ClientMetricsConfigs' defaults."""
    interval = int(configs.get(INTERVAL_MS, INTERVAL_MS_DEFAULT))
    match = parse_match(parse_list(configs.get(MATCH, "")))
    return Subscription(name, frozenset(parse_list(configs.get(METRICS, ""))), interval, match, dict(configs))


class Subscriptions:
    """Every subscription of the cluster (shared by the brokers' ClientMetricsManagers)."""

    def __init__(
        self,
        stored: Mapping[str, Mapping[str, str]] | None = None,
        persist: Callable[[dict[str, dict[str, str]]], None] | None = None,
        default: Subscription | None = None,
    ) -> None:
        """`stored`: the persisted CLIENT_METRICS resources; `persist(all)` makes a new set
        durable; `default`: kgc's settings-made subscription (None: off)."""
        self._persist = persist
        self._named = {name: subscription(name, validate(name, c)) for name, c in (stored or {}).items() if c}
        self._default = default
        self.version = 0

    def names(self) -> list[str]:
        """Every named subscription (ListConfigResources' CLIENT_METRICS)."""
        return sorted(self._named)

    def configs(self, name: str) -> dict[str, str]:
        found = self._named.get(name)
        return {} if found is None else dict(found.configs)

    def all(self) -> list[Subscription]:
        """What a client instance is matched against: the named ones, then kgc's default."""
        found = [self._named[n] for n in sorted(self._named)]
        return found + ([self._default] if self._default is not None else [])

    def load(self, stored: Mapping[str, Mapping[str, str]]) -> None:
        """cluster.processes: the subscriptions as another broker process persisted them (clients
        learn of a change as of any other: the version moves)."""
        named = {name: subscription(name, validate(name, c)) for name, c in stored.items() if c}
        if {n: s.configs for n, s in named.items()} != {n: s.configs for n, s in self._named.items()}:
            self._named = named
            self.version += 1

    def replace(self, name: str, configs: Mapping[str, str]) -> None:
        """ClientMetricsManager.updateSubscription: the subscription's complete new configs
        (validated by `validate`); none at all removes it. Durable first, then served."""
        updated = {n: dict(s.configs) for n, s in self._named.items() if n != name}
        if configs:
            updated[name] = dict(configs)
        elif name not in self._named:
            return  # deleting what does not exist changes nothing (and no version bump)
        new = subscription(name, configs) if configs else None
        if self._persist is not None:
            self._persist(updated)
        if new is None:
            del self._named[name]
        else:
            self._named[name] = new
        self.version += 1


def default_subscription(metrics: str, interval_ms: int) -> Subscription | None:
    """kgc's default subscription from its settings (blank metrics: none)."""
    if not metrics.strip():
        return None
    configs = validate(DEFAULT_NAME, {METRICS: metrics, INTERVAL_MS: str(interval_ms)})
    return subscription(DEFAULT_NAME, configs)
