"""Suite-wide test wiring for tests/ and interop/ (the repository root's conftest, loaded first).

`make test` runs the suite on parallel workers (pytest-xdist, `--dist loadgroup`). Every test
marked `spark` goes to one worker, so a run starts one Spark session (tests/verify/conftest.py)
and runs one Spark job at a time instead of one per worker, starting first (the longest chain);
everything else is spread over the other workers. A new test file needs nothing for this: tests
take ephemeral ports (port 0) and their own tmp_path, and share no state across processes.
"""

from __future__ import annotations

import pytest

SPARK_GROUP = "spark"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the groups into node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # not an xdist worker: the suite runs as it is
        return
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
    # The Spark tests are the longest chain on one worker: it starts first, while the others take
    # the rest (every worker collects the same order, so the sort is the same everywhere).
    items.sort(key=lambda item: item.get_closest_marker("spark") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a worker of `--dist loadgroup`: fail loudly if the grouping did not take, instead of
    silently starting a Spark session per worker (xdist 3.8 on pytest 9.2: pytest-xdist#1386)."""
    if not session.config.getoption("loadgroup", default=False):
        return
    lost = [i.nodeid for i in session.items if i.get_closest_marker("spark") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(
            f"--dist loadgroup did not group {lost[0]} with the other Spark tests: this pytest-xdist "
            "and pytest do not work together (pip install 'pytest<9.2', see pyproject.toml)"
        )
