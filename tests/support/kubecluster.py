"""A real Kubernetes control plane for the tests: etcd + kube-apiserver + kube-controller-manager +
kube-scheduler.

Binaries: etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from their Go modules
(``go.etcd.io/etcd/server/v3``, ``k8s.io/kubernetes``; versions in ``scripts/build-cluster.sh``, which
caches them outside the clone). Everything listens on 127.0.0.1 on free ports, with certificates made at start, token
authentication (an admin, a namespace-limited user, and the scheduler's own ``system:kube-scheduler``
user, which the API server's bootstrap RBAC binds to the ``system:kube-scheduler`` and
``system:volume-scheduler`` roles) and RBAC.

- The scheduler is the real one: it binds pods (extended resources such as ``nvidia.com/gpu``, node
  selectors, taints and tolerations, PriorityClasses and preemption) and writes the real
  ``FailedScheduling`` messages.
- The controller-manager runs the namespace, garbage-collector, service-account, pod-GC, deployment,
  replicaset, job (Indexed Jobs included), statefulset, PersistentVolume binder and its hostPath provisioner
  (the default StorageClass ``standard``), PVC/PV protection, ResourceQuota, TTL-after-finished, HPA and
  EndpointSlice controllers.
- The API server runs the aggregation layer (a front-proxy CA and client cert, ``--requestheader-*``), so
  that an aggregated API server (Kueue's visibility API; metrics-server's metrics.k8s.io for the tests that
  start it, tests/support/metricsserver.py) can be reached through it.
- The API server enables the ``Priority`` admission plugin (a pod naming a missing PriorityClass is
  refused) and ``PodNodeSelector``: each test namespace carries ``scheduler.alpha.kubernetes.io/
  node-selector: arena-helm.test/pool=<namespace>``, so its pods go only to the nodes a test adds for that
  namespace (``Kwok.add_node(pool=...)``) and tests never place pods on each other's nodes.

No node runs here: kwok plays the nodes and their kubelets (tests/support/kwok.py), and the real Kubeflow,
JobSet and Kueue controllers run beside the control plane (tests/support/controllers.py); tests/conftest.py
starts all of it for a session.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import trustme
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "tests" / "data" / "crds"
TRAINING_OPERATOR_CRDS = ("kubeflow.org_tfjobs.yaml", "kubeflow.org_pytorchjobs.yaml")
# Kubeflow Trainer v2.3.0 and the JobSet v0.12.0 it runs on (see tests/data/crds/README.md)
TRAINER_CRDS = (
    "trainer-v2.3.0/trainer.kubeflow.org_trainjobs.yaml",
    "trainer-v2.3.0/trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "trainer-v2.3.0/trainer.kubeflow.org_trainingruntimes.yaml",
    "jobset-v0.12.0/jobset.x-k8s.io_jobsets.yaml",
)
# the serving CRDs (KServe v0.20.0's InferenceService, LeaderWorkerSet v0.10.0, the routing objects of a
# traffic split): what the kserve, distributed-serving and traffic-split charts make is stored with the real
# schemas, whether or not a controller or mesh acts on them
SERVING_CRDS = (
    "kserve-v0.20.0/serving.kserve.io_inferenceservices.yaml",
    "lws-v0.10.0/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    # serve traffic-split's routing objects (Gateway API v1.6.3's HTTPRoute, Istio 1.32's)
    "gateway-api-v1.6.3/gateway.networking.k8s.io_httproutes.yaml",
    "istio-api-v1.32.0/networking.istio.io_destinationrules.yaml",
    "istio-api-v1.32.0/networking.istio.io_virtualservices.yaml",
)
# Local quick runs may skip the cluster tests (ARENA_HELM_SKIP_CLUSTER=1); under CI they never skip.
SKIP_CLUSTER = os.environ.get("ARENA_HELM_SKIP_CLUSTER") == "1" and not os.environ.get("CI")
RBAC_DOC = REPO / "docs" / "rbac" / "arena-helm-user.yaml"


def documented_rbac(kind: str, doc: Path = RBAC_DOC) -> dict:
    """The object of ``kind`` in the documented RBAC file (the one of its kind there)."""
    (obj,) = [d for d in yaml.safe_load_all(doc.read_text()) if d and d.get("kind") == kind]
    return obj


LIMITED_USER = "alice"
LIMITED_NAMESPACE = "team-limited"
SCHEDULER_USER = "system:kube-scheduler"
POOL_LABEL = "arena-helm.test/pool"
NODE_SELECTOR_ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector"
CONTROLLERS = (  # kube-controller-manager's names (cmd/kube-controller-manager/names/controller_names.go)
    "namespace-controller", "garbage-collector-controller", "serviceaccount-controller",
    "serviceaccount-token-controller", "pod-garbage-collector-controller", "deployment-controller",
    "replicaset-controller", "job-controller", "statefulset-controller", "persistentvolume-binder-controller",
    "ttl-after-finished-controller", "endpointslice-controller", "endpointslice-mirroring-controller",
    "horizontal-pod-autoscaler-controller",  # a KServe predictor's HPA holds its minReplicas
    # a claim or volume in use is deleted only once nothing uses it (the StorageObjectInUseProtection admission
    # plugin's finalizers, which only these controllers remove: without them a deleted claim stays Terminating)
    "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
    # a ResourceQuota's use, counted by the controller: the API server's quota admission refuses by it
    "resourcequota-controller",
)
# The default StorageClass: the controller-manager's own hostPath provisioner (--enable-hostpath-provisioner,
# pkg/volume/hostpath/host_path.go: a claim of a class whose provisioner is kubernetes.io/host-path gets a PV
# on /tmp/hostpath_pv/<uuid> of this machine; Delete removes the folder; upstream's, "for testing and
# development", single-node), so that a claim with no volume made for it binds, as on a cluster with storage.
STORAGE_CLASS = "standard"
HOSTPATH_PROVISIONER = "kubernetes.io/host-path"


def pool_namespace(name: str) -> dict:
    """A Namespace body whose pods may only go to the nodes of pool ``name`` (see PodNodeSelector above)."""
    return {"metadata": {"name": name, "annotations": {NODE_SELECTOR_ANNOTATION: f"{POOL_LABEL}={name}"}}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CLUSTER_COMPONENTS = ("kube", "etcd")


def kube_bin_dir(components=CLUSTER_COMPONENTS) -> Path:
    """Build (or reuse) the cluster's binaries; returns their folder. Fails loudly if the build fails."""
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-cluster.sh"), *components], stdout=subprocess.PIPE, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError("scripts/build-cluster.sh failed: no API server for the tests")
    return Path(proc.stdout.strip().splitlines()[-1])


@dataclass
class User:
    name: str
    token: str
    kubeconfig: Path
    namespace: str


@dataclass
class TestCluster:
    """A running control plane; ``start()`` then ``stop()``."""

    workdir: Path
    bin_dir: Path
    etcd_port: int = 0
    port: int = 0
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    ca: trustme.CA = field(default_factory=trustme.CA)
    front_proxy_ca: trustme.CA = field(default_factory=trustme.CA)  # the aggregation layer's (requestheader)

    __test__ = False  # not a pytest test class

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        return self.workdir / "ca.pem"

    @property
    def admin(self) -> User:
        return self.users["admin"]

    @property
    def limited(self) -> User:
        return self.users[LIMITED_USER]

    # ---- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_certs()
        self._write_tokens()
        self._start_etcd()
        self._start_apiserver()
        self._wait_ready()
        self._start_controller_manager()
        self._start_scheduler()
        self._setup_rbac()
        self._default_storage_class()
        self.install_crds()

    def stop(self) -> None:
        for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            proc = self.procs.pop(name, None)
            if proc is None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        shutil.rmtree(self._etcd_data, ignore_errors=True)
        if not os.environ.get("ARENA_HELM_KEEP_CLUSTER"):  # keep the logs for a post-mortem on request
            shutil.rmtree(self.workdir, ignore_errors=True)

    def stop_apiserver(self) -> None:
        """Stop only the API server (fault tests); ``restart_apiserver`` brings it back on the same port."""
        proc = self.procs.pop("kube-apiserver")
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # it stops serving at once but may linger while requests drain
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def restart_apiserver(self) -> None:
        self._start_apiserver()
        self._wait_ready()

    # ---- pieces ----------------------------------------------------------------------------------
    def _write_certs(self) -> None:
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        serving = self.ca.issue_cert("127.0.0.1", "localhost", "kubernetes", "kubernetes.default.svc")
        serving.cert_chain_pems[0].write_to_path(str(self.workdir / "apiserver.pem"))
        serving.private_key_pem.write_to_path(str(self.workdir / "apiserver-key.pem"))
        # the aggregation layer (kubeadm's front-proxy): the API server proxies to an aggregated API server
        # (Kueue's visibility server) with this client cert, and that server trusts the X-Remote-* headers of a
        # client whose cert this CA signed (it reads the CA from kube-system/extension-apiserver-authentication)
        self.front_proxy_ca.cert_pem.write_to_path(str(self.workdir / "front-proxy-ca.pem"))
        proxy = self.front_proxy_ca.issue_cert("front-proxy-client", common_name="front-proxy-client")
        proxy.cert_chain_pems[0].write_to_path(str(self.workdir / "front-proxy-client.pem"))
        proxy.private_key_pem.write_to_path(str(self.workdir / "front-proxy-client-key.pem"))
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.workdir / "sa.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        (self.workdir / "sa.pub").write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def _write_tokens(self) -> None:
        admin_token = os.urandom(16).hex()
        limited_token = os.urandom(16).hex()
        scheduler_token = os.urandom(16).hex()
        (self.workdir / "tokens.csv").write_text(
            f'{admin_token},admin,uid-admin,"system:masters"\n'
            f'{limited_token},{LIMITED_USER},uid-{LIMITED_USER},"team"\n'
            f'{scheduler_token},{SCHEDULER_USER},uid-kube-scheduler\n'
        )
        self.port = self.port or free_port()
        for name, token, ns in (
            ("admin", admin_token, "default"),
            (LIMITED_USER, limited_token, LIMITED_NAMESPACE),
            (SCHEDULER_USER, scheduler_token, "default"),
        ):
            path = self.workdir / f"{name.replace(':', '-')}.kubeconfig"
            self.users[name] = User(name, token, path, ns)
            self._write_kubeconfig(self.users[name])

    def _write_kubeconfig(self, user: User) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "test", "cluster": {"server": self.server, "certificate-authority": str(self.ca_file)}}
            ],
            "users": [{"name": user.name, "user": {"token": user.token}}],
            "contexts": [
                {"name": user.name, "context": {"cluster": "test", "user": user.name, "namespace": user.namespace}}
            ],
            "current-context": user.name,
        }
        user.kubeconfig.write_text(yaml.safe_dump(config))
        user.kubeconfig.chmod(0o600)

    @property
    def _etcd_data(self) -> Path:
        shm = Path("/dev/shm")
        base = shm if shm.is_dir() and os.access(shm, os.W_OK) else self.workdir
        return base / f"arena-helm-etcd-{self.workdir.name}"

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )

    def _start_etcd(self) -> None:
        self.etcd_port = free_port()
        peer = free_port()
        etcd = str(self.bin_dir / "etcd")
        self._spawn(
            "etcd",
            [
                etcd,
                "--data-dir", str(self._etcd_data),
                "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"default=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync",
                "--log-level", "warn",
            ],
        )

    def _start_apiserver(self) -> None:
        w = self.workdir
        self._spawn(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={w / 'certs'}",
                f"--tls-cert-file={w / 'apiserver.pem'}",
                f"--tls-private-key-file={w / 'apiserver-key.pem'}",
                f"--token-auth-file={w / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--enable-admission-plugins=Priority,PodNodeSelector",
                "--endpoint-reconciler-type=none",
                f"--service-account-key-file={w / 'sa.pub'}",
                f"--service-account-signing-key-file={w / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.96.0.0/16",
                f"--kubelet-certificate-authority={self.ca_file}",
                "--kubelet-preferred-address-types=InternalIP",
                f"--requestheader-client-ca-file={w / 'front-proxy-ca.pem'}",
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={w / 'front-proxy-client.pem'}",
                f"--proxy-client-key-file={w / 'front-proxy-client-key.pem'}",
                "--profiling=false",
                "--v=1",
            ],
        )

    def _wait_ready(self, timeout: float = 90.0) -> None:
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            proc = self.procs.get("kube-apiserver")
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"kube-apiserver exited: {self.log_tail('kube-apiserver')}")
            req = urllib.request.Request(
                f"{self.server}/readyz", headers={"Authorization": f"Bearer {self.admin.token}"}
            )
            try:
                with urllib.request.urlopen(req, context=ctx, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.25)
        raise RuntimeError(f"kube-apiserver not ready after {timeout}s ({last}): {self.log_tail('kube-apiserver')}")

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.workdir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def _start_controller_manager(self) -> None:
        w = self.workdir
        self._spawn(
            "kube-controller-manager",
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.admin.kubeconfig}",
                f"--controllers={','.join(CONTROLLERS)}",
                f"--service-account-private-key-file={w / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                "--secure-port=0",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--enable-hostpath-provisioner=true",
                "--v=1",
            ],
        )

    def _start_scheduler(self) -> None:
        """The real kube-scheduler, as its own RBAC user; no serving ports (nothing scrapes it)."""
        self._spawn(
            "kube-scheduler",
            [
                str(self.bin_dir / "kube-scheduler"),
                f"--kubeconfig={self.users[SCHEDULER_USER].kubeconfig}",
                "--secure-port=0",
                "--leader-elect=false",
                "--profiling=false",
                "--v=1",
            ],
        )

    # ---- API access ------------------------------------------------------------------------------
    def api_client(self, user: str = "admin"):
        """A kubernetes.client.ApiClient for ``user`` (admin or the limited user)."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.server
        cfg.ssl_ca_cert = str(self.ca_file)
        cfg.api_key = {"authorization": f"Bearer {self.users[user].token}"}
        return client.ApiClient(cfg)

    def _setup_rbac(self) -> None:
        from kubernetes import client

        api = self.api_client()
        core = client.CoreV1Api(api)
        core.create_namespace(pool_namespace(LIMITED_NAMESPACE))
        rbac = client.RbacAuthorizationV1Api(api)
        # the limited user gets exactly the documented Role (docs/rbac/arena-helm-user.yaml), in its namespace
        role, binding = documented_rbac("Role"), documented_rbac("RoleBinding")
        role["metadata"]["namespace"] = binding["metadata"]["namespace"] = LIMITED_NAMESPACE
        binding["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": LIMITED_USER}]
        rbac.create_namespaced_role(LIMITED_NAMESPACE, role)
        rbac.create_namespaced_role_binding(LIMITED_NAMESPACE, binding)
        self._wait_service_account("default")
        self._wait_service_account(LIMITED_NAMESPACE)

    def _default_storage_class(self) -> None:
        from kubernetes import client

        client.StorageV1Api(self.api_client()).create_storage_class({
            "metadata": {"name": STORAGE_CLASS,
                         "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": HOSTPATH_PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})

    def _wait_service_account(self, namespace: str, timeout: float = 30.0) -> None:
        """Until the namespace's default ServiceAccount exists: before that, the ServiceAccount admission
        refuses pods (``error looking up service account``). Its token is projected, not a Secret."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        core = client.CoreV1Api(self.api_client())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                core.read_namespaced_service_account("default", namespace)
                return
            except ApiException as exc:
                if exc.status != 404:
                    raise
            time.sleep(0.1)
        raise RuntimeError(f"no default service account in {namespace} after {timeout}s")

    def create_namespace(self, name: str) -> None:
        from kubernetes import client

        client.CoreV1Api(self.api_client()).create_namespace(pool_namespace(name))
        self._wait_service_account(name)

    # ---- CRDs ------------------------------------------------------------------------------------
    def install_crds(self, mpi: str = "v2beta1") -> None:
        """Create the Kubeflow and serving CRDs; ``mpi`` picks which MPIJob CRD (they share one name)."""
        files = [CRD_DIR / "training-operator-v1.9.0" / f for f in TRAINING_OPERATOR_CRDS]
        files.append(self.mpi_crd_file(mpi))
        files.extend(CRD_DIR / f for f in (*TRAINER_CRDS, *SERVING_CRDS))
        for path in files:
            self.create_crd(path)

    @staticmethod
    def mpi_crd_file(version: str) -> Path:
        if version == "v1":
            return CRD_DIR / "training-operator-v1.9.0" / "kubeflow.org_mpijobs.yaml"
        return CRD_DIR / "mpi-operator-v0.8.0" / "kubeflow.org_mpijobs.yaml"

    def create_crd(self, path: Path, timeout: float = 30.0) -> None:
        from kubernetes import client

        ext = client.ApiextensionsV1Api(self.api_client())
        body = yaml.safe_load(path.read_text())
        name = body["metadata"]["name"]
        ext.api_client.call_api(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "POST",
            body=body,
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            crd = ext.read_custom_resource_definition(name)
            conds = {c.type: c.status for c in (crd.status.conditions or [])}
            if conds.get("Established") == "True":
                self._wait_served(body)
                return
            time.sleep(0.1)
        raise RuntimeError(f"CRD {name} not established after {timeout}s")

    def _wait_served(self, crd: dict, timeout: float = 15.0) -> None:
        """Discovery lags behind Established; wait until the version is listed (helm reads discovery)."""
        group = crd["spec"]["group"]
        plural = crd["spec"]["names"]["plural"]
        versions = [v["name"] for v in crd["spec"]["versions"] if v.get("served")]
        import json

        from kubernetes.client.rest import ApiException

        api = self.api_client()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ok = True
            for version in versions:
                try:
                    resp = api.call_api(
                        f"/apis/{group}/{version}", "GET", auth_settings=["BearerToken"], _preload_content=False,
                        _return_http_data_only=True,
                    )
                except ApiException as exc:
                    if exc.status != 404:  # the group version appears a moment after Established
                        raise
                    ok = False
                    continue
                names = {r["name"] for r in json.loads(resp.data)["resources"]}
                ok = ok and plural in names
            if ok:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{plural}.{group} not served after {timeout}s")

    def delete_crd(self, name: str, timeout: float = 30.0) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ext = client.ApiextensionsV1Api(self.api_client())
        try:
            ext.delete_custom_resource_definition(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ext.read_custom_resource_definition(name)
            except ApiException as exc:
                if exc.status == 404:
                    return
                raise
            time.sleep(0.1)
        raise RuntimeError(f"CRD {name} not deleted after {timeout}s")

    def swap_mpi_crd(self, version: str) -> None:
        self.delete_crd("mpijobs.kubeflow.org")
        self.create_crd(self.mpi_crd_file(version))


def start_cluster() -> TestCluster:
    bin_dir = kube_bin_dir()
    workdir = Path(tempfile.mkdtemp(prefix="arena-helm-cluster-"))
    cluster = TestCluster(workdir=workdir, bin_dir=bin_dir)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def make_claim(core, ns, name, *, modes, size, storage_class=None, bound=True, annotations=None):
    """A PVC (through the CoreV1Api ``core``); ``bound``: with a PV of its size that the controller-manager's
    real PV binder binds to it, waited for."""
    spec = {"accessModes": modes, "resources": {"requests": {"storage": size}}}
    if storage_class is not None:  # "": no class (a PV of no class binds it); None: leave it to admission
        spec["storageClassName"] = storage_class
    core.create_namespaced_persistent_volume_claim(ns, {"metadata": {"name": name, "annotations": annotations or {}},
                                                        "spec": spec})
    if bound:  # a PV made for it, bound to it by the real PV binder of the controller-manager
        core.create_persistent_volume({
            "metadata": {"name": f"pv-{ns}-{name}"},
            "spec": {"accessModes": modes, "capacity": {"storage": size}, "hostPath": {"path": f"/tmp/{name}"},
                     "storageClassName": storage_class or "", "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": ns, "name": name}}})
        deadline = time.monotonic() + 30
        while core.read_namespaced_persistent_volume_claim(name, ns).status.phase != "Bound":
            assert time.monotonic() < deadline, f"the PV binder did not bind {ns}/{name}"
            time.sleep(0.2)
