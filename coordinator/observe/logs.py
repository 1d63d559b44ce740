"""Structured logs: one line per event, `key=value` pairs after a fixed prefix.

Every module logs through `log_event(logger, event, **fields)` so lines stay greppable and a
transcript or a test can parse them; values with spaces are quoted.
"""

from __future__ import annotations

import logging
import sys


def setup_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger("kgc")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(f"kgc.{name}")


def log_event(logger: logging.Logger, event: str, level: int = logging.INFO, **fields: object) -> None:
    if logger.isEnabledFor(level):
        logger.log(level, "%s %s", event, " ".join(f"{k}={_quote(v)}" for k, v in fields.items()))


def _quote(value: object) -> str:
    text = str(value)
    return f'"{text}"' if (" " in text or not text) else text
