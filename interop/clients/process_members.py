"""The group members that run in a child process (see group_members.py for the interface): the
Node clients, kafkajs and @platformatic/kafka (interop/js/*-group.mjs, read from their JSON
events), and `kcat -G` (rebalances read from its stderr). `kill()` ends one with SIGKILL.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable
from typing import Any

from interop.clients.background import BackgroundClient
from interop.clients.group_members import HEARTBEAT_MS, SESSION_MS, Consumed
from interop.clients.node import JS_DIR
from interop.clients.process import require_executable

__all__ = ["NodeMember", "KafkajsMember", "PlatformaticMember", "KcatMember"]


class _ProcessMember:
    """A member in a child process; subclasses parse its output."""

    def __init__(self, name: str, client: BackgroundClient) -> None:
        self.name, self.client = name, client
        self._asked = False

    def start(self) -> _ProcessMember:
        self.client.start()
        return self

    def request_stop(self) -> None:
        """Start a clean stop without waiting (stdin EOF; the node scripts close on it)."""
        self._asked = True
        self.client.close_stdin()

    def stop(self, timeout: float = 20.0) -> None:
        self._asked = True
        code = self.client.stop(signal.SIGTERM, timeout)
        if code != 0:
            raise AssertionError(f"{self.name} exited {code} on SIGTERM\n{self.client.describe()}")

    def kill(self) -> None:
        self._asked = True
        self.client.kill()

    def died(self) -> str | None:
        code = self.client.returncode
        return None if code is None or self._asked else f"exited ({code}) without being asked"

    def describe(self) -> str:
        return f"  {self.name}: owns {sorted(self.owned())}\n{self.client.describe()}"

    def owned(self) -> frozenset[int]:
        raise NotImplementedError


class NodeMember(_ProcessMember):
    """A node client running interop/js/<script> (kafkajs-group.mjs or platformatic-group.mjs), which
    prints one JSON line per event: assign / message / crash / closed."""

    script = ""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, *, deadline: float = 60.0) -> None:
        node = require_executable("node")
        argv = [
            node,
            str(JS_DIR / self.script),
            bootstrap,
            group,
            topic,
            f"kgc-interop-{name}",
            str(HEARTBEAT_MS),
            str(SESSION_MS),
        ]
        super().__init__(name, BackgroundClient(argv, cwd=JS_DIR, name=name, deadline=deadline))

    def _events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.client.events() if e.get("event") == kind]

    def owned(self) -> frozenset[int]:
        if self.client.returncode is not None:
            return frozenset()
        latest: frozenset[int] = frozenset()
        for e in self.client.events():  # eager: each join replaces the whole assignment
            if e.get("event") == "assign":
                latest = frozenset(e["partitions"])
            elif e.get("event") in ("revoke", "crash", "closed"):
                latest = frozenset()
        return latest

    def assigns(self) -> int:
        return len(self._events("assign"))

    def consumed(self) -> list[Consumed]:
        return [(e["partition"], int(e["offset"]), e["key"], e["value"]) for e in self._events("message")]

    def errors(self) -> list[str]:
        return [f"{e.get('type')}: {e.get('message')}" for e in self._events("crash")]

    def crashes(self) -> list[dict[str, Any]]:
        return self._events("crash")


class KafkajsMember(NodeMember):
    """kafkajs 2.2.4 (JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3, OffsetCommit v5,
    OffsetFetch v4; protocol "RoundRobinAssigner", so it cannot share a group with other clients)."""

    script = "kafkajs-group.mjs"


class PlatformaticMember(NodeMember):
    """@platformatic/kafka 1.35 (protocol "roundrobin"; commits each message before reporting it)."""

    script = "platformatic-group.mjs"


# "% Group G rebalanced (memberid M): assigned: t [0], t [1]" / "...: revoked: t [0]" (kcat's
# rebalance_cb, printed at its default verbosity).
_KCAT_REBALANCE = re.compile(r"^% Group .* rebalanced \(memberid .*\): (assigned|revoked): (.*)$")
_KCAT_PARTITION = re.compile(r"\[(\d+)\]")


class KcatMember(_ProcessMember):
    """kcat 1.7.1 -G (librdkafka 2.0.2: JoinGroup v5, OffsetCommit v7, auto commit every 200 ms and
    on close). Messages come on stdout as "partition<TAB>offset<TAB>key<TAB>value" lines."""

    def __init__(
        self, name: str, bootstrap: str, group: str, topic: str, *, deadline: float = 60.0, extra: Iterable[str] = ()
    ) -> None:
        kcat = require_executable("kcat")
        argv = [
            kcat,
            "-b",
            bootstrap,
            "-G",
            group,
            "-u",
            "-X",
            f"client.id=kgc-interop-{name}",
            "-X",
            f"heartbeat.interval.ms={HEARTBEAT_MS}",
            "-X",
            f"session.timeout.ms={SESSION_MS}",
            "-X",
            "auto.offset.reset=earliest",
            "-X",
            "auto.commit.interval.ms=200",
            *extra,
            "-f",
            "%p\t%o\t%k\t%s\n",
            topic,
        ]
        super().__init__(name, BackgroundClient(argv, name=name, deadline=deadline))

    def _rebalances(self) -> list[tuple[str, frozenset[int]]]:
        out = []
        for line in self.client.lines("stderr"):
            match = _KCAT_REBALANCE.match(line)
            if match:
                out.append((match.group(1), frozenset(int(p) for p in _KCAT_PARTITION.findall(match.group(2)))))
        return out

    def owned(self) -> frozenset[int]:
        if self.client.returncode is not None:
            return frozenset()
        latest: frozenset[int] = frozenset()
        for kind, partitions in self._rebalances():  # eager
            latest = partitions if kind == "assigned" else frozenset()
        return latest

    def assigns(self) -> int:
        return sum(1 for kind, _ in self._rebalances() if kind == "assigned")

    def consumed(self) -> list[Consumed]:
        rows = []
        for line in self.client.lines("stdout"):
            parts = line.split("\t")
            if len(parts) == 4 and parts[0].isdigit():
                rows.append((int(parts[0]), int(parts[1]), parts[2], parts[3]))
        return rows

    def errors(self) -> list[str]:
        return [line for line in self.client.lines("stderr") if "ERROR" in line or "error" in line.lower()]
