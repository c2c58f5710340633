"""``arena-helm doctor``: is this cluster ready for arena-helm, and for this user? One line per thing
docs/cluster-setup.md lists, each OK, MISSING (with the fix) or SKIP (cannot be told from here, and why).

Everything is judged by what the API server itself answers, with the user's own credentials:

- the API server: reachable, its version at least the charts' ``kubeVersion`` (1.20);
- the user's permissions: a SelfSubjectAccessReview for every verb of ``PERMISSIONS`` (the Role and
  ClusterRole of docs/rbac/arena-helm-user.yaml are exactly these; a unit test holds them equal);
- each job kind: served (API discovery), and a minimal job of it, rendered by its chart as ``submit`` renders
  it, passes a server-side dry-run create with strict field validation: the CRD's schema, the admission
  webhooks of the operators that have them (training operator, Trainer, Kueue) and the user's RBAC all answer,
  and nothing is written;
- mpi-operator, which has no webhook: the Lease it always holds, renewed lately;
- the other families' kinds that need an API of their own (``apis`` of their descriptors: KServe's
  InferenceService, the LeaderWorkerSet, a traffic split's HTTPRoute or Istio VirtualService): served, and for a
  serving kind a minimal serving rendered by its chart passes the same dry run through its controller's webhook;
- GPUs: nodes with a ``*/gpu`` resource (the device plugin's); Prometheus found and DCGM's series in it;
  CPU/memory metrics; Kueue's LocalQueues in the namespace.

A check is ``needed`` when the commands need it for everyday work (helm, the API server, the namespaced
Role, the job kinds asked for, their controllers, GPUs on the nodes); the others only some flags or columns
need (the detail says which). A serving or traffic-split kind is needed when ``-T`` names it. Exit 0 when no
needed check is MISSING.

Operators are not looked for as Deployments: a Deployment can have any name in any namespace, a namespaced
user cannot read them, and a Deployment ready is no proof that its webhook answers; the dry run is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.catalog import ROLE_DOC, Api, OneChartKind
from ..core.errors import ArenaHelmError, ForbiddenError, NotFoundError, UsageError
from ..core.jobkinds import BY_KEY, BY_NAME, KINDS, Controller, JobKindInfo, names_hint
from ..core.servekinds import API_KINDS, ServeKind

OK, MISSING, SKIP = "OK", "MISSING", "SKIP"
MIN_KUBERNETES = (1, 20)  # the charts' kubeVersion: >=1.20.0-0
ALL_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
READ = ("get", "list", "watch")
DOCTOR_JOB = "arena-helm-doctor-"  # the dry-run job's generateName
DOCTOR_IMAGE = "busybox:1.36"
# the job kinds that name a training runtime (their --runtime), and those served by an operator known by its Lease
RUNTIME_KINDS = tuple(k.key for k in KINDS if k.runtime_key)
LEASE_KINDS = tuple(k.key for k in KINDS if any(c.lease for c in k.controllers))


def _api_kinds(group: str) -> tuple[str, ...]:
    """The keys of the kinds whose objects are of API ``group``."""
    return tuple(k.key for k in API_KINDS.values() if any(a.group == group for a in k.apis))


def chosen_kinds(names: Iterable[str]) -> list[str]:
    """The keys of ``-T``'s names (a job kind's name or alias, any case, or a key of ``API_KINDS``), once each in
    the order given; a usage error naming the flag otherwise."""
    keys = []
    for name in names:
        info = BY_NAME.get(name.lower())
        key = info.key if info is not None else name.lower()
        if info is None and key not in API_KINDS:
            raise UsageError(f"-T/--type {name!r}: use {names_hint()}, or {', '.join(API_KINDS)}")
        keys.append(key)
    return list(dict.fromkeys(keys))


@dataclass(frozen=True)
class Permission:
    """What one group of commands needs: ``verbs`` on ``resources`` of ``group`` (``"pods/log"``: a
    subresource), in the namespace or (``cluster``) cluster-wide. ``kinds``: only for these kinds (of ``-T``);
    ``named``: needed when ``-T`` names one of them."""

    purpose: str
    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    cluster: bool = False
    needed: bool = True
    kinds: tuple[str, ...] = ()
    named: bool = False


def _job_permissions() -> list[Permission]:
    groups: dict[str, list[JobKindInfo]] = {}
    for info in KINDS:
        groups.setdefault(info.group, []).append(info)
    return [Permission("the jobs (submit, get, suspend, resume, delete)", group, tuple(i.plural for i in infos),
                       ALL_VERBS, kinds=tuple(i.key for i in infos)) for group, infos in groups.items()]


PERMISSIONS: tuple[Permission, ...] = (
    Permission("helm's release records, --config-file and a workspace's token", "", ("secrets", "configmaps"),
               ALL_VERBS),
    Permission("a TensorBoard's or a workspace's Service", "", ("services",), ALL_VERBS),
    Permission("a TensorBoard's Deployment", "apps", ("deployments",), ALL_VERBS),
    Permission("a workspace's Job (workspace start, stop, delete)", "batch", ("jobs",), ALL_VERBS, needed=False),
    Permission("a workspace's home (workspace start, delete)", "", ("persistentvolumeclaims",),
               ("create", "update", "patch", "delete"), needed=False),
    *_job_permissions(),
    Permission("a KServe serving's InferenceService (serve kserve)", "serving.kserve.io", ("inferenceservices",),
               ALL_VERBS, needed=False, kinds=_api_kinds("serving.kserve.io"), named=True),
    Permission("a distributed serving's LeaderWorkerSet (serve distributed)", "leaderworkerset.x-k8s.io",
               ("leaderworkersets",), ALL_VERBS, needed=False, kinds=_api_kinds("leaderworkerset.x-k8s.io"), named=True),
    Permission("a traffic split's HTTPRoutes (serve traffic-split)", "gateway.networking.k8s.io", ("httproutes",),
               ALL_VERBS, needed=False, kinds=_api_kinds("gateway.networking.k8s.io")),
    Permission("a traffic split's Istio routes (serve traffic-split --router istio)", "networking.istio.io",
               ("virtualservices", "destinationrules"), ALL_VERBS, needed=False, kinds=_api_kinds("networking.istio.io")),
    Permission("a TrainJob's --runtime (TrainingRuntime)", "trainer.kubeflow.org", ("trainingruntimes",),
               ("get", "list"), kinds=RUNTIME_KINDS),
    Permission("pods, events and PVCs (list, get, data list)", "", ("pods", "events", "persistentvolumeclaims"),
               READ),
    Permission("logs", "", ("pods/log",), ("get",)),
    Permission("attach", "", ("pods/exec",), ("get", "create")),
    Permission("a job queued by Kueue (--queue-name)", "kueue.x-k8s.io", ("workloads", "localqueues"), READ,
               needed=False),
    Permission("a queued job's position (list, get): Kueue's visibility API", "visibility.kueue.x-k8s.io",
               ("localqueues/pendingworkloads",), ("get",), needed=False),
    Permission("CPU and memory of pods (top job, get -g) from metrics-server", "metrics.k8s.io", ("pods",),
               ("get", "list"), needed=False),
    Permission("the nodes (top node, a NodePort TensorBoard's URL)", "", ("nodes",), READ, cluster=True,
               needed=False),
    Permission("what the nodes have allocated: the pods of every namespace (top node, fit)", "", ("pods",),
               ("list",), cluster=True, needed=False),
    Permission("fit: the namespace's node selector (PodNodeSelector)", "", ("namespaces",), ("get",), cluster=True,
               needed=False),
    Permission("fit --queue-name: its ClusterQueue's quota", "kueue.x-k8s.io", ("clusterqueues",), ("get",),
               cluster=True, needed=False),
    Permission("node metrics (top node)", "metrics.k8s.io", ("nodes",), ("get", "list"), cluster=True,
               needed=False),
    Permission("submit --priority checks its PriorityClass", "scheduling.k8s.io", ("priorityclasses",),
               ("get", "list"), cluster=True, needed=False),
    Permission("a TrainJob's --runtime (ClusterTrainingRuntime)", "trainer.kubeflow.org",
               ("clustertrainingruntimes",), ("get", "list"), cluster=True, needed=False, kinds=RUNTIME_KINDS),
    Permission(f"doctor: whether {' or '.join(c.name for k in KINDS for c in k.controllers if c.lease)} runs (its "
               "Lease)", "coordination.k8s.io", ("leases",), ("get", "list"), cluster=True, needed=False,
               kinds=LEASE_KINDS),
    Permission("doctor: whether the operators' webhooks are registered", "admissionregistration.k8s.io",
               ("validatingwebhookconfigurations",), ("get", "list"), cluster=True, needed=False),
)


@dataclass
class Check:
    check: str
    status: str
    detail: str
    needed: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status, "needed": self.needed, "detail": self.detail}


@dataclass
class Report:
    namespace: str
    context: str | None = None
    server: str | None = None
    checks: list[Check] = field(default_factory=list)

    def add(self, check: str, status: str, detail: str, needed: bool = True) -> None:
        self.checks.append(Check(check, status, detail, needed))

    @property
    def ready(self) -> bool:
        return not any(c.status == MISSING and c.needed for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"context": self.context, "server": self.server, "namespace": self.namespace, "ready": self.ready,
                "checks": [c.to_json() for c in self.checks]}


# ---- the checks ---------------------------------------------------------------------------------------
def run(kube, helm_factory: Callable[[], Any], namespace: str, kinds: Iterable[str] | None = None, *,
        metrics_options=None, context: str | None = None, now: dt.datetime | None = None) -> Report:
    """Every check against ``kube`` (a KubeReader) for the user in ``namespace``; ``kinds``: the kinds to check
    (``chosen_kinds``' keys, which it names needed; None: every one, the job kinds needed)."""
    named = list(kinds or ())
    keys = named or [*(k.key for k in KINDS), *API_KINDS]
    chosen = [BY_KEY[k] for k in keys if k in BY_KEY]
    others = [API_KINDS[k] for k in keys if k in API_KINDS]
    report = Report(namespace, context)
    helm = _check_helm(report, helm_factory)
    _check_arena_helm(report)
    if not _check_api(report, kube):
        for name in ("permissions", *[i.kind for i in chosen], *map(_api_check, others), "GPUs", "Prometheus",
                     "Kueue"):
            report.add(name, SKIP, "the API server did not answer")
        return report
    allowed = _check_permissions(report, kube, namespace, set(keys), set(named))
    served = kube.served_job_versions()
    groups = kube.served_groups()
    webhooks = _webhooks(kube)
    for info in chosen:
        _check_kind(report, kube, helm, info, served.get(info.kind, []), namespace, allowed, webhooks)
    if any(i.runtime_key for i in chosen):
        if "jobset.x-k8s.io" in groups:
            report.add("JobSet", OK, f"jobset.x-k8s.io/{groups['jobset.x-k8s.io'][0]} served (TrainJobs run as "
                       "JobSets)")
        else:
            report.add("JobSet", MISSING, "jobset.x-k8s.io is not served: install JobSet (Trainer v2 runs "
                       "TrainJobs as JobSets)")
    for info in chosen:
        for controller in info.controllers:
            if controller.lease and controller.version in served.get(info.kind, []):
                _check_lease(report, kube, now or dt.datetime.now(dt.UTC), info, controller)
    for kind in others:
        _check_apis(report, kube, helm, kind, groups, namespace, allowed, webhooks, kind.key in named)
    _check_gpus(report, kube)
    _check_metrics(report, kube, namespace, groups, metrics_options)
    _check_kueue(report, kube, namespace, groups)
    return report


def _check_helm(report: Report, helm_factory: Callable[[], Any]):
    try:
        helm = helm_factory()
        version = helm.version()
    except ArenaHelmError as exc:
        report.add("helm", MISSING, str(exc))
        return None
    report.add("helm", OK, f"{version} ({helm.binary})")
    return helm


def _check_arena_helm(report: Report) -> None:
    """Arena's helm on PATH under this tool's name (Arena's installer's ``arena-helm``): named, with how the two
    live side by side (a row only where it is found)."""
    from ..adapters.helmbin import ALIAS, COMMAND, arenas_helm, commands_on_path

    found = commands_on_path()
    arenas = arenas_helm(found)
    if arenas is None:
        return
    first = found[0]
    if first == arenas:
        report.add("Arena's helm", OK, f"{COMMAND} on PATH is Arena's helm ({arenas}), ahead of this tool: run "
                   f"this tool as {ALIAS}", needed=False)
    else:
        report.add("Arena's helm", OK, f"Arena's helm ({arenas}) comes after this tool's {COMMAND} ({first}) on "
                   f"PATH: Arena's calls of its helm are handed on to it", needed=False)


def _check_api(report: Report, kube) -> bool:
    try:
        kube.connect()
        report.server = kube.server
        version = kube.server_version()
    except ArenaHelmError as exc:
        report.add("API server", MISSING, str(exc))
        return False
    git = version.get("gitVersion", "?")
    major, minor = (int("".join(ch for ch in str(version.get(k, "0")) if ch.isdigit()) or 0)
                    for k in ("major", "minor"))
    if (major, minor) < MIN_KUBERNETES:
        report.add("API server", MISSING, f"Kubernetes {git} at {kube.server}: the charts need 1.20 or newer")
    else:
        report.add("API server", OK, f"Kubernetes {git} at {kube.server}")
    return True


def _reviews(kube, namespace: str, perms: list[Permission]) -> dict[tuple[Permission, str, str], tuple[bool, str]]:
    """One SelfSubjectAccessReview per (permission, resource, verb), eight at a time."""
    from concurrent.futures import ThreadPoolExecutor

    asks = [(p, r, v) for p in perms for r in p.resources for v in p.verbs]

    def review(ask):
        p, resource, verb = ask
        res, _, sub = resource.partition("/")
        return kube.access_allowed(None if p.cluster else namespace, verb, p.group, res, sub)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(asks, pool.map(review, asks), strict=True))


def _check_permissions(report: Report, kube, namespace: str, kinds: set[str], named: set[str]
                       ) -> dict[tuple[str, str], bool]:
    """One line per permission of ``PERMISSIONS`` (the chosen kinds' only; needed as well where ``-T`` named its
    kind and it says so); returns (resource, verb) -> allowed, for the namespace."""
    plural_kind = {i.plural: i.key for i in KINDS}
    perms = [replace(p, resources=tuple(r for r in p.resources if plural_kind.get(r) in kinds | {None}),
                     needed=p.needed or (p.named and bool(set(p.kinds) & named)))
             for p in PERMISSIONS if not p.kinds or set(p.kinds) & kinds]
    try:
        answers = _reviews(kube, namespace, perms)
    except ArenaHelmError as exc:
        report.add("permissions", SKIP, f"cannot review them: {exc}")
        return {}
    allowed: dict[tuple[str, str], bool] = {}
    for p in perms:
        denied = [f"{v} {r}" for r in p.resources for v in p.verbs if not answers[(p, r, v)][0]]
        for r in p.resources:
            for v in p.verbs:
                if not p.cluster:
                    allowed[(r, v)] = answers[(p, r, v)][0]
        where = "cluster-wide" if p.cluster else f"in {namespace}"
        fix = f"the ClusterRole of {ROLE_DOC}" if p.cluster else f"the Role of {ROLE_DOC}"
        name = f"RBAC: {', '.join(p.resources)}" + (f" ({p.group})" if p.group else "")
        if not denied:
            report.add(name, OK, f"{', '.join(p.verbs)} {where}: {p.purpose}", p.needed)
        else:
            optional = "" if p.needed else " (only these commands need it)"
            report.add(name, MISSING, f"may not {', '.join(denied)} {where} ({p.purpose}){optional}: ask for {fix}",
                       p.needed)
    return allowed


def _webhooks(kube) -> dict[str, dict] | str:
    """The validating webhooks registered (name -> webhook), or why they cannot be read."""
    try:
        configs = kube.list_validating_webhooks()
    except ArenaHelmError as exc:
        return str(exc)
    return {w.get("name", ""): w for c in configs for w in c.get("webhooks") or []}


def _check_kind(report: Report, kube, helm, info: JobKindInfo, versions: list[str], namespace: str,
                allowed: dict[tuple[str, str], bool], webhooks: dict[str, dict] | str) -> None:
    name = f"{info.kind}"
    if not versions:
        report.add(name, MISSING, f"the cluster does not serve {info.kind} ({' or '.join(info.api_versions())}): "
                   f"install {info.operator}")
        return
    version = versions[0]
    api = f"{info.group}/{version}"
    controller = info.controller(version)
    if controller is not None:
        api += f" ({controller.shown})"
    if helm is None:
        report.add(name, SKIP, f"{api} served; the dry run needs helm to render the job")
        return
    if allowed and not allowed.get((info.plural, "create"), True):
        report.add(name, SKIP, f"{api} served; the dry run needs create on {info.plural} (see above)")
        return
    try:
        doc = doctor_job(kube, helm, info, version, namespace)
        kube.dry_run_create(doc, namespace, info.plural)
    except ArenaHelmError as exc:
        report.add(name, MISSING, f"{api} served, but a dry-run create of a job failed: {exc}")
        return
    passed = f"{api} served; a dry-run create of a job passed"
    if controller is not None and controller.lease:
        report.add(name, OK, f"{passed} ({controller.name} has no webhook: its Lease, below)")
        return
    if not info.webhook:
        report.add(name, OK, f"{passed} (whether its controller runs cannot be told: it has no webhook)")
        return
    _judge_webhook(report, name, passed, info.webhook, info.operator, webhooks)


def _judge_webhook(report: Report, name: str, passed: str, webhook: str, install: str,
                   webhooks: dict[str, dict] | str, needed: bool = True) -> None:
    """After a dry run passed: its controller runs when its validating ``webhook`` is registered and fails closed
    (the dry run went through it)."""
    if isinstance(webhooks, str):
        report.add(name, SKIP, f"{passed}; whether its operator runs needs its webhook {webhook}, and "
                   f"{webhooks}: ask for the ClusterRole of {ROLE_DOC}", needed)
        return
    hook = webhooks.get(webhook)
    if hook is None:
        report.add(name, MISSING, f"{passed}, but the operator's webhook {webhook} is not registered: the CRD "
                   f"is there, not its operator: install {install}", needed)
    elif hook.get("failurePolicy", "Fail") != "Fail":
        report.add(name, SKIP, f"{passed}; the operator's webhook {webhook} ignores failures, so it may not "
                   "have answered", needed)
    else:
        report.add(name, OK, f"{passed} through the operator's webhook {webhook}", needed)


def _api_check(kind: ServeKind | OneChartKind) -> str:
    """The name of a kind's API check: its objects' kind (alternatives: HTTPRoute or VirtualService)."""
    return " or ".join(api.kind for api in kind.apis)


def _check_apis(report: Report, kube, helm, kind: ServeKind | OneChartKind, groups: dict[str, list[str]], namespace: str,
                allowed: dict[tuple[str, str], bool], webhooks: dict[str, dict] | str, needed: bool) -> None:
    """A kind of another family: one of its APIs served; where that API's controller has a webhook (the serving
    kinds), a minimal serving rendered by its chart as ``serve`` renders it passes a server-side dry-run create
    through it. A traffic split's routes name servings that must exist and no controller of their own answers:
    that they are served is all doctor can tell."""
    apis = kind.apis
    name = _api_check(kind)
    served = [a for a in apis if a.version in groups.get(a.group, [])]
    if not served:
        wanted = " nor ".join(f"{a.kind} ({a.api_version})" for a in apis)
        report.add(name, MISSING, f"the cluster {'serves neither' if len(apis) > 1 else 'does not serve'} {wanted} "
                   f"(serve {kind.key} needs {'one' if len(apis) > 1 else 'it'}): install "
                   f"{' or '.join(a.install for a in apis)}", needed)
        return
    api = served[0]
    shown = " and ".join(f"{a.api_version} ({a.kind})" for a in served)
    if not api.webhook:
        report.add(name, OK, f"{shown} served: serve {kind.key} makes {api.kind}s (whether a mesh applies them "
                   "cannot be told from here)", needed)
        return
    if helm is None:
        report.add(name, SKIP, f"{shown} served; the dry run needs helm to render a serving", needed)
        return
    if allowed and not allowed.get((api.plural, "create"), True):
        report.add(name, SKIP, f"{shown} served; the dry run needs create on {api.plural} (see above)", needed)
        return
    try:
        kube.dry_run_create(doctor_serving(helm, kind, api, namespace), namespace, api.plural)
    except ArenaHelmError as exc:
        report.add(name, MISSING, f"{shown} served, but a dry-run create of a serving failed: {exc}", needed)
        return
    _judge_webhook(report, name, f"{shown} served; a dry-run create of a serving passed", api.webhook, api.install,
                   webhooks, needed)


def doctor_job(kube, helm, info: JobKindInfo, version: str, namespace: str) -> dict:
    """A minimal job of ``info`` as its chart renders it for ``submit`` (generateName: no name is taken)."""
    import yaml

    from ..workload.submission import _with_runtime, job_values, render

    fields: dict[str, Any] = {"name": "arena-helm-doctor", "namespace": namespace, "image": DOCTOR_IMAGE,
                              "command": "true"}
    if info.version_field:
        fields[info.version_field] = version
    spec = info.spec_class()(**fields)
    values = _with_runtime(spec, kube, job_values(spec))
    docs = [d for d in yaml.safe_load_all(render(spec, helm, values=values)) if isinstance(d, dict)]
    (doc,) = [d for d in docs if d.get("kind") == info.kind]
    meta = doc["metadata"]
    del meta["name"]
    meta["generateName"] = DOCTOR_JOB
    return doc


def doctor_serving(helm, kind: ServeKind | OneChartKind, api: Api, namespace: str) -> dict:
    """A minimal serving of ``kind`` (your image and command) as its chart renders it for ``serve``: its object of
    ``api`` (generateName: no name is taken)."""
    import yaml

    from ..workload.gateway import render

    spec_class = kind.spec_class()
    assert spec_class is not None, kind  # an API whose controller has a webhook is a serving kind's
    spec = spec_class(name="arena-helm-doctor", version="v1", namespace=namespace, image=DOCTOR_IMAGE, command="true")
    docs = yaml.safe_load_all(render(helm, kind.chart, spec.release, spec.chart_values(), namespace))
    (doc,) = [d for d in docs if isinstance(d, dict) and d.get("kind") == api.kind]
    meta = doc["metadata"]
    del meta["name"]
    meta["generateName"] = DOCTOR_JOB
    return doc


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    from ..core.grammars import epoch

    return dt.datetime.fromtimestamp(epoch(text), dt.UTC)


def _check_lease(report: Report, kube, now: dt.datetime, info: JobKindInfo, controller: Controller) -> None:
    """An operator without a webhook runs when the Lease it always holds was renewed lately."""
    name = f"{controller.name} running"
    try:
        leases = kube.list_leases(controller.lease)
    except ForbiddenError:
        report.add(name, SKIP, f"cannot list leases (it has no webhook: its Lease tells): ask for the ClusterRole "
                   f"of {ROLE_DOC}")
        return
    except ArenaHelmError as exc:
        report.add(name, SKIP, str(exc))
        return
    fresh = []
    for lease in leases:
        spec, meta = lease.get("spec") or {}, lease.get("metadata") or {}
        renewed = _parse_time(spec.get("renewTime"))
        duration = int(spec.get("leaseDurationSeconds") or 15)
        if spec.get("holderIdentity") and renewed is not None:
            age = (now - renewed).total_seconds()
            fresh.append((age <= 2 * duration, age, f"{meta.get('namespace')}/{meta.get('name')}"))
    live = [f for f in fresh if f[0]]
    if live:
        _, age, where = min(live, key=lambda f: f[1])
        report.add(name, OK, f"Lease {where} renewed {max(age, 0):.0f}s ago")
    elif fresh:
        _, age, where = min(fresh, key=lambda f: f[1])
        report.add(name, MISSING, f"Lease {where} last renewed {age:.0f}s ago: {controller.name} is not running "
                   f"({info.kind}s would never start): start it")
    else:
        report.add(name, MISSING, f"no Lease {controller.lease}: {controller.name} is not running (it always holds "
                   f"one): install {controller.install}")


def _check_gpus(report: Report, kube) -> None:
    from ..views.jobs import count_of, is_gpu_resource

    try:
        nodes = kube.list_nodes()
    except ForbiddenError:
        report.add("GPUs on nodes", SKIP, f"cannot list nodes: ask for the ClusterRole of {ROLE_DOC}")
        return
    per: dict[str, int] = {}
    with_gpus = 0
    for node in nodes:
        alloc = (node.get("status") or {}).get("allocatable") or {}
        gpus = {k: count_of(v) for k, v in alloc.items() if is_gpu_resource(k) and count_of(v) > 0}
        with_gpus += bool(gpus)
        for k, v in gpus.items():
            per[k] = per.get(k, 0) + v
    if per:
        total = ", ".join(f"{v} {k}" for k, v in sorted(per.items()))
        report.add("GPUs on nodes", OK, f"{with_gpus} of {len(nodes)} nodes offer GPUs ({total} allocatable)")
    else:
        report.add("GPUs on nodes", MISSING, f"none of {len(nodes)} nodes offers nvidia.com/gpu: install the NVIDIA "
                   "device plugin (jobs with --gpus would never be scheduled)")


def _check_metrics(report: Report, kube, namespace: str, groups: dict[str, list[str]], opts) -> None:
    from ..adapters.metrics import GPU_QUERY, MetricsOptions, PrometheusUnavailable, connect, metrics_defaults
    from ..views.usage import gpus_from_series

    opts = opts or MetricsOptions.resolve(None, None, metrics_defaults())
    prom = None
    try:
        prom = connect(kube, opts, namespace)
        gpus = gpus_from_series(prom.query(GPU_QUERY))
    except PrometheusUnavailable as exc:
        report.add("Prometheus", MISSING, f"{exc} (only the GPU columns of get -g and top need it: they read N/A): "
                   "install Prometheus, or give --prometheus-url/--prometheus-service", needed=False)
    else:
        if gpus:
            report.add("Prometheus", OK, f"{prom.where}: {len(gpus)} GPUs report DCGM's series", needed=False)
        else:
            report.add("Prometheus", MISSING, f"{prom.where} answers but holds no DCGM series (DCGM_FI_DEV_GPU_UTIL): "
                       "install NVIDIA's DCGM exporter, scraped by it", needed=False)
    if "metrics.k8s.io" in groups:
        report.add("CPU/memory metrics", OK, "metrics.k8s.io served (metrics-server)", needed=False)
    elif prom is not None:
        report.add("CPU/memory metrics", OK, f"from Prometheus' cAdvisor series ({prom.where})", needed=False)
    else:
        report.add("CPU/memory metrics", MISSING, "neither metrics.k8s.io nor Prometheus: install metrics-server "
                   "(the CPU/memory columns of top read N/A)", needed=False)


def _check_kueue(report: Report, kube, namespace: str, groups: dict[str, list[str]]) -> None:
    if "kueue.x-k8s.io" not in groups:
        report.add("Kueue", MISSING, "kueue.x-k8s.io is not served (only --queue-name needs it): install Kueue",
                   needed=False)
        return
    try:
        queues = kube.list_local_queues(namespace)
    except (ForbiddenError, NotFoundError) as exc:
        report.add("Kueue", SKIP, f"cannot list LocalQueues in {namespace}: {exc}", needed=False)
        return
    if not queues:
        report.add("Kueue", MISSING, f"Kueue is installed but {namespace} has no LocalQueue (only --queue-name "
                   "needs one): ask for one", needed=False)
        return
    names = ", ".join(f"{(q.get('metadata') or {}).get('name')} (ClusterQueue "
                      f"{(q.get('spec') or {}).get('clusterQueue')})" for q in queues)
    report.add("Kueue", OK, f"LocalQueues in {namespace}: {names}", needed=False)


# ---- output -------------------------------------------------------------------------------------------
def table(report: Report) -> str:
    from ..views.output import table as render_table

    rows = [[c.check, c.status if c.needed or c.status != MISSING else "MISSING (optional)", c.detail]
            for c in report.checks]
    text = render_table(["CHECK", "STATUS", "DETAIL"], rows)
    missing = [c.check for c in report.checks if c.status == MISSING and c.needed]
    where = f"context {report.context}, " if report.context else ""
    last = (f"ready: everything arena-helm needs is there ({where}namespace {report.namespace})" if not missing
            else f"not ready: {len(missing)} needed check{'s' * (len(missing) > 1)} MISSING ({', '.join(missing)})")
    return f"{text}\n\n{last}"
