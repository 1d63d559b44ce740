"""ShareFetch and ShareAcknowledge lines of the timeline (`kgc transcript`, the --html page), from
the per-partition summaries the transcript writes (coordinator/observe/share_summary.py): what a
member acknowledged, what it was given (acquired ranges with their delivery counts) and what was
refused. One line per request or answer, partitions in the order the summary lists them."""

from __future__ import annotations

from typing import Any

SHARE_APIS = frozenset({"ShareFetch", "ShareAcknowledge"})


def _tp(p: dict[str, Any]) -> str:
    return f"{p['topic']}-{p['partition']}"


def _ranges(runs: list[list[Any]], label: str) -> str:
    """[[first, last, x], ...] as 'first-last x, ...' (one offset alone as 'first x')."""
    return ", ".join(f"{f}{'' if f == t else f'-{t}'} {label}{x}" for f, t, x in runs)


def share_request_text(partitions: list[dict[str, Any]]) -> str:
    out = []
    for p in partitions:
        acks = p.get("acks") or []
        out.append(f"{_tp(p)} acks {_ranges(acks, '')}" if acks else _tp(p))
    return ", ".join(out) or "(session: no changes)"


def share_response_text(partitions: list[dict[str, Any]]) -> str:
    def one(p: dict[str, Any]) -> str:
        parts = []
        if p.get("error"):
            parts.append(p["error"])
        if p.get("ack_error"):
            parts.append(f"acknowledgement {p['ack_error']}")
        acquired = p.get("acquired")
        if acquired:
            parts.append(f"acquired {_ranges(acquired, 'delivery ')} ({p.get('records', 0)} records)")
        elif acquired is not None and not parts:
            parts.append("nothing acquired")
        return f"{_tp(p)}: {'; '.join(parts) or 'ok'}"

    return "; ".join(one(p) for p in partitions) or "(session: no changes)"
