"""What every `kgc` subcommand shares to fail cleanly: `CommandError` (a failure reported as one
line that says what to do, exit status COMMAND_FAILED) and `KgcParser`, argparse with usage
errors on one line. __main__ turns both into the one-line message and the exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

__all__ = ["COMMAND_FAILED", "CommandError", "KgcParser"]

COMMAND_FAILED = 2  # a failure the user can act on (argparse uses 2 for usage errors too)


class CommandError(Exception):
    """A failure to report as one line (the message says what to do), exit 2."""


class KgcParser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (subcommands inherit the class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(COMMAND_FAILED, f"{self.prog}: {message} (`{self.prog} --help` shows the options)\n")


class _Formatter(argparse.HelpFormatter):
    """argparse builds a formatter for every add_argument (to check its metavar), and each one asks
    shutil for the terminal's width: importing shutil (~2 ms) delays `kgc serve`'s first answer."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
