"""Kafka's `sasl.jaas.config` values: `LoginModule flag key="value" ...;`, as JaasConfig reads them.

A value names one or more login modules, each with a control flag (required, requisite,
sufficient, optional) and options; quoted values may hold spaces, `;` and escaped quotes. The
broker uses the options of the module for the mechanism: PlainLoginModule's `user_NAME` entries
(the PLAIN users and passwords), OAuthBearerLoginModule's `unsecuredValidator*` options. The
parsed options hold secrets: nothing here logs or prints them, and errors name positions only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_FLAGS = ("required", "requisite", "sufficient", "optional")
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


class JaasError(ValueError):
    """A sasl.jaas.config value that does not parse; the text never quotes option values."""


@dataclass(frozen=True, slots=True)
class LoginModule:
    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict, repr=False)  # secrets: never in a repr


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, quoted) pairs; '=' and ';' are tokens of their own."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "=;":
            out.append((ch, False))
            i += 1
        elif ch == '"':
            i += 1
            value = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                value.append(text[i])
                i += 1
            if i >= n:
                raise JaasError("sasl.jaas.config: a quoted value is not closed")
            i += 1
            out.append(("".join(value), True))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in '=;"':
                i += 1
            out.append((text[start:i], False))
    return out


def parse_jaas(text: str) -> list[LoginModule]:
    tokens = _tokens(text)
    modules: list[LoginModule] = []
    i = 0
    while i < len(tokens):
        if len(tokens) - i < 2 or tokens[i][1]:
            raise JaasError("sasl.jaas.config: expected `LoginModule flag key=value ...;`")
        name, flag = tokens[i][0], tokens[i + 1][0].lower()
        if flag not in _FLAGS:
            raise JaasError(f"sasl.jaas.config: login module flag must be one of {', '.join(_FLAGS)}")
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i] != (";", False):
            if i + 2 >= len(tokens):
                raise JaasError(f"sasl.jaas.config: option {tokens[i][0]!r} of {name} has no value or `;` is missing")
            key, eq, value = tokens[i], tokens[i + 1], tokens[i + 2]
            if eq != ("=", False) or key[1] or value in ((";", False), ("=", False)):
                raise JaasError(f"sasl.jaas.config: expected key=value in the options of {name}")
            options[key[0]] = value[0]
            i += 3
        if i >= len(tokens):
            raise JaasError(f"sasl.jaas.config: the options of {name} must end with `;`")
        i += 1  # the ';'
        modules.append(LoginModule(name, flag, options))
    if not modules:
        raise JaasError("sasl.jaas.config: no login module")
    return modules


def plain_users(modules: list[LoginModule]) -> dict[str, str]:
    """PlainLoginModule's `user_NAME="PASSWORD"` options: name -> password."""
    users: dict[str, str] = {}
    for module in modules:
        for key, value in module.options.items():
            if key.startswith("user_"):
                users[key[len("user_") :]] = value
    return users
