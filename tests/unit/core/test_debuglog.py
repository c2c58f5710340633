"""--debug's lines go through logging once it is imported, and nowhere (without importing it) before."""

import logging
import sys

from arena_helm.core.debuglog import debug


def test_a_line_goes_to_the_module_s_logger_once_logging_is_imported(caplog):
    with caplog.at_level(logging.DEBUG, logger="arena_helm.adapters.helm"):
        debug("arena_helm.adapters.helm", "helm: %s", "template x")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("arena_helm.adapters.helm", logging.DEBUG, "helm: template x")]


def test_before_logging_is_imported_a_line_imports_nothing_and_goes_nowhere(monkeypatch, caplog):
    monkeypatch.delitem(sys.modules, "logging")
    with caplog.at_level(logging.DEBUG, logger="arena_helm.adapters.helm"):
        debug("arena_helm.adapters.helm", "helm: %s", "template x")
        assert "logging" not in sys.modules
    assert caplog.records == []
