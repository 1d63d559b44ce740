"""`kgc transcript FILE [--group G] [--member M] [--client ID] [--api NAME]... [--follow | --html OUT]`.

Text (transcript_render.py) or one self-contained page of every group (transcript_html.py) from
a transcript file. `--follow` keeps printing as the server appends, like `tail -f`, until Ctrl-C
(exit 130); a half-written last line waits for its end. Failures are one line on stderr and exit 2 (a file
that is not a transcript, an unknown API); a closed pipe (`| head`) ends the command quietly.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from coordinator.tools.transcript_events import BadTranscript, Selection
from coordinator.tools.transcript_render import render

FOLLOW_POLL_SECONDS = 0.2  # how often --follow looks for more at the end of the file


def add_parser(commands: Any) -> None:
    p = commands.add_parser("transcript", help="render a --transcript file as a readable timeline or a page")
    p.add_argument("file", help="a transcript written by kgc serve --transcript")
    p.add_argument("--group", help="only the events of this group")
    p.add_argument(
        "--member",
        metavar="M",
        help="only requests/responses of members whose id contains M "
        "(e.g. the short id the timeline shows), and transitions they caused",
    )
    p.add_argument("--client", metavar="ID", help="only requests/responses of this client id")
    p.add_argument(
        "--api",
        action="append",
        default=[],
        metavar="NAME",
        help="only these APIs, e.g. --api JoinGroup --api SyncGroup (repeatable)",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument("--follow", "-f", action="store_true", help="keep printing as the file grows (Ctrl-C stops)")
    how.add_argument(
        "--html",
        metavar="OUT.html",
        help="write one self-contained page of every group (pick one on the page; --group: that one): "
        "a lane per member, requests and responses as arrows, states as bands, errors with their reasons",
    )


def run(args: Any, out: TextIO | None = None, wait_for_more: Callable[[], None] | None = None) -> int:
    """The command; `out` and `wait_for_more` (called at the end of the file with --follow) are
    injectable so tests drive --follow without sleeping."""
    out = sys.stdout if out is None else out
    try:
        selection = Selection.of(args.group, args.member, args.client, args.api)
        if args.html:
            from coordinator.tools.transcript_html import write_page

            with open(args.file, encoding="utf-8") as f:
                summary = write_page(f, args.html, selection, source=args.file)
            print(f"kgc: wrote {args.html} ({summary})", file=out)
            return 0
        with open(args.file, encoding="utf-8") as f:
            if args.follow:
                wait = wait_for_more or (lambda: time.sleep(FOLLOW_POLL_SECONDS))
                return render(_follow(f, out, wait), selection, out, args.file)
            return render(f, selection, out, args.file)
    except BadTranscript as exc:
        print(f"kgc: {exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"kgc: {args.file} is not a transcript (not UTF-8 text: {exc.reason})", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `kgc transcript ... | head`: the reader has all it wanted
        _silence_stdout()
        return 0
    except OSError as exc:
        print(f"kgc: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C ends --follow (and a long render) without a traceback
        out.flush()
        return 130


def _follow(f: TextIO, out: TextIO, wait_for_more: Callable[[], None]) -> Iterator[str]:
    """The file's lines, then every line appended later; a line is yielded only once complete."""
    partial = ""
    while True:
        chunk = f.readline()
        if not chunk:
            out.flush()  # show what there is before waiting
            wait_for_more()
            continue
        partial += chunk
        if partial.endswith("\n"):
            yield partial
            partial = ""


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not report the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
