"""Producer ids for InitProducerId: unique across restarts, handed out in persisted blocks.

Like Kafka's ProducerIdManager (ids come in blocks of 1000 from the controller), the next free
block's first id is written durably to `<data dir>/producer-id-block` (one decimal line) BEFORE
any id of the current block is handed out, so a crash can skip ids but never repeat one.
Epochs start at 0 for every new id: an idempotent producer always gets a fresh id, as Kafka's
TransactionCoordinator.handleInitProducerId does for a null transactional id.
"""

from __future__ import annotations

import os
from pathlib import Path

from storage import fsutil

BLOCK_SIZE = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
BLOCK_FILE = "producer-id-block"
OWNER_SPAN = 1 << 48  # kgc serve --processes: broker process i hands out ids from i * 2^48 on


class ProducerIdManager:
    def __init__(self, data_dir: Path, owner: int | None = None) -> None:
        """`owner`: the broker index of this process when brokers run as separate processes
        (cluster.processes): it keeps its own block file and id range, so no two processes ever
        hand out the same id."""
        self.path = data_dir / (BLOCK_FILE if owner is None else f"{BLOCK_FILE}-{owner}")
        self._next = self._read_next_block()
        if owner is not None:
            self._next = max(self._next, owner * OWNER_SPAN)
        self._block_end = self._next  # nothing reserved yet

    def _read_next_block(self) -> int:
        try:
            return int(self.path.read_text(encoding="ascii").strip())
        except FileNotFoundError:
            return 0
        except ValueError as exc:
            raise RuntimeError(f"{self.path} is damaged ({exc}); refusing to risk repeating producer ids") from exc

    def next_id(self) -> int:
        if self._next >= self._block_end:
            block_end = self._next + BLOCK_SIZE
            fsutil.atomic_write(os.fspath(self.path), f"{block_end}\n".encode("ascii"))
            self._block_end = block_end
        producer_id = self._next
        self._next += 1
        return producer_id
