"""arena_helm.cli: every help page reads as plain text."""

from __future__ import annotations

import pytest

from arena_helm.core.jobkinds import KINDS

HELP_PAGES = [[], ["submit"], *[["submit", k.key] for k in KINDS], ["list"],
              ["get"], ["logs"], ["delete"], ["prune"], ["top"], ["top", "job"], ["top", "node"], ["suspend"],
              ["resume"], ["attach"], ["data"], ["data", "list"], ["tensorboard"], ["tensorboard", "start"],
              ["tensorboard", "stop"], ["tensorboard", "list"], ["tensorboard", "open"], ["version"]]


@pytest.mark.parametrize("page", HELP_PAGES, ids=lambda p: " ".join(p) or "root")
def test_help_reads_as_plain_text(page):
    """No reST literals, no Typer placeholders (``{name}``, ``<list[str]>``): the usage line names arguments
    as kubectl does (NAME, [NAME...])."""
    from typer.testing import CliRunner

    from arena_helm.cli import app

    res = CliRunner().invoke(app, [*page, "--help"])
    assert res.exit_code == 0, res.output
    for bad in ("``", "<list[", "{"):
        assert bad not in res.stdout, (bad, res.stdout)
