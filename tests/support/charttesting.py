"""chart-testing (``ct``) for the tests that run it: its binary (built from its Go module by
scripts/build-cluster.sh, then taken from the cache by its stamp) and a copy of what it reads, since its ``helm
dependency build`` writes into the charts' folders (the repository's own stay as they are, for the other tests
running meanwhile)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from helmtools import REPO

# ct.yaml and what it names besides the charts: its yamllint configuration and its Chart.yaml schema
CT_INPUTS = ("ct.yaml", ".yamllint", "tests/data/chart_schema.yaml")


def ct_folder() -> Path:
    """The folder of the ct binary."""
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-cluster.sh"), "ct"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    folder = Path(proc.stdout.strip().splitlines()[-1])
    assert (folder / "ct").is_file(), folder
    return folder


def checkout(root: Path) -> Path:
    """``root`` with what ct reads: the charts (without built dependencies) and CT_INPUTS."""
    shutil.copytree(REPO / "charts", root / "charts", ignore=shutil.ignore_patterns("*.tgz"))
    for name in CT_INPUTS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    return root
