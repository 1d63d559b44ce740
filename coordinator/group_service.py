"""Wiring of the classic-group runtime into the server: settings in, running runtime out.

The runtime's timer task lives in the server's nursery. Group time follows trio's clock
(`TrioClock`), anchored at the wall clock, so the same code runs in production and under
trio's MockClock in tests.
"""
from __future__ import annotations

import trio

from coordinator.clock import TrioClock
from coordinator.config import Config
from coordinator.groups import GroupConfig, GroupCoordinator
from coordinator.runtime import InMemoryWriter, Runtime


def group_config(config: Config) -> GroupConfig:
    return GroupConfig(
        min_session_timeout_ms=config.group_min_session_timeout_ms,
        max_session_timeout_ms=config.group_max_session_timeout_ms,
        initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
        max_size=config.group_max_size,
    )


async def start_groups(nursery: trio.Nursery, config: Config) -> Runtime:
    runtime = Runtime(GroupCoordinator(group_config(config)), TrioClock(), InMemoryWriter())
    await nursery.start(runtime.run)
    return runtime
