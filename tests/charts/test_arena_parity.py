"""Arena parity: for each Arena command line of CASES, Arena's own chart (tests/data/arena-charts, vendored
unchanged) rendered with the values Arena's Go builders would write (tests/support/arena_values.py) against
arena-helm's ``submit KIND ... --dry-run`` for the same command line, compared semantically per replica role.

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
container port, image and pull policy, the labels ``role`` and ``release``, and where its ``--logdir`` reads
from (volume source and path inside it).

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

Arena's side is what Arena's code computes with the machine's state fixed (arena_values.py: user
``kubecfg:basicauth:alice``, the uid md5 of it, root, an empty cluster so auto-selected ports start at 20000, a
CRD with runPolicy, no kube-batch); arena-helm gets a kubeconfig whose user is that basic-auth user ``alice``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from arena_values import ArenaUsageError, arena_values, parse_argv
from helmtools import REPO
from kubernetes.utils.quantity import parse_quantity
from typer.testing import CliRunner

from arena_helm.cli import app

ARENA_CHARTS = REPO / "tests" / "data" / "arena-charts"
NAMESPACE = "team-a"
BASIC_AUTH_USER = "alice"
ARENA_USER_NAME = f"kubecfg:basicauth:{BASIC_AUTH_USER}"  # pkg/apis/config/user.go, getUserName (basic auth)
GIT_URL = "https://github.com/kubeflow/arena.git"

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
    if helm["Job"].get("backoffLimit") == case.arena_flags["Retry"] and arena["Job"].get("backoffLimit") is None:
        helm["Job"]["backoffLimit"] = None


def _pytorch_no_retry(arena: dict, helm: dict, case: Case) -> None:
    if case.kind != "pytorchjob" or case.arena_flags["Retry"]:
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
    if case.arena_flags["TensorboardImage"]:
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

    @property
    def arena_flags(self) -> dict[str, Any]:
        return parse_argv(self.kind, self.command_line())[0]

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
def render_arena(helm: Path, case: Case) -> list[dict]:
    """Arena's chart with the values Arena writes (workflow.SubmitJob -> helm.GenerateHelmTemplate: an install
    dry-run with release = job name; the same manifests as ``helm template``), and the ``--set-file`` options of
    --config-file, as Arena gives them to a helm binary (without one, Arena's files are empty: see
    arena_values)."""
    name = case.arena_flags["Name"]
    with tempfile.TemporaryDirectory() as tmp:
        values, set_files = arena_values(case.kind, case.command_line(config_file(Path(tmp))),
                                         username=ARENA_USER_NAME)
        path = Path(tmp) / "values.json"
        path.write_text(json.dumps(values, ensure_ascii=False), encoding="utf-8")
        options = [word for option in set_files for word in option.split(" ", 1)]
        proc = subprocess.run([str(helm), "template", name, str(ARENA_CHARTS / case.kind), "--namespace", NAMESPACE,
                               "--values", str(path), *options], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- name: parity
  cluster: {{server: "https://127.0.0.1:6443"}}
users:
- name: {BASIC_AUTH_USER}
  user: {{username: {BASIC_AUTH_USER}, password: parity}}
contexts:
- name: parity
  context: {{cluster: parity, user: {BASIC_AUTH_USER}, namespace: {NAMESPACE}}}
current-context: parity
"""


def render_arena_helm(helm: Path, case: Case, tmp_path: Path) -> tuple[list[dict] | None, str]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG, encoding="utf-8")
    res = CliRunner().invoke(app, ["submit", case.kind, "--kubeconfig", str(kubeconfig), "-n", NAMESPACE,
                                   "--helm-binary", str(helm), "--dry-run", *case.command_line(config_file(tmp_path))])
    if res.exit_code != 0:
        return None, res.output
    return [d for d in yaml.safe_load_all(res.stdout) if d], ""


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
    return {"Job": model_job, "roles": roles, "TensorBoard": _tensorboard(docs, case.arena_flags["Name"])}


def _restrict_metadata(model: dict, case: Case) -> None:
    flags = case.arena_flags
    labels = {*TRACKED_LABELS, *(s.split("=", 1)[0] for s in flags["label"] if "=" in s)}
    annotations = {*TRACKED_ANNOTATIONS, *(s.split("=", 1)[0] for s in flags["annotation"] if "=" in s)}
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
def test_the_cases_are_arena_command_lines():
    """Every case is a command line Arena accepts (arena_values raises ArenaUsageError like Arena refuses)."""
    assert len(CASES) >= 18
    assert len({c.id for c in CASES}) == len(CASES)
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            arena_values(case.kind, case.command_line(config_file(Path(tmp))))


def test_the_normalization_table_is_named_and_documented():
    names = [n.name for n in NORMALIZATIONS]
    assert len(set(names)) == len(names)
    sections = {line[3:].strip() for line in (REPO / "docs" / "compatibility.md").read_text().splitlines()
                if line.startswith("## ")}
    assert all(n.reason for n in NORMALIZATIONS)
    missing = sorted({n.doc_section for n in NORMALIZATIONS} - sections)
    assert not missing, (f"docs/compatibility.md has no section {missing}: the deliberate differences "
                         f"{[n.name for n in NORMALIZATIONS if n.doc_section in missing]} must be listed there")


def test_arena_refuses_what_arena_refuses():
    """The port is strict where Arena is: unknown flags (arena-helm's own spellings), MPI's missing flags, a
    sync mode without source."""
    refused = [("tfjob", [*TF, "--cpu", "1", *CMD]), ("mpijob", [*MPI, "--share-memory", "1Gi", *CMD]),
               ("mpijob", [*MPI, "--running-timeout", "1h", *CMD]), ("pytorchjob", [*PT, "--host-network", *CMD]),
               ("pytorchjob", [*PT, "--sync-mode", "git", *CMD]), ("tfjob", [*TF]),
               ("pytorchjob", [*PT, "--queue", "q1", "--sync-branch", "dev", *CMD])]
    for kind, argv in refused:
        with pytest.raises(ArenaUsageError):
            arena_values(kind, argv)


def test_arena_values_follow_the_go_builders():
    """Spot checks of the port against the Go code (file: function)."""
    v, _ = arena_values("tfjob", [*TF, *CMD], username=ARENA_USER_NAME)
    # submit_tfjob.go setStandaloneMode + transform: one worker, no PS -> Chief on the first free port
    assert (v["workers"], v["chief"], v["usechief"], v["chiefPort"]) == (0, 1, True, 20000)
    assert v["annotations"]["arena.kubeflow.org/disable-tf-config"] == "true"
    # submit.go setJobInfoToEnv runs before setStandaloneMode: workers=1
    assert v["envs"] == {"workers": "1", "gpus": "0", "NVIDIA_VISIBLE_DEVICES": "void"}
    # arenaconfig.go: the user id is the md5 of the user name
    assert v["labels"]["arena.kubeflow.org/uid"] == hashlib.md5(ARENA_USER_NAME.encode()).hexdigest()
    v, _ = arena_values("pytorchjob", [*PT, "--workers", "3", "--gang", *CMD])
    # training/submit_pytorchjob.go: WorkerCount - 1 after the build; the pod group counts the given 3
    assert (v["workers"], v["podGroupMinAvailable"], v["podGroupName"]) == (2, "3", "pytorchjob-job")
    assert v["annotations"]["requestGPUsOfJobOwner"] == "0" and v["shareMemory"] == "2Gi"
    v, _ = arena_values("mpijob", [*MPI, "--gpus", "2", *CMD])
    assert (v["cleanPodPolicy"], v["workers"], v["annotations"]["requestGPUsOfJobOwner"]) == ("All", 1, "2")
    v, _ = arena_values("pytorchjob", [*PT, "--toleration", "a=b:NoSchedule", "--toleration", "all", "--toleration",
                                       "c=d:NoExecute,Equal", *CMD])
    # parseTolerationString needs '=', ':' and ','; "all" ends the list
    assert v["tolerations"] == [{"operator": "Exists"}]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_arena_parity(helm_bin, case, tmp_path):
    arena_docs = render_arena(helm_bin, case)
    helm_docs, refusal = render_arena_helm(helm_bin, case, tmp_path)
    if helm_docs is None:
        pytest.fail(f"{case.id}: arena-helm refuses Arena's command line `arena submit {case.kind} "
                    f"{' '.join(case.argv)}`:\n{refusal}", pytrace=False)
    arena, helm = normalized_models(arena_docs, helm_docs, case)
    diffs = differences(arena, helm)
    if diffs:
        pytest.fail(report(case, diffs), pytrace=False)


# ============================================================================= the harness checks itself
NON_MPI_CASES = [c for c in CASES if c.kind != "mpijob"]


@pytest.mark.parametrize("case", NON_MPI_CASES, ids=[c.id for c in NON_MPI_CASES])
def test_the_harness_finds_no_difference_between_arena_and_itself(helm_bin, case):
    """Arena's render read as if arena-helm had made it: no difference, so every difference a parity case
    reports comes from arena-helm's side (MPI excepted: the two sides are read as different API versions)."""
    docs = render_arena(helm_bin, case)
    arena, helm = normalized_models(docs, copy.deepcopy(docs), case)
    assert differences(arena, helm) == []


def test_the_harness_reports_each_planted_difference(helm_bin):
    """One change per compared field family in a copy of Arena's render is reported once, by role and field,
    with both values; an equal value in another spelling (2Gi vs 2048Mi) is not a difference."""
    case = next(c for c in CASES if c.id == "pt-cpu-memory")
    docs = render_arena(helm_bin, case)
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


@pytest.mark.parametrize("kind", ["tfjob", "pytorchjob", "mpijob"])
def test_every_arena_flag_is_an_arena_helm_flag(kind):
    """Every flag of Arena's submit command (the port's tables, read from pkg/argsbuilder/submit*.go), its
    deprecated camelCase spellings included, is a flag of arena-helm's submit command of the same kind."""
    import typer.main
    from arena_values import arena_flags

    from arena_helm.cli.submit import make_command

    single = typer.Typer()
    single.command()(make_command(kind))
    ours = {o for p in typer.main.get_command(single).params for o in (*p.opts, *p.secondary_opts)}
    theirs = {f"--{name}" for name in arena_flags(kind)}
    assert len(theirs) > 40
    assert sorted(theirs - ours) == []
