"""The Prometheus endpoint of a real server: scrape it after a group forms and check the counts."""

from __future__ import annotations

import re
import urllib.request

import trio

from coordinator.embed.embedded import open_server
from storage.cleaner_policy import CleanStats, write_cleaner_checkpoint
from tests.coordinator.test_transcript import GROUP, assignment, heartbeat, join, sync
from tests.integration.raw_client import RawClient


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def value(text: str, sample: str) -> float:
    match = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    assert match, f"{sample} not in the scrape"
    return float(match.group(1))


async def test_scrape_counts_requests_groups_rebalances_and_records(tmp_path):
    async with open_server(tmp_path / "data", settings={"metrics.port": 0}) as server:
        port = server.metrics_port
        client = await RawClient.connect(server.host, server.port)
        first = await join(client)
        joined = await join(client, first.member_id)
        await sync(client, joined.member_id, 1, {joined.member_id: assignment(0)})
        await heartbeat(client, joined.member_id, 1)
        await heartbeat(client, joined.member_id, 7)  # ILLEGAL_GENERATION
        await client.aclose()
        writer = server.runtime.writer
        write_cleaner_checkpoint(str(writer.partition_dir(server.broker.groups.partition_for(GROUP))), 1)
        server.broker.tap.cleaned(7, CleanStats(bytes_in=1000, bytes_out=400))  # as the writer reports a round
        offsets_partition = server.broker.groups.partition_for(GROUP)
        written = writer.log(offsets_partition).size_bytes  # the batches' bytes, not the preallocated file
        text = await trio.to_thread.run_sync(scrape, port)
    assert 0 < written < 4096
    assert value(text, f'kgc_offsets_log_size_bytes{{partition="{offsets_partition}"}}') == written
    assert value(text, 'kgc_requests_total{api="JoinGroup"}') == 2
    assert value(text, 'kgc_requests_total{api="Heartbeat"}') == 2
    assert value(text, 'kgc_request_errors_total{api="JoinGroup",error="MEMBER_ID_REQUIRED"}') == 1
    assert value(text, 'kgc_request_errors_total{api="Heartbeat",error="ILLEGAL_GENERATION"}') == 1
    assert value(text, 'kgc_request_duration_seconds_count{api="SyncGroup"}') == 1
    assert value(text, 'kgc_groups{state="Stable"}') == 1
    assert value(text, 'kgc_groups{state="Empty"}') == 0
    assert value(text, "kgc_group_members") == 1
    assert value(text, "kgc_rebalances_total") == 1
    assert value(text, 'kgc_group_transitions_total{from="CompletingRebalance",to="Stable"}') == 1
    # Two GroupMetadata records: the new (empty) group, then generation 1 with the leader's assignment.
    assert value(text, "kgc_offsets_records_written_total") == 2
    assert value(text, "kgc_offsets_durable_wait_seconds_count") >= 2
    partition = re.search(r'kgc_offsets_log_size_bytes\{partition="(\d+)"\} (\S+)', text)
    assert partition and float(partition.group(2)) > 0
    assert value(text, f'kgc_offsets_cleaner_checkpoint_offset{{partition="{partition.group(1)}"}}') == 1
    assert value(text, 'kgc_offsets_cleaner_rounds_total{partition="7"}') == 1
    assert value(text, 'kgc_offsets_cleaner_bytes_total{direction="in",partition="7"}') == 1000


async def test_metrics_are_off_by_default(tmp_path):
    async with open_server(tmp_path / "data") as server:
        assert server.broker.tap is None and server.metrics_port is None
