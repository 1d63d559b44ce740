"""The transaction coordinator end to end inside one process: requests, records, markers, timers.

Real logs (data path, __consumer_offsets, __transaction_state), MockClock time; every answer is
Kafka's (TransactionCoordinator) for the same request.
"""

from __future__ import annotations

from coordinator.groups.offset_requests import CommitPartition, FetchGroup, OffsetFetchParams
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams
from coordinator.txn.state import TransactionState as S
from protocol.errors import ErrorCode as E
from tests.support.txn import TxnHarness


async def test_a_committed_transaction_is_marked_everywhere_and_completes(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        first = await h.init()
        assert (first.error, first.producer_epoch) == (E.NONE, 0)
        pid = first.producer_id
        assert await h.add(pid, 0, ("t", 0), ("t", 1)) == E.NONE
        await h.produce(pid, 0, 0, b"a")
        await h.produce(pid, 0, 1, b"b")
        part = h.data.partition("t", 0)
        assert part.last_stable_offset == 0
        assert h.meta().state is S.ONGOING
        assert await h.end(pid, 0, commit=True) == E.NONE
        done = await h.settled()
        assert done.state is S.COMPLETE_COMMIT and done.partitions == set()
        assert part.last_stable_offset == 2 and h.data.partition("t", 1).last_stable_offset == 2
        assert await h.end(pid, 0, commit=True) == E.NONE  # a retry of a completed EndTxn
        assert await h.end(pid, 0, commit=False) == E.INVALID_TXN_STATE


async def test_bad_requests_get_kafkas_errors(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        assert await h.add(5, 0, ("t", 0)) == E.INVALID_PRODUCER_ID_MAPPING  # before InitProducerId
        pid = (await h.init()).producer_id
        assert await h.end(pid, 0, commit=True) == E.INVALID_TXN_STATE  # Empty: nothing to end
        assert await h.add(pid + 1, 0, ("t", 0)) == E.INVALID_PRODUCER_ID_MAPPING
        assert (await h.init()).producer_epoch == 1  # a second producer with the same id
        assert await h.add(pid, 0, ("t", 0)) == E.PRODUCER_FENCED  # the stale epoch
        assert await h.end(pid, 0, commit=False) == E.PRODUCER_FENCED
        assert (await h.init(timeout_ms=10**9)).error == E.INVALID_TRANSACTION_TIMEOUT
        assert (await h.init(txn_id="")).error == E.INVALID_REQUEST


async def test_init_during_a_transaction_fences_and_aborts_it(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0))
        await h.produce(pid, 0, 0, b"zombie-data")
        assert (await h.init()).error == E.CONCURRENT_TRANSACTIONS
        meta = await h.settled()
        assert (meta.state, meta.producer_epoch) == (S.COMPLETE_ABORT, 1)
        part = h.data.partition("t", 0)
        assert part.aborted_transactions(0, part.read(0, 1 << 20, True)) == [(pid, 0)]
        late = await h.produce(pid, 0, 0, b"late", seq=1)
        assert late.error == E.INVALID_PRODUCER_EPOCH  # the fenced producer's append
        again = await h.init()
        assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, pid, 2)


async def test_kip_360_resumes_after_an_abort_with_the_current_epoch(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0))
        assert await h.end(pid, 0, commit=False) == E.NONE
        await h.settled()
        bumped = await h.init(pid=pid, epoch=0)
        assert (bumped.error, bumped.producer_epoch) == (E.NONE, 1)
        retry = await h.init(pid=pid, epoch=0)  # its answer got lost: the same epoch again
        assert (retry.error, retry.producer_epoch) == (E.NONE, 1)
        assert (await h.init(pid=pid, epoch=7)).error == E.PRODUCER_FENCED
        assert (await h.init(pid=pid + 1, epoch=1)).error == E.PRODUCER_FENCED


async def test_a_hung_transaction_is_aborted_by_its_timeout(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path, transaction_abort_timed_out_transaction_cleanup_interval_ms=500)
    async with h.running():
        pid = (await h.init(timeout_ms=2_000)).producer_id
        await h.add(pid, 0, ("t", 1))
        await h.produce(pid, 0, 1, b"never-committed")
        part = h.data.partition("t", 1)
        assert part.last_stable_offset == 0
        while h.meta().state is S.ONGOING:  # virtual time: the coordinator's periodic check
            await part_waiter(part)
        meta = await h.settled()
        assert (meta.state, meta.producer_epoch) == (S.COMPLETE_ABORT, 1)
        assert part.last_stable_offset == 2
        assert await h.end(pid, 0, commit=True) == E.PRODUCER_FENCED


async def part_waiter(part) -> None:
    import trio

    event = trio.Event()
    part.add_waiter(event)
    with trio.move_on_after(1):
        await event.wait()
    part.remove_waiter(event)


async def test_idle_ids_expire(tmp_path, autojump_clock):
    import trio

    h = TxnHarness(
        tmp_path, transactional_id_expiration_ms=5_000, transaction_remove_expired_transaction_cleanup_interval_ms=1_000
    )
    async with h.running():
        await h.init()
        assert h.meta() is not None
        await trio.sleep(7)
        assert h.meta() is None
        assert h.txn.describe("tx").error == E.TRANSACTIONAL_ID_NOT_FOUND


async def test_offsets_in_a_transaction_wait_for_its_marker(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        assert await h.add_offsets(pid, 0, "g") == E.NONE
        result = await h.groups.commit_transactional_offsets(
            TxnOffsetCommitParams("tx", "g", pid, 0, [("t", [CommitPartition(0, 42)])])
        )
        assert result.error == E.NONE
        stable = OffsetFetchParams([FetchGroup("g", [("t", [0])])], require_stable=True)
        [fetched] = await h.groups.fetch_offsets(stable)
        assert fetched.topics[0][1][0].error == E.UNSTABLE_OFFSET_COMMIT
        [plain] = await h.groups.fetch_offsets(OffsetFetchParams([FetchGroup("g", [("t", [0])])]))
        assert plain.topics[0][1][0].offset == -1
        assert await h.end(pid, 0, commit=True) == E.NONE
        await h.settled()
        [fetched] = await h.groups.fetch_offsets(stable)
        assert (fetched.topics[0][1][0].error, fetched.topics[0][1][0].offset) == (E.NONE, 42)


async def test_aborted_offsets_are_dropped_and_a_reload_agrees(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        for commit, offset in ((True, 10), (False, 20), (None, 30)):
            epoch = h.meta().producer_epoch
            await h.add_offsets(pid, epoch, "g")
            await h.groups.commit_transactional_offsets(
                TxnOffsetCommitParams("tx", "g", pid, epoch, [("t", [CommitPartition(0, offset)])])
            )
            if commit is not None:
                await h.end(pid, epoch, commit)
                await h.settled()
        shard = h.groups.shard_for("g")
        assert shard.offsets.get("g", "t", 0).offset == 10
        assert shard.txn_offsets.has_pending("g", "t", 0)
        partition = h.groups.partition_for("g")
        await h.groups_runtime.load(partition)  # what a restart or a coordinator move does
        reloaded = h.groups.shard_for("g")
        assert reloaded is not shard and reloaded.offsets.get("g", "t", 0).offset == 10
        assert reloaded.txn_offsets.snapshot() == shard.txn_offsets.snapshot()
        assert h.groups_runtime.stats[partition].transactional


async def test_txn_offset_commit_checks_the_group_kip_447(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add_offsets(pid, 0, "nobody")
        unknown = await h.groups.commit_transactional_offsets(
            TxnOffsetCommitParams(
                "tx", "nobody", pid, 0, [("t", [CommitPartition(0, 1)])], generation_id=3, member_id="m"
            )
        )
        assert unknown.error == E.ILLEGAL_GENERATION  # an unknown group with a generation
        simple = await h.groups.commit_transactional_offsets(
            TxnOffsetCommitParams("tx", "nobody", pid, 0, [("t", [CommitPartition(0, 1)])])
        )
        assert simple.error == E.NONE
        member = await h.groups.commit_transactional_offsets(
            TxnOffsetCommitParams(
                "tx", "nobody", pid, 0, [("t", [CommitPartition(0, 1)])], generation_id=0, member_id="ghost"
            )
        )
        assert member.error == E.UNKNOWN_MEMBER_ID


async def test_a_moved_coordinator_finishes_a_decided_transaction(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0))
        await h.produce(pid, 0, 0, b"x")
        partition = h.txn.partition_for("tx")
        h.runtime.relocate(partition, led=True)  # the coordinator moves...
        assert h.runtime.unavailable(partition).error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        await h.runtime.settled(partition)
        assert await h.end(pid, 0, commit=True) == E.NONE
        h.runtime.relocate(partition, led=True)  # ...and again, before or after its markers
        await h.runtime.settled(partition)
        meta = await h.settled()
        assert meta.state is S.COMPLETE_COMMIT
        part = h.data.partition("t", 0)  # both coordinators may have written the marker: no harm
        assert part.last_stable_offset == part.high_watermark >= 2
        assert part.aborted_transactions(0, part.read(0, 1 << 20, True, committed=True)) == []
