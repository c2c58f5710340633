"""metrics-server (sigs.k8s.io/metrics-server v0.8.0, built from its module by scripts/build-cluster.sh) serving
``metrics.k8s.io`` as on a cluster: an aggregated API server behind the API server's aggregation layer, its
APIService the release's (``manifests/base/apiservice.yaml``, ``insecureSkipTLSVerify`` as there), scraping every
node's kubelet ``/metrics/resource``. Here the kubelets are kwok's, which emulates that endpoint from the pods'
usage (kwok v0.8.0's own ``kustomize/metrics`` objects: tests/support/kwok.py loads them; a Node's
``metrics.k8s.io/resource-metrics-path`` annotation tells metrics-server where, pkg/scraper/client/resource).

It runs for a test, not the session: while it runs, every pod's CPU and memory are in metrics.k8s.io, which
``top`` shows. Its Service is an ExternalName ``localhost`` (an Endpoints address may not be a loopback one
and no kube-proxy runs here; the aggregation layer resolves the name with the APIService's port), as Kueue's
visibility API in tests/support/controllers.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from kubecluster import free_port, kube_bin_dir

NAMESPACE, NAME = "kube-system", "metrics-server"  # the release's (manifests/base/service.yaml)
APISERVICE = "/apis/apiregistration.k8s.io/v1/apiservices"
RESOLUTION = "10s"  # --metric-resolution: its least (above --kubelet-request-timeout); a CPU rate takes two scrapes


class MetricsServer:
    """metrics-server run by ``ctl`` (the session's ``controllers.Controllers``: its API paths and APIService
    wait), for one test: ``start()``, then ``stop()``."""

    def __init__(self, ctl, workdir: Path, source: Path):
        self.ctl, self.cluster, self.dir, self.src = ctl, ctl.cluster, workdir, source
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "metrics-server.log"

    def apiservice(self) -> dict:
        doc = yaml.safe_load((self.src / "manifests" / "base" / "apiservice.yaml").read_text())
        doc["spec"]["service"] = {**doc["spec"]["service"], "port": self.port}
        return doc

    def start(self, timeout: float = 90.0) -> MetricsServer:
        from kubernetes import client

        kubeconfig = str(self.cluster.admin.kubeconfig)
        argv = [str(kube_bin_dir(("metrics-server",)) / "metrics-server"), f"--secure-port={self.port}",
                "--bind-address=127.0.0.1", f"--cert-dir={self.dir / 'certs'}", f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
                # kwok's kubelet endpoint: the node's InternalIP and its daemonEndpoints port, kwok's own cert
                "--kubelet-insecure-tls", "--kubelet-use-node-status-port",
                "--kubelet-preferred-address-types=InternalIP", f"--metric-resolution={RESOLUTION}",
                "--kubelet-request-timeout=5s", "--v=2"]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        client.CoreV1Api(self.ctl.api).create_namespaced_service(NAMESPACE, {
            "metadata": {"name": NAME},
            "spec": {"type": "ExternalName", "externalName": "localhost",
                     "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}})
        doc = self.apiservice()
        self.ctl.create_path(APISERVICE, doc)
        states = self.ctl.wait_apiservices([doc["metadata"]["name"]], timeout)
        if states:
            self.stop()
            raise AssertionError(f"metrics-server's APIService not Available: {states}; metrics-server: "
                                 f"{self.log.read_text()[-2000:]}")
        return self

    def stop(self) -> None:
        """The APIService first (an unavailable aggregated API fails every client's discovery), its Service,
        then the process."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        self.ctl.delete_path(f"{APISERVICE}/{self.apiservice()['metadata']['name']}")
        try:
            client.CoreV1Api(self.ctl.api).delete_namespaced_service(NAME, NAMESPACE)
        except ApiException as exc:
            if exc.status != 404:
                raise
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
