"""Kafka's server.properties: the Java properties format, and Kafka's broker names mapped onto ours.

`read(path)` parses a file as java.util.Properties.load does (`=`, `:` or whitespace separators,
`#`/`!` comments, backslash continuations and escapes; a repeated key: the last one wins) and
keeps each key's line. `translate(entries, ours)` turns Kafka's names that mean something here
into kgc settings (log.dirs -> data.dir, broker.id -> node.id, log.retention.hours ->
log.retention.ms, ...), with a note per mapping, and hands back the names it does not know. The
listener settings are kgc settings too (every client listener is served); here the first one
also names `port` and `host`. It imports nothing of the project: config.py decides what is ours.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


class PropertiesError(ValueError):
    """A value kgc cannot serve as given (e.g. only SSL listeners); the text names where."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    value: str
    where: str = ""  # "server.properties:12: " for a file, "" for --set or Python settings


@dataclass(slots=True)
class Translation:
    settings: dict[str, str] = field(default_factory=dict)  # kgc names -> text values
    notes: list[str] = field(default_factory=list)  # one line per mapping, "where" first
    unknown: list[Entry] = field(default_factory=list)  # neither ours nor mapped


# -- the Java properties format ------------------------------------------------------------------
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read(path: Path) -> list[Entry]:
    """Every key of the file once (its last value), in file order, with `file:line` for notes."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # what Properties.load(InputStream) reads
    found: dict[str, Entry] = {}
    for number, logical in _logical_lines(text.splitlines()):
        name, value = _split(logical)
        found.pop(name, None)  # a repeated key: the last one wins, at its own line
        found[name] = Entry(name, value, f"{path.name}:{number}: ")
    return list(found.values())


def _logical_lines(lines: list[str]) -> Iterable[tuple[int, str]]:
    """(first line number, text) of each logical line: comments and blanks dropped, a line that
    ends in an odd number of backslashes continued by the next one (its leading blanks skipped)."""
    pending: str | None = None
    start = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.lstrip(" \t\f")
        if pending is None:
            if not stripped or stripped[0] in "#!":
                continue
            start, pending = number, stripped
        else:
            pending += stripped
        trailing = len(pending) - len(pending.rstrip("\\"))
        if trailing % 2:
            pending = pending[:-1]
            continue
        yield start, pending
        pending = None
    if pending is not None:
        yield start, pending


def _split(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# -- Kafka's names -> ours -----------------------------------------------------------------------
# A Kafka name that sets one of ours, by rank: where several set the same one, the lowest rank
# wins whatever the order (our own name is rank 0), as KafkaConfig resolves log.retention.ms >
# .minutes > .hours and log.dirs > log.dir.
_ALIASES: dict[str, tuple[str, int]] = {
    "log.dirs": ("data.dir", 1),
    "log.dir": ("data.dir", 2),
    "broker.id": ("node.id", 1),
    "log.retention.minutes": ("log.retention.ms", 1),
    "log.retention.hours": ("log.retention.ms", 2),
}
_MS_PER = {"log.retention.minutes": 60_000, "log.retention.hours": 3_600_000}
# Read only to pick the listener that `listeners` and `advertised.listeners` name.
LISTENER_KEYS = ("controller.listener.names", "inter.broker.listener.name", "listener.security.protocol.map")
# kgc settings of their own too (coordinator/security/listeners.py serves every listener they name);
# here they also name the first listener's host and port.
LISTENER_SETTINGS = ("listeners", "advertised.listeners", *LISTENER_KEYS)
ANY_ADDRESS = ("", "0.0.0.0", "::", "[::]")


def mapped_names() -> frozenset[str]:
    """Kafka names `translate` maps onto kgc settings (accepted wherever a setting is)."""
    return frozenset(_ALIASES) | {"listeners", "advertised.listeners", *LISTENER_KEYS}


def translate(entries: Iterable[Entry], ours: Collection[str]) -> Translation:
    result = Translation()
    by_name = {e.name: e for e in entries}
    ranked: dict[str, tuple[int, str]] = {}
    for entry in by_name.values():
        if entry.name in LISTENER_SETTINGS:
            continue  # _listeners below
        if entry.name in ours:
            ranked[entry.name] = (0, entry.value)
        elif entry.name in _ALIASES:
            target, rank = _ALIASES[entry.name]
            value = _alias_value(entry, result.notes)
            if rank < ranked.get(target, (99, ""))[0]:
                ranked[target] = (rank, value)
            result.notes.append(f"{entry.where}{entry.name}={entry.value} -> {target}={value}")
        else:
            result.unknown.append(entry)
    for target, (_rank, value) in ranked.items():
        result.settings[target] = value
    if "listeners" in by_name or "advertised.listeners" in by_name:
        _listeners(by_name, result)
    return result


def _alias_value(entry: Entry, notes: list[str]) -> str:
    if entry.name == "log.dirs":
        dirs = [d.strip() for d in entry.value.split(",") if d.strip()]
        if len(dirs) > 1:
            notes.append(f"{entry.where}log.dirs: kgc keeps one data dir: using {dirs[0]}, not {', '.join(dirs[1:])}")
        return dirs[0] if dirs else entry.value
    if entry.name in _MS_PER:
        try:
            amount = int(entry.value.strip())
        except ValueError:
            raise PropertiesError(f"{entry.where}{entry.name}={entry.value!r}: expected an integer") from None
        return "-1" if amount < 0 else str(amount * _MS_PER[entry.name])  # KafkaConfig: negative = forever
    return entry.value


@dataclass(frozen=True, slots=True)
class ListenerAddress:
    name: str
    host: str
    port: int


def parse_listeners(entry: Entry) -> list[ListenerAddress]:
    """`NAME://host:port,...` as Kafka's CoreUtils.listenerListToEndPoints reads it."""
    found = []
    for item in (part.strip() for part in entry.value.split(",")):
        if not item:
            continue
        name, sep, address = item.partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise PropertiesError(f"{entry.where}{entry.name}: expected NAME://host:port, got {item!r}")
        found.append(ListenerAddress(name.upper(), host.strip("[]") if host.startswith("[") else host, int(port)))
    return found


def primary_listener(
    every: list[ListenerAddress], protocols: Mapping[str, str], controllers: set[str], inter: str | None, where: str
) -> list[ListenerAddress]:
    """The client listeners (not a controller's) with the one served first in front: the
    inter-broker listener if it is one of them, else the first. Unknown protocols are errors."""
    clients = [lst for lst in every if lst.name not in controllers]
    for lst in clients:
        if lst.name not in protocols:
            raise PropertiesError(
                f"{where}listener {lst.name} has no security protocol: name it in listener.security.protocol.map"
            )
        if protocols[lst.name] not in PROTOCOLS:
            raise PropertiesError(f"{where}listener {lst.name}: unknown security protocol {protocols[lst.name]}")
    if not clients:
        raise PropertiesError(f"{where}no client listener (only controller listeners): add one, e.g. PLAINTEXT://:9092")
    first = next((lst for lst in clients if inter and lst.name == inter), clients[0])
    return [first, *[lst for lst in clients if lst is not first]]


PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def protocol_map(text: str | None) -> dict[str, str]:
    """listener.security.protocol.map over Kafka's default (each protocol names itself)."""
    protocols = {p: p for p in PROTOCOLS}
    for pair in (text or "").split(","):
        name, sep, protocol = pair.partition(":")
        if sep:
            protocols[name.strip().upper()] = protocol.strip().upper()
    return protocols


def _listeners(by_name: Mapping[str, Entry], result: Translation) -> None:
    """Every client listener is served (coordinator/security/listeners.py); the first one's port,
    and its advertised host (else its own), become `port` and `host`."""
    source = by_name.get("listeners") or by_name["advertised.listeners"]
    protocols = protocol_map(
        by_name["listener.security.protocol.map"].value if "listener.security.protocol.map" in by_name else None
    )
    controllers = {n.strip().upper() for n in by_name.get("controller.listener.names", Entry("", "")).value.split(",")}
    every = parse_listeners(source)
    inter = by_name.get("inter.broker.listener.name")
    served = primary_listener(
        every, protocols, controllers, inter.value.strip().upper() if inter else None, source.where
    )
    chosen = served[0]
    host = None if chosen.host in ANY_ADDRESS else chosen.host
    advertised = by_name.get("advertised.listeners")
    if advertised is not None and advertised is not source:
        match = next((lst for lst in parse_listeners(advertised) if lst.name == chosen.name), None)
        if match is not None and match.host not in ANY_ADDRESS:
            host = match.host
        if match is not None and match.port != chosen.port:
            result.notes.append(
                f"{advertised.where}advertised.listeners: kgc advertises the port it listens "
                f"on, {chosen.port}, not {match.port}"
            )
    settings = {"port": str(chosen.port), **({"host": host} if host is not None else {})}
    for name, value in settings.items():
        result.settings.setdefault(name, value)  # our own host/port, given in the same place, win
    skipped = sorted({lst.name for lst in every} - {lst.name for lst in served})
    also = f", then {', '.join(lst.name for lst in served[1:])}" if served[1:] else ""
    result.notes.append(
        f"{source.where}{source.name}: serving {chosen.name}{also} -> "
        + " ".join(f"{k}={v}" for k, v in settings.items())
        + (f" (not serving {', '.join(skipped)})" if skipped else "")
        + (
            ""
            if host is not None
            else "; host stays as set (kgc listens on and advertises one address, 127.0.0.1 unless set)"
        )
    )
