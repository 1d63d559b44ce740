"""The control plane over HTTP/JSON: a FastAPI app on Starlette, served by hypercorn's trio worker
inside the caller's nursery (so handlers run in the server's own trio loop, next to the state
they change). Described at GET /openapi.json.

Only imported when a control port is configured: `kgc serve` without one never loads the HTTP
stack. Every handler is `async def` (a plain `def` would run in a worker thread, away from the
loop that owns the state). Errors are 4xx with {"error": "<one line>"}: ControlError carries its
status; malformed JSON and validation failures are 400. Security: loopback unless a host is
given, and a non-loopback host needs a token; with a token, every request (openapi.json too)
needs `Authorization: Bearer <token>` or gets 401 before anything runs.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from coordinator.control.errors import ControlError, bad_request
from coordinator.control.fault_spec import FaultSpec
from coordinator.control.faults import FaultView
from coordinator.control.live_page import LIVE_PAGE
from coordinator.control.plane_api import BrokerView, ClockView, ControlPlane, GroupView, PartitionView, to_jsonable
from coordinator.control.security_control import AclSpec, ScramUserSpec
from coordinator.control.tracking import RequestsPage
from coordinator.control.transitions import TransitionsPage
from coordinator.control.versions import VersionView

log = logging.getLogger("kgc.control")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeBody(_Body):
    node_id: int


class MsBody(_Body):
    ms: int = Field(ge=0)


class VersionLimitBody(_Body):
    api: str | int
    max_version: int = Field(ge=-1, description="-1 withdraws the API")
    min_version: int | None = None


class SubscriptionBody(_Body):
    metrics: list[str] | str | None = Field(None, description='metric-name prefixes; "*" for all')
    interval_ms: int | None = Field(None, description="push interval, 100..3600000")
    match: list[str] | str | None = Field(None, description="client selectors, selector=regex")


@dataclass(frozen=True, slots=True)
class ControlServer:
    host: str
    port: int
    url: str


def build_app(plane: ControlPlane, token: str | None = None, cluster_only: bool = False) -> FastAPI:
    """`cluster_only` (cluster.processes): only the cluster commands, which every broker process
    follows; the rest would see or change broker 0's process alone, so it is refused."""
    app = FastAPI(
        title="kgc control plane",
        version="1",
        docs_url=None,
        redoc_url=None,
        description="Fault injection, cluster actions, a manual clock and request tracking for kgc.",
    )
    _errors(app)
    _brokers_and_faults(app, plane)
    _groups_and_partitions(app, plane)
    _clock_versions_requests(app, plane)
    _telemetry(app, plane)
    if cluster_only:
        app.add_middleware(_ClusterCommandsOnly)
    if token:  # added last: it runs first
        app.add_middleware(_BearerToken, token=token)
    return app


# What the control plane serves with cluster.processes: each is decided through the shared
# cluster state (cluster/shared_cluster.py) and followed by every broker process.
_CLUSTER_COMMANDS = re.compile(
    r"(GET /openapi\.json|GET /v1/brokers|POST /v1/brokers/[^/]+/(down|up)"
    r"|POST /v1/partitions/[^/]+/[^/]+/(leader|leaderless)|POST /v1/groups/.+/coordinator)"
)
PROCESSES_REFUSAL = (
    "with --processes the control plane serves the cluster commands only (brokers, down/up, "
    "partition leader/leaderless, group coordinator moves): the rest needs every broker in one process"
)


class _ClusterCommandsOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not _CLUSTER_COMMANDS.fullmatch(f"{scope['method']} {scope['path']}"):
            await JSONResponse({"error": PROCESSES_REFUSAL}, status_code=409)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _brokers_and_faults(app: FastAPI, plane: ControlPlane) -> None:
    @app.get("/v1/brokers", tags=["brokers"])
    async def brokers() -> list[BrokerView]:
        return plane.brokers()

    @app.post("/v1/brokers/{node_id}/down", tags=["brokers"])
    async def broker_down(node_id: int) -> BrokerView:
        return await plane.broker_down(node_id)

    @app.post("/v1/brokers/{node_id}/up", tags=["brokers"])
    async def broker_up(node_id: int) -> BrokerView:
        return await plane.broker_up(node_id)

    @app.post("/v1/faults", tags=["faults"])
    async def add_fault(rule: FaultSpec) -> dict[str, int]:
        return {"id": plane.add_fault(rule)}

    @app.get("/v1/faults", tags=["faults"])
    async def faults() -> list[FaultView]:
        return plane.faults()

    @app.delete("/v1/faults/{fault_id}", tags=["faults"])
    async def remove_fault(fault_id: int) -> dict[str, int]:
        plane.remove_fault(fault_id)
        return {"removed": fault_id}

    @app.delete("/v1/faults", tags=["faults"])
    async def clear_faults() -> dict[str, int]:
        return {"removed": plane.clear_faults()}


def _groups_and_partitions(app: FastAPI, plane: ControlPlane) -> None:
    @app.post("/v1/groups/{group_id:path}/coordinator", tags=["groups"])
    async def move_coordinator(group_id: str, body: NodeBody) -> PartitionView:
        return await plane.move_coordinator(group_id, body.node_id)

    @app.post("/v1/groups/{group_id:path}/members/{member_id:path}/expire", tags=["groups"])
    async def expire_member(group_id: str, member_id: str) -> dict[str, str]:
        await plane.expire_member(group_id, member_id)
        return {"expired": member_id}

    @app.post("/v1/groups/{group_id:path}/rebalance", tags=["groups"])
    async def rebalance(group_id: str) -> dict[str, str]:
        await plane.rebalance(group_id)
        return {"rebalancing": group_id}

    # Last, and greedy: group ids may hold "/" (sent as %2F), and the routes above match first.
    @app.get("/v1/groups/{group_id:path}", tags=["groups"])
    async def group(group_id: str) -> GroupView:
        return plane.group(group_id)

    @app.post("/v1/partitions/{topic}/{partition}/leader", tags=["partitions"])
    async def move_leader(topic: str, partition: int, body: NodeBody) -> PartitionView:
        return await plane.move_leader(topic, partition, body.node_id)

    @app.post("/v1/partitions/{topic}/{partition}/leaderless", tags=["partitions"])
    async def make_leaderless(topic: str, partition: int) -> PartitionView:
        return await plane.make_leaderless(topic, partition)

    @app.post("/v1/coordinator-load-delay", tags=["partitions"])
    async def coordinator_load_delay(body: MsBody) -> dict[str, int]:
        plane.set_coordinator_load_delay(body.ms)
        return {"ms": body.ms}


def _clock_versions_requests(app: FastAPI, plane: ControlPlane) -> None:
    @app.get("/v1/versions", tags=["versions"])
    async def versions() -> list[VersionView]:
        return plane.versions()

    @app.post("/v1/versions", tags=["versions"])
    async def limit_version(body: VersionLimitBody) -> VersionView:
        return plane.limit_version(body.api, body.max_version, body.min_version)

    @app.delete("/v1/versions", tags=["versions"])
    async def clear_versions() -> list[VersionView]:
        plane.clear_versions()
        return plane.versions()

    @app.get("/v1/clock", tags=["clock"])
    async def clock() -> ClockView:
        return plane.clock()

    @app.post("/v1/clock/advance", tags=["clock"])
    async def advance(body: MsBody) -> ClockView:
        return await plane.advance_clock(body.ms)

    @app.get("/v1/requests", tags=["requests"])
    async def requests(
        since: int = Query(0, ge=0),
        api: str | None = None,
        group: str | None = None,
        limit: int = Query(100, ge=1, le=10_000),
    ) -> RequestsPage:
        return plane.requests(since, api, group, limit)

    @app.delete("/v1/requests", tags=["requests"])
    async def clear_requests() -> dict[str, bool]:
        plane.clear_requests()
        return {"cleared": True}

    @app.get("/v1/snapshot", tags=["state"])
    async def snapshot() -> dict[str, Any]:
        snap: dict[str, Any] = to_jsonable(plane.snapshot())
        return snap

    @app.get("/v1/security", tags=["security"])
    async def security() -> dict[str, Any]:
        """Each listener's counters and open connections (principal, mechanism)."""
        return plane.security()

    @app.get("/v1/acls", tags=["security"])
    async def acls() -> list[dict[str, object]]:
        return plane.acls()

    @app.post("/v1/acls", tags=["security"])
    async def add_acl(spec: AclSpec) -> dict[str, object]:
        return plane.add_acl(spec)

    @app.post("/v1/scram-users", tags=["security"])
    async def add_scram_user(spec: ScramUserSpec) -> dict[str, object]:
        """SCRAM credentials for a user (the password is used to salt and hash, never kept or answered)."""
        return plane.add_scram_user(spec)

    @app.get("/v1/transitions", tags=["state"])
    async def transitions(
        since: int = Query(0, ge=0), group: str | None = None, limit: int = Query(200, ge=1, le=10_000)
    ) -> TransitionsPage:
        return plane.transitions(since, group, limit)

    @app.get("/v1/share/settings", tags=["share"])
    async def share_settings() -> dict[str, Any]:
        return plane.share_settings()

    @app.patch("/v1/share/settings", tags=["share"])
    async def set_share_settings(changes: dict[str, Any]) -> dict[str, Any]:
        return plane.set_share_settings(changes)

    @app.get("/v1/share/groups/{group_id:path}/partitions", tags=["share"])
    async def share_partitions(group_id: str) -> list[dict[str, Any]]:
        return plane.share_partitions(group_id)

    @app.get("/", tags=["state"], response_class=HTMLResponse)
    async def live_page() -> HTMLResponse:
        """The live page: groups, their state machines, members and assignments, as they change."""
        return HTMLResponse(LIVE_PAGE)


def _telemetry(app: FastAPI, plane: ControlPlane) -> None:
    """Client telemetry, KIP-714 (control/telemetry_control.py)."""

    @app.get("/v1/telemetry/clients", tags=["telemetry"])
    async def telemetry_clients() -> list[dict[str, Any]]:
        return plane.telemetry_clients()

    @app.get("/v1/telemetry/clients/{client:path}", tags=["telemetry"])
    async def telemetry_client(client: str, prefix: str = "") -> dict[str, Any]:
        found: dict[str, Any] = to_jsonable(plane.telemetry_client(client, prefix))
        return found

    @app.get("/v1/telemetry/subscriptions", tags=["telemetry"])
    async def telemetry_subscriptions() -> list[dict[str, Any]]:
        return plane.telemetry_subscriptions()

    @app.put("/v1/telemetry/subscriptions/{name:path}", tags=["telemetry"])
    async def set_telemetry_subscription(name: str, body: SubscriptionBody) -> dict[str, Any]:
        return plane.set_telemetry_subscription(name, body.model_dump(exclude_none=True))

    @app.delete("/v1/telemetry/subscriptions/{name:path}", tags=["telemetry"])
    async def delete_telemetry_subscription(name: str) -> dict[str, str]:
        plane.delete_telemetry_subscription(name)
        return {"removed": name}


def _errors(app: FastAPI) -> None:
    @app.exception_handler(ControlError)
    async def control_error(request: Request, exc: ControlError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": validation_message(exc.errors())}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


def validation_message(errors: Any) -> str:
    """FastAPI's list of validation errors as one line: the first, with where it is."""
    errors = list(errors)
    if not errors:
        return "invalid request"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return f"malformed JSON: {first.get('ctx', {}).get('error', first.get('msg'))}"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    if first.get("type") in ("extra_forbidden", "unexpected_keyword_argument"):
        first = {**first, "msg": "unknown field"}
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return " ".join(f"{where}: {first.get('msg', 'invalid')}{more}".split())


class _BearerToken:
    """Every request needs `Authorization: Bearer <token>`; anything else is 401 before routing."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = JSONResponse(
                    {"error": "missing or wrong bearer token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_control(
    plane: ControlPlane,
    host: str | None = None,
    port: int = 0,
    token: str | None = None,
    *,
    cluster_only: bool = False,
    task_status: trio.TaskStatus[ControlServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the control API until cancelled; reports the bound address (port 0 = a free port)."""
    host = host or "127.0.0.1"
    if not is_loopback(host) and not token:
        raise bad_request(f"control.host {host} is not loopback: set control.token too")
    config = HypercornConfig()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 1.0
    app = build_app(plane, token, cluster_only)
    async with trio.open_nursery() as nursery:
        # hypercorn's ASGIFramework type is narrower than Starlette's own ASGI signature.
        binds: list[str] = await nursery.start(partial(serve, app, config, mode="asgi"))  # type: ignore[arg-type]
        url = binds[0]
        task_status.started(ControlServer(host, int(url.rsplit(":", 1)[1]), url))
