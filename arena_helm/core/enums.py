"""Choices shared by the specs and the command line (no pydantic here: the CLI imports it at start-up)."""

from __future__ import annotations

import enum


class ImagePullPolicy(str, enum.Enum):
    Always = "Always"
    IfNotPresent = "IfNotPresent"
    Never = "Never"


class CleanPodPolicy(str, enum.Enum):
    None_ = "None"
    Running = "Running"
    All = "All"


class SyncMode(str, enum.Enum):
    """Arena's sync modes that sync something (Arena's --sync-mode hdfs fails with "Unknown sync mode")."""

    git = "git"
    rsync = "rsync"


class MpiApi(str, enum.Enum):
    auto = "auto"
    v2beta1 = "v2beta1"
    v1 = "v1"


class SuccessPolicy(str, enum.Enum):
    ChiefWorker = "ChiefWorker"  # Arena's default: the operator's "" (the chief, else worker 0)
    AllWorkers = "AllWorkers"


class AffinityPolicy(str, enum.Enum):
    """Arena's --worker/--ps-affinity-policy: none, spread (pod anti-affinity) or binpack (pod affinity)."""

    none = "none"
    spread = "spread"
    binpack = "binpack"


class AffinityConstraint(str, enum.Enum):
    preferred = "preferred"
    required = "required"


class DryRunOutput(str, enum.Enum):
    manifests = "manifests"
    values = "values"


class SubmitOutput(str, enum.Enum):
    """``submit -o``: what --dry-run prints (manifests, values) or how --check answers (json, yaml)."""

    manifests = "manifests"
    values = "values"
    json = "json"
    yaml = "yaml"


class CheckOutput(str, enum.Enum):
    """``fit -o``: the answer as JSON or YAML instead of the table."""

    json = "json"
    yaml = "yaml"


class WorkspaceType(str, enum.Enum):
    """What a workspace runs: JupyterLab, VS Code in the browser (code-server), or a shell reached with
    ``workspace attach``."""

    jupyter = "jupyter"
    code_server = "code-server"
    shell = "shell"


class ViewOutput(str, enum.Enum):
    """``-o`` of the views that are a table or a document (top, doctor, data list, workspace list|get): a table,
    or the view as JSON or YAML."""

    table = "table"
    json = "json"
    yaml = "yaml"


class RuntimeKind(str, enum.Enum):
    """The kinds of Kubeflow Trainer v2 training runtime a TrainJob can reference."""

    ClusterTrainingRuntime = "ClusterTrainingRuntime"
    TrainingRuntime = "TrainingRuntime"


class ServiceType(str, enum.Enum):
    """How a TensorBoard's Service is reached."""

    ClusterIP = "ClusterIP"
    NodePort = "NodePort"
    LoadBalancer = "LoadBalancer"
