"""Run `python -m coordinator ARGS` with a trio Instrument and gc callbacks that record where its
loop's time goes; a report to $KGC_STEPS_OUT (default ./trio_steps.txt) every 10 s and at exit.

    python bench/trio_steps.py serve --port 0 ...          (soak_bench.py --steps PATH runs it so)

The report: the longest task steps (wall and CPU time, task name: CPU well under wall is the OS
running something else meanwhile), the longest loop batches (one pass over every runnable task:
what a request that arrives meanwhile waits for), time per task name, and each collection
generation's count, wall and CPU time and longest pauses. It costs ~2 us per task step itself:
compare figures with and without it only by what it names, not by its CPU.
"""

from __future__ import annotations

import atexit
import collections
import gc
import os
import runpy
import sys
import time
from typing import Any

import trio

OUT = os.environ.get("KGC_STEPS_OUT", "trio_steps.txt")
_now, _cpu = time.perf_counter, time.thread_time
BUCKETS = (1e-3, 5e-3, 20e-3, 100e-3)


def _bucket(seconds: float) -> int:
    return next((i for i, edge in enumerate(BUCKETS) if seconds < edge), len(BUCKETS))


class Steps(trio.abc.Instrument):
    def __init__(self) -> None:
        self.step_start = self.step_cpu = 0.0
        self.steps: collections.Counter[int] = collections.Counter()
        self.batches: collections.Counter[int] = collections.Counter()
        self.by_task: collections.Counter[str] = collections.Counter()
        self.count_by_task: collections.Counter[str] = collections.Counter()
        self.long_steps: list[tuple[float, float, str, str]] = []  # (wall, cpu, when, task)
        self.long_batches: list[tuple[float, str]] = []
        self.batch_start: float | None = None
        self.last_report = _now()

    def before_task_step(self, task: Any) -> None:
        self.step_start, self.step_cpu = _now(), _cpu()

    def after_task_step(self, task: Any) -> None:
        wall = _now() - self.step_start
        name = task.name
        self.steps[_bucket(wall)] += 1
        self.by_task[name] += wall
        self.count_by_task[name] += 1
        if wall > 5e-3:
            self.long_steps.append((wall, _cpu() - self.step_cpu, time.strftime("%H:%M:%S"), name))
            if len(self.long_steps) > 500:
                self.long_steps.sort(reverse=True)
                del self.long_steps[100:]

    def before_io_wait(self, timeout: float) -> None:
        now = _now()
        if self.batch_start is not None:
            batch = now - self.batch_start
            self.batches[_bucket(batch)] += 1
            if batch > 20e-3:
                self.long_batches.append((batch, time.strftime("%H:%M:%S")))
                if len(self.long_batches) > 500:
                    self.long_batches.sort(reverse=True)
                    del self.long_batches[100:]
        if now - self.last_report > 10:
            self.last_report = now
            report()

    def after_io_wait(self, timeout: float) -> None:
        self.batch_start = _now()


class Collections:
    def __init__(self) -> None:
        self.start = self.start_cpu = 0.0
        self.count = [0, 0, 0]
        self.wall = [0.0, 0.0, 0.0]
        self.cpu = [0.0, 0.0, 0.0]
        self.collected = [0, 0, 0]
        self.long: list[tuple[float, int, str]] = []

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.start, self.start_cpu = _now(), _cpu()
            return
        generation, wall = info["generation"], _now() - self.start
        self.count[generation] += 1
        self.wall[generation] += wall
        self.cpu[generation] += _cpu() - self.start_cpu
        self.collected[generation] += info["collected"]
        if wall > 10e-3:
            self.long.append((wall, generation, time.strftime("%H:%M:%S")))


STEPS, GC = Steps(), Collections()


def report() -> None:
    STEPS.long_steps.sort(reverse=True)
    STEPS.long_batches.sort(reverse=True)
    edges = "<1 ms, <5, <20, <100, >=100"
    lines = [
        f"task steps ({edges}): {[STEPS.steps[i] for i in range(5)]}",
        f"loop batches ({edges}): {[STEPS.batches[i] for i in range(5)]}",
        "longest batches (ms@time): " + " ".join(f"{b * 1e3:.0f}@{t}" for b, t in STEPS.long_batches[:30]),
        "collections by generation: count "
        + f"{GC.count}, wall s {[round(w, 2) for w in GC.wall]}, CPU s {[round(c, 2) for c in GC.cpu]}, "
        + f"objects freed {GC.collected}",
        "longest collections: " + " ".join(f"gen{g} {w * 1e3:.0f} ms@{t}" for w, g, t in sorted(GC.long)[::-1][:20]),
        "time by task (total s, steps, us per step):",
        *(
            f"  {total:8.2f} {STEPS.count_by_task[name]:9d} {total / STEPS.count_by_task[name] * 1e6:9.1f}  {name}"
            for name, total in STEPS.by_task.most_common(15)
        ),
        "longest task steps (wall ms, CPU ms, time, task):",
        *(f"  {w * 1e3:8.1f} {c * 1e3:8.1f} {t} {name}" for w, c, t, name in STEPS.long_steps[:40]),
    ]
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    gc.callbacks.append(GC)
    atexit.register(report)
    run = trio.run

    def instrumented_run(*args: Any, **kwargs: Any) -> Any:
        kwargs["instruments"] = [*kwargs.get("instruments", ()), STEPS]
        return run(*args, **kwargs)

    trio.run = instrumented_run  # serve_cli calls trio.run(...) through the module
    sys.argv = ["coordinator", *sys.argv[1:]]
    runpy.run_module("coordinator", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
