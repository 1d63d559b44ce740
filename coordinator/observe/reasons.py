"""Why: the reason behind each error code, the cause of each state change, and who is watching.

Code that picks an error calls `explain(code, "text")`; while a request is being served
(`collecting()`, entered by the transcript/metrics tap around a handler) the reasons are kept and
attached to that request's response, otherwise the call is a no-op costing one ContextVar read.
`because(text)` names the cause of what happens next in this task (a request, a timer), which
state-transition events carry. Observers (the transcript, metrics) are registered per server in
the server task's context, so every task it spawns (connections, the runtime's timer loop) sees
them and two servers in one process never see each other's events.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from protocol.api import api_name

_reasons: ContextVar[list[tuple[int, str]] | None] = ContextVar("kgc_reasons", default=None)
_cause: ContextVar[str | _RequestCause | None] = ContextVar("kgc_cause", default=None)
OBSERVERS: ContextVar[tuple[Observer, ...]] = ContextVar("kgc_observers", default=())


class Observer(Protocol):
    def transition(self, group_id: str, old: str, new: str, generation: int, reason: str | None) -> None: ...


def explain(code: int, text: str) -> None:
    """Record why `code` is being answered (no-op unless a request is collecting)."""
    bucket = _reasons.get()
    if bucket is not None:
        bucket.append((int(code), text))


@contextmanager
def collecting() -> Iterator[list[tuple[int, str]]]:
    """Collect the reasons explained in this task until the block ends."""
    bucket: list[tuple[int, str]] = []
    token = _reasons.set(bucket)
    try:
        yield bucket
    finally:
        _reasons.reset(token)


def explain_parked(reply: Any, code: int, text: str) -> None:
    """Explain the answer given to a parked request (a JoinGroup or SyncGroup waiting for the
    group). The reply holds the reasons list of the request that parked it, if one was collecting,
    so the reason reaches that request's response, not the request that happens to answer it."""
    bucket = getattr(reply, "reasons", None)
    if bucket is not None:
        bucket.append((int(code), text))


def current_bucket() -> list[tuple[int, str]] | None:
    """The reasons list of the request being served in this task, if any (for ParkedReply)."""
    return _reasons.get()


def because(text: str) -> None:
    """Name the cause of the changes that follow in this task (a request or a timer)."""
    _cause.set(text)


class _RequestCause(tuple[int | str, Any, Any]):
    """A request as the cause, put into words only when a state change asks (most requests change
    no state, and this is named for every request): the API may still be its key."""

    __slots__ = ()

    def __str__(self) -> str:
        api, client_id, request = self
        if isinstance(api, int):
            api = api_name(api)
        member = getattr(request, "member_id", None)
        return f"{api} from client {client_id or ''!r}" + (f" member {member!r}" if member else "")


def because_request(api: int | str, client_id: str | None, request: Any) -> None:
    """Name a request as the cause: its API (name, or key: named only if asked), client and (when
    it has one) member."""
    _cause.set(_RequestCause((api, client_id, request)))


def cause() -> str | None:
    found = _cause.get()
    return None if found is None else str(found)


def observe(observer: Any) -> None:
    """Register an observer for this task and every task it starts from now on."""
    OBSERVERS.set(OBSERVERS.get() + (observer,))


def transaction_changed(transactional_id: str, old: Any, new: Any, producer_id: int, producer_epoch: int) -> None:
    """Tell the observers a transactional id changed state or epoch (the TxnShard's replay);
    observers without a `transaction` method do not hear it."""
    if not OBSERVERS.get():
        return
    observers = OBSERVERS.get()
    if not observers:
        return
    reason = cause()
    for observer in observers:
        hear = getattr(observer, "transaction", None)
        if hear is not None:
            hear(transactional_id, str(old), str(new), producer_id, producer_epoch, reason)


def transitioned(group_id: str, old: Any, new: Any, generation: int) -> None:
    """Tell the observers a group changed state (called by ClassicGroup.transition_to)."""
    observers = OBSERVERS.get()
    if not observers:
        return
    reason = cause()
    for observer in observers:
        observer.transition(group_id, str(old), str(new), generation, reason)
