"""TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2): its spec and its spec-to-values (its chart's
values model, with its own schema generator: arena_helm/trainjob_values.py)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..enums import (
    CleanPodPolicy,
    ImagePullPolicy,
    RuntimeKind,
)
from ..k8s import AbsPath, DNSSubdomain, Duration, Image, Quantity
from ..spec import (
    HELM_RELEASE_MAX,
    MAX_REPLICAS,
    NAME_MAX,
    Gpus,
    JobSpec,
    Replica,
    flag_of_field,
    opt,
)
from ..values import resources


class TrainJobSpec(JobSpec):
    """A Kubeflow Trainer v2 TrainJob (``trainer.kubeflow.org/v1alpha1``): --workers nodes on a training runtime
    (``--runtime``, a ClusterTrainingRuntime or a TrainingRuntime of the namespace). --gpus, --cpu, --memory
    and --device are per node; the CPU and memory limits equal the requests, as Arena does for PyTorchJobs.

    Trainer v2.3.0 takes the pod settings only through the TrainJob's ``runtimePatches``, whose pod spec has no
    priorityClassName, schedulerName, hostNetwork, workingDir, imagePullPolicy or new (init) containers, and the
    TrainJob has no retry, TTL or clean-pod policy: the flags for those are refused (one line each).
    """

    kind: ClassVar[str] = "trainjob"

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
    running_timeout: Annotated[Duration, Field(ge=1)] | None = opt(
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



# ---- spec -> values ---------------------------------------------------------------------------------
ARENA_METADATA = False  # the runtime's pods carry no Arena labels, annotations or job-info env


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
