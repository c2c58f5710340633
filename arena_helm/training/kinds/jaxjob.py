"""JAXJob (kubeflow.org/v1, the training operator v1.9): its spec, its chart's values model and its spec-to-values.

Arena has no JAXJob. The flags are the PyTorchJob's, as the operator's own example has it
(training-operator v1.9.3 examples/jax/cpu-demo/demo.yaml): only Workers, each running the command; worker 0
is the coordinator, and the operator gives every pod COORDINATOR_ADDRESS, COORDINATOR_PORT, NUM_PROCESSES and
PROCESS_ID (pkg/controller.v1/jax/envvar.go), on the container named ``jax`` and its port ``jaxjob-port``
(6666: pkg/apis/kubeflow.org/v1/jax_types.go).
"""

from typing import Annotated, Any, ClassVar

from pydantic import Field

from ...workload.job_values import block_values, no_extra, values_models
from ...workload.spec import MAX_REPLICAS, PodJobSpec, Replica, opt


class JAXJobSpec(PodJobSpec):
    """A JAXJob: --workers processes, one per pod; worker 0 is the coordinator (the training operator sets
    COORDINATOR_ADDRESS, COORDINATOR_PORT, NUM_PROCESSES and PROCESS_ID in every pod)."""

    kind: ClassVar[str] = "jaxjob"

    workers: Annotated[int, Field(ge=1, le=MAX_REPLICAS)] = opt("Worker pods (JAX processes).", 1)

    def replicas(self) -> dict[str, Replica]:
        return {"worker": self.pod(self.workers)}


# ---- the chart's values model -------------------------------------------------------------------------
WORKER_RETRY_RESTART = "OnFailure"  # with --retry N, as the training operator's JAXJob example


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, _retry_restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class JAXWorkerReplica(ReplicaValues):
        """The JAXJob worker block: worker 0 is the coordinator."""

        replicas: int = Field(1, ge=1, description="Number of worker pods (JAX processes), 1 or more.")
        port: int = Field(6666, ge=1, le=65535, description="Container port (COORDINATOR_PORT; the operator wires it "
                          "up).")
        restart_policy: RestartPolicy = _retry_restart_policy(WORKER_RETRY_RESTART, "the workers",
                                                              "the training operator's JAXJob example")

    class JAXJobValues(JobValues):
        """Values of the jaxjob chart: one Kubeflow JAXJob (kubeflow.org/v1)."""

        worker: JAXWorkerReplica = Field(default_factory=JAXWorkerReplica, description="The worker replicas.")

    return JAXWorkerReplica, JAXJobValues


__getattr__ = values_models(_values_models, "JAXWorkerReplica", "JAXJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_env = extra_annotations = no_extra
log_writer_selector = None

def kind_values(spec: JAXJobSpec) -> dict[str, Any]:
    """The workers, OnFailure with --retry (the operator's example), else Never."""
    worker = block_values(spec, "worker")
    worker["restartPolicy"] = spec.restart_policy(WORKER_RETRY_RESTART)
    return {"worker": worker}
