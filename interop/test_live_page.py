"""The live page (GET / on the control port) watched in a real headless browser while real
clients form a group and one of them leaves.

Two confluent-kafka consumers join a 4-partition topic; the page must show the group's card with
Stable lit in its state machine, both members with their assignments, then after one closes
(LeaveGroup) a card with one member and the transitions through PreparingRebalance back to
Stable with their causes. The page fetches nothing but its own control API and logs no error.
Every wait is on a condition under a deadline; a screenshot is kept in the test's tmp_path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from interop.clients.group_members import describe_group, group_owns_all, stop_all
from interop.clients.python_members import ConfluentKafkaMember
from interop.test_timeline_page import CHROMIUM_FLAGS, chromium
from tests.support.waiting import wait_until

pytestmark = pytest.mark.interop

GROUP = "live"
PARTITIONS = 4
DEADLINE = 30.0  # seconds: a safety net, never a timing assertion
WAIT_MS = int(DEADLINE * 1000)


@pytest.mark.kafka_settings({"control.port": 0, "group.initial.rebalance.delay.ms": 0})
def test_the_live_page_follows_a_group_forming_and_rebalancing(kafka_coordinator, topic_name, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    assert kafka_coordinator.control_url, "control.port=0 must start the control API"
    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    members = [ConfluentKafkaMember(f"live-{i}", kafka_coordinator.bootstrap, GROUP, topic_name) for i in range(2)]
    problems: list[str] = []
    fetched: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            tab = browser.new_page(viewport={"width": 1200, "height": 800})
            tab.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
            tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            tab.on("request", lambda r: fetched.append(r.url))
            tab.goto(kafka_coordinator.control_url + "/")
            assert tab.title() == "kgc live"
            try:
                for m in members:
                    m.start()
                wait_until(
                    lambda: group_owns_all(members, PARTITIONS),
                    DEADLINE,
                    message=lambda: "two members own four partitions\n" + describe_group(members),
                )
                card = tab.locator(f'.group[data-group="{GROUP}"][data-state="Stable"]')
                card.wait_for(timeout=WAIT_MS)
                card.locator("tr[data-member]").nth(1).wait_for(timeout=WAIT_MS)
                lit = card.locator('.state[data-current="yes"]')
                assert lit.count() == 1 and lit.get_attribute("data-state") == "Stable"
                rows = card.locator("tr[data-member]")
                ids = sorted(rows.nth(i).get_attribute("data-member") for i in range(2))
                assert ids == sorted(m.member_id for m in members)
                shown = " ".join(rows.all_inner_texts())
                assert topic_name in shown and "live-0" in shown and "live-1" in shown, shown

                leaver, stayer = members
                leaver.stop()  # consumer.close(): LeaveGroup
                wait_until(
                    lambda: group_owns_all([stayer], PARTITIONS),
                    DEADLINE,
                    message=lambda: "the stayer owns four partitions\n" + describe_group([stayer]),
                )
                # the page's CSP forbids eval, so the waits are CSS: Stable again, one member row,
                # and the way through PreparingRebalance in the list
                tab.locator(
                    f'.group[data-group="{GROUP}"][data-state="Stable"]'
                    ':has(li[data-transition="PreparingRebalance"])'
                    ":not(:has(tr[data-member] ~ tr[data-member]))"
                ).wait_for(timeout=WAIT_MS)
                card = tab.locator(f'.group[data-group="{GROUP}"]')
                assert card.locator("tr[data-member]").get_attribute("data-member") == stayer.member_id
                went = card.locator('li[data-transition="PreparingRebalance"]').first.inner_text()
                assert "Stable → PreparingRebalance" in went and leaver.member_id in went, went
                tab.screenshot(path=str(tmp_path / "live.png"), full_page=True)
                print(f"live page screenshot: {tmp_path / 'live.png'}")
            finally:
                assert stop_all(members) == []
        finally:
            browser.close()
    assert problems == [], problems
    assert all(url.startswith(kafka_coordinator.control_url) for url in fetched), fetched


@pytest.mark.kafka_settings({"control.port": 0, "clock.mode": "manual", "group.initial.rebalance.delay.ms": 3000})
def test_on_a_manual_clock_the_page_says_what_a_group_waits_for(kafka_coordinator, topic_name, tmp_path: Path):
    """Issue 27: a consumer joins while the clock stands still: its group waits for the initial
    rebalance delay, and the page says so and by how much to advance; advanced, it forms."""
    from playwright.sync_api import sync_playwright

    kafka_coordinator.create_topic(topic_name, PARTITIONS)
    member = ConfluentKafkaMember("manual-0", kafka_coordinator.bootstrap, "manual", topic_name)
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            tab = browser.new_page(viewport={"width": 1200, "height": 800})
            tab.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
            tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            tab.goto(kafka_coordinator.control_url + "/")
            try:
                member.start()
                waits = tab.locator('.group[data-group="manual"][data-state="PreparingRebalance"] .waiting')
                waits.wait_for(timeout=WAIT_MS)
                assert waits.inner_text() == "waiting for the clock: initial rebalance delay: advance \u2265 3000 ms"
                tab.screenshot(path=str(tmp_path / "live-waiting.png"), full_page=True)
                kafka_coordinator.control.clock.advance(3000)
                wait_until(lambda: group_owns_all([member], PARTITIONS), DEADLINE, message=member.describe)
                formed = '.group[data-group="manual"][data-state="Stable"]:not(:has(.waiting))'
                tab.locator(formed).wait_for(timeout=WAIT_MS)
            finally:
                assert stop_all([member]) == []
        finally:
            browser.close()
    assert problems == [], problems
