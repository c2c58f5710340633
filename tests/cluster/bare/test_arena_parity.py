"""Arena parity: for each Arena command line of CASES, what Arena v0.15.5's own CLI installs (``arena submit
KIND ... --helm-binary``, built from its Go module by scripts/build-cluster.sh, run as its installer sets it up:
its charts in ``$HOME/charts``, its helm on PATH as ``arena-helm``, its kubectl as ``arena-kubectl``) against what
arena-helm's ``submit KIND ...`` installs for the same command line, on one test cluster, compared semantically
per replica role.

Arena's helm here is a recording one (``recording_helm``): it keeps the arguments and the values file Arena hands
it and the manifests the real helm 3 renders of them, which Arena then applies with the real kubectl. arena-helm's
side is its release's manifest (``helm get manifest``). The cluster is a control plane of its own with the Kubeflow
CRDs and no controller (tests/cluster/bare/): nothing runs the jobs, so the two sides' objects are read as they
were made. Both tools use the same kubeconfig (a token, named by a TokenReview: ``admin``).

Arena's MPIJob is kubeflow.org/v1alpha1 (its chart and its client), served by the MPIJob CRD Arena's own deployment
installs (``arena-artifacts/crds/kubeflow.org_mpijobs.yaml`` of its module: v1alpha1 only); the MPIJob CRD of
mpi-operator v0.8.0 (v2beta1) has the same name, so Arena's MPI cases run with Arena's CRD swapped in, and
arena-helm's with mpi-operator's.

Compared, per role (TF: PS/Worker/Chief/Evaluator, PyTorch: Master/Worker, MPI: Launcher/Worker):
replicas, restartPolicy, image, imagePullPolicy, the effective argv (command + args), workingDir, env (name ->
value), resources requests and limits (parsed quantities, compared numerically), volume mounts (mountPath ->
source kind and source: PVC claim, hostPath path, emptyDir medium + sizeLimit, configMap name), nodeSelector,
tolerations, affinity, hostNetwork/hostPID/hostIPC/dnsPolicy, priorityClassName, schedulerName, imagePullSecrets,
the pod and container securityContext, ports, the code synced from git (repository, ref, where it lands), the
files ConfigMaps put in the container (--config-file: path -> content), and
the labels and annotations Arena's tooling reads (TRACKED_LABELS, TRACKED_ANNOTATIONS, plus the keys the case
gives with --label/--annotation). The job itself ("Job"): those labels and annotations, the run policy
(cleanPodPolicy, backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished, successPolicy) and MPI's
slotsPerWorker. The TensorBoard ("TensorBoard"): Deployment and Service present, Service type and ports,
container port, image and pull policy, pull secrets, tolerations and priority class, the labels ``role`` and
``release``, and where its ``--logdir`` reads from (volume source and path inside it).

Both sides are compared as the API server and the operators see them: missing fields take the defaults of
Kubernetes (requests default to limits, a toleration's operator to Equal, dnsPolicy ClusterFirst,
schedulerName default-scheduler) and of the operators (training-operator v1.9 ``SetDefaults_TFJob`` /
``SetDefaults_PyTorchJob``: replicas 1, restartPolicy Never (TF) / OnFailure (PyTorch), the default port
``tfjob-port`` 2222 / ``pytorchjob-port`` 23456 when no port of that name is given, cleanPodPolicy None,
nprocPerNode ``auto``, which the PyTorch controller's ``setPodEnv`` appends as ``PET_NPROC_PER_NODE`` to
every container's env, after the user's;
mpi-operator v0.8.0 ``SetDefaults_MPIJob``: slotsPerWorker 1, Launcher OnFailure, Worker Never,
cleanPodPolicy None, and the launcher Job's backoffLimit 6 from the Job API).

The deliberate differences are the NORMALIZATIONS below, each with its reason and the docs/compatibility.md
section it belongs to; nothing else is normalized: any other difference fails the case with one line per
(role, field, Arena value, arena-helm value).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from controllers import source_dir
from helmtools import REPO, helm_path
from kubecluster import kube_bin_dir, make_claim
from kubernetes import client
from kubernetes.utils.quantity import parse_quantity
from typer.testing import CliRunner

from arena_helm.cli import app

pytestmark = pytest.mark.cluster

HELM = "3.17.3"  # Arena's installer ships helm 3; arena-helm's side uses the same binary
GIT_URL = "https://github.com/kubeflow/arena.git"
ARENA_USER = "admin"  # what a TokenReview of the admin kubeconfig's token says (pkg/apis/config/user.go)

# The labels and annotations Arena's tooling reads (pkg/apis/types/const.go, training.go; the charts'
# _helpers.tpl; pkg/argsbuilder/const.go), compared wherever either side sets them.
TRACKED_LABELS = ("release", "app", "chart", "heritage", "createdBy", "arena.kubeflow.org/uid",
                  "pod-group.scheduling.sigs.k8s.io/name", "pod-group.scheduling.sigs.k8s.io/min-available",
                  "modelName")
TRACKED_ANNOTATIONS = ("arena.kubeflow.org/username", "requestGPUsOfJobOwner", "scheduling.x-k8s.io/suspend",
                       # read by the operators Arena installs (pkg/argsbuilder/submit_tfjob.go)
                       "arena.kubeflow.org/disable-tf-config", "job-role-sequence")


# ===================================================================================== the deliberate differences
@dataclass(frozen=True)
class Normalization:
    name: str
    reason: str
    doc_section: str  # the docs/compatibility.md section that lists this difference
    apply: Callable[[dict, dict, Case], None]  # (Arena model, arena-helm model, case): edits both in place


def _mpi_api_version(arena: dict, helm: dict, case: Case) -> None:
    # applied where Arena's job is read (model_of -> arena_mpi_roles); here: both sides have MPI's two roles
    if case.kind == "mpijob":
        assert set(arena["roles"]) == {"Launcher", "Worker"} and set(helm["roles"]) <= {"Launcher", "Worker"}


def _mpi_worker_process(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "mpijob":
        return
    for model in (arena, helm):
        worker = model["roles"].get("Worker")
        if worker:
            worker.pop("command", None)
            worker.pop("restartPolicy", None)


def _pod_hardening(arena: dict, helm: dict, case: Case) -> None:
    for model in (arena, helm):
        tensorboard = model.get("TensorBoard") or {}
        # the TensorBoard only reads the logs: the user it runs as is hardening too (the training pods' is not)
        for key in ("runAsUser", "runAsGroup", "runAsNonRoot"):
            tensorboard.get("podSecurityContext", {}).pop(key, None)
        for role in [*model["roles"].values(), tensorboard]:
            for key in ("securityContext", "podSecurityContext"):
                sc = role.get(key)
                if not isinstance(sc, dict):
                    continue
                for hardening in ("allowPrivilegeEscalation", "seccompProfile", "readOnlyRootFilesystem"):
                    sc.pop(hardening, None)
                caps = sc.get("capabilities")
                if isinstance(caps, dict):
                    caps.pop("drop", None)
                    if not caps:
                        sc.pop("capabilities")
            role.pop("automountServiceAccountToken", None)


def _git_sync_implementation(arena: dict, helm: dict, case: Case) -> None:
    # the init containers were reduced to ``codeSync`` (repository, ref, path) at extraction; drop the rest
    for model in (arena, helm):
        for role in model["roles"].values():
            role.pop("initContainers", None)


def _tf_retry(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "tfjob":
        return
    # only when the command line gives --retry: without it, arena-helm must leave backoffLimit unset as Arena does
    if not any(a == "--retry" or a.startswith("--retry=") for a in case.argv):
        return
    if helm["Job"].get("backoffLimit") == int(case.value("--retry", default="0")) and arena["Job"].get("backoffLimit") is None:
        helm["Job"]["backoffLimit"] = None


def _pytorch_no_retry(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "pytorchjob" or int(case.value("--retry", default="0")):
        return
    # --retry 0: Arena's backoffLimit 0 with the workers OnFailure, arena-helm no backoffLimit with the workers Never
    # (the master is Never on both sides, and compared)
    if arena["Job"].get("backoffLimit") == 0 and helm["Job"].get("backoffLimit") is None:
        helm["Job"]["backoffLimit"] = 0
    worker = (arena["roles"].get("Worker"), helm["roles"].get("Worker"))
    if worker[0] and worker[1] and (worker[0].get("restartPolicy"), worker[1].get("restartPolicy")) == (
            "OnFailure", "Never"):
        worker[1]["restartPolicy"] = "OnFailure"


def _chart_label_version(arena: dict, helm: dict, case: Case) -> None:
    for model in (arena, helm):
        for holder in _label_holders(model):
            chart = holder.get("labels", {}).get("chart")
            if isinstance(chart, str):
                holder["labels"]["chart"] = chart.rsplit("-", 1)[0]


def _config_file_layout(arena: dict, helm: dict, case: Case) -> None:
    for model in (arena, helm):
        for role in model["roles"].values():
            role["volumeMounts"] = {path: m for path, m in role["volumeMounts"].items() if m[0] != "configMap"}


def _tensorboard_default_image(arena: dict, helm: dict, case: Case) -> None:
    if case.value("--tensorboard-image", "--tensorboardImage"):
        return
    for model in (arena, helm):
        if model.get("TensorBoard"):
            model["TensorBoard"].pop("image", None)


def _tensorboard_host_log_dir(arena: dict, helm: dict, case: Case) -> None:
    # the node directory of Arena's local logging: Arena's /arena_logs/training<random>, arena-helm's
    # /arena_logs/<namespace>/<job>
    def same(source: tuple | None) -> tuple | None:
        if source and source[0] == "hostPath" and re.fullmatch(r"/arena_logs/(training[0-9]+|[^/]+/[^/]+)", source[1]):
            return (source[0], "/arena_logs/<the job's directory>", *source[2:])
        return source

    for model in (arena, helm):
        if model.get("TensorBoard"):
            model["TensorBoard"]["logdirSource"] = same(model["TensorBoard"].get("logdirSource"))
        for role in model["roles"].values():
            role["volumeMounts"] = {path: same(m) for path, m in role["volumeMounts"].items()}


def _given(case: Case, *flags: str) -> bool:
    return any(a in flags or a.split("=", 1)[0] in flags for a in case.argv)


def _tf_auto_port(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "tfjob":
        return
    flags = {"Worker": ("--worker-port", "--workerPort"), "PS": ("--ps-port", "--psPort"),
             "Chief": ("--chief-port", "--chiefPort"), "Evaluator": ()}
    for role, names in flags.items():
        if names and _given(case, *names):
            continue
        for model in (arena, helm):
            if role in model["roles"]:
                model["roles"][role].get("ports", {}).pop("tfjob-port", None)


def _git_default_branch(arena: dict, helm: dict, case: Case) -> None:
    if _given(case, "--sync-branch") or any("GIT_SYNC_BRANCH=" in a for a in case.argv):
        return
    for role, spec in arena["roles"].items():
        mine = helm["roles"].get(role, {}).get("codeSync")
        if spec.get("codeSync") and mine and spec["codeSync"].get("ref") == "master" and mine.get("ref") == "HEAD":
            spec["codeSync"]["ref"] = mine["ref"] = None


def _pytorch_nproc_env(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "pytorchjob" or not _given(case, "--nproc-per-node"):
        return
    wanted = case.argv[case.argv.index("--nproc-per-node") + 1]
    for role, spec in helm["roles"].items():
        theirs = arena["roles"].get(role, {}).get("env", {})
        if spec["env"].get("PET_NPROC_PER_NODE") == wanted and theirs.get("PET_NPROC_PER_NODE") == "auto":
            spec["env"].pop("PET_NPROC_PER_NODE")
            theirs.pop("PET_NPROC_PER_NODE")


def _config_file_bytes(arena: dict, helm: dict, case: Case) -> None:
    for role, spec in helm["roles"].items():
        theirs = arena["roles"].get(role, {}).get("configFiles", {})
        for path, content in spec.get("configFiles", {}).items():
            if isinstance(content, str) and theirs.get(path) == content.rstrip("\n"):
                theirs[path] = content


def _no_gpu_env_per_role(arena: dict, helm: dict, case: Case) -> None:
    for role, spec in helm["roles"].items():
        theirs = arena["roles"].get(role, {})
        gpus = (spec.get("resources", {}).get("limits") or {}).get("nvidia.com/gpu")
        if not gpus and spec["env"].get("NVIDIA_VISIBLE_DEVICES") == "void" and \
                "NVIDIA_VISIBLE_DEVICES" not in theirs.get("env", {}):
            spec["env"].pop("NVIDIA_VISIBLE_DEVICES")


def _affinity_pod_labels(arena: dict, helm: dict, case: Case) -> None:
    """Arena's spread/binpack terms select release + group-name=kubeflow.org + tf-replica-type, labels of the old
    tf-operator; arena-helm's the training operator's job-name and replica-type: compared as the same pods."""
    def convert(term: dict) -> None:
        exprs = {e["key"]: e["values"][0] for e in term.get("labelSelector", {}).get("matchExpressions", [])}
        if {"release", "group-name", "tf-replica-type"} <= set(exprs):
            term["labelSelector"] = {"matchLabels": {"training.kubeflow.org/job-name": exprs["release"],
                                                     "training.kubeflow.org/replica-type": exprs["tf-replica-type"]}}

    for spec in [*arena["roles"].values(), *helm["roles"].values()]:
        for kind in ("podAffinity", "podAntiAffinity"):
            for terms in (spec.get("affinity", {}).get(kind) or {}).values():
                for term in terms:
                    convert(term.get("podAffinityTerm", term))


# The section of docs/compatibility.md where the manifest-level differences belong.
MANIFESTS_SECTION = "Job manifests: Arena's charts and arena-helm's"

NORMALIZATIONS: tuple[Normalization, ...] = (
    Normalization(
        "mpi-api-version",
        "Arena's MPIJob is kubeflow.org/v1alpha1 (one pod template, spec.replicas, no slotsPerWorker), arena-helm's "
        "v2beta1 (mpiReplicaSpecs): Arena's job is mapped to the Launcher and Worker pods mpi-operator's v1alpha1 "
        "controller makes of it (newLauncher: the template without resources; newWorker: spec.replicas, the GPU "
        "limit; newConfigMap: slots = GPUs per worker, else 1) when Arena's job is read: arena_mpi_roles().",
        "Scheduling and the real operators", _mpi_api_version),
    Normalization(
        "mpi-worker-process",
        "What an MPI worker pod runs is the operator's: v1alpha1 replaces the command with `sleep 365d` in a "
        "StatefulSet (restartPolicy Always), v2beta1 runs sshd (restartPolicy Never); the user's command runs in the "
        "launcher in both. Worker command and restartPolicy are not compared.",
        "Scheduling and the real operators", _mpi_worker_process),
    Normalization(
        "pod-hardening",
        "arena-helm hardens its pods (allowPrivilegeEscalation false, capabilities.drop, seccompProfile, "
        "readOnlyRootFilesystem, automountServiceAccountToken false; the TensorBoard's non-root user): these fields "
        "are not compared; every other securityContext field (the training pods' runAsUser, privileged, "
        "capabilities.add, ...) is.",
        MANIFESTS_SECTION, _pod_hardening),
    Normalization(
        "git-sync-implementation",
        "Arena runs git-sync v3 (GIT_SYNC_* env, root /code, every -e variable passed to it), arena-helm git-sync v4 "
        "(flags, its own resources and security): the init containers are compared only as codeSync = repository, "
        "ref (Arena: GIT_SYNC_BRANCH, else v3's default master) and the path the code has in the training container.",
        MANIFESTS_SECTION, _git_sync_implementation),
    Normalization(
        "tf-retry",
        "Arena's tfjob chart ignores --retry (no backoffLimit); arena-helm honours a given --retry N as "
        "runPolicy.backoffLimit N (without --retry both leave it unset).",
        MANIFESTS_SECTION, _tf_retry),
    Normalization(
        "pytorch-no-retry",
        "--retry 0 (the default): Arena renders backoffLimit 0 with the workers OnFailure, under which "
        "training-operator deletes every pod of a failed job, the failed one first; arena-helm renders no backoffLimit "
        "and the workers Never, so the first failed pod fails the job and is kept. With --retry N both render "
        "backoffLimit N and the workers OnFailure (compared).",
        MANIFESTS_SECTION, _pytorch_no_retry),
    Normalization(
        "chart-label-version",
        "The `chart` label is NAME-VERSION of the chart that made the job: arena-helm's charts have their own "
        "versions; the chart name is compared.",
        MANIFESTS_SECTION, _chart_label_version),
    Normalization(
        "config-file-layout",
        "--config-file: Arena makes a ConfigMap per container directory (RELEASE-md5(dir)[:15]) mounted over the whole "
        "directory, arena-helm one ConfigMap mounted per file (subPath): the ConfigMap mounts are compared as the files "
        "the container sees (configFiles: path -> content), not as volumes.",
        MANIFESTS_SECTION, _config_file_layout),
    Normalization(
        "tensorboard-default-image",
        "Arena's default TensorBoard image (the chart's tensorboardImage, TensorFlow 1.12 in a vendor registry) is not "
        "arena-helm's; the image is compared when the command line names one (--tensorboard-image).",
        MANIFESTS_SECTION, _tensorboard_default_image),
    Normalization(
        "tensorboard-host-log-dir",
        "The node directory of the logs when no --data PVC holds --logdir (Arena's local logging): Arena draws "
        "/arena_logs/training<random number> at each submit, arena-helm uses /arena_logs/<namespace>/<job name> "
        "(the same command renders the same manifests); the training containers and TensorBoard mount it as Arena's do.",
        "TensorBoard with a job", _tensorboard_host_log_dir),
    Normalization(
        "tf-auto-port",
        "Arena picks the first port from 20000 no pod of the cluster uses (util/port_allocate.go) when no port flag "
        "is given; arena-helm keeps the operator's 2222 (pod IPs are per pod): a TF role's port is compared only when "
        "its flag is given.",
        MANIFESTS_SECTION, _tf_auto_port),
    Normalization(
        "git-default-branch",
        "Without a branch Arena's git-sync v3 checks out master; arena-helm's git-sync v4 the remote's HEAD (its "
        "default branch, master or main).",
        MANIFESTS_SECTION, _git_default_branch),
    Normalization(
        "pytorch-nproc-env",
        "Arena's --nproc-per-node sets PET_NPROC_PER_NODE, which training-operator v1.9 overrides with "
        "spec.nprocPerNode (default auto); arena-helm sets spec.nprocPerNode, so the value asked for is the one "
        "the pods get.",
        MANIFESTS_SECTION, _pytorch_nproc_env),
    Normalization(
        "config-file-bytes",
        "Arena's ConfigMap template (`|-`) drops the file's final newline; arena-helm's keeps the file byte for "
        "byte.",
        MANIFESTS_SECTION, _config_file_bytes),
    Normalization(
        "no-gpu-env-per-role",
        "Arena sets NVIDIA_VISIBLE_DEVICES=void only when --gpus is 0; arena-helm on every replica without GPUs "
        "(the MPI launcher, a TF PS without --ps-gpus), so that none sees the node's GPUs.",
        MANIFESTS_SECTION, _no_gpu_env_per_role),
    Normalization(
        "affinity-pod-labels",
        "--worker/--ps-affinity-policy: Arena's terms select the old tf-operator's labels (group-name, "
        "tf-replica-type) that training-operator v1.9 no longer sets; arena-helm's its job-name and replica-type "
        "labels.",
        MANIFESTS_SECTION, _affinity_pod_labels),
)


# ======================================================================================================= cases
@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    argv: tuple[str, ...]

    name = "job"  # every case's --name

    def values(self, *names: str) -> list[str]:
        """The values the command line gives the flag ``names`` (its spellings), in order."""
        out = []
        for i, word in enumerate(self.argv):
            flag, eq, value = word.partition("=")
            if flag in names:
                out.append(value if eq else self.argv[i + 1])
        return out

    def value(self, *names: str, default: str = "") -> str:
        found = self.values(*names)
        return found[-1] if found else default

    def command_line(self, config_file: Path | str = "/etc/parity/config.yaml") -> list[str]:
        """The argv, with CONFIG_FILE replaced by a real local file (Arena reads --config-file's host file)."""
        return [a.replace(CONFIG_FILE, str(config_file)) for a in self.argv]


CONFIG_FILE = "{config_file}"
CONFIG_TEXT = "learning_rate: 0.1\nepochs: 3\n"


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "train-config.yaml"
    path.write_text(CONFIG_TEXT, encoding="utf-8")
    return path


TF = ("--name", "job", "--image", "tensorflow/tensorflow:2.15.0")
PT = ("--name", "job", "--image", "pytorch/pytorch:2.3.0")
MPI = ("--name", "job", "--image", "horovod/horovod:0.28.1")
CMD = ("python", "train.py")

CASES = [Case(*c) for c in (
    # ------------------------------------------------------------------------------------------------ TFJob
    ("tf-standalone", "tfjob", (*TF, *CMD)),
    ("tf-standalone-chief", "tfjob", (*TF, "--chief", *CMD)),
    ("tf-standalone-evaluator", "tfjob", (*TF, "--evaluator", *CMD)),
    ("tf-ps-workers-resources", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--gpus", "1", "--ps-cpu", "1",
                                          "--ps-memory", "2Gi", "--worker-cpu-limit", "4",
                                          "--worker-memory-limit", "8Gi", *CMD)),
    ("tf-chief-workers", "tfjob", (*TF, "--chief", "--workers", "2", *CMD)),
    ("tf-selector-ps-selector", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--selector", "pool=gpu",
                                          "--ps-selector", "pool=cpu", *CMD)),
    ("tf-ports", "tfjob", (*TF, "--chief", "--ps", "1", "--workers", "2", "--worker-port", "3000", "--ps-port",
                           "3001", "--chief-port", "3002", *CMD)),
    ("tf-camel-case", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--workerImage", "registry.example.com/w:1",
                                "--psImage", "registry.example.com/ps:1", "--workerPort", "3000", "--psPort", "3001",
                                "--cleanTaskPolicy", "All", "--workingDir", "/job", "--dataDir", "/data/in:/in",
                                *CMD)),
    ("tf-run-policy", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--retry", "3", "--running-timeout", "2h",
                                "--ttl-after-finished", "10m", "--clean-task-policy", "All", *CMD)),
    ("tf-tensorboard-hostpath", "tfjob", (*TF, "--tensorboard", *CMD)),
    ("tf-tensorboard-pvc", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--data", "logs-pvc:/mnt", "--logdir",
                                     "/mnt/logs", "--tensorboard", "--tensorboardImage",
                                     "tensorflow/tensorflow:2.15.0", *CMD)),
    ("tf-pod-flags", "tfjob", (*TF, "--toleration", "gpu=true:NoSchedule,Equal", "--priority", "high",
                               "--image-pull-secret", "regcred", "--hostNetwork", "--hostIPC", "--hostPID", *CMD)),
    ("tf-tensorboard-pod-flags", "tfjob", (*TF, "--tensorboard", "--toleration", "gpu=true:NoSchedule,Equal",
                                           "--priority", "high", "--image-pull-secret", "regcred", *CMD)),
    ("tf-sync-camel-case", "tfjob", (*TF, "--syncMode", "git", "--syncSource", GIT_URL, *CMD)),
    ("tf-affinity-role-sequence", "tfjob", (*TF, "--ps", "2", "--workers", "2", "--worker-affinity-policy", "spread",
                                            "--ps-affinity-policy", "binpack", "--ps-affinity-constraint", "required",
                                            "--role-sequence", "w,p", *CMD)),
    ("tf-gang-evaluator", "tfjob", (*TF, "--ps", "1", "--workers", "2", "--evaluator", "--gang", "--gpus", "1",
                                    "--chief-cpu", "2", "--evaluator-memory", "1Gi", "--evaluator-memory-limit", "2Gi",
                                    *CMD)),
    # ------------------------------------------------------------------------------------------- PyTorchJob
    ("pt-default", "pytorchjob", (*PT, "--workers", "2", *CMD)),
    ("pt-single", "pytorchjob", (*PT, *CMD)),
    ("pt-retry", "pytorchjob", (*PT, "--workers", "2", "--retry", "3", *CMD)),
    ("pt-cpu-memory", "pytorchjob", (*PT, "--workers", "2", "--gpus", "1", "--cpu", "2", "--memory", "4Gi", *CMD)),
    ("pt-share-memory", "pytorchjob", (*PT, "--share-memory", "4Gi", *CMD)),
    ("pt-nproc-per-node", "pytorchjob", (*PT, "--workers", "2", "--gpus", "4", "--nproc-per-node", "4", *CMD)),
    ("pt-pull-policy-working-dir", "pytorchjob", (*PT, "--image-pull-policy", "IfNotPresent", "--working-dir",
                                                  "/srv/job", *CMD)),
    ("pt-git-sync-branch", "pytorchjob", (*PT, "--sync-mode", "git", "--sync-source", GIT_URL, "-e",
                                          "GIT_SYNC_BRANCH=dev", *CMD)),
    ("pt-env-label-annotation", "pytorchjob", (*PT, "-e", "A=1", "--env", "B=x=y", "--label", "team=ml", "-l",
                                               "tier=gold", "--annotation", "note=hi", "-a", "owner=me", *CMD)),
    ("pt-data-data-dir", "pytorchjob", (*PT, "--data", "train-data:/data", "--data-dir", "/mnt/host",
                                        "--data-dir", "/host/b:/b", *CMD)),
    ("pt-queue-gang", "pytorchjob", (*PT, "--workers", "3", "--queue", "--gang", *CMD)),
    ("pt-run-policy", "pytorchjob", (*PT, "--workers", "2", "--running-timeout", "1h", "--ttl-after-finished", "30m",
                                     "--clean-task-policy", "All", *CMD)),
    ("pt-model", "pytorchjob", (*PT, "--model-name", "mnist", "--model-source", "pvc://team-a/models/mnist", *CMD)),
    ("pt-tolerations", "pytorchjob", (*PT, "--toleration", "dedicated=ml:NoSchedule,Equal", "--toleration",
                                      "spot=true:NoExecute,Equal", *CMD)),
    ("pt-toleration-all", "pytorchjob", (*PT, "--toleration", "all", *CMD)),
    ("pt-tensorboard-pvc", "pytorchjob", (*PT, "--data", "logs-pvc:/mnt", "--logdir", "/mnt/logs", "--tensorboard",
                                          *CMD)),
    ("pt-rdma-device-scheduler", "pytorchjob", (*PT, "--workers", "2", "--rdma", "--device", "amd.com/gpu=1",
                                                "--scheduler", "volcano", *CMD)),
    ("pt-config-file", "pytorchjob", (*PT, "--workers", "2", "--config-file", f"{CONFIG_FILE}:/etc/train/config.yaml",
                                      *CMD)),
    ("pt-camel-case", "pytorchjob", (*PT, "--workingDir", "/job", "--dataDir", "/data/in:/in", "--syncMode", "git",
                                     "--syncSource", GIT_URL, *CMD)),
    # ----------------------------------------------------------------------------------------------- MPIJob
    ("mpi-default", "mpijob", (*MPI, "--workers", "2", "mpirun", *CMD)),
    ("mpi-gpus-cpu-memory", "mpijob", (*MPI, "--gpus", "2", "--workers", "2", "--cpu", "4", "--memory", "8Gi",
                                       "mpirun", *CMD)),
    ("mpi-pod-flags", "mpijob", (*MPI, "--workers", "2", "--selector", "pool=gpu", "--toleration",
                                 "gpu=true:NoSchedule,Equal", "--priority", "high", "--image-pull-policy",
                                 "IfNotPresent", "--clean-task-policy", "Running", "mpirun", *CMD)),
    ("mpi-data-sync", "mpijob", (*MPI, "--workers", "2", "--data", "train-data:/data", "--sync-mode", "git",
                                 "--sync-source", GIT_URL, "--working-dir", "/job", "mpirun", *CMD)),
)]


# ================================================================================================== rendering
# Arena's helm: keeps what Arena hands it (its arguments, the values file) and what the real helm renders of
# them in $PARITY_RECORD, and answers as the real helm. Arena runs it as
# `bash -c "arena-helm template -f VALUES --namespace NS NAME [--set-file ...] CHART > FILE"`
# (pkg/util/helm/helm_advanced.go, GenerateHelmTemplateLegacy: what --helm-binary selects).
RECORDING_HELM = """#!/bin/bash
set -o pipefail
printf '%s\\n' "$@" > "$PARITY_RECORD/argv"
cp "$3" "$PARITY_RECORD/values.yaml"
"$REAL_HELM" "$@" | tee "$PARITY_RECORD/manifest.yaml"
"""

# Arena applies the job and then fails: --model-name/--model-source registers the model with an MLflow server
# found in the cluster (pkg/apis/arenaclient/model_client.go), and this cluster runs none; what it installed is what it rendered.
ARENA_FAILS_AFTER_APPLY = {
    "pt-model": 'level=error msg="failed to create proxied model client: no mlflow service in any namespace found"',
}


@dataclass
class ArenaRun:
    docs: list[dict]  # the manifests Arena's helm rendered, which Arena applies
    helm_argv: list[str]  # what Arena handed its helm
    namespace: str
    home: Path  # Arena's HOME (its charts)
    work: Path  # its TMPDIR (the values file) and the case's local files (--config-file)


class MpiCrd:
    """The MPIJob CRD the cluster serves: Arena's own (v1alpha1) for Arena's MPI cases, mpi-operator's v2beta1 (the
    session's) for arena-helm's."""

    def __init__(self, cluster):
        self.cluster, self.version = cluster, "v2beta1"

    def ensure(self, version: str) -> None:
        if self.version == version:
            return
        self.cluster.delete_crd("mpijobs.kubeflow.org")
        self.cluster.create_crd(source_dir("arena") / "arena-artifacts" / "crds" / "kubeflow.org_mpijobs.yaml"
                                if version == "arena" else self.cluster.mpi_crd_file(version))
        self.version = version


@pytest.fixture(scope="module")
def mpi_crd(cluster):
    crd = MpiCrd(cluster)
    yield crd
    crd.ensure("v2beta1")


@pytest.fixture(scope="module")
def priority_class(cluster):
    """The PriorityClass ``high`` the cases name (arena-helm checks that a named class exists)."""
    client.SchedulingV1Api(cluster.api_client()).create_priority_class(
        {"metadata": {"name": "high"}, "value": 1000})


def prepare_namespace(cluster, name: str) -> None:
    """A namespace with the PVCs the cases mount (--data logs-pvc:..., train-data:...)."""
    cluster.create_namespace(name)
    core = client.CoreV1Api(cluster.api_client())
    for claim in ("logs-pvc", "train-data"):
        make_claim(core, name, claim, modes=["ReadWriteMany"], size="1Gi", bound=False)


@pytest.fixture(scope="module")
def arena_side(cluster, mpi_crd, priority_class, tmp_path_factory) -> Callable[[Case], ArenaRun]:
    """``render(case)``: Arena v0.15.5's own ``arena submit KIND --helm-binary ...`` of the case in a namespace of
    its own, as its installer sets it up (HOME/charts: the module's charts; PATH: arena, the recording
    ``arena-helm``, the real kubectl as ``arena-kubectl``); one run per case, kept for the module."""
    home, bin_dir = tmp_path_factory.mktemp("arena-home"), tmp_path_factory.mktemp("arena-bin")
    (home / "charts").symlink_to(source_dir("arena") / "charts")
    shutil.copy(kube_bin_dir(("arena",)) / "arena", bin_dir / "arena")
    (bin_dir / "arena-helm").write_text(RECORDING_HELM)
    (bin_dir / "arena-helm").chmod(0o755)
    shutil.copy(helm_path(HELM).parent / "kubectl", bin_dir / "arena-kubectl")
    runs: dict[str, ArenaRun] = {}

    def render(case: Case) -> ArenaRun:
        if case.id in runs:
            return runs[case.id]
        mpi_crd.ensure("arena" if case.kind == "mpijob" else "v2beta1")
        ns = f"arena-{case.id}"
        prepare_namespace(cluster, ns)
        record, work = tmp_path_factory.mktemp("record"), tmp_path_factory.mktemp("work")
        env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "KUBECONFIG": str(cluster.admin.kubeconfig),
               "PARITY_RECORD": str(record), "REAL_HELM": str(helm_path(HELM)), "TMPDIR": str(work)}
        proc = subprocess.run([str(bin_dir / "arena"), "submit", case.kind, "--helm-binary", "-n", ns,
                               *case.command_line(config_file(work))], capture_output=True, text=True, env=env,
                              timeout=300, check=False)
        helm_argv = (record / "argv").read_text().splitlines() if (record / "argv").exists() else []
        last = re.sub(r'^time="[^"]*" ', "", proc.stderr.strip().splitlines()[-1]) if proc.stderr.strip() else ""
        expected = ARENA_FAILS_AFTER_APPLY.get(case.id)
        assert (proc.returncode, helm_argv[:2], expected and last) == (
            1 if expected else 0, ["template", "-f"], expected), (proc.stdout, proc.stderr)
        docs = [d for d in yaml.safe_load_all((record / "manifest.yaml").read_text()) if d]
        runs[case.id] = ArenaRun(docs, helm_argv, ns, home, work)
        return runs[case.id]

    return render


def render_arena_helm(cluster, mpi_crd, case: Case, tmp_path: Path) -> tuple[list[dict] | None, str]:
    """arena-helm's ``submit KIND ...`` of the case (the real install, helm 3, the same kubeconfig) in a namespace
    of its own; its release's manifest."""
    mpi_crd.ensure("v2beta1")
    ns = f"ours-{case.id}"
    prepare_namespace(cluster, ns)
    res = CliRunner().invoke(app, ["submit", case.kind, "--kubeconfig", str(cluster.admin.kubeconfig), "-n", ns,
                                   "--helm-binary", str(helm_path(HELM)), *case.command_line(config_file(tmp_path))])
    if res.exit_code != 0:
        return None, res.output
    proc = subprocess.run([str(helm_path(HELM)), "get", "manifest", case.name, "-n", ns], capture_output=True,
                          text=True, env={**os.environ, "KUBECONFIG": str(cluster.admin.kubeconfig)}, check=False)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d], ""


# ================================================================================================= the model
JOB_KINDS = {"tfjob": "TFJob", "pytorchjob": "PyTorchJob", "mpijob": "MPIJob"}
REPLICA_KEYS = {"TFJob": "tfReplicaSpecs", "PyTorchJob": "pytorchReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}
MAIN_CONTAINER = {"tfjob": "tensorflow", "pytorchjob": "pytorch", "mpijob": "mpi"}
# training-operator v1.9 pkg/apis/kubeflow.org/v1: *_defaults.go, *_types.go (TFJobDefaultPortName/Port,
# TFJobDefaultRestartPolicy, PytorchJobDefaultPortName/Port, PytorchJobDefaultRestartPolicy)
OPERATOR_DEFAULTS = {
    "tfjob": {"restartPolicy": "Never", "port": ("tfjob-port", 2222)},
    "pytorchjob": {"restartPolicy": "OnFailure", "port": ("pytorchjob-port", 23456)},
}


def _quantity(value: Any) -> Decimal:
    return parse_quantity(str(value))


def _tracked(meta: dict | None, keys: set[str]) -> dict[str, str]:
    return {k: str(v) for k, v in ((meta or {}).items()) if k in keys}


def _label_holders(model: dict) -> list[dict]:
    return [model["Job"], *model["roles"].values()]


def _volume_source(volume: dict | None) -> tuple:
    if volume is None:
        return ("missing",)
    if "persistentVolumeClaim" in volume:
        return ("pvc", volume["persistentVolumeClaim"]["claimName"])
    if "hostPath" in volume:
        return ("hostPath", volume["hostPath"]["path"])
    if "emptyDir" in volume:
        e = volume["emptyDir"] or {}
        size = e.get("sizeLimit")
        return ("emptyDir", e.get("medium", ""), None if size is None else _quantity(size))
    if "configMap" in volume:
        return ("configMap", volume["configMap"].get("name"))
    if "secret" in volume:
        return ("secret", volume["secret"].get("secretName"))
    other = {k: v for k, v in volume.items() if k != "name"}
    return ("other", json.dumps(other, sort_keys=True))


def _mounts(container: dict, volumes: dict[str, dict]) -> dict[str, tuple]:
    out = {}
    for m in container.get("volumeMounts") or []:
        out[m["mountPath"]] = (*_volume_source(volumes.get(m["name"])), m.get("subPath", ""))
    return out


def _resources(container: dict) -> dict[str, dict[str, Decimal]]:
    res = container.get("resources") or {}
    limits = {k: _quantity(v) for k, v in (res.get("limits") or {}).items()}
    requests = {k: _quantity(v) for k, v in (res.get("requests") or {}).items()}
    # Kubernetes defaulting (core/v1 SetDefaults_ResourceRequirements): a missing request takes the limit
    for k, v in limits.items():
        requests.setdefault(k, v)
    return {"requests": requests, "limits": limits}


def _tolerations(pod: dict) -> list[tuple]:
    out = []
    for t in pod.get("tolerations") or []:
        operator = t.get("operator") or "Equal"
        out.append((t.get("key", ""), operator, t.get("value", ""), t.get("effect", "")))
    return sorted(out)


def _code_sync(pod: dict, main: dict, volumes: dict[str, dict]) -> dict | None:
    """The git-sync init container as what it does: repository, ref, the path of the code in the main
    container. git-sync v3 (Arena): GIT_SYNC_REPO, GIT_SYNC_BRANCH (default master), GIT_SYNC_ROOT +
    GIT_SYNC_DEST; v4 (arena-helm): --repo/--ref/--root/--link flags or GITSYNC_* variables."""
    for init in pod.get("initContainers") or []:
        env = {e["name"]: e.get("value") for e in init.get("env") or []}
        args = dict(a[2:].split("=", 1) for a in [*(init.get("command") or []), *(init.get("args") or [])]
                    if a.startswith("--") and "=" in a)
        if "GIT_SYNC_REPO" in env:
            repo, ref = env["GIT_SYNC_REPO"], env.get("GIT_SYNC_BRANCH") or "master"
            root, dest = env.get("GIT_SYNC_ROOT", ""), env.get("GIT_SYNC_DEST", "")
        elif "repo" in args or "GITSYNC_REPO" in env:
            repo = args.get("repo", env.get("GITSYNC_REPO"))
            ref = args.get("ref", env.get("GITSYNC_REF", "HEAD"))
            root, dest = args.get("root", env.get("GITSYNC_ROOT", "")), args.get("link", env.get("GITSYNC_LINK", ""))
        else:
            continue
        # the init container's root is a volume; find where the main container mounts that volume
        init_mounts = {m["mountPath"]: m["name"] for m in init.get("volumeMounts") or []}
        volume = next((n for p, n in init_mounts.items() if root == p or root.startswith(p.rstrip("/") + "/")), None)
        path = None
        if volume is not None:
            inside = posixpath.relpath(root, next(p for p, n in init_mounts.items() if n == volume))
            for m in main.get("volumeMounts") or []:
                if m["name"] == volume:
                    path = posixpath.normpath(posixpath.join(m["mountPath"], inside, dest))
        return {"repository": repo, "ref": ref, "path": path}
    return None


def _files(container: dict, volumes: dict[str, dict], configmaps: dict[str, dict]) -> dict[str, str | None]:
    """The files the container sees from ConfigMaps: path -> content (None: the ConfigMap is not rendered)."""
    out: dict[str, str | None] = {}
    for m in container.get("volumeMounts") or []:
        source = (volumes.get(m["name"]) or {}).get("configMap")
        if source is None:
            continue
        data = configmaps.get(source.get("name"))
        keys = {i["key"]: i["path"] for i in source.get("items") or []} or {k: k for k in (data or {})}
        if m.get("subPath"):
            out[m["mountPath"]] = None if data is None else data.get(m["subPath"])
        else:
            for key, rel in keys.items():
                out[posixpath.join(m["mountPath"], rel)] = None if data is None else data.get(key)
    return out


def _role(pod_template: dict, kind: str, replicas: Any, restart_policy: Any,
          configmaps: dict[str, dict] | None = None) -> dict:
    meta = pod_template.get("metadata") or {}
    pod = pod_template.get("spec") or {}
    containers = pod.get("containers") or []
    main = next((c for c in containers if c.get("name") == MAIN_CONTAINER[kind]), containers[0] if containers else {})
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    ports = {p.get("name", ""): p["containerPort"] for p in main.get("ports") or []}
    defaults = OPERATOR_DEFAULTS.get(kind)
    if defaults:
        name, number = defaults["port"]
        ports.setdefault(name, number)
        restart_policy = restart_policy or defaults["restartPolicy"]
    return {
        "replicas": 1 if replicas is None and kind != "mpijob" else replicas,
        "restartPolicy": restart_policy,
        "image": main.get("image"),
        "imagePullPolicy": main.get("imagePullPolicy"),
        "command": [*(main.get("command") or []), *(main.get("args") or [])],
        "workingDir": main.get("workingDir"),
        "env": {e["name"]: e.get("value", "valueFrom:" + json.dumps(e.get("valueFrom"), sort_keys=True))
                for e in main.get("env") or []},
        "resources": _resources(main),
        "volumeMounts": _mounts(main, volumes),
        "configFiles": _files(main, volumes, configmaps or {}),
        "affinity": copy.deepcopy(pod.get("affinity") or {}),
        "nodeSelector": {k: str(v) for k, v in (pod.get("nodeSelector") or {}).items()},
        "tolerations": _tolerations(pod),
        "hostNetwork": bool(pod.get("hostNetwork")),
        "hostPID": bool(pod.get("hostPID")),
        "hostIPC": bool(pod.get("hostIPC")),
        "dnsPolicy": pod.get("dnsPolicy") or "ClusterFirst",
        "priorityClassName": pod.get("priorityClassName") or "",
        "schedulerName": pod.get("schedulerName") or "default-scheduler",
        "imagePullSecrets": sorted(s["name"] for s in pod.get("imagePullSecrets") or []),
        "podSecurityContext": copy.deepcopy(pod.get("securityContext") or {}),
        "securityContext": copy.deepcopy(main.get("securityContext") or {}),
        "automountServiceAccountToken": pod.get("automountServiceAccountToken"),
        "ports": ports,
        "codeSync": _code_sync(pod, main, volumes),
        "initContainers": [c.get("name") for c in pod.get("initContainers") or []],
        "labels": dict(meta.get("labels") or {}),
        "annotations": dict(meta.get("annotations") or {}),
    }


def arena_mpi_roles(job: dict, configmaps: dict[str, dict]) -> dict[str, dict]:
    """Normalization mpi-api-version: Arena's v1alpha1 MPIJob as the pods mpi-operator's v1alpha1 controller
    makes (kubeflow/mpi-operator v0.2.3 pkg/controllers/v1alpha1/mpi_job_controller.go): newLauncher copies the
    template, sets no resources and keeps restartPolicy Never (else OnFailure); newWorker copies it with
    spec.replicas replicas and sets the container's nvidia.com/gpu limit to the template's own (0, i.e. none,
    without --gpus). The operator's own additions (kubectl delivery init container, hostfile ConfigMap volume,
    OMPI_MCA_* variables) are not part of either chart and are left out."""
    spec = job["spec"]
    template = spec["template"]
    launcher_template = copy.deepcopy(template)
    launcher_container = launcher_template["spec"]["containers"][0]
    launcher_container.pop("resources", None)
    policy = template["spec"].get("restartPolicy")
    launcher = _role(launcher_template, "mpijob", 1, "Never" if policy == "Never" else "OnFailure", configmaps)
    worker = _role(copy.deepcopy(template), "mpijob", spec.get("replicas"), "Always", configmaps)
    return {"Launcher": launcher, "Worker": worker}


def _mpi_slots_v1alpha1(job: dict) -> int:
    # newConfigMap: SlotsPerWorker unset -> the template container's nvidia.com/gpu limit if > 0, else 1
    container = job["spec"]["template"]["spec"]["containers"][0]
    limit = ((container.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
    gpus = int(_quantity(limit)) if limit is not None else 0
    return gpus if gpus > 0 else 1


def _tensorboard(docs: list[dict], release: str) -> dict | None:
    deployments = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == f"{release}-tensorboard"]
    services = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == f"{release}-tensorboard"]
    if not deployments and not services:
        return None
    out: dict[str, Any] = {"objects": (len(deployments), len(services))}
    wanted = {"role", "release"}
    if deployments:
        dep = deployments[0]
        pod = dep["spec"]["template"]["spec"]
        container = pod["containers"][0]
        volumes = {v["name"]: v for v in pod.get("volumes") or []}
        argv = [*(container.get("command") or []), *(container.get("args") or [])]
        logdir = next((a.split("=", 1)[1] for a in argv if a.startswith("--logdir=")), None)
        if logdir is None and "--logdir" in argv:
            logdir = argv[argv.index("--logdir") + 1]
        source: tuple | None = None
        if logdir:
            mounts = sorted(container.get("volumeMounts") or [], key=lambda m: -len(m["mountPath"]))
            for m in mounts:
                base = m["mountPath"].rstrip("/")
                if logdir == base or logdir.startswith(base + "/"):
                    inside = posixpath.normpath(posixpath.join(m.get("subPath", ""), posixpath.relpath(logdir, base)))
                    source = (*_volume_source(volumes.get(m["name"])), "" if inside == "." else inside)
                    break
        out.update({
            "image": container.get("image"),
            "imagePullPolicy": container.get("imagePullPolicy"),
            "containerPorts": sorted(p["containerPort"] for p in container.get("ports") or []),
            "logdirSource": source,
            "deploymentLabels": _tracked(dep["metadata"].get("labels"), wanted),
            "podLabels": _tracked(dep["spec"]["template"]["metadata"].get("labels"), wanted),
            "podSecurityContext": copy.deepcopy(pod.get("securityContext") or {}),
            "securityContext": copy.deepcopy(container.get("securityContext") or {}),
            "automountServiceAccountToken": pod.get("automountServiceAccountToken"),
            "tolerations": _tolerations(pod),
            "priorityClassName": pod.get("priorityClassName"),
            "imagePullSecrets": sorted(s["name"] for s in pod.get("imagePullSecrets") or []),
        })
    if services:
        svc = services[0]
        out.update({
            "serviceType": svc["spec"].get("type") or "ClusterIP",
            "servicePorts": sorted(p["port"] for p in svc["spec"].get("ports") or []),
            "serviceLabels": _tracked(svc["metadata"].get("labels"), wanted),
        })
    return out


def model_of(docs: list[dict], case: Case, side: str) -> dict:
    """The semantic model of one side's render: {"Job": {...}, "roles": {role: {...}}, "TensorBoard": ...}."""
    jobs = [d for d in docs if d["kind"] == JOB_KINDS[case.kind]]
    assert len(jobs) == 1, [d["kind"] for d in docs]
    configmaps = {d["metadata"]["name"]: d.get("data") or {} for d in docs if d["kind"] == "ConfigMap"}
    job = jobs[0]
    spec = job["spec"]
    if side == "arena" and case.kind == "mpijob":
        assert job["apiVersion"] == "kubeflow.org/v1alpha1"
        roles = arena_mpi_roles(job, configmaps)
        run = {"cleanPodPolicy": spec.get("cleanPodPolicy"), "backoffLimit": spec.get("backoffLimit", 6),
               "activeDeadlineSeconds": spec.get("activeDeadlineSeconds"),
               "ttlSecondsAfterFinished": spec.get("ttlSecondsAfterFinished")}
        slots = _mpi_slots_v1alpha1(job)
    else:
        run_policy = spec.get("runPolicy") or {}
        if not spec.get("runPolicy") and side == "arena":
            run_policy = spec  # Arena's charts without trainingOperatorCRD put it at the top of the spec
        roles = {}
        for name, rs in (spec.get(REPLICA_KEYS[job["kind"]]) or {}).items():
            restart = rs.get("restartPolicy")
            if case.kind == "mpijob" and not restart:
                # mpi-operator v0.8.0 v2beta1 SetDefaults_MPIJob
                restart = "OnFailure" if name == "Launcher" else "Never"
            replicas = rs.get("replicas")
            if case.kind == "mpijob" and replicas is None:
                replicas = 1 if name == "Launcher" else 0
            roles[name] = _role(rs["template"], case.kind, replicas, restart, configmaps)
        if case.kind == "pytorchjob" and "Master" in roles:
            # training-operator v1.9 pkg/controller.v1/pytorch/envvar.go, setPodEnv: with a Master, every
            # container gets PET_NPROC_PER_NODE = spec.nprocPerNode (defaulted to "auto") appended after the
            # user's env, and the last of two variables of one name wins
            for role in roles.values():
                role["env"]["PET_NPROC_PER_NODE"] = spec.get("nprocPerNode") or "auto"
        backoff = run_policy.get("backoffLimit")
        if case.kind == "mpijob" and backoff is None:
            backoff = 6  # mpi-operator v0.8.0: the launcher Job's backoffLimit, defaulted by the Job API
        run = {"cleanPodPolicy": run_policy.get("cleanPodPolicy"), "backoffLimit": backoff,
               "activeDeadlineSeconds": run_policy.get("activeDeadlineSeconds"),
               "ttlSecondsAfterFinished": run_policy.get("ttlSecondsAfterFinished")}
        slots = spec.get("slotsPerWorker", 1) if case.kind == "mpijob" else None
    run["cleanPodPolicy"] = run["cleanPodPolicy"] or "None"  # the operators' default
    model_job: dict[str, Any] = {
        **run,
        "suspend": bool((spec.get("runPolicy") or {}).get("suspend")),
        "labels": dict(job["metadata"].get("labels") or {}),
        "annotations": dict(job["metadata"].get("annotations") or {}),
    }
    if case.kind == "tfjob":
        model_job["successPolicy"] = spec.get("successPolicy") or ""
    if slots is not None:
        model_job["slotsPerWorker"] = slots
    return {"Job": model_job, "roles": roles, "TensorBoard": _tensorboard(docs, case.name)}


def _restrict_metadata(model: dict, case: Case) -> None:
    labels = {*TRACKED_LABELS, *(s.split("=", 1)[0] for s in case.values("--label", "-l") if "=" in s)}
    annotations = {*TRACKED_ANNOTATIONS, *(s.split("=", 1)[0] for s in case.values("--annotation", "-a") if "=" in s)}
    for holder in _label_holders(model):
        holder["labels"] = _tracked(holder.get("labels"), labels)
        holder["annotations"] = _tracked(holder.get("annotations"), annotations)


def normalized_models(arena_docs: list[dict], helm_docs: list[dict], case: Case) -> tuple[dict, dict]:
    arena, helm = model_of(arena_docs, case, "arena"), model_of(helm_docs, case, "arena-helm")
    for model in (arena, helm):
        _restrict_metadata(model, case)
    for n in NORMALIZATIONS:
        n.apply(arena, helm, case)
    return arena, helm


# ===================================================================================================== diff
def _flatten(prefix: str, value: Any) -> dict[str, Any]:
    """Maps become dotted fields (so a diff names the env variable or resource); lists stay whole."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(f"{prefix}.{k}" if prefix else str(k), v))
        return out
    return {prefix: value}


_MISSING = "<absent>"


def differences(arena: dict, helm: dict) -> list[tuple[str, str, Any, Any]]:
    out = []
    sections = {"Job": (arena["Job"], helm["Job"]), "TensorBoard": (arena["TensorBoard"], helm["TensorBoard"])}
    for role in sorted({*arena["roles"], *helm["roles"]}):
        sections[role] = (arena["roles"].get(role), helm["roles"].get(role))
    for section, (a, h) in sections.items():
        if a is None or h is None:
            if a is not h:
                out.append((section, "(present)", a is not None, h is not None))
            continue
        fa, fh = _flatten("", a), _flatten("", h)
        for key in sorted({*fa, *fh}):
            va, vh = fa.get(key, _MISSING), fh.get(key, _MISSING)
            if va != vh:
                out.append((section, key, va, vh))
    return out


def _show(value: Any) -> str:
    if isinstance(value, Decimal):
        for exponent, suffix in ((40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")):
            if value >= 2**exponent and value % 2**exponent == 0:
                return f"{value // 2**exponent}{suffix}"
        return format(value.normalize(), "f")
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    if isinstance(value, str):
        return json.dumps(value) if any(c in value for c in "\n\t\r") or value != value.strip() else value
    return json.dumps(value, default=str)


def report(case: Case, diffs: list[tuple[str, str, Any, Any]]) -> str:
    lines = [f"{case.id}: arena submit {case.kind} {' '.join(case.argv)}",
             f"{len(diffs)} difference(s) not in NORMALIZATIONS (role | field | Arena | arena-helm):"]
    lines += [f"  {role} | {field} | {_show(a)} | {_show(h)}" for role, field, a, h in diffs]
    return "\n".join(lines)


# ==================================================================================================== tests
def test_the_cases_are_distinct():
    assert len(CASES) >= 18
    assert len({c.id for c in CASES}) == len(CASES)


def test_the_normalization_table_is_named_and_documented():
    names = [n.name for n in NORMALIZATIONS]
    assert len(set(names)) == len(names)
    sections = {line[3:].strip() for line in (REPO / "docs" / "compatibility.md").read_text().splitlines()
                if line.startswith("## ")}
    assert all(n.reason for n in NORMALIZATIONS)
    missing = sorted({n.doc_section for n in NORMALIZATIONS} - sections)
    assert not missing, (f"docs/compatibility.md has no section {missing}: the deliberate differences "
                         f"{[n.name for n in NORMALIZATIONS if n.doc_section in missing]} must be listed there")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_arena_parity(arena_side, cluster, mpi_crd, case, tmp_path):
    arena_docs = arena_side(case).docs
    helm_docs, refusal = render_arena_helm(cluster, mpi_crd, case, tmp_path)
    if helm_docs is None:
        pytest.fail(f"{case.id}: arena-helm refuses Arena's command line `arena submit {case.kind} "
                    f"{' '.join(case.argv)}`:\n{refusal}", pytrace=False)
    arena, helm = normalized_models(arena_docs, helm_docs, case)
    diffs = differences(arena, helm)
    if diffs:
        pytest.fail(report(case, diffs), pytrace=False)


def test_arena_hands_its_helm_a_values_file_and_the_config_files(arena_side):
    """What the recording helm saw of one case: Arena's own arguments (the values file, the namespace, the release,
    --set-file for each --config-file, the chart in $HOME/charts)."""
    run = arena_side(next(c for c in CASES if c.id == "pt-config-file"))
    values_file = run.helm_argv[2]
    assert re.fullmatch(re.escape(str(run.work)) + r"/values[0-9]+", values_file), values_file
    # pkg/argsbuilder/submit.go (setConfigFiles): the md5 of the container directory, its first 15 hex digits
    directory_key = hashlib.md5(b"/etc/train").hexdigest()[:15]
    assert run.helm_argv == ["template", "-f", values_file, "--namespace", run.namespace, "job",
                             "--set-file", f"configFiles.{directory_key}.config-0.content={run.work}/train-config.yaml",
                             f"{run.home}/charts/pytorchjob"]


# ============================================================================= the harness checks itself
NON_MPI_CASES = [c for c in CASES if c.kind != "mpijob"]


@pytest.mark.parametrize("case", NON_MPI_CASES, ids=[c.id for c in NON_MPI_CASES])
def test_the_harness_finds_no_difference_between_arena_and_itself(arena_side, case):
    """Arena's render read as if arena-helm had made it: no difference, so every difference a parity case
    reports comes from arena-helm's side (MPI excepted: the two sides are read as different API versions)."""
    docs = arena_side(case).docs
    arena, helm = normalized_models(docs, copy.deepcopy(docs), case)
    assert differences(arena, helm) == []


def test_the_harness_reports_each_planted_difference(arena_side):
    """One change per compared field family in a copy of Arena's render is reported once, by role and field,
    with both values; an equal value in another spelling (2Gi vs 2048Mi) is not a difference."""
    case = next(c for c in CASES if c.id == "pt-cpu-memory")
    docs = arena_side(case).docs
    planted = copy.deepcopy(docs)
    job = next(d for d in planted if d["kind"] == "PyTorchJob")
    master = job["spec"]["pytorchReplicaSpecs"]["Master"]
    pod = master["template"]["spec"]
    container = pod["containers"][0]
    container["env"] = [e for e in container["env"] if e["name"] != "gpus"] + [{"name": "EXTRA", "value": "1"}]
    container["resources"]["limits"]["memory"] = "4096Mi"  # the same quantity as 4Gi
    container["resources"]["limits"]["cpu"] = "3"
    container["command"] = ["bash", "-c", "python train.py"]
    master["restartPolicy"] = "OnFailure"
    pod["nodeSelector"] = {"pool": "gpu"}
    next(v for v in pod["volumes"] if v["name"] == "dshm")["emptyDir"]["sizeLimit"] = "1Gi"
    job["metadata"]["labels"]["release"] = "other"
    job["spec"]["runPolicy"]["backoffLimit"] = 2
    arena, helm = normalized_models(docs, planted, case)
    found = {(role, field): (a, h) for role, field, a, h in differences(arena, helm)}
    assert found == {
        ("Master", "env.gpus"): ("1", _MISSING),
        ("Master", "env.EXTRA"): (_MISSING, "1"),
        ("Master", "resources.limits.cpu"): (Decimal(2), Decimal(3)),
        ("Master", "command"): (["sh", "-c", "python train.py"], ["bash", "-c", "python train.py"]),
        ("Master", "restartPolicy"): ("Never", "OnFailure"),
        ("Master", "nodeSelector.pool"): (_MISSING, "gpu"),
        ("Master", "volumeMounts./dev/shm"): (("emptyDir", "Memory", Decimal(2**31), ""),
                                              ("emptyDir", "Memory", Decimal(2**30), "")),
        ("Job", "labels.release"): ("job", "other"),
        ("Job", "backoffLimit"): (0, 2),
    }
    text = report(case, differences(arena, helm))
    assert "  Master | volumeMounts./dev/shm | (emptyDir, Memory, 2Gi, ) | (emptyDir, Memory, 1Gi, )" in text


ARENA_GLOBAL_FLAGS = {"--arena-namespace", "--config", "--helm-binary", "--loglevel", "-n", "--namespace", "--pprof",
                      "--trace", "-h", "--help"}


@pytest.mark.parametrize("kind", ["tfjob", "pytorchjob", "mpijob"])
def test_every_arena_flag_is_an_arena_helm_flag(kind, tmp_path):
    """Every flag ``arena submit KIND --help`` lists (Arena's own binary; its global flags aside), short
    spellings included, is a flag of arena-helm's submit command of the same kind. (Arena hides its deprecated
    camelCase spellings from --help; the cases above submit them: tf-camel-case, pt-camel-case.)"""
    import typer.main

    from arena_helm.cli.submit import make_command

    proc = subprocess.run([str(kube_bin_dir(("arena",)) / "arena"), "submit", kind, "--help"], capture_output=True,
                          text=True, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=True)
    # a flag line: "  -a, --annotation stringArray     the annotations, ..." (the spellings, then the help text)
    spellings = [re.split(r"\s{2,}", line.strip(), maxsplit=1)[0] for line in proc.stdout.splitlines()
                 if line.startswith("  ")]
    theirs = {flag for words in spellings for flag in re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", words)}
    theirs -= ARENA_GLOBAL_FLAGS
    single = typer.Typer()
    single.command()(make_command(kind))
    ours = {o for p in typer.main.get_command(single).params for o in (*p.opts, *p.secondary_opts)}
    assert len(theirs) > 40
    assert sorted(theirs - ours) == []
