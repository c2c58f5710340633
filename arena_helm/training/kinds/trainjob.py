"""TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2): its spec, its chart's values model and its
spec-to-values.

The values model is built from the blocks every job chart shares (:mod:`arena_helm.workload.chart_values`); what
Trainer v2.3.0 cannot take is not a value: the TrainJob's pod settings go through ``spec.runtimePatches``, whose
pod spec has no priorityClassName, schedulerName, hostNetwork, imagePullPolicy, workingDir or new init
containers.
"""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ...core.enums import CleanPodPolicy, ImagePullPolicy, RuntimeKind
from ...core.grammars import AbsPath, Deadline, DNSSubdomain, Image, LabelKey, LabelValue, Quantity, QueueName
from ...workload.job_values import no_extra, resources, values_models
from ...workload.spec import HELM_RELEASE_MAX, MAX_REPLICAS, NAME_MAX, Gpus, JobSpec, Replica, flag_of_field, opt


class TrainJobSpec(JobSpec):
    """A Kubeflow Trainer v2 TrainJob (``trainer.kubeflow.org/v1alpha1``): --workers nodes on a training runtime
    (``--runtime``, a ClusterTrainingRuntime or a TrainingRuntime of the namespace). --gpus, --cpu, --memory
    and --device are per node; the CPU and memory limits equal the requests, as Arena does for PyTorchJobs.

    Trainer v2.3.0 takes the pod settings only through the TrainJob's ``runtimePatches``, whose pod spec has no
    priorityClassName, schedulerName, hostNetwork, workingDir, imagePullPolicy or new (init) containers, and the
    TrainJob has no retry, TTL or clean-pod policy: the flags for those are refused (one line each).
    """

    kind: ClassVar[str] = "trainjob"
    COMMAND_OPTIONAL: ClassVar[bool] = True  # no command: the runtime's

    runtime: DNSSubdomain = opt("Training runtime: torch-distributed, deepspeed-distributed, jax-distributed, "
                                "... or any runtime the cluster serves.", "torch-distributed", values="runtime.name")
    runtime_kind: RuntimeKind = opt("ClusterTrainingRuntime (cluster-wide) or TrainingRuntime (in the namespace).",
                                    RuntimeKind.ClusterTrainingRuntime, values="runtime.kind")
    gpus: Gpus = opt("GPUs (nvidia.com/gpu) per node.", 0)
    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt("Training nodes (numNodes).", 1)
    cpu: Quantity | None = opt("CPU per node (e.g. 4, 500m): request and limit.")
    memory: Quantity | None = opt("Memory per node (e.g. 16Gi): request and limit.")
    nproc_per_node: Annotated[int, Field(ge=1, le=1024)] | None = opt(
        "Processes per node (numProcPerNode); default: the runtime's (torch: auto).", values="numProcPerNode")
    suspend: bool = opt("Create the TrainJob suspended (no pods until it is resumed).", False, values="suspend")
    # shared flags whose meaning differs on a TrainJob (or that Trainer v2.3 cannot carry: refused below)
    image: Image | None = opt("Trainer image (default: the runtime's).", values="image")
    running_timeout: Deadline | None = opt(
        "Fail the job if it runs longer than this (e.g. 2h).", values="activeDeadlineSeconds")
    image_pull_policy: ImagePullPolicy | None = opt("Not available on a TrainJob (the runtime's pull policy "
                                                    "applies).")
    clean_task_policy: CleanPodPolicy | None = opt("Not available on a TrainJob.")
    working_dir: AbsPath | None = opt("Not available on a TrainJob.")
    share_memory: Quantity | None = opt("Size of a memory-backed /dev/shm (e.g. 2Gi).", values="shmSize")

    # (flag field, why a TrainJob cannot take it)
    UNSUPPORTED: ClassVar[tuple[tuple[str, str], ...]] = (
        ("priority", "Trainer v2.3's runtime patches have no priorityClassName: set it in the runtime's pod "
                     "template (with Kueue: --label kueue.x-k8s.io/priority-class=NAME)"),
        ("scheduler", "Trainer v2.3's runtime patches have no schedulerName: set it in the runtime's pod template"),
        ("host_network", "Trainer v2.3's runtime patches have no hostNetwork: set it in the runtime's pod template"),
        ("working_dir", "Trainer v2.3 cannot set the trainer's working directory: cd in the command"),
        ("image_pull_policy", "Trainer v2.3 cannot set the trainer's pull policy: the runtime's applies"),
        ("retry", "a TrainJob has no backoffLimit: set it in the runtime's Job template"),
        ("ttl_after_finished", "a TrainJob has no TTL: set ttlSecondsAfterFinished in the runtime's JobSet"),
        ("clean_task_policy", "a TrainJob has no clean-pod policy"),
        ("sync_mode", "Trainer v2.3 cannot add a git-sync init container: put the code in the image or on a "
                      "--data PVC"),
        ("sync_source", "Trainer v2.3 cannot add a git-sync init container: put the code in the image or on a "
                        "--data PVC"),
        ("tensorboard", "TensorBoard is not offered with a TrainJob: run arena-helm tensorboard on the logs' PVC"),
        ("config_file", "arena-helm's trainjob chart mounts no ConfigMap: put the file on a --data PVC"),
        ("host_ipc", "Trainer v2.3's runtime patches have no hostIPC: set it in the runtime's pod template"),
        ("host_pid", "Trainer v2.3's runtime patches have no hostPID: set it in the runtime's pod template"),
        ("rdma", "Trainer v2.3's runtime patches cannot add capabilities: set them in the runtime"),
        ("queue", "kube-queue does not know TrainJobs: use --queue-name (Kueue)"),
        ("env_from", "Trainer v2.3's trainer and runtime patches have no envFrom: give each variable with "
                     "--env-from-secret NAME=SECRET[:KEY]"),
    )

    @model_validator(mode="before")
    @classmethod
    def _unsupported(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, why in cls.UNSUPPORTED:
                value = data.get(name)
                if value not in (None, False, "", [], {}):
                    raise ValueError(f"{flag_of_field(name)} cannot be used with a TrainJob: {why}")
        return data

    def replicas(self) -> dict[str, Replica]:
        return {"node": Replica(replicas=self.workers, image=self.image or f"(the {self.runtime} runtime's image)",
                                gpus=self.gpus, cpu=self.cpu, memory=self.memory, cpu_limit=self.cpu,
                                memory_limit=self.memory, devices=True)}

    def _check_name(self) -> None:
        # JobSet names a pod's hostname <jobset>-<replicated job>-<job index>-<pod index> (a DNS label); the
        # longest replicated job of the default runtimes is "launcher".
        longest = len(f"-launcher-0-{self.workers - 1}")
        limit = min(HELM_RELEASE_MAX, NAME_MAX - longest)
        if len(self.name) > limit:
            raise ValueError(f"--name: job name {self.name!r} is {len(self.name)} characters; at most {limit} fit "
                             "a TrainJob (its JobSet's pod host names and the helm release name have length limits)")

# ---- the chart's values model -------------------------------------------------------------------------
MAX_NODES = 1000


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import (
        ArenaCommonValues,
        Count,
        DataVolume,
        Empty,
        EnvVar,
        HostPathVolume,
        PodLevelValues,
        Provenance,
        Resources,
        SecretNames,
        SecretVolume,
        ValuesModel,
        arena_common_field,
        global_field,
        provenance_field,
    )

    class RuntimeRef(ValuesModel):
        name: DNSSubdomain = Field("torch-distributed", description="Name of the ClusterTrainingRuntime or "
                                   "TrainingRuntime (e.g. torch-distributed, deepspeed-distributed).")
        kind: Literal["ClusterTrainingRuntime", "TrainingRuntime"] = Field(
            "ClusterTrainingRuntime", description="ClusterTrainingRuntime (cluster-wide) or TrainingRuntime (in the "
            "job's namespace).")

    class TrainJobValues(PodLevelValues):
        """Values of the trainjob chart: one Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1)."""

        global_: dict[str, Any] = global_field()
        arena_common: ArenaCommonValues = arena_common_field()
        name_override: Empty | DNSSubdomain = Field("", description="Name of the TrainJob (and of its JobSet); \"\" = "
                                                    "the release name.")
        runtime: RuntimeRef = Field(default_factory=RuntimeRef, description="The training runtime the TrainJob runs "
                                    "on (spec.runtimeRef).")
        image: Empty | Image = Field("", description="Image of the trainer nodes (spec.trainer.image); \"\" = the "
                                     "runtime's image.")
        command: str = Field("", description="The training command, run as [<shell>, \"-c\", <command>] byte for "
                             "byte; \"\" = the runtime's command.")
        shell: str = Field("sh", min_length=1, description="Shell that runs the command.")
        env: list[EnvVar] = Field([], description="Environment of the trainer container (spec.trainer.env).")
        num_nodes: int = Field(1, ge=1, le=MAX_NODES, description="Number of training nodes (spec.trainer.numNodes).")
        num_proc_per_node: int | None = Field(None, ge=1, description="Processes per node (spec.trainer."
                                              "numProcPerNode); null = the runtime's (torch: auto).")
        gpus: Count = Field(0, description="nvidia.com/gpu per node, in requests and limits; with 0, "
                            "NVIDIA_VISIBLE_DEVICES=void.")
        devices: dict[LabelKey, Count] = Field({}, description="Other extended resources per node, name to count "
                                               "(e.g. amd.com/gpu: 1), in requests and limits.")
        resources: Resources = Field(default_factory=Resources, description="CPU/memory requests and limits per node "
                                     "(spec.trainer.resourcesPerNode; GPUs and devices are added).")
        shm_size: Empty | Quantity = Field("", description="Size of a memory-backed /dev/shm (e.g. \"8Gi\"); \"\" = "
                                           "the runtime's.")
        data: list[DataVolume] = Field([], description="PersistentVolumeClaims mounted into the trainer container.")
        host_paths: list[HostPathVolume] = Field([], description="Node directories mounted into the trainer "
                                                 "container.")
        secret_volumes: list[SecretVolume] = Field([], description="Secrets mounted read-only into the trainer "
                                                   "container (volumes secret-0, secret-1, ...).")
        service_account_name: Empty | DNSSubdomain = Field("", description="ServiceAccount of the pods; \"\" = the "
                                                           "runtime's.")
        image_pull_secrets: SecretNames = Field([], description="Names of image pull Secrets in the job's namespace.")
        labels: dict[LabelKey, LabelValue] = Field({}, description="Extra labels on the TrainJob and on every pod.")
        annotations: dict[LabelKey, str] = Field({}, description="Extra annotations on the TrainJob and on every "
                                                 "pod.")
        queue: Empty | QueueName = Field("", description="Kueue LocalQueue; \"\" = none. Sets the label "
                                         "kueue.x-k8s.io/queue-name on the TrainJob.")
        provenance: Provenance = provenance_field()
        suspend: bool = Field(False, description="Create the TrainJob suspended (spec.suspend): no pods until it is "
                              "resumed.")
        active_deadline_seconds: int | None = Field(None, ge=1, description="Fail the TrainJob after this many "
                                                    "seconds (spec.activeDeadlineSeconds); null = no deadline.")
        replicated_jobs: Annotated[list[DNSSubdomain], Field(min_length=1)] = Field(
            ["node"], description="The runtime's replicated jobs whose pods get the volumes, placement, labels and "
            "pull secrets.")
        container: DNSSubdomain = Field("node", description="The trainer container of those pods (Trainer v2's "
                                        "\"node\"); it gets the volume mounts.")

    return RuntimeRef, TrainJobValues


__getattr__ = values_models(_values_models, "RuntimeRef", "TrainJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_env = extra_annotations = no_extra  # Arena's metadata is not set at all (JobKindInfo.arena_metadata)
log_writer_selector = None


def kind_values(spec: TrainJobSpec) -> dict[str, Any]:
    """Per node: the trainer's numNodes x resourcesPerNode (charts/trainjob)."""
    node = spec.replicas()["node"]
    out: dict[str, Any] = {"numNodes": node.replicas, "gpus": node.gpus}
    if spec.device:
        out["devices"] = dict(spec.device)
    res = resources(node)
    if res:
        out["resources"] = res
    return out
