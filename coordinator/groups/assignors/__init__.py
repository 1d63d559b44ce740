"""KIP-848 server-side assignors, by the name a ConsumerGroupHeartbeat's ServerAssignor uses.

Kafka's group.consumer.assignors defaults to [uniform, range]; the first is the default used
when a member names none. An unknown name is Kafka's UNSUPPORTED_ASSIGNOR (the caller's check).
Submodules import only each other (spec, ordering, current, ...), never this package.
"""

from __future__ import annotations

from coordinator.groups.assignors.range import RangeAssignor
from coordinator.groups.assignors.spec import PartitionAssignor
from coordinator.groups.assignors.uniform import UniformAssignor

ASSIGNORS: dict[str, PartitionAssignor] = {UniformAssignor.name: UniformAssignor(), RangeAssignor.name: RangeAssignor()}

DEFAULT_ASSIGNOR = "uniform"

__all__ = ["ASSIGNORS", "DEFAULT_ASSIGNOR", "RangeAssignor", "UniformAssignor"]
