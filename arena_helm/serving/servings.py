"""Serving: a trained model online with one command (``arena-helm serve KIND ...``; each kind a module of
``arena_helm.core.servekinds`` and a chart ``charts/<kind>-serving``).

A serving is a helm release ``<name>-<version>`` of a serving chart: a Deployment of ``--replicas`` pods and,
when it listens on a port, a ClusterIP Service, both named as the release. The version defaults to the minute
of the submit (``YYYYMMDDHHMM``, Arena's form), so that a new version of a model is a new release beside the old
one. The objects and the pods carry Arena's labels (``servingName``, ``servingVersion``, ``servingType``,
``serviceName``, ``app``, ``release``), so that Arena's ``serve list`` finds them, beside the
``app.kubernetes.io/*`` ones.

Here, what every kind shares: the spec's common fields (the flags of every ``serve KIND``), the values' common
keys (each chart's ``values.schema.json`` is generated from its kind's model), spec -> values (pure: what
``--dry-run`` renders), the view of a serving from its release, Deployment, Service and pods (pure), and the
actions, through the injected adapters.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, field_validator, model_validator

from ..core import grammars as k8s
from ..core.catalog import Family, release_chart
from ..core.enums import ImagePullPolicy
from ..core.errors import ForbiddenError, NotFoundError, UsageError
from ..core.grammars import DNS1035Label, DNSLabel, Image, LabelValue, Quantity
from ..workload.chart_values import Empty, PodChartValues, PodSecurityContext, ValuesModel
from ..workload.spec import Gpus, JobSpec, PodLevelFlags, opt

if TYPE_CHECKING:
    from ..views.jobs import JobView
    from ..workload.gateway import Cluster

# Arena's labels (kubeflow/arena charts/custom-serving/templates/deployment.yaml; pkg/serving/serving.go finds
# the Deployments, pods and Services of a serving by them)
NAME_LABEL, VERSION_LABEL, TYPE_LABEL = "servingName", "servingVersion", "servingType"
SELECTOR = f"{NAME_LABEL},{VERSION_LABEL},app.kubernetes.io/part-of=arena-helm"
RELEASE_MAX = 53  # helm's limit on a release name: <name>-<version>


def _shared(model: type, name: str) -> Any:
    """A field of the job specs, for the same flag of ``serve custom`` (one help text, one parser)."""
    return copy.copy(model.model_fields[name])


def default_version(now: dt.datetime | None = None) -> str:
    """Arena's default serving version: the minute of the submit, ``YYYYMMDDHHMM`` (pkg/argsbuilder/serving.go
    ``setServingVersion``: ``t.Format("200601021504")``)."""
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d%H%M")


# ---- the spec: the flags every `serve KIND` shares ---------------------------------------------------------
class ServeSpec(PodLevelFlags):
    """What every serving kind shares: its names, image, replicas, resources, data, env and scheduling. Each field
    is the flag of the same name; a kind (arena_helm.core.servekinds) adds its own."""

    KIND: ClassVar[str]  # the serve kinds registry's key (arena_helm.core.servekinds): the `serve KIND` command
    IMAGE_REQUIRED: ClassVar[bool] = False  # a kind without an image of its own (custom) needs --image
    # and Arena's serving labels (charts/arena-common _serving.tpl arena-common.servingLabels)
    OWNED_LABELS: ClassVar[frozenset[str]] = PodLevelFlags.OWNED_LABELS | {
        "app.kubernetes.io/component", NAME_LABEL, VERSION_LABEL, TYPE_LABEL, "serviceName"}

    name: str = opt("Serving name (the release is <name>-<version>). Required.")
    version: DNSLabel | None = opt("Serving version (default: the submit's minute, YYYYMMDDHHMM, as Arena).")
    namespace: str = _shared(JobSpec, "namespace")
    image: Image | None = opt("Container image of the server.")
    replicas: int = opt("Number of server pods.", 1, ge=0, le=1000)
    gpus: Gpus = opt("GPUs of each replica (nvidia.com/gpu).", 0)
    cpu: Quantity | None = opt("CPU of each replica (e.g. 4, 500m): the request and the limit.")
    memory: Quantity | None = opt("Memory of each replica (e.g. 16Gi): the request and the limit.")
    share_memory: Quantity | None = opt("Size of the memory-backed /dev/shm (default: the runtime's 64Mi).")
    image_pull_policy: ImagePullPolicy = opt("Image pull policy.", ImagePullPolicy.IfNotPresent)
    model_name: LabelValue | None = opt("Model name: the serving's modelName label.")
    model_version: LabelValue | None = opt("Model version: the serving's modelVersion label.")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not name:
            raise ValueError("the serving name is empty: give --name")
        return k8s.check_dns1035(name, "serving name")

    @model_validator(mode="after")
    def _cross(self) -> ServeSpec:
        if self.version is None:
            self.version = default_version()
        release = f"{self.name}-{self.version}"
        if len(release) > RELEASE_MAX:
            raise ValueError(f"--name/--version: the release {release!r} is {len(release)} characters; helm allows "
                             f"{RELEASE_MAX}: shorten the name or the version")
        if self.IMAGE_REQUIRED and not self.image:
            raise ValueError(f"--image: a {self.KIND} serving runs your image: give --image IMAGE")
        return self

    @property
    def release(self) -> str:
        return f"{self.name}-{self.version}"

    def chart_values(self) -> dict[str, Any]:
        """The chart values ``serve`` installs for it (``serving_values``; doctor renders its probe with them)."""
        return serving_values(self)


# a Hugging Face model id (org/name, or name) or an absolute path in the container, matched whole
MODEL_RX = re.compile(r"/.*|[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


def check_llm_server(model: str, gpus: int, tensor_parallel_size: int | None, server: str) -> None:
    """What the LLM servers' specs (vLLM's, SGLang's) check alike: a model (a Hugging Face id or a path), at least
    one GPU a replica (their images run on NVIDIA GPUs), a tensor parallel size within the replica's GPUs."""
    if not model:
        raise ValueError("--model: give the model to serve: a Hugging Face id (org/name) or a path under a -d mount")
    if not MODEL_RX.fullmatch(model):
        raise ValueError(f"--model {model!r}: not a Hugging Face id (org/name) nor an absolute path")
    if gpus < 1:
        raise ValueError(f"--gpus 0: the {server} image runs on NVIDIA GPUs: give each replica one or more")
    if tensor_parallel_size is not None and tensor_parallel_size > gpus:
        raise ValueError(f"--tensor-parallel-size {tensor_parallel_size}: more than the replica's {gpus} GPU(s) "
                         "(--gpus)")


def changed_values(spec: ServeSpec, keys: dict[str, str]) -> dict[str, Any]:
    """A kind's values of the fields named in ``keys`` (field -> values key), in that order, for each field whose value
    differs from the field's default (a list copied, a choice by its value); the chart's defaults do the rest.
    Pure."""
    out: dict[str, Any] = {}
    for name, key in keys.items():
        value = getattr(spec, name)
        if value != type(spec).model_fields[name].get_default(call_default_factory=True):
            out[key] = list(value) if isinstance(value, list) else value.value if isinstance(value, enum.Enum) else value
    return out


# ---- the chart's values ---------------------------------------------------------------------------------
class ServingService(ValuesModel):
    type: str = Field("ClusterIP", pattern="^(ClusterIP|NodePort|LoadBalancer)$",
                      description="Service type: ClusterIP, NodePort or LoadBalancer.")


class ServingValues(PodChartValues):
    """The values every serving chart shares (its kind's model adds the server's own)."""

    serving_name: Empty | DNS1035Label = Field("", description="The serving's name (Arena's servingName label); "
                                               "\"\" = the release name.")
    serving_version: Empty | DNSLabel = Field("", description="The serving's version (Arena's servingVersion "
                                              "label); \"\" = none.")
    replicas: int = Field(1, ge=0, description="Number of server pods.")
    service: ServingService = Field(default_factory=ServingService, description="The Service of the server's ports.")
    shm_size: Empty | Quantity = Field("", description="Size of the memory-backed /dev/shm; \"\" = the runtime's "
                                       "default.")
    pod_security_context: PodSecurityContext = Field(default_factory=PodSecurityContext,
                                                     description="Pod-level securityContext.")


def serving_values(spec: ServeSpec) -> dict[str, Any]:
    """The chart values for ``spec``: what every serving sets (names, image, replicas, the pod flags, the model
    labels), then its kind's own (the kind module's ``values``). Only what is set; the chart's defaults do the
    rest. Pure."""
    from ..core.servekinds import BY_KEY

    values: dict[str, Any] = {"servingName": spec.name, "servingVersion": spec.version}
    if spec.image:
        values["image"] = spec.image
    if spec.replicas != 1:
        values["replicas"] = spec.replicas
    if spec.image_pull_policy is not ImagePullPolicy.IfNotPresent:
        values["imagePullPolicy"] = spec.image_pull_policy.value
    values.update(spec.pod_values())
    model = {k: v for k, v in (("modelName", spec.model_name), ("modelVersion", spec.model_version)) if v}
    if model:
        values["labels"] = {**values.get("labels", {}), **model}
    values.update(BY_KEY[spec.KIND].module().values(spec))
    return values


# ---- the view (pure) ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServingView:
    name: str
    version: str
    namespace: str
    type: str
    release: str
    desired: int
    available: int
    ready: int
    gpus: int  # per replica
    address: str  # the Service's cluster IP ("" none)
    ports: list[tuple[str, int]] = field(default_factory=list)
    created: str = ""
    revision: int = 0
    status: str = ""  # helm's status of the release
    pods: list[dict[str, Any]] = field(default_factory=list)  # name, status, ready, node, restarts
    updated: int = 0  # replicas of the Deployment's current template (status.updatedReplicas)
    rolled_out: bool = False  # the controller has seen the latest spec and every replica is of it (no old pods)
    url: str = ""  # where a controller says it serves (an InferenceService's status.url)

    def endpoint(self) -> str:
        if not self.address:
            return "-"
        return ",".join(f"{name.upper()}:{port}" for name, port in self.ports) or "-"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "namespace": self.namespace, "type": self.type,
                "release": self.release, "desiredReplicas": self.desired, "availableReplicas": self.available,
                "readyReplicas": self.ready, "updatedReplicas": self.updated, "rolledOut": self.rolled_out,
                "gpusPerReplica": self.gpus, "address": self.address or None,
                "ports": {name: port for name, port in self.ports}, "revision": self.revision,
                "helmStatus": self.status, "pods": self.pods, "creationTimestamp": self.created or None,
                "url": self.url or None}


def desired_replicas(spec: dict) -> int:
    """A workload's ``spec.replicas``; unset (or null): 1, the API server's default."""
    return int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)


def release_key(obj: dict) -> tuple[str, str]:
    """(namespace, release label) of an object: how the read side joins a serving's objects with its release."""
    return obj["metadata"]["namespace"], (obj["metadata"].get("labels") or {}).get("release", "")


def rolled_out(deployment: dict | None) -> bool:
    """kubectl rollout status's test: the controller has observed the latest generation, every desired replica
    is of the latest template and available, and no replica of an older one is left."""
    if not deployment:
        return False
    meta, spec, status = deployment.get("metadata") or {}, deployment.get("spec") or {}, deployment.get("status") or {}
    desired = desired_replicas(spec)
    return (int(status.get("observedGeneration", 0) or 0) >= int(meta.get("generation", 0) or 0)
            and int(status.get("updatedReplicas", 0) or 0) >= desired
            and int(status.get("replicas", 0) or 0) <= int(status.get("updatedReplicas", 0) or 0)
            and int(status.get("availableReplicas", 0) or 0) >= desired)


def serving_view(release: dict, deployment: dict | None, service: dict | None, pods: list[dict],
                 workload: dict | None = None) -> ServingView:
    """One serving from helm's list item, its Deployment, Service and pods, and the object its chart makes when
    that is not the Deployment (an InferenceService, a LeaderWorkerSet: its kind module's ``workload_view`` says
    what it changes). Pure."""
    import dataclasses

    view = _deployment_view(release, deployment, service, pods)
    if workload is None:
        return view
    from ..core.servekinds import BY_CHART

    kind = BY_CHART.get(release_chart(release))
    hook = kind.module().workload_view if kind is not None else None
    if hook is None:
        return view
    return dataclasses.replace(view, **hook(workload, view))


def _deployment_view(release: dict, deployment: dict | None, service: dict | None, pods: list[dict]) -> ServingView:
    from ..views.reasons import pod_status

    meta = (deployment or {}).get("metadata") or {}
    labels = meta.get("labels") or {}
    spec = (deployment or {}).get("spec") or {}
    status = (deployment or {}).get("status") or {}
    containers = (((spec.get("template") or {}).get("spec") or {}).get("containers")) or []
    gpus = sum(int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0) or 0) for c in containers)
    svc_spec = (service or {}).get("spec") or {}
    address = svc_spec.get("clusterIP") or ""
    ports = [(p.get("name", ""), int(p.get("port", 0))) for p in svc_spec.get("ports") or []]
    pod_rows = []
    for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
        statuses = (p.get("status") or {}).get("containerStatuses") or []
        n_containers = len(statuses) or len((p.get("spec") or {}).get("containers") or [])
        pod_rows.append({"name": p["metadata"]["name"], "status": pod_status(p),
                         "ready": f"{sum(1 for c in statuses if c.get('ready'))}/{n_containers}",
                         "restarts": sum(int(c.get("restartCount", 0)) for c in statuses),
                         "node": (p.get("spec") or {}).get("nodeName") or "N/A"})
    name = release.get("name", "")
    return ServingView(
        name=labels.get(NAME_LABEL) or name, version=labels.get(VERSION_LABEL, ""),
        namespace=release.get("namespace", ""), type=labels.get(TYPE_LABEL) or release_chart(release),
        release=name, desired=int(spec.get("replicas", 0) or 0), available=int(status.get("availableReplicas", 0) or 0),
        ready=int(status.get("readyReplicas", 0) or 0), gpus=gpus, address=address if address != "None" else "",
        ports=ports, created=meta.get("creationTimestamp", ""), revision=int(release.get("revision", 0) or 0),
        status=str(release.get("status", "")), pods=pod_rows, updated=int(status.get("updatedReplicas", 0) or 0),
        rolled_out=rolled_out(deployment))


# ---- the actions (helm and the API through the injected adapters) ----------------------------------------
def render_serving(helm_binary: str | None, spec: ServeSpec, values: dict[str, Any]) -> str:
    """The manifests ``serve custom --dry-run`` prints: helm template of the chart (no cluster)."""
    from ..adapters.helm import Helm
    from ..workload.gateway import render

    return render(Helm(helm_binary), _chart_of(spec), spec.release, values, spec.namespace)


def submit_serving(spec: ServeSpec, helm: Any = None, kube: Any = None, *,
                   values: dict[str, Any] | None = None) -> str:
    """The Python API of ``serve KIND``: install ``spec`` (any kind's ServeSpec: CustomServeSpec, VllmServeSpec,
    ...) as release ``<name>-<version>`` in ``spec.namespace``; returns the release. ``values``: the chart values
    to install instead of ``serving_values(spec)``; ``helm``/``kube``: adapters to use (default: the current
    kubeconfig context). ``render_serving(None, spec, serving_values(spec))`` renders it without a cluster."""
    from ..adapters.kube import KubeReader
    from ..workload.gateway import Cluster

    kube = kube or KubeReader()
    if helm is None:  # helm reaches the cluster ``kube`` reaches
        from ..adapters.helm import Helm, KubeTarget

        helm = Helm(target=KubeTarget(kube.kubeconfig, kube.context))
    serve(Cluster(helm, kube), spec, serving_values(spec) if values is None else values)
    return spec.release


def _chart_of(spec: ServeSpec) -> str:
    from ..core.servekinds import BY_KEY

    return BY_KEY[spec.KIND].chart


def serve(c: Cluster, spec: ServeSpec, values: dict[str, Any]) -> None:
    """Install the serving's release; all or nothing (a failed install is uninstalled again)."""
    from ..core.errors import AlreadyExistsError

    if c.find(spec.namespace, spec.release) is not None:
        raise AlreadyExistsError(f"serving {spec.name} version {spec.version} exists in namespace {spec.namespace} "
                                 f"(release {spec.release}): give another --version, or arena-helm serve delete "
                                 f"{spec.name} --version {spec.version}")
    c.install(_chart_of(spec), spec.namespace, spec.release, values, labels={RELEASE_LABEL: _chart_of(spec)})


RELEASE_LABEL = "arena-helm-serving"  # the release label serve sets (its chart): a serving without objects yet


def list_servings(c: Cluster, namespace: str, all_namespaces: bool = False, name: str | None = None,
                  version: str | None = None, type_: str | None = None) -> list[ServingView]:
    """Every serving in view, without helm: one LIST each of the serving Deployments, Services, pods and the
    objects of the kinds whose chart makes another (InferenceServices, LeaderWorkerSets), whatever their number,
    joined by their ``release`` label with helm's records (one metadata-only LIST: the release's revision and
    status). A release with the serve label and no object yet is a serving too."""
    from ..core.servekinds import BY_CHART
    ns = None if all_namespaces else namespace
    selector = SELECTOR + (f",{NAME_LABEL}={name}" if name else "") + (f",{VERSION_LABEL}={version}" if version else "")

    def by_release(items: list[dict]) -> dict[tuple[str, str], dict]:
        return {release_key(o): o for o in items}

    deployments = by_release(c.kube.list_deployments(ns, selector))
    services = by_release(c.kube.list_services(ns, selector))
    workloads = _workloads(c, ns, selector)
    pods: dict[tuple[str, str], list[dict]] = {}
    for p in c.kube.list_pods(ns, selector=selector):
        pods.setdefault(release_key(p), []).append(p)
    index = c.index(namespace, all_namespaces)
    charts: dict[tuple[str, str], str] = {}
    for key, obj in (*deployments.items(), *workloads.items()):
        chart = ((obj.get("metadata") or {}).get("labels") or {}).get(TYPE_LABEL, "")
        if chart in BY_CHART and key in index:  # an object whose release is gone is being deleted
            charts.setdefault(key, chart)
    if not (name or version):
        for key, rel in index.items():
            if rel.labels.get(RELEASE_LABEL) in BY_CHART:
                charts.setdefault(key, rel.labels[RELEASE_LABEL])
    views = []
    for key in sorted(charts):
        item = index[key].item(chart=f"{charts[key]}-")
        view = serving_view(item, deployments.get(key), services.get(key), pods.get(key, []), workloads.get(key))
        if type_ and view.type != type_:
            continue
        views.append(view)
    return views


def _workloads(c: Cluster, ns: str | None, selector: str) -> dict[tuple[str, str], dict]:
    """The objects the serving charts make when that is not a Deployment (a kind's ``apis``), by (namespace,
    release): one LIST a kind, none when the API server does not serve it (its
    controller is not installed) or when the user may not list them."""
    from ..core.servekinds import SERVE_KINDS

    out: dict[tuple[str, str], dict] = {}
    for kind in SERVE_KINDS:
        if not kind.apis:
            continue
        try:
            items = c.kube.list_objects(*kind.apis[0].resource, ns, selector)
        except (NotFoundError, ForbiddenError):  # not served; or the user may not read them: none in view
            continue
        for o in items:
            out[release_key(o)] = o
    return out


def servings_named(c: Cluster, namespace: str, name: str, version: str | None = None) -> list[ServingView]:
    """The versions of serving ``name`` (one, with ``version``); NotFoundError when there is none."""
    views = list_servings(c, namespace, False, name, version)
    if not views:
        what = f"serving {name}" + (f" version {version}" if version else "")
        raise NotFoundError(f"no {what} in namespace {namespace} (see arena-helm serve list)")
    return views


def one_serving(c: Cluster, namespace: str, name: str, version: str | None = None) -> ServingView:
    views = servings_named(c, namespace, name, version)
    if len(views) > 1:
        raise UsageError(f"serving {name} has {len(views)} versions in namespace {namespace} "
                         f"({', '.join(v.version for v in views)}): pick one with --version")
    return views[0]


def delete_servings(c: Cluster, namespace: str, name: str, version: str | None = None) -> list[ServingView]:
    """Uninstall serving ``name`` (all its versions, or ``version``): everything its releases made (its traffic
    split is the traffic family's: ``traffic.delete_serving``)."""
    views = servings_named(c, namespace, name, version)
    for v in views:
        c.uninstall(namespace, v.release)
    return views


def serving_type(text: str) -> str:
    """``-T``'s value: a serving kind (custom, vllm, tensorflow) or its type (Arena's servingType: custom-serving,
    vllm-serving, tf-serving) -> the type."""
    from ..core.servekinds import BY_CHART, BY_KEY, SERVE_KINDS

    if text in BY_KEY:
        return BY_KEY[text].chart
    if text in BY_CHART:
        return text
    raise UsageError(f"--type {text}: not a serving kind; one of {', '.join(k.key for k in SERVE_KINDS)} (or "
                     f"their types {', '.join(k.chart for k in SERVE_KINDS)})")


def ready_serving(c: Cluster, namespace: str, name: str, version: str, timeout: float, *, poll: float = 1.0,
                  notify=None) -> ServingView:
    """The serving once its Deployment has rolled out (every desired replica of the latest template ready and
    available, no older one left: kubectl rollout status's test); says once through ``notify`` that it waits;
    WaitTimeoutError (exit 3) after ``timeout`` seconds."""
    import time

    from ..core.errors import WaitTimeoutError

    deadline = time.monotonic() + timeout
    told = False
    while True:
        view = one_serving(c, namespace, name, version)
        if view.rolled_out and view.ready >= view.desired:
            return view
        pending = "; ".join(f"{p['name']} {p['status']}" for p in view.pods) or "no pod yet"
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"serving {name} version {version} is not ready after {int(timeout)}s "
                                   f"({view.ready}/{view.desired} ready: {pending}; arena-helm serve get {name} "
                                   f"--version {version} -n {namespace})")
        if not told and notify:
            notify(f"waiting for serving {name} version {version} to be ready ({view.ready}/{view.desired}; up to "
                   f"{int(timeout)}s: --timeout)")
            told = True
        time.sleep(poll)


# ---- serve update: a helm upgrade of one version with only the given values changed ----------------------------
# the flags `serve update` takes, of every kind: spec field -> the values keys it sets (a kind module's UPDATES
# adds its own). Maps (labels, annotations, resources, ports) merge into the release's; lists (env) replace its.
UPDATES: dict[str, tuple[str, ...]] = {
    "image": ("image",), "image_pull_policy": ("imagePullPolicy",), "replicas": ("replicas",), "gpus": ("gpus",),
    "cpu": ("resources",), "memory": ("resources",), "env": ("env",), "env_from_secret": ("env",),
    "label": ("labels",), "annotation": ("annotations",), "model_name": ("labels",), "model_version": ("labels",),
}


def update_fields(kind) -> dict[str, tuple[str, ...]]:
    """The spec fields ``serve update KIND`` takes, with the values keys each sets."""
    return {**UPDATES, **kind.module().UPDATES}


def check_update(kind, name: str, version: str | None, given: dict[str, Any]) -> None:
    """``serve update``'s flags checked before the cluster is read: something to change, each value valid (the
    version is the serving's own once read: a stand-in until then). Pure."""
    if not given:
        raise UsageError(f"serve update {kind.key}: give what to change (e.g. --image, --replicas, --gpus)")
    update_patch(kind, name, version or "0", given)


def update_patch(kind, name: str, version: str, given: dict[str, Any]) -> dict[str, Any]:
    """The values ``serve update`` merges into the release's (helm upgrade --reuse-values): for each given field,
    its keys (``key``, or ``key.sub`` for one key of a map, whose other keys stay as they are) as the kind's values
    make them (a key a default leaves out: the chart's default, from the values model), so that a value set back
    to its default is set too. Pure."""
    unknown = sorted(set(given) - set(update_fields(kind)))
    if unknown:
        raise UsageError(f"serve update {kind.key} does not change {', '.join(unknown)}")
    module = kind.module()
    spec = module.SPEC(**{"name": name, "version": version, **module.PLACEHOLDERS, **given})
    full = module.VALUES.model_validate(serving_values(spec)).model_dump(by_alias=True, mode="json",
                                                                        exclude_none=True)
    patch: dict[str, Any] = {}
    for path in dict.fromkeys(k for f in given for k in update_fields(kind)[f]):  # "key" or "key.sub"
        *parents, last = path.split(".")
        source, target = full, patch
        for part in parents:
            source, target = source.get(part) or {}, target.setdefault(part, {})
        if last in source:
            target[last] = source[last]
    return patch


def update_serving(c: Cluster, namespace: str, kind, name: str, version: str | None,
                   given: dict[str, Any]) -> ServingView:
    """helm upgrade of serving ``name`` (its one version, or ``version``) with the given flags' values merged
    over the release's; returns the view after it (its new revision)."""
    check_update(kind, name, version, given)
    view = one_serving(c, namespace, name, version)
    if view.type != kind.chart:
        from ..core.servekinds import BY_CHART

        its = BY_CHART.get(view.type)  # the command of the serving's own kind (tf-serving: tensorflow)
        fix = f": arena-helm serve update {its.key} {name}" if its else ""
        raise UsageError(f"serving {name} version {view.version} is a {view.type}, not a {kind.chart}{fix}")
    patch = update_patch(kind, name, view.version, given)
    c.upgrade(kind.chart, namespace, view.release, patch, reuse_values=True)
    return one_serving(c, namespace, name, view.version)


# ---- one pod of a serving: serve logs, serve attach ---------------------------------------------------------------
CONTAINER = "serving"  # the server's container in every serving chart (arena-common _serving.tpl)


def serving_pod(c: Cluster, namespace: str, name: str, version: str | None,
                instance: str | None) -> tuple[str, str | None]:
    """(pod, note) of serving ``name`` (its one version, or ``version``): ``instance`` if it is one of its pods,
    else its first running pod (by name), with a note when there are others to pick with -i."""
    view = one_serving(c, namespace, name, version)
    names = [p["name"] for p in view.pods]
    if instance:
        if instance not in names:
            raise NotFoundError(f"-i/--instance {instance}: serving {name} version {view.version} has no such "
                                f"instance (its pods: {', '.join(names) or 'none yet'})")
        return instance, None
    if not names:
        raise NotFoundError(f"serving {name} version {view.version} has no pods yet (arena-helm serve get {name} "
                            f"--version {view.version} -n {namespace})")
    chosen = ([p for p in view.pods if p["status"] == "Running"] or view.pods)[0]["name"]
    note = None if len(names) == 1 else (f"serving {name} version {view.version} has {len(names)} instances; "
                                         f"showing {chosen} (-i/--instance picks another)")
    return chosen, note


# ---- servings among the jobs of top job and list --idle -----------------------------------------------------------
def deployment_shape(deployment: dict) -> tuple[int, list[list[dict]], dict]:
    """A Deployment's shape for ``top job``: its desired replicas, the containers of each pod of a replica (one),
    its pod spec."""
    spec = deployment.get("spec") or {}
    template = ((spec.get("template") or {}).get("spec")) or {}
    desired = desired_replicas(spec)
    return desired, [template.get("containers") or []], template


def serving_job_view(workload: dict, shape: tuple[int, list[list[dict]], dict], pods: list[dict],
                     now: dt.datetime) -> JobView:
    """One serving version as a row of ``top job``: NAME the serving's name and version (``qwen/v1``: two versions
    are two rows), TRAINER its type, its pods the instances, GPUs requested =
    replicas x a replica's GPUs (the GPUs of each pod of a replica: one pod of a Deployment, a leader and its
    workers of a LeaderWorkerSet), allocated = those of its running pods. ``shape``: the workload's desired
    replicas, the containers of each pod of a replica and a pod spec (deployment_shape, or the kind module's
    ``workload_shape``). Pure."""
    from ..views.jobs import JobView, container_requests, instance_of, short_duration

    meta = workload.get("metadata") or {}
    labels = meta.get("labels") or {}
    desired, replica_pods, template = shape
    per_replica = {r: sum(container_requests(cs, r) for cs in replica_pods) for r in ("nvidia.com/gpu", "cpu", "memory")}
    live = sorted((p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")),
                  key=lambda p: p["metadata"]["name"])
    instances = [instance_of(p, now) for p in live]
    running = [p for p, i in zip(live, instances, strict=True) if i.status == "Running"]
    status = ("RUNNING" if desired and len(running) >= desired * len(replica_pods) else "PENDING" if desired
              else "SCALED-DOWN")
    created = k8s.parse_time(meta.get("creationTimestamp"))
    seconds = (now - created).total_seconds() if created else None
    allocated = sum(container_requests((p.get("spec") or {}).get("containers") or [], "nvidia.com/gpu") for p in running)
    name, version = labels.get(NAME_LABEL) or meta.get("name", ""), labels.get(VERSION_LABEL)
    return JobView(name=f"{name}/{version}" if version else name, namespace=meta.get("namespace", ""),
                   trainer=labels.get(TYPE_LABEL, "serving"), status=status, duration=short_duration(seconds),
                   created=meta.get("creationTimestamp", ""), ended="",
                   requested_gpus=int(per_replica["nvidia.com/gpu"]) * desired, allocated_gpus=int(allocated),
                   requested_cpu=per_replica["cpu"] * desired, requested_memory=per_replica["memory"] * desired,
                   node=",".join(sorted({i.node for i in instances if i.node != "N/A"})) or "N/A",
                   chief_name=instances[0].name if instances else "", priority=template.get("priorityClassName") or "N/A",
                   instances=instances, release={"name": labels.get("release", meta.get("name", "")),
                                                 "namespace": meta.get("namespace", "")},
                   created_ts=created.timestamp() if created else 0.0, uid=meta.get("uid", ""),
                   duration_seconds=max(int(seconds), 0) if seconds is not None else 0,
                   start_ts=int(created.timestamp()) if created else 0, family=Family.SERVING)


def active_serving_views(c: Cluster, namespace: str, all_namespaces: bool) -> list[JobView]:
    """Every serving version as a ``top job`` row: its Deployment (KServe's predictor's too: it carries the
    serving's labels), or the workload of a kind whose module gives a ``workload_shape`` (a LeaderWorkerSet); one
    LIST each of the serving Deployments, those workloads and the serving pods, no helm. A user who may not
    list Deployments sees none (the jobs' view goes on without them)."""
    from ..core.servekinds import SERVE_KINDS
    from ..releases.reader import now_utc

    ns = None if all_namespaces else namespace
    try:
        workloads = [(d, deployment_shape(d)) for d in c.kube.list_deployments(ns, SELECTOR)]
        for kind in SERVE_KINDS:
            shape = kind.module().workload_shape
            if shape is None:  # its pods are a Deployment's (above: KServe's predictor)
                continue
            try:  # (a kind with a shape of its own makes its workload of its API)
                workloads += [(o, shape(o)) for o in c.kube.list_objects(*kind.apis[0].resource, ns, SELECTOR)]
            except (NotFoundError, ForbiddenError):  # not served, or not readable by the user: none
                continue
        pods: dict[tuple[str, str], list[dict]] = {}
        for p in c.kube.list_pods(ns, selector=SELECTOR):
            pods.setdefault(release_key(p), []).append(p)
    except ForbiddenError:
        return []
    now = now_utc()
    return [serving_job_view(o, shape, pods.get(release_key(o), []), now)
            for o, shape in sorted(workloads, key=lambda w: (w[0]["metadata"]["namespace"], w[0]["metadata"]["name"]))]
