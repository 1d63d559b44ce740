"""Self-tests of the interop harness itself (no server, no Kafka client): deadlines, failure
messages and polling behave as the interop tests rely on."""

from __future__ import annotations

import sys

import pytest

from interop.clients import run_json, wait_until
from interop.clients.process import require_executable


def test_run_json_parses_the_last_stdout_line():
    result, run = run_json([sys.executable, "-c", "print('banner'); print('{\"ok\": 1}')"], timeout=20)
    assert result == {"ok": 1}
    assert run.returncode == 0


def test_run_json_failure_message_carries_the_clients_output():
    script = "import sys; print('partial'); sys.stderr.write('client log line\\n'); sys.exit(4)"
    with pytest.raises(AssertionError) as info:
        run_json([sys.executable, "-c", script], timeout=20)
    message = str(info.value)
    assert "exit 4" in message and "partial" in message and "client log line" in message


def test_run_json_kills_a_client_that_outlives_its_deadline():
    script = "import sys, time; print('started', flush=True); time.sleep(120)"
    with pytest.raises(AssertionError) as info:
        run_json([sys.executable, "-c", script], timeout=0.5)
    assert "did not finish within 0.5s" in str(info.value)
    assert "started" in str(info.value)


def test_run_json_rejects_an_unbounded_timeout():
    with pytest.raises(ValueError):
        run_json([sys.executable, "-c", "pass"], timeout=600)


def test_missing_executable_fails_rather_than_skips():
    with pytest.raises(pytest.fail.Exception, match="not installed.*install_test_deps"):
        require_executable("kgc-no-such-client")


def test_wait_until_returns_the_first_truthy_value():
    calls = iter([None, 0, "ready"])
    assert wait_until(lambda: next(calls), timeout=10, interval=0) == "ready"


def test_wait_until_reports_what_it_was_waiting_for():
    with pytest.raises(AssertionError, match="timed out after 0.05s waiting for: group stable"):
        wait_until(lambda: False, timeout=0.05, interval=0.01, message=lambda: "group stable")
