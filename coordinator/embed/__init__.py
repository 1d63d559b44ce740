"""Running kgc inside another program: `EmbeddedServer` (its own thread), `open_server` (inside
trio), and the pytest plugin (`kafka_coordinator` fixture)."""
from coordinator.embed.embedded import EmbeddedServer, open_server

__all__ = ["EmbeddedServer", "open_server"]
