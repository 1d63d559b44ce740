"""Subscription regexes with RE2 semantics (KIP-848; Kafka compiles them with RE2/J).

RE2 (google-re2, the official binding of the C++ library Kafka's RE2/J ports) instead of Python's
`re`: the same syntax (no backreferences or lookaround, Perl classes, `(?i)` flags) and
linear-time matching, so a member cannot stall the coordinator with a pathological pattern and a
pattern Kafka rejects is rejected here. A topic matches when the whole name matches
(Matcher.matches). Error texts come from RE2, not RE2/J, so they may be worded differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from coordinator.groups.consumer.errors import ConsumerGroupError
from protocol.errors import ErrorCode


class InvalidRegex(ValueError):
    pass


@cache
def _re2() -> tuple[Any, Any]:
    """(the re2 module, its options), imported on first use: most servers never see a regex
    subscription, and the import costs start-up tens of milliseconds."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern on stderr
    return re2, options


def compile_regex(regex: str) -> Any:
    re2, options = _re2()
    try:
        return re2.compile(regex, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise InvalidRegex(str(detail)) from None


def throw_if_invalid(regex: str) -> None:
    """Kafka Utils.throwIfRegularExpressionIsInvalid."""
    try:
        compile_regex(regex)
    except InvalidRegex as exc:
        raise ConsumerGroupError(
            ErrorCode.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.",
        ) from None


def resolve(regexes: Iterable[str], topic_names: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each regex -> the topic names it fully matches (Kafka refreshRegularExpressions). A regex
    that does not compile (it was validated when a member sent it) matches nothing."""
    compiled = []
    result: dict[str, set[str]] = {}
    for regex in regexes:
        result[regex] = set()
        try:
            compiled.append((regex, compile_regex(regex)))
        except InvalidRegex:
            pass
    for name in topic_names:
        for regex, pattern in compiled:
            if pattern.fullmatch(name) is not None:
                result[regex].add(name)
    return {regex: frozenset(names) for regex, names in result.items()}
