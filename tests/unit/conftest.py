"""The unit tier starts no process (no helm, no git, no script: ``_no_process``), and reads error messages as
the CLI shows them (naming flags): a test of the Python API's wording (tests/unit/test_errors.py) asks for
``python_words``."""

from __future__ import annotations

import os
import subprocess

import pytest

from arena_helm.core.errors import SURFACE


@pytest.fixture(autouse=True)
def _cli_words(request):
    token = SURFACE.set("python" if "python_words" in request.fixturenames else "cli")
    yield
    SURFACE.reset(token)


class ProcessStarted(AssertionError):
    pass


def _refuse(*args, **kwargs):
    raise ProcessStarted("the unit tier starts no process: put this test in tests/cli, "
                         "tests/charts, tests/repo or tests/cluster")


@pytest.fixture(autouse=True)
def _no_process(monkeypatch):
    """Every way the package or a test could start a process fails the test: subprocess (run, Popen and the
    asyncio subprocess functions build on it), os.exec*/spawn*/posix_spawn*/fork, os.system and os.popen."""
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _refuse)
    for name in ("execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv",
                 "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp", "fork", "forkpty", "system",
                 "popen"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse)


@pytest.fixture
def python_words():
    """Messages in the Python API's words (parameters, not flags)."""
