"""The timeline page's inline style and script (transcript_html.py embeds both; no network).

The script reads the JSON in `#kgc-data` (every group of the transcript, and the table of group
types: transcript_groups.py) and shows one group at a time, picked from the bar at the top (or
`#group=NAME` in the address): an SVG with a time axis, the group's state bands in its type's
colours, the coordinator lane and one lane per member, an arrow per request (member ->
coordinator, in the API's colour) and per response (green, red with a mark when it carries an
error), records written as diamonds and other events of the group (a wait on a manual clock) as
dots on the coordinator lane, closed connections as crosses. Hover shows a summary, click shows
the decoded request/response. It writes text only through textContent and setAttribute, never
innerHTML, so nothing from the transcript is parsed as markup.
"""

from __future__ import annotations

STYLE = """
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,"DejaVu Sans",sans-serif;color:#1d2329;background:#fafbfc}
header{padding:10px 16px 6px;border-bottom:1px solid #dde1e6;background:#fff}
header h1{font-size:17px;margin:0 0 2px}
.kind{font-size:12px;font-weight:400;color:#fff;border-radius:9px;padding:1px 8px;margin-left:8px;vertical-align:2px}
#groups{display:flex;flex-wrap:wrap;gap:6px;padding:8px 16px;background:#eef1f4;border-bottom:1px solid #dde1e6}
#groups:empty{display:none}
#groups button{font:inherit;padding:3px 10px;border:1px solid #b7bfc8;border-radius:4px;background:#fff;cursor:pointer;text-align:left}
#groups button[aria-pressed=true]{border-color:#1d2329;box-shadow:inset 0 -3px 0 #1d2329}
#groups .count{color:#66707a;font-size:11px;margin-left:6px}
#groups .count.bad{color:#a2231d}
.meta{color:#59636e;margin-bottom:6px}
.controls{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:6px}
.controls button{font:inherit;padding:2px 9px;border:1px solid #b7bfc8;border-radius:4px;background:#f3f5f7;cursor:pointer}
.controls button:hover{background:#e6eaee}
.controls label{margin-left:8px;color:#3b444d}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;color:#3b444d;font-size:12px}
.legend span{display:inline-flex;align-items:center;gap:5px}
.sw{display:inline-block;width:18px;height:10px;border-radius:2px}
.ln{display:inline-block;width:18px;height:3px}
main{display:flex;align-items:flex-start;background:#fff;border-bottom:1px solid #dde1e6}
#labels{flex:0 0 250px;width:250px;min-width:0;overflow:hidden;border-right:1px solid #dde1e6}
.lane-label{padding:3px 10px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;border-top:1px solid #eef0f2}
.lane-label .name{font-weight:600;overflow:hidden;text-overflow:ellipsis}
.lane-label .sub{color:#66707a;font-size:11px;font-family:"DejaVu Sans Mono",monospace;overflow:hidden;text-overflow:ellipsis}
.lane-label[data-kind=coordinator]{background:#f1f3f6}
.lane-label.head{color:#66707a;font-size:11px;display:flex;align-items:flex-end;border-top:0}
#scroller{flex:1 1 auto;min-width:0;overflow-x:auto;overflow-y:hidden;cursor:grab}
#scroller.dragging{cursor:grabbing}
svg{display:block;user-select:none}
.tick{stroke:#9aa3ad}.grid{stroke:#eef0f3}
.tick-label{fill:#4f5963;font-size:11px}
.lane-line{stroke:#d5dae0}.lane-line.coordinator{stroke:#7d8893;stroke-width:2}
.band{stroke:#fff;stroke-width:.5;cursor:pointer}.band-label{font-size:11px;fill:#1d2329;pointer-events:none}
.arrow{stroke-width:1.6;pointer-events:none}
.arrow.response{stroke:#2e9650}.arrow.response.error{stroke:#d0342c;stroke-width:2.2}
.hit{stroke:transparent;stroke-width:10;cursor:pointer}
.wait{stroke:#9aa3ad;stroke-width:1.4;stroke-dasharray:3 3;pointer-events:none}
.wait.open{stroke:#d0342c}
.err-mark{fill:#d0342c;stroke:#fff;stroke-width:1.5;cursor:pointer}
.err-bang{fill:#fff;font-size:10px;font-weight:700;pointer-events:none}
.record{fill:#6a3fb5;stroke:#fff;stroke-width:1;cursor:pointer}
.closed{fill:#5b636b;font-size:14px;font-weight:700;cursor:pointer}
.note{fill:#0f6f9f;stroke:#fff;stroke-width:1;cursor:pointer}
.api-label{font-size:10px;fill:#4f5963;pointer-events:none}
.selected{stroke:#111 !important;stroke-width:3 !important}
.err-mark.selected,.record.selected,.note.selected{stroke:#111 !important;stroke-width:2.5 !important}
#detail{padding:10px 16px 40px;max-width:1200px}
#detail h2{font-size:15px;margin:4px 0}
#detail .hint{color:#66707a}
#detail ul.errors{margin:6px 0;padding-left:18px;color:#a2231d}
#detail .reason{color:#1d2329}
#detail p{margin:4px 0}
#detail pre{background:#f3f5f7;border:1px solid #dde1e6;padding:8px;overflow:auto;max-height:340px;font-size:12px}
#detail summary{cursor:pointer;color:#3b444d;margin-top:6px}
#tip{position:fixed;display:none;max-width:520px;padding:6px 9px;background:#1d2329;color:#fff;border-radius:4px;
     font-size:12px;pointer-events:none;z-index:10;white-space:pre-wrap;box-shadow:0 2px 8px rgba(0,0,0,.25)}
#tip .bad{color:#ff9d97}
"""

SCRIPT = r"""
(function () {
"use strict";
const all = JSON.parse(document.getElementById("kgc-data").textContent);
const TYPES = all.types, NS = "http://www.w3.org/2000/svg";
const AXIS_H = 30, STRIP_H = 26, LANE_H = 40, PAD = 18, PAD_RIGHT = 44, MAX_SCALE = 8;
const APIS = {JoinGroup: "#7b4fc9", SyncGroup: "#17868a", Heartbeat: "#6f8fb5", LeaveGroup: "#e07b1a",
              OffsetCommit: "#9a5b22", OffsetFetch: "#b08a4c", FindCoordinator: "#8c939a",
              DescribeGroups: "#4e6a87", ListGroups: "#4e6a87", DeleteGroups: "#a33d6b",
              ConsumerGroupHeartbeat: "#6f8fb5"};
const svg = document.getElementById("chart"), scroller = document.getElementById("scroller"),
      tip = document.getElementById("tip"), detail = document.getElementById("detail"), hint = detail.firstElementChild;
let data, lanes, exchanges, bands, records, closed, notes, duration, gtype;  // the group shown: show(i)
let scale = 1, fitScale = 1, atFit = true, showOkHeartbeats = true, selected = null, errorAt = -1;

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function s(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
const typeOf = g => TYPES[g.type] || {label: g.type + " group", colour: "#4a5560", states: {}};
const apiColor = api => APIS[api] || "#4a5560";
const stateColor = st => gtype.states[st] || "#d4c3e6";
const isHeartbeat = api => api.endsWith("Heartbeat");
const laneY = i => AXIS_H + STRIP_H + i * LANE_H + LANE_H / 2;
const x = t => PAD + t * scale;
const visible = ex => showOkHeartbeats || !isHeartbeat(ex.api) || ex.errors.length > 0 || ex.tr === null;
function fmt(ms, step) {
  const dec = step >= 1000 ? 0 : step >= 100 ? 1 : step >= 10 ? 2 : 3;
  if (duration < 60000) return (ms / 1000).toFixed(dec) + " s";
  const m = Math.floor(ms / 60000), sec = (ms - m * 60000) / 1000;
  return m + ":" + sec.toFixed(dec).padStart(dec ? 3 + dec : 2, "0");
}
const at = ms => fmt(ms, 1);
function niceStep(minMs) {
  for (let p = 1; ; p *= 10) for (const m of [1, 2, 5]) if (m * p >= minMs) return m * p;
}

function picker(current) {
  const nav = document.getElementById("groups");
  nav.replaceChildren();
  if (all.groups.length < 2) return;
  all.groups.forEach((g, i) => {
    const b = h("button", "pick"), errs = g.exchanges.filter(ex => ex.errors.length).length;
    b.type = "button"; b.dataset.group = g.group; b.dataset.type = g.type;
    b.setAttribute("aria-pressed", i === current ? "true" : "false");
    b.title = typeOf(g).label;
    const dot = h("span", "sw"); dot.style.background = typeOf(g).colour; dot.style.marginRight = "6px";
    b.appendChild(dot); b.appendChild(document.createTextNode(g.group));
    b.appendChild(h("span", "count", g.lanes.length - 1 + " members"));
    if (errs) b.appendChild(h("span", "count bad", errs + " errors"));
    b.addEventListener("click", () => { history.replaceState(null, "", "#group=" + encodeURIComponent(g.group)); show(i); });
    nav.appendChild(b);
  });
}

function show(i) {
  data = all.groups[i]; gtype = typeOf(data);
  lanes = data.lanes; exchanges = data.exchanges; bands = data.bands; records = data.records;
  closed = data.closed; notes = data.notes || []; duration = Math.max(data.duration_ms, 1);
  selected = null; errorAt = -1; atFit = true;
  document.body.dataset.group = data.group; document.body.dataset.type = data.type;
  picker(i);
  document.getElementById("top").replaceChildren();
  document.getElementById("labels").replaceChildren();
  detail.replaceChildren(hint); delete detail.dataset.kind; delete detail.dataset.i;
  header(); labels(); fit();
}

function header() {
  const top = document.getElementById("top");
  const title = top.appendChild(h("h1", "", "Group " + data.group));
  const badge = title.appendChild(h("span", "kind", gtype.label)); badge.style.background = gtype.colour;
  const members = lanes.filter(l => l.kind !== "coordinator").length;
  const errors = exchanges.filter(ex => ex.errors.length).length;
  top.appendChild(h("div", "meta", data.source + " \u00b7 from " + new Date(data.start_ms).toLocaleString() +
    " \u00b7 " + at(duration) + " \u00b7 " + members + " member lanes \u00b7 " + exchanges.length +
    " requests \u00b7 " + errors + " error responses \u00b7 " + bands.length + " state bands"));
  const c = h("div", "controls");
  const button = (label, title, fn) => { const b = h("button", "", label); b.title = title; b.type = "button";
                                         b.addEventListener("click", fn); c.appendChild(b); return b; };
  button("\u2212", "zoom out (Ctrl+wheel)", () => zoom(1 / 1.6, null));
  button("+", "zoom in (Ctrl+wheel)", () => zoom(1.6, null));
  button("Fit", "the whole transcript in view", () => { atFit = true; scale = fitScale; render(); });
  button("\u25c0 error", "previous error response", () => stepError(-1)).id = "prev-error";
  button("error \u25b6", "next error response", () => stepError(1)).id = "next-error";
  const lab = h("label"), box = h("input"); box.type = "checkbox"; box.checked = true; box.id = "ok-heartbeats";
  box.addEventListener("change", () => { showOkHeartbeats = box.checked; render(); });
  lab.appendChild(box); lab.appendChild(document.createTextNode(" heartbeats answered ok")); c.appendChild(lab);
  top.appendChild(c);
  const legend = h("div", "legend");
  const item = (sw, text) => { const i = h("span"); i.appendChild(sw); i.appendChild(document.createTextNode(text)); legend.appendChild(i); };
  const swatch = (cls, color) => { const e = h("span", cls); e.style.background = color; return e; };
  for (const st of new Set(bands.map(b => b.state))) item(swatch("sw", stateColor(st)), st);
  for (const api of new Set(exchanges.map(ex => ex.api))) item(swatch("ln", apiColor(api)), api + " request");
  item(swatch("ln", "#2e9650"), "response");
  item(swatch("ln", "#d0342c"), "error response (hover/click: reason)");
  item(swatch("sw", "#6a3fb5"), "record written");
  if (notes.length) item(swatch("sw", "#0f6f9f"), "other event of the group (e.g. waiting for the clock)");
  item(h("span", "", "\u2715"), "connection closed");
  top.appendChild(legend);
}

function labels() {
  const col = document.getElementById("labels");
  const head = h("div", "lane-label head", "time \u2192 / group state");
  head.style.height = (AXIS_H + STRIP_H) + "px";
  col.appendChild(head);
  lanes.forEach((lane, i) => {
    const d = h("div", "lane-label");
    d.dataset.lane = i; d.dataset.kind = lane.kind; d.style.height = LANE_H + "px";
    d.title = lane.member ? lane.label + "\n" + lane.member : lane.label + "\n" + lane.sub;
    d.appendChild(h("div", "name", lane.label));
    d.appendChild(h("div", "sub", lane.sub));
    col.appendChild(d);
  });
}

function render() {
  const height = AXIS_H + STRIP_H + lanes.length * LANE_H + 6;
  const width = Math.max(scroller.clientWidth, Math.ceil(PAD + duration * scale + PAD_RIGHT));
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  svg.replaceChildren();
  const layer = () => svg.appendChild(s("g"));
  const defs = svg.appendChild(s("defs")), bg = layer(), grid = layer(), strip = layer(), laneG = layer(),
        waits = layer(), arrows = layer(), hits = layer(), marks = layer();
  const heads = {};
  const head = color => {
    if (!heads[color]) {
      const id = "head" + Object.keys(heads).length;
      const m = s("marker", {id: id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
                             orient: "auto-start-reverse"});
      m.appendChild(s("path", {d: "M0,0 L10,5 L0,10 z", fill: color}));
      defs.appendChild(m); heads[color] = "url(#" + id + ")";
    }
    return heads[color];
  };
  bands.forEach((b, i) => {
    const x0 = x(b.t), w = Math.max(2, x(b.t_end) - x0), fill = stateColor(b.state);
    bg.appendChild(s("rect", {x: x0, y: AXIS_H + STRIP_H, width: w, height: height - AXIS_H - STRIP_H,
                              fill: fill, opacity: 0.13, class: "band-bg"}));
    strip.appendChild(s("rect", {x: x0, y: AXIS_H + 2, width: w, height: STRIP_H - 4, fill: fill, class: "band",
                                 "data-b": i, "data-state": b.state, "data-generation": b.generation}));
    const label = b.state + (b.generation === null ? "" : " \u00b7 gen " + b.generation);
    if (w > 7 * label.length) strip.appendChild(s("text", {x: x0 + 4, y: AXIS_H + STRIP_H - 9, class: "band-label"}, label));
    else if (w > 30) strip.appendChild(s("text", {x: x0 + 3, y: AXIS_H + STRIP_H - 9, class: "band-label"},
                                         "g" + (b.generation === null ? "?" : b.generation)));
  });
  const step = niceStep(90 / scale);
  for (let t = 0; t <= duration + step; t += step) {
    grid.appendChild(s("line", {x1: x(t), x2: x(t), y1: AXIS_H - 6, y2: height, class: "grid"}));
    grid.appendChild(s("line", {x1: x(t), x2: x(t), y1: AXIS_H - 6, y2: AXIS_H, class: "tick"}));
    grid.appendChild(s("text", {x: x(t) + 3, y: AXIS_H - 10, class: "tick-label"}, fmt(t, step)));
  }
  lanes.forEach((lane, i) => laneG.appendChild(s("line", {x1: 0, x2: width, y1: laneY(i), y2: laneY(i),
    class: "lane-line " + lane.kind, "data-lane": i})));
  const yc = laneY(0) + 5, lastLabel = {};
  exchanges.forEach((ex, i) => {
    if (!visible(ex)) return;
    const ym = laneY(ex.lane) - 4, common = {"data-i": i, "data-api": ex.api, "data-lane": ex.lane};
    const xr = x(ex.t);
    let xa = ex.tr === null ? null : x(ex.tr);
    if (ex.request) {
      const color = apiColor(ex.api);
      arrows.appendChild(s("line", Object.assign({x1: xr, y1: ym, x2: xr, y2: yc, stroke: color,
        "marker-end": head(color), class: "arrow request"}, common)));
      hits.appendChild(s("line", Object.assign({x1: xr, y1: ym, x2: xr, y2: yc, class: "hit"}, common)));
      if (xa !== null) xa = Math.max(xa, xr + 4);
      if (xa === null) waits.appendChild(s("line", {x1: xr, x2: x(duration), y1: ym + 4, y2: ym + 4, class: "wait open"}));
      else if (xa - xr > 6) waits.appendChild(s("line", {x1: xr, x2: xa, y1: ym + 4, y2: ym + 4, class: "wait"}));
    }
    if (xa !== null) {
      const bad = ex.errors.length > 0, color = bad ? "#d0342c" : "#2e9650";
      arrows.appendChild(s("line", Object.assign({x1: xa, y1: yc, x2: xa, y2: ym, "marker-end": head(color),
        class: "arrow response" + (bad ? " error" : "")}, common)));
      hits.appendChild(s("line", Object.assign({x1: xa, y1: yc, x2: xa, y2: ym, class: "hit"}, common)));
      if (bad) {
        marks.appendChild(s("circle", Object.assign({cx: xa, cy: ym + 7, r: 6.5, class: "err-mark"}, common)));
        marks.appendChild(s("text", {x: xa - 1.6, y: ym + 10.5, class: "err-bang"}, "!"));
      }
    }
    if (!isHeartbeat(ex.api) && (lastLabel[ex.lane] === undefined || xr - lastLabel[ex.lane] > 70)) {
      marks.appendChild(s("text", {x: xr + 8, y: ym + 22, class: "api-label"}, ex.api));
      lastLabel[ex.lane] = xr;
    }
  });
  records.forEach((r, i) => {
    const cx = x(r.t), cy = laneY(0) - 9;
    marks.appendChild(s("path", {d: `M${cx},${cy - 6} L${cx + 5},${cy} L${cx},${cy + 6} L${cx - 5},${cy} z`,
                                 class: "record", "data-r": i}));
  });
  closed.forEach((c, i) => marks.appendChild(s("text", {x: x(c.t) - 4, y: laneY(c.lane) + 5, class: "closed",
                                                        "data-c": i}, "\u2715")));
  notes.forEach((n, i) => marks.appendChild(s("circle", {cx: x(n.t), cy: laneY(0) + 10, r: 5, class: "note",
                                                         "data-n": i, "data-kind": n.kind})));
  highlight();
}

function highlight() {
  for (const e of svg.querySelectorAll(".selected")) e.classList.remove("selected");
  if (!selected) return;
  const attr = {x: "data-i", b: "data-b", r: "data-r", c: "data-c", n: "data-n"}[selected.kind];
  for (const e of svg.querySelectorAll(`[${attr}="${selected.i}"]:not(.hit)`)) e.classList.add("selected");
}

function target(node) {
  const e = node && node.closest ? node.closest("[data-i],[data-b],[data-r],[data-c],[data-n]") : null;
  if (!e) return null;
  for (const [what, attr] of [["x", "data-i"], ["b", "data-b"], ["r", "data-r"], ["c", "data-c"], ["n", "data-n"]])
    if (e.hasAttribute(attr)) return {kind: what, i: Number(e.getAttribute(attr))};
  return null;
}

function errorLines(parent, errors, cls) {
  const ul = h("ul", cls);
  for (const err of errors) {
    const li = h("li");
    li.appendChild(h("strong", "", err.error));
    li.appendChild(document.createTextNode(" (code " + err.code + "): "));
    li.appendChild(h("span", "reason", err.reason || "(no reason recorded)"));
    ul.appendChild(li);
  }
  parent.appendChild(ul);
}

function describe(t, into, full) {
  const line = (text, cls) => into.appendChild(h(full ? "p" : "div", cls, text));
  if (t.kind === "x") {
    const ex = exchanges[t.i], lane = lanes[ex.lane];
    into.appendChild(h(full ? "h2" : "div", "", ex.api + (ex.version === null ? "" : " v" + ex.version) + " \u00b7 " +
      (ex.client || "(no client id)") + " \u00b7 " + lane.sub));
    line(ex.tr === null ? "sent at " + at(ex.t) + ", no answer in the file"
         : "sent at " + at(ex.t) + ", answered at " + at(ex.tr) + (ex.tr - ex.t >= 1 ? " (after " + (ex.tr - ex.t) + " ms)" : ""));
    if (ex.errors.length) errorLines(into, ex.errors, "errors" + (full ? "" : " bad"));
    if (ex.ask !== null) line("\u2192 " + (ex.ask || ex.api));
    if (ex.answer !== null && !ex.errors.length) line("\u2190 " + ex.answer);
    if (full) for (const [name, ev] of [["request", ex.request], ["response", ex.response]]) {
      if (!ev) continue;
      const d = h("details"); d.open = name === "response" && ex.errors.length > 0;
      d.appendChild(h("summary", "", name + " as the transcript decoded it"));
      d.appendChild(h("pre", "", JSON.stringify(ev, null, 2)));
      into.appendChild(d);
    }
  } else if (t.kind === "b") {
    const b = bands[t.i];
    into.appendChild(h(full ? "h2" : "div", "", b.state + (b.generation === null ? "" : " \u00b7 generation " + b.generation)));
    line("from " + at(b.t) + " to " + at(b.t_end) + " (" + (b.t_end - b.t) + " ms)");
    line((b.from ? b.from + " \u2192 " + b.state + " because " : "") + (b.reason || "cause unknown"));
  } else if (t.kind === "r") {
    const r = records[t.i];
    into.appendChild(h(full ? "h2" : "div", "", "record written at " + at(r.t)));
    line(r.text);
    if (full) into.appendChild(h("pre", "", JSON.stringify(r.event, null, 2)));
  } else if (t.kind === "n") {
    const n = notes[t.i];
    into.appendChild(h(full ? "h2" : "div", "", n.kind + " at " + at(n.t)));
    line(n.text);
    if (full) into.appendChild(h("pre", "", JSON.stringify(n.event, null, 2)));
  } else {
    const c = closed[t.i];
    into.appendChild(h(full ? "h2" : "div", "", "connection closed at " + at(c.t)));
    line(c.reason || "reason unknown");
  }
}

function select(t) {
  selected = t;
  detail.replaceChildren();
  detail.dataset.kind = t.kind; detail.dataset.i = t.i;
  describe(t, detail, true);
  highlight();
}

function stepError(dir) {
  const errs = exchanges.map((ex, i) => i).filter(i => exchanges[i].errors.length && visible(exchanges[i]));
  if (!errs.length) return;
  errorAt = (errorAt + dir + errs.length) % errs.length;
  const i = errs[errorAt];
  select({kind: "x", i: i});
  scroller.scrollLeft = x(exchanges[i].tr === null ? exchanges[i].t : exchanges[i].tr) - scroller.clientWidth / 2;
}

function zoom(factor, clientX) {
  const box = scroller.getBoundingClientRect();
  const anchor = clientX === null ? box.width / 2 : clientX - box.left;
  const t = (scroller.scrollLeft + anchor - PAD) / scale;
  const next = Math.min(MAX_SCALE, Math.max(fitScale, scale * factor));
  if (next === scale) return;
  scale = next; atFit = scale === fitScale;
  render();
  scroller.scrollLeft = PAD + t * scale - anchor;
}

function fit() {
  fitScale = Math.max(1e-6, (scroller.clientWidth - PAD - PAD_RIGHT) / duration);
  if (atFit || scale < fitScale) scale = fitScale;
  render();
}

function events() {
  let drag = null;
  scroller.addEventListener("pointerdown", e => { drag = {x: e.clientX, left: scroller.scrollLeft, moved: false}; });
  scroller.addEventListener("pointermove", e => {
    if (drag && e.buttons === 1) {
      if (Math.abs(e.clientX - drag.x) > 4) { drag.moved = true; scroller.classList.add("dragging"); }
      if (drag.moved) scroller.scrollLeft = drag.left - (e.clientX - drag.x);
    }
    const t = target(e.target);
    if (!t || (drag && drag.moved)) { tip.style.display = "none"; return; }
    tip.replaceChildren(); describe(t, tip, false);
    tip.style.display = "block";
    const w = tip.offsetWidth, hh = tip.offsetHeight;
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - w - 6) + "px";
    tip.style.top = (e.clientY + 16 + hh > window.innerHeight ? e.clientY - hh - 10 : e.clientY + 16) + "px";
  });
  scroller.addEventListener("pointerleave", () => { tip.style.display = "none"; });
  window.addEventListener("pointerup", () => { scroller.classList.remove("dragging"); });
  svg.addEventListener("click", e => {
    const moved = drag && drag.moved; drag = null;
    if (moved) return;
    const t = target(e.target);
    if (t) select(t);
  });
  scroller.addEventListener("wheel", e => {
    if (!(e.ctrlKey || e.metaKey)) return;
    e.preventDefault();
    zoom(e.deltaY < 0 ? 1.25 : 0.8, e.clientX);
  }, {passive: false});
  window.addEventListener("resize", fit);
}

const wanted = decodeURIComponent((location.hash.match(/group=([^&]*)/) || [])[1] || "");
events();
show(Math.max(0, all.groups.findIndex(g => g.group === wanted)));
})();
"""
