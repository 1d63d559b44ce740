"""Transactions v2 (KIP-890 part 2) in the coordinator: the cases of Kafka's
TransactionCoordinatorTest for TV_2 (and the TV_0 ones they are paired with), on real logs.

EndTxn v5 (client_version 2) bumps the epoch at every end and answers the next transaction's
producer id and epoch; a retry names the epoch before the bump; Empty and Complete* take an
abort; an exhausted epoch moves to a new producer id at epoch 0. EndTxn v0-v4 keep the classic
rules on the same broker. Markers carry the bumped epoch.
"""

from __future__ import annotations

import pytest

from coordinator.broker.partition import AppendResult, Partition
from coordinator.txn.end_txn import EndTxnParams
from coordinator.txn.records import TransactionRecord, decode_record
from coordinator.txn.state import MAX_EPOCH
from coordinator.txn.state import TransactionState as S
from protocol.errors import ErrorCode as E
from storage.batch import iter_records
from storage.batch.control import read_marker
from tests.support.txn import TxnHarness


def _markers(part: Partition) -> list[tuple[int, int, bool]]:
    """(producer id, epoch, commit) of every control batch of the partition."""
    found = []
    for header, raw in part.log.iter_batches():
        if header.is_control:
            found.append((header.producer_id, header.producer_epoch, read_marker(raw).commit))
    return found


async def _put(h: TxnHarness, record: TransactionRecord) -> None:
    """Write a transactional id's metadata as it would be after a long history."""

    def op(ctx, rec):
        ctx.apply(rec)

    await h.runtime.run_op(h.txn.partition_for(record.transactional_id), op, record)


async def test_every_v2_end_bumps_the_epoch_and_answers_the_next_one(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        assert await h.add(pid, 0, ("t", 0), client_version=2) == E.NONE
        await h.produce(pid, 0, 0, b"a")
        answer = await h.end_v2(pid, 0, commit=True)
        assert (answer.error, answer.producer_id, answer.producer_epoch) == (E.NONE, pid, 1)
        meta = await h.settled()  # (the markers are written after the answer)
        assert (meta.state, meta.producer_epoch, meta.last_producer_epoch, meta.client_version) == (
            S.COMPLETE_COMMIT,
            1,
            0,
            2,
        )
        part = h.data.partition("t", 0)
        assert _markers(part) == [(pid, 1, True)]  # the marker carries the bumped epoch
        assert part.last_stable_offset == 2
        assert await h.add(pid, 0, ("t", 1), client_version=2) == E.PRODUCER_FENCED  # the old epoch
        assert await h.add(pid, 1, ("t", 0), client_version=2) == E.NONE  # the next transaction
        await h.produce(pid, 1, 0, b"b")
        aborted = await h.end_v2(pid, 1, commit=False)
        assert (aborted.producer_id, aborted.producer_epoch) == (pid, 2)
        await h.settled()
        assert _markers(part) == [(pid, 1, True), (pid, 2, False)]
        assert part.aborted_transactions(0, part.read(0, 1 << 20, True)) == [(pid, 2)]


async def test_a_v2_retry_names_the_epoch_before_the_bump(tmp_path, autojump_clock):
    # testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2 / ...AbortInV2 /
    # shouldReturnInvalidTxnRequestOnEndTxnV2IfNotEndTxnV2Retry
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0), client_version=2)
        assert (await h.end_v2(pid, 0, commit=True)).producer_epoch == 1
        retried = await h.end_v2(pid, 0, commit=True)  # while the markers are written
        assert retried.error == E.CONCURRENT_TRANSACTIONS
        await h.settled()
        retry = await h.end_v2(pid, 0, commit=True)  # the answer was lost: the same request again
        assert (retry.error, retry.producer_id, retry.producer_epoch) == (E.NONE, pid, 1)
        assert (await h.end_v2(pid, 0, commit=False)).error == E.INVALID_TXN_STATE  # retry, other outcome
        assert (await h.end_v2(pid, 1, commit=True)).error == E.INVALID_TXN_STATE  # not a retry: nothing open
        assert (await h.end_v2(pid, 5, commit=True)).error == E.PRODUCER_FENCED
        assert (await h.end_v2(pid + 9, 1, commit=True)).error == E.INVALID_PRODUCER_ID_MAPPING
        assert h.meta().producer_epoch == 1  # none of them wrote anything


async def test_a_v2_client_aborts_what_it_never_added(tmp_path, autojump_clock):
    # TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2 / ...ForCommitInV2 /
    # shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        assert (await h.end_v2(pid, 0, commit=True)).error == E.INVALID_TXN_STATE  # Empty takes no commit
        assert (await h.end(pid, 0, commit=False)) == E.INVALID_TXN_STATE  # nor a v1 abort
        empty = await h.end_v2(pid, 0, commit=False)
        assert (empty.error, empty.producer_epoch) == (E.NONE, 1)
        meta = await h.settled()
        assert (meta.state, meta.partitions, meta.start_ms) == (S.COMPLETE_ABORT, set(), meta.last_update_ms)
        again = await h.end_v2(pid, 1, commit=False)  # CompleteAbort takes another empty abort
        assert (again.error, again.producer_epoch) == (E.NONE, 2)
        await h.settled()
        assert (await h.end_v2(pid, 1, commit=False)).producer_epoch == 2  # ...and its retry
        assert (await h.end_v2(pid, 0, commit=False)).error == E.PRODUCER_FENCED


async def test_an_exhausted_epoch_moves_to_a_new_producer_id(tmp_path, autojump_clock):
    # shouldGenerateNewProducerIdIfEpochsExhaustedV2 / shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await _put(
            h, TransactionRecord("tx", pid, MAX_EPOCH - 1, 60_000, S.ONGOING, (("t", 0),), 0, 0, pid, client_version=2)
        )
        await h.produce(pid, MAX_EPOCH - 1, 0, b"last")
        answer = await h.end_v2(pid, MAX_EPOCH - 1, commit=True)
        assert answer.error == E.NONE and answer.producer_id != pid and answer.producer_epoch == 0
        meta = await h.settled()
        assert (meta.producer_id, meta.producer_epoch, meta.previous_producer_id) == (answer.producer_id, 0, pid)
        assert _markers(h.data.partition("t", 0)) == [(pid, MAX_EPOCH, True)]  # the old id's last marker
        retry = await h.end_v2(pid, MAX_EPOCH - 1, commit=True)
        assert (retry.error, retry.producer_id, retry.producer_epoch) == (E.NONE, answer.producer_id, 0)
        assert await h.add(answer.producer_id, 0, ("t", 1), client_version=2) == E.NONE


async def test_v1_clients_keep_their_epoch_on_a_v2_broker(tmp_path, autojump_clock):
    # testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV1: the request version decides.
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0))
        v1 = await h.txn.end_txn(EndTxnParams("tx", pid, 0, True))  # EndTxn v0-v4
        assert (v1.error, v1.producer_id, v1.producer_epoch) == (E.NONE, -1, -1)
        meta = await h.settled()
        assert (meta.state, meta.producer_epoch, meta.client_version) == (S.COMPLETE_COMMIT, 0, 0)
        assert await h.end(pid, 0, commit=True) == E.NONE  # the v1 retry: the same epoch
        assert _markers(h.data.partition("t", 0)) == [(pid, 0, True)]


async def test_the_log_holds_value_v1_with_the_client_version(tmp_path, autojump_clock):
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0), client_version=2)
        await h.end_v2(pid, 0, commit=False)
        await h.settled()
        log = h.runtime.writer.log(h.txn.partition_for("tx"))
        values = [r.value for _, raw in log.iter_batches() for r in iter_records(raw)]
    assert {v[:2] for v in values} == {b"\x00\x01"}  # TransactionLogValue v1 (transaction.version 2)
    states = [decode_record(b"\x00\x00\x00\x02tx", v) for v in values]
    assert [(r.state, r.producer_epoch, r.client_version) for r in states] == [
        (S.EMPTY, 0, 0),
        (S.ONGOING, 0, 2),
        (S.PREPARE_ABORT, 1, 2),
        (S.COMPLETE_ABORT, 1, 2),
    ]


async def test_a_fence_bumps_once_at_transaction_version_2(tmp_path, autojump_clock):
    # testTV2AllowsEpochReBumpingAfterFailedWrite: Ongoing at 1, InitProducerId -> aborted at 2 -> 3.
    h = TxnHarness(tmp_path)
    async with h.running():
        pid = (await h.init()).producer_id
        await _put(h, TransactionRecord("tx", pid, 1, 60_000, S.ONGOING, (("t", 0),), 0, 0, pid, client_version=2))
        assert (await h.init()).error == E.CONCURRENT_TRANSACTIONS
        meta = await h.settled()
        assert (meta.state, meta.producer_epoch, meta.last_producer_epoch) == (S.COMPLETE_ABORT, 2, 1)
        again = await h.init()
        assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, pid, 3)


@pytest.mark.parametrize("version", [0, 2])
async def test_the_next_transaction_waits_for_the_markers_in_flight(tmp_path, autojump_clock, monkeypatch, version):
    # Kafka answers CONCURRENT_TRANSACTIONS and the producer retries 20 ms later; kgc's
    # AddPartitions waits for the markers instead, and is answered as if it came after them.
    import trio

    h = TxnHarness(tmp_path)
    release, real = trio.Event(), Partition.make_durable

    async def slow_disk(self, result, wait_for):
        await release.wait()
        await real(self, result, wait_for)

    monkeypatch.setattr(Partition, "make_durable", slow_disk)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0), client_version=version)
        if version == 2:
            assert (await h.end_v2(pid, 0, commit=True)).producer_epoch == 1
        else:
            assert await h.end(pid, 0, commit=True) == E.NONE  # answered: the decision is durable
        answers = []

        async def next_transaction():
            answers.append(await h.add(pid, version // 2, ("t", 1), client_version=version))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(next_transaction)
            await trio.sleep(0.5)
            assert answers == [] and h.meta().state is S.PREPARE_COMMIT  # parked on the markers
            release.set()
        assert answers == [E.NONE] and h.meta().state is S.ONGOING


@pytest.mark.parametrize("version", [0, 2])
async def test_a_failed_marker_is_retried_and_meanwhile_the_id_is_busy(tmp_path, autojump_clock, monkeypatch, version):
    import trio

    h = TxnHarness(tmp_path)
    real = Partition.append_marker
    failures = []

    def full_disk(self, *args):
        if not failures:
            failures.append(args)
            return AppendResult(E.KAFKA_STORAGE_ERROR, -1, 0, "No space left on device"), -1
        return real(self, *args)

    monkeypatch.setattr(Partition, "append_marker", full_disk)
    async with h.running():
        pid = (await h.init()).producer_id
        await h.add(pid, 0, ("t", 0), client_version=version)
        if version == 2:
            answer = await h.end_v2(pid, 0, commit=True)
            assert (answer.error, answer.producer_epoch) == (E.NONE, 1)
        else:
            assert await h.end(pid, 0, commit=True) == E.NONE
        with trio.fail_after(5):
            while not failures:
                await trio.sleep(0.001)
        assert h.meta().state is S.PREPARE_COMMIT  # the marker waits for its retry
        # Kafka's pending-transition check comes first: even the next id and epoch are busy.
        assert await h.add(pid, version // 2, ("t", 1), client_version=version) == E.CONCURRENT_TRANSACTIONS
        meta = await h.settled()  # the retry (after its backoff) writes the marker
        assert meta.state is S.COMPLETE_COMMIT
        assert _markers(h.data.partition("t", 0)) == [(pid, version // 2, True)]


async def test_an_unawaited_op_is_written_at_once_and_may_not_answer_anyone(tmp_path, autojump_clock):
    # CoordinatorRuntime.run_op_unawaited, what writes Complete*: appended now, no durable wait.
    from dataclasses import replace

    from coordinator.runtime.operation import ParkedReply

    h = TxnHarness(tmp_path)
    async with h.running():
        await h.init()
        partition = h.txn.partition_for("tx")
        log = h.runtime.writer.log(partition)
        end = log.log_end_offset
        later = replace(h.meta(), last_update_ms=h.meta().last_update_ms + 5)

        def touch(ctx, meta):
            ctx.apply(TransactionRecord("tx", meta.producer_id, meta.producer_epoch, 60_000, S.EMPTY, (), 99, -1))

        h.runtime.run_op_unawaited(partition, touch, later)
        assert log.log_end_offset == end + 1 and h.meta().last_update_ms == 99

        def parks(ctx, _):
            ctx.complete(ParkedReply(), 1)

        with pytest.raises(RuntimeError):
            h.runtime.run_op_unawaited(partition, parks, None)
        assert h.runtime.unavailable(partition) is not None  # failed: it reloads from its log
        await h.runtime.settled(partition)
        assert h.meta().last_update_ms == 99  # what was written is what the log says
