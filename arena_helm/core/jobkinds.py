"""The job kinds arena-helm knows: one frozen descriptor each, the single source of every per-kind fact.

Everything else (the submit commands and their aliases, ``-T/--type``, the API discovery, the replica-spec key
the read side looks into, the chart a release must come from, the operator named when a CRD is missing, the
defaults file's ``images`` keys, where a job keeps ``suspend``) is derived from ``KINDS``. Adding a kind is one
entry here, its module ``arena_helm/training/kinds/<key>.py`` (its spec, its chart's values model and its hooks:
``JobKindModule``, to which a type checker holds every kind's module in the repo tier) and its chart. Pure: no
pydantic, no kubernetes (the CLI imports this at start-up; a kind's module is imported on first use).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from .catalog import Api, Family
from .errors import UsageError


class JobKindModule(Protocol):
    """What a job kind's module (``arena_helm.training.kinds.<key>``) is: every member is there, none is looked up
    by name at run time. ``kind_values``: the kind's own chart values (its replica blocks and kind-only keys,
    over what every job sets: ``arena_helm.workload.job_values.build_values``); ``extra_env``: env it sets over
    the user's (``-e``); ``extra_annotations``: Arena's annotations of the kind; ``log_writer_selector``: the
    pod that writes TensorBoard's logs as matchExpressions, when not the first pod of the first of the kind's
    main roles (None: that one)."""

    def kind_values(self, spec: Any, /) -> dict[str, Any]: ...

    def extra_env(self, spec: Any, /) -> dict[str, str]: ...

    def extra_annotations(self, spec: Any, /) -> dict[str, str]: ...

    @property
    def log_writer_selector(self) -> Callable[[Any], list[dict[str, Any]]] | None: ...


@dataclass(frozen=True)
class Controller:
    """Who serves one API version of a kind whose versions come from different operators (``JobKindInfo
    .controllers``): its name, what ``doctor`` shows after the API, what to install, and the Lease it always holds
    (how ``doctor`` tells it runs when it has no webhook; "" for none)."""

    version: str
    name: str
    shown: str
    install: str
    lease: str = ""


@dataclass(frozen=True)
class JobKindInfo:
    """One job kind.

    key:            the CLI name (``submit tfjob``, ``-T tfjob``), the chart name and the defaults-file image key
    aliases:        other CLI names (``tf``)
    kind:           the Kubernetes kind (``TFJob``)
    group:          the API group
    versions:       the versions arena-helm can use, preferred first
    plural:         the resource name
    replica_key:    the key of the replica specs in the job's spec
    replica_types:  the replica types, in the order the read side shows them
    main_types:     replica types (lower case) whose first pod is the job's main instance (logs, attach)
    operator:       what to install when the cluster does not serve the kind
    spec:           ``module:Class`` of the spec (imported on first use)
    values:         ``module:Class`` of the chart's values model (its schema is the chart's values.schema.json)
    summary:        one line for ``submit --help``, with its article ("an MPIJob (...)")

    Read-side facts (the defaults are the Kubeflow training operators'):
    pod_job_label:   the pod label that carries the job's name
    pod_role_label:  the pod label that carries the replica type (the role)
    pod_index_label: the pod label that carries the pod's index within its role
    conditions:      (condition type, phase) pairs: the first condition that is True gives the phase
    nodes_key:       the key of a trainer block (``numNodes`` x ``resourcesPerNode``) in the spec, for a
                     kind without replica specs (Trainer v2's TrainJob)
    runtime_key:     the key of the reference to a training runtime in the spec (``runtimeRef``)
    suspend_key:     the dotted path of the job's suspend switch in its spec, also its chart's value
                     (``runPolicy.suspend``; a TrainJob's ``suspend``)
    webhook:         the name of the operator's own validating webhook for the kind ("" when it has none):
                     ``doctor`` takes it, registered and answering a dry run, as the operator running
    version_field:   the spec field that picks the API version, for a kind served by different operators in
                     different versions (MPIJob's ``mpi_api``)
    controllers:     who serves each version then (``Controller``)
    arena_metadata:  whether its pods carry Arena's labels, annotations and job-info env (a TrainJob's runtime
                     pods do not: its chart sets no job info)
    elastic_key:     the key of its elastic bounds in the spec (``elasticPolicy``: minReplicas, maxReplicas), also
                     its chart's value; "" when the kind has none
    scale_type:      the replica type ``scaleout``/``scalein`` change within those bounds (its chart's block is
                     the lower-cased name)
    """

    key: str
    aliases: tuple[str, ...]
    kind: str
    group: str
    versions: tuple[str, ...]
    plural: str
    replica_key: str
    replica_types: tuple[str, ...]
    main_types: tuple[str, ...]
    operator: str
    spec: str
    values: str
    summary: str
    pod_job_label: str = "training.kubeflow.org/job-name"
    pod_role_label: str = "training.kubeflow.org/replica-type"
    pod_index_label: str = "training.kubeflow.org/replica-index"
    conditions: tuple[tuple[str, str], ...] = (("Succeeded", "Succeeded"), ("Failed", "Failed"),
                                               ("Suspended", "Suspended"), ("Restarting", "Restarting"),
                                               ("Running", "Running"))
    nodes_key: str = ""
    runtime_key: str = ""
    suspend_key: str = "runPolicy.suspend"
    webhook: str = ""
    version_field: str = ""
    controllers: tuple[Controller, ...] = ()
    arena_metadata: bool = True
    elastic_key: str = ""
    scale_type: str = ""

    @property
    def chart(self) -> str:
        return self.key

    @property
    def family(self) -> Family:
        return Family.TRAINING

    @property
    def writes_restarting(self) -> bool:
        """Whether its operator says a job restarts (a Restarting condition); a TrainJob's does not: the read side
        tells it from the pods."""
        return any(phase == "Restarting" for _, phase in self.conditions)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def spec_class(self) -> type:
        return _load(self.spec)

    def module(self) -> JobKindModule:
        """The kind's module (``arena_helm.training.kinds.<key>``): its spec, values model and spec-to-values hooks,
        imported on first use (the repo tier's type check holds it to ``JobKindModule``)."""
        return cast(JobKindModule, importlib.import_module(self.spec.partition(":")[0]))

    def values_class(self) -> type:
        return _load(self.values)

    def suspend_patch(self, suspend: bool) -> dict:
        """``{"runPolicy": {"suspend": suspend}}``: the spec patch (and chart values) that sets the switch."""
        *parents, last = self.suspend_key.split(".")
        out: dict = {last: suspend}
        for key in reversed(parents):
            out = {key: out}
        return out

    def suspend_of(self, spec: dict):
        """The suspend switch's value in a job's ``spec`` (None when unset)."""
        node = spec
        for key in self.suspend_key.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        return node

    @property
    def apis(self) -> tuple[Api, ...]:
        """The API its chart makes the job of, one a version it can use (preferred first): the cluster serves one,
        from its operator (``controllers``' where each version has its own)."""
        return tuple(Api(self.group, v, self.kind, self.plural, c.install if (c := self.controller(v)) else self.operator,
                         self.webhook) for v in self.versions)

    def api_versions(self) -> tuple[str, ...]:
        return tuple(a.api_version for a in self.apis)

    def controller(self, version: str) -> Controller | None:
        """Who serves ``version`` of the kind, when its versions come from different operators."""
        return next((c for c in self.controllers if c.version == version), None)


def _load(ref: str):
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


TRAINING_OPERATOR = "the Kubeflow training operator (v1.7+)"
# The operators' webhook names: training-operator v1.9.3 manifests/base/webhook/manifests.yaml
# (validator.<kind>.training-operator.kubeflow.org; MPIJob v1 has none), Trainer v2.3.0
# manifests/base/webhook/manifests.yaml (validator.trainjob.trainer.kubeflow.org); mpi-operator v0.8.0 has none.

KINDS: tuple[JobKindInfo, ...] = (
    JobKindInfo(
        key="tfjob", aliases=("tf",), kind="TFJob", group="kubeflow.org", versions=("v1",), plural="tfjobs",
        replica_key="tfReplicaSpecs", replica_types=("Chief", "Master", "Worker", "PS", "Evaluator"),
        main_types=("chief", "master", "worker"), operator=TRAINING_OPERATOR, spec="arena_helm.training.kinds.tfjob:TFJobSpec",
        values="arena_helm.training.kinds.tfjob:TFJobValues",
        summary="a TFJob (one worker and no PS runs as a single Chief)",
        webhook="validator.tfjob.training-operator.kubeflow.org"
    ),
    JobKindInfo(
        key="pytorchjob", aliases=("pytorch", "py"), kind="PyTorchJob", group="kubeflow.org", versions=("v1",),
        plural="pytorchjobs", replica_key="pytorchReplicaSpecs", replica_types=("Master", "Worker"),
        main_types=("master", "worker"), operator=TRAINING_OPERATOR, spec="arena_helm.training.kinds.pytorchjob:PyTorchJobSpec",
        values="arena_helm.training.kinds.pytorchjob:PyTorchJobValues",
        summary="a PyTorchJob (Master + --workers - 1 Workers)",
        webhook="validator.pytorchjob.training-operator.kubeflow.org",
        # training-operator v1.9.3 pkg/apis/kubeflow.org/v1/pytorch_types.go ElasticPolicy; its CRD's scale
        # subresource is the Worker replicas
        elastic_key="elasticPolicy", scale_type="Worker",
    ),
    JobKindInfo(
        key="mpijob", aliases=("mpi", "mj"), kind="MPIJob", group="kubeflow.org", versions=("v2beta1", "v1"),
        plural="mpijobs", replica_key="mpiReplicaSpecs", replica_types=("Launcher", "Worker"),
        main_types=("launcher",),
        operator="the Kubeflow mpi-operator (v0.4+, kubeflow.org/v2beta1) or the training operator (kubeflow.org/v1)",
        spec="arena_helm.training.kinds.mpijob:MPIJobSpec", values="arena_helm.training.kinds.mpijob:MPIJobValues",
        summary="an MPIJob (--workers workers and one launcher)",
        # mpi-operator v0.8.0 has no webhook; it always holds the Lease mpi-operator (cmd/mpi-operator/app/server.go)
        version_field="mpi_api",
        controllers=(Controller("v2beta1", "mpi-operator", "mpi-operator", "the Kubeflow mpi-operator",
                                lease="mpi-operator"),
                     Controller("v1", "the training operator", "the training operator's MPIJob", TRAINING_OPERATOR)),
    ),
    # training-operator v1.9.3 pkg/apis/kubeflow.org/v1/jax_types.go: jaxReplicaSpecs, one replica type Worker
    JobKindInfo(
        key="jaxjob", aliases=("jax",), kind="JAXJob", group="kubeflow.org", versions=("v1",), plural="jaxjobs",
        replica_key="jaxReplicaSpecs", replica_types=("Worker",), main_types=("worker",),
        operator="the Kubeflow training operator (v1.9+, with its JAXJob scheme enabled)",
        spec="arena_helm.training.kinds.jaxjob:JAXJobSpec", values="arena_helm.training.kinds.jaxjob:JAXJobValues",
        summary="a JAXJob (--workers workers; worker 0 is the coordinator)",
        webhook="validator.jaxjob.training-operator.kubeflow.org"
    ),
    # training-operator v1.9.3 pkg/apis/kubeflow.org/v1/xgboost_types.go: xgbReplicaSpecs, Master and Worker
    JobKindInfo(
        key="xgboostjob", aliases=("xgboost", "xgb"), kind="XGBoostJob", group="kubeflow.org", versions=("v1",),
        plural="xgboostjobs", replica_key="xgbReplicaSpecs", replica_types=("Master", "Worker"),
        main_types=("master", "worker"), operator="the Kubeflow training operator (v1.9+, with its XGBoostJob scheme "
        "enabled)", spec="arena_helm.training.kinds.xgboostjob:XGBoostJobSpec",
        values="arena_helm.training.kinds.xgboostjob:XGBoostJobValues",
        summary="an XGBoostJob (Master + --workers - 1 Workers)",
        webhook="validator.xgboostjob.training-operator.kubeflow.org"
    ),
    # training-operator v1.9.3 pkg/apis/kubeflow.org/v1/paddlepaddle_types.go: paddleReplicaSpecs, Master (the
    # parameter servers, optional) and Worker; the workers' logs are the training's (worker 0 in either mode)
    JobKindInfo(
        key="paddlejob", aliases=("paddle",), kind="PaddleJob", group="kubeflow.org", versions=("v1",),
        plural="paddlejobs", replica_key="paddleReplicaSpecs", replica_types=("Master", "Worker"),
        main_types=("worker",), operator="the Kubeflow training operator (v1.9+, with its PaddleJob scheme enabled)",
        spec="arena_helm.training.kinds.paddlejob:PaddleJobSpec", values="arena_helm.training.kinds.paddlejob:PaddleJobValues",
        summary="a PaddleJob (--workers trainers, --servers parameter servers)",
        webhook="validator.paddlejob.training-operator.kubeflow.org"
    ),
    # Kubeflow Trainer v2: the TrainJob runs as a JobSet (kubeflow/trainer v2.3.0, pkg/constants/constants.go:
    # the trainer's replicated job and container are "node", an MPI runtime's launcher is "launcher"); the
    # JobSet controller labels every pod with its JobSet, replicated job and completion index
    # (kubernetes-sigs/jobset v0.12.0, api/jobset/v1alpha2/jobset_types.go). Conditions: Complete, Failed,
    # Suspended (kubeflow/trainer v2.3.0, pkg/apis/trainer/v1alpha1/trainjob_types.go).
    JobKindInfo(
        key="trainjob", aliases=("tj",), kind="TrainJob", group="trainer.kubeflow.org", versions=("v1alpha1",),
        plural="trainjobs", replica_key="", replica_types=("launcher", "node"), main_types=("launcher", "node"),
        operator="Kubeflow Trainer v2 (v2.3+, trainer.kubeflow.org/v1alpha1) and JobSet",
        spec="arena_helm.training.kinds.trainjob:TrainJobSpec", values="arena_helm.training.kinds.trainjob:TrainJobValues",
        summary="a TrainJob (Trainer v2: --workers nodes on --runtime)",
        pod_job_label="jobset.sigs.k8s.io/jobset-name", pod_role_label="jobset.sigs.k8s.io/replicatedjob-name",
        pod_index_label="batch.kubernetes.io/job-completion-index",
        conditions=(("Complete", "Succeeded"), ("Failed", "Failed"), ("Suspended", "Suspended")),
        nodes_key="trainer", runtime_key="runtimeRef", suspend_key="suspend",
        webhook="validator.trainjob.trainer.kubeflow.org", arena_metadata=False
    ),
)



@dataclass(frozen=True)
class JobPreset:
    """A submit command that makes a job of another kind with a framework's settings: Arena's ``horovodjob`` and
    ``deepspeedjob`` are MPIJobs here (mpi-operator's launcher and workers, its hostfile and SSH). Its spec is a
    subclass of the kind's (the kind's chart, values and read side; the preset adds its env and Arena's flags),
    so the job it makes is the kind's in every other command (``list`` shows the kind).

    key:     the CLI name (``submit horovodjob``), also the defaults file's image key
    aliases: other CLI names
    base:    the key of the kind it makes
    spec:    ``module:Class`` of its spec (a subclass of the kind's, imported on first use)
    summary: one line for ``submit --help``, with its article
    """

    key: str
    aliases: tuple[str, ...]
    base: str
    spec: str
    summary: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def spec_class(self) -> type:
        return _load(self.spec)


PRESETS: tuple[JobPreset, ...] = (
    JobPreset(key="horovodjob", aliases=("horovod", "hj"), base="mpijob",
              spec="arena_helm.training.kinds.horovodjob:HorovodJobSpec",
              summary="a Horovod job (an MPIJob: --workers workers, the launcher runs horovodrun or mpirun)"),
    JobPreset(key="deepspeedjob", aliases=("deepspeed", "dp"), base="mpijob",
              spec="arena_helm.training.kinds.deepspeedjob:DeepSpeedJobSpec",
              summary="a DeepSpeed job (an MPIJob: --workers workers, the launcher runs deepspeed)"),
)



@dataclass(frozen=True)
class RefusedKind:
    """One of Arena's submit commands arena-helm does not make a job for: ``submit <key> ...`` (any flags) exits 2
    with ``why``, which names what to use instead (Arena's aliases too: kubeflow/arena v0.15.5
    pkg/commands/training/submit_*.go)."""

    key: str
    aliases: tuple[str, ...]
    why: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)


REFUSED: tuple[RefusedKind, ...] = (
    RefusedKind("etjob", ("et",), "Alibaba's et-operator (its TrainingJob) is not an operator arena-helm runs; "
                "elastic training here is submit pytorchjob --min-workers N --max-workers M (the training "
                "operator's elasticPolicy), resized with arena-helm scaleout/scalein NAME --count N"),
    RefusedKind("volcanojob", ("vj",), "arena-helm makes no Volcano Job (batch.volcano.sh): Volcano is not a "
                "release it can build and test; install Volcano and submit with its vcctl, or gang-schedule a "
                "training kind here (submit tfjob|pytorchjob|mpijob ... --gang with scheduler-plugins, or "
                "--queue-name with Kueue)"),
    RefusedKind("rayjob", ("rj",), "not in this arena-helm yet (a KubeRay RayJob); submit it with KubeRay's "
                "kubectl ray job submit meanwhile"),
    RefusedKind("sparkjob", ("spark",), "not in this arena-helm yet (a SparkApplication of the Kubeflow Spark "
                "operator); apply a SparkApplication meanwhile"),
)
BY_REFUSED_NAME: dict[str, RefusedKind] = {name: r for r in REFUSED for name in r.names}

BY_KEY: dict[str, JobKindInfo] = {k.key: k for k in KINDS}
BY_KIND: dict[str, JobKindInfo] = {k.kind: k for k in KINDS}
BY_CHART: dict[str, JobKindInfo] = {k.chart: k for k in KINDS}  # a release's chart name -> the kind it makes
BY_NAME: dict[str, JobKindInfo] = {name: k for k in KINDS for name in k.names} | {
    name: BY_KEY[p.base] for p in PRESETS for name in p.names}  # -T horovodjob: the kind it makes
# what ``submit`` and ``fit`` take: every kind and every preset, by key
SUBMITTABLE: dict[str, JobKindInfo | JobPreset] = {t.key: t for t in (*KINDS, *PRESETS)}
REPLICA_KEYS: tuple[str, ...] = tuple(dict.fromkeys(k.replica_key for k in KINDS if k.replica_key))
POD_JOB_LABELS: tuple[str, ...] = tuple(dict.fromkeys(k.pod_job_label for k in KINDS))
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(k.group for k in KINDS))


def names_hint() -> str:
    keys = ", ".join(k.key for k in KINDS)
    aliases = ", ".join(a for k in KINDS for a in k.aliases)
    return f"{keys} (or {aliases})"


def lookup(name: str, flag: str = "-T/--type") -> JobKindInfo:
    """A kind from a CLI name or alias (any case); a usage error naming the flag otherwise."""
    info = BY_NAME.get(name.lower())
    if info is None:
        raise UsageError(f"{flag} {name!r}: use {names_hint()}")
    return info
