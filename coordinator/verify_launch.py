"""`kgc verify` before the verifier runs: parse its arguments (verify/cli.py defines them) and, for
the Spark engine, check that pyspark, pyarrow and Java JAVA_NEEDED+ are there, so that a missing
piece is one CommandError line saying what to install instead of a Spark stack trace. The
verifier is imported only when the command runs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

from coordinator.cli_parser import CommandError, KgcParser

__all__ = ["run_verify", "JAVA_NEEDED"]

JAVA_NEEDED = 17  # Spark 4 runs on Java 17 or 21


def run_verify(argv: list[str]) -> int:
    from coordinator.verify import cli

    parser = KgcParser(prog="kgc verify", description=(cli.__doc__ or "").splitlines()[0])
    cli.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.engine == "spark":
        _require_spark()
    return int(cli.run(args))


def _require_spark() -> None:
    missing = [m for m in ("pyspark", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        raise CommandError(
            f"verify needs {' and '.join(missing)}: pip install "
            f"'kafka-group-coordinator[verify]' (Spark also needs Java {JAVA_NEEDED}+; "
            "--engine oracle checks the same rules without Spark)"
        )
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise CommandError(
            f"verify runs Spark, which needs Java {JAVA_NEEDED} or newer: install it (Debian/"
            f"Ubuntu: apt install openjdk-{JAVA_NEEDED}-jre-headless) or set JAVA_HOME "
            "(--engine oracle needs no Java)"
        )
    try:
        shown = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandError(f"verify cannot run {java} ({exc}): install Java {JAVA_NEEDED}+ or set JAVA_HOME") from None
    found = re.search(r'version "(?:1\.)?(\d+)', shown)
    if found and int(found.group(1)) < JAVA_NEEDED:
        raise CommandError(
            f"verify runs Spark 4, which needs Java {JAVA_NEEDED} or newer; {java} is Java "
            f"{found.group(1)}: install a newer one and point JAVA_HOME at it"
        )
