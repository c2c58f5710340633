"""Counters of what one process did (helm processes started, API requests made), for the benchmarks.

The adapters call :func:`count`; with ``ARENA_HELM_STATS=1`` the CLI prints :func:`line` on stderr at exit.
"""

from __future__ import annotations

from collections import Counter

_COUNTS: Counter[str] = Counter()
NAMES = ("helm_calls", "api_requests", "list_pages", "prometheus_queries")


def count(name: str, n: int = 1) -> None:
    _COUNTS[name] += n


def get(name: str) -> int:
    return _COUNTS[name]


def line() -> str:
    return "stats: " + " ".join(f"{name}={_COUNTS[name]}" for name in NAMES)
