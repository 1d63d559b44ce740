"""The listeners a broker serves, from Kafka's settings, and what each one asks of a connection.

`listener_plans(config, ...)` reads `listeners`, `listener.security.protocol.map`,
`advertised.listeners`, `inter.broker.listener.name` and `controller.listener.names` (empty
`listeners`: one PLAINTEXT listener on host:port, kgc's default). The first listener (the
inter-broker one, else the first) binds `host:port`; the others bind their own port, or a free one
when `port` is 0 (tests), and broker i of `--brokers N` binds port + i on each. Each plan carries
its security: a TLS context (SSL, SASL_SSL: ssl_context.py) and the SASL settings (SASL_PLAINTEXT,
SASL_SSL): the enabled mechanisms, PLAIN users from the JAAS config, the OAUTHBEARER validator
options, the KIP-368 session lifetime per mechanism, the failed-authentication delay and the
largest frame before authentication. Anything kgc cannot serve is a `SecurityConfigError` at start.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coordinator.config import ConfigError
from coordinator.security.sasl import OAUTHBEARER, PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, SERVED_MECHANISMS
from coordinator.security.stats import SecurityStats
from coordinator.server_properties import (
    ANY_ADDRESS,
    Entry,
    PropertiesError,
    parse_listeners,
    primary_listener,
    protocol_map,
)

if TYPE_CHECKING:  # the mechanisms and parsers load only when a listener uses them (start-up time)
    from coordinator.security.credentials import CredentialStore
    from coordinator.security.oauthbearer import ValidatorOptions
    from coordinator.security.sasl import SaslServer
    from coordinator.security.ssl_principal import PrincipalMapper


class SecurityConfigError(ConfigError):
    """A listener or security setting kgc cannot serve; the text says which and why."""


@dataclass(slots=True)
class SaslConfig:
    """One SASL listener's authentication settings (Kafka's SaslServerAuthenticator inputs)."""

    mechanisms: tuple[str, ...]
    plain_users: dict[str, str] = field(repr=False)
    oauth: ValidatorOptions
    reauth_ms: dict[str, int]  # mechanism -> connections.max.reauth.ms (0: no session lifetime)
    failed_delay_ms: int
    max_receive_size: int
    credentials: CredentialStore
    now_ms: Callable[[], int]

    def server(self, mechanism: str) -> SaslServer:
        if mechanism == PLAIN:
            from coordinator.security.plain import PlainServer

            return PlainServer(self.plain_users)
        if mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
            from coordinator.security.scram import ScramServer

            credentials = self.credentials
            return ScramServer(mechanism, lambda user: credentials.lookup(user, mechanism))
        from coordinator.security.oauthbearer import OAuthBearerServer

        return OAuthBearerServer(self.oauth, self.now_ms)


@dataclass(slots=True)
class ListenerPlan:
    name: str  # the listener name ("PLAINTEXT", "SASL_SSL", "EXTERNAL", ...)
    protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    bind_host: str
    port: int  # broker 0's port (0: a free one)
    advertised_host: str | None
    ssl_context: ssl.SSLContext | None = None
    client_auth: str = "none"
    principal_mapper: PrincipalMapper | None = None  # ssl.principal.mapping.rules (TLS listeners)
    sasl: SaslConfig | None = None
    stats: SecurityStats = field(default_factory=SecurityStats)
    primary: bool = False
    # The open connections of this listener: id -> host, principal, mechanism (the control plane's
    # snapshot and the live page show them; never a credential).
    connections: dict[int, dict[str, Any]] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        return {
            "listener": self.name,
            "protocol": self.protocol,
            "stats": self.stats.as_dict(),
            "connections": [{"connection": cid, **seen} for cid, seen in sorted(self.connections.items())],
        }

    def port_for(self, broker_index: int) -> int:
        return self.port + broker_index if self.port else 0


def listener_plans(config: Any, credentials: CredentialStore, now_ms: Callable[[], int]) -> list[ListenerPlan]:
    if not config.listeners:
        return [ListenerPlan("PLAINTEXT", "PLAINTEXT", config.host, config.port, None, primary=True)]
    try:
        every = parse_listeners(Entry("listeners", config.listeners))
        protocols = protocol_map(config.listener_security_protocol_map)
        controllers = {n.strip().upper() for n in config.controller_listener_names.split(",") if n.strip()}
        inter = config.inter_broker_listener_name.strip().upper() or None
        served = primary_listener(every, protocols, controllers, inter, "")
        advertised = {
            a.name: a.host
            for a in (
                parse_listeners(Entry("advertised.listeners", config.advertised_listeners))
                if config.advertised_listeners
                else []
            )
            if a.host not in ANY_ADDRESS
        }
    except PropertiesError as exc:
        raise SecurityConfigError(str(exc)) from None
    plans = []
    for i, address in enumerate(served):
        protocol = protocols[address.name]
        if i == 0:
            host, port = config.host, config.port
        else:
            host = config.host if address.host in ANY_ADDRESS else address.host
            port = address.port if config.port else 0
        plan = ListenerPlan(address.name, protocol, host, port, advertised.get(address.name), primary=i == 0)
        if protocol in ("SSL", "SASL_SSL"):
            from coordinator.security.ssl_context import server_context  # the ssl module only when used

            plan.client_auth = config.for_listener(address.name, "ssl.client.auth")
            plan.ssl_context = server_context(config, address.name)
            from coordinator.security.ssl_principal import MappingRuleError, PrincipalMapper

            try:
                plan.principal_mapper = PrincipalMapper(
                    config.for_listener(address.name, "ssl.principal.mapping.rules")
                )
            except MappingRuleError as exc:
                raise SecurityConfigError(f"listener {address.name}: {exc}") from None
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            plan.sasl = _sasl_config(config, address.name, credentials, now_ms)
        plans.append(plan)
    used = [p.port for p in plans if p.port]
    if len(used) != len(set(used)) or any(a != b and a <= b < a + config.cluster_brokers for a in used for b in used):
        raise SecurityConfigError(
            f"listener ports {', '.join(map(str, used))} overlap: each broker of {config.cluster_brokers} "
            "binds every listener's port + its index"
        )
    return plans


def _sasl_config(config: Any, listener: str, credentials: CredentialStore, now_ms: Callable[[], int]) -> SaslConfig:
    from coordinator.security.jaas import JaasError, parse_jaas, plain_users
    from coordinator.security.oauthbearer import ValidatorOptions

    names = [
        m.strip().upper() for m in config.for_listener(listener, "sasl.enabled.mechanisms").split(",") if m.strip()
    ]
    unknown = [m for m in names if m not in SERVED_MECHANISMS]
    if unknown or not names:
        raise SecurityConfigError(
            f"listener {listener}: kgc serves the SASL mechanisms {', '.join(SERVED_MECHANISMS)}, not "
            f"{', '.join(unknown) or 'none'}: set sasl.enabled.mechanisms "
            f"(or listener.name.{listener.lower()}.sasl.enabled.mechanisms)"
        )
    users: dict[str, str] = {}
    oauth = ValidatorOptions()
    for mechanism in names:
        text = config.for_listener(listener, "sasl.jaas.config", mechanism)
        if mechanism == PLAIN:
            if not text:
                raise SecurityConfigError(
                    f"listener {listener}: PLAIN needs users: set "
                    f"listener.name.{listener.lower()}.plain.sasl.jaas.config "
                    'to org.apache.kafka.common.security.plain.PlainLoginModule required user_NAME="PASSWORD";'
                )
            try:
                users = plain_users(parse_jaas(text))
            except JaasError as exc:
                raise SecurityConfigError(f"listener {listener} (PLAIN): {exc}") from None
        elif mechanism == OAUTHBEARER and text:
            try:
                modules = parse_jaas(text)
                oauth = ValidatorOptions.from_jaas(modules[0].options)
            except (JaasError, ValueError) as exc:
                raise SecurityConfigError(f"listener {listener} (OAUTHBEARER): {exc}") from None
    return SaslConfig(
        mechanisms=tuple(names),
        plain_users=users,
        oauth=oauth,
        reauth_ms={m: int(config.for_listener(listener, "connections.max.reauth.ms", m)) for m in names},
        failed_delay_ms=config.connection_failed_authentication_delay_ms,
        max_receive_size=config.for_listener(listener, "sasl.server.max.receive.size"),
        credentials=credentials,
        now_ms=now_ms,
    )
