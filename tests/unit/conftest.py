"""The unit tier reads error messages as the CLI shows them (naming flags): a test of the Python API's wording
(tests/unit/test_errors.py) asks for ``python_words``."""

from __future__ import annotations

import pytest

from arena_helm.errors import SURFACE


@pytest.fixture(autouse=True)
def _cli_words(request):
    token = SURFACE.set("python" if "python_words" in request.fixturenames else "cli")
    yield
    SURFACE.reset(token)


@pytest.fixture
def python_words():
    """Messages in the Python API's words (parameters, not flags)."""
