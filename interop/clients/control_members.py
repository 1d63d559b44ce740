"""Group members of the in-process Python clients with the few settings control-plane scenarios
vary, under one spelling: session timeout, request timeout, client id.

`member(client, name, bootstrap, group, topic, ...)` builds a started-later member of
python_members.py (confluent-kafka, kafka-python or aiokafka; each commits after every batch),
translating the settings to the client's own names. Its client id is `kgc-interop-<name>`, which
is what fault rules match with `client_id=` and what the request log shows.
"""

from __future__ import annotations

from typing import Any

from interop.clients.python_members import AiokafkaMember, ConfluentKafkaMember, KafkaPythonMember

PYTHON_CLIENTS = ("confluent-kafka", "kafka-python", "aiokafka")
HEARTBEAT_MS = 200

_CLASSES = {"confluent-kafka": ConfluentKafkaMember, "kafka-python": KafkaPythonMember, "aiokafka": AiokafkaMember}


def client_id(name: str) -> str:
    return f"kgc-interop-{name}"


def member(
    client: str,
    name: str,
    bootstrap: str,
    group: str,
    topic: str,
    *,
    session_ms: int = 6000,
    request_timeout_ms: int | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    """A member of `client` committing after each batch; nothing is started yet."""
    if client == "confluent-kafka":
        config: dict[str, Any] = {
            "session.timeout.ms": session_ms,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "topic.metadata.refresh.interval.ms": 1000,
            "reconnect.backoff.max.ms": 500,
        }
        if request_timeout_ms is not None:
            config["socket.timeout.ms"] = request_timeout_ms
    else:
        config = {"session_timeout_ms": session_ms, "heartbeat_interval_ms": HEARTBEAT_MS, "retry_backoff_ms": 100}
        if request_timeout_ms is not None:
            config["request_timeout_ms"] = request_timeout_ms
    config.update(extra or {})
    return _CLASSES[client](name, bootstrap, group, topic, commit=True, config=config)
