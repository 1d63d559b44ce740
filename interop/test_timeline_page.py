"""The timeline page of a real rebalance, checked in a real headless browser.

Three confluent-kafka consumers form a group on a 6-partition topic, one closes (LeaveGroup) and
the other two rebalance to Stable again, with the coordinator writing its transcript. Then
`kgc transcript --html` draws it and Debian's chromium (scripts/install_test_deps.sh), driven by
the playwright package through executable_path (never a downloaded browser; playwright gives
each launch a fresh profile directory), loads the file: no console errors, no request but the
page itself, a lane per member and the coordinator's, the three rebalance states as bands, the
leaver's LeaveGroup arrow, error responses whose recorded reason shows on hover and on click.
A screenshot is kept in the test's tmp_path. Every wait is on a condition under a deadline.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from coordinator.__main__ import main
from coordinator.tools.transcript_render import short
from interop.clients.consumer_protocol import CLASSIC_ONLY, FAST_SETTINGS
from interop.clients.group_members import describe_group, group_owns_all, stop_all
from interop.clients.python_members import ConfluentKafkaMember, KafkaPythonMember
from tests.support.waiting import wait_until
from tests.tools import transcript_sample

pytestmark = pytest.mark.interop

GROUP = "timeline"
PARTITIONS = 6
DEADLINE = 30.0  # seconds: a safety net, never a timing assertion
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(autouse=True)
def transcript(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The transcript goes in this test's tmp_path, which exists only now: the kafka_settings mark
    is added here, before the kafka_coordinator fixture (autouse fixtures set up first) reads it."""
    path = tmp_path / "transcript.jsonl"
    request.node.add_marker(pytest.mark.kafka_settings({"transcript.file": str(path)}))
    return path


def events(path: Path) -> list[dict]:
    """The complete lines so far (the server may be writing the last one)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]


def stable_generations(path: Path) -> list[int]:
    return [
        e["generation"]
        for e in events(path)
        if e["type"] == "transition" and e["group"] == GROUP and e["to"] == "Stable"
    ]


def ok_heartbeats_since_stable(path: Path) -> dict[str, int]:
    """Per client, heartbeats answered without error since the group last went Stable."""
    found = events(path)
    last = max(i for i, e in enumerate(found) if e["type"] == "transition" and e["to"] == "Stable")
    counts: dict[str, int] = {}
    for e in found[last:]:
        if e["type"] == "response" and e["api"] == "Heartbeat" and not e["errors"]:
            counts[e["client"]] = counts.get(e["client"], 0) + 1
    return counts


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is missing: run scripts/install_test_deps.sh (as root it installs Debian's)"
    return found


def consumer_protocol_member(name: str, bootstrap: str, group: str, topic: str) -> ConfluentKafkaMember:
    """confluent-kafka with group.protocol=consumer (KIP-848): the broker's group.consumer.* settings
    replace the classic session and heartbeat settings, which librdkafka refuses with it."""
    member = ConfluentKafkaMember(name, bootstrap, group, topic)
    for key in CLASSIC_ONLY:
        member.config.pop(key, None)
    member.config["group.protocol"] = "consumer"
    return member


# One generation for the three (the initial delay restarts as each arrives): the picture then
# shows one formation and one rebalance. Two more groups share the transcript (issue 27): one of
# consumer-protocol members and one of kafka-python's, each on the page's group bar.
@pytest.mark.kafka_settings({"group.initial.rebalance.delay.ms": 300, **FAST_SETTINGS})
def test_a_real_rebalance_draws_as_lanes_bands_arrows_and_explained_errors(
    kafka_coordinator, topic_name, transcript, tmp_path
):
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    bootstrap = kafka_coordinator.bootstrap
    members = [ConfluentKafkaMember(f"timeline-{i}", bootstrap, GROUP, topic_name) for i in range(3)]
    others = [
        consumer_protocol_member("timeline-next", bootstrap, "timeline-next", topic_name),
        KafkaPythonMember("timeline-py", bootstrap, "timeline-py", topic_name),
    ]
    try:
        for m in members + others:
            m.start()
        wait_until(
            lambda: (
                group_owns_all(members, PARTITIONS)
                and stable_generations(transcript)
                and all(group_owns_all([m], PARTITIONS) for m in others)
            ),
            DEADLINE,
            message=lambda: (
                "three members own six partitions, and each other group too\n" + describe_group(members + others)
            ),
        )
        formed = stable_generations(transcript)[-1]
        leaver, stayers = members[0], members[1:]
        leaver_id = leaver.member_id
        leaver.stop()  # consumer.close(): LeaveGroup
        wait_until(
            lambda: group_owns_all(stayers, PARTITIONS) and stable_generations(transcript)[-1] > formed,
            DEADLINE,
            message=lambda: "the other two own six partitions\n" + describe_group(stayers),
        )
        # a little of the new generation's Stable life in the picture: two heartbeats each
        wait_until(
            lambda: all(ok_heartbeats_since_stable(transcript).get(m.config["client.id"], 0) >= 2 for m in stayers),
            DEADLINE,
            message="the two heartbeat in the new generation",
        )
        page = tmp_path / "timeline.html"
        with pytest.raises(SystemExit) as exit_info:
            main(["transcript", str(transcript), "--html", str(page)])  # every group of the transcript
        assert exit_info.value.code == 0
    finally:
        assert stop_all(members + others) == []
    recorded = events(transcript)
    reasons = {
        err["reason"] for e in recorded if e["type"] == "response" and GROUP in e["groups"] for err in e["errors"]
    }
    assert reasons and None not in reasons  # every error response carries the coordinator's reason

    with Browser(page, fragment=f"group={GROUP}") as tab:
        picks = tab.locator("#groups button")
        assert sorted((b.get_attribute("data-group"), b.get_attribute("data-type")) for b in picks.all()) == [
            (GROUP, "classic"),
            ("timeline-next", "consumer"),
            ("timeline-py", "classic"),
        ]
        lanes = tab.locator(".lane-label[data-lane]")
        assert lanes.count() == 4 and tab.locator("#chart .lane-line").count() == 4
        kinds = [lanes.nth(i).get_attribute("data-kind") for i in range(4)]
        names = [lanes.nth(i).locator(".name").inner_text() for i in range(4)]
        subs = [lanes.nth(i).locator(".sub").inner_text() for i in range(4)]
        assert kinds == ["coordinator", "member", "member", "member"]
        assert sorted(names[1:]) == sorted(m.config["client.id"] for m in members)
        leaver_lane = names.index(leaver.config["client.id"])
        assert subs[leaver_lane] == short(leaver_id)

        states = {b.get_attribute("data-state") for b in tab.locator("#chart .band").all()}
        assert {"PreparingRebalance", "CompletingRebalance", "Stable"} <= states, states
        assert tab.locator(f'.arrow.request[data-api="LeaveGroup"][data-lane="{leaver_lane}"]').count() >= 1

        assert tab.locator(".arrow.response.error").count() >= 1
        marks = tab.locator(".err-mark")
        rebalancing = [
            i
            for i in range(marks.count())
            if "REBALANCE_IN_PROGRESS" in json.dumps(_exchange(tab, marks.nth(i))["errors"])
        ]
        mark = marks.nth(rebalancing[0] if rebalancing else 0)
        box = mark.bounding_box()
        assert box is not None
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        tab.mouse.move(*centre)
        tip = tab.locator("#tip")
        tip.wait_for(state="visible")
        assert any(reason in tip.inner_text() for reason in reasons), tip.inner_text()
        tab.mouse.click(*centre)
        shown = tab.locator("#detail .reason").all_inner_texts()
        assert shown and set(shown) <= reasons, shown
        assert tab.locator("#detail").get_attribute("data-kind") == "x"

        shot = tmp_path / "timeline.png"
        tab.mouse.move(5, 5)  # the tooltip away; the detail panel stays
        tab.screenshot(path=str(shot), full_page=True)
        print(f"timeline screenshot: {shot}")

        tab.locator('#groups button[data-group="timeline-next"]').click()
        assert heading(tab) == ("Group timeline-next", "consumer group (KIP-848)")
        assert tab.locator(".lane-label[data-lane] .name").all_inner_texts()[1:] == [others[0].config["client.id"]]
        assert "Stable" in {b.get_attribute("data-state") for b in tab.locator("#chart .band").all()}
        assert tab.locator('.arrow.request[data-api="ConsumerGroupHeartbeat"]').count() >= 2
        tab.screenshot(path=str(tmp_path / "timeline-consumer-group.png"), full_page=True)


def test_hostile_client_ids_stay_text_and_the_controls_work(tmp_path):
    """A client id that tries to end the script element and open another is drawn as text; zoom,
    the heartbeat filter and the error stepper run without a console error."""
    hostile = '</script><script>document.title="owned";alert(1)</script><!--'
    path = transcript_sample.write(tmp_path / "t.jsonl", transcript_sample.events(bob_client=hostile))
    page = tmp_path / "sample.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--group", "shop", "--html", str(page)])
    assert exit_info.value.code == 0
    with Browser(page) as tab:
        assert tab.title() == "kgc timeline: group shop"
        assert tab.locator('.lane-label[data-lane="2"] .name').inner_text() == hostile
        assert tab.locator("script").count() == 2
        width = float(tab.locator("#chart").get_attribute("width"))
        tab.get_by_role("button", name="+").click()
        assert float(tab.locator("#chart").get_attribute("width")) > width * 1.5
        tab.get_by_role("button", name="Fit").click()
        assert float(tab.locator("#chart").get_attribute("width")) == width
        assert tab.locator('.arrow.request[data-api="Heartbeat"]').count() == 1  # its answer was an error: kept
        tab.locator("#ok-heartbeats").uncheck()
        assert tab.locator('.arrow.request[data-api="Heartbeat"]').count() == 1
        tab.locator("#next-error").click()
        tab.locator("#next-error").click()
        assert tab.locator("#detail .reason").inner_text() == transcript_sample.REBALANCING
        labels = tab.locator(".tick-label").all_text_contents()
        assert labels[:2] == ["0.0 s", "0.2 s"], labels


def test_every_group_of_a_transcript_is_on_the_page_each_drawn_as_its_type(tmp_path):
    """Issue 27: a transcript with a classic, a consumer-protocol and a share group. The bar lists
    all three with their types; picking one draws its lanes and its type's states; the classic
    group's wait on the manual clock and the share group's event of a kind the page does not know
    are dots that explain themselves."""
    path = transcript_sample.write(tmp_path / "t.jsonl", transcript_sample.three_groups())
    page = tmp_path / "groups.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--html", str(page)])
    assert exit_info.value.code == 0
    with Browser(page) as tab:
        picks = tab.locator("#groups button")
        assert [(b.get_attribute("data-group"), b.get_attribute("data-type")) for b in picks.all()] == [
            ("shop", "classic"),
            ("orders-v2", "consumer"),
            ("audit", "share"),
        ]
        assert tab.title() == "kgc timeline: 3 groups"
        assert picks.nth(0).get_attribute("aria-pressed") == "true"
        assert heading(tab) == ("Group shop", "classic group")
        waiting = tab.locator('#chart .note[data-kind="waiting"]')
        assert waiting.count() == 1
        waiting.click()
        assert "initial rebalance delay: advance >= 100 ms" in tab.locator("#detail").inner_text()
        tab.screenshot(path=str(tmp_path / "groups-shop.png"), full_page=True)

        picks.nth(1).click()
        assert tab.evaluate("location.hash") == "#group=orders-v2"
        assert heading(tab) == ("Group orders-v2", "consumer group (KIP-848)")
        names = tab.locator(".lane-label[data-lane] .name").all_inner_texts()
        assert names == ["coordinator", "carol", "dave"]
        states = [b.get_attribute("data-state") for b in tab.locator("#chart .band").all()]
        assert states == ["Empty", "Assigning", "Reconciling", "Stable"]
        assert tab.locator('.arrow.request[data-api="ConsumerGroupHeartbeat"]').count() == 2
        tab.locator("#ok-heartbeats").uncheck()  # a consumer group's heartbeats are heartbeats too
        assert tab.locator('.arrow.request[data-api="ConsumerGroupHeartbeat"]').count() == 0
        assert tab.locator("#detail .hint").count() == 1  # the detail of the other group is gone
        tab.screenshot(path=str(tmp_path / "groups-orders-v2.png"), full_page=True)

        picks.nth(2).click()
        assert heading(tab) == ("Group audit", "share group (KIP-932)")
        assert [b.get_attribute("data-state") for b in tab.locator("#chart .band").all()] == ["Empty", "Stable"]
        tab.locator('#chart .note[data-kind="share_partition"]').click()
        assert "start_offset=42" in tab.locator("#detail").inner_text()
        tab.screenshot(path=str(tmp_path / "groups-audit.png"), full_page=True)
        print(f"screenshots: {tmp_path}/groups-*.png")

    with Browser(page, fragment="group=audit") as tab:  # an address names the group to show
        assert tab.locator("h1").inner_text().startswith("Group audit")


def heading(tab) -> tuple[str, str]:
    """The group's name and its type's label, as the page's title line shows them."""
    label = tab.locator("h1 .kind").inner_text()
    return tab.locator("h1").inner_text().removesuffix(label), label


class Browser:
    """Headless chromium with one tab on `page`; on a clean exit it asserts that the page logged no
    error, opened no dialog and fetched nothing but itself."""

    def __init__(self, page: Path, fragment: str = "") -> None:
        self.page = page
        self.fragment = fragment

    def __enter__(self):
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        tab = self._browser.new_page(viewport={"width": 1400, "height": 760})
        self.problems: list[str] = []
        self.fetched: list[str] = []
        tab.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        tab.on("console", lambda m: self.problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        tab.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        tab.on("request", lambda r: self.fetched.append(r.url))
        tab.goto(self.page.as_uri() + (f"#{self.fragment}" if self.fragment else ""))
        try:
            tab.wait_for_selector("#chart .band", timeout=10_000)
        except Exception:
            self.__exit__(None)
            raise
        return tab

    def __exit__(self, kind, *rest) -> None:
        self._browser.close()
        self._playwright.stop()
        if kind is None:
            assert self.problems == [], self.problems
            assert all(url.startswith(("file:", "data:")) for url in self.fetched), self.fetched


def _exchange(tab, mark) -> dict:
    """The exchange a drawn element stands for, from the data the page embeds for its group."""
    index = int(mark.get_attribute("data-i"))
    shown = "JSON.parse(document.getElementById('kgc-data').textContent).groups"
    shown += ".find(g => g.group === document.body.dataset.group)"  # the group on the page
    return tab.evaluate(f"i => {shown}.exchanges[i]", index)
