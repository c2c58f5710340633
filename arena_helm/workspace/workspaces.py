"""Interactive workspaces: a JupyterLab, a code-server (VS Code in the browser) or a shell next to the data,
with GPUs, that gives its GPUs back when idle (``arena-helm workspace start|list|stop|delete``; the chart is
``charts/workspace``).

A workspace is a helm release of the workspace chart: a batch Job ``<name>-<run>`` whose server ends itself
after ``--idle-stop`` without activity (Jupyter's own no-activity shutdown, code-server's ``--idle-timeout-seconds``,
for a shell a watcher that is the container's command: see the chart's ``_helpers.tpl``), so its pod completes and its GPUs are
free; ``--max-lifetime`` is the Job's ``activeDeadlineSeconds``. The home PVC ``<name>-home`` (``helm.sh/
resource-policy: keep``) outlives the Job, a stop and a ``delete --keep-home``. ``stop`` is a helm upgrade
that renders no Job; ``start`` of a stopped workspace a helm upgrade with the next ``run`` (a new Job, the
same values). The server's token (Jupyter) or password (code-server) is a Secret ``<name>-token`` made
here with a random value, never a value of the release: the chart names it only.

Here: the spec (its fields are the flags of ``workspace start``), the chart's values model (its
``values.schema.json`` is generated from it), spec -> values (pure: what ``--dry-run`` renders), the view of
a workspace from its release, Job, pods and home (pure), and the actions, through the injected adapters.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ..core import grammars as k8s
from ..core.catalog import FAMILY_CHART, Family, release_chart
from ..core.enums import WorkspaceType
from ..core.errors import AlreadyExistsError, NotFoundError, UsageError
from ..core.grammars import Deadline, DNSSubdomain, Duration, Image, Quantity, QueueName, parse_quantity
from ..workload.chart_values import Empty, PodChartValues, PodSecurityContext, ValuesModel
from ..workload.preflight import check_local_queue
from ..workload.spec import Gpus, JobSpec, PodJobSpec, PodLevelFlags, opt

if TYPE_CHECKING:
    from ..views.jobs import JobView
    from ..workload.gateway import Cluster

CHART = FAMILY_CHART[Family.WORKSPACE]
# <name>-home (PVC), <name>-token (Secret), <name>-<run> (the Job, whose pods add -xxxxx): kept well under 63
NAME_MAX = 40
TOKEN_KEY = "token"
TYPE_LABEL = "arena-helm.kubeflow.org/workspace-type"
RUN_LABEL = "arena-helm.kubeflow.org/workspace-run"
SELECTOR = "app.kubernetes.io/name=workspace"
DEFAULT_IDLE_STOP = "2h"
STATES = ("RUNNING", "PENDING", "QUEUED", "STOPPED", "FAILED")


def _shared(model: type, name: str) -> Any:
    """A field of the job specs, for the same flag of ``workspace start`` (one help text, one parser)."""
    return copy.copy(model.model_fields[name])


# ---- the spec: the flags of `workspace start` ------------------------------------------------------------
class WorkspaceSpec(PodLevelFlags):
    """A workspace: what runs, its resources, its data and its home. Each field is the flag of the same name."""

    OWNED_LABELS: ClassVar[frozenset[str]] = PodLevelFlags.OWNED_LABELS | {
        "app.kubernetes.io/component", TYPE_LABEL, RUN_LABEL}  # charts/workspace templates/_helpers.tpl

    name: str = Field(description="Workspace name (also its release name): the NAME argument.",
                      json_schema_extra={"flag": {"cli": False, "argument": "NAME"}})
    namespace: str = _shared(JobSpec, "namespace")
    type: WorkspaceType = opt("What runs: jupyter (JupyterLab), code-server (VS Code in the browser) or shell "
                              "(reached with workspace attach).", WorkspaceType.jupyter)
    image: Image | None = opt("Image (default: the type's: the chart's images).")
    gpus: Gpus = _shared(PodJobSpec, "gpus")
    cpu: Quantity | None = opt("CPU (e.g. 4, 500m): the request and the limit.")
    memory: Quantity | None = opt("Memory (e.g. 16Gi): the request and the limit.")
    home_size: Quantity = opt("Size of the home volume (a PVC <name>-home, kept across stops).", "20Gi")
    home: DNSSubdomain | None = opt("Use this existing PVC as the home (none is made; delete keeps it).")
    storage_class: DNSSubdomain | None = opt("StorageClass of the home PVC (default: the cluster's).")
    idle_stop: Duration = opt("Stop after this long without activity (e.g. 30m, 2h; 0: never).", DEFAULT_IDLE_STOP,
                              validate_default=True)
    max_lifetime: Deadline | None = opt("End the workspace after this long, busy or not (the Job's "
                                        "activeDeadlineSeconds).")
    queue_name: QueueName | None = _shared(JobSpec, "queue_name")
    share_memory: Quantity | None = _shared(JobSpec, "share_memory")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not name:
            raise ValueError("the workspace name is empty: give NAME")
        k8s.check_dns1035(name, "workspace name")
        if len(name) > NAME_MAX:
            raise ValueError(f"workspace name {name!r} is {len(name)} characters; at most {NAME_MAX} (its Job is "
                             "<name>-<run>, its home <name>-home)")
        return name

    @model_validator(mode="after")
    def _cross(self) -> WorkspaceSpec:
        if self.type is WorkspaceType.code_server and 0 < self.idle_stop <= 60:
            raise ValueError(f"--idle-stop {self.idle_stop}s: code-server stops itself only after more than 60s "
                             "without activity (its --idle-timeout-seconds): give more, or 0 for never")
        size = parse_quantity(self.home_size)
        if size is not None and size <= 0:  # a claim's storage request must be greater than zero (core/v1 validation)
            raise ValueError(f"--home-size {self.home_size}: give a size greater than zero (e.g. 20Gi)")
        if self.home and "home_size" in self.model_fields_set:
            raise ValueError("--home-size is for the home PVC arena-helm makes; --home uses an existing one as it is")
        if self.home and self.storage_class:
            raise ValueError("--storage-class is for the home PVC arena-helm makes; --home uses an existing one")
        return self


# ---- the chart's values ---------------------------------------------------------------------------------
class WorkspaceImages(ValuesModel):
    jupyter: Image = Field("quay.io/jupyter/base-notebook:python-3.12", description="Image of type jupyter: a "
                           "Jupyter Docker Stacks image (its entrypoint runs start-notebook.py; user jovyan, port "
                           "8888); e.g. a pytorch-notebook cuda12 tag for GPUs.")
    code_server: Image = Field("codercom/code-server:4.106.0", alias="code-server",
                               description="Image of type code-server: 4.106.0 or later (--idle-timeout-seconds; "
                               "user coder, port 8080).")
    shell: Image = Field("ubuntu:24.04", description="Image of type shell: any image with a POSIX sh.")


class WorkspaceHome(ValuesModel):
    claim_name: Empty | DNSSubdomain = Field("", description="An existing PVC to use as the home; \"\" makes "
                                             "<name>-home (kept on uninstall: helm.sh/resource-policy keep).")
    size: Quantity = Field("20Gi", description="Size of the PVC <name>-home.")
    storage_class_name: Empty | DNSSubdomain = Field("", description="StorageClass of <name>-home; \"\" = the "
                                                     "cluster's default.")
    mount_path: Empty | k8s.AbsPath = Field("", description="Where the home is mounted; \"\" = the type's home "
                                            "(/home/jovyan, /home/coder, /root).")


class WorkspaceValues(PodChartValues):
    """The values of the workspace chart."""

    type: Literal["jupyter", "code-server", "shell"] = Field(
        "jupyter", description="What runs: jupyter (JupyterLab, idle shutdown by Jupyter itself), code-server or "
        "shell (each stopped by a watcher in its command when idle).")
    image: Empty | Image = Field("", description="Image; \"\" = images.<type>.")
    images: WorkspaceImages = Field(default_factory=WorkspaceImages, description="The image of each type.")
    command: list[str] = Field([], description="The container's command (exec form), instead of the type's (and "
                               "of its arguments); the idle stop is then the command's own business.")
    port: int | None = Field(None, ge=1, le=65535, description="Port of the server (its Service's port too); "
                             "null = the type's (8888 jupyter, 8080 code-server; a shell has none).")
    token_secret: Empty | DNSSubdomain = Field(
        "", description="Secret whose key `token` is the Jupyter token (JUPYTER_TOKEN) or the code-server password "
        "(PASSWORD); \"\" = none (Jupyter then makes one of its own; code-server runs with --auth none).")
    idle_stop_seconds: int = Field(7200, ge=0, description="Stop after this many seconds without activity (the "
                                   "pod completes, the home stays); 0 = never.")
    active_deadline_seconds: int | None = Field(None, ge=1, description="The Job's activeDeadlineSeconds: the "
                                                "longest the workspace runs, busy or not; null = no limit.")
    stopped: bool = Field(False, description="Render no Job (arena-helm workspace stop); the home and the Service "
                          "stay.")
    run: int = Field(1, ge=1, description="The run number: the Job is <name>-<run>; arena-helm workspace start "
                     "of a stopped workspace raises it (a new Job with the same values).")
    shm_size: Empty | Quantity = Field("2Gi", description="Size of the memory-backed /dev/shm; \"\" = the "
                                       "runtime's default.")
    home: WorkspaceHome = Field(default_factory=WorkspaceHome, description="The home volume.")
    queue: Empty | QueueName = Field("", description="Kueue LocalQueue; \"\" = none. Sets the label "
                                     "kueue.x-k8s.io/queue-name on the Job.")
    pod_security_context: PodSecurityContext = Field(
        default_factory=PodSecurityContext, description="Pod-level securityContext; unset, fsGroup is the type's "
        "user group (100 jupyter, 1000 code-server), so that the home is writable.")


def token_secret_name(name: str) -> str:
    return f"{name}-token"


def home_claim(name: str, values: dict[str, Any]) -> str:
    """The home PVC of workspace ``name`` with ``values`` (its own ``<name>-home``, or the user's)."""
    return str(((values.get("home") or {}).get("claimName")) or f"{name}-home")


def workspace_values(spec: WorkspaceSpec) -> dict[str, Any]:
    """The chart values for ``spec``: only what the spec sets; the chart's defaults do the rest. Pure."""
    values: dict[str, Any] = {"type": spec.type.value, "idleStopSeconds": spec.idle_stop}
    if spec.type is not WorkspaceType.shell:
        values["tokenSecret"] = token_secret_name(spec.name)
    if spec.image:
        values["image"] = spec.image
    if spec.max_lifetime is not None:
        values["activeDeadlineSeconds"] = spec.max_lifetime
    values.update(spec.pod_values())
    home: dict[str, Any] = {}
    if spec.home:
        home["claimName"] = spec.home
    elif "home_size" in spec.model_fields_set:
        home["size"] = spec.home_size
    if spec.storage_class:
        home["storageClassName"] = spec.storage_class
    if home:
        values["home"] = home
    return values


# ---- the view (pure) ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkspaceView:
    name: str
    namespace: str
    type: str
    status: str
    reason: str
    gpus: int
    idle_stop: int
    home: str
    run: int
    created: str  # the oldest of its Job and home (RFC 3339): the workspace's age; "" unknown
    pod: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "namespace": self.namespace, "type": self.type, "status": self.status,
                "reason": self.reason, "gpus": self.gpus, "idleStopSeconds": self.idle_stop, "home": self.home,
                "run": self.run, "pod": self.pod or None}


def _condition(job: dict, ctype: str) -> dict | None:
    return next((c for c in (job.get("status") or {}).get("conditions") or []
                 if c.get("type") == ctype and c.get("status") == "True"), None)


def workspace_state(job: dict | None, pods: list[dict], stopped: bool) -> tuple[str, str]:
    """(status, reason) of a workspace from its Job and the Job's pods. A Job that completed is a server that
    ended itself (idle); one past its activeDeadlineSeconds was stopped at its --max-lifetime."""
    if stopped or job is None:
        return "STOPPED", "stopped (workspace stop)" if stopped else "no Job"
    if _condition(job, "Complete") or _condition(job, "SuccessCriteriaMet"):
        return "STOPPED", "ended itself (idle, or its server exited 0)"
    failed = _condition(job, "Failed") or _condition(job, "FailureTarget")
    if failed:
        if failed.get("reason") == "DeadlineExceeded":
            return "STOPPED", "its --max-lifetime was reached"
        return "FAILED", f"{failed.get('reason', '')}: {failed.get('message', '')}".strip(": ")
    if (job.get("spec") or {}).get("suspend"):
        return "QUEUED", "suspended until Kueue admits it" if ((job.get("metadata") or {}).get("labels") or {}).get(
            "kueue.x-k8s.io/queue-name") else "suspended"
    live = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    for pod in live:
        status = pod.get("status") or {}
        if status.get("phase") == "Running" and all(c.get("ready") for c in status.get("containerStatuses") or [{}]):
            return "RUNNING", ""
    if live:
        from ..views.reasons import pod_status

        unscheduled = next((c for c in (live[0].get("status") or {}).get("conditions") or []
                            if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
        if unscheduled and unscheduled.get("message"):  # the scheduler's verdict, as kubectl describe shows it
            return "PENDING", f"{unscheduled.get('reason', 'Unschedulable')}: {unscheduled['message']}"
        return "PENDING", pod_status(live[0])
    return "PENDING", "no pod yet"


def workspace_view(release: dict, values: dict[str, Any] | None, job: dict | None, pods: list[dict],
                   home_pvc: dict | None) -> WorkspaceView:
    """One workspace from helm's list item, its values (None: not read), its current Job, the Job's pods and
    its home PVC."""
    name, namespace = release["name"], release.get("namespace", "")
    values = values or {}
    labels = {}
    for obj in (job, home_pvc):
        labels.update(((obj or {}).get("metadata") or {}).get("labels") or {})
    wtype = str(values.get("type") or labels.get(TYPE_LABEL) or "-")
    stopped = bool(values.get("stopped")) if values else job is None
    status, reason = workspace_state(job, pods, stopped)
    gpus = 0
    for c in (((job or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []:
        gpus += int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0) or 0)
    if job is None:
        gpus = int(values.get("gpus") or 0)
    idle = (((job or {}).get("metadata") or {}).get("annotations") or {}).get("arena-helm.kubeflow.org/idle-stop")
    idle_stop = int(values.get("idleStopSeconds", idle if idle is not None else 0) or 0)
    pvc_status = ((home_pvc or {}).get("status") or {}).get("phase", "")
    home = f"{((home_pvc or {}).get('metadata') or {}).get('name', '')} ({pvc_status})" if home_pvc else "-"
    run = int(values.get("run") or _run_of(job or {}))
    live = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    return WorkspaceView(name=name, namespace=namespace, type=wtype, status=status, reason=reason, gpus=gpus,
                         idle_stop=idle_stop, home=home, run=run, created=_created(job, home_pvc),
                         pod=(live[0]["metadata"]["name"] if live else ""))


def _created(*objs: dict | None) -> str:
    stamps = [((o or {}).get("metadata") or {}).get("creationTimestamp") or "" for o in objs]
    stamps = [s for s in stamps if s]
    return min(stamps) if stamps else ""


def age(created: str, now: dt.datetime | None = None) -> str:
    from ..core.grammars import parse_time
    from ..views.jobs import short_duration

    when = parse_time(created)
    if when is None:
        return "-"
    return short_duration(((now or dt.datetime.now(dt.UTC)) - when).total_seconds())


# ---- the actions (helm and the API through the injected adapters) ----------------------------------------
def _is_workspace(release: dict) -> bool:
    return release_chart(release) == CHART


def _is_ours(c: Cluster, namespace: str, name: str) -> dict:
    release = c.find(namespace, name)
    if release is None:
        raise NotFoundError(f"no workspace named {name} in namespace {namespace} (arena-helm workspace list)")
    if not _is_workspace(release):
        raise UsageError(f"release {name} is not a workspace (chart {release.get('chart')})")
    return release


def render_workspace(helm_binary: str | None, namespace: str, name: str, values: dict[str, Any]) -> str:
    """``workspace start --dry-run``: the manifests (``helm template``), no cluster, no kubeconfig."""
    from ..adapters.helm import Helm
    from ..workload.gateway import render

    return render(Helm(helm_binary), CHART, name, values, namespace)


def _upgrade(c: Cluster, namespace: str, name: str, values: dict[str, Any]) -> None:
    c.upgrade(CHART, namespace, name, values, reuse_values=True)


def start_in(c: Cluster, namespace: str, spec: WorkspaceSpec, values: dict[str, Any], *,
             given: set[str]) -> str:
    """Start a new workspace (its token Secret, then a helm install), or start a stopped one again with its
    own values (``given``: the flags the user set besides the name; a restart takes none). Returns what was
    done: "started" or "restarted". A failed install leaves nothing: the release, the Secret and the home."""
    from ..core.errors import ArenaHelmError

    name = spec.name
    release = c.find(namespace, name)
    if release is not None and not _is_workspace(release):
        raise AlreadyExistsError(f"a release named {name} already exists in namespace {namespace} (chart "
                                 f"{release.get('chart')}): pick another name")
    if release is not None:
        old = c.values(namespace, name)
        view = workspace_view(release, old, *_objects(c, namespace, name, old))
        running = view.status not in ("STOPPED", "FAILED")
        if given:  # the same advice whether it runs or not: a workspace starts again only as it was
            flags = ", ".join(f"--{f.replace('_', '-')}" for f in sorted(given))
            raise UsageError(f"workspace {name} {f'is {view.status} already' if running else 'exists'}: it starts "
                             f"again only with its own values (no {flags}); to start it with these, delete it "
                             f"first (arena-helm workspace delete {name} -n {namespace}; --keep-home keeps its home)")
        if running:
            raise AlreadyExistsError(f"workspace {name} is {view.status} already (arena-helm workspace stop {name} "
                                     "first to start it anew)")
        _upgrade(c, namespace, name, {"stopped": False, "run": int(old.get("run") or 1) + 1})
        return "restarted"
    check_local_queue(c.kube, namespace, spec.queue_name)
    secret = values.get("tokenSecret")
    made_secret = False
    try:
        if secret:
            import secrets as random

            made_secret = c.kube.create_secret(namespace, secret, {TOKEN_KEY: random.token_urlsafe(24)},
                                               labels={"app.kubernetes.io/name": CHART,
                                                       "app.kubernetes.io/instance": name})
        c.install(CHART, namespace, name, values)
    except ArenaHelmError:
        _remove(c, namespace, name, values, keep_home=False, secret=made_secret)
        raise
    return "started"


def start_workspace(spec: WorkspaceSpec, helm: Any = None, kube: Any = None) -> str:
    """The Python API of ``workspace start``: start ``spec`` in ``spec.namespace`` (or a stopped workspace of
    that name again, with its own values: then ``spec`` may set nothing but its name and namespace). Returns
    "started" or "restarted". ``helm``/``kube``: adapters to use (default: the current kubeconfig context)."""
    from ..adapters.kube import KubeReader
    from ..workload.gateway import Cluster

    kube = kube or KubeReader()
    if helm is None:  # helm reaches the cluster ``kube`` reaches
        from ..adapters.helm import Helm, KubeTarget

        helm = Helm(target=KubeTarget(kube.kubeconfig, kube.context))
    given = spec.model_fields_set - {"name", "namespace"}
    return start_in(Cluster(helm, kube), spec.namespace, spec, workspace_values(spec), given=given)


def _remove(c: Cluster, namespace: str, name: str, values: dict[str, Any], *, keep_home: bool,
            secret: bool = True) -> None:
    """Uninstall the release (if any) and remove what outlives it: the home PVC arena-helm made (unless
    ``keep_home``) and the token Secret (``secret``)."""
    from ..core.errors import ArenaHelmError

    try:
        c.uninstall(namespace, name)
    except NotFoundError:
        pass
    except ArenaHelmError:
        if c.find(namespace, name) is not None:
            raise
    if not keep_home and not (values.get("home") or {}).get("claimName"):
        c.kube.delete_pvc(namespace, f"{name}-home")
    if secret and values.get("tokenSecret"):
        c.kube.delete_secret(namespace, str(values["tokenSecret"]))


def stop_workspace(c: Cluster, namespace: str, name: str) -> None:
    """End the workspace's Job (a helm upgrade that renders none); the home and the release stay."""
    _is_ours(c, namespace, name)
    _upgrade(c, namespace, name, {"stopped": True})


def delete_workspace(c: Cluster, namespace: str, name: str, *, keep_home: bool) -> str:
    """Uninstall the workspace; its home PVC too unless ``keep_home`` (or it was the user's own --home).
    Returns the home claim's name."""
    _is_ours(c, namespace, name)
    values = c.values(namespace, name)
    _remove(c, namespace, name, values, keep_home=keep_home)
    return home_claim(name, values)


def _objects(c: Cluster, namespace: str, name: str, values: dict[str, Any]) -> tuple[dict | None, list[dict],
                                                                                       dict | None]:
    """The current Job of workspace ``name``, its pods and the home PVC."""
    selector = f"{SELECTOR},app.kubernetes.io/instance={name}"
    jobs = c.kube.list_batch_jobs(namespace, selector)
    run = int(values.get("run") or 1)
    job = next((j for j in jobs if j["metadata"]["name"] == f"{name}-{run}"), None)
    pods = c.kube.list_pods(namespace, selector=f"job-name={name}-{run}") if job else []
    pvc = c.kube.get_pvc(namespace, home_claim(name, values))
    return job, pods, pvc


def _run_of(job: dict) -> int:
    return int(((job.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL) or 0)


def _job_home(job: dict) -> str:
    """The claim a workspace Job mounts as its home (the volume named home)."""
    volumes = (((job.get("spec") or {}).get("template") or {}).get("spec") or {}).get("volumes") or []
    home = next((v for v in volumes if v.get("name") == "home"), {})
    return str((home.get("persistentVolumeClaim") or {}).get("claimName") or "")


def get_workspace(c: Cluster, namespace: str, name: str) -> WorkspaceView:
    release = _is_ours(c, namespace, name)
    values = c.values(namespace, name)
    return workspace_view(release, values, *_objects(c, namespace, name, values))


def running_workspace(c: Cluster, namespace: str, name: str, timeout: float, *, poll: float = 1.0,
                      notify=None) -> WorkspaceView:
    """The workspace once RUNNING (its pod ready); says once through ``notify`` that it waits. A STOPPED or
    FAILED one is an error at once (start it first), a PENDING one after ``timeout`` seconds."""
    import time

    from ..core.errors import ArenaHelmError, WaitTimeoutError

    deadline = time.monotonic() + timeout
    told = False
    while True:
        view = get_workspace(c, namespace, name)
        if view.status == "RUNNING":
            return view
        if view.status in ("STOPPED", "FAILED"):
            raise ArenaHelmError(f"workspace {name} is {view.status} ({view.reason}): arena-helm workspace start "
                                 f"{name} -n {namespace} first")
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"workspace {name} is not running after {int(timeout)}s ({view.status}: "
                                   f"{view.reason}; arena-helm workspace get {name} -n {namespace})")
        if not told and notify:
            notify(f"waiting for workspace {name} to run ({view.status}: {view.reason}; up to {int(timeout)}s: "
                   "--timeout)")
            told = True
        time.sleep(poll)


def workspace_url(wtype: str, local_port: int, token: str | None) -> str:
    """Where the browser opens a workspace's server forwarded to ``local_port``: JupyterLab with its token in
    the URL (Jupyter's login link); code-server's page (its password is asked there)."""
    from urllib.parse import quote

    if wtype == "jupyter":
        return f"http://localhost:{local_port}/lab" + (f"?token={quote(token, safe='')}" if token else "")
    return f"http://localhost:{local_port}/"


def _jobs_and_pods(c: Cluster, ns: str | None) -> tuple[dict[tuple[str, str], dict],
                                                         dict[tuple[str, str], list[dict]]]:
    """(namespace, workspace) -> its Job of the highest run, and (namespace, Job) -> the Job's pods: one LIST
    each, whatever their number."""
    latest: dict[tuple[str, str], dict] = {}
    for j in c.kube.list_batch_jobs(ns, SELECTOR):
        labels = j["metadata"].get("labels") or {}
        key = (j["metadata"]["namespace"], labels.get("app.kubernetes.io/instance", ""))
        if key not in latest or _run_of(j) > _run_of(latest[key]):
            latest[key] = j
    pods: dict[tuple[str, str], list[dict]] = {}
    for p in c.kube.list_pods(ns, selector=SELECTOR):
        owner = ((p.get("metadata") or {}).get("labels") or {}).get("job-name", "")
        pods.setdefault((p["metadata"]["namespace"], owner), []).append(p)
    return latest, pods


def list_workspaces(c: Cluster, namespace: str, all_namespaces: bool) -> list[WorkspaceView]:
    """Every workspace: helm's list, then one LIST each of the workspace Jobs, their pods and PVCs, whatever
    their number; a stopped workspace's values are read (its run and type live there)."""
    releases = c.of_chart(CHART, namespace, all_namespaces)
    if not releases:
        return []
    ns = None if all_namespaces else namespace
    latest, pods = _jobs_and_pods(c, ns)
    pvcs = {(v["metadata"]["namespace"], v["metadata"]["name"]): v for v in c.kube.list_pvcs(ns, SELECTOR)}
    views = []
    for r in sorted(releases, key=lambda r: (r.get("namespace", ""), r["name"])):
        key_ns = r.get("namespace", namespace)
        job = latest.get((key_ns, r["name"]))
        values = None if job is not None else c.values(key_ns, r["name"])
        job_pods = pods.get((key_ns, job["metadata"]["name"]), []) if job else []
        claim = _job_home(job) if job is not None else home_claim(r["name"], values or {})
        pvc = pvcs.get((key_ns, claim)) if claim == f"{r['name']}-home" else c.kube.get_pvc(key_ns, claim)
        views.append(workspace_view(r, values, job, job_pods, pvc))
    return views


# ---- workspaces among the jobs of top job ------------------------------------------------------------------
def workspace_job_view(job: dict, pods: list[dict], now: dt.datetime) -> JobView:
    """A running (or waiting) workspace as a row of ``top job``: its Job and pods, GPUs requested from the Job's
    template, its pod the one instance. Pure."""
    from ..views.jobs import JobView, container_requests, instance_of, short_duration

    meta = job.get("metadata") or {}
    name = (meta.get("labels") or {}).get("app.kubernetes.io/instance") or meta.get("name", "")
    status, reason = workspace_state(job, pods, False)
    live = sorted((p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")),
                  key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "")
    instances = [instance_of(p, now) for p in live[-1:]]
    if instances:
        instances[0].is_chief = True
    template = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    gpus, cpu, memory = (container_requests(template.get("containers") or [], r) for r in ("nvidia.com/gpu", "cpu", "memory"))
    created = k8s.parse_time(meta.get("creationTimestamp"))
    seconds = (now - created).total_seconds() if created else None
    return JobView(name=name, namespace=meta.get("namespace", ""), trainer=CHART, status=status,
                   duration=short_duration(seconds), created=meta.get("creationTimestamp", ""), ended="",
                   requested_gpus=int(gpus), allocated_gpus=int(gpus) if status == "RUNNING" else 0,
                   requested_cpu=cpu, requested_memory=memory,
                   node=instances[0].node if instances else "N/A", chief_name=instances[0].name if instances else "",
                   priority=template.get("priorityClassName") or "N/A", instances=instances,
                   release={"name": name, "namespace": meta.get("namespace", ""), "chart": CHART},
                   created_ts=created.timestamp() if created else 0.0, reason=reason, uid=meta.get("uid", ""),
                   duration_seconds=max(int(seconds), 0) if seconds is not None else 0,
                   start_ts=int(created.timestamp()) if created else 0, family=Family.WORKSPACE)


def active_workspace_views(c: Cluster, namespace: str, all_namespaces: bool) -> list[JobView]:
    """The workspaces whose current Job has not ended (those that hold or wait for GPUs), as ``top job`` rows:
    two LISTs (the workspace Jobs and their pods), no helm. A user who may not list Jobs sees none (the jobs'
    view goes on without them)."""
    from ..core.errors import ForbiddenError
    from ..releases.reader import now_utc

    try:
        latest, pods = _jobs_and_pods(c, None if all_namespaces else namespace)
    except ForbiddenError:
        return []
    now = now_utc()
    views = [workspace_job_view(job, pods.get((ns, job["metadata"]["name"]), []), now)
             for (ns, _), job in sorted(latest.items())]
    return [v for v in views if v.status != "STOPPED"]
