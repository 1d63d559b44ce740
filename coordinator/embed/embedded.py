"""Run a coordinator from Python: in this trio program, or in a background thread for any program.

    with EmbeddedServer(topics={"orders": 3}) as server:    # sync code, asyncio code, any client
        consumer = Consumer({"bootstrap.servers": server.bootstrap, ...})

    async with open_server(topics={"orders": 3}) as server:  # inside trio
        ...

Both bind loopback on a free port unless told otherwise (`brokers=N`: N brokers, each on its own
free port; `bootstrap` lists them all). A data dir is created in a temporary directory and removed
afterwards unless one is given. `restart()` stops the server and starts it again on the same data
dir and ports, which is how tests show that state survives.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import trio

from coordinator.config import Config
from coordinator.control.facade import Control, thread_call
from coordinator.server import Server, serve

START_TIMEOUT_SECONDS = 30


def _config(data_dir: Path, host: str, port: int, settings: Mapping[str, Any] | None,
            brokers: int | None = None) -> Config:
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
) -> AsyncIterator[Server]:
    temp = None if data_dir is not None else tempfile.mkdtemp(prefix="kgc-")
    try:
        config = _config(Path(data_dir or temp), host, port, settings, brokers)  # type: ignore[arg-type]
        async with trio.open_nursery() as nursery:
            server: Server = await nursery.start(serve, config, dict(topics or {}))
            try:
                yield server
            finally:
                server.stop()
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


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
    ) -> None:
        self._temp = None if data_dir is not None else tempfile.mkdtemp(prefix="kgc-")
        self._brokers = brokers
        self._ports: list[int] | None = None  # fixed by the first start, kept by restarts
        self.data_dir = Path(data_dir or self._temp)  # type: ignore[arg-type]
        self._host, self._port = host, port
        self._settings = dict(settings or {})
        self._topics = dict(topics or {})
        self._thread: threading.Thread | None = None
        self._server: Server | None = None
        self.control: Control | None = None  # fault rules, brokers, clock, requests (coordinator/control)
        self.control_url: str | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._error: BaseException | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> EmbeddedServer:
        started = threading.Event()
        config = _config(self.data_dir, self._host, self._port, self._settings, self._brokers)

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self._server = await nursery.start(partial(serve, config, self._topics, ports=self._ports))
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
            raise RuntimeError(f"coordinator did not start: {self._error!r}")
        self._port = self._server.port  # a restart reuses the same ports
        self._ports = [b.advertised_port for b in self._server.brokers]
        assert self._server.control is not None and self._token is not None
        self.control = Control(self._server.control, thread_call(self._token))
        self.control_url = self._server.control_url  # the HTTP control API, with control.port set
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
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)

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
        return [(b.node_id, b.advertised_host, b.advertised_port) for b in self._require().brokers]

    @property
    def settings(self) -> dict[str, Any]:
        """The settings given at construction (the rest are defaults)."""
        return dict(self._settings)

    def create_topic(self, name: str, partitions: int) -> None:
        self._call(lambda: self._require().create_topic(name, partitions))

    def _require(self) -> Server:
        if self._server is None:
            raise RuntimeError("the coordinator is not running")
        return self._server

    def _call(self, fn: Any) -> Any:
        return trio.from_thread.run_sync(fn, trio_token=self._token)
