"""VersionLimits: advertised API version ranges narrowed on request, as librdkafka's
rd_kafka_mock_set_apiversion and kfake's MaxVersions do, to act as an older broker.

`table` is the served range per API key after limits (what ApiVersions advertises and what the
dispatcher accepts); it is a new dict after every change, so readers may keep a reference per
request. A max of -1 withdraws the API entirely (librdkafka: MinVersion = MaxVersion = -1).
Limits only narrow: a range beyond what the server implements is refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from coordinator.control.errors import bad_request
from coordinator.control.request_fields import API_NAMES, api_key_of
from protocol.api import SUPPORTED_VERSIONS

_GENERATIONS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class VersionView:
    api: str
    api_key: int
    min_version: int  # -1/-1: withdrawn
    max_version: int
    limited: bool  # narrowed by a limit (else the server's own range)


class VersionLimits:
    def __init__(self, served: Mapping[int, tuple[int, int]] | None = None) -> None:
        self._served = {int(k): v for k, v in (served or SUPPORTED_VERSIONS).items()}
        self._limits: dict[int, tuple[int, int]] = {}
        self.table: dict[int, tuple[int, int]] = dict(self._served)
        # 0 = the served table itself; any limit gets a number no other table in the process has
        # (ApiVersions caches its encoded answer per generation).
        self.generation = 0

    def limit(self, api: str | int, max_version: int, min_version: int | None = None) -> VersionView:
        key = api_key_of(api)
        name = API_NAMES[key]
        if key not in self._served:
            raise bad_request(f"{name} is not served by this broker")
        lo, hi = self._served[key]
        if max_version == -1:
            self._limits[key] = (-1, -1)
        else:
            new_lo = lo if min_version is None else min_version
            if not lo <= new_lo <= max_version <= hi:
                raise bad_request(
                    f"{name} v{new_lo}-v{max_version} is not within the served v{lo}-v{hi} "
                    "(limits only narrow; max_version -1 withdraws the API)"
                )
            self._limits[key] = (new_lo, max_version)
        self._rebuild()
        return self._view(key)

    def clear(self) -> None:
        self._limits.clear()
        self._rebuild()

    def views(self) -> list[VersionView]:
        return [self._view(key) for key in sorted(self._served)]

    def _view(self, key: int) -> VersionView:
        lo, hi = self._limits.get(key, self._served[key])
        return VersionView(API_NAMES[key], key, lo, hi, key in self._limits)

    def _rebuild(self) -> None:
        table = {**self._served, **self._limits}
        self.table = {key: rng for key, rng in table.items() if rng != (-1, -1)}
        self.generation = next(_GENERATIONS) if self._limits else 0
