"""``serve traffic-split NAME -v V1:80 -v V2:20``: weights between the versions of one serving.

The split is a small helm release of its own, named as the serving (``NAME``; its versions are ``NAME-VERSION``),
of ``charts/traffic-split``: a Service ``NAME`` over the pods of every version (the address clients call) and the
routing object that sends each version its share of what reaches that Service: a Gateway API ``HTTPRoute`` per
port whose parent is the Service (the GAMMA mesh form: the mesh's proxies apply the weights) when the cluster
serves ``gateway.networking.k8s.io/v1``, else Istio's ``VirtualService`` and ``DestinationRule`` (subsets by
the ``servingVersion`` label, as Arena's traffic router makes them: pkg/serving/traffic_router_split.go).
Splitting again upgrades the release; deleting the serving uninstalls it.

Here: the spec (the flags, pure), the values model (its chart's schema is generated from it), spec -> values
(pure: what ``--dry-run`` renders) and the actions through the injected adapters.
"""

from __future__ import annotations

import enum
import re
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator, model_validator

from ..core import grammars as k8s
from ..core.catalog import FAMILY_CHART, ONE_CHART_KINDS, Family, release_chart
from ..core.errors import NotFoundError, UsageError
from ..core.grammars import DNS1035Label, DNSLabel
from ..workload.chart_values import ArenaCommonValues, Empty, ValuesModel, arena_common_field, global_field
from ..workload.spec import HELM_RELEASE_MAX, PodFlags

NAME_MAX = HELM_RELEASE_MAX - 2  # the shortest version is one character: NAME-V

if TYPE_CHECKING:
    from ..workload.gateway import Cluster
    from .servings import ServingView

CHART = FAMILY_CHART[Family.TRAFFIC]
WEIGHT_RX = re.compile(r"^([^:]+):(\d{1,3})$")


class Router(enum.StrEnum):
    """What carries the weights: the Gateway API (an HTTPRoute) or Istio (a VirtualService)."""

    gateway = "gateway"
    istio = "istio"


# the API group each router needs served (discovery: the family's kind's apis, in Router's order), and the objects
# it makes
ROUTER_GROUPS = dict(zip(Router, (api.group for k in ONE_CHART_KINDS if k.family is Family.TRAFFIC for api in k.apis),
                         strict=True))
ROUTER_OBJECTS = {Router.gateway: "HTTPRoute", Router.istio: "VirtualService and DestinationRule"}


class TrafficSplitSpec(PodFlags):
    """``serve traffic-split``: the serving, the weights of its versions, the router. Each field is the flag of
    the same name."""

    name: str = Field(json_schema_extra={"flag": {"cli": False, "argument": "NAME"}})  # the serving, the release
    namespace: str = "default"
    version_weight: list[tuple[str, int]] = Field(default_factory=list)  # (version, percent): -v VERSION:WEIGHT
    router: Router | None = None  # None: what the cluster serves (the Gateway API first)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        k8s.check_dns1035(name, "serving name")
        if len(name) > NAME_MAX:
            raise ValueError(f"serving name {name!r} is {len(name)} characters; a serving's name is at most {NAME_MAX} "
                             f"(its versions' releases are NAME-VERSION, at most {HELM_RELEASE_MAX})")
        return name

    @field_validator("version_weight", mode="before")
    @classmethod
    def _weights(cls, items: Any) -> Any:
        out = []
        for item in items or []:
            if isinstance(item, str):
                m = WEIGHT_RX.fullmatch(item)
                if not m:
                    raise ValueError(f"--version-weight {item!r}: not VERSION:WEIGHT (e.g. v1:80)")
                item = (m.group(1), int(m.group(2)))
            version, weight = item
            k8s.check_dns_label(version, f"--version-weight {version}:{weight}: version")
            if not 0 <= weight <= 100:
                raise ValueError(f"--version-weight {version}:{weight}: a weight is a percent, 0 to 100")
            out.append((version, weight))
        return out

    @model_validator(mode="after")
    def _sum(self) -> TrafficSplitSpec:
        if not self.version_weight:
            raise ValueError("--version-weight: give each version its share, e.g. -v v1:80 -v v2:20")
        versions = [v for v, _ in self.version_weight]
        dup = sorted({v for v in versions if versions.count(v) > 1})
        if dup:
            raise ValueError(f"--version-weight: version {dup[0]} is given twice: give each version once")
        total = sum(w for _, w in self.version_weight)
        if total != 100:
            raise ValueError(f"--version-weight: the weights sum to {total}, not 100: "
                             f"{', '.join(f'{v}:{w}' for v, w in self.version_weight)}")
        return self

    @property
    def release(self) -> str:
        return self.name


# ---- the chart's values ---------------------------------------------------------------------------------
class TrafficPort(ValuesModel):
    name: DNS1035Label = Field(..., description="The port's name (the versions' pods and Services name it so).")
    port: int = Field(..., ge=1, le=65535, description="The port number, on the Service and the versions'.")


class TrafficBackend(ValuesModel):
    version: DNSLabel = Field(..., description="The version (its pods' servingVersion label).")
    service: DNS1035Label = Field(..., description="The version's Service (its release, NAME-VERSION).")
    weight: int = Field(..., ge=0, le=100, description="Its percent of the traffic.")


class TrafficService(ValuesModel):
    type: str = Field("ClusterIP", pattern="^(ClusterIP|NodePort|LoadBalancer)$",
                      description="Service type: ClusterIP, NodePort or LoadBalancer.")


class TrafficSplitValues(ValuesModel):
    """The values of the traffic-split chart."""

    global_: dict[str, Any] = global_field()
    arena_common: ArenaCommonValues = arena_common_field()
    serving_name: Empty | DNS1035Label = Field("", description="The serving: the Service and routing objects' name, "
                                               "the servingName label of its versions' pods (required).")
    router: str = Field("gateway", pattern="^(gateway|istio)$", description="gateway: an HTTPRoute per port (Gateway "
                        "API, GAMMA); istio: a VirtualService and a DestinationRule.")
    ports: list[TrafficPort] = Field([], description="The ports split (at least one).")
    backends: list[TrafficBackend] = Field([], description="The versions and their weights (at least one; summing to "
                                           "100).")
    service: TrafficService = Field(default_factory=TrafficService, description="The Service clients call.")


def parse_ports(items: list[str]) -> list[tuple[str, int]]:
    """``--port NAME:NUMBER`` items."""
    out = []
    for item in items:
        name, _, number = item.partition(":")
        if not (name and k8s.is_port_number(number)):
            raise UsageError(f"--port {item!r}: not NAME:NUMBER (e.g. restful:8501)")
        try:
            k8s.check_dns1035(name, f"--port {item}: name")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for other, num in out:  # a Service's ports have distinct names and numbers (core/v1 validation)
            if other == name or num == int(number):
                raise UsageError(f"--port {item!r}: {'name ' + name if other == name else 'port ' + number} is "
                                 f"given twice: give each port once")
        out.append((name, int(number)))
    return out


def assumed_views(spec: TrafficSplitSpec, ports: list[tuple[str, int]]) -> list[ServingView]:
    """What ``--dry-run`` takes the versions to be (no cluster): releases NAME-VERSION with the ports given."""
    from .servings import ServingView

    if not ports:
        raise UsageError("--port: a dry run reads no serving: give the ports to split, NAME:NUMBER (e.g. "
                         "--port restful:8501)")
    return [ServingView(name=spec.name, version=v, namespace=spec.namespace, type="", release=f"{spec.name}-{v}",
                        desired=0, available=0, ready=0, gpus=0, address="", ports=list(ports))
            for v, _ in spec.version_weight]


def traffic_values(spec: TrafficSplitSpec, views: list[ServingView], router: Router,
                   ports: list[tuple[str, int]] | None = None) -> dict[str, Any]:
    """The chart values: a backend a version (its Service, its weight) and the ports every version has (named
    alike; only ``ports`` when given). Pure; ``views`` are the serving's versions."""
    by_version = {v.version: v for v in views}
    missing = [v for v, _ in spec.version_weight if v not in by_version]
    if missing:
        have = ", ".join(sorted(by_version)) or "none"
        raise UsageError(f"--version-weight {missing[0]}: serving {spec.name} has no version {missing[0]} in "
                         f"namespace {spec.namespace} (its versions: {have})")
    chosen = [by_version[v] for v, _ in spec.version_weight]
    shared = [p for p in chosen[0].ports if all(p in v.ports for v in chosen[1:])]
    for port in ports or []:
        if port not in shared:
            raise UsageError(f"--port {port[0]}:{port[1]}: not a port every version has (theirs in common: "
                             f"{', '.join(f'{n}:{p}' for n, p in shared) or 'none'})")
    shared = [p for p in shared if not ports or p in ports]
    if not shared:
        raise UsageError(f"serving {spec.name}: versions {', '.join(v for v, _ in spec.version_weight)} have no port in "
                         f"common (same name and number) to split: give them one (e.g. --restful-port)")
    return {"servingName": spec.name, "router": router.value,
            "ports": [{"name": name, "port": port} for name, port in shared],
            "backends": [{"version": v, "service": by_version[v].release, "weight": w} for v, w in spec.version_weight]}


def choose_router(served: dict[str, list[str]], wanted: Router | None) -> Router:
    """The router: the one asked for, if the cluster serves its API; else the Gateway API, else Istio."""
    for router in ([wanted] if wanted else list(Router)):
        if "v1" in served.get(ROUTER_GROUPS[router], []):
            return router
    if wanted:
        raise UsageError(f"--router {wanted.value}: the cluster does not serve {ROUTER_GROUPS[wanted]}/v1 "
                         f"({ROUTER_OBJECTS[wanted]}): install it, or leave --router out")
    raise UsageError("serve traffic-split: the cluster serves neither the Gateway API (gateway.networking.k8s.io/v1, "
                     "an HTTPRoute) nor Istio (networking.istio.io/v1): a split needs a mesh that applies one of them")


# ---- the actions ----------------------------------------------------------------------------------------
def render_traffic(helm_binary: str | None, spec: TrafficSplitSpec, values: dict[str, Any]) -> str:
    from ..adapters.helm import Helm
    from ..workload.gateway import render

    return render(Helm(helm_binary), CHART, spec.release, values, spec.namespace)


def split_traffic(c: Cluster, spec: TrafficSplitSpec, ports: list[tuple[str, int]] | None = None
                  ) -> tuple[dict[str, Any], int]:
    """Install (or upgrade) the split's release; its values and the release's revision."""
    from .servings import servings_named

    try:
        views = servings_named(c, spec.namespace, spec.name)
    except NotFoundError as exc:
        raise UsageError(str(exc)) from None
    router = choose_router(c.kube.served_groups(), spec.router)
    values = traffic_values(spec, views, router, ports)
    existing = c.find(spec.namespace, spec.release)
    if existing is not None and release_chart(existing) != CHART:
        raise UsageError(f"release {spec.release} in namespace {spec.namespace} is not a traffic split (chart "
                         f"{existing.get('chart')}): it is left as it is")
    if existing is None:
        out = c.install(CHART, spec.namespace, spec.release, values)
    else:
        out = c.upgrade(CHART, spec.namespace, spec.release, values)
    return values, int(out.get("version", 1) or 1)


def traffic_of(c: Cluster, namespace: str, name: str, releases: list[dict] | None = None) -> dict[str, Any] | None:
    """The split of serving ``name`` (its release's values), or None."""
    listed = releases if releases is not None else c.of_chart(CHART, namespace)
    if not any(r.get("name") == name and release_chart(r) == CHART for r in listed):
        return None
    return c.values(namespace, name)


def delete_serving(c: Cluster, namespace: str, name: str, version: str | None = None,
                   ) -> tuple[list[ServingView], bool]:
    """``serve delete``: uninstall serving ``name`` (all its versions, or ``version``) and, with every version,
    its traffic split too. Returns the versions deleted and whether a traffic split was."""
    from .servings import delete_servings

    views = delete_servings(c, namespace, name, version)
    if version is None and traffic_of(c, namespace, name) is not None:
        c.uninstall(namespace, name)
        return views, True
    return views, False


def describe(values: dict[str, Any]) -> str:
    """One line: each version's share and what carries it."""
    shares = ", ".join(f"{b['version']} {b['weight']}%" for b in values.get("backends") or [])
    router = Router(values.get("router", "gateway"))
    return f"{shares} ({'Gateway API' if router is Router.gateway else 'Istio'} {ROUTER_OBJECTS[router]})"
