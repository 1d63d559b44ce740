"""The `kgc` command line (also `python -m coordinator`).

    kgc serve [--host H] [--port P] [--brokers N] [--data-dir D] [--create-topic NAME:PARTITIONS]...
              [--config server.properties] [--set name=value]... [--transcript FILE] [--metrics-port P]
              [--control-port P]
    kgc dump PATH [--deep] [--json] [--index] [--offsets-decoder]   (segment, partition or data dir)
    kgc check PATH                                 (exit 1 with file, position, offset on a problem)
    kgc groups --bootstrap-server H:P --list|--describe|--reset-offsets ...  (kafka-consumer-groups.sh)
    kgc transcript FILE [--group G] [--member M] [--client ID] [--api NAME]... [--follow | --html OUT.html]
                                                   (a --transcript file as a readable timeline or a page)
    kgc verify DATA_DIR [--before DIR] [--ledger FILE] [--master URL] [--report FILE]  (PySpark)
    kgc control [--url URL] [--token T] VERB ...   (the control API from a shell: fail, delay, advance, ...)

Settings use Kafka's names (`--set group.initial.rebalance.delay.ms=3000`); `kgc settings` lists
them with their defaults.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

from coordinator.config import SETTINGS, Config, ConfigError, check_cluster, parse_assignment, read_properties
from coordinator.net.bind import bind_listeners
from coordinator.observe.logs import get_logger, log_event, setup_logging
from coordinator.processes import child_setup, supervise

# trio and the server are imported only once `kgc serve` has bound its ports (see `main`): the
# port accepts connections ~30 ms after exec, and clients that connect meanwhile wait in the
# listen backlog until the server answers.


def _topic_spec(text: str) -> tuple[str, int]:
    name, _, count = text.rpartition(":")
    if not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
    return name, int(count)


def build_parser(serve_only: bool = False) -> argparse.ArgumentParser:
    """The whole command line; `serve_only`: just `kgc serve` (what a start-up needs: the other
    commands' modules are not imported)."""
    parser = argparse.ArgumentParser(prog="kgc", description="A Kafka group coordinator for tests and learning.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("serve", help="run the server")
    run.add_argument("--host", help="listen and advertise address (default 127.0.0.1)")
    run.add_argument("--port", type=int, help="port (default 9092; 0 picks a free one); broker i listens on "
                     "port + i")
    run.add_argument("--brokers", type=int, metavar="N", help="brokers in this process (default 1, at most 64)")
    run.add_argument("--processes", action="store_true",
                     help="run each broker in a process of its own (uses N cores; leaders are static: no broker "
                     "down/up, leader moves, control plane or topic creation after start)")
    run.add_argument("--data-dir", help="data directory (default ./data)")
    run.add_argument("--create-topic", type=_topic_spec, action="append", default=[], metavar="NAME:PARTITIONS",
                     help="create this topic if it is missing (repeatable)")
    run.add_argument("--config", type=Path, help="a Java-style properties file of settings")
    run.add_argument("--set", dest="assignments", action="append", default=[], metavar="NAME=VALUE",
                     help="one setting by its Kafka name (repeatable; wins over --config)")
    run.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    run.add_argument("--transcript", metavar="FILE", help="write a JSON-lines protocol transcript here")
    run.add_argument("--metrics-port", type=int, metavar="P", help="serve Prometheus metrics on this port")
    run.add_argument("--control-port", type=int, metavar="P",
                     help="serve the HTTP/JSON control API on this port (0 picks a free one; loopback only)")
    if serve_only:
        return parser

    commands.add_parser("settings", help="list every setting with its default")

    dump = commands.add_parser("dump", help="print log segments as kafka-dump-log.sh does")
    dump.add_argument("path", type=Path, help="a .log/.index/.timeindex file, a partition dir or a data dir")
    dump.add_argument("--deep", action="store_true", help="one line per record, with key and payload")
    dump.add_argument("--json", action="store_true", help="JSON lines instead of text")
    dump.add_argument("--index", action="store_true", help="also print (and check) the index files")
    dump.add_argument("--offsets-decoder", action="store_true",
                      help="decode __consumer_offsets records as DumpLogSegments --offsets-decoder does")

    check = commands.add_parser("check", help="verify CRCs, offsets, file names and indexes")
    check.add_argument("path", type=Path, help="a segment file, a partition dir or a data dir")

    from coordinator.tools import groups_cli, transcript_cli
    groups_cli.add_parser(commands)
    transcript_cli.add_parser(commands)
    # Listed for --help only: `main` hands `kgc verify ...` to coordinator.verify.cli before
    # parsing, so the verifier's imports never slow down `kgc serve`.
    commands.add_parser("verify", help="prove logs, compaction and committed offsets correct with PySpark")
    commands.add_parser("control", help="drive a server's control API (faults, brokers, clock); see kgc control -h")
    return parser


def _inspect(args: argparse.Namespace) -> int:
    from storage.dump import check, dump

    if not args.path.exists():
        sys.exit(f"kgc: {args.path}: no such file or directory")
    if args.command == "dump":
        try:
            decoder: Any = None
            if args.offsets_decoder:
                from coordinator.groups.record_json import decode
                decoder = decode
            dump(args.path, sys.stdout, deep=args.deep, json=args.json, index=args.index, decoder=decoder)
        except BrokenPipeError:  # `kgc dump ... | head`
            pass
        return 0
    problems = check(args.path)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{args.path}: ok")
    return 1 if problems else 0


def resolve_config(args: argparse.Namespace) -> Config:
    overrides: dict[str, str | int] = {}
    if args.config:
        overrides.update(read_properties(args.config))
    for assignment in args.assignments:
        name, value = parse_assignment(assignment)
        overrides[name] = value
    for name, value in (("host", args.host), ("port", args.port), ("cluster.brokers", args.brokers),
                        ("data.dir", args.data_dir),
                        ("transcript.file", args.transcript), ("metrics.port", args.metrics_port),
                        ("control.port", args.control_port)):
        if value is not None:
            overrides[name] = value
    config = Config(overrides)
    check_cluster(config)
    return config


async def _serve_until_signalled(config: Config, topics: dict[str, int], bound: list[list[Any]],
                                 child: tuple[int, list[int], list[Any], int] | None = None) -> None:
    from functools import partial

    import trio

    from coordinator.server import serve

    log = get_logger("main")
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            if child is None:
                server = await nursery.start(partial(serve, config, topics, bound=bound))
                print(f"kgc: serving bootstrap={server.bootstrap} with data in {config.data_path}", flush=True)
            else:  # one broker of `kgc serve --processes` (coordinator/processes.py): tell the parent
                index, ports, sockets, ready_fd = child
                server = await nursery.start(partial(serve, config, topics, ports=ports, bound=[sockets],
                                                     only_broker=index))
                os.write(ready_fd, b"\x01")
                os.close(ready_fd)
            tap = server.broker.tap
            if server.control_url is not None:
                print(f"kgc: control={server.control_url}", flush=True)
            if server.metrics_port is not None:
                print(f"kgc: metrics on http://{config.host}:{server.metrics_port}/metrics", flush=True)
            if tap is not None and tap.transcript is not None:
                print(f"kgc: transcript in {tap.transcript.path}", flush=True)
            async for signum in signals:
                log_event(log, "server.shutdown", signal=signal.Signals(signum).name)
                server.stop()
                break


def _create_topics(config: Config, topics: dict[str, int]) -> None:
    """--processes: the topics exist before any broker process starts (none may create them later)."""
    from coordinator.broker.topics import TopicRegistry

    config.data_path.mkdir(parents=True, exist_ok=True)
    registry = TopicRegistry(config.data_path)
    registry.load()
    for name, partitions in topics.items():
        registry.ensure(name, partitions, min(config.default_replication_factor, config.cluster_brokers))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["verify"]:
        from coordinator.verify.cli import main as verify_main
        sys.exit(verify_main(argv[1:]))
    if argv[:1] == ["control"]:
        from coordinator.control.cli import main as control_main
        sys.exit(control_main(argv[1:]))
    args = build_parser(serve_only=argv[:1] == ["serve"] and not {"-h", "--help"} & set(argv)).parse_args(argv)
    if args.command == "groups":
        from coordinator.tools.groups_cli import run as run_groups
        sys.exit(run_groups(args))
    if args.command == "transcript":
        from coordinator.tools.transcript_cli import run as run_transcript
        sys.exit(run_transcript(args))
    if args.command in ("dump", "check"):
        sys.exit(_inspect(args))
    if args.command == "settings":
        for setting in SETTINGS:
            print(f"{setting.name}={setting.default}\n    {setting.help}")
        return
    try:
        config = resolve_config(args)
    except (ConfigError, OSError) as exc:
        sys.exit(f"kgc: {exc}")
    setup_logging(args.log_level)
    child = child_setup(os.environ)
    if child is not None:
        bound = []
    else:
        try:
            bound = bind_listeners(config.host, config.port, config.cluster_brokers)
        except OSError as exc:
            sys.exit(f"kgc: cannot serve on {config.host}:{config.port}: {exc}")
    if args.processes and child is None:
        if config.control_enable or config.control_port >= 0:
            sys.exit("kgc: the control plane needs every broker in one process: it cannot run with --processes")
        _create_topics(config, dict(args.create_topic))
        sys.exit(supervise(argv, bound, config.host, str(config.data_path)))
    import trio

    try:
        trio.run(_serve_until_signalled, config, dict(args.create_topic), bound, child)
    except OSError as exc:
        sys.exit(f"kgc: cannot serve on {config.host}:{config.port}: {exc}")


if __name__ == "__main__":
    main()
