"""--debug's lines, without importing ``logging`` for nothing.

A line goes through ``logging`` (the logger named after the module that writes it) only once ``logging`` is
imported: whoever shows the lines imports it first (the CLI's ``--debug``, a program that configures logging).
Before that no handler exists and a debug line would go nowhere, so a dry run does not pay for the import.
"""

from __future__ import annotations

import sys


def debug(logger: str, message: str, *args: object) -> None:
    """``logging.getLogger(logger).debug(message, *args)`` once ``logging`` is imported; nothing before."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(logger).debug(message, *args)
