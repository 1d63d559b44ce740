"""`kgc serve --brokers N --processes`: every broker of the cluster in a process of its own.

The parent binds every broker's port (net/bind.py) and creates the --create-topic topics, then
starts one `python -m coordinator serve` child per broker with the same arguments plus
cluster.processes=true. A child inherits only its own listening sockets (KGC_LISTEN_FDS), learns
every broker's port (KGC_BROKER_PORTS) and its index (KGC_PROCESS_BROKER), serves that broker
alone on its own trio loop (server.serve only_broker: it opens only the logs it leads, as every
process computes them the same way, and answers Metadata and FindCoordinator for the whole
cluster), and writes one byte to KGC_READY_FD once it serves. The parent prints the
bootstrap line when all are ready, forwards SIGINT/SIGTERM, and stops the others (exit 1) if one
dies. The children share the data dir: topics created (CreateTopics, Metadata's auto-creation),
grown or deleted through any broker reach the others through it (cluster/shared_topics.py), and
so do broker down/up and leader moves (cluster/shared_cluster.py: its files are removed here
before the children start), ACLs, credentials and configs (cluster/shared_file.py). Transactions
cross between the children over socketpairs made here (cluster/peer_link.py). Broker 0's child
serves the control plane's cluster commands; the manual clock is refused at start
(config.check_cluster). This module imports neither trio nor the server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

ENV_BROKER, ENV_PORTS, ENV_FDS, ENV_READY = "KGC_PROCESS_BROKER", "KGC_BROKER_PORTS", "KGC_LISTEN_FDS", "KGC_READY_FD"
# "c<i>:<fd>": this child's end for asking broker index i; "s<i>:<fd>": its end for answering i.
ENV_PEERS = "KGC_PEER_FDS"
# The shared cluster state (cluster/shared_cluster.py): removed before the children start, so a
# cluster starts with every broker up and the computed leaders.
CLUSTER_GENERATION_FILE, CLUSTER_STATE_FILE, CLUSTER_APPLIED_FILE = (
    "cluster.generation",
    "cluster.state",
    "cluster.applied",
)


def child_setup(environ: Mapping[str, str]) -> tuple[int, list[int], list[socket.socket], int] | None:
    """(broker index, every broker's port, this broker's listening sockets, ready fd) when this
    process is a child of `supervise`, else None."""
    if ENV_BROKER not in environ:
        return None
    sockets = [socket.socket(fileno=int(fd)) for fd in environ[ENV_FDS].split(",")]
    ports = [int(p) for p in environ[ENV_PORTS].split(",")]
    return int(environ[ENV_BROKER]), ports, sockets, int(environ[ENV_READY])


@dataclass(frozen=True)
class PeerSockets:
    """One child's ends of the socketpairs to the other brokers, by broker index."""

    asking: dict[int, socket.socket]  # requests to broker i go out here
    answering: dict[int, socket.socket]  # broker i's requests come in here


def peer_sockets(environ: Mapping[str, str]) -> PeerSockets | None:
    """This child's socketpair ends (None: not a child of `supervise`)."""
    text = environ.get(ENV_PEERS)
    if text is None:
        return None
    asking: dict[int, socket.socket] = {}
    answering: dict[int, socket.socket] = {}
    for item in filter(None, text.split(",")):
        name, fd = item.split(":")
        (asking if name[0] == "c" else answering)[int(name[1:])] = socket.socket(fileno=int(fd))
    return PeerSockets(asking, answering)


def _socketpairs(n: int) -> dict[tuple[int, int], tuple[socket.socket, socket.socket]]:
    """(a, b) -> (a's end to ask b, b's end to answer a), for every ordered pair of brokers."""
    return {(a, b): socket.socketpair() for a in range(n) for b in range(n) if a != b}


def _peer_fds(pairs: dict[tuple[int, int], tuple[socket.socket, socket.socket]], index: int) -> dict[str, int]:
    """Broker `index`'s ends, as KGC_PEER_FDS names them."""
    fds = {f"c{b}": ends[0].fileno() for (a, b), ends in pairs.items() if a == index}
    fds.update({f"s{a}": ends[1].fileno() for (a, b), ends in pairs.items() if b == index})
    return fds


def supervise(argv: list[str], bound: list[list[socket.socket]], host: str, data_dir: str) -> int:
    """Run one child per broker (each given its own sockets of `bound`) until a signal or a
    child's death; returns the exit status."""
    ports = [group[0].getsockname()[1] for group in bound]
    for name in (CLUSTER_GENERATION_FILE, CLUSTER_STATE_FILE, CLUSTER_APPLIED_FILE):
        try:
            os.unlink(os.path.join(data_dir, name))
        except FileNotFoundError:
            pass
    child_argv = [a for a in argv if a != "--processes"]
    child_argv += ["--set", "cluster.processes=true"]
    children: list[subprocess.Popen[bytes]] = []
    ready_fds: list[int] = []
    pairs = _socketpairs(len(bound))
    try:
        for index, sockets in enumerate(bound):
            read_fd, write_fd = os.pipe()
            fds = [s.fileno() for s in sockets]
            peer_fds = _peer_fds(pairs, index)
            env = dict(
                os.environ,
                **{
                    ENV_BROKER: str(index),
                    ENV_PORTS: ",".join(map(str, ports)),
                    ENV_FDS: ",".join(map(str, fds)),
                    ENV_READY: str(write_fd),
                    ENV_PEERS: ",".join(f"{name}:{fd}" for name, fd in peer_fds.items()),
                },
            )
            children.append(
                subprocess.Popen(
                    [sys.executable, "-m", "coordinator", *child_argv],
                    env=env,
                    pass_fds=(*fds, *peer_fds.values(), write_fd),
                )
            )
            os.close(write_fd)
            ready_fds.append(read_fd)
        for sock in (s for group in bound for s in group):
            sock.close()  # the children hold them now
        for ends in pairs.values():
            for end in ends:
                end.close()
        for child, fd in zip(children, ready_fds):
            if os.read(fd, 1) != b"\x01":  # the child exited before it served
                child.wait()
                return _stop(
                    children, f"kgc: broker process {child.pid} exited with {child.returncode} before it served"
                )
            os.close(fd)
        bootstrap = ",".join(f"{host}:{port}" for port in ports)
        print(  # one write, whole among the children's lines on the same stdout
            f"kgc: serving bootstrap={bootstrap} with data in {data_dir} ({len(children)} broker processes)\n",
            end="",
            flush=True,
        )
        return _wait(children)
    except BaseException:
        _stop(children, None)
        raise


def _wait(children: list[subprocess.Popen[bytes]]) -> int:
    stopping = False

    def forward(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    while True:
        pid, status = os.wait()
        child = next((c for c in children if c.pid == pid), None)
        if child is None:
            continue
        child.returncode = os.waitstatus_to_exitcode(status)
        if stopping:
            if all(c.poll() is not None for c in children):
                return 0
            continue
        return _stop(children, f"kgc: broker process {pid} exited with {child.returncode}: stopping the others")


def _stop(children: list[subprocess.Popen[bytes]], message: str | None) -> int:
    if message:
        print(message, file=sys.stderr, flush=True)
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 1
