"""Instructions per request of `dispatch(frame)` (dispatch_bench.py's and data_frames.py's frames),
counted by valgrind's callgrind: a figure other processes on the machine cannot move, for A/B of
small changes.

    .venv/bin/python bench/dispatch_instructions.py [--n 200]      # needs valgrind
    KGC_NATIVE=0 ... / KGC_BENCH_TREE=/work/main ...                # as dispatch_bench.py

The script runs itself under callgrind with collection off. In the child each request type is
dispatched inside its own itertools iterator (filterfalse, takewhile, dropwhile), which
--toggle-collect names, so only those requests are counted, each type apart; interval mode never
suspends, so each dispatch coroutine is driven by hand (one send). The data path's requests run
inside accumulate, compress, islice and pairwise (the last three over map(step, frames)).
Instructions are not time (a cache miss costs more than an add), but they follow the CPU a request
costs and repeat to ~0.5%, except Heartbeat's: its timers see wall time, which valgrind stretches
by how busy the machine is, so its figure moves by a few % from run to run (compare it on a quiet
machine, or run it several times). Asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import collections
import gc
import itertools
import os
import subprocess
import sys
import tempfile

import trio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# dispatch_bench puts KGC_BENCH_TREE (or this checkout) first on the path before its imports.
from data_frames import TOPICS, data_frames  # noqa: E402
from dispatch_bench import Connection, bench_frames, dispatch, open_server, running_modules  # noqa: E402

# request type -> the iterator whose next() the child runs it in (callgrind --toggle-collect); none
# of these iterators is used by the server's own code (a nested one would toggle collection off)
ITERATORS = {
    "Heartbeat": "filterfalse_next",
    "OffsetCommit 1p": "takewhile_next",
    "OffsetCommit 32p": "dropwhile_next",
    "Produce 1r": "accumulate_next",
    "Produce 100r": "compress_next",
    "Produce txn 1r": "islice_next",
    "Fetch rc 3b": "pairwise_next",
}
WARM = 50


async def child(n: int) -> None:
    with tempfile.TemporaryDirectory() as data:
        topics = {"bench": 32, **TOPICS}
        async with open_server(data, settings={"log.flush.mode": "interval"}, topics=topics) as server:
            broker, conn = server.broker, Connection(1, "127.0.0.1")
            frames = {name: [frame] * (WARM + n) for name, frame in (await bench_frames(broker, conn)).items()}
            frames.update(await data_frames(broker, conn, WARM + n))

            def step(frame: bytes) -> bool:
                coro = dispatch(frame, conn, broker)
                try:
                    coro.send(None)
                except StopIteration:
                    return True
                coro.close()
                raise RuntimeError("dispatch suspended: only log.flush.mode=interval can be driven by hand")

            for name in ITERATORS:  # warm: handlers loaded, codecs built, caches filled
                for frame in frames[name][:WARM]:
                    step(frame)
            measured = {name: frames[name][WARM:] for name in ITERATORS}
            gc.freeze()
            gc.disable()  # as `kgc serve` runs
            sink: collections.deque[object] = collections.deque(maxlen=0)
            sink.extend(itertools.filterfalse(step, measured["Heartbeat"]))
            sink.extend(itertools.takewhile(step, measured["OffsetCommit 1p"]))
            sink.extend(itertools.dropwhile(step, measured["OffsetCommit 32p"]))
            sink.extend(itertools.accumulate(measured["Produce 1r"], lambda _, frame: step(frame), initial=True))
            sink.extend(itertools.compress(measured["Produce 100r"], map(step, measured["Produce 100r"])))
            sink.extend(itertools.islice(map(step, measured["Produce txn 1r"]), None))
            sink.extend(itertools.pairwise(map(step, measured["Fetch rc 3b"])))
            print(running_modules())


def parent(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        toggles = [f"--toggle-collect={name}" for name in ITERATORS.values()]
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", *toggles, f"--callgrind-out-file={out}"]
        run = subprocess.run(
            [*command, sys.executable, __file__, "--child", "--n", str(n)], capture_output=True, text=True
        )
        if run.returncode != 0:
            sys.exit(f"the child failed:\n{run.stderr[-2000:]}")
        print(run.stdout.strip().splitlines()[-1])
        annotated = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True, check=True
        ).stdout
    for name, function in ITERATORS.items():
        line = next((line for line in annotated.splitlines() if f":{function} " in line), None)
        count = 0 if line is None else int(line.split()[0].replace(",", ""))
        print(f"{name:18s} {count / n:10,.0f} instructions per request ({n} requests)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        trio.run(child, args.n)
    else:
        parent(args.n)
