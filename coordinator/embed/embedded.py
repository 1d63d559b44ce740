"""Run a coordinator from Python: in this trio program, or in a background thread for any program.

    with EmbeddedServer(topics={"orders": 3}) as server:    # sync code, asyncio code, any client
        consumer = Consumer({"bootstrap.servers": server.bootstrap, ...})

    async with open_server(topics={"orders": 3}) as server:  # inside trio
        ...

Both bind loopback on a free port unless told otherwise (`brokers=N`: N brokers, each on its own
free port; `bootstrap` lists them all). A data dir is created in a temporary directory and removed
afterwards unless one is given (it must be empty, new, or kgc's own: see coordinator/datadir.py).
`stop()`, `start()` and `restart()` (stop, then start on the same data dir and ports) show that
state survives; while stopped, calls that need the server raise `CoordinatorStopped`.
`create_topic` creates a missing topic and grows an existing one to a larger count (CreatePartitions'
rules: fewer partitions than it has is refused).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from coordinator.admin.partitions import create_partitions
from coordinator.config import Config, canonical_name
from coordinator.control.facade import Control, thread_call
from coordinator.datadir import check_partition_cap
from coordinator.embed.security import SecurityOptions
from coordinator.server import Server, serve

if TYPE_CHECKING:
    from coordinator.security.certs import CertFiles

START_TIMEOUT_SECONDS = 30


class CoordinatorStopped(RuntimeError):
    """The embedded coordinator is not running (never started, or stopped)."""


class CoordinatorStartError(RuntimeError):
    """The coordinator did not start; the message is the cause's own (a refused data dir, a bad
    setting, a port in use), the cause is chained."""


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _config(
    data_dir: Path, host: str, port: int, settings: Mapping[str, Any] | None, brokers: int | None = None
) -> Config:
    # The control plane is on in process (`.control`), without its HTTP port unless asked for.
    fixed: dict[str, Any] = {"data.dir": str(data_dir), "host": host, "port": port, "control.enable": True}
    if brokers is not None:  # else settings may carry cluster.brokers
        fixed["cluster.brokers"] = brokers
    return Config({**(settings or {}), **fixed})


@asynccontextmanager
async def open_server(
    data_dir: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    settings: Mapping[str, Any] | None = None,
    topics: Mapping[str, int] | None = None,
    brokers: int | None = None,
    security: SecurityOptions | None = None,
    certs: CertFiles | None = None,
) -> AsyncIterator[Server]:
    """`security`: one secured listener (coordinator/embed/security.py), with `certs` (made in
    the data dir's parent when TLS needs them and none are given)."""
    temp = None if data_dir is not None else tempfile.mkdtemp(prefix="kgc-")
    certs_temp = None
    try:
        directory = Path(data_dir or temp)  # type: ignore[arg-type]
        if security is not None:
            if certs is None and security.tls:
                certs_temp = tempfile.mkdtemp(prefix="kgc-certs-")
                certs = security.make_certs(Path(certs_temp))
            settings = {**security.settings(certs), **(settings or {})}
        config = _config(directory, host, port, settings, brokers)
        async with trio.open_nursery() as nursery:
            server: Server = await nursery.start(serve, config, dict(topics or {}))
            if security is not None and server.security is not None:
                security.add_scram_users(server.security.credentials)
            try:
                yield server
            finally:
                server.stop()
    finally:
        for made in (temp, certs_temp):
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)


class EmbeddedServer:
    """A coordinator on its own thread with its own trio loop."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        settings: Mapping[str, Any] | None = None,
        topics: Mapping[str, int] | None = None,
        brokers: int | None = None,
        security: SecurityOptions | None = None,
    ) -> None:
        """`security`: one TLS and/or SASL listener (coordinator/embed/security.py); `.certs`
        holds the throwaway certificates it made, `client_settings(user)` a client's settings."""
        self._temp = None if data_dir is not None else tempfile.mkdtemp(prefix="kgc-")
        self._brokers = brokers
        self._ports: list[int] | None = None  # fixed by the first start, kept by restarts
        self.data_dir = Path(data_dir or self._temp)  # type: ignore[arg-type]
        self._host, self._port = host, port
        # Keys as kgc names them: `group_max_size` and `group.max.size` are the same setting.
        self._settings = {canonical_name(k) or k: v for k, v in (settings or {}).items()}
        self.security = security
        self.certs: CertFiles | None = None
        self._certs_temp: str | None = None
        if security is not None:
            if security.tls:
                self._certs_temp = tempfile.mkdtemp(prefix="kgc-certs-")
                self.certs = security.make_certs(Path(self._certs_temp))
            self._settings = {**security.settings(self.certs), **self._settings}
        self._config: Config | None = None
        self._topics = dict(topics or {})
        self._thread: threading.Thread | None = None
        self._server: Server | None = None
        self.control: Control | None = None  # fault rules, brokers, clock, requests (coordinator/control)
        self._token: trio.lowlevel.TrioToken | None = None
        self._error: BaseException | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> EmbeddedServer:
        if self._thread is not None:
            raise RuntimeError("the coordinator is already running (restart() stops it first)")
        started = threading.Event()
        config = self._config = _config(self.data_dir, self._host, self._port, self._settings, self._brokers)

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                server = await nursery.start(partial(serve, config, self._topics, ports=self._ports))
                if self.security is not None and server.security is not None:
                    self.security.add_scram_users(server.security.credentials)
                self._server = server
                started.set()

        def run() -> None:
            try:
                trio.run(main)
            except BaseException as exc:  # reported to the starting thread
                self._error = exc
            finally:
                started.set()

        self._error = None
        self._thread = threading.Thread(target=run, name="kgc-server", daemon=True)
        self._thread.start()
        if not started.wait(START_TIMEOUT_SECONDS) or self._server is None:
            self._thread.join(START_TIMEOUT_SECONDS)
            self._thread = None
            if self._error is None:
                raise CoordinatorStartError(f"the coordinator did not start within {START_TIMEOUT_SECONDS} s")
            cause = next((e for e in _leaves(self._error) if not isinstance(e, trio.Cancelled)), self._error)
            raise CoordinatorStartError(str(cause) or repr(cause)) from cause
        self._port = self._server.port  # a restart reuses the same ports
        self._ports = [b.advertised_port for b in self._server.brokers]
        assert self._server.control is not None and self._token is not None
        self.control = Control(self._server.control, thread_call(self._token))
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        if self._server is not None and self._token is not None:
            try:
                trio.from_thread.run_sync(self._server.stop, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        self._thread.join(START_TIMEOUT_SECONDS)
        self._thread, self._server, self._token = None, None, None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        for made in (self._temp, self._certs_temp):
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what tests use ----------------------------------------------------------------------------
    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def bootstrap(self) -> str:
        """Every broker, as a client's bootstrap.servers list."""
        return ",".join(f"{self._host}:{port}" for port in self._ports or [self._port])

    @property
    def brokers(self) -> list[tuple[int, str, int]]:
        """(node id, host, port) of each broker."""
        return [(b.node_id, b.advertised_host, b.advertised_port) for b in self._require("brokers").brokers]

    def client_settings(
        self, user: str | None = None, password: str | None = None, mechanism: str = "PLAIN"
    ) -> dict[str, str]:
        """A librdkafka-style client's settings for this server (bootstrap, security, user)."""
        found = {"bootstrap.servers": self.bootstrap}
        if self.security is not None:
            found.update(self.security.client_settings(self.certs, user, password, mechanism))
        return found

    @property
    def control_url(self) -> str | None:
        """The HTTP control API's address (control.port set), else None."""
        return self._require().control_url

    @property
    def settings(self) -> dict[str, Any]:
        """The settings given at construction, by kgc's names (the rest are defaults)."""
        return dict(self._settings)

    @property
    def config(self) -> Config:
        """The resolved settings of the last start (defaults included)."""
        if self._config is None:
            raise CoordinatorStopped("the coordinator was never started: config needs start() first")
        return self._config

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def transcript(self) -> Path | None:
        """The transcript file, if `transcript.file` is set."""
        path = self._settings.get("transcript.file")
        return Path(path) if path else None

    def create_topic(self, name: str, partitions: int) -> None:
        """Creates the topic if it is missing and grows an existing one to `partitions` (as
        CreatePartitions does: its groups rebalance onto the new partitions); an existing topic
        with more partitions is refused (ValueError: topics never shrink)."""
        server = self._require(f"create_topic({name!r}, {partitions})")

        def create() -> None:
            existing = server.broker.topics.get(name)
            if existing is not None:
                if existing.partitions < partitions:
                    live = [n.node_id for n in server.cluster.live_nodes()]
                    error, message = create_partitions(server.broker.data, name, partitions, None, False, live)
                    if error:
                        raise ValueError(f"topic {name!r} cannot grow to {partitions} partitions: {message}")
                elif existing.partitions > partitions:
                    raise ValueError(
                        f"topic {name!r} already has {existing.partitions} partitions, not {partitions}: a topic "
                        "only grows (Kafka's CreatePartitions); use a new topic name for fewer"
                    )
                return
            assert self._config is not None
            total = sum(t.partitions for t in server.broker.topics.all() if not t.internal) + partitions
            check_partition_cap(self._config, total, f"{name}:{partitions}")
            server.create_topic(name, partitions)

        self._call(create)

    # -- security: ACLs and SCRAM users without a client (the control plane's, by Kafka's names) ----
    def add_acl(
        self,
        resource_type: str,
        name: str,
        principal: str,
        operation: str,
        permission: str = "ALLOW",
        pattern_type: str = "LITERAL",
        host: str = "*",
    ) -> None:
        """One ACL: add_acl("GROUP", "g", "User:alice", "READ", "DENY"). Needs authorizer.class.name
        (SecurityOptions(authorizer=True)); persisted like CreateAcls. A bad one raises ControlError."""
        self._require("add_acl")
        assert self.control is not None
        self.control.add_acl(
            resource_type, name, principal, operation, permission=permission, pattern_type=pattern_type, host=host
        )

    def add_scram_user(self, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> None:
        """SCRAM credentials for `user` (salted and hashed as Kafka keeps them; persisted)."""
        self._require("add_scram_user")
        assert self.control is not None
        self.control.add_scram_user(user, password, mechanism)

    def _require(self, what: str = "this") -> Server:
        if self._server is None or self._token is None:
            raise CoordinatorStopped(
                f"the coordinator is stopped: {what} needs it running; call start() (or restart()) first"
            )
        return self._server

    def _call(self, fn: Any) -> Any:
        return trio.from_thread.run_sync(fn, trio_token=self._token)
