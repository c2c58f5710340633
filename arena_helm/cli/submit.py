"""``arena-helm submit tfjob|pytorchjob|mpijob``: flags -> spec -> values -> helm.

Arena v1 compatible: everything after the flags (or after ``--``) is the training command, joined with
single spaces.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import typer

from ..enums import CleanPodPolicy, ImagePullPolicy
from . import lazy_app
from .common import Context, Debug, Globals, HelmBinary, Kubeconfig, Namespace

CMD_SETTINGS = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}


class SyncMode(str, enum.Enum):
    git = "git"


class DryRunOutput(str, enum.Enum):
    manifests = "manifests"
    values = "values"


class MpiApi(str, enum.Enum):
    auto = "auto"
    v2beta1 = "v2beta1"
    v1 = "v1"


class SuccessPolicy(str, enum.Enum):
    default = ""
    AllWorkers = "AllWorkers"


def Opt(*names: str, help: str, **kw) -> Any:  # noqa: A002,N802 - mirrors typer.Option
    return typer.Option(*names, help=help, show_default=kw.pop("show_default", False), **kw)


# ---- the common flags, shared by the three commands --------------------------------------------------
Command = Annotated[list[str] | None, typer.Argument(help="The training command (joined with spaces).",
                                                     show_default=False)]
Name = Annotated[str | None, Opt("--name", help="Job name (also the release name). Required.")]
Image = Annotated[str | None, Opt("--image", help="Container image of the job.")]
Gpus = Annotated[int, Opt("--gpus", help="GPUs (nvidia.com/gpu) per worker pod.", show_default=True)]
Cpu = Annotated[str | None, Opt("--cpu", help="CPU request per worker pod (e.g. 4, 500m).")]
Memory = Annotated[str | None, Opt("--memory", help="Memory request per worker pod (e.g. 16Gi).")]
Env = Annotated[list[str] | None, Opt("--env", "-e", help="Environment variable NAME=VALUE (repeatable).")]
Data = Annotated[list[str] | None, Opt("--data", "-d", help="Mount PVC:MOUNT_PATH (repeatable).")]
DataDir = Annotated[list[str] | None, Opt("--data-dir", help="Mount a host path HOST[:CONTAINER] (repeatable).")]
Annotation = Annotated[list[str] | None, Opt("--annotation", "-a", help="Annotation KEY=VALUE (repeatable).")]
Label = Annotated[list[str] | None, Opt("--label", "-l", help="Label KEY=VALUE (repeatable).")]
Selector = Annotated[list[str] | None, Opt("--selector", help="Node selector KEY=VALUE (repeatable).")]
TolerationO = Annotated[list[str] | None, Opt(
    "--toleration", help="Tolerate a taint: KEY[=VALUE][:EFFECT][,OPERATOR], or all (repeatable).")]
Priority = Annotated[str | None, Opt("--priority", "-p", help="PriorityClass of the pods.")]
PullSecret = Annotated[list[str] | None, Opt("--image-pull-secret", help="Image pull Secret name (repeatable).")]
PullPolicyO = Annotated[ImagePullPolicy | None, Opt("--image-pull-policy", help="Image pull policy.")]
WorkingDir = Annotated[str | None, Opt("--working-dir", help="Working directory of the command.")]
Shell = Annotated[str, Opt("--shell", help="Shell that runs the command.", show_default=True)]
Retry = Annotated[int | None, Opt("--retry", help="Retries before the job is marked failed (backoffLimit).")]
Ttl = Annotated[str | None, Opt("--ttl-after-finished", help="Delete the job's pods this long after it ends (30s, 10m, 1h).")]
RunningTimeout = Annotated[str | None, Opt("--running-timeout", help="Fail the job if it runs longer (e.g. 2h).")]
CleanTask = Annotated[CleanPodPolicy | None, Opt("--clean-task-policy", help="Which pods to delete when the job ends.")]
ShareMemory = Annotated[str | None, Opt("--share-memory", help="Size of /dev/shm (e.g. 2Gi).")]
Device = Annotated[list[str] | None, Opt("--device", help="Other device resource VENDOR/RESOURCE=N per worker (repeatable).")]
SyncModeO = Annotated[SyncMode | None, Opt("--sync-mode", help="Code sync mode (git).")]
SyncSource = Annotated[str | None, Opt("--sync-source", help="Git repository URL to sync the code from.")]
SyncBranch = Annotated[str | None, Opt("--sync-branch", help="Branch, tag or commit to sync.")]
SyncImage = Annotated[str | None, Opt("--sync-image", help="git-sync image.")]
SyncSecret = Annotated[str | None, Opt("--sync-secret", help="Secret with username/password keys for the repository.")]
TensorboardO = Annotated[bool, Opt("--tensorboard", help="Start a TensorBoard with the job (removed with it).")]
TensorboardImage = Annotated[str | None, Opt("--tensorboard-image", help="TensorBoard image.")]
Logdir = Annotated[str, Opt("--logdir", help="Training log directory (under a --data mount).", show_default=True)]
Queue = Annotated[str | None, Opt("--queue", help="Kueue LocalQueue (label kueue.x-k8s.io/queue-name).")]
Scheduler = Annotated[str | None, Opt("--scheduler", help="Scheduler name of the pods.")]
ValuesFile = Annotated[list[str] | None, Opt("--values", "-f", help="Chart values file applied on top (repeatable).")]
SetValue = Annotated[list[str] | None, Opt("--set", help="Chart value KEY=VALUE applied on top, VALUE as YAML (repeatable).")]
DryRun = Annotated[bool, Opt("--dry-run", help="Print the manifests; contact no cluster.")]
OutputO = Annotated[DryRunOutput, Opt("--output", "-o", help="With --dry-run: manifests or values.", show_default=True)]
Wait = Annotated[bool, Opt("--wait", help="Follow the job to its end; exit 0 succeeded, 1 failed, 3 timed out.")]
Timeout = Annotated[str, Opt("--timeout", help="With --wait: how long to wait.", show_default=True)]

# field location (from pydantic) -> the flag to name in messages
FLAG_OF = {
    "name": "--name", "namespace": "--namespace", "image": "--image", "gpus": "--gpus", "workers": "--workers",
    "env": "--env", "data": "--data", "data_dirs": "--data-dir", "annotations": "--annotation",
    "labels": "--label", "selector": "--selector", "tolerations": "--toleration", "priority_class": "--priority",
    "image_pull_secrets": "--image-pull-secret", "image_pull_policy": "--image-pull-policy",
    "working_dir": "--working-dir", "shell": "--shell", "retry": "--retry",
    "ttl_after_finished": "--ttl-after-finished", "running_timeout": "--running-timeout",
    "clean_task_policy": "--clean-task-policy", "share_memory": "--share-memory", "devices": "--device",
    "sync": "--sync-source", "tensorboard": "--logdir", "queue": "--queue", "scheduler": "--scheduler",
    "ps_count": "--ps", "ps_gpus": "--ps-gpus", "success_policy": "--success-policy",
    "nproc_per_node": "--nproc-per-node", "slots_per_worker": "--slots-per-worker", "mpi_api": "--mpi-api",
}
ROLE_FIELD_FLAG = {"cpu": "cpu", "memory": "memory", "cpu_limit": "cpu-limit", "memory_limit": "memory-limit",
                   "image": "image", "port": "port", "selector": "selector"}


def flag_for(loc: tuple) -> str:
    if not loc:
        return ""
    head = str(loc[0])
    if head in ("worker", "ps", "chief", "evaluator", "launcher") and len(loc) > 1:
        sub = ROLE_FIELD_FLAG.get(str(loc[1]), str(loc[1]))
        if head == "worker" and sub in ("cpu", "memory"):
            return f"--{sub}/--worker-{sub}"
        return f"--{head}-{sub}"
    if head == "sync" and len(loc) > 1:
        return {"repo": "--sync-source", "ref": "--sync-branch", "secret": "--sync-secret",
                "image": "--sync-image"}.get(str(loc[1]), "--sync-source")
    return FLAG_OF.get(head, f"--{head.replace('_', '-')}")


def spec_errors(exc) -> list[str]:
    """A pydantic ValidationError as one line per problem, each naming its flag."""
    lines = []
    for e in exc.errors():
        msg = str(e.get("msg", "")).removeprefix("Value error, ")
        flag = flag_for(tuple(e.get("loc", ())))
        if e.get("type") in ("int_parsing", "int_type"):
            msg = f"{e.get('input')!r} is not a whole number"
        lines.append(f"{flag}: {msg}" if flag else msg)
    return lines


def build_spec(kind: str, fields: dict[str, Any]):
    """Validate ``fields`` into the kind's spec; usage errors are printed one per line, exit 2."""
    from pydantic import ValidationError

    from ..spec import SPECS, JobKind

    try:
        return SPECS[JobKind(kind)](**fields)
    except ValidationError as exc:
        for line in spec_errors(exc):
            typer.echo(f"error: {line}", err=True)
        raise typer.Exit(2) from None


def common_fields(g: Globals, *, name, image, command, env, data, data_dir, annotation, label, selector,
                  toleration, priority, image_pull_secret, image_pull_policy, working_dir, shell, retry,
                  ttl_after_finished, running_timeout, clean_task_policy, share_memory, device, sync_mode,
                  sync_source, sync_branch, sync_image, sync_secret, tensorboard, tensorboard_image, logdir,
                  queue, scheduler, kind: str) -> dict[str, Any]:
    """The spec fields every kind shares, from the common options (flags win over the defaults file)."""
    from ..config import load_defaults, resolve_namespace
    from ..errors import UsageError

    defaults = load_defaults()
    if name is None:
        raise UsageError("--name is required: give the job a name, e.g. --name mnist")
    if sync_mode is None and sync_source:
        sync_mode = SyncMode.git
    if sync_mode is not None and not sync_source:
        raise UsageError("--sync-mode git needs --sync-source URL")
    for flag, value in (("--sync-branch", sync_branch), ("--sync-image", sync_image), ("--sync-secret", sync_secret)):
        if value and not sync_source:
            raise UsageError(f"{flag} needs --sync-source URL")
    fields: dict[str, Any] = {
        "name": name,
        "namespace": resolve_namespace(g.namespace, g.kubeconfig, g.context, defaults),
        "image": image or defaults.images.get(kind),
        "command": " ".join(command or []),
        "shell": shell,
        "env": env or [],
        "data": data or [],
        "data_dirs": data_dir or [],
        "annotations": annotation or [],
        "labels": label or [],
        "selector": selector or [],
        "tolerations": toleration or [],
        "priority_class": priority,
        "image_pull_secrets": (image_pull_secret or []) or defaults.image_pull_secrets,
        "working_dir": working_dir,
        "retry": retry,
        "ttl_after_finished": ttl_after_finished,
        "running_timeout": running_timeout,
        "share_memory": share_memory,
        "devices": device or [],
        "queue": queue,
        "scheduler": scheduler,
    }
    if image_pull_policy is not None:
        fields["image_pull_policy"] = image_pull_policy.value
    if clean_task_policy is not None:
        fields["clean_task_policy"] = clean_task_policy.value
    if sync_source:
        fields["sync"] = {"repo": sync_source, "ref": sync_branch or "",
                          "image": sync_image or defaults.images.get("sync"), "secret": sync_secret}
    if tensorboard:
        fields["tensorboard"] = {"logdir": logdir, "image": tensorboard_image or defaults.images.get("tensorboard")}
    return fields


def run_submit(g: Globals, kind: str, fields: dict[str, Any], *, values_file, set_value, dry_run: bool,
               output: DryRunOutput, wait: bool, timeout: str) -> None:
    """Shared tail of the three commands: validate, then render or install (and maybe wait)."""
    import yaml

    from ..errors import UsageError
    from ..helm import Helm, KubeTarget
    from ..jobs import job_values, render, submit, wait_for
    from ..spec import parse_duration

    spec = build_spec(kind, fields)
    try:
        wait_seconds = parse_duration(timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    values = job_values(spec, values_file or [], set_value or [])
    if dry_run:
        if output is DryRunOutput.values:
            typer.echo(yaml.safe_dump(values, sort_keys=False, allow_unicode=True), nl=False)
            return
        helm = Helm(g.helm_binary)
        typer.echo(render(spec, helm, values=values), nl=False)
        return
    from ..kube import Kube

    target = KubeTarget(kubeconfig=g.kubeconfig, context=g.context)
    helm = Helm(g.helm_binary, target)
    kube = Kube(g.kubeconfig, g.context)
    result = submit(spec, helm, kube, values=values, notify=lambda m: typer.echo(f"note: {m}", err=True))
    for okind, api_version, oname in result.objects:
        group = api_version.split("/")[0] if "/" in api_version else ""
        typer.echo(f"{okind.lower()}{'.' + group if group else ''}/{oname} created")
    ns = f" -n {result.namespace}"
    typer.echo(f"Follow it: arena-helm get {result.name}{ns}; logs: arena-helm logs -f {result.name}{ns}")
    if wait:
        phase = wait_for(kube, result, wait_seconds, progress=lambda m: typer.echo(m, err=True))
        if phase != "Succeeded":
            raise typer.Exit(1)


GLOBAL_OPTIONS = ("namespace", "kubeconfig", "context", "helm_binary", "debug")
RUN_OPTIONS = ("values_file", "set_value", "dry_run", "output", "wait", "timeout")
# The options every submit command takes: (parameter name, annotation, default).
COMMON_OPTIONS: list[tuple[str, Any, Any]] = [
    ("env", Env, None), ("data", Data, None), ("data_dir", DataDir, None), ("annotation", Annotation, None),
    ("label", Label, None), ("selector", Selector, None), ("toleration", TolerationO, None),
    ("priority", Priority, None), ("image_pull_secret", PullSecret, None), ("image_pull_policy", PullPolicyO, None),
    ("working_dir", WorkingDir, None), ("shell", Shell, "sh"), ("retry", Retry, None),
    ("ttl_after_finished", Ttl, None), ("running_timeout", RunningTimeout, None), ("clean_task_policy", CleanTask, None),
    ("share_memory", ShareMemory, None), ("device", Device, None), ("sync_mode", SyncModeO, None),
    ("sync_source", SyncSource, None), ("sync_branch", SyncBranch, None), ("sync_image", SyncImage, None),
    ("sync_secret", SyncSecret, None), ("tensorboard", TensorboardO, False),
    ("tensorboard_image", TensorboardImage, None), ("logdir", Logdir, "/training_logs"), ("queue", Queue, None),
    ("scheduler", Scheduler, None), ("values_file", ValuesFile, None), ("set_value", SetValue, None),
    ("dry_run", DryRun, False), ("output", OutputO, DryRunOutput.manifests), ("wait", Wait, False),
    ("timeout", Timeout, "30m"), ("namespace", Namespace, None), ("kubeconfig", Kubeconfig, None),
    ("context", Context, None), ("helm_binary", HelmBinary, None), ("debug", Debug, False),
]


class Submit:
    """What a submit command got: its globals, the shared spec fields, and how to run."""

    def __init__(self, kind: str, options: dict[str, Any], *, command, name, image):
        self.kind = kind
        self.g = Globals(*(options.pop(k) for k in GLOBAL_OPTIONS))
        self.run_options = {k: options.pop(k) for k in RUN_OPTIONS}
        self.fields = common_fields(self.g, name=name, image=image, command=command, kind=kind, **options)

    def run(self) -> None:
        run_submit(self.g, self.kind, self.fields, **self.run_options)


def with_common_options(fn):
    """Give a submit command the shared options: Typer sees the command's own parameters followed by
    COMMON_OPTIONS, and the command receives the latter as one dict, ``options``."""
    import functools
    import inspect

    own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name != "options"]
    shared = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
              for n, a, d in COMMON_OPTIONS]

    @functools.wraps(fn)
    def command(**kwargs):
        return fn({n: kwargs.pop(n) for n, _, _ in COMMON_OPTIONS}, **kwargs)

    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared
    command.__signature__ = inspect.Signature(params)
    command.__annotations__ = {p.name: p.annotation for p in params}
    del command.__wrapped__
    return command


# ---- commands ----------------------------------------------------------------------------------------
@with_common_options
def tfjob(
    options: dict[str, Any],
    command: Command = None,
    name: Name = None,
    image: Image = None,
    gpus: Gpus = 0,
    workers: Annotated[int, Opt("--workers", help="Worker replicas.", show_default=True)] = 1,
    cpu: Cpu = None,
    memory: Memory = None,
    ps: Annotated[int, Opt("--ps", help="Parameter-server replicas.", show_default=True)] = 0,
    ps_image: Annotated[str | None, Opt("--ps-image", help="Image of the PS replicas.")] = None,
    worker_image: Annotated[str | None, Opt("--worker-image", help="Image of the worker replicas.")] = None,
    chief: Annotated[bool, Opt("--chief", help="Add a Chief replica (needed by Estimator).")] = False,
    evaluator: Annotated[bool, Opt("--evaluator", help="Add an Evaluator replica.")] = False,
    worker_port: Annotated[int | None, Opt("--worker-port", help="Worker port (default 2222).")] = None,
    ps_port: Annotated[int | None, Opt("--ps-port", help="PS port (default 2222).")] = None,
    ps_gpus: Annotated[int, Opt("--ps-gpus", help="GPUs per PS pod.", show_default=True)] = 0,
    success_policy: Annotated[SuccessPolicy | None, Opt("--success-policy", help="AllWorkers: succeed when all workers do.")] = None,
    worker_cpu: Annotated[str | None, Opt("--worker-cpu", help="CPU request per worker.")] = None,
    worker_memory: Annotated[str | None, Opt("--worker-memory", help="Memory request per worker.")] = None,
    worker_cpu_limit: Annotated[str | None, Opt("--worker-cpu-limit", help="CPU limit per worker.")] = None,
    worker_memory_limit: Annotated[str | None, Opt("--worker-memory-limit", help="Memory limit per worker.")] = None,
    ps_cpu: Annotated[str | None, Opt("--ps-cpu", help="CPU request per PS.")] = None,
    ps_memory: Annotated[str | None, Opt("--ps-memory", help="Memory request per PS.")] = None,
    ps_cpu_limit: Annotated[str | None, Opt("--ps-cpu-limit", help="CPU limit per PS.")] = None,
    ps_memory_limit: Annotated[str | None, Opt("--ps-memory-limit", help="Memory limit per PS.")] = None,
    chief_cpu: Annotated[str | None, Opt("--chief-cpu", help="CPU request of the chief.")] = None,
    chief_memory: Annotated[str | None, Opt("--chief-memory", help="Memory request of the chief.")] = None,
    chief_cpu_limit: Annotated[str | None, Opt("--chief-cpu-limit", help="CPU limit of the chief.")] = None,
    chief_memory_limit: Annotated[str | None, Opt("--chief-memory-limit", help="Memory limit of the chief.")] = None,
    evaluator_cpu: Annotated[str | None, Opt("--evaluator-cpu", help="CPU request of the evaluator.")] = None,
    evaluator_memory: Annotated[str | None, Opt("--evaluator-memory", help="Memory request of the evaluator.")] = None,
    evaluator_cpu_limit: Annotated[str | None, Opt("--evaluator-cpu-limit", help="CPU limit of the evaluator.")] = None,
    evaluator_memory_limit: Annotated[str | None, Opt("--evaluator-memory-limit", help="Memory limit of the evaluator.")] = None,
    worker_selector: Annotated[list[str] | None, Opt("--worker-selector", help="Node selector of workers KEY=VALUE.")] = None,
    ps_selector: Annotated[list[str] | None, Opt("--ps-selector", help="Node selector of PS KEY=VALUE.")] = None,
    chief_selector: Annotated[list[str] | None, Opt("--chief-selector", help="Node selector of the chief KEY=VALUE.")] = None,
    evaluator_selector: Annotated[list[str] | None, Opt("--evaluator-selector", help="Node selector of the evaluator KEY=VALUE.")] = None,
) -> None:
    """Submit a TFJob. One worker and no PS runs as a single Chief (standalone), as in Arena."""
    sub = Submit("tfjob", options, command=command, name=name, image=image)
    fields = sub.fields

    def role(image=None, cpu=None, memory=None, cpu_limit=None, memory_limit=None, sel=None, port=None):
        out: dict[str, Any] = {}
        for k, v in (("image", image), ("cpu", cpu), ("memory", memory), ("cpu_limit", cpu_limit),
                     ("memory_limit", memory_limit), ("port", port)):
            if v is not None:
                out[k] = v
        if sel:
            out["selector"] = sel
        return out

    fields.update(
        workers=workers, gpus=gpus, ps_count=ps, use_chief=chief, use_evaluator=evaluator, ps_gpus=ps_gpus,
        worker=role(worker_image, worker_cpu or cpu, worker_memory or memory, worker_cpu_limit,
                    worker_memory_limit, _kv(worker_selector, "--worker-selector"), worker_port),
        ps=role(ps_image, ps_cpu, ps_memory, ps_cpu_limit, ps_memory_limit, _kv(ps_selector, "--ps-selector"),
                ps_port),
        chief=role(None, chief_cpu, chief_memory, chief_cpu_limit, chief_memory_limit,
                   _kv(chief_selector, "--chief-selector")),
        evaluator=role(None, evaluator_cpu, evaluator_memory, evaluator_cpu_limit, evaluator_memory_limit,
                       _kv(evaluator_selector, "--evaluator-selector")),
    )
    if success_policy is not None:
        fields["success_policy"] = success_policy.value
    sub.run()


def _kv(items: list[str] | None, flag: str) -> dict[str, str]:
    from ..errors import UsageError

    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag}: {item!r} is not KEY=VALUE")
        out[key] = value
    return out


@with_common_options
def pytorchjob(
    options: dict[str, Any],
    command: Command = None,
    name: Name = None,
    image: Image = None,
    gpus: Gpus = 0,
    workers: Annotated[int, Opt("--workers", help="Pods in all, the master included (3 = master + 2 workers).",
                                show_default=True)] = 1,
    cpu: Cpu = None,
    memory: Memory = None,
    cpu_limit: Annotated[str | None, Opt("--cpu-limit", help="CPU limit per pod.")] = None,
    memory_limit: Annotated[str | None, Opt("--memory-limit", help="Memory limit per pod.")] = None,
    nproc_per_node: Annotated[str | None, Opt("--nproc-per-node", help="Processes per pod (number, auto, cpu, gpu).")] = None,
) -> None:
    """Submit a PyTorchJob: one Master and --workers - 1 Workers, as in Arena."""
    sub = Submit("pytorchjob", options, command=command, name=name, image=image)
    fields = sub.fields
    worker = {k: v for k, v in (("cpu", cpu), ("memory", memory), ("cpu_limit", cpu_limit),
                                ("memory_limit", memory_limit)) if v is not None}
    fields.update(workers=workers, gpus=gpus, worker=worker, nproc_per_node=nproc_per_node)
    sub.run()


@with_common_options
def mpijob(
    options: dict[str, Any],
    command: Command = None,
    name: Name = None,
    image: Image = None,
    gpus: Gpus = 0,
    workers: Annotated[int, Opt("--workers", help="Worker replicas (plus one launcher).", show_default=True)] = 1,
    cpu: Cpu = None,
    memory: Memory = None,
    cpu_limit: Annotated[str | None, Opt("--cpu-limit", help="CPU limit per worker.")] = None,
    memory_limit: Annotated[str | None, Opt("--memory-limit", help="Memory limit per worker.")] = None,
    launcher_cpu: Annotated[str | None, Opt("--launcher-cpu", help="CPU request of the launcher.")] = None,
    launcher_memory: Annotated[str | None, Opt("--launcher-memory", help="Memory request of the launcher.")] = None,
    slots_per_worker: Annotated[int | None, Opt("--slots-per-worker", help="MPI slots per worker (default 1).")] = None,
    mpi_api: Annotated[MpiApi, Opt("--mpi-api", help="MPIJob API: auto (what the cluster serves; v2beta1 in "
                                   "--dry-run), v2beta1 (mpi-operator) or v1 (training operator).",
                                   show_default=True)] = MpiApi.auto,
) -> None:
    """Submit an MPIJob: --workers workers and one launcher that runs the command."""
    sub = Submit("mpijob", options, command=command, name=name, image=image)
    fields = sub.fields
    worker = {k: v for k, v in (("cpu", cpu), ("memory", memory), ("cpu_limit", cpu_limit),
                                ("memory_limit", memory_limit)) if v is not None}
    launcher = {k: v for k, v in (("cpu", launcher_cpu), ("memory", launcher_memory)) if v is not None}
    fields.update(workers=workers, gpus=gpus, worker=worker, launcher=launcher, slots_per_worker=slots_per_worker,
                  mpi_api=mpi_api.value)
    sub.run()


# The submit commands, built on first use (each has ~80 options: building all seven costs ~0.1 s).
_SUBMIT = "Submit a {}."
app = lazy_app(
    {
        name: ("submit", fn, _SUBMIT.format(kind), hidden, CMD_SETTINGS)
        for name, fn, kind, hidden in (
            ("tfjob", "tfjob", "TFJob (one worker and no PS runs as a single Chief)", False),
            ("tf", "tfjob", "TFJob", True),
            ("pytorchjob", "pytorchjob", "PyTorchJob (Master + --workers - 1 Workers)", False),
            ("pytorch", "pytorchjob", "PyTorchJob", True),
            ("py", "pytorchjob", "PyTorchJob", True),
            ("mpijob", "mpijob", "MPIJob (--workers workers and one launcher)", False),
            ("mpi", "mpijob", "MPIJob", True),
        )
    },
    help="Submit a training job (TFJob, PyTorchJob or MPIJob) as a Helm release.",
)
