"""`kgc dump --share-group-state-decoder` on a __share_group_state partition the share
coordinator wrote (its runtime, real files), in Kafka's ShareGroupStateMessageParser format."""

from __future__ import annotations

import json

import pytest

from coordinator.__main__ import main
from coordinator.share.persister import StateBatch
from coordinator.share.state.placement import SHARE_STATE_TOPIC, topic_id_text
from protocol.errors import ErrorCode as E
from tests.support.share_state import ShareStateHarness


async def test_dump_decodes_what_the_coordinator_wrote(tmp_path, autojump_clock, capsys):
    h = ShareStateHarness(tmp_path)
    key = h.key("dumped", 2)
    async with h.running():
        assert await h.service.initialize(key, 3, 40) == E.NONE
        assert await h.service.write(key, 3, 0, 40, 1, (StateBatch(40, 40, 2, 1),)) == E.NONE
        assert await h.service.delete(key) == E.NONE
    with pytest.raises(SystemExit) as exit_info:
        partition_dir = tmp_path / f"{SHARE_STATE_TOPIC}-{h.service.partition_for(key)}"
        main(["dump", str(partition_dir), "--share-group-state-decoder"])
    assert exit_info.value.code == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| offset:")]
    decoded = [
        (json.loads(line.split(" key: ", 1)[1].split(" payload: ", 1)[0]), line.split(" payload: ", 1)[1])
        for line in lines
    ]
    data = {"groupId": "dumped", "topicId": topic_id_text(h.topic.topic_id), "partition": 2}
    assert [k for k, _ in decoded] == [
        {"type": "0", "data": data},
        {"type": "1", "data": data},
        {"type": "0", "data": data},
    ]
    snapshot = json.loads(decoded[0][1])
    assert snapshot["version"] == "0"
    assert snapshot["data"] | {"createTimestamp": 0, "writeTimestamp": 0} == {
        "snapshotEpoch": 0,
        "stateEpoch": 3,
        "leaderEpoch": 0,
        "startOffset": 40,
        "createTimestamp": 0,
        "writeTimestamp": 0,
        "deliveryCompleteCount": 0,
        "stateBatches": [],
    }
    assert json.loads(decoded[1][1])["data"] == {
        "snapshotEpoch": 0,
        "leaderEpoch": 0,
        "startOffset": 40,
        "deliveryCompleteCount": 1,
        "stateBatches": [{"firstOffset": 40, "lastOffset": 40, "deliveryState": 2, "deliveryCount": 1}],
    }
    assert decoded[2][1] == "<DELETE>"
