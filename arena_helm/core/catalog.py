"""The catalog: the facts on the ground floor that every layer may read without importing anything above it.

A *family* is a group of charts built the same way and shown together: the training jobs, the servings, the
workspaces, the standalone TensorBoards and the traffic splits. Every row a view shows carries its family (a
``JobView``'s ``family``), set by the code that makes the row; nothing tells families apart by a chart's or a
kind's name. Every kind of every family is a ``Kind`` (one typed protocol). Pure: imports nothing of the package
(a kind's models are imported by name on first use).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

# The labels every arena-helm chart sets on its objects and pods itself (charts/arena-common
# arena-common.reservedLabels says the same for a plain helm user): a user's -l/--label may not set them. A family
# whose chart sets more adds its own (the spec's OWNED_LABELS).
CHART_LABELS = frozenset({"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by",
                          "app.kubernetes.io/part-of", "helm.sh/chart", "app", "release", "chart", "heritage",
                          "createdBy", "kueue.x-k8s.io/queue-name"})

# The Role and ClusterRole a data scientist needs (doctor checks them; an error of a missing permission names it)
ROLE_DOC = "docs/rbac/arena-helm-user.yaml"


class Family(str, Enum):
    """The family of a chart and of the rows made from its release."""

    TRAINING = "training"
    SERVING = "serving"
    WORKSPACE = "workspace"
    TENSORBOARD = "tensorboard"
    TRAFFIC = "traffic-split"

    @property
    def title(self) -> str:
        """The name of the family's group in the GPU views (``top job``'s total lines, Arena's wording for the
        training jobs)."""
        return _TITLES[self]


_TITLES = {Family.TRAINING: "Training Jobs", Family.SERVING: "Servings", Family.WORKSPACE: "Workspaces",
           Family.TENSORBOARD: "TensorBoards", Family.TRAFFIC: "Traffic Splits"}


# The chart of each family that has one chart (the training and serving families have a chart a kind, named by
# their kinds' descriptors: arena_helm.core.jobkinds, arena_helm.core.servekinds).
FAMILY_CHART = {Family.WORKSPACE: "workspace", Family.TENSORBOARD: "tensorboard", Family.TRAFFIC: "traffic-split"}


def release_chart(release: dict) -> str:
    """The name of the chart a helm release was made from: its ``chart`` field is NAME-VERSION (``tfjob-0.1.0``)."""
    return str(release.get("chart", "")).rpartition("-")[0]


@dataclass(frozen=True)
class Api:
    """A custom API whose objects a kind's chart makes, served by a controller the cluster must run: its group,
    version, kind and resource, what to install where it is not served, and its controller's validating webhook
    ("" for none: a dry-run create through it tells that the controller runs). ``doctor`` checks it; the read side
    lists its objects."""

    group: str
    version: str
    kind: str
    plural: str
    install: str
    webhook: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def resource(self) -> tuple[str, str, str]:
        """(group, version, plural): what a LIST of its objects names."""
        return self.group, self.version, self.plural


class Kind(Protocol):
    """What every kind of every family is, whatever its family adds: its name on the command line, the chart it
    renders, its family, the spec model of its flags (None for a family that takes no spec: a standalone
    TensorBoard's few options), the values model of its chart (the source of the chart's values.schema.json) and
    the custom APIs its chart makes objects of (none: only Kubernetes' own; alternatives: the cluster serves one).
    A job kind's and a serving kind's module is held to its family's module contract too
    (``jobkinds.JobKindModule``, ``servekinds.ServeKindModule``: spec -> values and the read side's hooks).
    A job kind (``jobkinds.JobKindInfo``), a serving kind (``servekinds.ServeKind``) and each one-chart family
    (``OneChartKind``) are one; the repo tier checks it with mypy. ``chart_registry.ALL_KINDS`` lists them all."""

    @property
    def key(self) -> str: ...

    @property
    def chart(self) -> str: ...

    @property
    def family(self) -> Family: ...

    @property
    def apis(self) -> tuple[Api, ...]: ...

    def spec_class(self) -> type | None: ...

    def values_class(self) -> type: ...


@dataclass(frozen=True)
class OneChartKind:
    """The kind of a family that has one chart: its command, where its spec and values models live (``module``:
    ``spec`` and ``values`` are names in it; no ``spec`` for a family without one), imported on first use;
    ``apis``: the custom APIs its chart makes objects of, of which the cluster must serve one (alternatives)."""

    family: Family
    key: str
    module: str
    spec: str
    values: str
    apis: tuple[Api, ...] = ()

    @property
    def chart(self) -> str:
        return FAMILY_CHART[self.family]

    def spec_class(self) -> type | None:
        return getattr(importlib.import_module(self.module), self.spec) if self.spec else None

    def values_class(self) -> type:
        return getattr(importlib.import_module(self.module), self.values)


ONE_CHART_KINDS: tuple[OneChartKind, ...] = (
    OneChartKind(Family.WORKSPACE, "workspace", "arena_helm.workspace.workspaces", "WorkspaceSpec", "WorkspaceValues"),
    OneChartKind(Family.TENSORBOARD, "tensorboard", "arena_helm.workload.chart_values", "", "TensorBoardValues"),
    OneChartKind(Family.TRAFFIC, "traffic-split", "arena_helm.serving.traffic", "TrafficSplitSpec", "TrafficSplitValues",
                 apis=(Api("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes",
                           "the Gateway API's CRDs and a GAMMA mesh that applies HTTPRoutes"),
                       Api("networking.istio.io", "v1", "VirtualService", "virtualservices", "Istio"))),
)
