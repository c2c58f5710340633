"""The dev cluster's own additions (tests/support/devfeed.py, started by tests/support/devcluster.py for
``scripts/dev-cluster.sh up``) on the test cluster: Prometheus registered as Arena looks for it, GPU and CPU figures
and log lines from the pods' annotations. The README's example lines for it run as written (only the namespace
and helm come from the environment, as ``scripts/dev-cluster.sh env`` gives them) and print figures, not N/A."""

from __future__ import annotations

import re
import shlex

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


def test_the_readme_s_dev_cluster_lines_run_as_written_and_show_figures(helm_bin, cluster, kubelet, namespace,
                                                                       prometheus, tmp_path):
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
        return runner.invoke(app, argv[1:], env=env)

    def run(argv: list[str]) -> str:
        res = invoke(argv)
        assert res.exit_code == 0, (argv, res.output)
        return res.stdout

    def when(argv: list[str], ready, what: str) -> str:
        """The line's output once it succeeds and ``ready`` holds of it (the pods run, Prometheus scraped them),
        as a person runs it again a moment later."""
        seen = []

        def once():
            res = invoke(argv)
            seen.append(res.output)
            return res.stdout if res.exit_code == 0 and ready(res.stdout) else None

        try:
            return wait_for(once, what, 60)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; {' '.join(argv)} printed last:\n{seen[-1]}") from None

    try:
        submit_bert, top_job, logs_bert, submit_crash, get_crash, ws_start, ws_list, top_node = readme_lines()
        run(submit_bert)
        top = when(top_job, lambda out: "80.0%" in out and "N/A" not in out,  # a CPU rate needs two scrapes
                   "bert's figures in top job")
        rows = [line.split() for line in top.splitlines()[1:]]
        # each pod: its CPU and memory (the defaults), its two devices at 80% with 30000 MiB used
        assert [row[-5:] for row in rows if row[0].startswith("bert-")] == [
            ["100m", "256Mi", "0", "80.0%", "30000.0/81920.0(MiB)"], ["100m", "256Mi", "2", "80.0%",
                                                                     "30000.0/81920.0(MiB)"]], top
        assert [row for row in rows if not row[0].startswith("bert-")] == [
            ["1", "80.0%", "30000.0/81920.0(MiB)"], ["3", "80.0%", "30000.0/81920.0(MiB)"]], top
        logs = when(logs_bert, lambda out: "epoch 2" in out, "bert's log lines")
        assert logs.splitlines()[-2:] == ["epoch 1 loss 0.41", "epoch 2 loss 0.27"]
        run(submit_crash)
        got = when(get_crash, lambda out: "FAILED" in out and "CUDA error" in out, "crash FAILED, its log line")
        assert "Status:      FAILED" in got.splitlines()
        assert any(line.startswith("Failure:") and "(exit code 3)" in line for line in got.splitlines()), got
        assert "CUDA error: out of memory" in got, got
        run(ws_start)
        listed = when(ws_list, lambda out: "RUNNING" in out and "(Bound)" in out,
                      "nb RUNNING on its provisioned home")
        assert listed.splitlines()[1].split()[:4] == ["nb", "jupyter", "RUNNING", "1"], listed
        nodes = when(top_node, lambda out: node in out and "N/A" not in out.split(node, 1)[1].splitlines()[0],
                     "the node's figures in top node")
        row = next(line.split() for line in nodes.splitlines() if line.startswith(node))
        # 8 devices, 5 held (bert's 4 at 80%, the workspace's 1 idle): 40% on average, 4 x 30000 MiB used
        assert row[4:9] == ["8", "5", "0", "40.0%", "120000.0/655360.0(MiB)"], nodes
    finally:
        feed.stop()
        kubelet.remove_node(node)
        if service:
            client.CoreV1Api(cluster.api_client()).delete_namespace(monitoring)
