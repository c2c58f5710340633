"""TFJob (kubeflow.org/v1, the training operator): its spec, its chart's values model and its spec-to-values."""

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ...core.enums import AffinityConstraint, AffinityPolicy, SuccessPolicy
from ...core.flagtypes import check_labels, kv_items
from ...core.grammars import Duration, Image, Quantity
from ...workload.job_values import DISABLE_TF_CONFIG, block_values, no_extra, role_affinity, values_models
from ...workload.spec import Count, Gpus, JobSpec, Port, Replica, opt, opt_map


class TFJobSpec(JobSpec):
    """A TFJob: Chief, Worker, PS and Evaluator replicas. One worker and no PS (and no --chief or
    --evaluator) runs as a single Chief, as in Arena. --cpu/--memory are the workers' (--worker-cpu and
    --worker-memory say the same: give one of each)."""

    kind: ClassVar[str] = "tfjob"

    gpus: Gpus = opt("GPUs (nvidia.com/gpu) per worker pod.", 0)
    workers: Count = opt("Worker replicas.", 1)
    cpu: Quantity | None = opt("CPU request per worker pod (e.g. 4, 500m).")
    memory: Quantity | None = opt("Memory request per worker pod (e.g. 16Gi).")
    ps: Count = opt("Parameter-server replicas.", 0)
    ps_image: Image | None = opt("Image of the PS replicas.", hidden=("--psImage",))
    worker_image: Image | None = opt("Image of the worker replicas.", hidden=("--workerImage",))
    chief: bool = opt("Add a Chief replica (needed by Estimator).", False)
    evaluator: bool = opt("Add an Evaluator replica.", False)
    worker_port: Port | None = opt("Worker port (default 2222).", hidden=("--workerPort",))
    ps_port: Port | None = opt("PS port (default 2222).", hidden=("--psPort",))
    chief_port: Port | None = opt("Chief port (default 2222).", hidden=("--chiefPort",))
    ps_gpus: Gpus = opt("GPUs per PS pod.", 0)
    success_policy: SuccessPolicy = opt("ChiefWorker (succeed when the chief, else worker 0, does) or AllWorkers.",
                                        SuccessPolicy.ChiefWorker)
    worker_cpu: Quantity | None = opt("CPU request per worker (the limit too, unless --worker-cpu-limit).",
                                      hidden=("--workerCpu",))
    worker_memory: Quantity | None = opt("Memory request per worker (the limit too, unless --worker-memory-limit).",
                                         hidden=("--workerMemory",))
    worker_cpu_limit: Quantity | None = opt("CPU limit per worker.")
    worker_memory_limit: Quantity | None = opt("Memory limit per worker.")
    ps_cpu: Quantity | None = opt("CPU request per PS (the limit too, unless --ps-cpu-limit).", hidden=("--psCpu",))
    ps_memory: Quantity | None = opt("Memory request per PS (the limit too, unless --ps-memory-limit).",
                                     hidden=("--psMemory",))
    ps_cpu_limit: Quantity | None = opt("CPU limit per PS.")
    ps_memory_limit: Quantity | None = opt("Memory limit per PS.")
    chief_cpu: Quantity | None = opt("CPU request of the chief (the limit too, unless --chief-cpu-limit).",
                                     hidden=("--ChiefCpu",))
    chief_memory: Quantity | None = opt("Memory request of the chief (the limit too, unless --chief-memory-limit).",
                                        hidden=("--ChiefMemory",))
    chief_cpu_limit: Quantity | None = opt("CPU limit of the chief.")
    chief_memory_limit: Quantity | None = opt("Memory limit of the chief.")
    evaluator_cpu: Quantity | None = opt("CPU request of the evaluator (the limit too, unless "
                                         "--evaluator-cpu-limit).", hidden=("--evaluatorCpu",))
    evaluator_memory: Quantity | None = opt("Memory request of the evaluator (the limit too, unless "
                                            "--evaluator-memory-limit).", hidden=("--evaluatorMemory",))
    evaluator_cpu_limit: Quantity | None = opt("CPU limit of the evaluator.")
    evaluator_memory_limit: Quantity | None = opt("Memory limit of the evaluator.")
    worker_affinity_policy: AffinityPolicy = opt("Spread the workers over nodes (spread), pack them (binpack) or "
                                                 "neither (none).", AffinityPolicy.none)
    worker_affinity_constraint: AffinityConstraint = opt("Whether --worker-affinity-policy is preferred or "
                                                         "required.", AffinityConstraint.preferred)
    ps_affinity_policy: AffinityPolicy = opt("Spread the PS over nodes (spread), pack them (binpack) or neither "
                                             "(none).", AffinityPolicy.none)
    ps_affinity_constraint: AffinityConstraint = opt("Whether --ps-affinity-policy is preferred or required.",
                                                     AffinityConstraint.preferred)
    role_sequence: str | None = opt("Order the roles start in, e.g. Worker,PS,Chief or w,p,c (annotation "
                                    "job-role-sequence, as Arena).")
    starting_timeout: Duration | None = opt("Not available on the upstream training operator (Arena's "
                                            "startingDeadlineSeconds).")
    worker_selector: dict[str, str] = opt_map("Node selector of the workers KEY=VALUE (repeatable).",
                                              metavar="KEY=VALUE")
    ps_selector: dict[str, str] = opt_map("Node selector of the PS KEY=VALUE (repeatable).", metavar="KEY=VALUE")
    chief_selector: dict[str, str] = opt_map("Node selector of the chief KEY=VALUE (repeatable).",
                                             metavar="KEY=VALUE")
    evaluator_selector: dict[str, str] = opt_map("Node selector of the evaluator KEY=VALUE (repeatable).",
                                                 metavar="KEY=VALUE")
    # per role (see _role): no top-level nodeSelector, which the chart would merge under a role's own
    selector: dict[str, str] = opt_map("Node selector KEY=VALUE (repeatable).", metavar="KEY=VALUE")

    @field_validator("worker_selector", "ps_selector", "chief_selector", "evaluator_selector", mode="before")
    @classmethod
    def _role_selector(cls, v: Any) -> Any:
        return kv_items(v, "a node selector")

    @field_validator("worker_selector", "ps_selector", "chief_selector", "evaluator_selector")
    @classmethod
    def _role_labels(cls, v: dict[str, str]) -> dict[str, str]:
        return check_labels(v, "node selector")

    @field_validator("role_sequence")
    @classmethod
    def _role_sequence(cls, v: str | None) -> str | None:
        if v is None or v == "":
            return None
        names = {"worker": "Worker", "w": "Worker", "ps": "PS", "p": "PS", "evaluator": "Evaluator",
                 "e": "Evaluator", "chief": "Chief", "c": "Chief"}
        roles = []
        for r in v.split(","):
            role = names.get(r.strip().lower())
            if role is None:
                raise ValueError(f"unknown role {r.strip()!r}: give Worker(w), PS(p), Evaluator(e) or Chief(c), "
                                 "comma-separated")
            roles.append(role)
        return ",".join(roles)

    @field_validator("starting_timeout")
    @classmethod
    def _starting_timeout(cls, v: int | None) -> int | None:
        if v is not None:
            raise ValueError("the upstream training operator has no startingDeadlineSeconds (Arena's needs "
                             "Alibaba's operator): use --running-timeout, which counts from the start")
        return v

    @property
    def standalone(self) -> bool:
        """As in Arena (submit_tfjob.go setStandaloneMode): no PS and one worker run as a single Chief (with
        the Evaluator if asked for): the worker count becomes 0."""
        return self.workers == 1 and self.ps == 0

    @property
    def has_chief(self) -> bool:
        return self.chief or self.standalone

    def _role(self, role: str, replicas: int, gpus: int, image: str | None = None, port: int | None = None,
              devices: bool = False) -> Replica:
        get = lambda suffix: getattr(self, f"{role}_{suffix}")  # noqa: E731
        # Arena's tfjob chart: the limit is --<role>-cpu-limit, else the request; a role's --<role>-selector
        # replaces --selector for that role (submit_tfjob.go setTFNodeSelectors)
        return Replica(replicas=replicas, image=image, gpus=gpus, cpu=get("cpu"), memory=get("memory"),
                       cpu_limit=get("cpu_limit") or get("cpu"), memory_limit=get("memory_limit") or get("memory"),
                       selector=dict(get("selector") or self.selector), port=port, devices=devices)

    def replicas(self) -> dict[str, Replica]:
        worker = self._role("worker", self.workers, self.gpus, self.worker_image, self.worker_port, devices=True)
        worker.cpu = self._one_of("cpu", self.cpu, "worker_cpu", self.worker_cpu)
        worker.memory = self._one_of("memory", self.memory, "worker_memory", self.worker_memory)
        worker.cpu_limit = self.worker_cpu_limit or worker.cpu
        worker.memory_limit = self.worker_memory_limit or worker.memory
        out: dict[str, Replica] = {}
        if self.standalone and not self.chief:
            # the one worker becomes the chief: the worker's flags are its flags (Arena's chief takes the
            # worker's image and port; --chief-* flags still win)
            chief = self._role("chief", 1, self.gpus, self.worker_image, self.chief_port or self.worker_port,
                               devices=True)
            for attr in ("cpu", "memory", "cpu_limit", "memory_limit"):
                setattr(chief, attr, getattr(chief, attr) or getattr(worker, attr))
            chief.selector = dict(self.chief_selector or self.worker_selector or self.selector)
            out["chief"] = chief
        elif self.has_chief:
            out["chief"] = self._role("chief", 1, self.gpus, self.worker_image, self.chief_port, devices=True)
        if self.workers and not self.standalone:
            out["worker"] = worker
        if self.ps:
            out["ps"] = self._role("ps", self.ps, self.ps_gpus, self.ps_image, self.ps_port)
        if self.evaluator:
            out["evaluator"] = self._role("evaluator", 1, self.gpus, self.worker_image, devices=True)
        return out

    @model_validator(mode="after")
    def _layout(self) -> "TFJobSpec":
        if not self.replicas():
            raise ValueError("--workers: the job has no replicas: give --workers 1 or more (or --ps/--chief)")
        return self


# ---- the chart's values model -------------------------------------------------------------------------
RESTART = "Never"  # every role's, as Arena's tfjob chart (the workers': see kind_values)


def _values_models() -> tuple[type, ...]:
    from ...workload.chart_values import JobValues, RestartPolicy, _restart_policy
    from ...workload.chart_values import Replica as ReplicaValues

    class TFReplica(ReplicaValues):
        """A TFJob replica block (chief, worker, ps, evaluator)."""

        port: int = Field(2222, ge=1, le=65535, description="Container port (the operator wires it into the cluster "
                          "spec).")
        restart_policy: RestartPolicy = _restart_policy(RESTART, "these replicas", "Never, as Arena.")

    class TFWorkerReplica(TFReplica):
        """The TFJob worker block."""

        restart_policy: RestartPolicy = _restart_policy(
            "", "the workers", "\"\" = Arena's: OnFailure when the job has a chief, else Never.")

    class TFSingleReplica(TFReplica):
        """A TFJob replica type that has at most one pod (chief, evaluator)."""

        replicas: int = Field(0, ge=0, le=1, description="Number of pods: 0 or 1.")

    class TFJobValues(JobValues):
        """Values of the tfjob chart: one Kubeflow TFJob (kubeflow.org/v1)."""

        success_policy: Literal["", "AllWorkers"] = Field(
            "", description="\"\" (the job succeeds when the chief, or else worker 0, succeeds) or AllWorkers.")
        chief: TFSingleReplica = Field(default_factory=TFSingleReplica, description="The chief replicas.")
        worker: TFWorkerReplica = Field(default_factory=lambda: TFWorkerReplica(replicas=1),
                                        description="The worker replicas.")
        ps: TFReplica = Field(default_factory=TFReplica, description="The parameter server replicas.")
        evaluator: TFSingleReplica = Field(default_factory=TFSingleReplica, description="The evaluator replicas.")

    return TFReplica, TFWorkerReplica, TFSingleReplica, TFJobValues


__getattr__ = values_models(_values_models, "TFReplica", "TFWorkerReplica", "TFSingleReplica", "TFJobValues")


# ---- spec -> values ---------------------------------------------------------------------------------
extra_env = no_extra
log_writer_selector = None

def kind_values(spec: TFJobSpec) -> dict[str, Any]:
    """Arena's tfjob chart: every role Never, but the workers OnFailure when there is a chief; the roles'
    affinity policies; AllWorkers when asked (ChiefWorker is the operator's "", its default)."""
    out = {name: block_values(spec, name) for name in ("chief", "worker", "ps", "evaluator")}
    for name, b in out.items():
        if b["replicas"]:
            # the worker's model default is "" (the template's rule, for plain helm users): the same rule here
            b["restartPolicy"] = "OnFailure" if name == "worker" and spec.has_chief else RESTART
    for role in ("worker", "ps"):
        policy = getattr(spec, f"{role}_affinity_policy")
        if out[role]["replicas"] and policy is not AffinityPolicy.none:
            out[role]["affinity"] = role_affinity(spec, role, policy,
                                                  getattr(spec, f"{role}_affinity_constraint").value)
    if spec.success_policy.value == "AllWorkers":
        out["successPolicy"] = "AllWorkers"
    return out


def extra_annotations(spec: TFJobSpec) -> dict[str, str]:
    """Arena's TF annotations (submit_tfjob.go setStandaloneMode, the role sequence)."""
    out = {}
    if spec.standalone:
        out[DISABLE_TF_CONFIG] = "true"
    if spec.role_sequence:
        out["job-role-sequence"] = spec.role_sequence
    return out
