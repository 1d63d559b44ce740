"""`kgc transcript --html` on a hand-written transcript: the data the page embeds (lanes, exchanges
with reasons, state bands, records, closed connections), its escaping (no `</script>` from a
client id), and the command's choices and failures. The browser side is interop/test_timeline_page.py."""

from __future__ import annotations

import json
import re

import pytest

from coordinator.__main__ import main
from coordinator.tools.transcript_events import BadTranscript, Selection, numbered
from coordinator.tools.transcript_html import embed_json, page, timeline
from tests.tools import transcript_sample as sample
from tests.tools.transcript_sample import ALICE, BOB, REBALANCING

HOSTILE = '</script><script>alert("x")</script><!-- \u2028 & </SCRIPT >'


def lines(**kw) -> list[str]:
    return [json.dumps(e) + "\n" for e in sample.events(**kw)]


def data_of(selection: Selection | None = None, **kw):
    return timeline(list(numbered(lines(**kw))), selection or Selection("shop"), "t.jsonl")


def test_a_lane_per_member_and_one_for_the_coordinator():
    data = data_of()
    assert data["lanes"] == [
        {"kind": "coordinator", "label": "coordinator", "sub": "group shop"},
        {"kind": "member", "label": "alice", "sub": "alice-0109dcd9", "member": ALICE},
        {"kind": "member", "label": "bob", "sub": "bob-7ba641b3", "member": BOB},
    ]


def test_exchanges_pair_requests_with_responses_on_their_members_lane():
    data = data_of()
    rows = [(x["lane"], x["api"], x["t"], x["tr"], [e["error"] for e in x["errors"]]) for x in data["exchanges"]]
    assert rows == [
        (1, "FindCoordinator", 0, 0, []),  # no member id: its client's only member
        (1, "JoinGroup", 10, 10, ["MEMBER_ID_REQUIRED"]),  # named by the answer (KIP-394)
        (1, "JoinGroup", 20, 20, []),
        (1, "SyncGroup", 30, 30, []),
        (2, "JoinGroup", 1000, 1401, []),  # parked until alice rejoined
        (1, "Heartbeat", 1200, 1200, ["REBALANCE_IN_PROGRESS"]),
        (1, "JoinGroup", 1400, 1400, []),
        (2, "LeaveGroup", 2000, 2000, []),
    ]  # bob's Fetch (no group) and the admin's DescribeGroups of `other` are not shop's
    heartbeat = data["exchanges"][5]
    assert heartbeat["errors"] == [{"code": 27, "error": "REBALANCE_IN_PROGRESS", "reason": REBALANCING}]
    assert heartbeat["ask"] == "member alice-0109dcd9, generation 1"
    assert heartbeat["answer"] == f"REBALANCE_IN_PROGRESS: {REBALANCING}"
    assert heartbeat["request"]["body"]["member_id"] == ALICE  # decoded events for the detail panel
    assert data["exchanges"][4]["answer"].startswith("generation 2, protocol range, leader alice-0109dcd9")


def test_state_bands_cover_the_time_axis_and_records_and_closes_are_marked():
    data = data_of()
    bands = [(b["state"], b["generation"], b["t"], b["t_end"]) for b in data["bands"]]
    assert bands == [
        ("Empty", None, 0, 20),
        ("PreparingRebalance", 0, 20, 20),
        ("CompletingRebalance", 1, 20, 30),
        ("Stable", 1, 30, 1000),
        ("PreparingRebalance", 1, 1000, 1400),
        ("CompletingRebalance", 2, 1400, 2000),
        ("PreparingRebalance", 2, 2000, 2100),
    ]
    assert data["bands"][4]["reason"] == f"JoinGroup from client 'bob' member '{BOB}'"
    assert [(r["t"], r["text"][:45]) for r in data["records"]] == [
        (31, "__consumer_offsets-12@1 group metadata: gener")
    ]
    assert data["closed"] == [{"t": 2100, "lane": 2, "reason": "client closed"}]  # bob's connection
    assert (data["group"], data["duration_ms"], data["start_ms"]) == ("shop", 2100, sample.events()[0]["ts"])


def test_filters_narrow_the_page_too():
    data = data_of(Selection.of("shop", member="bob"))
    assert [lane["label"] for lane in data["lanes"]] == ["coordinator", "bob"]
    assert [x["api"] for x in data["exchanges"]] == ["JoinGroup", "LeaveGroup"]


def test_the_embedded_json_cannot_end_the_script_element():
    data = data_of(bob_client=HOSTILE)
    assert data["lanes"][2]["label"] == HOSTILE
    text = page(data)
    embedded = re.search(r'<script type="application/json" id="kgc-data">(.*?)</script>', text, re.S).group(1)
    assert json.loads(embedded)["groups"] == [data]  # the escapes are JSON's own: the page reads back exactly this
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded and "\u2028" not in embedded
    # exactly the page's own two scripts open and close
    assert len(re.findall(r"<script", text, re.I)) == 2 and len(re.findall(r"</script", text, re.I)) == 2
    assert embed_json({"a": "</script>"}) == '{"a":"\\u003c/script\\u003e"}'


def test_the_title_is_escaped_and_nothing_is_fetched():
    data = data_of()
    data["group"] = "<b>shop</b> & co"
    text = page(data)
    assert "<title>kgc timeline: group &lt;b&gt;shop&lt;/b&gt; &amp; co</title>" in text
    # no external resource of any kind: the only URLs are data: and the SVG namespace name
    assert set(re.findall(r"(?:src|href)\s*=\s*[\"']?([^\"' >]*)", text)) <= {"data:,"}
    assert set(re.findall(r"https?://[^\s\"']+", text)) == {"http://www.w3.org/2000/svg"}
    assert "@import" not in text and "url(http" not in text and "innerHTML" not in text
    assert "default-src 'none'" in text  # and the page's CSP forbids any fetch


def test_the_command_writes_the_page(tmp_path, capsys):
    path = sample.write(tmp_path / "t.jsonl")
    out = tmp_path / "page.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--group", "shop", "--html", str(out)])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"kgc: wrote {out} (group shop: 2 member lanes, 8 exchanges, 2 with errors, 7 state bands)"
    )
    assert out.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("events", "extra", "message"),
    [
        ([e for e in sample.events() if not e.get("groups") and e["type"] != "transition"], [], "has no group to draw"),
        (None, ["--group", "nope"], "nothing of group 'nope' matches the filters"),
    ],
)
def test_the_command_says_what_to_choose(tmp_path, capsys, events, extra, message):
    path = sample.write(tmp_path / "t.jsonl", events)
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), *extra, "--html", str(tmp_path / "p.html")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "p.html").exists()


@pytest.mark.parametrize(
    ("line", "damage", "message"),
    [
        (1, lambda e: e.pop("api"), "line 2: a response event the transcript never writes (no 'api')"),
        (
            2,
            lambda e: e["body"].pop("protocols"),
            "line 3: a request event the transcript never writes (no 'protocols')",
        ),
    ],
)
def test_a_malformed_event_is_named_by_its_line(line, damage, message):
    broken = lines()
    event = json.loads(broken[line])
    damage(event)
    broken[line] = json.dumps(event) + "\n"
    with pytest.raises(BadTranscript, match=re.escape(f"t.jsonl {message}")):
        timeline(list(numbered(broken, "t.jsonl")), Selection("shop"), "t.jsonl")


# -- every group of a transcript (issue 27) ----------------------------------------------------------
def test_every_group_is_drawn_each_with_its_type():
    from coordinator.tools.transcript_html import timelines

    data = timelines(list(numbered(json.dumps(e) + "\n" for e in sample.three_groups())), Selection(), "t.jsonl")
    assert [(g["group"], g["type"]) for g in data["groups"]] == [
        ("shop", "classic"),
        ("orders-v2", "consumer"),  # its states and its ConsumerGroupHeartbeats say so
        ("audit", "share"),  # Empty and Stable are every type's: its ShareGroupHeartbeat says so
    ]
    assert set(data["types"]) == {"classic", "consumer", "share"}  # the page's colours and labels
    orders = data["groups"][1]
    assert [lane["label"] for lane in orders["lanes"]] == ["coordinator", "carol", "dave"]
    assert [b["state"] for b in orders["bands"]] == ["Empty", "Assigning", "Reconciling", "Stable"]
    assert [x["api"] for x in orders["exchanges"]] == ["ConsumerGroupHeartbeat"] * 2
    assert data["groups"][0]["exchanges"] == data_of()["exchanges"]  # shop as --group shop draws it


def test_a_transition_that_names_its_group_type_wins():
    from coordinator.tools.transcript_groups import group_type

    seq = [e for e in sample.three_groups() if e.get("group") == "audit" or "audit" in e.get("groups", ())]
    assert group_type(seq) == "share"
    for e in seq:
        if e["type"] == "transition":
            e["group_type"] = "consumer"
    assert group_type(seq) == "consumer"
    assert group_type([]) == "classic"  # a group that only commits offsets


def test_other_events_of_a_group_are_notes_and_waits_say_how_far_to_advance():
    from coordinator.tools.transcript_html import timelines

    data = timelines(list(numbered(json.dumps(e) + "\n" for e in sample.three_groups())), Selection(), "t.jsonl")
    shop, audit = data["groups"][0], data["groups"][2]
    assert [(n["kind"], n["t"], n["text"]) for n in shop["notes"]] == [
        ("waiting", 21, "waiting for the clock (clock.mode=manual): initial rebalance delay: advance >= 100 ms")
    ]
    assert [(n["kind"], n["text"]) for n in audit["notes"]] == [
        ("share_partition", 'share_partition: topic="orders", partition=0, start_offset=42')
    ]


def test_the_command_draws_every_group_and_group_narrows(tmp_path, capsys):
    path = sample.write(tmp_path / "t.jsonl", sample.three_groups())
    out = tmp_path / "page.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--html", str(out)])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"kgc: wrote {out} (3 groups: shop (classic), orders-v2 (consumer), audit (share); "
        "pick one on the page or with --group)"
    )
    assert "<title>kgc timeline: 3 groups</title>" in out.read_text()
    with pytest.raises(SystemExit):
        main(["transcript", str(path), "--group", "audit", "--html", str(out)])
    assert capsys.readouterr().out.strip() == (
        f"kgc: wrote {out} (group audit: 1 member lanes, 1 exchanges, 0 with errors, 2 state bands)"
    )
