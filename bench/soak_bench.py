"""Soak: many classic-group members heartbeating for a long time against `kgc serve`.

    .venv/bin/python bench/soak_bench.py [--minutes 30] [--groups 1000] [--members 10]
        [--heartbeat-ms 3000] [--commit-s 10] [--churn-s 5] [--sample-s 10] [--baseline DIR]
        [--brokers 2 --processes] [--steps PATH] [--profile PATH]

Every member has its own connection (raw protocol: JoinGroup v5, SyncGroup v3, Heartbeat v3,
OffsetCommit v8, LeaveGroup v3) to its group's coordinator (FindCoordinator v4 first: with
--brokers 2 --processes each broker is its own process and the groups' coordinators are spread
over them), heartbeats every --heartbeat-ms and commits one offset every --commit-s, each member
starting at a random point of both periods (as a fleet of clients does); a member told
REBALANCE_IN_PROGRESS joins and syncs again, as a client does. Every --churn-s one member of a
random quiet group leaves and a new member joins in its place (a deliberate rebalance). A
rebalance, fenced member or expired session seen in a group with no deliberate churn in progress
is spurious. Every --sample-s: server RSS, heartbeats and their p50/p99 in the window, commits,
deliberate rebalances, spurious ones, the server's and the generator's CPU, and the generator's
own loop lag. At the end: RSS growth after the first 5 minutes (or the first third of a shorter
run), overall heartbeat p50/p99, server CPU per request, spurious total.

What the latency measures: from just before a member's Heartbeat is written to just after its
answer is read, in the generator: the server's time, both kernels' and, up to the lag it prints,
the generator's own scheduling (one trio process; heartbeats are pre-encoded and their error code
read in place to keep it cheap). On a 2-core machine the generator and the server share the
cores: say the load average with every figure. Figures only; asserts nothing (bench/ rule).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import cpu_seconds, rss_mib, start_kgc  # noqa: E402
from soak_members import TOPIC, Group, Member, Stats, connect, find_coordinators  # noqa: E402

from coordinator.runtime import gc_governor  # noqa: E402


class ServerProcesses:
    """CPU and memory of the server: its process and, with --processes, its broker processes."""

    def __init__(self, server) -> None:  # type: ignore[no-untyped-def]
        self.server = server
        self.port = server.port

    def pids(self) -> list[int]:
        try:
            with open(f"/proc/{self.server.pid}/task/{self.server.pid}/children", encoding="ascii") as f:
                children = [int(pid) for pid in f.read().split()]
        except OSError:
            children = []
        return [self.server.pid, *children]

    def cpu_seconds(self) -> float:
        return sum(_or_zero(cpu_seconds, pid) for pid in self.pids())

    def rss_mib(self) -> float:
        return sum(_or_zero(rss_mib, pid) for pid in self.pids())


def _or_zero(measure, pid: int) -> float:  # type: ignore[no-untyped-def]
    try:
        return float(measure(pid))
    except OSError:  # gone meanwhile
        return 0.0


async def churn(
    groups: list[Group], args: argparse.Namespace, stats: Stats, until: float, nursery: trio.Nursery
) -> None:
    """One member of a quiet group leaves; a new one joins in its place (a deliberate rebalance)."""
    rng = random.Random(7)
    grace = 3 * args.heartbeat_ms / 1000 + 5  # the others hear of it at their next heartbeat, then rejoin
    while time.monotonic() + args.churn_s < until:
        await trio.sleep(args.churn_s)
        group = rng.choice(groups)
        if not group.quiet():
            continue
        group.churning_until = time.monotonic() + grace
        stats.deliberate += 1
        index = rng.randrange(len(group.members))
        old = group.members[index]
        old.leave_asked.set()  # its own task sends LeaveGroup (one request at a time per connection)
        await old.left.wait()
        new = Member(group, index, await connect(group.port), args, stats)
        group.members[index] = new
        await new.join()
        group.churning_until = time.monotonic() + grace
        nursery.start_soon(new.run, until)


async def lag_probe(stats: Stats, until: float) -> None:
    """How late the generator's own loop wakes a 5 ms sleep: a heartbeat's measured latency
    includes up to this much of the generator's scheduling, not the server's."""
    while time.monotonic() < until:
        due = time.perf_counter() + 0.005
        await trio.sleep(0.005)
        stats.lag.append(time.perf_counter() - due)


async def govern_gc_until(until: float) -> None:
    with trio.move_on_after(until - time.monotonic()):
        await gc_governor.govern()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def sample(
    server,
    stats: Stats,
    args: argparse.Namespace,
    started: float,
    until: float,
    rss: list[tuple[float, float]],
    members: trio.CancelScope,
) -> None:
    """Every --sample-s until the end, a line of figures; then stop the members (one asked to
    leave as the run ended would otherwise keep its churn waiting for ever)."""
    print(
        f"{'t(s)':>6} {'RSS MiB':>8} {'hb/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'commits':>8} {'churns':>6} "
        f"{'spurious':>8} {'srv CPU':>7} {'gen CPU':>7} {'gen lag p99':>11}",
        flush=True,
    )
    cpu0, own0, t0 = server.cpu_seconds(), time.process_time(), time.monotonic()
    while time.monotonic() < until:
        await trio.sleep(args.sample_s)
        cpu1, own1, t1 = server.cpu_seconds(), time.process_time(), time.monotonic()
        server_pct, own_pct = (cpu1 - cpu0) / (t1 - t0) * 100, (own1 - own0) / (t1 - t0) * 100
        cpu0, own0, t0 = cpu1, own1, t1
        window, stats.window = stats.window, []
        stats.all.extend(window)
        lag, stats.lag = stats.lag, []
        stats.all_lag.extend(lag)
        t = time.monotonic() - started
        mib = server.rss_mib()
        rss.append((t, mib))
        print(
            f"{t:6.0f} {mib:8.1f} {len(window) / args.sample_s:7.0f} {percentile(window, 0.5) * 1e3:7.2f} "
            f"{percentile(window, 0.99) * 1e3:7.2f} {stats.commits:8d} {stats.deliberate:6d} {stats.spurious:8d} "
            f"{server_pct:6.0f}% {own_pct:6.0f}% {percentile(lag, 0.99) * 1e3:8.1f} ms",
            flush=True,
        )
    members.cancel()


async def soak(server, args: argparse.Namespace) -> None:
    stats = Stats()
    groups = [Group(f"soak-{g}") for g in range(args.groups)]
    began = time.monotonic()
    forming = trio.CapacityLimiter(200)  # groups forming at once (the listen backlog, the join phase)
    until = float("inf")  # set once every group has formed; members heartbeat from their own formation

    async def form(group: Group, nursery: trio.Nursery) -> None:
        async with forming:
            conns = [await connect(group.port) for _ in range(args.members)]
            ms = [Member(group, i, c, args, stats) for i, c in enumerate(conns)]
            group.members = ms
            synced = trio.Semaphore(0)
            for m in ms:  # as a client does: heartbeat from its own SyncGroup on, whatever the others do
                nursery.start_soon(m.join_then_run, until_box, synced)
            for _ in ms:
                await synced.acquire()

    until_box = [until]
    rss: list[tuple[float, float]] = []
    await find_coordinators(server.port, groups)
    ports = sorted({g.port for g in groups})
    print(
        f"coordinators: {', '.join(f'port {p}: {sum(g.port == p for g in groups)} groups' for p in ports)}", flush=True
    )
    async with trio.open_nursery() as nursery:
        async with trio.open_nursery() as formation:
            for group in groups:
                formation.start_soon(form, group, nursery)
        total = sum(len(g.members) for g in groups)
        print(
            f"{total} members in {len(groups)} groups formed in {time.monotonic() - began:.1f} s "
            f"(each heartbeats from its own formation on); server RSS {server.rss_mib():.1f} MiB",
            flush=True,
        )
        stats.window.clear()
        started = time.monotonic()
        cpu_at_start, commits_at_start = server.cpu_seconds(), stats.commits
        # Formation's own rebalances (a member whose second JoinGroup came after its group's first
        # generation) are not spurious: every group counts as churning for one grace period more.
        stats.spurious, stats.spurious_detail = 0, []
        for group in groups:
            group.churning_until = started + 3 * args.heartbeat_ms / 1000 + 5
        until_box[0] = started + args.minutes * 60
        nursery.start_soon(churn, groups, args, stats, until_box[0], nursery)
        nursery.start_soon(sample, server, stats, args, started, until_box[0], rss, nursery.cancel_scope)
        stats.lag.clear()
        nursery.start_soon(lag_probe, stats, until_box[0])
        # The load generator holds 10,000 connections too: it gets the server's collector policy, so
        # that its own full collections do not show up as the server's heartbeat latency.
        gc_governor.install()
        nursery.start_soon(govern_gc_until, until_box[0])
    stats.all.extend(stats.window)
    server_cpu = server.cpu_seconds() - cpu_at_start
    elapsed = time.monotonic() - started
    requests = len(stats.all) + stats.commits - commits_at_start
    settle = min(300.0, args.minutes * 60 / 3)
    after = [mib for t, mib in rss if t >= settle]
    base = after[0] if after else float("nan")
    print(
        f"\nsummary: {args.minutes:g} min, {total} members, {len(groups)} groups, heartbeat every "
        f"{args.heartbeat_ms} ms, a commit per member every {args.commit_s:g} s, a churn every {args.churn_s:g} s"
    )
    print(
        f"  server RSS: {rss[0][1] if rss else float('nan'):.1f} MiB at the first sample, {base:.1f} MiB at "
        f"{settle:.0f} s, {rss[-1][1] if rss else float('nan'):.1f} MiB at the end "
        f"(growth after {settle:.0f} s: {(rss[-1][1] / base - 1) * 100 if after else float('nan'):+.1f}%), "
        f"max {max(m for _, m in rss) if rss else float('nan'):.1f} MiB"
    )
    print(
        f"  heartbeats: {len(stats.all)}, p50 {percentile(stats.all, 0.5) * 1e3:.2f} ms, "
        f"p99 {percentile(stats.all, 0.99) * 1e3:.2f} ms, max {max(stats.all) * 1e3:.1f} ms; the generator's "
        f"own loop lag p50 {percentile(stats.all_lag, 0.5) * 1e3:.1f} ms, "
        f"p99 {percentile(stats.all_lag, 0.99) * 1e3:.1f} ms"
    )
    print(f"  commits: {stats.commits} ok, {stats.commit_errors} refused (during deliberate rebalances)")
    print(
        f"  server CPU: {server_cpu / elapsed * 100:.0f}% of a core, {server_cpu / max(requests, 1) * 1e6:.0f} us "
        f"per heartbeat or commit ({requests} after formation)"
    )
    print(
        f"  deliberate rebalances: {stats.deliberate} ({stats.rejoins} members rejoined for them); "
        f"spurious: {stats.spurious}"
    )
    for line in stats.spurious_detail:
        print(f"    {line}")
    if stats.unexpected:
        print(f"  unexpected join errors: {stats.unexpected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--members", type=int, default=10, help="members per group")
    parser.add_argument("--heartbeat-ms", type=int, default=3000)
    parser.add_argument("--session-ms", type=int, default=45000)
    parser.add_argument("--commit-s", type=float, default=10.0)
    parser.add_argument("--churn-s", type=float, default=5.0)
    parser.add_argument("--sample-s", type=float, default=10.0)
    parser.add_argument("--initial-delay-ms", type=int, default=3000)
    parser.add_argument("--baseline", metavar="DIR")
    parser.add_argument("--profile", metavar="PATH", help="run the server under cProfile (stats to PATH)")
    parser.add_argument(
        "--steps",
        metavar="PATH",
        help="run the server under bench/trio_steps.py: its longest trio steps, loop batches, collections to PATH",
    )
    parser.add_argument("--brokers", type=int, default=1, help="brokers in the cluster (kgc serve --brokers)")
    parser.add_argument(
        "--processes", action="store_true", help="each broker its own process (kgc serve --processes): all cores"
    )
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits it
    needed = args.groups * args.members + 100
    if hard < needed:
        raise SystemExit(f"needs {needed} file descriptors, the hard limit is {hard}")
    if args.steps:
        os.environ["KGC_STEPS_OUT"] = os.path.abspath(args.steps)  # the server inherits it
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="kgc-soak-") as data:
        # Kafka's default initial delay (3 s): each group's ten members form one generation however
        # busy the machine is (the 100 ms default here is tuned for test suites' few consumers).
        server = start_kgc(
            data,
            settings={"max.connections": needed + 100, "group.initial.rebalance.delay.ms": args.initial_delay_ms},
            topics={TOPIC: args.members},
            baseline=args.baseline,
            profile=args.profile,
            extra=["--brokers", str(args.brokers), *(["--processes"] if args.processes else [])],
            wrapper=[str(Path(__file__).with_name("trio_steps.py"))] if args.steps else None,
        )
        print(f"server pid {server.pid}", flush=True)
        try:
            trio.run(soak, ServerProcesses(server), args)
        finally:
            server.stop()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.profile:
        import pstats

        pstats.Stats(args.profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
