"""The job kinds arena-helm knows: one frozen descriptor each, the single source of every per-kind fact.

Everything else (the submit commands and their aliases, ``-T/--type``, the API discovery, the replica-spec key
the read side looks into, the chart a release must come from, the operator named when a CRD is missing, the
defaults file's ``images`` keys) is derived from ``KINDS``. Adding a kind is one entry here plus its chart and
its spec class. Pure: no pydantic, no kubernetes (the CLI imports this at start-up).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .errors import UsageError


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

    @property
    def chart(self) -> str:
        return self.key

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def spec_class(self):
        return _load(self.spec)

    def values_class(self):
        return _load(self.values)

    def api_versions(self) -> tuple[str, ...]:
        return tuple(f"{self.group}/{v}" for v in self.versions)


def _load(ref: str):
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


TRAINING_OPERATOR = "the Kubeflow training operator (v1.7+)"

KINDS: tuple[JobKindInfo, ...] = (
    JobKindInfo(
        key="tfjob", aliases=("tf",), kind="TFJob", group="kubeflow.org", versions=("v1",), plural="tfjobs",
        replica_key="tfReplicaSpecs", replica_types=("Chief", "Master", "Worker", "PS", "Evaluator"),
        main_types=("chief", "master", "worker"), operator=TRAINING_OPERATOR, spec="arena_helm.spec:TFJobSpec",
        values="arena_helm.chart_values:TFJobValues",
        summary="a TFJob (one worker and no PS runs as a single Chief)",
    ),
    JobKindInfo(
        key="pytorchjob", aliases=("pytorch", "py"), kind="PyTorchJob", group="kubeflow.org", versions=("v1",),
        plural="pytorchjobs", replica_key="pytorchReplicaSpecs", replica_types=("Master", "Worker"),
        main_types=("master", "worker"), operator=TRAINING_OPERATOR, spec="arena_helm.spec:PyTorchJobSpec",
        values="arena_helm.chart_values:PyTorchJobValues",
        summary="a PyTorchJob (Master + --workers - 1 Workers)",
    ),
    JobKindInfo(
        key="mpijob", aliases=("mpi",), kind="MPIJob", group="kubeflow.org", versions=("v2beta1", "v1"),
        plural="mpijobs", replica_key="mpiReplicaSpecs", replica_types=("Launcher", "Worker"),
        main_types=("launcher",),
        operator="the Kubeflow mpi-operator (v0.4+, kubeflow.org/v2beta1) or the training operator (kubeflow.org/v1)",
        spec="arena_helm.spec:MPIJobSpec", values="arena_helm.chart_values:MPIJobValues",
        summary="an MPIJob (--workers workers and one launcher)",
    ),
)

BY_KEY: dict[str, JobKindInfo] = {k.key: k for k in KINDS}
BY_KIND: dict[str, JobKindInfo] = {k.kind: k for k in KINDS}
BY_NAME: dict[str, JobKindInfo] = {name: k for k in KINDS for name in k.names}
REPLICA_KEYS: tuple[str, ...] = tuple(dict.fromkeys(k.replica_key for k in KINDS))
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(k.group for k in KINDS))


def by_kind(kind: str) -> JobKindInfo:
    return BY_KIND[kind]


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
