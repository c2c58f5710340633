"""The test suite's cluster for a person (``scripts/dev-cluster.sh up|down|env``): the same Kubernetes control
plane (its default StorageClass, PVC protection), kwok and real controllers (Kueue with batch/job, MetalLB giving
LoadBalancer Services loopback addresses) that ``tests/conftest.py`` starts, the same Prometheus with the
GPU-metrics stand-in, plus two kwok GPU nodes, kept running until SIGTERM. Writes ``kubeconfig`` (the
admin's), ``env`` (the lines to source) and ``ready`` into the state folder it is given.

    python tests/support/devcluster.py STATE_DIR [--nodes N] [--gpus G]

kwok plays the nodes: a pod bound to them runs at once and stays Running; ``attach``/exec runs the command
on this machine, as the user who started the cluster (kwok has no containers). Pod annotations make a pod
finish, fail, print log lines or use its GPUs (tests/support/devfeed.py, tests/data/kwok/pod-stages.yaml).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from controllers import ALL, Controllers  # noqa: E402
from devfeed import DevFeed  # noqa: E402
from kubecluster import start_cluster  # noqa: E402
from kwok import Kwok  # noqa: E402
from promsim import PrometheusServer  # noqa: E402


def queue(cluster, gpus: int, name: str = "team-queue", namespace: str = "default") -> None:
    """Kueue's quota for the whole cluster (a ResourceFlavor, a ClusterQueue of every namespace with the nodes'
    GPUs) and a LocalQueue ``name`` in ``namespace``, so that ``--queue-name team-queue`` queues at once."""
    from kubernetes import client

    custom = client.CustomObjectsApi(cluster.api_client())
    api = ("kueue.x-k8s.io", "v1beta2")
    custom.create_cluster_custom_object(*api, "resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}})
    custom.create_cluster_custom_object(*api, "clusterqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [{"name": "default-flavor", "resources": [
                {"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": str(gpus)}]}]}]}})
    custom.create_namespaced_custom_object(*api, namespace, "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": name},
        "spec": {"clusterQueue": "cluster-queue"}})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state", type=Path, help="folder for the kubeconfig and the ready mark")
    parser.add_argument("--nodes", type=int, default=2, help="kwok GPU nodes (default 2)")
    parser.add_argument("--gpus", type=int, default=8, help="nvidia.com/gpu per node (default 8)")
    args = parser.parse_args(argv)
    args.state.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    cluster = start_cluster()
    kwok = ctl = prometheus = feed = None
    try:
        kwok = Kwok(cluster)
        ctl = Controllers(cluster).start(ALL)
        for name, why in ctl.errors.items():
            print(f"[dev-cluster] {name} did not start: {why.splitlines()[0] if why else '?'}", flush=True)
        nodes = {f"gpu-node-{i}": args.gpus for i in range(1, args.nodes + 1)}
        for node, gpus in nodes.items():
            kwok.add_node(node, gpus=gpus, labels={"node-role.kubernetes.io/gpu": ""})
        if "kueue" in ctl.running:
            queue(cluster, gpus=sum(nodes.values()))
        prometheus = PrometheusServer()
        feed = DevFeed(cluster, kwok, prometheus, nodes).start()
        kubeconfig = args.state / "kubeconfig"
        shutil.copyfile(cluster.admin.kubeconfig, kubeconfig)
        kubeconfig.chmod(0o600)
        env = [f"export KUBECONFIG={kubeconfig}"]
        service = feed.register_service()
        if service is None:  # no service proxy to it here: name it
            env.append(f"export PROMETHEUS_ADDRESS={prometheus.url}")
        (args.state / "env").write_text("\n".join(env) + "\n")
        (args.state / "ready").write_text(cluster.server + "\n")
        print(f"[dev-cluster] ready at {cluster.server}; Prometheus {service or prometheus.url}", flush=True)
        stop.wait()
    finally:
        (args.state / "ready").unlink(missing_ok=True)
        if feed is not None:
            feed.stop()
        if prometheus is not None:
            prometheus.stop()
        if ctl is not None:
            ctl.stop()
        if kwok is not None:
            kwok.close()
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
