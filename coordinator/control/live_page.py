"""The live page at GET / on the control port: every group with its state machine (the current
state lit), generation or epoch, coordinator, members and their assignments, and the recent
transitions with their causes, refreshed twice a second from /v1/snapshot and /v1/transitions;
with TLS or SASL listeners, each connection's principal and mechanism.

One self-contained page (inline CSS and JS, no network but its own API): a learner watches
groups form and rebalance while clients run. Each group's state machine comes from the table of
group types (tools/transcript_groups.py), so a new type needs no change here. Under a manual
clock a group says which timers it waits on and how far to advance the clock. Text is only ever
inserted as text. When the API needs a token, give it in the page's address as #token=... .
"""

from __future__ import annotations

import json

from coordinator.tools.transcript_groups import GROUP_TYPES

_PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
<title>kgc live</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #666; margin-bottom: 12px; }
.group { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
.group h2 { font-size: 16px; margin: 0 0 6px; } .meta { color: #555; margin-bottom: 8px; }
.machine { display: flex; gap: 6px; flex-wrap: wrap; margin: 6px 0 10px; }
.state { border: 1px solid #bbb; border-radius: 14px; padding: 3px 10px; color: #888; background: #f3f3f3; }
.state.current { color: #fff; background: #2e7d32; border-color: #2e7d32; font-weight: 600; }
.state.current.rebalancing { background: #ef6c00; border-color: #ef6c00; }
.state.current.Dead { background: #777; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eee; }
th { color: #555; font-weight: 600; } .transitions { margin-top: 8px; color: #444; font-size: 13px; }
.transitions li { margin: 1px 0; } .cause { color: #777; } .none { color: #888; font-style: italic; }
#error { color: #b71c1c; }
.waiting { background: #fff4e0; border-left: 4px solid #ef6c00; padding: 4px 8px; margin: 6px 0; }
</style></head>
<body>
<h1>kgc live</h1>
<div class="sub"><span id="clock"></span> · <span id="brokers"></span> <span id="error"></span></div>
<div id="groups"><p class="none">waiting for groups…</p></div>
<div id="connections"></div>
<script>
"use strict";
const TYPES = __TYPES__;  // tools/transcript_groups.py
const token = (location.hash.match(/token=([^&]+)/) || [])[1];
const headers = token ? {"Authorization": "Bearer " + decodeURIComponent(token)} : {};
const recent = new Map();  // group -> last transitions (newest last)
let since = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
function assignment(member) {
  if (!member.assignment) return "—";
  if (!member.assignment.length) return "nothing";
  return member.assignment.map(tp => tp.topic + " [" + tp.partitions.join(", ") + "]").join("; ");
}
function waiting(g) {
  const waits = (g.waiting || []).map(w => w.timer + (w.member ? " of " + w.member : "") + ": advance \u2265 " +
                                           w.advance_ms + " ms");
  return el("p", {"class": "waiting", "data-testid": "waiting"}, "waiting for the clock: " + waits.join("; "));
}
function groupCard(g) {
  const kind = TYPES[g.type] || {label: g.type + " group", states: {}, rebalancing: []};
  const states = Object.keys(kind.states).includes(g.state) ? Object.keys(kind.states) : [g.state];
  const machine = el("div", {"class": "machine", "data-testid": "machine"});
  for (const s of states) {
    const lit = s === g.state;
    const lights = lit ? " current " + s + (kind.rebalancing.includes(s) ? " rebalancing" : "") : "";
    machine.append(el("span", {"class": "state" + lights, "data-state": s, "data-current": lit ? "yes" : "no"}, s));
  }
  const rows = g.members.map(m => el("tr", {"data-member": m.member_id},
    el("td", {}, m.member_id), el("td", {}, m.client_id), el("td", {}, m.client_host),
    el("td", {}, m.group_instance_id || "—"), el("td", {}, assignment(m))));
  const table = el("table", {}, el("tr", {}, el("th", {}, "member"), el("th", {}, "client"), el("th", {}, "host"),
                                  el("th", {}, "instance"), el("th", {}, "assignment")), ...rows);
  const list = el("ul", {"class": "transitions"});
  for (const t of (recent.get(g.group_id) || []).slice(-8).reverse()) {
    list.append(el("li", {"data-transition": t.to}, t.from + " → " + t.to + " (generation " + t.generation + ") ",
                   el("span", {"class": "cause"}, t.reason || "")));
  }
  return el("div", {"class": "group", "data-group": g.group_id, "data-state": g.state, "data-type": g.type},
    el("h2", {}, g.group_id),
    el("div", {"class": "meta"},
       kind.label + " · " + (g.type === "classic" ? "generation " : "epoch ") + g.generation +
       " · coordinator broker " + g.coordinator + (g.protocol ? " · protocol " + g.protocol : "") +
       " · " + g.members.length + " member(s)"),
    machine, ...((g.waiting || []).length ? [waiting(g)] : []),
    g.members.length ? table : el("p", {"class": "none"}, "no members"),
    el("div", {}, "recent transitions"), list);
}
function connectionsCard(security) {
  const rows = [];
  for (const l of security.listeners) {
    for (const c of l.connections) {
      rows.push(el("tr", {"data-connection": c.connection}, el("td", {}, c.connection), el("td", {}, l.listener),
        el("td", {}, c.host), el("td", {}, c.principal), el("td", {}, c.mechanism || "—")));
    }
  }
  if (!security.listeners.length) return el("span", {});
  const counts = security.listeners.map(l => l.listener + ": " + l.stats.authentications + " authenticated, " +
    l.stats.failed_authentications + " failed, " + l.stats.reauthentications + " re-authenticated").join(" · ");
  return el("div", {"class": "group"}, el("h2", {}, "connections"), el("div", {"class": "meta"}, counts),
    rows.length ? el("table", {}, el("tr", {}, el("th", {}, "connection"), el("th", {}, "listener"),
      el("th", {}, "host"), el("th", {}, "principal"), el("th", {}, "mechanism")), ...rows)
      : el("p", {"class": "none"}, "no connections"));
}
async function refresh() {
  try {
    const [snap, trans] = await Promise.all([
      fetch("v1/snapshot", {headers}).then(r => r.json()),
      fetch("v1/transitions?since=" + since, {headers}).then(r => r.json())]);
    since = trans.next;
    for (const t of trans.transitions) {
      if (!recent.has(t.group)) recent.set(t.group, []);
      recent.get(t.group).push(t);
    }
    const now = new Date(snap.clock.now_ms).toISOString();
    document.getElementById("clock").textContent = "clock " + snap.clock.mode + " " + now;
    document.getElementById("brokers").textContent =
      snap.brokers.map(b => "broker " + b.node_id + (b.up ? " up" : " down")).join(", ");
    const box = document.getElementById("groups");
    const named = snap.groups.filter(g => g.group_id).sort((a, b) => a.group_id.localeCompare(b.group_id));
    const cards = named.map(groupCard);
    box.replaceChildren(...(cards.length ? cards : [el("p", {"class": "none"}, "no groups yet")]));
    document.getElementById("connections").replaceChildren(connectionsCard(snap.security));
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = "· cannot reach the control API: " + e;
  }
}
refresh();
setInterval(refresh, 500);
</script></body></html>
"""

# The table is this module's own data (no user input); `<` escaped all the same.
LIVE_PAGE = _PAGE.replace("__TYPES__", json.dumps(GROUP_TYPES).replace("<", "\\u003c"))
