"""Stand-ins for the parts of a cluster the test API server lacks, acting only through the API.

- ``TrainingOperatorSim``: what the Kubeflow training operator (and mpi-operator) does for a job: creates
  its pods (labels ``training.kubeflow.org/*``, owner references) and sets the job's conditions.
- ``KubeletSim``: Node objects with GPU capacity (loopback addresses only), binds pods to nodes, sets pod
  status, reaps node-bound pods being deleted (grace period 0), and serves the kubelet's
  ``/containerLogs/NS/POD/CONTAINER`` endpoint over HTTPS on 127.0.0.1 so that the API server's real log
  path (API server -> kubelet) is used, follow and tail included.

Tests drive them step by step (no background reconciling of jobs), so every state is deterministic.
"""

from __future__ import annotations

import datetime as dt
import json
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

KINDS = {
    # kind: (plural, replica-spec key)
    "TFJob": ("tfjobs", "tfReplicaSpecs"),
    "PyTorchJob": ("pytorchjobs", "pytorchReplicaSpecs"),
    "MPIJob": ("mpijobs", "mpiReplicaSpecs"),
}
CHIEF_TYPES = {"chief", "master", "launcher"}


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TrainingOperatorSim:
    """Acts like the training operator for one job at a time, when a test asks it to."""

    def __init__(self, api_client):
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    def get_job(self, kind: str, namespace: str, name: str, version: str = "v1") -> dict:
        plural, _ = KINDS[kind]
        return self.custom.get_namespaced_custom_object("kubeflow.org", version, namespace, plural, name)

    def create_pods(self, kind: str, namespace: str, name: str, version: str = "v1") -> list[str]:
        """Create every pod of the job as the operator would; returns the pod names."""
        job = self.get_job(kind, namespace, name, version)
        _, key = KINDS[kind]
        owner = {
            "apiVersion": job["apiVersion"],
            "kind": kind,
            "name": name,
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        names = []
        for rtype, spec in (job["spec"].get(key) or {}).items():
            rlow = rtype.lower()
            template = spec["template"]
            for index in range(int(spec.get("replicas", 1))):
                pod_name = f"{name}-{rlow}-{index}"
                labels = dict(template.get("metadata", {}).get("labels") or {})
                labels.update(
                    {
                        "training.kubeflow.org/job-name": name,
                        "training.kubeflow.org/operator-name": f"{kind.lower()}-controller",
                        "training.kubeflow.org/replica-type": rlow,
                        "training.kubeflow.org/replica-index": str(index),
                    }
                )
                if rlow in CHIEF_TYPES:
                    labels["training.kubeflow.org/job-role"] = "master"
                body = {
                    "metadata": {
                        "name": pod_name,
                        "labels": labels,
                        "annotations": dict(template.get("metadata", {}).get("annotations") or {}),
                        "ownerReferences": [owner],
                    },
                    "spec": template["spec"],
                }
                self._create_pod(namespace, body)
                names.append(pod_name)
        return names

    def _create_pod(self, namespace: str, body: dict, timeout: float = 20.0) -> None:
        from kubernetes.client.rest import ApiException

        deadline = time.monotonic() + timeout
        while True:
            try:
                self.core.create_namespaced_pod(namespace, body)
                return
            except ApiException as exc:
                # The ServiceAccount admission needs the namespace's default account, which the
                # controller-manager creates a moment after the namespace.
                body = exc.body or ""
                waiting = (exc.status == 403 and "serviceaccount" in body) or "No API token found" in body
                if waiting and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise

    def set_condition(self, kind: str, namespace: str, name: str, ctype: str, *, version: str = "v1",
                      reason: str = "", message: str = "") -> None:
        """Append a condition (Created, Running, Succeeded, Failed, ...) as the operator would."""
        plural, _ = KINDS[kind]
        job = self.get_job(kind, namespace, name, version)
        status = job.get("status") or {}
        conditions = [dict(c) for c in status.get("conditions") or []]
        stamp = now_rfc3339()
        for c in conditions:
            if c["type"] in ("Running", "Created") and ctype in ("Succeeded", "Failed", "Running"):
                if c["type"] == "Running" and ctype != "Running":
                    c["status"] = "False"
        conditions.append(
            {
                "type": ctype,
                "status": "True",
                "reason": reason or f"{kind}{ctype}",
                "message": message or f"{kind} {name} is {ctype.lower()}.",
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
            }
        )
        patch: dict = {"conditions": conditions, "replicaStatuses": status.get("replicaStatuses") or {}}
        if ctype == "Running" and not status.get("startTime"):
            patch["startTime"] = stamp
        if ctype in ("Succeeded", "Failed"):
            patch["completionTime"] = stamp
        self.custom.patch_namespaced_custom_object_status(
            "kubeflow.org", version, namespace, plural, name, {"status": patch}
        )


class _LogStore:
    def __init__(self):
        self.lines: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        self.closed: set[tuple[str, str, str]] = set()
        self.cond = threading.Condition()

    def write(self, key, text: str) -> None:
        with self.cond:
            for line in text.splitlines():
                self.lines.setdefault(key, []).append((dt.datetime.now(dt.UTC).isoformat(), line))
            self.cond.notify_all()

    def close(self, key) -> None:
        with self.cond:
            self.closed.add(key)
            self.cond.notify_all()


class KubeletSim:
    """Nodes, binding, pod status, reaping, and the kubelet's container-log endpoint."""

    def __init__(self, api_client, ca):
        from kubernetes import client

        self.api_client = api_client
        self.core = client.CoreV1Api(api_client)
        self.logs = _LogStore()
        self.requests: list[str] = []
        self.execs: list = []  # kubelet_exec.ExecRecord of every exec served
        self.nodes: set[str] = set()
        self._stop = threading.Event()
        self._tmp = tempfile.TemporaryDirectory(prefix="kubelet-sim-")
        cert = ca.issue_cert("127.0.0.1", "localhost")
        pem = Path(self._tmp.name) / "kubelet.pem"
        cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(pem))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._threads = [
            threading.Thread(target=self.server.serve_forever, daemon=True),
            threading.Thread(target=self._reaper, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def close(self) -> None:
        self._stop.set()
        with self.logs.cond:
            self.logs.closed.update(self.logs.lines.keys())
            self.logs.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()
        self._tmp.cleanup()

    # ---- nodes -----------------------------------------------------------------------------------
    def add_node(self, name: str, *, gpus: int = 0, allocatable_gpus: int | None = None, cpu: str = "32",
                 memory: str = "128Gi", labels: dict | None = None, ready: bool = True,
                 extra_resources: dict | None = None) -> None:
        capacity = {"cpu": cpu, "memory": memory, "pods": "110"}
        allocatable = dict(capacity)
        if gpus:
            capacity["nvidia.com/gpu"] = str(gpus)
            allocatable["nvidia.com/gpu"] = str(gpus if allocatable_gpus is None else allocatable_gpus)
        for key, value in (extra_resources or {}).items():
            capacity[key] = allocatable[key] = str(value)
        self.core.create_node({"metadata": {"name": name, "labels": labels or {}}})
        status = {
            "capacity": capacity,
            "allocatable": allocatable,
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "kubelet simulator",
                    "lastHeartbeatTime": now_rfc3339(),
                    "lastTransitionTime": now_rfc3339(),
                }
            ],
            "nodeInfo": {
                "machineID": name, "systemUUID": name, "bootID": name, "kernelVersion": "sim",
                "osImage": "sim", "containerRuntimeVersion": "sim://1", "kubeletVersion": "v1.20.2",
                "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64",
            },
        }
        self.core.patch_node_status(name, {"status": status})
        self.nodes.add(name)

    # ---- pods ------------------------------------------------------------------------------------
    def bind(self, namespace: str, pod: str, node: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        self.core.create_namespaced_pod_binding(pod, namespace, body, _preload_content=False)

    def set_pod_state(self, namespace: str, pod: str, phase: str, *, reason: str = "", message: str = "",
                      exit_code: int | None = None, waiting_reason: str = "") -> None:
        """Patch the pod's status as a kubelet would: phase, conditions and container statuses."""
        obj = self.core.read_namespaced_pod(pod, namespace)
        stamp = now_rfc3339()
        containers = [c.name for c in obj.spec.containers]
        inits = [c.name for c in obj.spec.init_containers or []]
        ready = phase == "Running"

        def state(name: str, init: bool) -> dict:
            if waiting_reason:
                return {"waiting": {"reason": waiting_reason, "message": message}}
            if init and phase in ("Running", "Succeeded", "Failed"):
                return {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": stamp,
                                       "finishedAt": stamp}}
            if phase == "Running":
                return {"running": {"startedAt": stamp}}
            if phase in ("Succeeded", "Failed"):
                code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
                return {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                       "startedAt": stamp, "finishedAt": stamp}}
            return {"waiting": {"reason": "ContainerCreating"}}

        def statuses(names, init):
            return [
                {"name": n, "image": "sim", "imageID": "", "ready": ready and not init, "restartCount": 0,
                 "state": state(n, init)}
                for n in names
            ]

        status = {
            "phase": phase,
            "hostIP": "127.0.0.1",
            "podIP": "127.0.0.1",
            "startTime": stamp,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
                {"type": "Initialized", "status": "True" if phase != "Pending" or not inits else "False",
                 "lastTransitionTime": stamp},
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": stamp},
            ],
            "containerStatuses": statuses(containers, False),
        }
        if inits:
            status["initContainerStatuses"] = statuses(inits, True)
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        self.core.patch_namespaced_pod_status(pod, namespace, {"status": status})

    def mark_unschedulable(self, namespace: str, pod: str, message: str) -> None:
        """What the scheduler writes for a pod it cannot place."""
        stamp = now_rfc3339()
        self.core.patch_namespaced_pod_status(
            pod,
            namespace,
            {"status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                 "lastTransitionTime": stamp}
            ]}},
        )

    def run_pod(self, namespace: str, pod: str, node: str) -> None:
        self.bind(namespace, pod, node)
        self.set_pod_state(namespace, pod, "Running")

    # ---- logs ------------------------------------------------------------------------------------
    def write_log(self, namespace: str, pod: str, container: str, text: str) -> None:
        self.logs.write((namespace, pod, container), text)

    def close_log(self, namespace: str, pod: str, container: str) -> None:
        self.logs.close((namespace, pod, container))

    def _handler(self):
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if parts[0] == "exec":  # the API server proxies pods/exec here (tests/support/kubelet_exec.py)
                    from kubelet_exec import serve_exec

                    sim.requests.append(self.path)
                    serve_exec(self, sim.execs)
                    return
                if len(parts) != 4 or parts[0] != "containerLogs":
                    sim.requests.append(self.path)
                    self.send_error(404)
                    return
                key = tuple(parts[1:])
                q = {k: v[-1] for k, v in parse_qs(url.query).items()}
                with sim.logs.cond:
                    if key not in sim.logs.lines and key not in sim.logs.closed:
                        sim.logs.lines.setdefault(key, [])
                    lines = list(sim.logs.lines.get(key, []))
                    sent = len(lines)
                    sim.requests.append(self.path)  # recorded once the lines it answers with are fixed
                lines = self._filter(lines, q)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for stamp, line in lines:
                        self._chunk(self._fmt(stamp, line, q))
                    if q.get("follow") == "true":
                        while not sim._stop.is_set():
                            with sim.logs.cond:
                                while (len(sim.logs.lines.get(key, [])) == sent and key not in sim.logs.closed
                                       and not sim._stop.is_set()):
                                    sim.logs.cond.wait(0.5)
                                new = sim.logs.lines.get(key, [])[sent:]
                                sent += len(new)
                                done = key in sim.logs.closed
                            for stamp, line in new:
                                self._chunk(self._fmt(stamp, line, q))
                            if done:
                                break
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                    pass
                self.close_connection = True

            @staticmethod
            def _filter(lines, q):
                if "sinceTime" in q:
                    since = dt.datetime.fromisoformat(q["sinceTime"].replace("Z", "+00:00"))
                    lines = [entry for entry in lines if dt.datetime.fromisoformat(entry[0]) >= since]
                if "sinceSeconds" in q:
                    since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=int(q["sinceSeconds"]))
                    lines = [entry for entry in lines if dt.datetime.fromisoformat(entry[0]) >= since]
                if "tailLines" in q:
                    n = int(q["tailLines"])
                    lines = lines[-n:] if n > 0 else []
                return lines

            @staticmethod
            def _fmt(stamp, line, q) -> bytes:
                if q.get("timestamps") == "true":
                    iso = dt.datetime.fromisoformat(stamp).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
                    return f"{iso} {line}\n".encode()
                return f"{line}\n".encode()

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler

    # ---- reaping ---------------------------------------------------------------------------------
    def _reaper(self) -> None:
        """Delete with grace 0 the node-bound pods that are being deleted (what a kubelet confirms)."""
        from kubernetes.client.rest import ApiException

        while not self._stop.wait(0.3):
            try:
                pods = self.core.list_pod_for_all_namespaces(_request_timeout=5)
            except Exception:  # noqa: BLE001 - API server may be stopped by a fault test
                continue
            for pod in pods.items:
                if pod.metadata.deletion_timestamp and pod.spec.node_name in self.nodes:
                    try:
                        self.core.delete_namespaced_pod(
                            pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0,
                            _request_timeout=5,
                        )
                    except ApiException:
                        pass
                    except Exception:  # noqa: BLE001
                        pass


def request_json(api_client, path: str) -> dict:
    resp = api_client.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False,
                               _return_http_data_only=True)
    return json.loads(resp.data)
