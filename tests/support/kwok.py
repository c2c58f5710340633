"""kwok (sigs.k8s.io/kwok v0.8.0) as the nodes and kubelets of the test cluster (tests/support/kubecluster.py).

``Kwok(cluster)`` starts the ``kwok`` binary that ``scripts/build-cluster.sh kwok`` builds: kubeconfig the
cluster's admin, its own temporary ``KWOK_WORKDIR`` (else ``~/.kwok/kwok.yaml`` is loaded first), the
complete KwokConfiguration and the stages of tests/data/kwok/, nodes managed by a label of its own
(``--manage-nodes-with-label-selector=kwok.x-k8s.io/node=<id>``: nodes of another Kwok
are left alone), and its kubelet API on ``https://127.0.0.1:<free port>`` with a certificate for
127.0.0.1 from ``cluster.ca`` (the API server verifies it: ``--kubelet-certificate-authority``). Its own
CRDs ``logs`` and ``attaches`` (kwok.x-k8s.io, from the module's kustomize/crd/bases) are installed and
``--enable-crds=Logs,Attach,PortForward`` makes kwok watch per-pod objects; ``ClusterLogs``, ``ClusterAttach`` and
``ClusterExec`` defaults come from a file made at start. kwok's own metrics objects (its module's
kustomize/metrics) make each node serve the kubelet's ``/metrics/resource`` from the pods' usage annotations
(tests/support/metricsserver.py scrapes them). Ready when ``/healthz`` answers; ``close()``
stops it. The methods are those the tests used with the former Python kubelet stand-in (same signatures
and meaning), done through kwok, plus ``finish_pod``, ``restart_container``, ``evict_pod``, ``wait_pod`` and ``annotate``.

Nodes: ``add_node`` creates the Node with its status in one request (capacity, allocatable with
``nvidia.com/gpu``, InternalIP 127.0.0.1 and no Hostname address, the kwok port as kubelet port, nodeInfo
with the cluster's version); kwok's node-initialize adds the conditions and keeps the rest. ``ready=False``
annotates it ``arena-helm.test/not-ready`` and kwok's node-not-ready makes it Ready=False/KubeletNotReady.
No heartbeats (no node-lifecycle controller runs).

Pods: kwok plays tests/data/kwok/pod-stages.yaml (its header lists the annotations) for the pods the real
scheduler bound to its nodes: Running at once (podIP from 10.0.0.0/16, hostIP 127.0.0.1, containerID,
imageID), and whatever the ``arena-helm.test/*`` pod annotations ask for: an exit code (Succeeded /
Failed, OOMKilled...), restarts in place, eviction, a waiting reason. The helpers set those annotations
and wait until the pod shows the state; a pod template can carry them too (e.g. a Job's pods exit 0 with
``arena-helm.test/exit-code: "0"``). A pod being deleted is deleted with grace period 0 (pod-delete).

Logs, through the API server's pods/log (API server -> kwok ``/containerLogs``): per pod a ``Logs``
object names one CRI-format file per container (``write_log`` appends stamped lines, stdout or stderr).
``tailLines``, ``timestamps``, ``limitBytes``, ``sinceSeconds`` (``sinceTime`` takes the same path in kwok)
and, after ``restart_container``, ``previous`` work (``previous`` before any restart: 400); a pod nothing
was written for reads empty.
``follow`` streams never end by themselves, whatever the pod's phase (kwok's runtime stub always says
"running"): ``close_log`` ends the ones open on the file, with kwok's read error as their last text.

Exec, through pods/exec (client websocket v4 proxied as is, v5 as kubectl >= 1.30 and arena-helm attach
speak it turned into SPDY by the API server): the command runs **on this machine**, as kwok's user, in
``exec_dir`` with ``ARENA_HELM_KWOK_EXEC=1`` added to the environment (no container, no toy commands as
the stand-in had: ``exit 3`` is ``sh -c 'exit 3'``). stdout, stderr and piped stdin work; a TTY gets a pty.
Found by the tests of tests/cluster/test_kwok.py:
- exit code 0: status Success. Any other exit code: NOT reported as such. kwok wraps the
  ``*exec.ExitError``, so k8s.io/cri-streaming v0.36.1 ServeExec answers an InternalError whose message
  is ``error executing command in container: cmd wait: <argv>: exit status N``: ``kubectl exec`` exits 1
  (``error: Internal error occurred: Internal error occurred: error executing command ...``), the python
  client's ``WSClient.returncode`` raises ValueError, arena-helm's ``attach.exit_code`` raises
  ClusterError; a missing executable is the same with ``cmd start: ... executable file not found``.
- the end of stdin never reaches the command (kwok copies stdin into the pipe and never closes it):
  ``cat`` hangs; ``head -n1``/``head -c N`` end.
- with a TTY, kwok closes the pty when the command exits, racing the copy of its output: the last output
  may be lost (make the command wait for input before it exits).
Attach (pods/attach): the container's log file again (an ``Attach`` object per pod): lines written after
the stream is set up arrive on stdout; stdin is ignored; ``close_log`` ends it (the read error as status).
Port-forward (pods/portforward, as ``kubectl port-forward`` speaks it): to an address of this machine, per pod
(``forward_port``: a ``PortForward`` object). kwok does no authentication of its own: it listens on
127.0.0.1 only.

Porting a test written for the former kubelet stand-in:
- a bound pod runs at once (the stand-in left it Pending until ``run_pod``/``set_pod_state``): to keep it
  Pending, give its template ``arena-helm.test/waiting-reason`` or call ``set_pod_state(..., "Pending")``;
- no ``requests``/``execs`` records: assert on what the API server answers instead;
- ``set_pod_state``: a finished pod stays finished, Succeeded means exit code 0 and Failed a non-zero one,
  ``waiting_reason`` only with Pending or Running; Failed with reason Evicted is ``evict_pod``;
- statuses are a kubelet's, not the stand-in's: the spec's image, real-looking containerID/imageID, pod IPs
  from 10.0.0.0/16, startTime kept, conditions PodReadyToStartContainers/Initialized/ContainersReady/Ready;
- Job pods do not complete by themselves: annotate them (template or ``finish_pod``);
- nodes carry the ``kwok.x-k8s.io/node`` label, no Hostname address, kubeletVersion = the cluster's;
- ``write_log`` before a follow stream opens (streams that began on the shared empty file cannot be
  ended); a closed follow stream's text ends with ``failed to read log file "...": read ...: is a
  directory`` (``Kwok.strip_close_marker``);
- exec runs real commands on this machine, with the limits above; a remote non-zero exit code is an error.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import yaml
from kubecluster import POOL_LABEL, REPO, free_port, kube_bin_dir

DATA = REPO / "tests" / "data" / "kwok"
CONFIG_FILES = ("kwok.yaml", "node-stages.yaml", "pod-stages.yaml")
NODE_LABEL = "kwok.x-k8s.io/node"  # the label kwok manages nodes by (--manage-nodes-with-label-selector)
NOT_READY = "arena-helm.test/not-ready"  # Node annotation: node-not-ready instead of node-initialize
A = "arena-helm.test/"  # the pod annotations of tests/data/kwok/pod-stages.yaml
STATE_ANNOTATIONS = tuple(A + k for k in (
    "waiting-reason", "waiting-message", "waiting-phase", "pod-reason", "pod-message", "exit-code", "reason",
    "message", "container", "restart-count", "restart-exit-code", "restart-reason", "evict", "evict-message",
))
METRICS_FILES = ("resource/metrics-resource.yaml", "usage/usage-from-annotation.yaml")
METRICS_PATH = "metrics.k8s.io/resource-metrics-path"  # Node annotation: where metrics-server scrapes it
CRD_KINDS = {"Logs": "kwok.x-k8s.io_logs.yaml", "Attach": "kwok.x-k8s.io_attaches.yaml",
             "PortForward": "kwok.x-k8s.io_portforwards.yaml"}
KWOK_GROUP, KWOK_VERSION = "kwok.x-k8s.io", "v1alpha1"
PROBE_CONTAINER = "arena-helm-kwok-probe"  # an entry of every Logs object: tells when kwok has its version
CLOSE_MARKER = re.compile(r'failed to read log file "[^"]*": read [^\n]*: is a directory$')


def kwok_source_dir() -> Path:
    """The kwok module's source folder (its CRDs are under kustomize/crd/bases)."""
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-cluster.sh"), "--source", "kwok"],
                          stdout=subprocess.PIPE, text=True, check=True)
    return Path(proc.stdout.strip().splitlines()[-1])


def cri_line(text: str, stream: str = "stdout") -> str:
    """One line of the CRI log format the kubelet's (and kwok's) log reader parses."""
    ns = time.time_ns()
    stamp = dt.datetime.fromtimestamp(ns // 1_000_000_000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{ns % 1_000_000_000:09d}Z {stream} F {text}\n"



def kubelet_labels(hostname: str) -> dict[str, str]:
    """The labels a kubelet sets on its Node (kubernetes v1.37.2 pkg/kubelet/kubelet_node_status.go
    ``initialNode``): ``kubernetes.io/hostname``, ``kubernetes.io/os`` and ``kubernetes.io/arch``, and their beta
    forms."""
    return {"kubernetes.io/hostname": hostname, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}

class Kwok:
    """A kwok process for a ``TestCluster``; ``close()`` stops it. See the module docstring."""

    def __init__(self, cluster, *, timeout: float = 60.0):
        from kubernetes import client

        self.cluster = cluster
        self.api_client = cluster.api_client()
        self.core = client.CoreV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)
        self.nodes: set[str] = set()
        self.node_label = (NODE_LABEL, f"arena-helm-{uuid.uuid4().hex[:10]}")  # this process's nodes only
        self.kube_version = client.VersionApi(self.api_client).get_code().git_version
        self.workdir = Path(tempfile.mkdtemp(prefix="arena-helm-kwok-"))
        self.logs_dir = self.workdir / "logs"
        self.exec_dir = self.workdir / "exec"
        for d in (self.workdir / "home", self.logs_dir, self.exec_dir):
            d.mkdir()
        self.empty_log = self.logs_dir / "empty.log"
        self.empty_log.touch()
        self._log_objects: dict[tuple[str, str], set[str]] = {}  # (ns, pod) -> containers in its Logs object
        self._log_gen: dict[tuple[str, str, str], int] = {}  # a container's log file after close_log
        self._closed_logs: set[tuple[str, str, str]] = set()
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        try:
            self._install_crds()
            self._start(timeout)
        except BaseException:
            self.close()
            raise

    # ---- process ---------------------------------------------------------------------------------
    def _install_crds(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ext = client.ApiextensionsV1Api(self.api_client)
        bases = kwok_source_dir() / "kustomize" / "crd" / "bases"
        for name in CRD_KINDS.values():
            path = bases / name
            crd_name = yaml.safe_load(path.read_text())["metadata"]["name"]
            try:
                ext.read_custom_resource_definition(crd_name)
                continue  # another Kwok of this cluster installed it
            except ApiException as exc:
                if exc.status != 404:
                    raise
            self.cluster.create_crd(path)

    def _start(self, timeout: float) -> None:
        w = self.workdir
        cert = self.cluster.ca.issue_cert("127.0.0.1", "localhost")
        cert.cert_chain_pems[0].write_to_path(str(w / "kwok.pem"))
        cert.private_key_pem.write_to_path(str(w / "kwok-key.pem"))
        # File-sourced defaults (paths of this run): logs and attach of pods without a Logs/Attach object
        # read an empty file; exec runs the command on this machine, in the exec folder.
        (w / "debugging.yaml").write_text(yaml.safe_dump_all([
            {"apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}", "kind": "ClusterLogs", "metadata": {"name": "empty"},
             "spec": {"logs": [{"logsFile": str(self.empty_log)}]}},
            {"apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}", "kind": "ClusterAttach", "metadata": {"name": "empty"},
             "spec": {"attaches": [{"logsFile": str(self.empty_log)}]}},
            {"apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}", "kind": "ClusterExec", "metadata": {"name": "local"},
             "spec": {"execs": [{"local": {"workDir": str(self.exec_dir),
                                           "envs": [{"name": "ARENA_HELM_KWOK_EXEC", "value": "1"}]}}]}},
        ]))
        configs = [DATA / f for f in CONFIG_FILES] + [w / "debugging.yaml"]
        # the kubelets' /metrics/resource (what metrics-server scrapes), from the pods' kwok.x-k8s.io/usage-cpu
        # and usage-memory annotations (1m and 1Mi without): kwok's own objects, as its module ships them
        configs += [kwok_source_dir() / "kustomize" / "metrics" / f for f in METRICS_FILES]
        key, value = self.node_label
        argv = [
            str(kube_bin_dir(("kwok",)) / "kwok"),
            f"--kubeconfig={self.cluster.admin.kubeconfig}",
            *(f"--config={c}" for c in configs),
            f"--manage-nodes-with-label-selector={key}={value}",
            "--node-ip=127.0.0.1",
            f"--node-port={self.port}",
            f"--server-address=127.0.0.1:{self.port}",
            f"--tls-cert-file={w / 'kwok.pem'}",
            f"--tls-private-key-file={w / 'kwok-key.pem'}",
            f"--enable-crds={','.join(CRD_KINDS)}",
            "-v=INFO",
        ]
        env = dict(os.environ, KWOK_WORKDIR=str(w / "home"))  # else ~/.kwok/kwok.yaml is loaded first
        env.pop("KUBECONFIG", None)
        log = open(w / "kwok.log", "wb")  # noqa: SIM115 - closed with the process
        try:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=w, env=env, start_new_session=True)
        finally:
            log.close()
        self._wait_healthy(timeout)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _ssl(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cluster.ca_file))

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kwok exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.server}/healthz", context=self._ssl(), timeout=2) as resp:
                    if resp.status == 200 and resp.read().strip() == b"ok":
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(f"kwok not healthy after {timeout}s ({last}): {self.log_tail()}")

    def log_tail(self, lines: int = 30, grep: str = "") -> str:
        path = self.workdir / "kwok.log"
        if not path.exists():
            return ""
        text = [ln for ln in path.read_text(errors="replace").splitlines() if grep in ln]
        return "\n".join(text[-lines:])

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        if not os.environ.get("ARENA_HELM_KEEP_CLUSTER"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Kwok:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- nodes -----------------------------------------------------------------------------------
    def add_node(self, name: str, *, pool: str | None = None, gpus: int = 0, allocatable_gpus: int | None = None,
                 cpu: str = "32", memory: str = "128Gi", labels: dict | None = None, ready: bool = True,
                 extra_resources: dict | None = None, taints: list[dict] | None = None,
                 timeout: float = 30.0) -> None:
        """A Node (status included, one request) that kwok makes Ready, keeping its capacity and allocatable
        (``nvidia.com/gpu``); ``ready=False``: kwok registers it NotReady (KubeletNotReady) and it keeps the
        ``node.kubernetes.io/not-ready:NoSchedule`` taint the TaintNodesByCondition admission gave it.
        ``pool`` (a test's namespace) labels it ``arena-helm.test/pool=<pool>`` (PodNodeSelector). It carries the
        labels every kubelet puts on its Node (kubernetes v1.37.2 pkg/kubelet/kubelet_node_status.go
        ``initialNode``: hostname, os and arch, stable and beta), as the node's name is its hostname."""
        labels = {**kubelet_labels(name), **(labels or {})}
        if pool:
            labels[POOL_LABEL] = pool
        key, value = self.node_label
        labels[key] = value
        capacity = {"cpu": cpu, "memory": memory, "pods": "110"}
        allocatable = dict(capacity)
        if gpus:
            capacity["nvidia.com/gpu"] = str(gpus)
            allocatable["nvidia.com/gpu"] = str(gpus if allocatable_gpus is None else allocatable_gpus)
        for res, amount in (extra_resources or {}).items():
            capacity[res] = allocatable[res] = str(amount)
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {METRICS_PATH: f"/metrics/nodes/{name}/metrics/resource",
                                         **({} if ready else {NOT_READY: "true"})}},
            "spec": {"taints": taints or []},
            "status": {  # the API server keeps a Node's status on create
                "capacity": capacity,
                "allocatable": allocatable,
                # InternalIP only: the API server reaches kwok at 127.0.0.1:<port> (no Hostname address)
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
                "nodeInfo": {
                    "machineID": name, "systemUUID": name, "bootID": name, "kernelVersion": "kwok",
                    "osImage": "kwok", "containerRuntimeVersion": "containerd://2.0.0",
                    "kubeletVersion": self.kube_version, "kubeProxyVersion": self.kube_version,
                    "operatingSystem": "linux", "architecture": "amd64",
                },
            },
        }
        self.core.create_node(body)
        self.nodes.add(name)
        want = ("True", "KubeletReady") if ready else ("False", "KubeletNotReady")
        deadline = time.monotonic() + timeout
        while True:
            node = self.core.read_node(name)
            cond = next((c for c in node.status.conditions or [] if c.type == "Ready"), None)
            if cond is not None and (cond.status, cond.reason) == want:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"kwok did not make node {name} {want} in {timeout}s: {self.log_tail(10)}")
            time.sleep(0.05)
        if ready:
            # The TaintNodesByCondition admission gave the new node node.kubernetes.io/not-ready:NoSchedule;
            # the node lifecycle controller (not run: nothing here sends heartbeats it would trust) would lift
            # it once the node is Ready, so do that here.
            self.core.patch_node(name, {"spec": {"taints": taints or None}})

    def set_allocatable_gpus(self, name: str, gpus: int) -> None:
        """Change the node's GPUs (capacity and allocatable), as a device plugin re-registering would; kwok
        leaves a Ready node's status alone (no heartbeat stage)."""
        node = self.core.read_node(name)
        cap, alloc = dict(node.status.capacity), dict(node.status.allocatable)
        cap["nvidia.com/gpu"] = alloc["nvidia.com/gpu"] = str(gpus)
        self.core.patch_node_status(name, {"status": {"capacity": cap, "allocatable": alloc}})

    def remove_node(self, name: str) -> None:
        from kubernetes.client.rest import ApiException

        try:
            self.core.delete_node(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
        self.nodes.discard(name)

    # ---- scheduling ------------------------------------------------------------------------------
    def wait_scheduled(self, namespace: str, pod: str, timeout: float = 30.0) -> str:
        """Until the real scheduler has bound the pod; returns its node."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            obj = self.core.read_namespaced_pod(pod, namespace)
            if obj.spec.node_name:
                return obj.spec.node_name
            last = "; ".join(f"{c.type}={c.status} {c.reason or ''} {c.message or ''}"
                             for c in obj.status.conditions or [])
            time.sleep(0.1)
        raise AssertionError(f"the scheduler did not bind pod {namespace}/{pod} in {timeout}s ({last})")

    def wait_unschedulable(self, namespace: str, pod: str, timeout: float = 30.0) -> str:
        """Until the real scheduler has marked the pod Unschedulable; returns its message."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            obj = self.core.read_namespaced_pod(pod, namespace)
            for c in obj.status.conditions or []:
                if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
                    return c.message
            if obj.spec.node_name:
                raise AssertionError(f"pod {namespace}/{pod} was bound to {obj.spec.node_name}")
            time.sleep(0.1)
        raise AssertionError(f"the scheduler did not mark pod {namespace}/{pod} unschedulable in {timeout}s")

    # ---- pod state through the stages ------------------------------------------------------------
    def _bound_here(self, namespace: str, pod: str, timeout: float = 30.0):
        node = self.wait_scheduled(namespace, pod, timeout)
        if node not in self.nodes:
            raise AssertionError(f"pod {namespace}/{pod} is bound to {node!r}, not to a node of this kwok")
        return self.core.read_namespaced_pod(pod, namespace)

    def annotate(self, namespace: str, pod: str, annotations: dict) -> None:
        """Patch pod annotations (None removes one); kwok re-matches its stages on the change."""
        self.core.patch_namespaced_pod(pod, namespace, {"metadata": {"annotations": annotations}})

    def _drive(self, namespace: str, pod: str, annotations: dict) -> None:
        """Set ``annotations`` and remove every other state annotation of pod-stages.yaml."""
        body = dict.fromkeys(STATE_ANNOTATIONS)
        body.update({k if k.startswith(A) else A + k: None if v is None else str(v) for k, v in annotations.items()})
        self.annotate(namespace, pod, body)

    def wait_pod(self, namespace: str, pod: str, check, what: str, timeout: float = 30.0):
        """Poll the pod until ``check(pod)`` holds; returns the pod (a V1Pod)."""
        deadline = time.monotonic() + timeout
        while True:
            obj = self.core.read_namespaced_pod(pod, namespace)
            if check(obj):
                return obj
            if time.monotonic() > deadline:
                status = self.api_client.sanitize_for_serialization(obj.status)
                raise AssertionError(
                    f"pod {namespace}/{pod} not {what} after {timeout}s: {json.dumps(status)[:1500]}\n"
                    f"kwok: {self.log_tail(8, grep=pod)}")
            time.sleep(0.05)

    @staticmethod
    def _ready(pod) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])

    @staticmethod
    def _waiting(pod, reason: str) -> bool:
        cs = pod.status.container_statuses or []
        return bool(cs) and all(s.state.waiting is not None and s.state.waiting.reason == reason for s in cs)

    def set_pod_state(self, namespace: str, pod: str, phase: str, *, reason: str = "", message: str = "",
                      exit_code: int | None = None, waiting_reason: str = "", timeout: float = 30.0) -> None:
        """The stand-in's set_pod_state through kwok: the state becomes pod annotations that kwok's stages
        turn into the status, then this waits until the pod shows it. Only for a pod the scheduler bound
        to a node of this kwok.

        - ``Running``: the containers run, Ready (``waiting_reason``: phase Running with the containers
          waiting, e.g. CrashLoopBackOff, not Ready).
        - ``Pending``: the containers wait with ``waiting_reason`` (default ContainerCreating) and
          ``message``; ``reason``/``message`` also become the pod's status.reason/message.
        - ``Succeeded``/``Failed``: the containers terminate with ``exit_code`` (default 0 / 1; reason
          Completed / Error); ``reason``/``message`` become the pod's. ``Failed`` with reason ``Evicted``
          is an eviction (see ``evict_pod``).
        A finished pod stays finished (kwok, like a kubelet, never restarts it).
        """
        obj = self._bound_here(namespace, pod, timeout)
        if obj.status.phase in ("Succeeded", "Failed") and phase != obj.status.phase:
            raise AssertionError(f"pod {namespace}/{pod} is {obj.status.phase}: it cannot become {phase}")
        pod_meta = {"pod-reason": reason or None, "pod-message": message or None}
        if phase == "Running":
            if waiting_reason:
                self._drive(namespace, pod, {"waiting-reason": waiting_reason, "waiting-message": message or None,
                                             "waiting-phase": "Running", **pod_meta})
                self.wait_pod(namespace, pod, lambda p: p.status.phase == "Running"
                              and self._waiting(p, waiting_reason), f"Running/{waiting_reason}", timeout)
            else:
                self._drive(namespace, pod, {})
                self.wait_pod(namespace, pod, lambda p: p.status.phase == "Running" and self._ready(p),
                              "Running", timeout)
        elif phase == "Pending":
            waiting = waiting_reason or "ContainerCreating"
            self._drive(namespace, pod, {"waiting-reason": waiting, "waiting-message": message or None,
                                         **pod_meta})
            self.wait_pod(namespace, pod, lambda p: p.status.phase == "Pending" and self._waiting(p, waiting),
                          f"Pending/{waiting}", timeout)
        elif phase in ("Succeeded", "Failed"):
            if waiting_reason:
                raise ValueError("the kwok stages end a pod's containers as terminated, not waiting")
            if phase == "Failed" and reason == "Evicted":
                self.evict_pod(namespace, pod, message, timeout=timeout)
                return
            code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
            if (code == 0) != (phase == "Succeeded"):
                raise ValueError(f"the kwok stages make exit code {code} {'Succeeded' if code == 0 else 'Failed'}")
            self._drive(namespace, pod, {"exit-code": code, **pod_meta})
            self.wait_pod(namespace, pod, lambda p: p.status.phase == phase, phase, timeout)
        else:
            raise ValueError(f"unknown phase {phase!r}")

    def run_pod(self, namespace: str, pod: str, node: str | None = None, timeout: float = 30.0) -> str:
        """Wait for the scheduler to bind the pod (to ``node`` if given, else anywhere) and for kwok to run
        it (a pod held with ``waiting-reason`` is let go); returns the node. A pod whose template carries
        ``arena-helm.test/exit-code`` may be finished by then."""
        bound = self.wait_scheduled(namespace, pod, timeout)
        if node is not None and bound != node:
            raise AssertionError(f"the scheduler bound {namespace}/{pod} to {bound}, not {node}")
        if bound not in self.nodes:
            raise AssertionError(f"pod {namespace}/{pod} is bound to {bound!r}, not to a node of this kwok")
        obj = self.core.read_namespaced_pod(pod, namespace)
        if A + "waiting-reason" in (obj.metadata.annotations or {}):
            self.annotate(namespace, pod, {A + "waiting-reason": None, A + "waiting-message": None,
                                           A + "waiting-phase": None})
        self.wait_pod(namespace, pod, lambda p: (p.status.phase == "Running" and self._ready(p))
                      or p.status.phase in ("Succeeded", "Failed"), "Running", timeout)
        return bound

    def finish_pod(self, namespace: str, pod: str, exit_code: int = 0, reason: str | None = None,
                   message: str | None = None, container: str | None = None, *, timeout: float = 30.0):
        """The containers (only ``container``, the others with 0, if given) exit with ``exit_code``: phase
        Succeeded for 0, else Failed; ``reason`` is the terminated reason (default Completed / Error, e.g.
        OOMKilled with 137), ``message`` its message. Waits for it; returns the pod."""
        self._bound_here(namespace, pod, timeout)
        since = self.core.read_namespaced_pod(pod, namespace).metadata.resource_version
        self._drive(namespace, pod, {"exit-code": exit_code, "reason": reason, "message": message,
                                     "container": container})
        phase = "Succeeded" if exit_code == 0 else "Failed"
        return self._watch_phase(namespace, pod, since, phase, timeout)

    def _watch_phase(self, namespace: str, pod: str, since: str, phase: str, timeout: float):
        """Watch the pod from resourceVersion ``since`` until kwok wrote ``phase``; returns the pod as it was
        then. A watch, not a poll: a controller that sees the pod finish may delete it at once (training-operator
        does when the job's backoffLimit is reached), and the watch still shows the update before the deletion."""
        from kubernetes import watch

        w = watch.Watch()
        seen = ""
        for event in w.stream(self.core.list_namespaced_pod, namespace, field_selector=f"metadata.name={pod}",
                              resource_version=since, timeout_seconds=max(int(timeout), 1)):
            obj = event["object"]
            seen = obj.status.phase if obj.status else ""
            if event["type"] in ("ADDED", "MODIFIED") and seen == phase:
                w.stop()
                return obj
        raise AssertionError(f"pod {namespace}/{pod} not {phase} after {timeout}s (last phase seen: {seen or '-'})\n"
                             f"kwok: {self.log_tail(8, grep=pod)}")

    def restart_container(self, namespace: str, pod: str, exit_code: int, reason: str | None = None, *,
                          container: str | None = None, timeout: float = 30.0):
        """One restart in place of the pod's containers (or of ``container``), as the kubelet does for
        restartPolicy OnFailure/Always: the run ends with ``exit_code`` (``reason``, default Error or
        Completed), restartCount+1, lastState.terminated, running again, phase stays Running. The
        container's log moves to its previous log (``logs --previous``). Waits for it; returns the pod."""
        obj = self._bound_here(namespace, pod, timeout)
        if obj.spec.restart_policy not in ("OnFailure", "Always"):
            raise ValueError(f"pod {namespace}/{pod} has restartPolicy {obj.spec.restart_policy}: "
                             "a kubelet does not restart its containers (use finish_pod)")
        if obj.status.phase != "Running" or not self._ready(obj):
            obj = self.wait_pod(namespace, pod, lambda p: p.status.phase == "Running" and self._ready(p),
                                "Running", timeout)
        counts = {s.name: s.restart_count for s in obj.status.container_statuses or []
                  if container is None or s.name == container}
        target = max(counts.values(), default=0) + 1
        self._drive(namespace, pod, {"restart-count": target, "restart-exit-code": exit_code,
                                     "restart-reason": reason, "container": container})

        def restarted(p) -> bool:
            cs = [s for s in p.status.container_statuses or [] if container is None or s.name == container]
            return bool(cs) and all(s.restart_count >= target and s.state.running is not None for s in cs)

        obj = self.wait_pod(namespace, pod, restarted, f"restarted (restartCount {target})", timeout)
        for name in counts:
            self._rotate_log(namespace, pod, name)
        return obj

    def evict_pod(self, namespace: str, pod: str, message: str, *, timeout: float = 30.0):
        """The kubelet's eviction: phase Failed, reason Evicted, ``message``, DisruptionTarget condition,
        containers killed (137). Waits for it; returns the pod."""
        self._bound_here(namespace, pod, timeout)
        self._drive(namespace, pod, {"evict": "true", "evict-message": message})
        return self.wait_pod(namespace, pod, lambda p: p.status.phase == "Failed" and p.status.reason == "Evicted",
                             "Evicted", timeout)

    # ---- logs ------------------------------------------------------------------------------------
    def log_file(self, namespace: str, pod: str, container: str, previous: bool = False) -> Path:
        """The file kwok serves as the container's log (``previous``: for ``logs --previous``)."""
        base = self.logs_dir / namespace / pod
        if previous:
            return base / f"{container}.previous.log"
        gen = self._log_gen.get((namespace, pod, container), 0)
        return base / (f"{container}.log" if gen == 0 else f"{container}.{gen}.log")

    def _sync_log_objects(self, namespace: str, pod: str, containers: set[str], timeout: float = 15.0) -> None:
        """Create or update the Logs and Attach objects named after the pod (one entry, i.e. one file, per
        container; kwok opens the file on every request) and wait until kwok uses this version: the Logs
        object carries a probe container whose file holds a fresh token, read back from kwok's endpoint."""
        from kubernetes.client.rest import ApiException

        key = (namespace, pod)
        names = set(containers) | self._log_objects.get(key, set())
        for name in names:
            path = self.log_file(namespace, pod, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        token = uuid.uuid4().hex
        probe = self.logs_dir / namespace / pod / f"probe-{token}.log"
        probe.write_text(cri_line(token))
        entries = []
        for n in sorted(names):
            entry = {"containers": [n], "logsFile": str(self.log_file(namespace, pod, n))}
            if self.log_file(namespace, pod, n, True).exists():  # else --previous fails, as with no restart
                entry["previousLogsFile"] = str(self.log_file(namespace, pod, n, True))
            entries.append(entry)
        objects = {
            ("attaches", "Attach"): {"attaches": [{"containers": [n], "logsFile": str(self.log_file(namespace, pod, n))}
                                                  for n in sorted(names)]},
            ("logs", "Logs"): {"logs": [*entries, {"containers": [PROBE_CONTAINER], "logsFile": str(probe)}]},
        }
        for (plural, kind), spec in objects.items():  # Attach first: kwok has it by the time Logs is seen
            body = {"apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}", "kind": kind,
                    "metadata": {"name": pod, "namespace": namespace}, "spec": spec}
            try:
                self.custom.create_namespaced_custom_object(KWOK_GROUP, KWOK_VERSION, namespace, plural, body)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                self.custom.patch_namespaced_custom_object(KWOK_GROUP, KWOK_VERSION, namespace, plural, pod,
                                                           {"spec": spec})
        self._log_objects[key] = names
        deadline = time.monotonic() + timeout
        got = b""
        while time.monotonic() < deadline:
            try:
                got = self._kwok_log(namespace, pod, PROBE_CONTAINER)
                if token.encode() in got:
                    return
            except (urllib.error.URLError, OSError) as exc:
                got = str(exc).encode()
            time.sleep(0.05)
        raise AssertionError(f"kwok did not pick up the Logs object of {namespace}/{pod} in {timeout}s "
                             f"(probe: {got[-300:]!r}): {self.log_tail(5)}")

    def _ensure_log_objects(self, namespace: str, pod: str, container: str) -> None:
        key = (namespace, pod)
        if container in self._log_objects.get(key, set()):
            return
        spec = self.core.read_namespaced_pod(pod, namespace).spec
        names = {c.name for c in spec.containers} | {c.name for c in spec.init_containers or []} | {container}
        self._sync_log_objects(namespace, pod, names)

    def _kwok_log(self, namespace: str, pod: str, container: str, **query) -> bytes:
        """The container's log straight from kwok's kubelet endpoint (kwok does no authentication)."""
        q = urllib.parse.quote
        url = f"{self.server}/containerLogs/{q(namespace)}/{q(pod)}/{q(container)}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        with urllib.request.urlopen(url, context=self._ssl(), timeout=5) as resp:
            return resp.read()

    def forward_port(self, namespace: str, pod: str, port: int, target_port: int) -> None:
        """The pod's ``port`` (what ``kubectl port-forward`` reaches through the API server's pods/portforward)
        forwarded by kwok to ``127.0.0.1:target_port`` on this machine (a ``PortForward`` object named as the
        pod, kwok's own CRD)."""
        from kubernetes import client

        body = {"apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}", "kind": "PortForward",
                "metadata": {"name": pod, "namespace": namespace},
                "spec": {"forwards": [{"ports": [port], "target": {"address": "127.0.0.1", "port": target_port}}]}}
        client.CustomObjectsApi(self.api_client).create_namespaced_custom_object(
            KWOK_GROUP, KWOK_VERSION, namespace, "portforwards", body)

    @contextlib.contextmanager
    def serving_http(self, namespace: str, pod: str, port: int, body: bytes):
        """The pod's ``port`` answers every HTTP GET with ``body``: a small server on this machine, standing in
        for the program the pod's image would run (none runs on kwok), to which kwok forwards the port
        (``forward_port``). Yields the paths requested, in order."""
        import http.server
        import threading

        seen: list[str] = []

        class Stand(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stand)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            self.forward_port(namespace, pod, port, server.server_port)
            yield seen
        finally:
            server.shutdown()

    def write_log(self, namespace: str, pod: str, container: str, text: str, *, stream: str = "stdout") -> None:
        """Append ``text``'s lines (CRI format, stamped now; ``stream`` stdout or stderr) to the container's
        log file. kwok serves it through the API server's pods/log (tailLines, timestamps, sinceSeconds,
        sinceTime, limitBytes, previous, follow) and pods/attach. The first write for a pod creates its
        Logs/Attach objects and waits until kwok uses them; later writes are visible at once."""
        key = (namespace, pod, container)
        if key in self._closed_logs:
            raise AssertionError(f"the log of {namespace}/{pod}/{container} was closed (close_log)")
        self._ensure_log_objects(namespace, pod, container)
        with self.log_file(namespace, pod, container).open("a") as fh:
            fh.write("".join(cri_line(line, stream) for line in text.splitlines()))

    def close_log(self, namespace: str, pod: str, container: str) -> None:
        """The container's output has ended: no more ``write_log``, and the follow streams open on it end.

        kwok cannot end a follow stream cleanly (its runtime stub always says the container runs, so the
        CRI log reader waits for more forever). What this does instead: the log's content moves to a new
        file that the pod's Logs object now names (waited for, so later reads get all of it, and streams
        that follow from now on stay open as before), then the old file becomes a directory: every stream
        still following it fails reading and ends, with kwok's error text after the last complete line
        (no newline): ``failed to read log file "...": read ...: is a directory``; ``strip_close_marker``
        removes it. Streams opened before the pod's first ``write_log`` (they read the shared empty file)
        do not end."""
        key = (namespace, pod, container)
        self._ensure_log_objects(namespace, pod, container)
        old = self.log_file(namespace, pod, container)
        self._log_gen[key] = self._log_gen.get(key, 0) + 1
        new = self.log_file(namespace, pod, container)
        shutil.copyfile(old, new)
        self._sync_log_objects(namespace, pod, set())  # nobody reads the old file any more
        old.unlink()
        old.mkdir()  # the followers' fsnotify Create event: they reopen it, read, fail and return
        self._closed_logs.add(key)

    @staticmethod
    def strip_close_marker(text: str) -> str:
        """A follow stream's text without the error that ``close_log`` ends it with."""
        return CLOSE_MARKER.sub("", text)

    def _rotate_log(self, namespace: str, pod: str, container: str) -> None:
        """After a restart: the log so far becomes the previous container's, the new one starts empty (and
        may be written again after a ``close_log``)."""
        if container not in self._log_objects.get((namespace, pod), set()):
            return
        current = self.log_file(namespace, pod, container)
        previous = self.log_file(namespace, pod, container, previous=True)
        first = not previous.exists()
        os.replace(current, previous)
        current.touch()  # a new file: kwok's follow reader reopens it on the Create event (cri-client logs.go)
        self._closed_logs.discard((namespace, pod, container))
        if first:  # the Logs object names the previous file from now on
            self._sync_log_objects(namespace, pod, set())
