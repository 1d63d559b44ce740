"""`kgc control [--url URL] [--token T] VERB ...`: the control API from a shell.

Each verb is one HTTP call (stdlib urllib: no dependency); the answer is printed as JSON on
stdout, exit 0. A refusal or an unreachable server prints one line on stderr, exit 2. The URL
and token also come from KGC_CONTROL_URL and KGC_CONTROL_TOKEN (the `control=` line of
`kgc serve` prints the URL).

    kgc control --url http://127.0.0.1:9644 fail OffsetCommit NOT_COORDINATOR --count 1
    kgc control delay Fetch 500 --count 10
    kgc control advance 30000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

Call = tuple[str, str, Any]  # method, path, JSON body (None: no body)


class CliError(Exception):
    pass


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgc control", description="Drive a kgc server's control API.")
    parser.add_argument(
        "--url",
        default=os.environ.get("KGC_CONTROL_URL"),
        help="the control API (default $KGC_CONTROL_URL), e.g. http://127.0.0.1:9644",
    )
    parser.add_argument(
        "--token", default=os.environ.get("KGC_CONTROL_TOKEN"), help="bearer token (default $KGC_CONTROL_TOKEN)"
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, help_text: str, build: Callable[[argparse.Namespace], Call]) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text)
        sub.set_defaults(build=build)
        return sub

    verb("brokers", "list brokers", lambda a: ("GET", "/v1/brokers", None))
    verb("broker-down", "take a broker down", lambda a: ("POST", f"/v1/brokers/{a.node}/down", None)).add_argument(
        "node", type=int
    )
    verb("broker-up", "bring a broker back", lambda a: ("POST", f"/v1/brokers/{a.node}/up", None)).add_argument(
        "node", type=int
    )

    fail = verb("fail", "answer matching requests with error codes (a FIFO list, one per request)", _fail)
    fail.add_argument("api", help="Kafka's API name (OffsetCommit) or key")
    fail.add_argument("errors", help="ERROR[,ERROR...]: names (NOT_COORDINATOR) or codes")
    fail.add_argument("--every", action="store_true", help="one code, every matching request (until --count/removed)")
    _matchers(fail)
    delay = verb("delay", "hold the responses to matching requests", _action({"delay_ms": "ms"}))
    delay.add_argument("api")
    delay.add_argument("ms", type=int)
    _matchers(delay)
    throttle = verb("throttle", "answer with throttle_time_ms set", _action({"throttle_ms": "ms"}))
    throttle.add_argument("api")
    throttle.add_argument("ms", type=int)
    _matchers(throttle)
    drop = verb("drop", "apply matching requests and answer nothing", _action({"drop_response": True}))
    drop.add_argument("api")
    _matchers(drop)
    close = verb("close", "close the connection on matching requests", _close)
    close.add_argument("api")
    close.add_argument("--after", action="store_true", help="apply the request first (default: refuse it)")
    _matchers(close)
    verb(
        "rule",
        "add a rule given as JSON (the POST /v1/faults body)",
        lambda a: ("POST", "/v1/faults", _json_arg(a.json)),
    ).add_argument("json")
    verb("faults", "list fault rules with their hits", lambda a: ("GET", "/v1/faults", None))
    verb("unfault", "remove a fault rule", lambda a: ("DELETE", f"/v1/faults/{a.id}", None)).add_argument(
        "id", type=int
    )
    verb("clear-faults", "remove every fault rule", lambda a: ("DELETE", "/v1/faults", None))

    verb("acls", "list the ACLs", lambda a: ("GET", "/v1/acls", None))
    acl = verb("acl", "add an ACL (Kafka's names)", _acl)
    acl.add_argument("resource_type", help="TOPIC, GROUP, CLUSTER or TRANSACTIONAL_ID")
    acl.add_argument("name", help="the resource's name (kafka-cluster for CLUSTER), or a prefix with --prefixed")
    acl.add_argument("principal", help="User:alice or User:*")
    acl.add_argument("operation", help="READ, WRITE, DESCRIBE, ..., ALL")
    acl.add_argument("--deny", action="store_true", help="a DENY ACL (default ALLOW)")
    acl.add_argument("--prefixed", action="store_true", help="a PREFIXED pattern (default LITERAL)")
    acl.add_argument("--host", default="*")
    scram = verb("scram-user", "give a user SCRAM credentials; the password is read from stdin", _scram_user)
    scram.add_argument("user")
    scram.add_argument("--mechanism", default="SCRAM-SHA-512", choices=("SCRAM-SHA-256", "SCRAM-SHA-512"))
    verb("security", "each listener's counters and open connections", lambda a: ("GET", "/v1/security", None))

    verb("group", "show a group", lambda a: ("GET", f"/v1/groups/{_q(a.group)}", None)).add_argument("group")
    move = verb(
        "move-coordinator",
        "move a group's coordinator",
        lambda a: ("POST", f"/v1/groups/{_q(a.group)}/coordinator", {"node_id": a.node}),
    )
    move.add_argument("group")
    move.add_argument("node", type=int)
    expire = verb(
        "expire",
        "expire a member now",
        lambda a: ("POST", f"/v1/groups/{_q(a.group)}/members/{_q(a.member)}/expire", None),
    )
    expire.add_argument("group")
    expire.add_argument("member")
    verb(
        "rebalance", "rebalance a group now", lambda a: ("POST", f"/v1/groups/{_q(a.group)}/rebalance", None)
    ).add_argument("group")
    leader = verb(
        "move-leader",
        "move a partition's leader",
        lambda a: ("POST", f"/v1/partitions/{_q(a.topic)}/{a.partition}/leader", {"node_id": a.node}),
    )
    leader.add_argument("topic")
    leader.add_argument("partition", type=int)
    leader.add_argument("node", type=int)
    leaderless = verb(
        "leaderless",
        "leave a partition without a leader",
        lambda a: ("POST", f"/v1/partitions/{_q(a.topic)}/{a.partition}/leaderless", None),
    )
    leaderless.add_argument("topic")
    leaderless.add_argument("partition", type=int)
    verb(
        "load-delay",
        "make coordinators take this long to load",
        lambda a: ("POST", "/v1/coordinator-load-delay", {"ms": a.ms}),
    ).add_argument("ms", type=int)

    verb("versions", "list advertised API versions", lambda a: ("GET", "/v1/versions", None))
    limit = verb(
        "limit-version",
        "advertise at most this version of an API (-1 withdraws it)",
        lambda a: ("POST", "/v1/versions", {"api": a.api, "max_version": a.max_version}),
    )
    limit.add_argument("api")
    limit.add_argument("max_version", type=int)
    verb("clear-versions", "advertise every served version again", lambda a: ("DELETE", "/v1/versions", None))

    verb("clock", "show the server clock", lambda a: ("GET", "/v1/clock", None))
    verb("advance", "advance the manual clock", lambda a: ("POST", "/v1/clock/advance", {"ms": a.ms})).add_argument(
        "ms", type=int
    )
    requests = verb("requests", "requests the server answered, from a cursor on", _requests)
    requests.add_argument("--since", type=int, default=0)
    requests.add_argument("--api")
    requests.add_argument("--group")
    requests.add_argument("--limit", type=int)
    verb("snapshot", "groups, offsets, topics and leaders as JSON", lambda a: ("GET", "/v1/snapshot", None))
    verb(
        "share-settings",
        "show share-group settings, or change them: NAME=VALUE ... (group.share.record.lock.duration.ms=5000)",
        _share_settings,
    ).add_argument("changes", nargs="*")
    verb(
        "share-partitions",
        "what a share group's share-partitions hold now",
        lambda a: ("GET", f"/v1/share/groups/{_q(a.group)}/partitions", None),
    ).add_argument("group")
    telemetry = verb("telemetry", "clients that pushed their metrics (KIP-714), or one client's metrics", _telemetry)
    telemetry.add_argument("client", nargs="?", help="client instance id or client id")
    telemetry.add_argument("--prefix", default="", help="only metrics whose name starts with this")
    verb(
        "telemetry-subscriptions",
        "client-metrics subscriptions",
        lambda a: ("GET", "/v1/telemetry/subscriptions", None),
    )
    subscribe = verb(
        "telemetry-subscribe", "set a client-metrics subscription (as AlterConfigs on CLIENT_METRICS)", _subscribe
    )
    subscribe.add_argument("name")
    subscribe.add_argument("--metrics", help='prefixes, comma-separated; "*" for all')
    subscribe.add_argument("--interval-ms", type=int)
    subscribe.add_argument("--match", help="selector=regex[,selector=regex]")
    verb(
        "telemetry-unsubscribe",
        "remove a client-metrics subscription",
        lambda a: ("DELETE", f"/v1/telemetry/subscriptions/{_q(a.name)}", None),
    ).add_argument("name")
    return parser


def _telemetry(args: argparse.Namespace) -> Call:
    if args.client is None:
        return "GET", "/v1/telemetry/clients", None
    query = "?" + urllib.parse.urlencode({"prefix": args.prefix}) if args.prefix else ""
    return "GET", f"/v1/telemetry/clients/{_q(args.client)}{query}", None


def _subscribe(args: argparse.Namespace) -> Call:
    body = {"metrics": args.metrics, "interval_ms": args.interval_ms, "match": args.match}
    return "PUT", f"/v1/telemetry/subscriptions/{_q(args.name)}", {k: v for k, v in body.items() if v is not None}


def _share_settings(args: argparse.Namespace) -> Call:
    if not args.changes:
        return "GET", "/v1/share/settings", None
    changes: dict[str, Any] = {}
    for item in args.changes:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"expected NAME=VALUE, got {item!r}")
        changes[name] = int(value) if value.lstrip("-").isdigit() else value
    return "PATCH", "/v1/share/settings", changes


def _matchers(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--count", type=int, help="act on this many requests, then end")
    sub.add_argument("--nth", type=int, help="act from the n-th matching request on")
    sub.add_argument("--for-ms", type=int, help="end this long after now")
    sub.add_argument("--group")
    sub.add_argument("--member", help="member id or group instance id")
    sub.add_argument("--client-id")
    sub.add_argument("--broker", type=int)
    sub.add_argument("--topic")
    sub.add_argument("--partition", type=int)
    sub.add_argument("--state", help="only while the group is in this state, e.g. CompletingRebalance")
    sub.add_argument("--min-version", type=int)
    sub.add_argument("--max-version", type=int)


_MATCH_FIELDS = {
    "count": "count",
    "nth": "nth",
    "for_ms": "for_ms",
    "group": "group",
    "member": "member",
    "client_id": "client_id",
    "broker": "broker",
    "topic": "topic",
    "partition": "partition",
    "state": "group_state",
    "min_version": "min_version",
    "max_version": "max_version",
}


def _rule(args: argparse.Namespace, **action: Any) -> Call:
    body: dict[str, Any] = {"api": args.api, **action}
    body.update({field: getattr(args, arg) for arg, field in _MATCH_FIELDS.items() if getattr(args, arg) is not None})
    return "POST", "/v1/faults", body


def _fail(args: argparse.Namespace) -> Call:
    codes: list[str | int] = [int(e) if e.lstrip("-").isdigit() else e for e in args.errors.split(",") if e]
    if args.every:
        if len(codes) != 1:
            raise CliError("--every takes one error")
        return _rule(args, error=codes[0])
    return _rule(args, errors=codes)


def _action(fields: dict[str, Any]) -> Callable[[argparse.Namespace], Call]:
    def build(args: argparse.Namespace) -> Call:
        return _rule(args, **{k: getattr(args, v) if isinstance(v, str) else v for k, v in fields.items()})

    return build


def _acl(args: argparse.Namespace) -> Call:
    body = {
        "resource_type": args.resource_type,
        "name": args.name,
        "principal": args.principal,
        "operation": args.operation,
        "permission": "DENY" if args.deny else "ALLOW",
        "pattern_type": "PREFIXED" if args.prefixed else "LITERAL",
        "host": args.host,
    }
    return "POST", "/v1/acls", body


def _scram_user(args: argparse.Namespace) -> Call:
    """The password comes on stdin (never on the command line, where `ps` would show it)."""
    password = sys.stdin.readline().rstrip("\n")
    if not password:
        raise CliError('give the password on stdin (echo "$PASSWORD" | kgc control scram-user NAME)')
    return "POST", "/v1/scram-users", {"user": args.user, "password": password, "mechanism": args.mechanism}


def _close(args: argparse.Namespace) -> Call:
    return _rule(args, close="after" if args.after else "before")


def _requests(args: argparse.Namespace) -> Call:
    query = {"since": args.since, "api": args.api, "group": args.group, "limit": args.limit}
    return "GET", "/v1/requests?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None}), None


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"the rule is not JSON: {exc}") from None


def call(url: str, method: str, path: str, body: Any = None, token: str | None = None, timeout: float = 60) -> Any:
    """One request to the control API; its JSON answer, or CliError with the server's one line."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", exc.reason)
        except (ValueError, AttributeError):
            reason = exc.reason
        raise CliError(f"{exc.code} {reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise CliError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if not args.url:
            raise CliError("give --url or set KGC_CONTROL_URL (kgc serve prints control=URL)")
        method, path, body = args.build(args)
        answer = call(args.url, method, path, body, args.token)
    except CliError as exc:
        print(f"kgc control: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
