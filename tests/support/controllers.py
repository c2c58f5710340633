"""The real Kubeflow controllers as local processes for a ``TestCluster`` (tests/support/kubecluster.py).

``Controllers(cluster).start(ALL)`` then ``.stop()`` (or ``with Controllers(cluster).start(...) as ctl:``;
``stop(names)`` stops only those, their webhook configurations first). The binaries are built from their Go
modules by ``scripts/build-cluster.sh`` (versions there): training-operator v1.9.3 (``training-operator.v1``),
mpi-operator v0.8.0, Kubeflow Trainer v2.3.0 (``trainer-controller-manager``), JobSet v0.12.0, Kueue v0.17.0,
for the servings LeaderWorkerSet v0.9.0 (``lws``) and KServe v0.20.0 (``kserve-manager``), and MetalLB v0.15.2's
controller (``metallb-controller``: LoadBalancer Service addresses).
Everything they need is read from each module's own source (``scripts/build-cluster.sh --source NAME``): the
CRDs (so they are the CRDs of the versions that run), the webhook configurations (``clientConfig.service``
turned into ``clientConfig.url`` on 127.0.0.1 with our CA bundle), the ClusterTrainingRuntimes, and the two
paths the controllers hard-code.

Each controller runs with the admin kubeconfig, on free loopback ports, leader election off (mpi-operator
cannot turn it off: it takes a Lease in its own namespace), metrics off (MetalLB's are its only endpoint), and
its log in the cluster's workdir (``<name>.log``). ``start`` waits for each one's readiness (``/readyz`` of
controller-runtime, for mpi-operator the "Started workers" line, for MetalLB its pool in ``/metrics``) and only
then applies its webhook configurations; it records the start time of each (``start_seconds``). A controller
that cannot run is recorded in ``errors`` (with the reason and its log tail) and the others still start;
``require(name)`` fails a test with that reason.

How each one runs:

- ``TrainingOperator``: ``--enable-scheme`` for every kubeflow.org kind arena-helm submits but MPIJob
  (``TRAINING_OPERATOR_KINDS``: TFJob, PyTorchJob, JAXJob, XGBoostJob, PaddleJob), and MPIJob only with
  ``mpi="v1"``. Its cert rotator
  (open-policy-agent cert-controller v0.12.0) cannot be turned off: it insists on a pre-made Secret
  ``kubeflow/training-operator-webhook-cert`` holding an RSA (PKCS#1) CA whose SAN is
  ``training-operator-ca`` and a server cert valid for ``training-operator.kubeflow.svc``, both valid > 90
  days, or it replaces them with certs the API server cannot use for 127.0.0.1; so it gets a CA of its own
  (not ``cluster.ca``, an ECDSA CA without that SAN). The rotator also waits for ``tls.crt`` in a hard-coded
  folder (``certDir`` of ``pkg/cert/cert.go``, read from the source) that it only stats: a copy goes there
  if none is, while the webhook server reads the real pair from ``$TMPDIR/k8s-webhook-server/serving-certs``
  (TMPDIR is private to the process).
- ``MPIOperator``: ``-kubeConfig`` (and ``KUBECONFIG``), ``--lock-namespace`` (its Lease); no webhooks. Its
  health port 8080 on all interfaces is hard-coded: ``start`` waits (bounded) for 8080 to be free, since a
  taken port kills it. It exits at once if the served MPIJob API is not v2beta1.
- ``JobSet``: ``--config`` with leader election and internal cert management off, webhook and health on
  loopback; its mutating webhook is what makes child Jobs Indexed.
- ``Trainer``: ``--config`` with ``certManagement.enable: false`` (webhook certs from
  ``$TMPDIR/k8s-webhook-server/serving-certs``: the config has no certDir); the release's
  ClusterTrainingRuntimes (``manifests/overlays/runtimes``: ``manifests/base/runtimes`` with the
  ``webhook-validation: disabled`` label and the release's image tags) are applied once it is ready.
- ``LWS``: ``--config`` as JobSet's; its pod webhooks (only pods labelled ``leaderworkerset.sigs.k8s.io/name``)
  set the leader address env and the group labels.
- ``KServe``: RawDeployment mode (no Knative, Istio or Gateway API) through its ConfigMap
  ``kserve/inferenceservice-config`` (the release's, its default deployment mode and Ingress creation
  changed), ``POD_NAMESPACE=kserve``; the release's ClusterServingRuntimes once ready; ``stop`` removes its
  finalizer from the InferenceServices that remain.
- ``Kueue``: ``--config`` with ``manageJobsWithoutQueueName: false``, the integrations of every kind arena-helm
  submits (tfjob, pytorchjob, mpijob, jaxjob, xgboostjob, paddlejob, trainjob), jobset and ``batch/job`` (a
  workspace is a Job: ``workspace start --queue-name`` is held by the quota; its Job webhooks see every Job of the
  cluster, as the release's, and leave those without a queue name alone), leader election and internal cert
  management off.
  With internal certs off it reads a metrics cert from a hard-coded folder (``metricsCertPath`` of
  ``cmd/kueue/main.go``, read from the source) even with metrics off, and its visibility server's pair from
  another (``certDir`` of ``pkg/visibility/server.go``): a pair is written to each unless a valid one is present
  (it needs writable folders: root). The visibility API (``VisibilityOnDemand``, queue positions) is served as
  the release serves it: its APIServices (``config/components/visibility``, ``insecureSkipTLSVerify`` as there)
  through the API server's aggregation layer (tests/support/kubecluster.py: the front-proxy flags), its Service
  an ExternalName ``localhost`` on the visibility server's port (an Endpoints address may not be loopback, and
  no kube-proxy runs); ``stop`` removes them first (an unavailable aggregated API fails discovery). Its 11 CRDs get the
  release's conversion webhook (``config/components/crd/patches``) pointed at Kueue; ``stop`` sets them back
  to ``conversion: None`` so that v1beta1 reads keep working without Kueue.
- ``MetalLB``: the controller bare-metal clusters run to give a LoadBalancer Service its address
  (``status.loadBalancer.ingress``, which helm's ``--wait`` and ``tensorboard list`` wait for or read), here
  from one IPAddressPool of loopback addresses in ``metallb-system`` (``METALLB_POOL``: ``METALLB_ADDRESSES``,
  the first free one first; ``wait_load_balancer_address``); ``--webhook-mode=disabled`` (no webhook server, no
  cert rotation), its metrics on a free port, without its speaker (the announcements: nothing routes the
  addresses here). So no test writes a Service's status by hand.

MPIJob v1 and v2beta1 share the CRD ``mpijobs.kubeflow.org``: ``mpi="v2beta1"`` (the default) installs
mpi-operator's CRD (v2beta1 only), ``mpi="v1"`` training-operator's (v1 only), deleting the other one (and
so every MPIJob) if it is installed. With ``mpi="v1"`` training-operator runs its MPIJob v1 controller and
mpi-operator cannot run (it exits with "CRD doesn't exist"); Kueue cannot manage MPIJob v1 at all. So the
suite runs MPIJob v1 in a module of its own: stop the v2beta1 controllers first (training-operator's schemes
are fixed at start, so it is restarted too), ``Controllers(cluster, mpi="v1").start(("training-operator",
...))``, and after ``stop`` put the session's default back with ``cluster.swap_mpi_crd("v2beta1")``.

``stop`` deletes the webhook configurations first (they fail closed), waits (bounded) for namespaces being
deleted while the controllers still run, stops the processes, then removes Kueue's
``kueue.x-k8s.io/resource-in-use`` finalizers from whatever Kueue objects remain (Workloads would otherwise
keep their namespace Terminating for good), reverts the Kueue conversion webhooks and deletes the
mpi-operator Lease (so a restart need not wait out the old lease). CRDs and ClusterTrainingRuntimes stay.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import copy
import datetime as dt
import functools
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from kubecluster import REPO, TestCluster, free_port, kube_bin_dir

from arena_helm.core.jobkinds import KINDS

ALL = ("training-operator", "mpi-operator", "jobset", "trainer", "kueue", "lws", "kserve", "metallb")  # the session's
START_ORDER = ("metallb", "jobset", "trainer", "training-operator", "mpi-operator", "lws", "kserve", "kueue")  # kueue's webhooks last
LOOPBACK = "127.0.0.1"
KUEUE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
KUEUE_API = ("kueue.x-k8s.io", "v1beta2")
# the kinds arena-helm submits to training-operator (their CRDs installed, their schemes enabled): every
# kubeflow.org kind of the registry but MPIJob (mpi-operator's v2beta1 by default; training-operator's v1 with
# mpi="v1")
TRAINING_OPERATOR_KINDS = [k.key for k in KINDS if k.group == "kubeflow.org" and k.key != "mpijob"]
# MetalLB's IPAddressPool (in its namespace, metallb-system): the addresses it gives LoadBalancer Services,
# first free one first; loopback ones, which nothing routes (no speaker runs)
METALLB_POOL = "arena-helm-test"
METALLB_ADDRESSES = ("127.0.0.200", "127.0.0.250")


class ControllerError(RuntimeError):
    pass


# ---- helpers ------------------------------------------------------------------------------------------
def source_dir(component: str) -> Path:
    """The module's folder in the Go module cache (``scripts/build-cluster.sh --source``)."""
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-cluster.sh"), "--source", component],
                          capture_output=True, text=True)
    out = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not out or not Path(out[-1]).is_dir():
        raise ControllerError(f"no module source for {component}: {proc.stderr.strip()[-500:]}")
    return Path(out[-1])


def go_string_const(path: Path, pattern: str) -> str:
    """A string literal of a Go source file (a path a controller hard-codes), found by ``pattern`` whose group 1
    is the literal's text."""
    m = re.search(pattern, path.read_text())
    if not m:
        raise ControllerError(f"{path.name}: {pattern!r} not found (a new release moved it?)")
    return m.group(1)


def load_yaml_docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def _pointer_set(doc, path: str, value, op: str) -> None:
    """JSON6902 ``add``/``replace`` (what the releases' kustomize patches use)."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    cur = doc
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
    last = parts[-1]
    if isinstance(cur, list):
        if last == "-":
            cur.append(value)
        elif op == "add":
            cur.insert(int(last), value)
        else:
            cur[int(last)] = value
    else:
        cur[last] = value


def _deep_merge(base: dict, patch: dict) -> None:
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _deep_merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)


def kustomization(kdir: Path) -> dict:
    """The kustomization.yaml of ``kdir``."""
    return yaml.safe_load((kdir / "kustomization.yaml").read_text()) or {}


def kustomized_files(kdir: Path) -> list[Path]:
    """The files a kustomization lists as its resources (a release's CRDs)."""
    return [kdir / r for r in kustomization(kdir)["resources"]]


def _kustomize_patches(kdir: Path, docs: list[dict]) -> None:
    """Apply a kustomization's ``patches`` (JSON6902 files, or strategic merges of webhook lists by name)."""
    kust = yaml.safe_load((kdir / "kustomization.yaml").read_text()) or {}
    for entry in kust.get("patches") or []:
        target = entry.get("target") or {}
        body = yaml.safe_load((kdir / entry["path"]).read_text()) if "path" in entry else yaml.safe_load(entry["patch"])
        for doc in docs:
            if isinstance(body, list):
                if target.get("kind") and doc["kind"] != target["kind"]:
                    continue
                if target.get("name") and doc["metadata"]["name"] != target["name"]:
                    continue
                for op in body:
                    _pointer_set(doc, op["path"], copy.deepcopy(op["value"]), op["op"])
            elif body.get("kind") == doc["kind"] and body["metadata"]["name"] == doc["metadata"]["name"]:
                for wpatch in body.get("webhooks") or []:
                    for w in doc.get("webhooks") or []:
                        if w["name"] == wpatch["name"]:
                            _deep_merge(w, wpatch)


def webhook_configs(kdir: Path, *, port: int, ca_bundle: str, names: dict[str, str] | None, keep) -> list[dict]:
    """The webhook configurations of a release's ``kdir`` kustomization, served at https://127.0.0.1:PORT.

    ``names``: kind -> the name the release gives it (kustomize ``namePrefix`` / patches), or None where the
    release keeps each configuration's own name (KServe: several of one kind); ``keep(webhook)``
    picks the webhooks to apply (those of the enabled kinds)."""
    kust = yaml.safe_load((kdir / "kustomization.yaml").read_text()) or {}
    docs = []
    for res in kust.get("resources") or []:
        for doc in load_yaml_docs(kdir / res):
            if doc.get("kind") in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
                docs.append(doc)
    _kustomize_patches(kdir, docs)
    out = []
    for doc in docs:
        hooks = []
        for w in doc.get("webhooks") or []:
            if not keep(w):
                continue
            service = (w.get("clientConfig") or {}).get("service") or {}
            w["clientConfig"] = {"url": f"https://{LOOPBACK}:{port}{service.get('path', '')}", "caBundle": ca_bundle}
            hooks.append(w)
        if hooks:
            name = names[doc["kind"]] if names is not None else doc["metadata"]["name"]
            out.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": doc["kind"],
                        "metadata": {"name": name}, "webhooks": hooks})
    return out


def webhook_resources(w: dict) -> set[str]:
    return {r for rule in w.get("rules") or [] for r in rule.get("resources") or []}


def kustomize_resources(kdir: Path) -> list[dict]:
    """The objects of a kustomization with ``resources`` (files and folders), ``labels`` and ``images``
    (``newTag``/``newName``): enough for manifests/overlays/runtimes of Trainer."""
    kust = yaml.safe_load((kdir / "kustomization.yaml").read_text()) or {}
    docs: list[dict] = []
    for res in kust.get("resources") or []:
        p = (kdir / res).resolve()
        docs.extend(kustomize_resources(p) if p.is_dir() else load_yaml_docs(p))
    for label in kust.get("labels") or []:
        for doc in docs:
            doc.setdefault("metadata", {}).setdefault("labels", {}).update(label.get("pairs") or {})
    images = {i["name"]: i for i in kust.get("images") or []}

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "image" and isinstance(v, str):
                    name = re.sub(r"(@.*|:[^/:]*)$", "", v)
                    if name in images:
                        i = images[name]
                        node[k] = f"{i.get('newName', name)}:{i['newTag']}" if "newTag" in i else i.get("newName", name)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(docs)
    return docs


# ---- certificates ---------------------------------------------------------------------------------------
def rsa_ca_and_server(ca_name: str, organization: str, dns_names: list[str]) -> dict[str, bytes]:
    """An RSA CA (PKCS#1 key, SAN ``ca_name``) and a server cert for 127.0.0.1 + ``dns_names``, 10 years: what
    cert-controller's rotator accepts as is (it checks the CA against its CAName, the server cert against
    its DNSName with ExtKeyUsage serverAuth, both 90 days ahead, and parses ca.key as PKCS#1)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)
    begin, end = now - dt.timedelta(hours=1), now + dt.timedelta(days=3650)

    def pem_key(k) -> bytes:
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                               serialization.NoEncryption())

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca_name),
                            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)])
    ca = (x509.CertificateBuilder().subject_name(ca_subject).issuer_name(ca_subject)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(begin).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectAlternativeName([x509.DNSName(ca_name)]), critical=False)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sans = [x509.IPAddress(ipaddress.ip_address(LOOPBACK)), x509.DNSName("localhost")]
    sans += [x509.DNSName(n) for n in dns_names]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
            .issuer_name(ca_subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(begin).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return {"ca.crt": ca.public_bytes(serialization.Encoding.PEM), "ca.key": pem_key(ca_key),
            "tls.crt": cert.public_bytes(serialization.Encoding.PEM), "tls.key": pem_key(key)}


def _valid_pair(folder: Path) -> bool:
    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(folder / "tls.crt"), str(folder / "tls.key"))
        return True
    except (OSError, ssl.SSLError):
        return False


@contextlib.contextmanager
def _folder_lock(folder: Path):
    """Creates ``folder`` and holds an exclusive lock beside it (test workers share the machine's folders)."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.arena-helm-lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _write_pair_once(folder: Path, certs: Path, needs: str) -> None:
    """``certs``' tls.key and tls.crt copied to ``folder`` unless it holds a valid pair already (another test
    worker's cluster may be writing it too: under a lock); ``needs`` says who reads it, for the error."""
    try:
        with _folder_lock(folder):
            if not _valid_pair(folder):
                _write_atomic(folder / "tls.key", (certs / "tls.key").read_bytes())
                _write_atomic(folder / "tls.crt", (certs / "tls.crt").read_bytes(), 0o644)
    except OSError as exc:
        raise ControllerError(f"{needs}; they cannot be written here: {exc}") from exc


def _write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.chmod(mode)
    os.replace(tmp, path)


# ---- one controller -------------------------------------------------------------------------------------
class Controller:
    """A controller process: ``prepare`` (CRDs, namespaces, certs, config; returns argv), ``ready``,
    ``webhooks`` (applied once ready), ``after_ready``."""

    name = ""
    component = ""  # scripts/build-cluster.sh component
    binary = ""
    ready_timeout = 180.0

    def __init__(self, ctl: Controllers):
        self.ctl = ctl
        self.cluster: TestCluster = ctl.cluster
        self.dir = ctl.workdir / self.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.src = source_dir(self.component)
        self.health_port = free_port()
        self.webhook_port = free_port()
        self.proc: subprocess.Popen | None = None
        self.webhook_names: set[str] = set()  # its webhook configurations once applied (stop deletes them)
        self.log = self.cluster.workdir / f"{self.name}.log"
        self.env = dict(os.environ, KUBECONFIG=str(self.cluster.admin.kubeconfig), TMPDIR=str(self.dir / "tmp"))
        (self.dir / "tmp").mkdir(exist_ok=True)

    # the common cert: issued by the cluster's CA (the API server trusts the bundle we give it)
    def write_serving_cert(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        leaf = self.ctl.serving
        (folder / "tls.crt").write_bytes(b"".join(p.bytes() for p in leaf.cert_chain_pems))
        (folder / "tls.key").write_bytes(leaf.private_key_pem.bytes())
        (folder / "tls.key").chmod(0o600)

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.cluster.ca.cert_pem.bytes()).decode()

    def crds(self) -> list[Path]:
        return []

    def prepare(self) -> list[str]:
        raise NotImplementedError

    def webhooks(self) -> list[dict]:
        return []

    def after_ready(self) -> None:
        pass

    def before_stop(self) -> None:
        pass

    def after_stop(self) -> None:
        pass

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{self.health_port}/readyz", timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def spawn(self, argv: list[str]) -> None:
        log = open(self.log, "ab")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self.env, start_new_session=True, cwd=self.dir)
        log.close()

    def log_tail(self, lines: int = 25) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def terminate(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


class TrainingOperator(Controller):
    """kubeflow/training-operator v1.9.3 ``cmd/training-operator.v1`` (controller-runtime v0.19.1)."""

    name = component = "training-operator"
    binary = "training-operator.v1"
    namespace = "kubeflow"  # MY_POD_NAMESPACE: only where its cert Secret lives
    secret = "training-operator-webhook-cert"
    vwc = "validator.training-operator.kubeflow.org"  # main.go webhookConfigurationName

    def kinds(self) -> list[str]:
        if self.ctl.training_operator_kinds is not None:
            kinds = [k.lower() for k in self.ctl.training_operator_kinds]
        else:
            kinds = list(TRAINING_OPERATOR_KINDS)
        if self.ctl.mpi == "v1" and "mpijob" not in kinds:
            kinds.append("mpijob")
        if self.ctl.mpi != "v1" and "mpijob" in kinds:
            raise ControllerError("training-operator's MPIJob (v1) controller needs mpi='v1' (the v1 CRD): with "
                                  "mpi-operator's v2beta1 CRD its kubeflow.org/v1 watch never syncs")
        return kinds

    def crds(self) -> list[Path]:
        base = self.src / "manifests" / "base" / "crds"
        return [base / f"kubeflow.org_{k}s.yaml" for k in self.kinds()]

    def prepare(self) -> list[str]:
        from kubernetes import client

        self.ctl.ensure_namespace(self.namespace)
        pki = rsa_ca_and_server("training-operator-ca", "training-operator",
                                [f"training-operator.{self.namespace}.svc"])
        self.pki = pki
        core = client.CoreV1Api(self.ctl.api)
        body = {"metadata": {"name": self.secret, "namespace": self.namespace}, "type": "Opaque",
                "data": {k: base64.b64encode(v).decode() for k, v in pki.items()}}
        self.ctl.create_or_replace(lambda: core.create_namespaced_secret(self.namespace, body),
                                   lambda rv: core.replace_namespaced_secret(
                                       self.secret, self.namespace, {**body, "metadata": {**body["metadata"],
                                                                                          "resourceVersion": rv}}),
                                   lambda: core.read_namespaced_secret(self.secret, self.namespace).metadata.resource_version)
        # the webhook server reads $TMPDIR/k8s-webhook-server/serving-certs (controller-runtime's default)
        certs = self.dir / "tmp" / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        for f in ("tls.crt", "tls.key"):
            _write_atomic(certs / f, pki[f])
        # the rotator only stats tls.crt in its hard-coded certDir (pkg/cert/cert.go) before it declares the
        # certs mounted (17 minutes, then the process exits): a copy there unless one is there already
        rotator_dir = Path(go_string_const(self.src / "pkg" / "cert" / "cert.go", r'certDir\s*=\s*"([^"]+)"'))
        try:
            with _folder_lock(rotator_dir):  # another test worker's cluster may be writing it too
                if not (rotator_dir / "tls.crt").exists():
                    _write_atomic(rotator_dir / "tls.crt", pki["tls.crt"], 0o644)
        except OSError as exc:
            raise ControllerError(f"training-operator's cert rotator waits for {rotator_dir}/tls.crt "
                                  f"(hard-coded) and it cannot be written: {exc}") from exc
        self.env["MY_POD_NAMESPACE"] = self.namespace
        self.env.pop("KUBEFLOW_NAMESPACE", None)  # the default of --namespace: watch every namespace
        argv = [str(self.ctl.bin_dir / self.binary), f"--kubeconfig={self.cluster.admin.kubeconfig}",
                "--leader-elect=false", "--metrics-bind-address=0",
                f"--health-probe-bind-address={LOOPBACK}:{self.health_port}",
                f"--webhook-server-port={self.webhook_port}", "--zap-log-level=info"]
        # one operator serves every test namespace of the suite: its defaults (main.go: --controller-threads 1,
        # --kube-api-qps 20, --kube-api-burst 30) left one worker per kind retrying the jobs of namespaces the
        # finished tests were deleting (over a thousand "being terminated" errors a run), while a live test's
        # job waited behind them; a production deployment sizes these to its load too
        argv += ["--controller-threads=4", "--kube-api-qps=100", "--kube-api-burst=200"]
        argv += [f"--enable-scheme={k}" for k in self.kinds()]
        return argv

    def webhooks(self) -> list[dict]:
        kinds = {f"{k}s" for k in self.kinds()}
        return webhook_configs(self.src / "manifests" / "base" / "webhook", port=self.webhook_port,
                               ca_bundle=base64.b64encode(self.pki["ca.crt"]).decode(),
                               names={"ValidatingWebhookConfiguration": self.vwc},
                               keep=lambda w: webhook_resources(w) <= kinds)

    def after_stop(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        try:
            client.CoreV1Api(self.ctl.api).delete_namespaced_secret(self.secret, self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise


class MPIOperator(Controller):
    """kubeflow/mpi-operator v0.8.0 ``cmd/mpi-operator`` (client-go informers, not controller-runtime)."""

    name = component = binary = "mpi-operator"
    lock_namespace = "mpi-operator"
    health_port_fixed = 8080  # cmd/mpi-operator/app/server.go healthCheckPort, on all interfaces

    def crds(self) -> list[Path]:
        if self.ctl.mpi == "v1":
            raise ControllerError("mpi-operator v0.8.0 lists kubeflow.org/v2beta1 MPIJobs at start and exits "
                                  "(\"CRD doesn't exist. Exiting\") when the MPIJob v1 CRD is installed (mpi='v1')")
        return [self.src / "manifests" / "base" / "kubeflow.org_mpijobs.yaml"]

    def prepare(self) -> list[str]:
        self.ctl.ensure_namespace(self.lock_namespace)
        deadline = time.monotonic() + 60
        while not port_free(self.health_port_fixed):
            if time.monotonic() > deadline:
                raise ControllerError(f"mpi-operator v0.8.0 serves its health check on :{self.health_port_fixed} "
                                      "(hard-coded, all interfaces) and exits when the port is taken: something "
                                      f"else holds port {self.health_port_fixed}")
            time.sleep(1)
        self.env.pop("KUBEFLOW_NAMESPACE", None)
        return [str(self.ctl.bin_dir / self.binary), f"-kubeConfig={self.cluster.admin.kubeconfig}",
                f"--lock-namespace={self.lock_namespace}", "--threadiness=4",
                # options.go: --kube-api-qps 5, --kube-api-burst 10 by default: throttled under the suite's load
                "--kube-api-qps=100", "--kube-api-burst=200"]

    def spawn(self, argv: list[str]) -> None:
        self.log_offset = self.log.stat().st_size if self.log.exists() else 0
        super().spawn(argv)

    def ready(self) -> bool:
        # its /healthz (8080) says ok before it leads; the workers start once it holds the Lease and synced
        with open(self.log, "rb") as f:
            f.seek(self.log_offset)
            return b"Started workers" in f.read()

    def after_stop(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        try:
            client.CoordinationV1Api(self.ctl.api).delete_namespaced_lease("mpi-operator", self.lock_namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise


def config_file_args(c: Controller, api_version: str) -> list[str]:
    """The command line of a controller that takes a ``--config`` Configuration ``api_version`` (JobSet's and
    LWS's shape): leader election and internal cert management off, its webhook on 127.0.0.1 with our serving
    cert, metrics off, health on its port."""
    certs = c.dir / "certs"
    c.write_serving_cert(certs)
    config = {
        "apiVersion": api_version, "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {"port": c.webhook_port, "host": LOOPBACK, "certDir": str(certs)},
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"{LOOPBACK}:{c.health_port}"},
    }
    (c.dir / "config.yaml").write_text(yaml.safe_dump(config))
    return [str(c.ctl.bin_dir / c.binary), f"--kubeconfig={c.cluster.admin.kubeconfig}",
            f"--config={c.dir / 'config.yaml'}", "--zap-log-level=info"]


class JobSet(Controller):
    """kubernetes-sigs/jobset v0.12.0 (its module root is the main package)."""

    name = component = binary = "jobset"

    def crds(self) -> list[Path]:
        return sorted((self.src / "config" / "components" / "crd" / "bases").glob("*.yaml"))

    def prepare(self) -> list[str]:
        return config_file_args(self, "config.jobset.x-k8s.io/v1alpha1")

    def webhooks(self) -> list[dict]:
        return webhook_configs(self.src / "config" / "components" / "webhook", port=self.webhook_port,
                               ca_bundle=self.ca_bundle,
                               names={"MutatingWebhookConfiguration": "jobset-mutating-webhook-configuration",
                                      "ValidatingWebhookConfiguration": "jobset-validating-webhook-configuration"},
                               keep=lambda w: True)


class Trainer(Controller):
    """kubeflow/trainer v2.3.0 ``cmd/trainer-controller-manager`` (needs the JobSet CRD before it starts)."""

    name = component = "trainer"
    binary = "trainer-controller-manager"

    def crds(self) -> list[Path]:
        jobset_crds = sorted((source_dir("jobset") / "config" / "components" / "crd" / "bases").glob("*.yaml"))
        return kustomized_files(self.src / "manifests" / "base" / "crds") + jobset_crds

    def prepare(self) -> list[str]:
        self.write_serving_cert(self.dir / "tmp" / "k8s-webhook-server" / "serving-certs")
        config = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1", "kind": "Configuration",
            "webhook": {"port": self.webhook_port, "host": LOOPBACK},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"{LOOPBACK}:{self.health_port}"},
            "certManagement": {"enable": False},
        }  # no leaderElection: off (pkg/config/config.go sets it only when present)
        (self.dir / "config.yaml").write_text(yaml.safe_dump(config))
        return [str(self.ctl.bin_dir / self.binary), f"--kubeconfig={self.cluster.admin.kubeconfig}",
                f"--config={self.dir / 'config.yaml'}", "--zap-log-level=info"]

    def webhooks(self) -> list[dict]:
        return webhook_configs(self.src / "manifests" / "base" / "webhook", port=self.webhook_port,
                               ca_bundle=self.ca_bundle,
                               names={"MutatingWebhookConfiguration": "defaulter.trainer.kubeflow.org",
                                      "ValidatingWebhookConfiguration": "validator.trainer.kubeflow.org"},
                               keep=lambda w: True)

    def runtimes(self) -> list[dict]:
        return [d for d in kustomize_resources(self.src / "manifests" / "overlays" / "runtimes")
                if d.get("kind") == "ClusterTrainingRuntime"]

    def after_ready(self) -> None:
        from kubernetes import client

        custom = client.CustomObjectsApi(self.ctl.api)
        api = ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes")
        self.runtime_names = []
        for body in self.runtimes():
            name = body["metadata"]["name"]
            self.ctl.create_or_replace(
                lambda b=body: custom.create_cluster_custom_object(*api, b),
                lambda rv, b=body: custom.replace_cluster_custom_object(
                    *api, b["metadata"]["name"], {**b, "metadata": {**b["metadata"], "resourceVersion": rv}}),
                lambda n=name: custom.get_cluster_custom_object(*api, n)["metadata"]["resourceVersion"])
            self.runtime_names.append(name)


class Kueue(Controller):
    """kubernetes-sigs/kueue v0.17.0 ``cmd/kueue`` (controller-runtime v0.23.3)."""

    name = component = binary = "kueue"
    namespace = "kueue-system"
    base_frameworks = ("kubeflow.org/tfjob", "kubeflow.org/pytorchjob", "kubeflow.org/mpijob",
                       "trainer.kubeflow.org/trainjob", "jobset.x-k8s.io/jobset", "batch/job")
    core_resources = {"clusterqueues", "cohorts", "resourceflavors", "workloads", "workloads/status"}

    def frameworks(self) -> list[str]:
        served = [x.lower() for x in self.ctl.training_operator_kinds or TRAINING_OPERATOR_KINDS]
        extra = [f"kubeflow.org/{k}" for k in TRAINING_OPERATOR_KINDS if f"kubeflow.org/{k}" not in self.base_frameworks
                 and (k in served or self.ctl.crd_exists(f"{k}s.kubeflow.org"))]
        return list(self.base_frameworks) + extra

    def crd_dir(self) -> Path:
        return self.src / "config" / "components" / "crd"

    def crds(self) -> list[Path]:
        return kustomized_files(self.crd_dir())

    def crd_patch(self, body: dict) -> dict:
        """The release's conversion webhook (config/components/crd/patches/webhook_in_*.yaml) at our URL."""
        kust = yaml.safe_load((self.crd_dir() / "kustomization.yaml").read_text())
        for entry in kust.get("patches") or []:
            patch = yaml.safe_load((self.crd_dir() / entry["path"]).read_text())
            if patch["metadata"]["name"] != body["metadata"]["name"]:
                continue
            conv = copy.deepcopy(patch["spec"]["conversion"])
            service = conv["webhook"]["clientConfig"].pop("service")
            conv["webhook"]["clientConfig"] = {"url": f"https://{LOOPBACK}:{self.webhook_port}{service['path']}",
                                               "caBundle": self.ca_bundle}
            body["spec"]["conversion"] = conv
        return body

    def converted_crds(self) -> list[str]:
        kust = yaml.safe_load((self.crd_dir() / "kustomization.yaml").read_text())
        return [yaml.safe_load((self.crd_dir() / e["path"]).read_text())["metadata"]["name"]
                for e in kust.get("patches") or []]

    def prepare(self) -> list[str]:
        self.ctl.ensure_namespace(self.namespace)
        certs = self.dir / "certs"
        self.write_serving_cert(certs)
        # cmd/kueue/main.go: with internalCertManagement off, a cert watcher on a hard-coded folder, fatal if empty
        metrics_dir = Path(go_string_const(self.src / "cmd" / "kueue" / "main.go",
                                           r'metricsCertPath\s*:=\s*"([^"]+)"'))
        _write_pair_once(metrics_dir, certs, f"Kueue v0.17.0 with internalCertManagement off loads "
                         f"{metrics_dir}/tls.crt and tls.key (hard-coded in cmd/kueue/main.go) and exits without them")
        # pkg/visibility/server.go: the visibility server's pair, hard-coded too (certDir "/visibility"); the
        # release's APIService skips TLS verification (insecureSkipTLSVerify), so any valid pair serves
        visibility_dir = Path(go_string_const(self.src / "pkg" / "visibility" / "server.go",
                                              r'certDir\s*=\s*"([^"]+)"'))
        _write_pair_once(visibility_dir, certs, f"Kueue v0.17.0's visibility server loads {visibility_dir}/tls.crt "
                         "and tls.key (hard-coded in pkg/visibility/server.go)")
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
            "namespace": self.namespace,
            "manageJobsWithoutQueueName": False,
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"port": self.webhook_port, "host": LOOPBACK, "certDir": str(certs)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"{LOOPBACK}:{self.health_port}"},
            # the visibility API (pendingworkloads: queue positions), served as the release serves it: an
            # aggregated API server inside the controller, reached through the API server's aggregation layer
            "featureGates": {"VisibilityOnDemand": True},
            "visibilityServer": {"bindAddress": LOOPBACK, "bindPort": self.visibility_port},
            "integrations": {"frameworks": self.frameworks()},
        }
        (self.dir / "config.yaml").write_text(yaml.safe_dump(config))
        return [str(self.ctl.bin_dir / self.binary), f"--kubeconfig={self.cluster.admin.kubeconfig}",
                f"--config={self.dir / 'config.yaml'}", "--zap-log-level=info"]

    def webhooks(self) -> list[dict]:
        kinds = {f.split("/")[1] + "s" for f in self.frameworks()} | self.core_resources
        return webhook_configs(self.src / "config" / "components" / "webhook", port=self.webhook_port,
                               ca_bundle=self.ca_bundle,
                               names={"MutatingWebhookConfiguration": "kueue-mutating-webhook-configuration",
                                      "ValidatingWebhookConfiguration": "kueue-validating-webhook-configuration"},
                               keep=lambda w: webhook_resources(w) <= kinds)

    @functools.cached_property
    def visibility_port(self) -> int:
        return free_port()

    def visibility_objects(self) -> list[dict]:
        """The release's config/components/visibility Service and APIServices. The Service becomes an
        ExternalName ``localhost``: the aggregation layer resolves it to that host and the APIService's port
        (k8s.io/apiserver pkg/util/proxy ResolveCluster), where the controller's visibility server listens;
        an Endpoints address may not be a loopback one, and no kube-proxy runs here."""
        vdir = self.src / "config" / "components" / "visibility"
        kust = yaml.safe_load((vdir / "kustomization.yaml").read_text())
        out = []
        for res in kust["resources"]:
            doc = load_yaml_docs(vdir / res)[0]
            if doc["kind"] == "Service":
                doc["metadata"]["namespace"] = self.namespace
                doc["spec"] = {"type": "ExternalName", "externalName": "localhost",
                               "ports": [{"name": "https", "port": self.visibility_port, "protocol": "TCP"}]}
            elif doc["kind"] == "APIService":
                doc["spec"]["service"] = {**doc["spec"]["service"], "namespace": self.namespace,
                                          "port": self.visibility_port}
            else:  # role_binding.yaml: Kueue's service account reads extension-apiserver-authentication; ours is admin
                continue
            out.append(doc)
        return out

    def serve_visibility(self, timeout: float = 60.0) -> None:
        """Apply the visibility Service and APIServices and wait until the API server calls them Available."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        core = client.CoreV1Api(self.ctl.api)
        for doc in self.visibility_objects():
            if doc["kind"] == "Service":
                try:
                    core.delete_namespaced_service(doc["metadata"]["name"], self.namespace)
                except ApiException as exc:
                    if exc.status != 404:
                        raise
                core.create_namespaced_service(self.namespace, doc)
            else:
                path = f"/apis/apiregistration.k8s.io/v1/apiservices/{doc['metadata']['name']}"
                self.ctl.delete_path(path)
                self.ctl.create_path("/apis/apiregistration.k8s.io/v1/apiservices", doc)
        names = [d["metadata"]["name"] for d in self.visibility_objects() if d["kind"] == "APIService"]
        states = self.ctl.wait_apiservices(names, timeout)
        if states:
            raise ControllerError(f"Kueue's visibility APIServices not Available {timeout:.0f} s after they "
                                  f"were applied: {states}\n{self.log_tail()}")

    def before_stop(self) -> None:
        """The APIServices go before their server: an unavailable aggregated API fails every client's discovery."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        for doc in self.visibility_objects():
            if doc["kind"] == "APIService":
                self.ctl.delete_path(f"/apis/apiregistration.k8s.io/v1/apiservices/{doc['metadata']['name']}")
            else:
                try:
                    client.CoreV1Api(self.ctl.api).delete_namespaced_service(doc["metadata"]["name"],
                                                                            self.namespace)
                except ApiException as exc:
                    if exc.status != 404:
                        raise

    def after_ready(self) -> None:
        self.serve_visibility()
        self.wait_webhooks()

    def wait_webhooks(self) -> None:
        """Wait until the API server calls Kueue's webhooks (wait_webhook_called: a TFJob with a wrongly typed
        field, which Kueue's mutating webhook mtfjob.kb.io refuses)."""
        if "kubeflow.org/tfjob" not in self.frameworks() or not self.ctl.crd_exists("tfjobs.kubeflow.org"):
            return
        probe = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "kueue-webhook-probe"},
                 "spec": {"runPolicy": {"backoffLimit": "x"}, "tfReplicaSpecs": {"Worker": {"template": {
                     "spec": {"containers": [{"name": "tensorflow", "image": "busybox"}]}}}}}}
        wait_webhook_called(self.ctl, ("kubeflow.org", "v1", "tfjobs"), probe, "mtfjob.kb.io", "Kueue")

    def after_stop(self) -> None:
        """Nothing removes Kueue's finalizers any more: strip them, and serve v1beta1 without conversion."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        custom = client.CustomObjectsApi(self.ctl.api)
        for plural, namespaced in (("workloads", True), ("clusterqueues", False), ("resourceflavors", False),
                                   ("topologies", False), ("admissionchecks", False), ("cohorts", False),
                                   ("localqueues", True)):
            try:
                items = custom.list_cluster_custom_object(*KUEUE_API, plural)["items"]
            except ApiException:
                continue
            for obj in items:
                fins = obj["metadata"].get("finalizers") or []
                if not any(f.startswith("kueue.x-k8s.io/") for f in fins):
                    continue
                keep = [f for f in fins if not f.startswith("kueue.x-k8s.io/")]
                patch = [{"op": "replace", "path": "/metadata/finalizers", "value": keep}]
                ns, name = obj["metadata"].get("namespace"), obj["metadata"]["name"]
                try:
                    self.ctl.json_patch(f"/apis/{'/'.join(KUEUE_API)}/"
                                        + (f"namespaces/{ns}/" if namespaced else "") + f"{plural}/{name}", patch)
                except ApiException as exc:
                    if exc.status not in (404, 409, 422):
                        raise
        for crd in self.converted_crds():
            try:
                self.ctl.json_patch(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}",
                                    [{"op": "replace", "path": "/spec/conversion", "value": {"strategy": "None"}}])
            except ApiException as exc:
                if exc.status != 404:
                    raise


def wait_webhook_called(ctl: Controllers, api: tuple[str, str, str], body: dict, webhook: str, who: str,
                        timeout: float = 30.0) -> None:
    """Wait until the API server calls the mutating webhook ``webhook`` for the custom resource ``api`` (group,
    version, plural): it learns a new webhook configuration from an informer, a moment after it is written (an
    object created in that moment is admitted without it). The probe: a server-side dry-run create of ``body``
    with a wrongly typed field, which a controller-runtime webhook refuses (400 naming the webhook: it decodes
    the object first) and the schema alone answers with 422."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    custom = client.CustomObjectsApi(ctl.api)
    deadline = time.monotonic() + timeout
    while True:
        try:
            custom.create_namespaced_custom_object(api[0], api[1], "default", api[2], body, dry_run="All")
            answer = "admitted"
        except ApiException as exc:
            if exc.status == 400 and webhook in (exc.body or ""):
                return
            answer = f"{exc.status}"
        if time.monotonic() > deadline:
            raise ControllerError(f"the API server does not call {who}'s webhook {webhook} {timeout:.0f} s after its "
                                  f"configuration was applied (the probe was answered {answer})")
        time.sleep(0.2)


class LWS(Controller):
    """kubernetes-sigs/lws (LeaderWorkerSet) v0.9.0 ``cmd`` (controller-runtime v0.24.1): v0.9.0, not v0.10.0,
    which the Go module proxy refuses (403).

    ``--config`` as JobSet's (``config/manager/controller_manager_config.yaml`` with leader election and
    internal cert management off: ``pkg/config/config.go`` AddWebhookSettingsTo takes the webhook's host, port
    and certDir from it), metrics off. Its CRDs: ``config/crd/kustomization.yaml``'s resources, LeaderWorkerSet
    and DisaggregatedSet (cmd/main.go sets up a controller for each; the kustomization's conversion patch is
    not applied: each CRD has one version). Its webhooks (``config/webhook``, the pod ones patched there with
    an objectSelector on ``leaderworkerset.sigs.k8s.io/name``, named ``lws-*`` by ``config/default``'s
    namePrefix): the LeaderWorkerSet defaulter and validator, the pod mutator (it sets the
    ``LWS_LEADER_ADDRESS`` env and the group labels of the pods) and validator, the DisaggregatedSet
    validator."""

    name = component = binary = "lws"
    lws_api = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")

    def crds(self) -> list[Path]:
        return kustomized_files(self.src / "config" / "crd")

    def prepare(self) -> list[str]:
        return config_file_args(self, "config.lws.x-k8s.io/v1alpha1")

    def webhooks(self) -> list[dict]:
        return webhook_configs(self.src / "config" / "webhook", port=self.webhook_port, ca_bundle=self.ca_bundle,
                               names={"MutatingWebhookConfiguration": "lws-mutating-webhook-configuration",
                                      "ValidatingWebhookConfiguration": "lws-validating-webhook-configuration"},
                               keep=lambda w: True)

    def after_ready(self) -> None:
        probe = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                 "metadata": {"name": "lws-webhook-probe"}, "spec": {"replicas": "x"}}
        wait_webhook_called(self.ctl, self.lws_api, probe, "mleaderworkerset.kb.io", "LWS")


class KServe(Controller):
    """kserve/kserve v0.20.0 ``cmd/manager`` (built with its go.mod's replaces: controller-runtime v0.22.5,
    k8s.io/* v0.34) in RawDeployment mode, without Knative, Istio or the Gateway API: an InferenceService
    becomes a Deployment, a Service and an HPA named ``<isvc>-predictor``.

    - Its configuration: the ConfigMap ``inferenceservice-config`` in ``kserve``, the namespace it runs for
      (``POD_NAMESPACE``, default ``kserve``: ``KServeNamespace`` of pkg/constants/constants.go, read by
      ``GetInferenceServiceConfigMap`` of pkg/apis/serving/v1beta1/configmap.go at start and by its webhooks),
      the release's ``config/configmap/inferenceservice.yaml`` with ``deploy.defaultDeploymentMode``
      ``RawDeployment`` (v0.20.0 calls it ``Standard`` and takes the old name: ``NewDeployConfig``) and
      ``ingress.disableIngressCreation`` (no networking.k8s.io Ingress, which nothing would serve here). With
      ``enableGatewayApi`` false (the release's value) it needs no Gateway API CRD; without the Knative,
      KEDA, OpenTelemetry and Istio CRDs it watches none of them (``SetupWithManager`` of
      pkg/controller/v1beta1/inferenceservice/controller.go checks each).
    - Its CRDs: ``config/crd/full/kustomization.yaml``'s resources (InferenceService, TrainedModel,
      ClusterServingRuntime, ServingRuntime, InferenceGraph and the ClusterStorageContainer folder); the
      LLMInferenceService and LocalModel CRDs belong to other binaries (cmd/llmisvc, cmd/localmodel).
    - Its flags (cmd/manager/main.go): ``--webhook-port`` (the webhook server has no host option: all
      interfaces), ``--health-probe-addr``, ``--metrics-addr=0``, leader election off (its default); the
      webhook certs from ``$TMPDIR/k8s-webhook-server/serving-certs`` (controller-runtime's default certDir).
    - Its webhooks, every one of ``config/webhook/manifests.yaml`` under its own name: the InferenceService
      defaulter (deployment-mode and runtime defaults, default resources) and validator, the pod mutator
      (objectSelector ``serving.kserve.io/inferenceservice``: the storage-initializer init container for a
      ``storageUri``, the agent/logger/batcher sidecars when asked for), the TrainedModel, InferenceGraph,
      ClusterServingRuntime and ServingRuntime validators.
    - Once ready: the release's ClusterServingRuntimes (``config/runtimes``, images as its kustomization
      names them) and the ClusterStorageContainer ``default`` (``config/storagecontainers``), as
      ``config/clusterresources`` and ``config/base`` install them.
    - ``after_stop``: its finalizer ``inferenceservice.finalizers`` (``Reconcile`` of controller.go) is removed
      from the InferenceServices that remain, so that they and their namespaces can still be deleted. The
      CRDs, the ConfigMap and the runtimes stay."""

    name = component = "kserve"
    binary = "kserve-manager"
    namespace = "kserve"
    configmap = "inferenceservice-config"  # pkg/constants/constants.go InferenceServiceConfigMapName
    isvc_api = ("serving.kserve.io", "v1beta1", "inferenceservices")
    runtime_api = ("serving.kserve.io", "v1alpha1", "clusterservingruntimes")
    storage_container_api = ("serving.kserve.io", "v1alpha1", "clusterstoragecontainers")

    def crds(self) -> list[Path]:
        out = []

        def walk(kdir: Path) -> None:
            kust = yaml.safe_load((kdir / "kustomization.yaml").read_text())
            for r in kust["resources"]:
                p = kdir / r
                if p.is_dir():
                    walk(p)
                else:
                    out.append(p)

        walk(self.src / "config" / "crd" / "full")
        return out

    def config_map(self) -> dict:
        """The release's inferenceservice-config, in RawDeployment mode without Ingress objects."""
        doc = load_yaml_docs(self.src / "config" / "configmap" / "inferenceservice.yaml")[0]
        data = doc["data"]
        deploy = json.loads(data["deploy"])
        deploy["defaultDeploymentMode"] = "RawDeployment"
        data["deploy"] = json.dumps(deploy, indent=2)
        ingress = json.loads(data["ingress"])
        ingress["disableIngressCreation"] = True
        data["ingress"] = json.dumps(ingress, indent=2)
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": self.configmap, "namespace": self.namespace}, "data": data}

    def prepare(self) -> list[str]:
        from kubernetes import client

        self.ctl.ensure_namespace(self.namespace)
        core = client.CoreV1Api(self.ctl.api)
        body = self.config_map()
        self.ctl.create_or_replace(lambda: core.create_namespaced_config_map(self.namespace, body),
                                   lambda rv: core.replace_namespaced_config_map(
                                       self.configmap, self.namespace,
                                       {**body, "metadata": {**body["metadata"], "resourceVersion": rv}}),
                                   lambda: core.read_namespaced_config_map(
                                       self.configmap, self.namespace).metadata.resource_version)
        self.write_serving_cert(self.dir / "tmp" / "k8s-webhook-server" / "serving-certs")
        self.env["POD_NAMESPACE"] = self.namespace
        return [str(self.ctl.bin_dir / self.binary), f"--kubeconfig={self.cluster.admin.kubeconfig}",
                f"--webhook-port={self.webhook_port}", f"--health-probe-addr={LOOPBACK}:{self.health_port}",
                "--metrics-addr=0", "--leader-elect=false", "--zap-log-level=info"]

    def webhooks(self) -> list[dict]:
        return webhook_configs(self.src / "config" / "webhook", port=self.webhook_port, ca_bundle=self.ca_bundle,
                               names=None, keep=lambda w: True)

    def cluster_resources(self) -> list[tuple[tuple[str, str, str], dict]]:
        out = [(self.runtime_api, d) for d in kustomize_resources(self.src / "config" / "runtimes")
               if d.get("kind") == "ClusterServingRuntime"]
        out += [(self.storage_container_api, d) for d in kustomize_resources(self.src / "config" / "storagecontainers")
                if d.get("kind") == "ClusterStorageContainer"]
        return out

    def after_ready(self) -> None:
        from kubernetes import client

        probe = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                 "metadata": {"name": "kserve-webhook-probe"}, "spec": {"predictor": {"minReplicas": "x"}}}
        wait_webhook_called(self.ctl, self.isvc_api, probe, "inferenceservice.kserve-webhook-server.defaulter",
                            "KServe")
        custom = client.CustomObjectsApi(self.ctl.api)
        self.runtime_names = []
        for api, body in self.cluster_resources():
            name = body["metadata"]["name"]
            self.ctl.create_or_replace(
                lambda a=api, b=body: custom.create_cluster_custom_object(*a, b),
                lambda rv, a=api, b=body: custom.replace_cluster_custom_object(
                    *a, b["metadata"]["name"], {**b, "metadata": {**b["metadata"], "resourceVersion": rv}}),
                lambda a=api, n=name: custom.get_cluster_custom_object(*a, n)["metadata"]["resourceVersion"])
            if api == self.runtime_api:
                self.runtime_names.append(name)

    def after_stop(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        finalizer = go_string_const(self.src / "pkg" / "controller" / "v1beta1" / "inferenceservice" / "controller.go",
                                    r'finalizerName\s*:=\s*"([^"]+)"')
        custom = client.CustomObjectsApi(self.ctl.api)
        try:
            items = custom.list_cluster_custom_object(*self.isvc_api)["items"]
        except ApiException:
            return
        for obj in items:
            fins = obj["metadata"].get("finalizers") or []
            if finalizer not in fins:
                continue
            patch = [{"op": "replace", "path": "/metadata/finalizers", "value": [f for f in fins if f != finalizer]}]
            ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
            try:
                self.ctl.json_patch(f"/apis/{'/'.join(self.isvc_api[:2])}/namespaces/{ns}/{self.isvc_api[2]}/{name}",
                                    patch)
            except ApiException as exc:
                if exc.status not in (404, 409, 422):
                    raise


class MetalLB(Controller):
    """MetalLB v0.15.2's controller (``go.universe.tf/metallb/controller``, controller-runtime v0.20.4): what
    bare-metal clusters run to give a LoadBalancer Service its address. It assigns ``status.loadBalancer.ingress``
    from the IPAddressPools of its namespace (``--namespace``); its speaker, which announces the addresses (ARP,
    BGP), does not run: nothing has to route them here.

    - Its CRDs: ``config/crd/kustomization.yaml``'s resources (IPAddressPool, L2Advertisement, BGPPeer, ...);
      the kustomization's conversion webhook for BGPPeer is not applied (no webhook runs, no BGPPeer is made).
    - One pool, ``METALLB_POOL`` (``METALLB_ADDRESSES``, loopback addresses), made before it starts.
    - ``--webhook-mode=disabled``: no webhook server (its port, 9443, is hard-coded in internal/k8s/k8s.go) and
      no cert rotation (which would write a Secret and wait for it); ``--port``: its metrics server, the only
      HTTP endpoint it has (on all interfaces: internal/k8s/k8s.go sets no host); the release's readiness probe
      is its ``/metrics``. Ready here once ``/metrics`` counts the pool's addresses
      (``metallb_allocator_addresses_total``): the pool is loaded, a Service gets an address at once. Leader
      election is off in the code; no memberlist Secret (``--ml-secret-name``: the speakers').
    - A port taken between ``free_port`` and its start does not stop it (it logs "cannot listen and serve"
      and runs without metrics): ``ready`` reports it as an address in use, so that it is started again."""

    name = component = "metallb"
    binary = "metallb-controller"
    namespace = "metallb-system"
    pool_api = ("metallb.io", "v1beta1", "ipaddresspools")

    def crds(self) -> list[Path]:
        return kustomized_files(self.src / "config" / "crd")

    def prepare(self) -> list[str]:
        from kubernetes import client

        self.ctl.ensure_namespace(self.namespace)
        custom = client.CustomObjectsApi(self.ctl.api)
        body = {"apiVersion": "/".join(self.pool_api[:2]), "kind": "IPAddressPool",
                "metadata": {"name": METALLB_POOL, "namespace": self.namespace},
                "spec": {"addresses": ["-".join(METALLB_ADDRESSES)]}}
        self.ctl.create_or_replace(
            lambda: custom.create_namespaced_custom_object(*self.pool_api[:2], self.namespace, self.pool_api[2], body),
            lambda rv: custom.replace_namespaced_custom_object(
                *self.pool_api[:2], self.namespace, self.pool_api[2], METALLB_POOL,
                {**body, "metadata": {**body["metadata"], "resourceVersion": rv}}),
            lambda: custom.get_namespaced_custom_object(*self.pool_api[:2], self.namespace, self.pool_api[2],
                                                        METALLB_POOL)["metadata"]["resourceVersion"])
        self.log_offset = self.log.stat().st_size if self.log.exists() else 0
        return [str(self.ctl.bin_dir / self.binary), f"--kubeconfig={self.cluster.admin.kubeconfig}",
                f"--namespace={self.namespace}", "--webhook-mode=disabled", f"--port={self.health_port}",
                "--log-level=info"]

    def ready(self) -> bool:
        with open(self.log, "rb") as f:
            f.seek(self.log_offset)
            if b"cannot listen and serve" in f.read():
                raise ControllerError(f"metallb: its metrics port {self.health_port}: address already in use\n"
                                      f"{self.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{self.health_port}/metrics", timeout=2) as resp:
                text = resp.read().decode()
        except (urllib.error.URLError, OSError):
            return False
        m = re.search(rf'^metallb_allocator_addresses_total\{{pool="{METALLB_POOL}"\}} (\S+)$', text, re.M)
        return bool(m) and float(m.group(1)) > 0


def in_metallb_pool(address: str) -> bool:
    """Whether ``address`` is one of the MetalLB pool's (``METALLB_ADDRESSES``)."""
    first, last = (ipaddress.ip_address(a) for a in METALLB_ADDRESSES)
    return first <= ipaddress.ip_address(address) <= last


def wait_load_balancer_address(core, namespace: str, name: str, timeout: float = 30.0) -> str:
    """The address MetalLB gives the LoadBalancer Service ``name`` (its first ``status.loadBalancer.ingress``
    IP), once it did; fails after ``timeout`` with the Service's events."""
    deadline = time.monotonic() + timeout
    while True:
        svc = core.read_namespaced_service(name, namespace)
        ingress = (svc.status.load_balancer.ingress if svc.status and svc.status.load_balancer else None) or []
        if ingress and ingress[0].ip:
            return ingress[0].ip
        if time.monotonic() > deadline:
            events = [f"{e.reason}: {e.message}" for e in core.list_namespaced_event(
                namespace, field_selector=f"involvedObject.kind=Service,involvedObject.name={name}").items]
            raise AssertionError(f"Service {namespace}/{name}: no load balancer address after {timeout}s "
                                 f"(events: {events})")
        time.sleep(0.1)


CLASSES = {c.name: c for c in (TrainingOperator, MPIOperator, JobSet, Trainer, Kueue, LWS, KServe, MetalLB)}


# ---- all of them ----------------------------------------------------------------------------------------
class Controllers:
    """The real controllers for ``cluster``; ``start(names)`` then ``stop()``.

    ``mpi``: which MPIJob CRD is installed (``"v2beta1"``: mpi-operator's; ``"v1"``: training-operator's, with
    its MPIJob v1 controller). ``training_operator_kinds``: the schemes of training-operator (default
    ``TRAINING_OPERATOR_KINDS``; naming one installs its CRD)."""

    def __init__(self, cluster: TestCluster, *, mpi: str = "v2beta1", training_operator_kinds=None):
        from kubernetes import client

        if mpi not in ("v1", "v2beta1"):
            raise ValueError(f"mpi: v1 or v2beta1, not {mpi!r}")
        self.cluster = cluster
        self.mpi = mpi
        self.training_operator_kinds = training_operator_kinds
        self.workdir = cluster.workdir / "controllers"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.api = cluster.api_client()
        self.ext = client.ApiextensionsV1Api(self.api)
        self.admission = client.AdmissionregistrationV1Api(self.api)
        self.serving = cluster.ca.issue_cert(LOOPBACK, "localhost")
        self.running: dict[str, Controller] = {}
        self.errors: dict[str, str] = {}
        self.start_seconds: dict[str, float] = {}
        self.applied_webhooks: list[tuple[str, str]] = []
        self.bin_dir: Path | None = None
        atexit.register(self._kill_all)

    # ---- API helpers ------------------------------------------------------------------------------------
    def crd_exists(self, name: str) -> bool:
        from kubernetes.client.rest import ApiException

        try:
            self.ext.read_custom_resource_definition(name)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise

    def ensure_namespace(self, name: str) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        core = client.CoreV1Api(self.api)
        deadline = time.monotonic() + 60
        while True:
            try:
                ns = core.read_namespace(name)
                if ns.status.phase != "Terminating":
                    return
            except ApiException as exc:
                if exc.status != 404:
                    raise
                try:
                    core.create_namespace({"metadata": {"name": name}})
                    return
                except ApiException as exc2:
                    if exc2.status != 409:
                        raise
            if time.monotonic() > deadline:
                raise ControllerError(f"namespace {name} still Terminating")
            time.sleep(0.5)

    @staticmethod
    def create_or_replace(create, replace, current_rv, attempts: int = 5):
        from kubernetes.client.rest import ApiException

        for _ in range(attempts):
            try:
                return create()
            except ApiException as exc:
                if exc.status != 409:
                    raise
            try:
                return replace(current_rv())
            except ApiException as exc:
                if exc.status not in (404, 409):
                    raise
        raise ControllerError("create-or-replace kept conflicting")

    def json_patch(self, path: str, patch: list[dict]):
        return self.api.call_api(path, "PATCH", body=patch, auth_settings=["BearerToken"],
                                 header_params={"Content-Type": "application/json-patch+json",
                                                "Accept": "application/json"},
                                 _preload_content=False, _return_http_data_only=True)

    def _call(self, path: str, method: str, body=None):
        resp = self.api.call_api(path, method, body=body, auth_settings=["BearerToken"],
                                 header_params={"Content-Type": "application/json", "Accept": "application/json"},
                                 _preload_content=False, _return_http_data_only=True)
        return json.loads(resp.data or b"{}")

    def get_path(self, path: str) -> dict:
        return self._call(path, "GET")

    def create_path(self, path: str, body: dict) -> dict:
        return self._call(path, "POST", body)

    def delete_path(self, path: str) -> None:
        """DELETE ``path``; gone already is fine."""
        from kubernetes.client.rest import ApiException

        try:
            self._call(path, "DELETE")
        except ApiException as exc:
            if exc.status != 404:
                raise

    def wait_apiservices(self, names: list[str], timeout: float) -> dict[str, tuple[str | None, str]]:
        """Wait until the API server calls every APIService of ``names`` Available: {} then; after ``timeout``,
        each one's (Available status, message)."""
        deadline = time.monotonic() + timeout
        while True:
            states = {}
            for name in names:
                obj = self.get_path(f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
                cond = next((c for c in (obj.get("status") or {}).get("conditions") or []
                             if c.get("type") == "Available"), {})
                states[name] = (cond.get("status"), cond.get("message", ""))
            if all(st == "True" for st, _ in states.values()):
                return {}
            if time.monotonic() > deadline:
                return states
            time.sleep(0.25)

    def apply_crd(self, body: dict, timeout: float = 60.0) -> None:
        """Create the CRD, or replace it when its served versions are the same (else delete it, with its
        objects, and create it: the MPIJob v1/v2beta1 swap); then wait until it is served."""
        from kubernetes.client.rest import ApiException

        name = body["metadata"]["name"]
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        served = sorted(v["name"] for v in body["spec"]["versions"] if v.get("served"))
        for _ in range(5):
            try:
                current = self.api.sanitize_for_serialization(self.ext.read_custom_resource_definition(name))
            except ApiException as exc:
                if exc.status != 404:
                    raise
                current = None
            try:
                if current is None:
                    self.api.call_api(path, "POST", body=body, auth_settings=["BearerToken"],
                                      header_params={"Content-Type": "application/json", "Accept": "application/json"},
                                      _preload_content=False)
                elif sorted(v["name"] for v in current["spec"]["versions"] if v.get("served")) != served:
                    self.cluster.delete_crd(name)
                    continue
                else:
                    new = copy.deepcopy(body)
                    new["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                    self.api.call_api(f"{path}/{name}", "PUT", body=new, auth_settings=["BearerToken"],
                                      header_params={"Content-Type": "application/json", "Accept": "application/json"},
                                      _preload_content=False)
                break
            except ApiException as exc:
                if exc.status != 409:
                    raise
        deadline = time.monotonic() + timeout
        while True:
            crd = self.ext.read_custom_resource_definition(name)
            conds = {c.type: c.status for c in (crd.status.conditions or [])}
            if conds.get("Established") == "True" and conds.get("NamesAccepted") == "True":
                break
            if time.monotonic() > deadline:
                raise ControllerError(f"CRD {name} not established after {timeout}s")
            time.sleep(0.2)
        self.cluster._wait_served(body, timeout=timeout)

    def apply_webhook(self, body: dict) -> None:
        kind = body["kind"]
        name = body["metadata"]["name"]
        if kind == "MutatingWebhookConfiguration":
            create, replace, read = (self.admission.create_mutating_webhook_configuration,
                                     self.admission.replace_mutating_webhook_configuration,
                                     self.admission.read_mutating_webhook_configuration)
        else:
            create, replace, read = (self.admission.create_validating_webhook_configuration,
                                     self.admission.replace_validating_webhook_configuration,
                                     self.admission.read_validating_webhook_configuration)
        self.create_or_replace(lambda: create(body),
                               lambda rv: replace(name, {**body, "metadata": {**body["metadata"],
                                                                              "resourceVersion": rv}}),
                               lambda: read(name).metadata.resource_version)
        self.applied_webhooks.append((kind, name))

    def delete_webhooks(self, names: set[str] | None = None) -> None:
        from kubernetes.client.rest import ApiException

        for kind, name in list(self.applied_webhooks):
            if names is not None and name not in names:
                continue
            delete = (self.admission.delete_mutating_webhook_configuration if kind == "MutatingWebhookConfiguration"
                      else self.admission.delete_validating_webhook_configuration)
            try:
                delete(name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
            self.applied_webhooks.remove((kind, name))

    # ---- lifecycle --------------------------------------------------------------------------------------
    def start(self, names=ALL, *, strict: bool = False) -> Controllers:
        """Start ``names`` (in START_ORDER); ``strict``: raise if one could not start (else see ``errors``)."""
        from kubernetes.client.rest import ApiException

        unknown = set(names) - set(CLASSES)
        if unknown:
            raise ValueError(f"unknown controllers {sorted(unknown)}; known: {list(CLASSES)}")
        wanted = [n for n in START_ORDER if n in names and n not in self.running]
        for n in wanted:  # a failure of an earlier start is forgotten
            self.errors.pop(n, None)
        built = []
        for n in wanted:  # one build at a time, so that one failing build does not stop the others
            try:
                self.bin_dir = kube_bin_dir((CLASSES[n].component,))
                built.append(n)
            except RuntimeError as exc:
                self.errors[n] = f"{exc} (scripts/build-cluster.sh {CLASSES[n].component})"
        ctrls: dict[str, Controller] = {}
        for n in built:
            try:
                c = CLASSES[n](self)
                for path in c.crds():
                    body = load_yaml_docs(path)[0]
                    if isinstance(c, Kueue):
                        body = c.crd_patch(body)
                    self.apply_crd(body)
                ctrls[n] = c
            except (ControllerError, OSError, ApiException) as exc:
                self.errors[n] = str(exc)
        started: dict[str, float] = {}
        for n, c in ctrls.items():  # all at once: they do not need each other to start
            try:
                argv = c.prepare()
                started[n] = time.monotonic()
                c.spawn(argv)
            except (ControllerError, OSError, ApiException) as exc:
                self.errors[n] = str(exc)
        for n in [n for n in ctrls if n in started]:
            c = ctrls[n]
            try:
                c = self._ready_or_respawned(c, started)
                self.start_seconds[n] = round(time.monotonic() - started[n], 1)
                self.running[n] = c
                for body in c.webhooks():
                    self.apply_webhook(body)
                    c.webhook_names.add(body["metadata"]["name"])
                c.after_ready()
            except (ControllerError, OSError, ApiException) as exc:
                self.errors[n] = str(exc)
                if c.webhook_names:  # they fail closed: none may outlive their server
                    self.delete_webhooks(c.webhook_names)
                c.terminate()
                self.running.pop(n, None)
        self._write_summary()
        failed = {k: v for k, v in self.errors.items() if k in names}
        if strict and failed:
            raise ControllerError("; ".join(f"{k}: {v}" for k, v in failed.items()))
        return self

    def _ready_or_respawned(self, c: Controller, started: dict[str, float], tries: int = 3) -> Controller:
        """Wait for ``c``; a controller that exited because one of the free ports it was given had been taken
        meanwhile (an ephemeral port of an outgoing connection: free_port's race) is started again, twice at
        most, with new ports. Returns the controller that runs."""
        for attempt in range(tries):
            try:
                self._wait_ready(c)
                return c
            except ControllerError as exc:
                if attempt == tries - 1 or "address already in use" not in str(exc):
                    raise
                c.terminate()
                c = CLASSES[c.name](self)  # new ports
                started[c.name] = time.monotonic()
                c.spawn(c.prepare())
        return c

    def _wait_ready(self, c: Controller) -> None:
        deadline = time.monotonic() + c.ready_timeout
        while True:
            if c.proc.poll() is not None:
                raise ControllerError(f"{c.name} exited with {c.proc.returncode}:\n{c.log_tail()}")
            if c.ready():
                return
            if time.monotonic() > deadline:
                raise ControllerError(f"{c.name} not ready after {c.ready_timeout}s:\n{c.log_tail()}")
            time.sleep(0.25)

    def _write_summary(self) -> None:
        summary = {n: {"seconds_to_ready": self.start_seconds.get(n), "pid": c.proc.pid if c.proc else None,
                       "argv": c.proc.args if c.proc else None, "log": str(c.log)}
                   for n, c in self.running.items()}
        summary["errors"] = self.errors
        (self.workdir / "summary.json").write_text(json.dumps(summary, indent=2))

    def restart_if_lease_lost(self) -> list[str]:
        """Start again, as their Deployments would, the controllers that exited because they lost their
        leader-election Lease (an API server down past the lease's renew deadline); the names restarted.

        Only mpi-operator: v0.8.0 cannot turn leader election off (cmd/mpi-operator/app/server.go runs
        ``election.RunOrDie``, whose OnStoppedLeading is ``klog.Fatalf``), so it exits. The old Lease is
        removed first, as after a stop. A controller that exited for another reason stays exited."""
        restarted = []
        for name in ("mpi-operator",):
            c = self.running.get(name)
            if c is None or c.proc.poll() is None or "leaderelection" not in c.log_tail(20):
                continue
            c.after_stop()
            self.running.pop(name)
            self.start((name,))
            self.require(name)
            restarted.append(name)
        return restarted

    def require(self, *names: str) -> None:
        """Fail (the calling test) unless ``names`` run, with the reason they do not."""
        missing = [n for n in names if n not in self.running]
        if missing:
            raise AssertionError("; ".join(f"{n} is not running: {self.errors.get(n, 'not started')}"
                                           for n in missing))

    def log(self, name: str) -> str:
        c = self.running.get(name)
        return c.log.read_text(errors="replace") if c and c.log.exists() else ""

    def stop(self, names=None, namespace_timeout: float = 60.0) -> None:
        """Stop ``names`` (default: every running controller; the others keep running, with their webhooks)."""
        from kubernetes import client

        ctrls = [self.running[n] for n in reversed(START_ORDER) if n in self.running and (names is None or n in names)]
        # they fail closed: no object of theirs could be written once they are gone
        if names is None:
            self.delete_webhooks()
        else:
            self.delete_webhooks({w for c in ctrls for w in c.webhook_names})
        # namespaces being deleted (a test's namespace fixture) finish while the controllers still run
        core = client.CoreV1Api(self.api)
        deadline = time.monotonic() + namespace_timeout
        while time.monotonic() < deadline:
            if not any(ns.status.phase == "Terminating" for ns in core.list_namespace().items):
                break
            time.sleep(0.5)
        for c in ctrls:
            c.before_stop()
            c.terminate()
        errors = []
        for c in ctrls:
            try:
                c.after_stop()
            except Exception as exc:  # noqa: BLE001 - tear down the others anyway
                errors.append(f"{c.name}: {exc}")
            self.running.pop(c.name, None)
        if errors:
            raise ControllerError("; ".join(errors))

    def _kill_all(self) -> None:
        for c in self.running.values():
            try:
                c.terminate()
            except Exception:  # noqa: BLE001 - interpreter exit
                pass

    def __enter__(self) -> Controllers:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
