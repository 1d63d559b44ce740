"""`kgc transcript FILE --group G` on a transcript written by a real server running the lesson
(join -> sync -> heartbeat -> rebalance -> leave) from tests/coordinator/test_transcript.py."""

from __future__ import annotations

import pytest

from coordinator.__main__ import main
from coordinator.embed.embedded import open_server
from tests.coordinator.test_transcript import run_lesson


@pytest.fixture
async def path(tmp_path):
    path = tmp_path / "t.jsonl"
    async with open_server(tmp_path / "data", settings={"transcript.file": str(path)}) as server:
        await run_lesson(server)
    return path


def render(path, capsys, *extra: str) -> list[str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), *extra])
    assert exit_info.value.code == 0
    return capsys.readouterr().out.splitlines()


async def test_the_lesson_reads_as_a_timeline(path, capsys):
    lines = render(path, capsys, "--group", "teach")
    text = "\n".join(lines)
    assert lines[0].split()[:4] == ["0.000", "consumer-a", "->", "JoinGroup"]
    assert (
        "<- JoinGroup  MEMBER_ID_REQUIRED: JoinGroup v5 without a member id: rejoin with member id 'consumer-a-" in text
    )
    assert "<- Heartbeat  ILLEGAL_GENERATION: request generation 1, group generation 2" in text
    assert "== Stable -> PreparingRebalance (generation 1)  because JoinGroup from client 'consumer-b'" in text
    assert "== PreparingRebalance -> Empty (generation 4)  because LeaveGroup from client 'consumer-a'" in text
    assert "<- SyncGroup  your assignment: orders(2)" in text
    assert "++ __consumer_offsets-17@2 group metadata: generation 2, protocol range" in text
    # uuids are cut to their first 8 hex digits everywhere
    assert all(len(word) < 40 for line in lines for word in line.split())


async def test_another_group_shows_nothing(path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--group", "other"])
    assert exit_info.value.code == 1 and capsys.readouterr().out == ""


def test_leader_moves_are_shown_with_their_cause():
    import io

    from coordinator.tools.transcript_render import render

    lines = [
        '{"ts": 1000, "type": "leader", "topic": "__consumer_offsets", "partition": 7, "from": 0, '
        '"to": 1, "epoch": 1, "reason": "broker 0 went down"}\n',
        '{"ts": 1500, "type": "leader", "topic": "orders", "partition": 0, "from": 1, '
        '"to": -1, "epoch": 2, "reason": "made leaderless on request"}\n',
    ]
    out = io.StringIO()
    assert render(lines, None, out) == 0
    assert out.getvalue().splitlines() == [
        "   0.000  [cluster]    >> __consumer_offsets-7 leader broker 0 -> broker 1 (epoch 1)  because broker 0 went down",
        "   0.500  [cluster]    >> orders-0 leader broker 1 -> no leader (epoch 2)  because made leaderless on request",
    ]
