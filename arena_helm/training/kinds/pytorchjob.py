"""PyTorchJob (kubeflow.org/v1, the training operator): its spec, its chart's values model and its spec-to-
values."""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator

from ...core.grammars import PositiveIntText
from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, PodJobSpec, Replica, opt


class PyTorchJobSpec(PodJobSpec):
    """A PyTorchJob: --workers counts the master, as in Arena (3 = Master 1 + Worker 2)."""

    kind: ClassVar[str] = "pytorchjob"

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt(
        "Pods in all, the master included (3 = master + 2 workers).", 1)
    nproc_per_node: str | None = opt("Processes per pod: a number, auto, cpu or gpu.", values="nprocPerNode")

    @field_validator("nproc_per_node", mode="before")
    @classmethod
    def _nproc(cls, v: Any) -> Any:
        if v is None or v == "":
            return None
        text = str(v)
        if text not in ("auto", "cpu", "gpu") and not (text.isdigit() and int(text) > 0):
            raise ValueError(f"{v!r} must be a positive number, auto, cpu or gpu")
        return text

    def replicas(self) -> dict[str, Replica]:
        out = {"master": self.pod(1)}
        if self.workers > 1:
            out["worker"] = self.pod(self.workers - 1)
        return out


# ---- the chart's values model -------------------------------------------------------------------------
MASTER_RESTART = "Never"  # Arena's pytorchjob chart: a failed master fails the job
WORKER_RETRY_RESTART = "OnFailure"  # the workers' with --retry N, as Arena's pytorchjob chart


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, _restart_policy, _retry_restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class PyTorchReplica(ReplicaValues):
        """A PyTorchJob worker block."""

        port: int = Field(23456, ge=1, le=65535,
                          description="Container port (MASTER_PORT; the operator wires it up).")
        restart_policy: RestartPolicy = _retry_restart_policy(WORKER_RETRY_RESTART, "the workers", "Arena")

    class PyTorchMasterReplica(PyTorchReplica):
        """The PyTorchJob master block: always one pod."""

        replicas: int = Field(1, ge=1, le=1, description="Number of pods: always 1.")
        restart_policy: RestartPolicy = _restart_policy(MASTER_RESTART, "the master",
                                                        "Never, as Arena: a failed master fails the job.")

    class PyTorchJobValues(JobValues):
        """Values of the pytorchjob chart: one Kubeflow PyTorchJob (kubeflow.org/v1)."""

        nproc_per_node: Literal["", "auto", "cpu", "gpu"] | PositiveIntText = Field(
            "", description="Processes per pod (torchrun --nproc-per-node): \"\" (the operator decides), a number, "
            "auto, cpu or gpu.")
        master: PyTorchMasterReplica = Field(default_factory=PyTorchMasterReplica,
                                             description="The master replicas.")
        worker: PyTorchReplica = Field(default_factory=PyTorchReplica, description="The worker replicas.")

    return PyTorchReplica, PyTorchMasterReplica, PyTorchJobValues

__getattr__ = values_models(_values_models, "PyTorchReplica", "PyTorchMasterReplica", "PyTorchJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_annotations = no_extra
log_writer_selector = None

def kind_values(spec: PyTorchJobSpec) -> dict[str, Any]:
    """Arena's pytorchjob chart: the master Never, the workers OnFailure with --retry, else Never."""
    master, worker = block_values(spec, "master"), block_values(spec, "worker")
    master["restartPolicy"] = MASTER_RESTART
    if worker["replicas"]:
        worker["restartPolicy"] = spec.restart_policy(WORKER_RETRY_RESTART)
    return {"master": master, "worker": worker}


def extra_env(spec: PyTorchJobSpec) -> dict[str, str]:
    """With --rdma, MASTER_ADDR names the master pod (submit_pytorchjob.go addEnv)."""
    return {"MASTER_ADDR": f"{spec.name}-master-0"} if spec.rdma else {}
