"""Running kgc inside another program: `EmbeddedServer` (its own thread), `open_server` (inside
trio), and the pytest plugin (`kafka_coordinator` fixture). The names are imported on first use,
so that pytest loading the plugin (coordinator.embed.pytest_plugin) does not import the server."""

from __future__ import annotations

from typing import Any

__all__ = ["EmbeddedServer", "open_server"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from coordinator.embed import embedded

        return getattr(embedded, name)
    raise AttributeError(name)
