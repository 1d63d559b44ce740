"""`wait_until`: poll a real-time condition with short sleeps, up to a deadline.

Tests that drive real processes (interop clients, a `kgc serve` child, a Spark cluster) run in
real time, so polling a condition is how they synchronise; a fixed sleep never is. The deadline
only bounds a hang: tests never assert on how long it took. Code under a trio MockClock never
needs this.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    timeout: float,
    *,
    interval: float = 0.05,
    message: str | Callable[[], str] = "condition",
) -> T:
    """Call `predicate` until it returns a truthy value and return that value.

    Raises AssertionError naming `message` (a string, or a callable evaluated at failure time so
    it can describe the last observed state) once `timeout` seconds have passed without success.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout:g}s waiting for: {text}")
        time.sleep(interval)
