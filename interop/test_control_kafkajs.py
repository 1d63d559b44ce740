"""The control plane's core fault scenarios with kafkajs, driven over HTTP from node (issue 13, "Show").

The server listens with its HTTP control API (`control.port`); interop/js/kafkajs-control.mjs
installs each fault rule, advances the manual clock and reads groups, rules and the request log
with fetch(), runs kafkajs 2.2.4 consumers, waits on conditions, and prints what it saw. This
test asserts on that, and cross-checks with the in-process `.control` of the same server:

- NOT_COORDINATOR on one OffsetCommit: kafkajs does not ask FindCoordinator again (unlike the
  other clients): its offset manager refreshes Metadata and its retry commits to the coordinator
  it has cached, which succeeds here. (A coordinator that really moved answers NOT_COORDINATOR
  again; the retries run out, and kafkajs treats the error as a rebalance: it rejoins, which
  starts with FindCoordinator.)
- COORDINATOR_LOAD_IN_PROGRESS on three JoinGroups: the group of two still forms.
- REBALANCE_IN_PROGRESS on the leader's Heartbeat while Stable: a rebalance, Stable again.
- A dropped SyncGroup answer: kafkajs times out (requestTimeout 2.5 s) and joins again.
- 500 ms on every Fetch: every faulted Fetch was answered >= 500 ms after it was received.
- The manual clock advanced past one member's session: expired within the advance; the other
  two rebalance.

Deadlines only bound a hang.
"""

from __future__ import annotations

import pytest

from coordinator.embed.embedded import EmbeddedServer
from interop.clients.node import run_node

pytestmark = pytest.mark.interop

PARTITIONS = 3
SETTINGS = {"group.initial.rebalance.delay.ms": 200, "group.min.session.timeout.ms": 500, "control.port": 0}


def _run(tmp_path, topic, group, scenario, **settings):
    with EmbeddedServer(tmp_path / "data", settings={**SETTINGS, **settings}, topics={topic: PARTITIONS}) as server:
        result, run = run_node(
            "kafkajs-control.mjs", server.control_url, server.bootstrap, topic, group, scenario, timeout=45
        )
        return result, run, server.control.faults()


def test_not_coordinator_on_one_offset_commit(tmp_path, topic_name):
    result, run, _ = _run(tmp_path, topic_name, "kjs-nc", "not_coordinator")
    assert result["hits"] == 1, run.describe()
    faulted = next(e for e in result["commits"] if e["fault"] == result["rule"])
    assert [x["name"] for x in faulted["errors"]] == ["NOT_COORDINATOR"]
    refreshed = [e for e in result["metadata"] if e["cursor"] > faulted["cursor"]]
    assert refreshed, f"kafkajs did not refresh Metadata after NOT_COORDINATOR\n{run.describe()}"
    assert not [e for e in result["findCoordinator"] if e["cursor"] > faulted["cursor"]], run.describe()
    assert any(e["cursor"] > refreshed[0]["cursor"] and not e["errors"] for e in result["commits"]), run.describe()


def test_coordinator_load_in_progress_on_three_join_groups(tmp_path, topic_name):
    result, run, faults = _run(tmp_path, topic_name, "kjs-clip", "load_in_progress")
    assert result["hits"] == 3 and faults[0].hits == 3, run.describe()
    assert result["view"]["state"] == "Stable" and len(result["view"]["members"]) == 2


def test_rebalance_in_progress_on_the_leaders_heartbeat_while_stable(tmp_path, topic_name):
    result, run, _ = _run(tmp_path, topic_name, "kjs-rip", "rebalance_in_progress")
    assert result["hits"] == 1, run.describe()
    assert result["after"]["generation"] > result["before"]["generation"] and result["after"]["state"] == "Stable"


def test_a_dropped_sync_group_response(tmp_path, topic_name):
    result, run, _ = _run(tmp_path, topic_name, "kjs-drop", "sync_dropped")
    assert result["hits"] == 1, run.describe()
    dropped = next(e for e in result["syncs"] if e["fault"] == result["rule"])
    assert dropped["answered_ms"] is None and dropped["response"]["error_code"] == 0  # applied, never answered
    assert any(
        e["cursor"] > dropped["cursor"] and e["answered_ms"] is not None and not e["errors"] for e in result["syncs"]
    ), run.describe()


def test_500_ms_on_every_fetch(tmp_path, topic_name):
    result, run, _ = _run(tmp_path, topic_name, "kjs-slow", "fetch_delay")
    assert result["took"], f"no Fetch met the rule\n{run.describe()}"
    assert min(result["took"]) >= 500, result["took"]


def test_manual_clock_past_one_members_session_expires_it_at_once(tmp_path, topic_name):
    result, run, _ = _run(
        tmp_path,
        topic_name,
        "kjs-clock",
        "manual_clock",
        **{"clock.mode": "manual", "group.initial.rebalance.delay.ms": 0},
    )
    assert result["quick"] in {m["client_id"] for m in result["held"]["members"]}, "its LeaveGroup was applied"
    assert result["clockBefore"]["mode"] == "manual"
    assert result["clockAfter"]["now_ms"] - result["clockBefore"]["now_ms"] == 6001
    assert result["quick"] not in {m["client_id"] for m in result["expired"]["members"]}, result["expired"]
    assert len(result["after"]["members"]) == 2 and result["after"]["state"] == "Stable"
    assert result["clockEnd"]["now_ms"] == result["clockAfter"]["now_ms"]
