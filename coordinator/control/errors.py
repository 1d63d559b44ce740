"""ControlError: how every part of the control plane refuses an action.

It carries the HTTP status the control API answers with (400 bad input, 404 unknown thing,
409 not possible in the current state, 503 not possible yet: retry) and a one-line reason, so the same refusal reads the
same from HTTP, from `kgc control` and from Python.
"""

from __future__ import annotations


class ControlError(Exception):
    def __init__(self, status: int, message: str) -> None:
        # One line: the HTTP body, the CLI's stderr line and the exception text are the same.
        self.status = status
        self.message = " ".join(message.split())
        super().__init__(self.message)


def bad_request(message: str) -> ControlError:
    return ControlError(400, message)


def not_found(message: str) -> ControlError:
    return ControlError(404, message)


def conflict(message: str) -> ControlError:
    return ControlError(409, message)


def unavailable(message: str) -> ControlError:
    return ControlError(503, message)
