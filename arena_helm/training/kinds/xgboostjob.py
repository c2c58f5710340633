"""XGBoostJob (kubeflow.org/v1, the training operator): its spec, its chart's values model and its spec-to-values.

Arena has no XGBoostJob. The flags are the PyTorchJob's (``--workers`` counts the master), the replicas and
restart policies the operator's example's (training-operator v1.9.3 examples/xgboost/xgboostjob.yaml: one
Master, Never; Workers, ExitCode). The operator gives every pod MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK
(and WORKER_ADDRS, WORKER_PORT for LightGBM; pkg/controller.v1/xgboost/xgboost.go), on the container
``xgboost`` and its port ``xgboostjob-port`` (9999: pkg/apis/kubeflow.org/v1/xgboost_types.go).
"""

from typing import Annotated, Any, ClassVar

from pydantic import Field

from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, PodJobSpec, Replica, opt


class XGBoostJobSpec(PodJobSpec):
    """An XGBoostJob: --workers counts the master, as a PyTorchJob's (3 = Master 1 + Worker 2); the training
    operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in every pod."""

    kind: ClassVar[str] = "xgboostjob"

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt(
        "Pods in all, the master included (3 = master + 2 workers).", 1)

    def replicas(self) -> dict[str, Replica]:
        out = {"master": self.pod(1)}
        if self.workers > 1:
            out["worker"] = self.pod(self.workers - 1)
        return out


# ---- the chart's values model -------------------------------------------------------------------------
MASTER_RESTART = "Never"  # the training operator's XGBoostJob example: a failed master fails the job
WORKER_RETRY_RESTART = "ExitCode"  # the workers' with --retry N, as the training operator's XGBoostJob example


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, _restart_policy, _retry_restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class XGBoostReplica(ReplicaValues):
        """An XGBoostJob worker block."""

        port: int = Field(9999, ge=1, le=65535, description="Container port (MASTER_PORT, WORKER_PORT; the operator "
                          "wires it up).")
        restart_policy: RestartPolicy = _retry_restart_policy(WORKER_RETRY_RESTART, "the workers",
                                                              "the operator's example")

    class XGBoostMasterReplica(XGBoostReplica):
        """The XGBoostJob master block: always one pod."""

        replicas: int = Field(1, ge=1, le=1, description="Number of pods: always 1.")
        restart_policy: RestartPolicy = _restart_policy(
            MASTER_RESTART, "the master", "Never, as the operator's example: a failed master fails the job.")

    class XGBoostJobValues(JobValues):
        """Values of the xgboostjob chart: one Kubeflow XGBoostJob (kubeflow.org/v1)."""

        master: XGBoostMasterReplica = Field(default_factory=XGBoostMasterReplica, description="The master replicas.")
        worker: XGBoostReplica = Field(default_factory=XGBoostReplica, description="The worker replicas.")

    return XGBoostReplica, XGBoostMasterReplica, XGBoostJobValues


__getattr__ = values_models(_values_models, "XGBoostReplica", "XGBoostMasterReplica", "XGBoostJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_env = extra_annotations = no_extra
log_writer_selector = None

def kind_values(spec: XGBoostJobSpec) -> dict[str, Any]:
    """The master Never, the workers ExitCode with --retry (the operator's example), else Never."""
    master, worker = block_values(spec, "master"), block_values(spec, "worker")
    master["restartPolicy"] = MASTER_RESTART
    if worker["replicas"]:
        worker["restartPolicy"] = spec.restart_policy(WORKER_RETRY_RESTART)
    return {"master": master, "worker": worker}
