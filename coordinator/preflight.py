"""Every refusal `kgc serve` makes, made before any port is bound.

A harness that waits for the port to accept takes the server for started, so nothing that can
still refuse may come after the bind: `claimed` locks and prepares the data dir (datadir.py: a
file, a foreign non-empty or an unwritable directory, another kgc on it, the partition cap, open
files), checks that the transcript file can be written, that the control API's address and the
processes mode agree with the settings, and that the metrics and control ports are free; the CLI
binds the brokers' ports only inside it (net/bind.py), then serves. This module must stay free of
trio and of the server (they are imported after the bind, so a normal start accepts connections
~70 ms after exec). Signals during start-up stop it with one line (`terminate_as_interrupt`).
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from coordinator.config import ConfigError
from coordinator.datadir import data_dir_lock, prepare_data_dir, refuse_unusable


@contextmanager
def claimed(config: Any, create_topics: Mapping[str, int], processes: bool = False) -> Iterator[Path]:
    """The data dir locked and prepared, every other refusal made; held while the block runs."""
    check_settings(config, processes)
    refuse_unusable(config)  # a file, a foreign directory: refused before anything is written there
    with data_dir_lock(config.data_dir):
        path = prepare_data_dir(config, create_topics)
        _check_transcript(config.transcript_file)
        _check_port_free(config.host, config.metrics_port, "metrics.port (--metrics-port)")
        _check_port_free(config.control_host or "127.0.0.1", config.control_port, "control.port (--control-port)")
        yield path


def check_settings(config: Any, processes: bool = False) -> None:
    """Settings that only make sense together (raised by the server itself once it is listening)."""
    if (processes or config.cluster_processes) and config.clock_mode == "manual":
        raise ConfigError("clock.mode=manual needs every broker in one process: it cannot run with --processes")
    host = config.control_host or "127.0.0.1"
    if config.control_port >= 0 and not _is_loopback(host) and not config.control_token:
        raise ConfigError(
            f"control.host {host} is not loopback: set control.token too (the API can stop brokers and fail requests)"
        )


def _is_loopback(host: str) -> bool:  # as control/http_api.py decides it
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_transcript(path: str) -> None:
    """The transcript file can be created or appended to. Not opened here: a FIFO would block
    before the signal handlers are in place (the server opens it, under them)."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"transcript.file {path} is a directory: name a file (--transcript)")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise ConfigError(f"transcript.file {path} is not writable: choose a file you can write (--transcript)")
        return
    parent = target.parent
    if not parent.is_dir():
        raise ConfigError(f"transcript.file {path}: directory {parent} does not exist (--transcript)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"transcript.file {path}: cannot create it in {parent} (permission denied; --transcript)")


def _check_port_free(host: str, port: int, setting: str) -> None:
    """Port > 0 can be bound now. The server binds it moments later; another process taking it in
    between still fails the start, but after the brokers' ports listen (a rare race, not a rule)."""
    if port <= 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"{setting}: cannot resolve host {host!r} ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            why = "is in use" if exc.errno == getattr(os, "EADDRINUSE", 98) else f"cannot be bound ({exc.strerror})"
            raise ConfigError(
                f"{setting}: port {port} on {host} {why}: stop what holds it, or choose another (0 picks a free one)"
            ) from None


@contextmanager
def terminate_as_interrupt(seen: list[int]) -> Iterator[None]:
    """SIGTERM handled as SIGINT is at that moment: by trio's Ctrl-C handler inside trio.run
    (KeyboardInterrupt where it is safe to raise, else at the next checkpoint), else Python's.
    `seen` records the SIGTERMs, so the message can name the signal."""

    def forward(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if not callable(handler):  # SIGINT ignored or default: stop here all the same
            raise KeyboardInterrupt
        handler(signal.SIGINT, frame)  # raises, or (trio, inside its own code) delivers at a checkpoint

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped_while_starting(seen: list[int]) -> tuple[str, int]:
    """The line for a start-up cut short by SIGINT/SIGTERM, and the exit status (128 + signal)."""
    name, signum = ("SIGTERM", signal.SIGTERM) if seen else ("SIGINT", signal.SIGINT)
    line = (
        f"kgc: {name}: stopped while starting; what was done is kept (a topic cut short keeps the "
        "partitions it made, unclosed logs are recovered at the next start)"
    )
    return line, 128 + signum
