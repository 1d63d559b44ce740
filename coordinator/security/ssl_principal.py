"""ssl.principal.mapping.rules: a client certificate's DN -> the user name, as Kafka's
SslPrincipalMapper maps it.

Rules, comma-separated, tried in order: `DEFAULT` (the whole DN, RFC 2253 form) or
`RULE:pattern/replacement/[L|U]`: when the Java-style regex matches the whole DN, every match is
replaced (`$1` back-references, `\\` escapes) and the result lower- or upper-cased. No rule that
applies: the connection has no principal and is refused (Kafka's NoMatchingRule). A malformed rule
is an error at start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)


class MappingRuleError(ValueError):
    """A rule of ssl.principal.mapping.rules that does not parse."""


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "L", "U" or ""

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        parts = _replacement(self.replacement, self.pattern.groups)
        result = self.pattern.sub(lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts), dn)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result


def _replacement(text: str, groups: int) -> list[str | int]:
    """Java's Matcher.appendReplacement syntax (`\\x` a literal x, `$n` group n, as many digits as
    make a group that exists), with Kafka's rule that a `$n` naming no group is literal text."""
    parts: list[str | int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            parts.append(text[i + 1])
            i += 2
        elif ch == "$" and i + 1 < len(text) and text[i + 1].isdigit() and 0 < int(text[i + 1]) <= groups:
            j, number = i + 2, int(text[i + 1])
            while j < len(text) and text[j].isdigit() and number * 10 + int(text[j]) <= groups:
                number, j = number * 10 + int(text[j]), j + 1
            parts.append(number)
            i = j
        else:
            parts.append(ch)
            i += 1
    return parts


class PrincipalMapper:
    def __init__(self, rules: str) -> None:
        self.rules: list[_Rule] = []
        for match in _SPLITTER.finditer(rules.strip()):
            rule = match.group(1)
            parsed = _PARSER.match(rule)
            if parsed is None or parsed.end() != len(rule):
                raise MappingRuleError(f"ssl.principal.mapping.rules: invalid rule `{rule}`")
            if parsed.group(1) is not None:
                self.rules.append(_Rule(None))
            elif parsed.group(2) is not None:
                try:
                    pattern = re.compile(parsed.group(2))
                except re.error as exc:
                    raise MappingRuleError(f"ssl.principal.mapping.rules: `{rule}`: {exc}") from None
                self.rules.append(_Rule(pattern, parsed.group(4), parsed.group(6)))
            if match.end() >= len(rules.strip()):
                break

    def name(self, dn: str) -> str | None:
        """The user name for `dn`, or None when no rule applies."""
        for rule in self.rules:
            found = rule.apply(dn)
            if found is not None:
                return found
        return None
