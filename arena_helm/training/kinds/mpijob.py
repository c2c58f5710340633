"""MPIJob (kubeflow.org/v2beta1, mpi-operator; v1, the training operator): its spec, its chart's values model and
its spec-to-values."""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from ...core.enums import CleanPodPolicy, MpiApi
from ...core.flagtypes import check_labels, kv_items
from ...core.grammars import AbsPath, Quantity, check_label_key
from ...core.jobkinds import BY_KEY
from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, Gpus, JobSpec, Replica, opt, opt_map


class MPIJobSpec(JobSpec):
    """An MPIJob: --workers workers and one launcher that runs the command."""

    kind: ClassVar[str] = "mpijob"
    # A preset's settings (arena_helm.core.jobkinds.PRESETS; none for a plain MPIJob): env the framework reads,
    # given to the pods unless the user's -e sets the name, and where the launcher also finds mpi-operator's
    # hostfile (the chart's hostfilePath).
    FRAMEWORK_ENV: ClassVar[dict[str, str]] = {}
    HOSTFILE_PATH: ClassVar[str] = ""

    gpus: Gpus = opt("GPUs (nvidia.com/gpu) per worker pod.", 0)
    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt("Worker replicas (plus one launcher).", 1)
    cpu: Quantity | None = opt("CPU per worker (e.g. 4, 500m): the request, and the limit unless --cpu-limit.")
    memory: Quantity | None = opt("Memory per worker (e.g. 16Gi): the request, and the limit unless "
                                  "--memory-limit.")
    cpu_limit: Quantity | None = opt("CPU limit per worker (default: --cpu).")
    memory_limit: Quantity | None = opt("Memory limit per worker (default: --memory).")
    launcher_cpu: Quantity | None = opt("CPU request of the launcher.")
    launcher_memory: Quantity | None = opt("Memory request of the launcher.")
    slots_per_worker: Annotated[int, Field(ge=1, le=1024)] | None = opt(
        "MPI slots per worker (default: the worker's GPUs, at least 1, as Arena).", values="slotsPerWorker")
    retry: Annotated[int, Field(ge=0, le=1000)] = opt("Retries of the launcher before the job is marked failed "
                                                      "(backoffLimit).", 0, values="runPolicy.backoffLimit")
    clean_task_policy: CleanPodPolicy = opt("Which pods to delete when the job ends.", CleanPodPolicy.All,
                                            hidden=("--cleanTaskPolicy",), values="runPolicy.cleanPodPolicy")
    mounts_on_launcher: bool = opt("Mount the --data PVCs on the launcher too (they always are here).", False)
    gputopology: bool = opt("Not available on the upstream MPI operators (Alibaba's GPU topology scheduling).",
                            False)
    launcher_selector: dict[str, str] = opt_map("Node selector of the launcher KEY=VALUE (repeatable; Arena's "
                                                "deepspeedjob and etjob flag).", metavar="KEY=VALUE")
    launcher_annotation: dict[str, str] = opt_map("Annotation KEY=VALUE of the launcher pod only (repeatable).",
                                                  metavar="KEY=VALUE")
    worker_annotation: dict[str, str] = opt_map("Annotation KEY=VALUE of the worker pods only (repeatable).",
                                                metavar="KEY=VALUE")
    mpi_api: MpiApi = opt("MPIJob API: auto (what the cluster serves; v2beta1 in --dry-run), v2beta1 "
                          "(mpi-operator) or v1 (training operator).", MpiApi.auto, values="mpiApiVersion")

    @field_validator("gputopology")
    @classmethod
    def _gputopology(cls, v: bool) -> bool:
        if v:
            raise ValueError("GPU topology scheduling needs Alibaba's gpu-topology scheduler and operator, which "
                             "the upstream MPI operators lack: leave it out")
        return v

    @field_validator("launcher_selector", "launcher_annotation", "worker_annotation", mode="before")
    @classmethod
    def _role_maps(cls, v: Any, info: ValidationInfo) -> Any:
        return kv_items(v, "a node selector" if info.field_name == "launcher_selector" else "an annotation")

    @field_validator("launcher_selector")
    @classmethod
    def _launcher_selector(cls, v: dict[str, str]) -> dict[str, str]:
        return check_labels(v, "node selector")

    @field_validator("launcher_annotation", "worker_annotation")
    @classmethod
    def _role_annotations(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            check_label_key(key, "annotation")
        return v

    def launcher_restart(self) -> str:
        """The launcher's restart policy (a preset may let the user choose it)."""
        return LAUNCHER_RESTART

    def replicas(self) -> dict[str, Replica]:
        return {
            "launcher": Replica(replicas=1, cpu=self.launcher_cpu, memory=self.launcher_memory,
                                selector=dict(self.launcher_selector), annotations=dict(self.launcher_annotation)),
            "worker": Replica(replicas=self.workers, gpus=self.gpus, cpu=self.cpu, memory=self.memory,
                              cpu_limit=self.cpu_limit or self.cpu, memory_limit=self.memory_limit or self.memory,
                              devices=True, annotations=dict(self.worker_annotation)),
        }




# ---- the chart's values model -------------------------------------------------------------------------
LAUNCHER_RESTART, WORKER_RESTART = "Never", "Never"  # Arena's mpijob chart


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import Empty, JobValues, RestartPolicy, RunPolicy, _restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class MPILauncherReplica(ReplicaValues):
        """The MPIJob launcher block: always one pod."""

        replicas: int = Field(1, ge=1, le=1, description="Number of pods: always 1.")
        restart_policy: RestartPolicy = _restart_policy(
            LAUNCHER_RESTART, "the launcher",
            "Never, as Arena's launcher Job (its retries are runPolicy.backoffLimit).")

    class MPIWorkerReplica(ReplicaValues):
        """The MPIJob worker block."""

        replicas: int = Field(1, ge=1, description="Number of worker pods (at least 1).")
        restart_policy: RestartPolicy = _restart_policy(WORKER_RESTART, "the workers", "Never, as Arena.")
        command: str = Field("", description="Command of the workers (run with <shell> -c); \"\" runs the default "
                             "keep-alive: /usr/sbin/sshd -De for v2beta1, sleep infinity for v1.")

    class MPIJobValues(JobValues):
        """Values of the mpijob chart: one Kubeflow MPIJob (kubeflow.org/v2beta1 or v1)."""

        mpi_api_version: Literal["v2beta1", "v1", "auto"] = Field(
            "v2beta1", description="MPIJob API: v2beta1 (mpi-operator), v1 (the training-operator's MPIJob), or auto "
            "(what the cluster serves, v2beta1 first; v2beta1 when rendered offline with helm template).")
        run_policy: RunPolicy = Field(default_factory=lambda: RunPolicy(clean_pod_policy="All", backoff_limit=0),
                                      description="The job's runPolicy; cleanPodPolicy All and backoffLimit 0 as "
                                      "Arena.")
        slots_per_worker: int | None = Field(None, ge=1, description="MPI slots (processes) per worker; null = the "
                                             "workers' GPUs (at least 1), as Arena's hostfile.")
        mpi_implementation: Literal["OpenMPI", "Intel", "MPICH"] = Field(
            "OpenMPI", description="MPI implementation (v2beta1 only): OpenMPI, Intel or MPICH.")
        ssh_auth_mount_path: AbsPath = Field("/root/.ssh", description="Where mpi-operator mounts the SSH keys "
                                             "(v2beta1 only).")
        hostfile_path: Empty | AbsPath = Field("", description="Also mount mpi-operator's hostfile (the ConfigMap "
                                               "<job>-config) at this path in the launcher (v2beta1 only; "
                                               "DeepSpeed's launcher reads /job/hostfile); \"\" = only at "
                                               "/etc/mpi/hostfile, where mpi-operator mounts it.")
        launcher: MPILauncherReplica = Field(default_factory=MPILauncherReplica, description="The launcher replicas.")
        worker: MPIWorkerReplica = Field(default_factory=MPIWorkerReplica, description="The worker replicas.")

    return MPILauncherReplica, MPIWorkerReplica, MPIJobValues


__getattr__ = values_models(_values_models, "MPILauncherReplica", "MPIWorkerReplica", "MPIJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_annotations = no_extra


def extra_env(spec: MPIJobSpec) -> dict[str, str]:
    """The env of the preset the job was submitted with (``MPIJobSpec.FRAMEWORK_ENV``), where the user's -e does
    not set the name."""
    given = {e.name for e in spec.env}
    return {k: v for k, v in spec.FRAMEWORK_ENV.items() if k not in given}


def kind_values(spec: MPIJobSpec) -> dict[str, Any]:
    """mpiApiVersion auto: the chart picks what the cluster serves at install (v2beta1 rendered offline); the
    launcher is not restarted (Arena's: a Job with backoffLimit --retry), the workers Never."""
    launcher, worker = block_values(spec, "launcher"), block_values(spec, "worker")
    launcher["restartPolicy"] = spec.launcher_restart()
    worker["restartPolicy"] = WORKER_RESTART
    out = {"launcher": launcher, "worker": worker}
    if spec.slots_per_worker is None:
        out["slotsPerWorker"] = max(1, spec.gpus)  # Arena's hostfile: slots = GPUs per worker
    if spec.HOSTFILE_PATH:
        out["hostfilePath"] = spec.HOSTFILE_PATH
    return out


def log_writer_selector(spec: MPIJobSpec) -> list[dict[str, Any]]:
    """The pod that writes the logs (Arena: MPI worker 0). mpi-operator (v2beta1) labels a worker with its
    job-role and replica-index, the training operator's MPIJob v1 labels workers with their replica-type and
    no index; and with ``--mpi-api auto`` the API is only known at install. So the selector is the job's pods
    that are not a launcher (job-role launcher, or master in v1) and have no other index than 0: worker 0
    under v2beta1, a worker under v1."""
    info = BY_KEY[spec.kind]
    out = [{"key": info.pod_job_label, "operator": "In", "values": [spec.name]},
           {"key": "training.kubeflow.org/job-role", "operator": "NotIn", "values": ["launcher", "master"]}]
    if spec.workers > 1:
        out.append({"key": info.pod_index_label, "operator": "NotIn",
                    "values": [str(i) for i in range(1, spec.workers)]})
    return out
