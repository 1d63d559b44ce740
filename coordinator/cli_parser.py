"""What every `kgc` subcommand shares to fail cleanly: `CommandError` (a failure reported as one
line that says what to do, exit status COMMAND_FAILED) and `KgcParser`, argparse with usage
errors on one line. __main__ turns both into the one-line message and the exit status.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["COMMAND_FAILED", "CommandError", "KgcParser"]

COMMAND_FAILED = 2  # a failure the user can act on (argparse uses 2 for usage errors too)


class CommandError(Exception):
    """A failure to report as one line (the message says what to do), exit 2."""


class KgcParser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (subcommands inherit the class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(COMMAND_FAILED, f"{self.prog}: {message} (`{self.prog} --help` shows the options)\n")
