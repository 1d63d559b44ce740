"""The garbage collector's policy for a `kgc serve` process (a process that embeds kgc keeps its own).

With thousands of connections nearly every young object is a waiting request's coroutine chain or
a member's session-timer action: it lives until that connection's next request, seconds later,
then dies by reference count, never as a cycle. CPython's young collections walk it anyway
(generation 0, then ten times over in generation 1), and start full collections when promotions,
not the heap, grow. With 10,000 members (bench/soak_bench.py): ~75 young collections a second,
generation-1 ones ~15 ms each (up to ~200 ms), ~13% of a core, freeing ~300 objects in 100 s;
with generation 0 alone still ~8% of a core for ~250. So here, once the server serves, what is
alive is frozen (never walked again) and automatic collections are off: `govern` collects what
was made since the last collection, then freezes it (a pause for what is new, not for the whole
heap), when the process has grown (resident memory up by a quarter and at least 32 MiB: one read
of /proc a second) or 10 minutes passed; and walks everything, the frozen objects too, when it
has doubled since the last such walk: frozen objects that became cyclic garbage (a closed
connection's) are freed there, so they cost memory only until it shows.
"""

from __future__ import annotations

import gc
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

import trio


@dataclass(frozen=True, slots=True)
class GcPolicy:
    check_every_s: float = 1.0  # cyclic garbage waits for a check: no young collections
    growth: float = 1.25  # CPython's own ratio, applied to what the process really holds
    min_growth_bytes: int = 32 << 20  # a small process's few megabytes are not worth a collection
    full_growth: float = 2.0  # since the last full collection: the frozen objects are walked too
    collect_every_s: float = 600.0


def install() -> None:
    """Freeze what is alive now and turn automatic collections off: before start-up (the
    modules; a load of __consumer_offsets then walks nothing it builds) and once serving (what
    the load built). No collection first: it would cost ~50 ms for a few kilobytes of garbage."""
    gc.freeze()
    gc.disable()


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """The process's resident memory now (Linux); elsewhere its peak, which also grows with it."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def periodic_collection() -> None:
    """The oldest generation without the frozen objects (what lived on since the last freeze),
    then freeze the survivors: a pause for what is new, not for the whole heap."""
    gc.collect(2)
    gc.freeze()


def full_collection() -> None:
    """Everything, the frozen objects included (a frozen group deleted since, in a reference
    cycle, is freed here and not never), then freeze the survivors again."""
    gc.unfreeze()
    gc.collect(2)
    gc.freeze()


def grown(size: int, size_after_last: int, policy: GcPolicy, growth: float | None = None) -> bool:
    """Has the process grown by `growth` (the policy's, by default) and the minimum since a
    collection left it at `size_after_last`?"""
    ratio = policy.growth if growth is None else growth
    return size > size_after_last * ratio and size - size_after_last >= policy.min_growth_bytes


async def govern(
    policy: GcPolicy = GcPolicy(),
    *,
    measure: Callable[[], int] = resident_bytes,
    periodic: Callable[[], None] = periodic_collection,
    full: Callable[[], None] = full_collection,
) -> None:
    """For ever (a task of the serving process): a full collection when the process has grown by
    `full_growth` since the last one, else a periodic one when it has `grown` since the last
    collection of either kind or `collect_every_s` passed without any."""
    size_after_full = size_after_last = measure()
    last = trio.current_time()
    while True:
        await trio.sleep(policy.check_every_s)
        size = measure()
        if grown(size, size_after_full, policy, policy.full_growth):
            full()
            size_after_full = size_after_last = measure()
        elif grown(size, size_after_last, policy) or trio.current_time() - last >= policy.collect_every_s:
            periodic()
            size_after_last = measure()
        else:
            continue
        last = trio.current_time()
