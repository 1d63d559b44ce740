"""fsync_worker.run_in_worker: result and error hand-back, worker reuse, concurrency, the
fallback past MAX_WORKERS, and that a cancelled caller still waits for its call's end."""

from __future__ import annotations

import errno
import multiprocessing
import threading
import types

import pytest
import trio
import trio.testing

from storage import fsync_worker


async def test_runs_the_call_in_another_thread_and_reuses_the_worker():
    seen: list[tuple[int, int]] = []

    def record(arg: int) -> None:
        seen.append((arg, threading.get_ident()))

    await fsync_worker.run_in_worker(record, 1)
    started = fsync_worker._started
    for i in range(2, 6):
        await fsync_worker.run_in_worker(record, i)
    assert [arg for arg, _ in seen] == [1, 2, 3, 4, 5]
    assert all(ident != threading.get_ident() for _, ident in seen)
    assert fsync_worker._started == started  # one call at a time: an idle worker each time


async def test_an_error_in_the_call_is_raised_in_the_caller_and_the_worker_serves_again():
    def broken(_: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(OSError) as info:
        await fsync_worker.run_in_worker(broken, 0)
    assert info.value.errno == errno.EIO
    done: list[int] = []
    await fsync_worker.run_in_worker(done.append, 7)  # no stale error left behind
    assert done == [7]


async def test_concurrent_calls_run_at_once_on_distinct_workers():
    n = 4
    barrier = threading.Barrier(n, timeout=30)  # each call waits until all n run at once
    idents: set[int] = set()

    def meet(_: int) -> None:
        barrier.wait()
        idents.add(threading.get_ident())

    async with trio.open_nursery() as nursery:
        for i in range(n):
            nursery.start_soon(fsync_worker.run_in_worker, meet, i)
    assert len(idents) == n


async def test_past_max_workers_calls_go_through_to_thread(monkeypatch):
    monkeypatch.setattr(fsync_worker, "MAX_WORKERS", fsync_worker._started)
    monkeypatch.setattr(fsync_worker, "_idle", [])
    used: list[str] = []
    real = trio.to_thread.run_sync

    async def to_thread(fn, *args, **kwargs):
        used.append("to_thread")
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(trio.to_thread, "run_sync", to_thread)
    done: list[int] = []
    await fsync_worker.run_in_worker(done.append, 3)
    assert done == [3] and used == ["to_thread"]


async def test_a_cancelled_caller_returns_only_after_its_call_ended():
    started, release = threading.Event(), threading.Event()
    order: list[str] = []
    scope = trio.CancelScope()

    def blocking(_: int) -> None:
        started.set()
        order.append("call released" if release.wait(30) else "call timed out")

    async def caller() -> None:
        with scope:
            try:
                await fsync_worker.run_in_worker(blocking, 0)
            except trio.Cancelled:
                order.append("caller cancelled")
                raise
        order.append("caller left")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(caller)
        await trio.to_thread.run_sync(started.wait, 30)
        scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert order == []  # cancelled, but still waiting for the call
        release.set()
    assert order == ["call released", "caller cancelled", "caller left"]
    done: list[int] = []
    await fsync_worker.run_in_worker(done.append, 1)  # the worker went back to the pool
    assert done == [1]


def _sync_in_child() -> list[int]:
    done: list[int] = []
    trio.run(fsync_worker.run_in_worker, done.append, 5)
    return done


async def test_a_forked_child_starts_its_own_workers():
    await fsync_worker.run_in_worker(lambda _: None, 0)  # the parent has an idle worker
    assert fsync_worker._idle
    context = multiprocessing.get_context("fork")

    def fork_and_sync() -> list[int]:
        with context.Pool(1) as pool:
            return pool.apply_async(_sync_in_child).get(timeout=60)

    # Without the at-fork reset the child's call goes to the parent's worker (their eventfds are
    # shared) and never runs in the child: [].
    assert await trio.to_thread.run_sync(fork_and_sync) == [5]


async def test_when_no_worker_can_start_the_call_goes_through_to_thread(monkeypatch):
    monkeypatch.setattr(fsync_worker, "_idle", [])
    started = fsync_worker._started

    class NoThread:
        def __init__(self, **_: object) -> None:
            pass

        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(fsync_worker, "threading", types.SimpleNamespace(Thread=NoThread))
    done: list[int] = []
    await fsync_worker.run_in_worker(done.append, 9)
    assert done == [9] and fsync_worker._started == started
