"""The values of the ``trainjob`` chart (a Kubeflow Trainer v2 TrainJob) as typed pydantic models.

The one source of the chart's values contract, in the style of :mod:`arena_helm.chart_values`: camelCase keys
(the ones the templates read), unknown keys refused, a description per field, every grammar a type of
:mod:`arena_helm.k8s`. :func:`schema` is the chart's ``values.schema.json``; ``python -m
arena_helm.trainjob_values [--check]`` writes (or checks) it. What Trainer v2.3.0 cannot take is not a value
here: the TrainJob's pod settings go through ``spec.runtimePatches``, whose pod spec has no priorityClassName,
schedulerName, hostNetwork, imagePullPolicy, workingDir or new init containers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .k8s import AbsPath, DNSSubdomain, EnvName, Image, LabelKey, Quantity, QueueName

DRAFT = "http://json-schema.org/draft-07/schema#"
SCHEMA_FILE = Path(__file__).resolve().parent.parent / "charts" / "trainjob" / "values.schema.json"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
MAX_NODES = 1000


class ValuesModel(BaseModel):
    """A block of chart values: camelCase keys, unknown keys refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RuntimeRef(ValuesModel):
    name: DNSSubdomain = Field("torch-distributed", description="Name of the ClusterTrainingRuntime or "
                               "TrainingRuntime (e.g. torch-distributed, deepspeed-distributed).")
    kind: Literal["ClusterTrainingRuntime", "TrainingRuntime"] = Field(
        "ClusterTrainingRuntime", description="ClusterTrainingRuntime (cluster-wide) or TrainingRuntime (in the "
        "job's namespace).")


class EnvVar(ValuesModel):
    name: EnvName = Field(description="Variable name.")
    value: str = Field("", description="Variable value (a string).")


class ResourceList(ValuesModel):
    cpu: Quantity | None = Field(None, description="CPU, e.g. 4 or \"500m\".")
    memory: Quantity | None = Field(None, description="Memory, e.g. \"16Gi\".")
    ephemeral_storage: Quantity | None = Field(None, alias="ephemeral-storage",
                                               description="Local ephemeral storage, e.g. \"20Gi\".")


class Resources(ValuesModel):
    requests: ResourceList | None = Field(None, description="What the scheduler reserves for each node.")
    limits: ResourceList | None = Field(None, description="The most each node may use.")


class DataVolume(ValuesModel):
    claim_name: DNSSubdomain = Field(description="Name of the PersistentVolumeClaim.")
    mount_path: AbsPath = Field(description="Where the claim is mounted in the trainer container.")
    read_only: bool = Field(False, description="Mount read-only.")
    sub_path: str = Field("", description="Sub-directory of the volume to mount; \"\" = its root.")


class HostPathVolume(ValuesModel):
    path: AbsPath = Field(description="Directory on the node.")
    mount_path: AbsPath = Field(description="Where it is mounted in the trainer container.")
    read_only: bool = Field(False, description="Mount read-only.")


class Toleration(ValuesModel):
    key: LabelKey | Literal[""] | None = Field(None, description="Taint key (empty matches every key, with "
                                               "Exists).")
    operator: Literal["Exists", "Equal"] | None = Field(None, description="Exists or Equal (the default).")
    value: str | None = Field(None, description="Taint value to match (with Equal).")
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] | None = Field(
        None, description="Taint effect to match; empty matches all.")
    toleration_seconds: int | None = Field(None, description="How long a NoExecute taint is tolerated.")


class Affinity(ValuesModel):
    node_affinity: dict[str, Any] | None = Field(None, description="Kubernetes NodeAffinity, passed through.")
    pod_affinity: dict[str, Any] | None = Field(None, description="Kubernetes PodAffinity, passed through.")
    pod_anti_affinity: dict[str, Any] | None = Field(None, description="Kubernetes PodAntiAffinity, passed "
                                                     "through.")


Count = Annotated[int, Field(ge=0)]


class TrainJobValues(ValuesModel):
    """The values of ``charts/trainjob``."""

    name_override: Literal[""] | DNSSubdomain = Field("", description="Name of the TrainJob (and of its JobSet); "
                                                      "\"\" = the release name.")
    runtime: RuntimeRef = Field(default_factory=RuntimeRef, description="The training runtime the TrainJob runs "
                                "on (spec.runtimeRef).")
    image: Literal[""] | Image = Field("", description="Image of the trainer nodes (spec.trainer.image); \"\" = "
                                       "the runtime's image.")
    command: str = Field("", description="The training command, run as [<shell>, \"-c\", <command>] byte for "
                         "byte; \"\" = the runtime's command.")
    shell: Annotated[str, Field(min_length=1, pattern=r"^\S+$")] = Field("sh", description="Shell that runs the "
                                                                         "command.")
    env: list[EnvVar] = Field(default_factory=list, description="Environment of the trainer container "
                              "(spec.trainer.env): a list of {name, value}.")
    num_nodes: Annotated[int, Field(ge=1, le=MAX_NODES)] = Field(1, description="Number of training nodes "
                                                                 "(spec.trainer.numNodes).")
    num_proc_per_node: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Processes per node (spec.trainer.numProcPerNode); null = the runtime's (torch: auto).")
    gpus: Count = Field(0, description="nvidia.com/gpu per node, in requests and limits; with 0, "
                        "NVIDIA_VISIBLE_DEVICES=void.")
    devices: dict[LabelKey, Count] = Field(default_factory=dict, description="Other extended resources per node, "
                                           "name to count (e.g. amd.com/gpu: 1), in requests and limits.")
    resources: Resources = Field(default_factory=Resources, description="CPU/memory requests and limits per node "
                                 "(spec.trainer.resourcesPerNode; GPUs and devices are added).")
    shm_size: Literal[""] | Quantity = Field("", description="Size of a memory-backed /dev/shm (e.g. \"8Gi\"); "
                                             "\"\" = the runtime's.")
    data: list[DataVolume] = Field(default_factory=list, description="PersistentVolumeClaims mounted into the "
                                   "trainer container.")
    host_paths: list[HostPathVolume] = Field(default_factory=list, description="Node directories mounted into the "
                                             "trainer container.")
    node_selector: dict[LabelKey, str] = Field(default_factory=dict, description="Node labels every pod must "
                                               "match (a runtime patch of the pod spec).")
    tolerations: list[Toleration] = Field(default_factory=list, description="Tolerations of every pod (a runtime "
                                          "patch of the pod spec).")
    affinity: Affinity = Field(default_factory=Affinity, description="Affinity of every pod (a runtime patch of "
                               "the pod spec).")
    service_account_name: Literal[""] | DNSSubdomain = Field("", description="ServiceAccount of the pods; \"\" = "
                                                             "the runtime's.")
    image_pull_secrets: list[DNSSubdomain] = Field(default_factory=list, description="Names of image pull Secrets "
                                                   "in the job's namespace.")
    labels: dict[LabelKey, str] = Field(default_factory=dict, description="Extra labels on the TrainJob and on "
                                        "every pod.")
    annotations: dict[LabelKey, str] = Field(default_factory=dict, description="Extra annotations on the TrainJob "
                                             "and on every pod.")
    queue: Literal[""] | QueueName = Field("", description="Kueue LocalQueue; \"\" = none. Sets the label "
                                           "kueue.x-k8s.io/queue-name on the TrainJob.")
    suspend: bool = Field(False, description="Create the TrainJob suspended (spec.suspend): no pods until it is "
                          "resumed.")
    active_deadline_seconds: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Fail the TrainJob after this many seconds (spec.activeDeadlineSeconds); null = no "
        "deadline.")
    replicated_jobs: Annotated[list[DNSSubdomain], Field(min_length=1)] = Field(
        default_factory=lambda: ["node"], description="The runtime's replicated jobs whose pods get the volumes, "
        "placement, labels and pull secrets.")
    container: DNSSubdomain = Field("node", description="The trainer container of those pods (Trainer v2's "
                                    "\"node\"); it gets the volume mounts.")
    global_: dict[str, Any] = Field(None, alias="global", description="Helm's global values, shared with "
                                           "every subchart. Unused by this chart.")
    arena_common: dict[str, Any] = Field(None, alias="arena-common", description="The arena-common library "
                                                "chart's values (helm adds them). Unused.")


# ---- the JSON schema -------------------------------------------------------------------------------
def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Resolve ``$ref`` into ``$defs`` (helm's schema loader and the README generator read plain schemas)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **rest}
        return {k: _inline(v, defs) for k, v in node.items() if k not in ("$defs", "title")}
    if isinstance(node, list):
        return [_inline(i, defs) for i in node]
    return node


def _tidy(node: Any) -> Any:
    """Objects with properties refuse unknown keys; an ``anyOf`` also says the union of its members' types."""
    if isinstance(node, list):
        return [_tidy(i) for i in node]
    if not isinstance(node, dict):
        return node
    node = {k: _tidy(v) for k, v in node.items()}
    kinds = [m.get("type") for m in node.get("anyOf", ())]
    if kinds and all(isinstance(k, str) for k in kinds) and "type" not in node:
        unique = list(dict.fromkeys(kinds))
        node["type"] = unique[0] if len(unique) == 1 else unique
    if "properties" in node:
        node.setdefault("type", "object")
        node.setdefault("additionalProperties", False)
        node.pop("required", None) if not node.get("required") else None
    return node


def schema() -> dict[str, Any]:
    """The chart's ``values.schema.json`` (draft-07), from :class:`TrainJobValues`."""
    raw = TrainJobValues.model_json_schema(by_alias=True, mode="validation")
    out = _tidy(_inline(raw, raw.get("$defs", {})))
    out.pop("description", None)
    return {"$schema": DRAFT, "title": "Values of the trainjob chart (a Kubeflow Trainer v2 TrainJob)",
            **{k: v for k, v in out.items() if k != "required"}}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``charts/trainjob/values.schema.json``; with ``--check`` exit 1 if the committed one differs."""
    from .generated import parse_args, write_or_check

    args = parse_args("Write charts/trainjob/values.schema.json.", "schema", argv)
    return write_or_check([(SCHEMA_FILE, schema_text())], check=args.check,
                          rerun="python -m arena_helm.trainjob_values")


if __name__ == "__main__":
    raise SystemExit(main())
