"""The README's first example is a test that passes: pytest runs it (in-process, through pytester)
in a directory of its own, with the kafka_coordinator fixture from the installed plugin and
confluent-kafka as the client, as a user would run it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.interop

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_passes(pytester: pytest.Pytester) -> None:
    example = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert example is not None and "def test_" in example.group(1)
    pytester.makepyfile(test_example=example.group(1))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
