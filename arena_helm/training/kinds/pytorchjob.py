"""PyTorchJob (kubeflow.org/v1, the training operator): its spec, its chart's values model and its spec-to-
values.

Elastic training (``--min-workers``/``--max-workers``, Arena's etjob intent) is the operator's ``elasticPolicy``
(training-operator v1.9.3 pkg/apis/kubeflow.org/v1/pytorch_types.go, pkg/controller.v1/pytorch/elastic.go): the
job is Worker pods only (no Master, as the operator's elastic examples), torchrun's c10d rendezvous on worker 0
(the operator sets PET_RDZV_ENDPOINT=<job>-worker-0:<port>, PET_RDZV_BACKEND, PET_NNODES=min:max and
PET_MAX_RESTARTS in every pod), and ``scaleout``/``scalein`` change the Worker count within the bounds.
"""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ...core.grammars import PositiveIntText
from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, PodJobSpec, Replica, opt


class PyTorchJobSpec(PodJobSpec):
    """A PyTorchJob: --workers counts the master, as in Arena (3 = Master 1 + Worker 2)."""

    kind: ClassVar[str] = "pytorchjob"

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt(
        "Pods in all, the master included (3 = master + 2 workers).", 1)
    nproc_per_node: str | None = opt("Processes per pod: a number, auto, cpu or gpu.", values="nprocPerNode")
    min_workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] | None = opt(
        "Elastic training (torchrun's c10d rendezvous): the fewest Worker pods the job runs with (default 1); "
        "--workers is then the Worker pods it starts with (default --min-workers), and there is no master.")
    max_workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] | None = opt(
        f"Elastic training: the most Worker pods (default {MAX_REPLICAS}, as Arena's etjob); scaleout/scalein "
        "change the count within the bounds.")
    max_restarts: Annotated[int, Field(ge=0)] | None = opt(
        "Elastic training: how many times torchrun restarts the worker group before the job fails "
        "(PET_MAX_RESTARTS; default torchrun's).")

    @property
    def elastic(self) -> bool:
        return self.min_workers is not None or self.max_workers is not None

    @model_validator(mode="after")
    def _elastic(self) -> "PyTorchJobSpec":
        if not self.elastic:
            if self.max_restarts is not None:
                raise ValueError("--max-restarts is for elastic training: give --min-workers and/or --max-workers "
                                 "too")
            return self
        low, high = self.min_workers or 1, self.max_workers or MAX_REPLICAS
        if low > high:
            raise ValueError(f"--min-workers {low} is above --max-workers {high}: give a range, e.g. "
                             f"--min-workers {high} --max-workers {low}")
        if "workers" not in self.model_fields_set:
            self.workers = low
        elif not low <= self.workers <= high:
            raise ValueError(f"--workers {self.workers} is outside --min-workers {low} .. --max-workers {high}: "
                             "with elastic training --workers is the Worker pods the job starts with")
        self.min_workers, self.max_workers = low, high
        return self

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
        if self.elastic:
            return {"worker": self.pod(self.workers)}
        out = {"master": self.pod(1)}
        if self.workers > 1:
            out["worker"] = self.pod(self.workers - 1)
        return out


# ---- the chart's values model -------------------------------------------------------------------------
MASTER_RESTART = "Never"  # Arena's pytorchjob chart: a failed master fails the job
WORKER_RETRY_RESTART = "OnFailure"  # the workers' with --retry N, as Arena's pytorchjob chart


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, Sparse, _restart_policy, _retry_restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class PyTorchReplica(ReplicaValues):
        """A PyTorchJob worker block."""

        port: int = Field(23456, ge=1, le=65535,
                          description="Container port (MASTER_PORT; the operator wires it up).")
        restart_policy: RestartPolicy = _retry_restart_policy(WORKER_RETRY_RESTART, "the workers", "Arena")

    class PyTorchMasterReplica(PyTorchReplica):
        """The PyTorchJob master block: one pod (none in an elastic job)."""

        replicas: int = Field(1, ge=0, le=1, description="Number of pods: 1, or 0 in an elastic job (elasticPolicy "
                              "set: Worker pods only).")
        restart_policy: RestartPolicy = _restart_policy(MASTER_RESTART, "the master",
                                                        "Never, as Arena: a failed master fails the job.")

    class ElasticPolicy(Sparse):
        """The PyTorchJob's elasticPolicy (training-operator v1.9.3): only the keys that are set."""

        min_replicas: int = Field(None, ge=1, description="The fewest Worker pods (PET_NNODES=min:max).")
        max_replicas: int = Field(None, ge=1, description="The most Worker pods.")
        rdzv_backend: Literal["c10d", "etcd", "etcd-v2"] = Field(
            None, description="torchrun's rendezvous backend (PET_RDZV_BACKEND); the endpoint is worker 0's port.")
        max_restarts: int = Field(None, ge=0, description="Worker group restarts before the job fails "
                                  "(PET_MAX_RESTARTS).")

    class PyTorchJobValues(JobValues):
        """Values of the pytorchjob chart: one Kubeflow PyTorchJob (kubeflow.org/v1)."""

        nproc_per_node: Literal["", "auto", "cpu", "gpu"] | PositiveIntText = Field(
            "", description="Processes per pod (torchrun --nproc-per-node): \"\" (the operator decides), a number, "
            "auto, cpu or gpu.")
        elastic_policy: ElasticPolicy = Field(
            default_factory=ElasticPolicy, description="Elastic training (the operator's elasticPolicy): set "
            "minReplicas and maxReplicas to run the job as Worker pods only, torchrun's rendezvous on worker 0.")
        master: PyTorchMasterReplica = Field(default_factory=PyTorchMasterReplica,
                                             description="The master replicas.")
        worker: PyTorchReplica = Field(default_factory=PyTorchReplica, description="The worker replicas.")

    return PyTorchReplica, PyTorchMasterReplica, ElasticPolicy, PyTorchJobValues

__getattr__ = values_models(_values_models, "PyTorchReplica", "PyTorchMasterReplica", "ElasticPolicy", "PyTorchJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_annotations = no_extra
log_writer_selector = None

RDZV_BACKEND = "c10d"  # torchrun's own rendezvous, on worker 0 (the operator's elastic examples)


def kind_values(spec: PyTorchJobSpec) -> dict[str, Any]:
    """Arena's pytorchjob chart: the master Never, the workers OnFailure with --retry, else Never; an elastic
    job: Worker pods only and the elasticPolicy."""
    master, worker = block_values(spec, "master"), block_values(spec, "worker")
    if master["replicas"]:
        master["restartPolicy"] = MASTER_RESTART
    if worker["replicas"]:
        worker["restartPolicy"] = spec.restart_policy(WORKER_RETRY_RESTART)
    out: dict[str, Any] = {"master": master, "worker": worker}
    if spec.elastic:
        policy = {"minReplicas": spec.min_workers, "maxReplicas": spec.max_workers, "rdzvBackend": RDZV_BACKEND}
        out["elasticPolicy"] = policy | ({"maxRestarts": spec.max_restarts} if spec.max_restarts is not None else {})
    return out


def extra_env(spec: PyTorchJobSpec) -> dict[str, str]:
    """With --rdma, MASTER_ADDR names the master pod (submit_pytorchjob.go addEnv)."""
    return {"MASTER_ADDR": f"{spec.name}-master-0"} if spec.rdma else {}
