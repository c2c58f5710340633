"""PaddleJob (kubeflow.org/v1, the training operator): its spec, its chart's values model and its spec-to-values.

Arena has no PaddleJob. The flags follow the operator's examples and its two modes (training-operator v1.9.3
examples/paddlepaddle/simple-{cpu,gpu}.yaml and pkg/controller.v1/paddlepaddle/envvar.go):

- collective (the examples'): ``--workers`` Worker pods, worker 0 the rendezvous; the job succeeds when every
  worker does;
- parameter server: ``--servers N`` adds N Master pods, the servers (PADDLE_SERVER_NUM=1 in each, PADDLE_TRAINER_NUM=1
  in each worker), master 0 the rendezvous; the job succeeds when every master does.

The operator gives every pod PADDLE_MASTER (the rendezvous address and port), PADDLE_NNODES (all pods) and
PADDLE_JOB_ID, on the container ``paddle`` and its port ``master`` (36543: pkg/apis/kubeflow.org/v1/
paddlepaddle_types.go); both replica types restart OnFailure, the operator's default and its examples'.
"""

from typing import Annotated, Any, ClassVar

from pydantic import Field

from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, Count, PodJobSpec, Replica, opt


class PaddleJobSpec(PodJobSpec):
    """A PaddleJob: --workers trainers in collective mode (worker 0 the rendezvous), or with --servers N a
    parameter-server job (N Master pods); the training operator sets PADDLE_MASTER, PADDLE_NNODES and
    PADDLE_JOB_ID in every pod."""

    kind: ClassVar[str] = "paddlejob"

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt("Worker pods (trainers).", 1)
    servers: Count = opt("Parameter-server pods (the job's Master replicas); 0 runs the job in collective mode.", 0)

    def replicas(self) -> dict[str, Replica]:
        out = {"master": self.pod(self.servers)} if self.servers else {}
        out["worker"] = self.pod(self.workers)
        return out


# ---- the chart's values model -------------------------------------------------------------------------
RETRY_RESTART = "OnFailure"  # the servers' and workers' with --retry N: the operator's default and examples'


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, _retry_restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class PaddleReplica(ReplicaValues):
        """A PaddleJob replica block."""

        port: int = Field(36543, ge=1, le=65535, description="Container port named master (PADDLE_MASTER's port; the "
                          "operator wires it up).")
        restart_policy: RestartPolicy = _retry_restart_policy(RETRY_RESTART, "these replicas",
                                                              "the operator's default and its examples'")

    class PaddleWorkerReplica(PaddleReplica):
        """The PaddleJob worker block: the trainers (worker 0 is the rendezvous in collective mode)."""

        replicas: int = Field(1, ge=1, description="Number of worker pods (trainers), 1 or more.")

    class PaddleJobValues(JobValues):
        """Values of the paddlejob chart: one Kubeflow PaddleJob (kubeflow.org/v1)."""

        master: PaddleReplica = Field(default_factory=PaddleReplica, description="The parameter servers (Master "
                                      "replicas); 0 runs the job in collective mode.")
        worker: PaddleWorkerReplica = Field(default_factory=PaddleWorkerReplica, description="The worker replicas.")

    return PaddleReplica, PaddleWorkerReplica, PaddleJobValues


__getattr__ = values_models(_values_models, "PaddleReplica", "PaddleWorkerReplica", "PaddleJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_env = extra_annotations = no_extra
log_writer_selector = None

def kind_values(spec: PaddleJobSpec) -> dict[str, Any]:
    """The servers and workers, OnFailure with --retry (the operator's default and examples'), else Never."""
    master, worker = block_values(spec, "master"), block_values(spec, "worker")
    for block in (master, worker):
        if block["replicas"]:
            block["restartPolicy"] = spec.restart_policy(RETRY_RESTART)
    return {"master": master, "worker": worker}
