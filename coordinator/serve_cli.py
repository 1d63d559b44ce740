"""`kgc serve` once its settings are resolved: run the server until a signal, and turn what can go
wrong into one line that says what to do.

Signals: until the server is serving (data dir checks, topic creation, log recovery, loading
__consumer_offsets), SIGTERM acts as Ctrl-C does, trio's KeyboardInterrupt, so a long start-up
stops within a moment; what was done stays (topic dirs are written durably, an unclosed log is
recovered at the next start). While serving, the first SIGINT/SIGTERM stops cleanly (every log
closed); another one during that stops at once. Errors (raised inside trio's exception groups)
come back as CommandError/DataDirError/ConfigError for __main__ to print, exit 2.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import trio

from coordinator.config import Config, ConfigError
from coordinator.datadir import DataDirError
from coordinator.observe.logs import get_logger, log_event, setup_logging
from coordinator.preflight import stopped_while_starting, terminate_as_interrupt
from coordinator.runtime import gc_governor
from coordinator.server import serve

if TYPE_CHECKING:
    from coordinator.net.early_responder import EarlyResponder

LONG_STOP_PARTITIONS = 1000  # closing this many logs takes seconds: say so, and how to cut it short


class ServeError(Exception):
    """A start-up failure with what to do (the CLI prints it on one line, exit 2)."""


@dataclass(slots=True)
class _Phase:
    serving: bool = False
    stopping: bool = False
    signals: list[int] = field(default_factory=list)  # SIGTERMs seen while acting as Ctrl-C


def run(
    config: Config,
    create_topics: dict[str, int],
    log_level: str,
    *,
    bound: list[list[socket.socket]] | None = None,
    child: tuple[int, list[int], list[socket.socket], int] | None = None,
    prepared: bool = False,
    early: EarlyResponder | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM; the exit status (128 + signal for a start-up cut short).
    `bound`: the brokers' listening sockets, bound by the CLI; `child`: (broker index, every
    broker's port, its sockets, the fd to tell readiness on) for one broker of --processes;
    `prepared`: the CLI holds the data dir's lock and prepared it (preflight.py); `early`: what
    answers ApiVersions on `bound` until the listeners take over (net/early_responder.py)."""
    setup_logging(log_level)
    gc_governor.install()  # modules frozen, and no full collection while start-up loads offsets
    phase = _Phase()
    with terminate_as_interrupt(phase.signals):
        try:
            trio.run(_serve_until_signalled, config, create_topics, phase, bound, child, prepared, early)
        except BaseException as exc:  # noqa: B036 - KeyboardInterrupt and trio's groups are sorted below
            return _failed(exc, config, phase)
        finally:
            if early is not None:  # a start that failed before the listeners took its connections
                early.close()
    return 0


async def _serve_until_signalled(
    config: Config,
    create_topics: dict[str, int],
    phase: _Phase,
    bound: list[list[socket.socket]] | None = None,
    child: tuple[int, list[int], list[socket.socket], int] | None = None,
    prepared: bool = False,
    early: EarlyResponder | None = None,
) -> None:
    log = get_logger("main")
    async with trio.open_nursery() as nursery:
        if child is None:
            server = await nursery.start(
                partial(serve, config, create_topics, bound=bound, prepared=prepared, early=early)
            )
        else:  # one broker of `kgc serve --processes` (coordinator/processes.py)
            index, ports, sockets, ready_fd = child
            from coordinator.processes import peer_sockets  # the broker link's socketpair ends

            peers = peer_sockets(os.environ)
            server = await nursery.start(
                partial(serve, config, create_topics, ports=ports, bound=[sockets], only_broker=index, peers=peers)
            )
        gc_governor.install()  # what start-up loaded lives as long as the server: frozen too
        collector = trio.CancelScope()
        nursery.start_soon(_govern_gc, collector)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            phase.serving = True
            if child is None:
                print(f"kgc: serving bootstrap={server.bootstrap} with data in {config.data_path}", flush=True)
            else:  # the parent prints the cluster's line once every broker process serves
                os.write(child[3], b"\x01")
                os.close(child[3])
            tap = server.broker.tap
            if server.control_url is not None:
                # One write (PYTHONUNBUFFERED splits print's end): --processes' children share stdout.
                print(f"kgc: control={server.control_url}\n", end="", flush=True)
            if server.metrics_port is not None:
                print(f"kgc: metrics on http://{config.host}:{server.metrics_port}/metrics", flush=True)
            if tap is not None and tap.transcript is not None:
                print(f"kgc: transcript in {tap.transcript.path}", flush=True)
            async for signum in signals:
                log_event(log, "server.shutdown", signal=signal.Signals(signum).name)
                phase.stopping = True
                partitions = sum(t.partitions for t in server.broker.topics.all())
                if partitions >= LONG_STOP_PARTITIONS:
                    print(
                        f"kgc: stopping: closing {partitions} partition logs cleanly (Ctrl-C or SIGTERM again "
                        "stops at once; the next start then recovers them)",
                        file=sys.stderr,
                        flush=True,
                    )
                server.stop()
                break
        collector.cancel()


async def _govern_gc(scope: trio.CancelScope) -> None:
    with scope:
        await gc_governor.govern()


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _failed(exc: BaseException, config: Config, phase: _Phase) -> int:
    leaves = list(_leaves(exc))
    if any(isinstance(e, KeyboardInterrupt) for e in leaves):
        name = "SIGTERM" if phase.signals else "SIGINT"
        if phase.stopping:
            print(
                f"kgc: {name} again: stopped at once; logs not closed cleanly are recovered at the next start",
                file=sys.stderr,
            )
        elif not phase.serving:
            print(stopped_while_starting(phase.signals)[0], file=sys.stderr)
        return 128 + (signal.SIGTERM if phase.signals else signal.SIGINT)
    for leaf in leaves:
        if isinstance(leaf, (ConfigError, DataDirError)):
            raise leaf
        if isinstance(leaf, OSError):
            raise ServeError(_os_error(leaf, config)) from leaf
    raise leaves[0] if len(leaves) == 1 and isinstance(leaves[0], Exception) else exc


def explain_os_error(exc: OSError, config: Config) -> str:
    """What to do about an OSError of start-up, as one line (also for the CLI's early bind)."""
    return _os_error(exc, config)


def _os_error(exc: OSError, config: Config) -> str:
    host, first, n = config.host, config.port, config.cluster_brokers
    ports = f"{first}" if n == 1 else f"{first}..{first + n - 1}"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve host {host!r} ({exc.strerror}): use an address or a name of this machine (--host)"
    if exc.errno == errno.EADDRINUSE:
        busy = _busy_port(host, [first + i for i in range(n)]) if first else None
        which = f"port {busy}" if busy is not None else f"port {ports}"
        return (
            f"cannot listen on {host}:{which[5:]}: {which} is in use (another kgc or Kafka?): stop it, or "
            "choose another --port (0 picks a free one)"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {host}: not an address of this machine: use --host 127.0.0.1 or one of its own"
    if exc.errno in (errno.EACCES, errno.EPERM) and exc.filename is None:
        return f"cannot listen on {host}:{ports}: permission denied (ports below 1024 need root): use --port 9092"
    if exc.errno == errno.EMFILE:
        return "too many open files: raise the limit (ulimit -n) or serve fewer partitions"
    if exc.errno == errno.ENOSPC:
        return (
            f"no space left on the device of {exc.filename or config.data_path}: free some, or use another --data-dir"
        )
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{exc.strerror or exc}{where}: check the data dir ({config.data_path}) and the address"


def _busy_port(host: str, ports: list[int]) -> int | None:
    """Which of the ports cannot be bound now (to say which one is taken)."""
    for port in ports:
        try:
            with socket.create_server((host, port)):
                pass
        except OSError:
            return port
    return None
