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
import time
from pathlib import Path

import yaml
from kubecluster import TestCluster, free_port, kube_bin_dir

NAMESPACE, NAME = "kube-system", "metrics-server"  # the release's (manifests/base/service.yaml)
APISERVICE = "/apis/apiregistration.k8s.io/v1/apiservices"
RESOLUTION = "10s"  # --metric-resolution: its least (above --kubelet-request-timeout); a CPU rate takes two scrapes


def call(api, path: str, method: str, body: dict | None = None) -> dict:
    """One request of the API server by path (an APIService has no typed client here), JSON in and out."""
    import json

    resp = api.call_api(path, method, body=body, auth_settings=["BearerToken"],
                        header_params={"Content-Type": "application/json", "Accept": "application/json"},
                        _preload_content=False, _return_http_data_only=True)
    return json.loads(resp.data or b"{}")


class MetricsServer:
    def __init__(self, cluster: TestCluster, workdir: Path, source: Path):
        self.cluster, self.dir, self.src = cluster, workdir, source
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
        api = self.cluster.api_client()
        core = client.CoreV1Api(api)
        core.create_namespaced_service(NAMESPACE, {
            "metadata": {"name": NAME},
            "spec": {"type": "ExternalName", "externalName": "localhost",
                     "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}})
        doc = self.apiservice()
        call(api, APISERVICE, "POST", doc)
        deadline = time.monotonic() + timeout
        while True:
            obj = call(api, f"{APISERVICE}/{doc['metadata']['name']}", "GET")
            cond = next((c for c in (obj.get("status") or {}).get("conditions") or []
                         if c.get("type") == "Available"), {})
            if cond.get("status") == "True":
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"metrics-server's APIService not Available ({cond.get('message')}); "
                                     f"metrics-server: {self.log.read_text()[-2000:]}")
            time.sleep(0.25)

    def stop(self) -> None:
        """The APIService first (an unavailable aggregated API fails every client's discovery), its Service,
        then the process."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        api = self.cluster.api_client()
        for delete in (lambda: call(api, f"{APISERVICE}/{self.apiservice()['metadata']['name']}", "DELETE"),
                       lambda: client.CoreV1Api(api).delete_namespaced_service(NAME, NAMESPACE)):
            try:
                delete()
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
