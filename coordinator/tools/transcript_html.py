"""`kgc transcript FILE --html OUT.html`: a transcript's groups as one self-contained timeline page.

`timelines(events, selection)` gives the page's data: every group of the transcript (or the one
`--group` names), each as `timeline(...)` shapes it: a coordinator lane and one lane per member,
request/response exchanges with the text renderer's wording, the group's state bands, records
written, closed connections and any other event of the group (a note), times in ms since the
group's first event, and the group's type (transcript_groups.py: the page draws every type from
that table, so a new type needs no page change). `page(data)` embeds that as JSON in one HTML file
with inline CSS and JS (transcript_assets.py): no network, and `<`, `>`, `&` and the JS line
separators escaped so no client id or metadata can end the script element. An exchange's lane is
the member it names, else the member its connection belongs to (before or after), else its
client's only member, else a lane for the client.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from coordinator.tools.transcript_assets import SCRIPT, STYLE
from coordinator.tools.transcript_events import BadTranscript, Selection, malformed, member_ids, numbered
from coordinator.tools.transcript_groups import GROUP_TYPES, group_type
from coordinator.tools.transcript_render import note_text, record_text, request_text, response_text, short

Numbered = list[tuple[int, dict[str, Any]]]
_DRAWN = frozenset({"request", "response", "transition", "record", "disconnect"})  # the rest are notes


def groups_in(events: Iterable[dict[str, Any]]) -> list[str]:
    found: dict[str, None] = {}
    for e in events:
        for g in e.get("groups") or ():
            found.setdefault(g)
        if e["type"] == "transition":
            found.setdefault(e["group"])
    return list(found)


def _exchanges(kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Requests paired with their responses (connection, correlation id), in request order."""
    out: list[dict[str, Any]] = []
    open_: dict[tuple[Any, Any], dict[str, Any]] = {}
    for e in kept:
        key = (e.get("conn"), e.get("correlation_id"))
        if e["type"] == "request":
            open_[key] = {"request": e, "response": None}
            out.append(open_[key])
        elif e["type"] == "response":
            pair = open_.pop(key, None)
            if pair is None:  # its request was before the file began
                out.append({"request": None, "response": e})
            else:
                pair["response"] = e
    return out


class _Lanes:
    """Which lane each exchange goes to (see the module docstring)."""

    def __init__(self, pairs: list[dict[str, Any]]) -> None:
        self.bindings: dict[Any, list[tuple[int, str]]] = {}  # conn -> [(ts, member id)]
        by_client: dict[str, set[str]] = {}
        for pair in pairs:
            named = self.named(pair)
            first = pair["request"] or pair["response"]
            if named:
                self.bindings.setdefault(first.get("conn"), []).append((first["ts"], named))
                by_client.setdefault(first.get("client", ""), set()).add(named)
        self.only_member = {c: next(iter(ms)) for c, ms in by_client.items() if len(ms) == 1}

    @staticmethod
    def named(pair: dict[str, Any]) -> str | None:
        for e in (pair["request"], pair["response"]):
            ids = member_ids(e) if e is not None else []
            if ids:
                return ids[0]
        return None

    def of_connection(self, conn: Any, ts: int) -> str | None:
        bound = self.bindings.get(conn) or []
        before = [m for t, m in bound if t <= ts]
        return before[-1] if before else (bound[0][1] if bound else None)

    def key(self, pair: dict[str, Any]) -> str:
        first = pair["request"] or pair["response"]
        member = (
            self.named(pair)
            or self.of_connection(first.get("conn"), first["ts"])
            or self.only_member.get(first.get("client", ""))
        )
        return f"member:{member}" if member else f"client:{first.get('client', '')}"


def timelines(events: Numbered, selection: Selection, source: str) -> dict[str, Any]:
    """The page's data: every group of the transcript, or the one --group names; raises
    BadTranscript when there is no group, or nothing of the chosen one matches the filters."""
    by_group = _by_group(events)
    if selection.group is not None:
        chosen = [selection.group]
    else:
        chosen = list(by_group)
        if not chosen:
            raise BadTranscript(f"{source} has no group to draw (the page shows groups' rebalances)")
    drawn = []
    for group in chosen:
        narrowed = Selection(group, selection.member, selection.client, selection.apis)
        try:
            drawn.append(timeline(by_group.get(group, []), narrowed, source))
        except _NothingMatches:
            continue
    if not drawn:
        what = f"group {selection.group!r}" if selection.group is not None else f"its {len(chosen)} groups"
        raise BadTranscript(f"{source}: nothing of {what} matches the filters")
    return {"source": source, "types": GROUP_TYPES, "groups": drawn}


def _by_group(events: Numbered) -> dict[str, Numbered]:
    """Each group's events in file order: requests by the groups they name, responses with their
    request, other events by their `group`; every closed connection goes to every group (it is
    drawn on a lane only where its connection was a member's)."""
    out: dict[str, Numbered] = {}
    asked: dict[tuple[Any, Any], Any] = {}
    closed: Numbered = []
    for number, e in events:
        kind = e["type"]
        if kind == "request":
            groups = e.get("groups") or ()
            asked[(e.get("conn"), e.get("correlation_id"))] = groups
        elif kind == "response":
            groups = asked.pop((e.get("conn"), e.get("correlation_id")), None) or e.get("groups") or ()
        elif kind == "disconnect":
            closed.append((number, e))
            continue
        else:
            group = e.get("group")
            groups = [group] if isinstance(group, str) else e.get("groups") or ()
        for g in groups:
            if isinstance(g, str):
                out.setdefault(g, []).append((number, e))
    # a group is drawn for what was asked of it or happened to it, not for records alone
    out = {g: mine for g, mine in out.items() if any(e["type"] != "record" for _, e in mine)}
    if closed:
        for g, mine in out.items():
            out[g] = sorted(mine + closed, key=lambda pair: pair[0])
    return out


class _NothingMatches(BadTranscript):
    pass


def timeline(events: Numbered, selection: Selection, source: str) -> dict[str, Any]:
    """One group's data from (line number, event) pairs; raises BadTranscript."""
    if selection.group is None:
        groups = groups_in(e for _, e in events)
        if len(groups) != 1:
            raise BadTranscript(f"{source} has {len(groups)} groups: name one (timeline draws one group)")
        selection = Selection(groups[0], selection.member, selection.client, selection.apis)
    numbers = {id(e): number for number, e in events}
    kept: list[dict[str, Any]] = []
    closed: list[dict[str, Any]] = []
    for number, e in events:
        try:
            if e["type"] == "disconnect":
                closed.append(e)  # drawn on the lane of its connection's member, if any
            elif selection.keep(e) and (e["type"] in _DRAWN or e.get("group") == selection.group):
                kept.append(e)  # other events (leaders, transactions) are not the group's
        except (KeyError, TypeError, AttributeError) as exc:
            raise malformed(source, number, e, exc) from None
    if not kept:
        raise _NothingMatches(f"{source}: nothing of group {selection.group!r} matches the filters")
    t0 = kept[0]["ts"]
    pairs = _exchanges(kept)
    lanes = _Lanes(pairs)
    lane_index: dict[str, int] = {"coordinator": 0}
    lane_list: list[dict[str, Any]] = [
        {"kind": "coordinator", "label": "coordinator", "sub": f"group {selection.group}"}
    ]

    def lane_of(key: str, client: str) -> int:
        if key not in lane_index:
            lane_index[key] = len(lane_list)
            kind, _, ident = key.partition(":")
            lane_list.append(
                {
                    "kind": kind,
                    "label": client or "(no client id)",
                    "sub": short(ident) if kind == "member" else "(no member id)",
                    "member": ident if kind == "member" else None,
                }
            )
        return lane_index[key]

    exchanges = []
    for pair in pairs:
        ask, answer = pair["request"], pair["response"]
        first = ask or answer
        try:
            exchanges.append(
                {
                    "lane": lane_of(lanes.key(pair), first.get("client", "")),
                    "api": first["api"],
                    "version": first.get("version"),
                    "client": first.get("client", ""),
                    "t": (ask or answer)["ts"] - t0,
                    "tr": None if answer is None else answer["ts"] - t0,
                    "ask": None if ask is None else request_text(ask["api"], ask["body"], ask.get("partitions")),
                    "answer": None if answer is None else response_text(answer["api"], answer),
                    "errors": [] if answer is None else answer["errors"],
                    "request": ask,
                    "response": answer,
                }
            )
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
            raise malformed(source, numbers.get(id(first), 0), first, exc) from None
    t_end = max(e["ts"] for e in kept) - t0
    marks = []
    for e in closed:
        member = lanes.of_connection(e.get("conn"), e["ts"])
        if member is not None and f"member:{member}" in lane_index and t0 <= e["ts"]:
            marks.append({"t": e["ts"] - t0, "lane": lane_index[f"member:{member}"], "reason": e.get("reason")})
            t_end = max(t_end, e["ts"] - t0)
    transitions = [e for e in kept if e["type"] == "transition"]
    bands = []
    if transitions and transitions[0]["ts"] > t0:
        bands.append(
            {
                "state": transitions[0]["from"],
                "generation": None,
                "t": 0,
                "t_end": transitions[0]["ts"] - t0,
                "reason": "before the first transition in the file",
            }
        )
    for i, tr in enumerate(transitions):
        until = transitions[i + 1]["ts"] if i + 1 < len(transitions) else t0 + t_end
        bands.append(
            {
                "state": tr["to"],
                "from": tr["from"],
                "generation": tr["generation"],
                "t": tr["ts"] - t0,
                "t_end": until - t0,
                "reason": tr["reason"],
            }
        )
    records = [{"t": e["ts"] - t0, "text": short(record_text(e)), "event": e} for e in kept if e["type"] == "record"]
    notes = [
        {"t": e["ts"] - t0, "kind": e["type"], "text": note_text(e), "event": e}
        for e in kept
        if e["type"] not in _DRAWN
    ]
    return {
        "source": source,
        "group": selection.group,
        "type": group_type(kept),
        "start_ms": t0,
        "duration_ms": t_end,
        "lanes": lane_list,
        "exchanges": exchanges,
        "bands": bands,
        "records": records,
        "closed": marks,
        "notes": notes,
    }


def embed_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no `</script>`, `<!--` or line separators."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def page(data: dict[str, Any]) -> str:
    """The page for `timelines(...)`'s data (one group's `timeline(...)` data is taken as well)."""
    if "groups" not in data:
        data = {"source": data["source"], "types": GROUP_TYPES, "groups": [data]}
    groups = data["groups"]
    named = f"group {groups[0]['group']}" if len(groups) == 1 else f"{len(groups)} groups"
    title = html.escape(f"kgc timeline: {named}")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<script type="application/json" id="kgc-data">{embed_json(data)}</script>
<nav id="groups" aria-label="groups"></nav>
<header id="top"></header>
<main id="view"><div id="labels"></div><div id="scroller"><svg id="chart" xmlns="http://www.w3.org/2000/svg"></svg></div></main>
<section id="detail"><p class="hint">Click an arrow, a band, a record or a mark for details. Ctrl+wheel or the buttons zoom; drag or shift+wheel scrolls.</p></section>
<div id="tip" role="tooltip"></div>
<script>{SCRIPT}</script>
</body>
</html>
"""


def write_page(lines: Iterable[str], out: str | Path, selection: Selection, source: str) -> str:
    """Write the page; returns what it shows in a few words (for the command's one line)."""
    try:
        data = timelines(list(numbered(lines, source)), selection, source)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:  # past the per-line checks
        raise BadTranscript(f"{source}: an event the transcript never writes ({type(exc).__name__}: {exc})") from None
    Path(out).write_text(page(data), encoding="utf-8")
    groups = data["groups"]
    if len(groups) == 1:
        return _summary(groups[0])
    shown = ", ".join(f"{g['group']} ({g['type']})" for g in groups[:5]) + (", ..." if len(groups) > 5 else "")
    return f"{len(groups)} groups: {shown}; pick one on the page or with --group"


def _summary(data: dict[str, Any]) -> str:
    members = sum(1 for lane in data["lanes"] if lane["kind"] != "coordinator")
    errors = sum(1 for x in data["exchanges"] if x["errors"])
    return (
        f"group {data['group']}: {members} member lanes, {len(data['exchanges'])} exchanges, "
        f"{errors} with errors, {len(data['bands'])} state bands"
    )
