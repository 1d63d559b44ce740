"""Cost of one server-side assignment (KIP-848), i.e. what a ConsumerGroupHeartbeat that changes
the group pays inside the coordinator's single writer.

    .venv/bin/python bench/assignor_bench.py [--assignors uniform,range] [--budget 0.3]

Grid: 32 / 1,000 / 10,000 partitions (over 4 / 10 / 100 topics) x 16 / 100 / 1,000 members,
homogeneous (everyone subscribes to every topic) and heterogeneous (member i skips the topics t
with t % 4 == i % 4, so four overlapping subscriptions). Three cases, like Kafka's
ServerSideAssignorBenchmark FULL / INCREMENTAL:
  full    no current assignment (a new group);
  steady  the previous result as current assignment, nobody changed (recomputed on every epoch bump);
  join    the previous result plus one new member (the usual rebalance).
Each cell is "min / median" wall time in ms over repeated runs (at least 5, up to --budget
seconds per cell): the minimum is the run least disturbed by other processes on the machine.
Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from coordinator.groups.assignors import ASSIGNORS  # noqa: E402
from coordinator.groups.assignors.spec import Assignment, GroupSpec, MemberSubscription, SubscriptionType, TopicId  # noqa: E402

PARTITIONS = {32: 4, 1000: 10, 10000: 100}  # partitions -> topics
MEMBERS = (16, 100, 1000)


@dataclass
class Topics:
    counts: dict[TopicId, int]

    def num_partitions(self, topic_id: TopicId) -> int:
        return self.counts.get(topic_id, -1)

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> frozenset[str]:
        return frozenset()


def build(partitions: int, members: int, homogeneous: bool) -> tuple[dict[str, MemberSubscription], Topics]:
    n_topics = PARTITIONS[partitions]
    topic_ids = [uuid.UUID(int=(t + 1) * 0x9E3779B97F4A7C15F39CC0605CEDC835 % (1 << 128)) for t in range(n_topics)]
    counts = {t: partitions // n_topics for t in topic_ids}
    subs: dict[str, MemberSubscription] = {}
    for i in range(members):
        chosen = topic_ids if homogeneous else [t for k, t in enumerate(topic_ids) if k % 4 != i % 4 or n_topics < 4]
        subs[f"member-{i:05d}"] = MemberSubscription(None, None, frozenset(chosen))
    return subs, Topics(counts)


def timed(fn: Callable[[], object], budget: float) -> str:
    times: list[float] = []
    deadline = time.perf_counter() + budget
    while len(times) < 5 or (time.perf_counter() < deadline and len(times) < 200):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return f"{min(times) * 1000:.3f} / {statistics.median(times) * 1000:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignors", default="uniform,range")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds of repeats per cell")
    args = parser.parse_args()

    print(
        f"{'assignor':8} {'subscriptions':13} {'partitions':>10} {'members':>7} "
        f"{'full ms (min / med)':>21} {'steady ms':>21} {'join ms':>21}"
    )
    for name in args.assignors.split(","):
        assignor = ASSIGNORS[name]
        for homogeneous in (True, False):
            kind = SubscriptionType.HOMOGENEOUS if homogeneous else SubscriptionType.HETEROGENEOUS
            for partitions in PARTITIONS:
                for members in MEMBERS:
                    subs, topics = build(partitions, members, homogeneous)
                    empty = GroupSpec(subs, kind, {})
                    first = assignor.assign(empty, topics)
                    current: dict[str, Assignment] = dict(first)
                    steady = GroupSpec(subs, kind, current)
                    joined = dict(subs)
                    joined["member-new"] = next(iter(subs.values()))
                    join = GroupSpec(joined, kind, current)
                    figures = [
                        timed(lambda s=s, a=assignor, t=topics: a.assign(s, t), args.budget)  # type: ignore[misc]
                        for s in (empty, steady, join)
                    ]
                    label = "homogeneous" if homogeneous else "heterogeneous"
                    print(
                        f"{name:8} {label:13} {partitions:>10} {members:>7} " + " ".join(f"{f:>21}" for f in figures),
                        flush=True,
                    )


if __name__ == "__main__":
    main()
