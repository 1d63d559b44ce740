"""`kgc transcript` as a command: filters by member, API and client besides group; --follow
driven by an injected "wait for more" that appends to the file (no sleeps); one-line failures
with exit 2; a closed pipe ends it quietly."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from coordinator.__main__ import build_parser, main
from coordinator.tools.transcript_cli import run
from tests.tools import transcript_sample as sample
from tests.tools.transcript_sample import ALICE


def shown(path, capsys, *extra: str, code: int = 0) -> list[str]:
    """The lines `kgc transcript` prints, without their times."""
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), *extra])
    out = capsys.readouterr()
    assert exit_info.value.code == code, out.err
    return [line.split(None, 1)[1] for line in out.out.splitlines()]


@pytest.fixture
def path(tmp_path):
    return sample.write(tmp_path / "t.jsonl")


def test_member_keeps_its_requests_answers_and_the_transitions_it_caused(path, capsys):
    lines = shown(path, capsys, "--member", "bob-7ba6")
    assert lines == [
        "bob          -> JoinGroup v5  member bob-7ba641b3, protocols ['range'], topics ['orders'], session 6000 ms",
        "[shop]       == Stable -> PreparingRebalance (generation 1)  because JoinGroup from client 'bob' member 'bob-7ba641b3'",
        "bob          <- JoinGroup  generation 2, protocol range, leader alice-0109dcd9, you are bob-7ba641b3",
        "bob          -> LeaveGroup v5  members bob-7ba641b3",
        "bob          <- LeaveGroup  ok",
        "[shop]       == CompletingRebalance -> PreparingRebalance (generation 2)  because LeaveGroup from client 'bob' member 'bob-7ba641b3'",
        "[conn 3]     xx connection closed: client closed",
    ]
    # a substring anywhere in the id works too; the join before alice had an id follows its answer
    alice = shown(path, capsys, "--member", ALICE[-12:])
    assert alice[:2] == [
        "alice        -> JoinGroup v5  member alice-0109dcd9, protocols ['range'], topics ['orders'], session 6000 ms",
        "alice        <- JoinGroup  generation 1, protocol range, leader alice-0109dcd9, you are alice-0109dcd9, members ['alice-0109dcd9']",
    ]


def test_api_is_repeatable_case_insensitive_and_keeps_transitions_it_caused(path, capsys):
    lines = shown(path, capsys, "--api", "heartbeat", "--api", "LeaveGroup", "--group", "shop")
    expected = [
        "alice        -> Heartbeat v5",
        "alice        <- Heartbeat  REBALANCE_IN_PROGRESS",
        "bob          -> LeaveGroup v5",
        "bob          <- LeaveGroup  ok",
        "[shop]       == CompletingRebalance -> PreparingRebalance (generation 2)",
    ]
    assert len(lines) == len(expected) and all(a.startswith(b) for a, b in zip(lines, expected)), lines


def test_client_keeps_that_clients_exchanges_everywhere(path, capsys):
    lines = shown(path, capsys, "--client", "bob", "--api", "Fetch")
    assert lines == [
        "bob          -> Fetch v5  orders-1 from offset 0",
        "bob          <- Fetch  orders-1: nothing new, high watermark 0",
    ]
    assert shown(path, capsys, "--client", "bo", code=1) == []  # a client id is matched whole


def test_group_still_leaves_other_groups_out(path, capsys):
    lines = shown(path, capsys, "--group", "other")
    assert lines == [
        "admin        -> DescribeGroups v5",
        "admin        <- DescribeGroups  ok",
        "[other]      == Stable -> Dead (generation 0)  because DeleteGroups from client 'admin'",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json at all\n", "line 1 is not JSON"),
        (json.dumps(sample.events()[0]) + "\n[1, 2]\n", "line 2 is not a transcript event"),
        ('\n{"ts": 1, "type": "request"}\n', "line 2: a request event the transcript never writes (no 'conn')"),
    ],
)
def test_a_file_that_is_not_a_transcript_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(bad)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.count("\n") == 1 and message in err and err.startswith(f"kgc: {bad}"), err


def test_a_live_files_half_written_last_line_waits_for_its_end(tmp_path, capsys):
    events = sample.events()
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(events[0]) + "\n" + json.dumps(events[1])[:30])
    assert shown(path, capsys) == ["alice        -> FindCoordinator v5  where is group 'shop'?"]


def test_binary_missing_and_unknown_api_are_one_line_and_exit_2(tmp_path, path, capsys):
    binary = tmp_path / "t.bin"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for argv, message in [
        ([str(binary)], "not UTF-8"),
        ([str(tmp_path / "none")], "No such file"),
        ([str(path), "--api", "Hartbeat"], "no API is called 'Hartbeat': did you mean Heartbeat?"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["transcript", *argv])
        err = capsys.readouterr().err
        assert (exit_info.value.code, err.count("\n")) == (2, 1) and message in err, err


def test_follow_prints_what_is_appended_until_ctrl_c(tmp_path):
    events = sample.events()
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(events[0]) + "\n")
    line_1, line_2 = json.dumps(events[1]) + "\n", json.dumps(events[2]) + "\n"
    # what the "server" appends each time the command reaches the end of the file
    appends = iter([line_1[:20], line_1[20:] + line_2[:-1], "\n", None])
    out = io.StringIO()
    seen_at_each_wait: list[int] = []

    def wait_for_more() -> None:
        seen_at_each_wait.append(len(out.getvalue().splitlines()))
        more = next(appends)
        if more is None:
            raise KeyboardInterrupt  # the user's Ctrl-C
        with open(path, "a") as f:
            f.write(more)

    args = build_parser().parse_args(["transcript", str(path), "--follow", "--group", "shop"])
    assert run(args, out=out, wait_for_more=wait_for_more) == 130
    # a half-written line is not shown until its end arrives
    assert seen_at_each_wait == [1, 1, 2, 3]
    assert [line.split(None, 1)[1] for line in out.getvalue().splitlines()] == [
        "alice        -> FindCoordinator v5  where is group 'shop'?",
        "alice        <- FindCoordinator  coordinator is node 0 at 127.0.0.1:9092",
        "alice        -> JoinGroup v5  member -, protocols ['range'], topics ['orders'], session 6000 ms",
    ]


def test_follow_and_html_do_not_go_together(path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["transcript", str(path), "--follow", "--html", "x.html"])
    assert exit_info.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly(tmp_path):
    """The reader (like `head -1`) closes the pipe while the command still has megabytes to
    write: the next write fails, and the command must exit 0 without a word on stderr."""
    big = tmp_path / "big.jsonl"
    with open(big, "w") as f:
        for _ in range(400):  # ~2 MB of output, far more than a pipe buffers
            f.writelines(json.dumps(e) + "\n" for e in sample.events())
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordinator", "transcript", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout.readline().split()[1:3] == [b"alice", b"->"]
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and err == b"", err


def test_waits_on_a_manual_clock_and_events_of_unknown_kinds_are_lines_too(tmp_path, capsys):
    path = sample.write(tmp_path / "t.jsonl", sample.three_groups())
    assert (
        "[shop]       .. waiting for the clock (clock.mode=manual): initial rebalance delay: advance >= 100 ms"
        in shown(path, capsys, "--group", "shop")
    )
    assert shown(path, capsys, "--group", "audit")[-1] == (
        '[audit]      .. share_partition: topic="orders", partition=0, start_offset=42'
    )
