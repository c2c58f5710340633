"""The workspace chart's commands, rendered by the real helm and run for real where they can run here.

- shell: the idle watcher the chart renders runs under ``unshare --pid --mount-proc`` (a PID namespace of
  its own, as a container's): alone it exits 0 once idle; a process entered from outside with ``nsenter``
  (as ``kubectl exec`` enters a container: its parent is outside, PPid 0) keeps it running until it ends.
- jupyter and code-server: their arguments (Jupyter's own idle shutdown and culling, code-server's
  --idle-timeout-seconds) checked word by word; their images' entrypoints are kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from arena_helm.cli import app

runner = CliRunner()
needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"),
                                reason="a PID namespace needs root (unshare, nsenter)")


def rendered(helm_bin, *flags: str) -> dict:
    """The workspace container of ``workspace start ws FLAGS --dry-run``."""
    res = runner.invoke(app, ["workspace", "start", "ws", *flags, "-n", "team-a", "--dry-run", "--helm-binary",
                              str(helm_bin)])
    assert res.exit_code == 0, res.output
    (job,) = [d for d in yaml.safe_load_all(res.stdout) if d and d["kind"] == "Job"]
    return job["spec"]["template"]["spec"]["containers"][0]


def rendered_command(helm_bin, *flags: str) -> list[str]:
    return rendered(helm_bin, *flags)["command"]


def test_jupyter_and_code_server_keep_their_entrypoints_and_stop_themselves_when_idle(helm_bin):
    jupyter = rendered(helm_bin, "--idle-stop", "45m")
    assert "command" not in jupyter  # the Docker Stacks' entrypoint (tini, start.sh) runs start-notebook.py
    assert jupyter["args"] == [
        "start-notebook.py", "--ServerApp.ip=0.0.0.0", "--ServerApp.port=8888", "--ServerApp.open_browser=False",
        "--ServerApp.root_dir=/home/jovyan", "--ServerApp.shutdown_no_activity_timeout=2700",
        "--MappingKernelManager.cull_idle_timeout=2700", "--MappingKernelManager.cull_interval=60",
        "--MappingKernelManager.cull_connected=True", "--TerminalManager.cull_inactive_timeout=2700",
        "--TerminalManager.cull_interval=60"]
    assert rendered(helm_bin, "--idle-stop", "0")["args"][5:] == []  # never: no shutdown, no culling
    code = rendered(helm_bin, "--type", "code-server", "--idle-stop", "90s")
    assert "command" not in code  # its entrypoint.sh --bind-addr 0.0.0.0:8080 . then these
    assert code["args"] == ["--bind-addr", "0.0.0.0:8080", "--auth", "password", "--disable-telemetry",
                            "--idle-timeout-seconds", "90"]
    assert [e["name"] for e in code["env"]] == ["HOME", "PASSWORD", "NVIDIA_VISIBLE_DEVICES"]  # no GPUs: none seen


@needs_root
def test_the_shell_watcher_exits_0_when_idle_and_waits_for_an_exec_session(helm_bin):
    argv = rendered_command(helm_bin, "--type", "shell", "--idle-stop", "3s")
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["idle-watch", "3"]
    ns = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
    # alone: idle from the start, it exits 0
    done = subprocess.run([*ns, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "workspace: idle for 3s: stopping"
    # an exec session (a process entered from outside) keeps it running until it ends
    watcher = subprocess.Popen([*ns, *argv], stdout=subprocess.PIPE, text=True)
    try:
        init = _child_of(watcher.pid)
        session = subprocess.Popen(["nsenter", "-t", str(init), "-p", "-m", "sleep", "8"])
        time.sleep(6.5)
        assert watcher.poll() is None, "the watcher stopped during an exec session"
        session.wait(timeout=30)
        assert watcher.wait(timeout=60) == 0
    finally:
        watcher.kill()
    assert watcher.stdout.read().splitlines()[-1] == "workspace: idle for 3s: stopping"


def _child_of(pid: int) -> int:
    """The first child of ``pid`` (unshare's forked child: PID 1 of the new namespace)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError(f"no child of {pid}")


def test_the_python_api_renders_what_the_cli_renders(helm_bin):
    from arena_helm import WorkspaceSpec, render_workspace, workspace_values

    ws = WorkspaceSpec(name="ws", namespace="team-a", gpus=1, data=["training-data:/data"], idle_stop="1h")
    res = runner.invoke(app, ["workspace", "start", "ws", "--gpus", "1", "-d", "training-data:/data", "--idle-stop",
                              "1h", "-n", "team-a", "--dry-run", "--helm-binary", str(helm_bin)])
    assert res.exit_code == 0, res.output
    assert render_workspace(str(helm_bin), "team-a", ws.name, workspace_values(ws)) == res.stdout
