"""The `kgc` command line (also `python -m coordinator`).

    kgc serve [--host H] [--port P] [--brokers N] [--data-dir D] [--adopt-data-dir]
              [--create-topic NAME:PARTITIONS]... [--config server.properties] [--set name=value]...
              [--transcript FILE] [--metrics-port P] [--control-port P] [--log-level LEVEL]
    kgc settings                                   (every setting with its default)
    kgc certs DIR [--host NAME]...                 (a throwaway CA, server and client certificate for TLS)
    kgc dump PATH [--deep] [--json] [--index]
             [--offsets-decoder | --transaction-log-decoder | --share-group-state-decoder]
                                                   (segment, index, .txnindex, .snapshot, partition or data dir)
    kgc check PATH                                 (exit 1 with file, position, offset on a problem)
    kgc groups --bootstrap-server H:P --list|--describe|--reset-offsets ...  (kafka-consumer-groups.sh)
    kgc topics --bootstrap-server H:P --list|--describe|--create|--alter|--delete ...  (kafka-topics.sh)
    kgc configs --bootstrap-server H:P --entity-type topics|brokers|groups --describe|--alter ...  (kafka-configs.sh)
    kgc delete-records --bootstrap-server H:P --offset-json-file FILE  (kafka-delete-records.sh)
    kgc transcript FILE [--group G] [--member M] [--client ID] [--api NAME]... [--follow | --html OUT.html]
    kgc verify DATA_DIR [--before DIR] [--ledger FILE] [--master URL] [--report FILE]  (PySpark)
    kgc control [--url URL] [--token T] VERB ...   (the control API from a shell: fail, delay, advance, ...)

Every failure is one line on stderr saying what to do, and exit status 2 (`--debug`, anywhere on
the line, shows the traceback instead); an internal error is one line too, exit 1. A closed pipe
(`| head`) ends a command quietly. Settings use Kafka's names (`--set group.max.size=3`).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coordinator.cli_parser import COMMAND_FAILED, CommandError, KgcParser
from coordinator.config import Config, ConfigError, check_cluster, parse_assignment, resolve, settings_from_file
from coordinator.config_settings import SETTINGS
from coordinator.datadir import DataDirError
from coordinator.net.bind import bind_listeners

INTERNAL_ERROR = 1
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# processes.ENV_BROKER: set in a broker process of `kgc serve --processes`, which alone loads
# processes.py (subprocess) at start-up; the verifier's launcher loads for `kgc verify` only.
PROCESS_CHILD_ENV = "KGC_PROCESS_BROKER"


def _topic_spec(text: str) -> tuple[str, int]:
    name, _, count = text.rpartition(":")
    if not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected NAME:PARTITIONS, got {text!r}")
    return name, int(count)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0..65535 (0 picks a free one), got {text!r}")
    return port


def build_parser(serve_only: bool = False) -> argparse.ArgumentParser:
    """The whole command line; `serve_only`: just `kgc serve` (a start-up imports none of the
    other commands' modules)."""
    parser = KgcParser(prog="kgc", description="A Kafka group coordinator for tests and learning.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks (accepted anywhere on the line)")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("serve", help="run the server")
    run.add_argument("--host", help="listen and advertise address (default 127.0.0.1)")
    run.add_argument("--port", type=_port, help="port (default 9092; 0 picks a free one); broker i listens on port + i")
    run.add_argument("--brokers", type=int, metavar="N", help="brokers in this process (default 1, at most 64)")
    run.add_argument(
        "--processes",
        action="store_true",
        help="run each broker in a process of its own (uses N cores; leaders are static: no broker "
        "down/up, leader moves or control plane)",
    )
    run.add_argument("--data-dir", help="data directory (default ./data; created if missing)")
    run.add_argument(
        "--adopt-data-dir",
        action="store_true",
        help="use a non-empty data dir that kgc did not create (it may rewrite what it finds)",
    )
    run.add_argument(
        "--create-topic",
        type=_topic_spec,
        action="append",
        default=[],
        metavar="NAME:PARTITIONS",
        help="create this topic if it is missing (repeatable)",
    )
    run.add_argument(
        "--config",
        type=Path,
        help="a properties file of settings (Kafka's server.properties "
        "works: its names are mapped or reported as ignored)",
    )
    run.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="one setting by its Kafka name (repeatable; wins over --config)",
    )
    run.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LOG_LEVELS,
        help="DEBUG, INFO, WARNING or ERROR (default INFO)",
    )
    run.add_argument("--transcript", metavar="FILE", help="write a JSON-lines protocol transcript here")
    run.add_argument("--metrics-port", type=_port, metavar="P", help="serve Prometheus metrics on this port")
    run.add_argument(
        "--control-port",
        type=_port,
        metavar="P",
        help="serve the HTTP/JSON control API on this port (0 picks a free one; loopback only)",
    )
    if serve_only:
        return parser

    commands.add_parser("settings", help="list every setting with its default")

    certs = commands.add_parser("certs", help="make a throwaway CA, server and client certificate for TLS tests")
    certs.add_argument("directory", type=Path, help="where to write ca.pem, server.pem, client.crt, client.key, ...")
    certs.add_argument("--host", action="append", default=[], help="another name the server certificate holds")

    dump = commands.add_parser("dump", help="print log segments as kafka-dump-log.sh does")
    dump.add_argument("path", type=Path, help="a .log/.index/.timeindex file, a partition dir or a data dir")
    dump.add_argument("--deep", action="store_true", help="one line per record, with key and payload")
    dump.add_argument("--json", action="store_true", help="JSON lines instead of text")
    dump.add_argument("--index", action="store_true", help="also print (and check) the index files")
    dump.add_argument(
        "--offsets-decoder",
        action="store_true",
        help="decode __consumer_offsets records as DumpLogSegments --offsets-decoder does",
    )
    dump.add_argument(
        "--transaction-log-decoder",
        action="store_true",
        help="decode __transaction_state records as DumpLogSegments --transaction-log-decoder does",
    )
    dump.add_argument(
        "--share-group-state-decoder",
        action="store_true",
        help="decode __share_group_state records as DumpLogSegments --share-group-state-decoder does",
    )

    check = commands.add_parser("check", help="verify CRCs, offsets, file names and indexes")
    check.add_argument("path", type=Path, help="a segment file, a partition dir or a data dir")

    from coordinator.tools import configs_cli, groups_cli, records_cli, share_groups_cli, topics_cli, transcript_cli

    groups_cli.add_parser(commands)
    share_groups_cli.add_parser(commands)
    topics_cli.add_parser(commands)
    configs_cli.add_parser(commands)
    records_cli.add_parser(commands)
    transcript_cli.add_parser(commands)
    # Listed for --help only: `main` parses `kgc verify ...` with the verifier's own arguments.
    commands.add_parser("verify", help="prove logs, compaction and committed offsets correct with PySpark")
    commands.add_parser("control", help="drive a server's control API (faults, brokers, clock); see kgc control -h")
    return parser


# -- commands: each takes the parsed arguments and returns the exit status ------------------------
def _inspect(args: argparse.Namespace) -> int:
    from storage.dump import check, dump

    if not args.path.exists():
        raise CommandError(
            f"{args.path}: no such file or directory: name a segment file, a partition dir or a data dir"
        )
    if args.command == "dump":
        decoder: Any = None
        if args.offsets_decoder:
            from coordinator.groups.record_json import decode

            decoder = decode
        elif args.transaction_log_decoder:
            from coordinator.txn.record_json import decode as decode_txn

            decoder = decode_txn
        elif args.share_group_state_decoder:
            from coordinator.share.state.record_json import decode as decode_share

            decoder = decode_share
        dump(args.path, sys.stdout, deep=args.deep, json=args.json, index=args.index, decoder=decoder)
        return 0
    problems = check(args.path)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{args.path}: ok")
    return 1 if problems else 0


def _settings(args: argparse.Namespace) -> int:
    for setting in SETTINGS:
        print(f"{setting.name}={setting.default}\n    {setting.help}")
    return 0


def _groups(args: argparse.Namespace) -> int:
    from coordinator.tools.groups_cli import run

    return int(run(args))


def _topics(args: argparse.Namespace) -> int:
    from coordinator.tools.topics_cli import run

    return int(run(args))


def _configs(args: argparse.Namespace) -> int:
    from coordinator.tools.configs_cli import run

    return int(run(args))


def _delete_records(args: argparse.Namespace) -> int:
    from coordinator.tools.records_cli import run

    return int(run(args))


def _share_groups(args: argparse.Namespace) -> int:
    from coordinator.tools.share_groups_cli import run

    return int(run(args))


def _transcript(args: argparse.Namespace) -> int:
    from coordinator.tools.transcript_cli import run

    return int(run(args))


def _serve(args: argparse.Namespace) -> int:
    notes: list[str] = []
    config = resolve_config(args, notes)
    for note in notes:
        print(f"kgc: {note}", file=sys.stderr)
    if PROCESS_CHILD_ENV in os.environ:  # one broker of `kgc serve --processes` (coordinator/processes.py)
        from coordinator.processes import child_setup

        # the parent made every check and holds the data dir
        return _run(args, config, [], child_setup(os.environ))
    # Every refusal first (coordinator/preflight.py), then the ports are bound before trio and the
    # server are imported (coordinator/net/bind.py): they accept connections ~70 ms after exec, and
    # ApiVersions is answered at once (net/early_responder.py); other requests wait for the server.
    from coordinator.observe.logs import setup_logging
    from coordinator.preflight import claimed, stopped_while_starting, terminate_as_interrupt

    setup_logging(args.log_level)
    seen: list[int] = []
    try:
        with terminate_as_interrupt(seen), claimed(config, dict(args.create_topic), bool(args.processes)):
            try:
                bound = bind_listeners(config.host, config.port, config.cluster_brokers)
            except OSError as exc:
                from coordinator.serve_cli import explain_os_error  # (imports trio: on this failure only)

                raise CommandError(explain_os_error(exc, config)) from None
            if args.processes:
                return _serve_processes(args, config, bound)
            return _run(args, config, bound, None, _answer_early(config, bound))
    except KeyboardInterrupt:  # SIGINT/SIGTERM before the server's own handling took over
        line, status = stopped_while_starting(seen)
        print(line, file=sys.stderr)
        return status


def _answer_early(config: Config, bound: list[Any]) -> Any:
    """Answer ApiVersions on the bound ports while the server is imported and built (the first
    answer ~70 ms after exec instead of ~300): net/early_responder.py, when nothing else shapes it."""
    from coordinator.net.early_responder import EarlyResponder, early_plan

    answers = early_plan(config)
    if answers is None:
        return None
    early = EarlyResponder(bound, answers, config.max_connections, config.socket_request_max_bytes)
    early.start()
    return early


def _run(args: argparse.Namespace, config: Config, bound: list[Any], child: Any, early: Any = None) -> int:
    # trio and the server only for `serve`, imported with the collector paused: they make ~58,000
    # objects that nearly all live as long as the process: the ~76 young collections that would
    # walk them meanwhile free ~2,000 (~9 ms of the first answer). Frozen before the collector is
    # back on: else the first allocation after would walk all of them at once, as one young
    # generation (15-25 ms); run() freezes again what start-up built (gc_governor).
    gc.disable()
    try:
        from coordinator.serve_cli import ServeError, run
    finally:
        gc.freeze()
        gc.enable()

    try:
        return run(
            config,
            dict(args.create_topic),
            args.log_level,
            bound=bound or None,
            child=child,
            prepared=child is None,
            early=early,
        )
    except ServeError as exc:
        raise CommandError(str(exc)) from exc


def _serve_processes(args: argparse.Namespace, config: Config, bound: list[Any]) -> int:
    """--processes: this process holds the data dir's lock and prepared the dir (preflight.py);
    it creates the --create-topic topics (later ones are the broker processes', through the data
    dir: cluster/shared_topics.py), then runs one process per broker."""
    from coordinator.broker.topics import TopicRegistry
    from coordinator.groups.group_config import GroupConfig

    GroupConfig.from_config(config)  # its checks here, once: a bad setting is one line and exit 2, not one per child
    data_dir = Path(config.data_dir)
    registry = TopicRegistry(data_dir)
    registry.load()
    for name, partitions in dict(args.create_topic).items():
        registry.ensure(name, partitions, min(config.default_replication_factor, config.cluster_brokers))
    argv = [a for a in sys.argv[1:] if a != "--debug"]
    from coordinator.processes import supervise

    return supervise(argv, bound, config.host, str(data_dir))


def _certs(args: argparse.Namespace) -> int:
    from coordinator.security.certs import make_certs  # cryptography only for this command

    try:
        files = make_certs(args.directory, hosts=args.host)
    except OSError as exc:
        raise CommandError(f"cannot write certificates to {args.directory}: {exc.strerror or exc}") from None
    print(f"kgc: certificates in {files.directory} (for tests only; the CA key is not kept)")
    for name, value in files.server_settings().items():
        print(f"{name}={value}")
    print(f"# clients: ssl.ca.location={files.ca}  (mTLS: ssl.certificate.location={files.client_cert}")
    print(f"#          ssl.key.location={files.client_key}; principal {files.client_principal})")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": _serve,
    "settings": _settings,
    "certs": _certs,
    "dump": _inspect,
    "check": _inspect,
    "groups": _groups,
    "topics": _topics,
    "configs": _configs,
    "delete-records": _delete_records,
    "share-groups": _share_groups,
    "transcript": _transcript,
}


def resolve_config(args: argparse.Namespace, notes: list[str] | None = None) -> Config:
    """The settings of `kgc serve`: defaults < --config file < --set < flags. `notes` gets one
    line per Kafka name the file mapped or kgc ignores."""
    overrides: dict[str, Any] = {}
    if args.config:
        from_file, file_notes = settings_from_file(args.config)
        overrides.update(from_file)
        if notes is not None:
            notes.extend(file_notes)
    overrides.update(resolve(dict(parse_assignment(a) for a in args.assignments), where="--set: "))
    for name, value in (
        ("host", args.host),
        ("port", args.port),
        ("cluster.brokers", args.brokers),
        ("data.dir", args.data_dir),
        ("data.dir.adopt", getattr(args, "adopt_data_dir", None) or None),
        ("transcript.file", args.transcript),
        ("metrics.port", args.metrics_port),
        ("control.port", args.control_port),
    ):
        if value is not None:
            overrides[name] = value
    config = Config(overrides)
    check_cluster(config)
    return config


# -- the entry point -------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or bool(os.environ.get("KGC_DEBUG"))
    argv = [a for a in argv if a != "--debug"]
    try:
        status = _dispatch(argv)
    except BrokenPipeError:  # `kgc ... | head`: the reader has all it wanted
        _silence_stdout()
        status = 0
    except KeyboardInterrupt:
        status = 130
    except (CommandError, ConfigError, DataDirError) as exc:
        if debug:
            raise
        print(f"kgc: {exc}", file=sys.stderr)
        status = COMMAND_FAILED
    except Exception as exc:
        if debug:
            raise
        print(
            f"kgc: internal error: {type(exc).__name__}: {exc} (run again with --debug for the traceback, "
            "and please report it)",
            file=sys.stderr,
        )
        status = INTERNAL_ERROR
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    sys.exit(status)


def _dispatch(argv: list[str]) -> int:
    if argv[:1] == ["verify"]:
        from coordinator.verify_launch import run_verify

        return run_verify(argv[1:])
    if argv[:1] == ["control"]:
        from coordinator.control.cli import main as control_main

        return int(control_main(argv[1:]))
    serve_only = argv[:1] == ["serve"] and not {"-h", "--help"} & set(argv)
    args = build_parser(serve_only).parse_args(argv)
    return COMMANDS[args.command](args)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not report the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
