"""arena-helm beside Arena, whose installer puts helm on PATH under this tool's name (kubeflow/arena v0.15.5
install.sh: ``cp bin/helm /usr/local/bin/arena-helm``) and runs that name as its helm (pkg/util/helm). Here
"Arena's helm" is the real helm 3 binary copied as ``arena-helm`` into a folder after this tool's, as Arena's
installer copies it, and "Arena" a program named ``arena`` that runs a command line through ``-c`` (a copy of
/bin/sh: Arena's helm_advanced.go runs its helm through ``bash -c``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helmtools import helm_path

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def beside(tmp_path):
    """PATH = this tool's arena-helm and arenahelm, then Arena's helm and ``arena``, then the system's."""
    ours, arenas = tmp_path / "venv-bin", tmp_path / "usr-local-bin"
    ours.mkdir()
    arenas.mkdir()
    for name in ("arena-helm", "arenahelm"):
        shutil.copy(Path(sys.executable).parent / name, ours / name)
    shutil.copy(helm_path("3.17.3"), arenas / "arena-helm")
    shutil.copy("/bin/sh", arenas / "arena")

    def run(*argv, path=(ours, arenas)):
        env = {"PATH": ":".join([*map(str, path), "/usr/bin", "/bin"]), "HOME": str(tmp_path),
               "KUBECONFIG": str(tmp_path / "no-kubeconfig")}
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=False)

    run.ours, run.arenas = ours, arenas
    return run


def test_a_helm_command_line_reaches_arenas_helm_byte_for_byte(beside):
    """`arena-helm template ...` is helm's (arena-helm has no template): handed on to Arena's helm, its
    arguments as given (a value with spaces and quotes arrives whole)."""
    chart = REPO / "charts" / "tensorboard"
    res = beside("arena-helm", "template", "x", chart, "--set-string", "logDir=/logs/a b 'c'")
    assert res.returncode == 0, res.stderr
    assert "            - \"/logs/a b 'c'\"" in res.stdout.splitlines(), res.stdout[:3000]
    direct = subprocess.run([str(helm_path("3.17.3")), "template", "x", str(chart), "--set-string",
                             "logDir=/logs/a b 'c'"], capture_output=True, text=True, check=True)
    assert res.stdout == direct.stdout


def test_arena_running_its_helm_reaches_arenas_helm_even_for_a_shared_command(beside):
    """Arena runs `arena-helm version --short` (or list, get): from Arena, helm answers; from a person, this
    tool does."""
    from_arena = beside("arena", "-c", "arena-helm version --short")
    assert from_arena.returncode == 0 and from_arena.stdout.startswith("v3.17.3+g"), from_arena
    from_person = beside("arena-helm", "--help")
    assert from_person.returncode == 0 and from_person.stdout.startswith(
        "Usage: arena-helm [OPTIONS] COMMAND [ARGS]...\n"), from_person


def test_with_arenas_helm_first_this_tool_runs_as_arenahelm_and_doctor_says_which_is_which(beside):
    first = beside("arena-helm", "doctor", path=(beside.arenas, beside.ours))
    assert first.returncode != 0 and "unknown command \"doctor\" for \"helm\"" in first.stderr  # Arena's helm
    res = beside("arenahelm", "doctor", "--helm-binary", helm_path("3.17.3"), path=(beside.arenas, beside.ours))
    assert res.returncode == 1
    rows = [line for line in res.stdout.splitlines() if line.startswith("Arena's helm")]
    assert rows == [f"Arena's helm                 OK       arena-helm on PATH is Arena's helm "
                    f"({beside.arenas}/arena-helm), ahead of this tool: run this tool as arenahelm"]
    res = beside("arena-helm", "doctor", "--helm-binary", helm_path("3.17.3"))
    rows = [line for line in res.stdout.splitlines() if line.startswith("Arena's helm")]
    assert rows == [f"Arena's helm                 OK       Arena's helm ({beside.arenas}/arena-helm) comes after "
                    f"this tool's arena-helm ({beside.ours}/arena-helm) on PATH: Arena's calls of its helm are "
                    "handed on to it"]
    # the dry run, under the clash-free name
    res = beside("arenahelm", "submit", "tf", "--name", "a", "--image", "img:1", "--helm-binary",
                 helm_path("3.17.3"), "--dry-run", "--", "python", "t.py", path=(beside.arenas, beside.ours))
    assert res.returncode == 0 and "kind: TFJob" in res.stdout, res.stderr
