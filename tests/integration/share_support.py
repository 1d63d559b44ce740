"""A real server with an in-memory share coordinator (FakePersister behind the SharePersister
interface), in this trio run (`share_server`) or on a thread of its own for blocking clients
(`ThreadedShareServer`, what `kgc share-groups` talks to)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from coordinator.config import Config
from coordinator.server import Server, serve
from tests.coordinator.groups.share.support import FakePersister
from tests.integration.raw_client import RawClient


@asynccontextmanager
async def running(
    data_dir: Path, persister: FakePersister | None, settings: dict[str, Any] | None = None
) -> AsyncIterator[Server]:
    config = Config({**(settings or {}), "data.dir": str(data_dir), "host": "127.0.0.1", "port": 0})
    async with trio.open_nursery() as nursery:
        server: Server = await nursery.start(
            lambda task_status: serve(config, {"orders": 2}, share_persister=persister, task_status=task_status)
        )
        try:
            yield server
        finally:
            server.stop()


@asynccontextmanager
async def share_server(
    data_dir: Path, persister: FakePersister | None, settings: dict[str, Any] | None = None
) -> AsyncIterator[tuple[Server, RawClient]]:
    async with running(data_dir, persister, settings) as server:
        client = await RawClient.connect(server.host, server.port)
        try:
            yield server, client
        finally:
            await client.aclose()


class ThreadedShareServer:
    """The server on its own thread and trio loop; `bootstrap` once started."""

    def __init__(self, data_dir: Path, persister: FakePersister) -> None:
        self.data_dir, self.persister = data_dir, persister
        self.bootstrap = ""
        self._ready = threading.Event()
        self._stop: trio.Event | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._thread = threading.Thread(target=lambda: trio.run(self._main), daemon=True)

    async def _main(self) -> None:
        self._stop = trio.Event()
        self._token = trio.lowlevel.current_trio_token()
        async with running(self.data_dir, self.persister) as server:
            self.bootstrap = server.bootstrap
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> ThreadedShareServer:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the share server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None and self._stop is not None
        trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(30)
