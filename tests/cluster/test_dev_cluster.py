"""The dev cluster's own additions (tests/support/devfeed.py, started by tests/support/devcluster.py for
``scripts/dev-cluster.sh up``) on the test cluster: Prometheus registered as Arena looks for it, GPU and CPU figures
and log lines from the pods' annotations. The README's example lines for it run as written (only the namespace
and helm come from the environment, as ``scripts/dev-cluster.sh env`` gives them) and print figures, not N/A."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from devfeed import DevFeed, gpus_of
from kubernetes import client
from readme import README
from typer.testing import CliRunner
from waits import wait_for

from arena_helm.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def readme_lines() -> list[list[str]]:
    text = README.read_text()
    start = text.index("For example (`tests/cluster/test_dev_cluster.py`")
    block = re.search(r"```bash\n(.*?)\n```", text[start:], re.S).group(1)
    return [shlex.split(line) for line in block.splitlines()]


def test_the_feed_hands_a_node_s_devices_to_its_running_pods_in_order():
    def pod(name, created, gpus, phase="Running", **annotations):
        return {"metadata": {"name": name, "namespace": "n", "creationTimestamp": created, "annotations": annotations},
                "spec": {"nodeName": "g1", "containers": [{"name": "main", "resources": {"limits": {
                    "nvidia.com/gpu": str(gpus)}}}]}, "status": {"phase": phase}}

    gpus = gpus_of({"g1": 4}, [pod("b", "2026-01-01T00:00:02Z", 2, **{"arena-helm.test/gpu-util": "80"}),
                               pod("a", "2026-01-01T00:00:01Z", 1), pod("c", "2026-01-01T00:00:03Z", 1, "Pending")])
    assert [(g.device, g.pod, g.util, g.free_mib) for g in gpus] == [
        (0, "a", 0, 81920), (1, "b", 80, 81920), (2, "b", 80, 81920), (3, "", 0, 81920)]


def run_the_readme_lines(invoke, nodes: list[str]) -> None:
    """The README's dev-cluster lines, in order, through ``invoke(argv) -> (exit code, stdout, all output)``; a
    line whose figures come a moment later (pods starting, Prometheus scraping, a CPU rate needing two scrapes)
    is run again until they are there, as a person would. Checks what each prints."""
    def run(argv: list[str]) -> str:
        code, out, output = invoke(argv)
        assert code == 0, (argv, output)
        return out

    def when(argv: list[str], ready, what: str) -> str:
        seen = []

        def once():
            code, out, output = invoke(argv)
            seen.append(output)
            return out if code == 0 and ready(out) else None

        try:
            return wait_for(once, what, 90)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; {' '.join(argv)} printed last:\n{seen[-1]}") from None

    submit_bert, top_job, logs_bert, submit_crash, get_crash, ws_start, ws_list, top_node = readme_lines()
    run(submit_bert)
    top = when(top_job, lambda out: "80.0%" in out and "N/A" not in out, "bert's figures in top job")
    rows = [line.split() for line in top.splitlines()[1:]]
    # each pod: its CPU and memory (the defaults), its two devices at 80% with 30000 MiB used
    assert [row[7:9] for row in rows if row[0].startswith("bert-")] == [["100m", "256Mi"]] * 2, top
    assert [row[-2:] for row in rows] == [["80.0%", "30000.0/81920.0(MiB)"]] * 4, top
    logs = when(logs_bert, lambda out: "epoch 2" in out, "bert's log lines")
    assert logs.splitlines()[-2:] == ["epoch 1 loss 0.41", "epoch 2 loss 0.27"]
    run(submit_crash)
    got = when(get_crash, lambda out: "FAILED" in out and "CUDA error" in out, "crash FAILED, its log line")
    assert "Status:      FAILED" in got.splitlines()
    assert any(line.startswith("Failure:") and "(exit code 3)" in line for line in got.splitlines()), got
    run(ws_start)
    listed = when(ws_list, lambda out: "RUNNING" in out and "(Bound)" in out, "nb RUNNING on its provisioned home")
    assert listed.splitlines()[1].split()[:4] == ["nb", "jupyter", "RUNNING", "1"], listed

    def node_rows(out: str) -> list[list[str]]:
        return [line.split() for line in out.splitlines() if line.split()[:1] and line.split()[0] in nodes]

    def figures(out: str) -> bool:  # every GPU figure; CPU and memory where pods run (a node without: N/A)
        rows = node_rows(out)
        return len(rows) == len(nodes) and not any("N/A" in row[4:9] or (int(row[5]) and "N/A" in row)
                                                   for row in rows)

    shown = when(top_node, figures, "the nodes' figures in top node")
    # 5 devices held (bert's 4 with 30000 MiB used each, the workspace's 1)
    assert sum(int(row[5]) for row in node_rows(shown)) == 5, shown
    assert sum(float(row[8].split("/")[0]) for row in node_rows(shown)) == 120000.0, shown


def test_the_readme_s_dev_cluster_lines_run_as_written_and_show_figures(helm_bin, cluster, kubelet, namespace,
                                                                       prometheus, tmp_path):
    """The dev cluster's feed on the test cluster, the lines in the test's namespace (with helm 3 and 4)."""
    ns = namespace
    node = f"dev-{ns}"
    kubelet.add_node(node, pool=ns, gpus=8)
    feed = DevFeed(cluster, kubelet, prometheus, {node: 8}, period=0.5)
    monitoring = f"monitoring-{ns}"
    service = feed.register_service(monitoring)
    feed.start()
    config = yaml.safe_load(cluster.admin.kubeconfig.read_text())  # the dev cluster's, in the test's namespace
    for ctx in config["contexts"]:
        ctx["context"]["namespace"] = ns
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    env = {"KUBECONFIG": str(tmp_path / "kubeconfig"), "ARENA_HELM_HELM": str(helm_bin), "ARENA_HELM_CONFIG": None,
           "PROMETHEUS_ADDRESS": None if service else prometheus.url}

    def invoke(argv: list[str]):
        assert argv[0] == "arena-helm"
        res = runner.invoke(app, argv[1:], env=env)
        return res.exit_code, res.stdout, res.output

    try:
        run_the_readme_lines(invoke, [node])
    finally:
        feed.stop()
        kubelet.remove_node(node)
        if service:
            client.CoreV1Api(cluster.api_client()).delete_namespace(monitoring)


def test_the_dev_cluster_starts_as_scripts_dev_cluster_sh_starts_it_and_runs_the_readme_lines(tmp_path):
    """tests/support/devcluster.py, the dev cluster's own start-up path, in a network namespace of its own (its
    fixed ports apart from this worker's cluster's); the README's lines then run there as a person runs them:
    the installed ``arena-helm`` with the ``env`` it wrote."""
    state = tmp_path / "dev-cluster"
    log = open(tmp_path / "log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"',
                             sys.executable, str(REPO / "tests" / "support" / "devcluster.py"), str(state)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: (state / "ready").exists() or proc.poll() is not None, "the dev cluster ready", 300)
        assert proc.poll() is None, (tmp_path / "log").read_text()[-3000:]
        (tmp_path / "config.yaml").write_text("{}\n")  # no defaults of this machine's user
        env = dict(os.environ, ARENA_HELM_CONFIG=str(tmp_path / "config.yaml"))
        env.pop("PROMETHEUS_ADDRESS", None)
        for line in (state / "env").read_text().splitlines():
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = value
        arena = str(Path(sys.executable).parent / "arena-helm")

        def invoke(argv: list[str]):
            assert argv[0] == "arena-helm"
            res = subprocess.run(["nsenter", "-t", str(proc.pid), "-n", "--", arena, *argv[1:]], env=env,
                                 capture_output=True, text=True, timeout=120)
            return res.returncode, res.stdout, res.stdout + res.stderr

        run_the_readme_lines(invoke, ["gpu-node-1", "gpu-node-2"])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
