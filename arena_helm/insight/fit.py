"""Will a job fit on the cluster: its pod groups against the nodes, the pods already bound to them and, for a
job of a Kueue queue, its ClusterQueue's quota. Pure (no I/O): the caller reads the objects as the API
returns them (plain dicts) and gets a verdict, an exit code and one line saying why.

Which nodes a pod may use follows kube-scheduler's filter plugins (k8s.io/kubernetes
``pkg/scheduler/framework/plugins``), in their order, the first failing one naming why a node is out:

- ``nodeunschedulable/node_unschedulable.go``: a cordoned node, unless the pod tolerates
  ``node.kubernetes.io/unschedulable:NoSchedule``; then a node whose Ready condition is not True (the node
  lifecycle controller's not-ready taint, taken as final here);
- ``tainttoleration/taint_toleration.go``: every NoSchedule and NoExecute taint tolerated (``ToleratesTaint``
  of k8s.io/api core/v1 ``toleration.go``);
- ``nodeaffinity/node_affinity.go``: the nodeSelector labels, and the required nodeSelectorTerms (ORed terms,
  ANDed expressions; k8s.io/component-helpers ``scheduling/corev1/nodeaffinity``);
- ``noderesources/fit.go``: the pod count, then every resource the pod requests, within the node's allocatable
  less the requests of the pods bound to it; a pod's requests are ``PodRequests`` of k8s.io/component-helpers
  ``resource/helpers.go`` (containers summed, the init containers' peak, sidecars, overhead).

The gang (every pod of the job at once, as a gang scheduler or Kueue's all-or-nothing admission asks) is
simulated: the pods largest first (GPUs, then CPU, then memory), each on the eligible node with the fewest free
GPUs that still holds it (best fit), once on the cluster as it is and once on the empty cluster. A greedy
placement: a packing it misses may exist, so "does not fit" is the simulation's word, not a proof.

The quota follows Kueue's flavor assignment (sigs.k8s.io/kueue ``pkg/scheduler/flavorassigner``): for each
resource group, the first flavor (in the ClusterQueue's order) whose free quota holds every resource of the
group the job requests; a resource no group covers makes the workload inadmissible. Borrowing is counted only
for "ever" (nominal + borrowingLimit in a cohort, unbounded without a limit): what the cohort lends now is not
known here.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..core.catalog import ROLE_DOC
from ..core.errors import ForbiddenError, UsageError
from ..core.grammars import parse_quantity
from ..views.jobs import fmt_cpu, fmt_mem, is_gpu_resource, pod_allocates, pod_templates
from ..views.output import table
from ..views.queueing import queue_of
from ..views.slim import slim_pod_requests

if TYPE_CHECKING:
    from ..workload.gateway import Cluster

log = logging.getLogger(__name__)

# the labels that name a node's pool (GKE, EKS, Karpenter, AKS; else the instance type), first present wins
POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool", "agentpool",
               "kubernetes.azure.com/agentpool", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
NO_POOL = "(none)"
NAMESPACE_SELECTOR_ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector"  # the PodNodeSelector admission plugin
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
HARD_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only scores
EXIT_CODES = {"fits": 0, "busy": 4, "never": 5}
_RANK = {"pods": 0, "cpu": 1, "memory": 2, "ephemeral-storage": 3}  # fit.go's order; the other resources by name
_ZERO = Decimal(0)

Resources = dict[str, Decimal]


# ---- quantities ------------------------------------------------------------------------------------------
def _ordered(resources: Iterable[str]) -> list[str]:
    """Resource names in fit.go's order: pods, cpu, memory, ephemeral-storage, then the others by name."""
    return sorted(resources, key=lambda r: (_RANK.get(r, len(_RANK)), r))


def _is_bytes(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def _plain(value: Decimal) -> str:
    return str(int(value)) if value == value.to_integral_value() else format(value.normalize(), "f")


def _human(resource: str, value: Decimal) -> str:
    """A quantity to read: cores (``4``, ``500m``), bytes (``16Gi``), a count (GPUs) otherwise."""
    if resource == "cpu":
        return fmt_cpu(float(value))
    if _is_bytes(resource):
        return fmt_mem(float(value))
    return _plain(value)


def _quantity_text(resource: str, value: Decimal) -> str:
    """A quantity exactly, as Kubernetes writes it: ``500m`` of CPU, the largest binary suffix that divides a
    byte count (``16Gi``), a plain number otherwise."""
    if resource == "cpu" and value != value.to_integral_value() and (value * 1000) == (value * 1000).to_integral_value():
        return f"{int(value * 1000)}m"
    if _is_bytes(resource) and value:
        for suffix, power in (("Ti", 4), ("Gi", 3), ("Mi", 2), ("Ki", 1)):
            if value % (1024 ** power) == 0:
                return f"{int(value / 1024 ** power)}{suffix}"
    return _plain(value)


def _requests_text(requests: Resources) -> str:
    """``cpu 4, memory 16Gi, nvidia.com/gpu 8``."""
    return ", ".join(f"{r} {_human(r, requests[r])}" for r in _ordered(requests)) or "-"


def _quantities(values: dict | None) -> Resources:
    out = {}
    for name, value in (values or {}).items():
        q = parse_quantity(value)
        if q is not None:
            out[name] = q
    return out


def _add(a: Resources, b: Resources) -> Resources:
    return {r: a.get(r, _ZERO) + b.get(r, _ZERO) for r in a | b}


def _sub(a: Resources, b: Resources) -> Resources:
    return {r: a.get(r, _ZERO) - b.get(r, _ZERO) for r in a | b}


def _max(a: Resources, b: Resources) -> Resources:
    return {r: max(a.get(r, _ZERO), b.get(r, _ZERO)) for r in a | b}


def _gpus(resources: Resources) -> Decimal:
    return sum((v for r, v in resources.items() if is_gpu_resource(r)), _ZERO)


# ---- pods --------------------------------------------------------------------------------------------------
def _container_requests(container: dict) -> Resources:
    """A container's requests; a resource with a limit and no request requests its limit (as the API server
    defaults it)."""
    res = container.get("resources") or {}
    return {**_quantities(res.get("limits")), **_quantities(res.get("requests"))}


def pod_requests(pod_spec: dict) -> Resources:
    """The effective requests of one pod (component-helpers ``PodRequests``): the containers summed with the
    sidecars (init containers with restartPolicy Always), or the init containers' peak (each one with the
    sidecars started before it) when larger, plus the overhead. Zero requests are left out."""
    total: Resources = {}
    for c in pod_spec.get("containers") or []:
        total = _add(total, _container_requests(c))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for c in pod_spec.get("initContainers") or []:
        if c.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, _container_requests(c))
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(sidecars, _container_requests(c)))
    out = _add(_max(_add(total, sidecars), init_peak), _quantities(pod_spec.get("overhead")))
    return {r: v for r, v in out.items() if v > 0}


@dataclass(frozen=True)
class PodGroup:
    """The identical pods of one replica type."""

    name: str
    count: int
    requests: Resources  # the effective requests of one pod (pod_requests)
    node_selector: dict[str, str]
    tolerations: tuple[dict, ...]
    required_terms: tuple[dict, ...]  # required nodeSelectorTerms; none: no node affinity


def pod_group(name: str, count: int, pod_spec: dict, extra_selector: dict[str, str] | None = None) -> PodGroup:
    """A PodGroup of ``count`` pods of a template's ``pod_spec``. ``extra_selector``: the node labels every pod
    must match besides its own nodeSelector (the namespace's, which the PodNodeSelector admission plugin
    merges in). Where the two disagree on a label, the plugin refuses the pods: the namespace's value is then
    ANDed into the required terms as well, so that no node matches."""
    own = {str(k): str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()}
    extra = dict(extra_selector or {})
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = tuple(required.get("nodeSelectorTerms") or ())
    conflicts = [{"key": k, "operator": "In", "values": [v]} for k, v in extra.items() if own.get(k, v) != v]
    if conflicts:
        terms = tuple({**t, "matchExpressions": [*(t.get("matchExpressions") or []), *conflicts]} for t in terms or ({},))
    return PodGroup(name=name, count=count, requests=pod_requests(pod_spec), node_selector={**extra, **own},
                    tolerations=tuple(pod_spec.get("tolerations") or ()), required_terms=terms)


def namespace_selector(namespace: dict | None) -> dict[str, str]:
    """The node selector of a namespace's ``scheduler.alpha.kubernetes.io/node-selector`` annotation
    (``k=v,k2=v2``; absent or empty: ``{}``). ValueError for an entry that is not ``key=value``."""
    text = (((namespace or {}).get("metadata") or {}).get("annotations") or {}).get(NAMESPACE_SELECTOR_ANNOTATION) or ""
    out = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        key, eq, value = entry.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"the namespace's {NAMESPACE_SELECTOR_ANNOTATION} entry {entry!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


# ---- nodes ------------------------------------------------------------------------------------------------
def node_pool(node: dict) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return next((labels[k] for k in POOL_LABELS if labels.get(k)), NO_POOL)


def node_ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def tolerates(toleration: dict, taint: dict) -> bool:
    """k8s.io/api core/v1 ``Toleration.ToleratesTaint``: an empty effect matches every effect, an empty key with
    Exists every taint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    if toleration.get("operator") == "Exists":
        return True
    return toleration.get("operator", "Equal") in ("", "Equal") and (toleration.get("value") or "") == (taint.get("value") or "")


def _tolerated(tolerations: Iterable[dict], taint: dict) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def _taint_text(taint: dict) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as kubectl writes a taint."""
    value = taint.get("value")
    return f"{taint.get('key', '')}{f'={value}' if value else ''}:{taint.get('effect', '')}"


def _requirement_matches(expr: dict, values: dict[str, str]) -> bool:
    """One matchExpressions (or matchFields) requirement against a node's labels (or fields)."""
    key, op, wanted = expr.get("key", ""), expr.get("operator", ""), [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in values and values[key] in wanted
    if op == "NotIn":
        return key not in values or values[key] not in wanted
    if op == "Exists":
        return key in values
    if op == "DoesNotExist":
        return key not in values
    if op in ("Gt", "Lt") and key in values and len(wanted) == 1:
        try:
            have, bound = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def _term_matches(term: dict, labels: dict[str, str], fields: dict[str, str]) -> bool:
    exprs, field_exprs = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not field_exprs:
        return False  # an empty term matches no node
    return all(_requirement_matches(e, labels) for e in exprs) and all(_requirement_matches(e, fields) for e in field_exprs)


def _matches_affinity(group: PodGroup, node: dict) -> bool:
    """The nodeSelector and the required node affinity (matchFields: ``metadata.name``)."""
    meta = node.get("metadata") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    if any(labels.get(k) != v for k, v in group.node_selector.items()):
        return False
    fields = {"metadata.name": meta.get("name", "")}
    return not group.required_terms or any(_term_matches(t, labels, fields) for t in group.required_terms)


def filter_reason(group: PodGroup, node: dict) -> str | None:
    """Why the group's pods may not use the node whatever its load (the scheduler's words), or None."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable") and not _tolerated(group.tolerations, UNSCHEDULABLE_TAINT):
        return "node(s) were unschedulable"
    if not node_ready(node):
        return "node(s) were not ready"
    for taint in spec.get("taints") or []:
        if taint.get("effect") in HARD_EFFECTS and not _tolerated(group.tolerations, taint):
            return f"node(s) had untolerated taint {{{_taint_text(taint)}}}"
    if not _matches_affinity(group, node):
        return "node(s) didn't match Pod's node affinity/selector"
    return None


@dataclass
class _Node:
    name: str
    pool: str
    obj: dict
    allocatable: Resources  # pods among them
    free: Resources  # allocatable less the requests (and the count) of the pods bound to it


def _cluster(nodes: list[dict], pods: list[dict]) -> list[_Node]:
    used: dict[str, Resources] = {}
    for p in pods:
        if pod_allocates(p):
            node = p["spec"]["nodeName"]
            used[node] = _add(used.get(node, {}), {**pod_requests(p.get("spec") or {}), "pods": Decimal(1)})
    out = []
    for n in nodes:
        name = (n.get("metadata") or {}).get("name", "")
        alloc = _quantities((n.get("status") or {}).get("allocatable"))
        out.append(_Node(name, node_pool(n), n, alloc, _sub(alloc, used.get(name, {}))))
    return out


def _one_pod(group: PodGroup) -> Resources:
    return {**group.requests, "pods": Decimal(1)}


def _missing(need: Resources, free: Resources) -> list[str]:
    """The resources ``need`` asks more of than ``free`` holds (fit.go ``fitsRequest``; zero requests pass)."""
    return [r for r in _ordered(need) if need[r] > 0 and need[r] > free.get(r, _ZERO)]


def _insufficient(resource: str) -> str:
    return "Too many pods" if resource == "pods" else f"Insufficient {resource}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---- the result ----------------------------------------------------------------------------------------------
@dataclass
class GroupFit:
    name: str
    count: int
    requests: Resources
    pools: dict[str, tuple[int, int]]  # pool -> (nodes that could take one replica now, on the empty cluster)
    blockers: list[str]  # "3 nodes: Insufficient nvidia.com/gpu", most nodes first

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count,
                "requests": {r: _quantity_text(r, self.requests[r]) for r in _ordered(self.requests)},
                "pools": {p: {"now": now, "ever": ever} for p, (now, ever) in self.pools.items()},
                "blockers": list(self.blockers)}


@dataclass
class FitResult:
    verdict: str  # "fits" | "busy" | "never"
    exit_code: int  # 0 fits now, 4 fits once other workloads finish, 5 can never fit on this cluster
    reason: str  # one line: the first decisive cause
    groups: list[GroupFit]
    gang_now: bool
    gang_ever: bool
    placement: dict[str, list[str]]  # group -> the nodes of its pods in the simulation on the cluster as it is
    quota: dict | None
    notes: list[str] = field(default_factory=list)  # what could not be read, and so was not weighed

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "exitCode": self.exit_code, "reason": self.reason,
                "gangFitsNow": self.gang_now, "gangFitsEver": self.gang_ever, "placement": self.placement,
                "groups": [g.to_json() for g in self.groups], "quota": self.quota, "notes": list(self.notes)}

    def text(self) -> str:
        rows = []
        for g in self.groups:
            cells = [g.name, str(g.count), _requests_text(g.requests)]
            for k, (pool, (now, ever)) in enumerate(g.pools.items() or [("-", (0, 0))]):
                rows.append([*(cells if k == 0 else [""] * 3), pool, str(now), str(ever)])
        lines = [table(["GROUP", "REPLICAS", "REQUESTS", "POOL", "NODES(NOW)", "NODES(EVER)"], rows)]
        lines += [f"Blockers ({g.name}): {'; '.join(g.blockers)}" for g in self.groups if g.blockers]
        lines.append("Gang: fits now" if self.gang_now else
                     "Gang: does not fit now (fits on the empty cluster)" if self.gang_ever else "Gang: can never fit")
        if self.quota is not None:
            lines.append(_quota_line(self.quota))
        lines += [f"Note: {n}" for n in self.notes]
        lines.append(f"Verdict: {self.reason}")
        return "\n".join(lines)


def _quota_line(quota: dict) -> str:
    """``Quota: cluster queue cq-a (local queue lq-a): nvidia.com/gpu needs 4, 2 of 4 free (flavor default)``."""
    where = f"cluster queue {quota['clusterQueue']}" + (f" (local queue {quota['localQueue']})" if quota["localQueue"] else "")
    parts = [f"{r} needs {q['needed']}, " + (f"{q['free']} of {q['nominal']} free (flavor {q['flavor']})" if q["flavor"]
                                             else "not covered")
             for r, q in quota["resources"].items()]
    return f"Quota: {where}: " + ("; ".join(parts) or "nothing requested")


# ---- the check ------------------------------------------------------------------------------------------------
@dataclass
class _Assessed:
    group: PodGroup
    fit: GroupFit
    eligible: list[_Node]  # the nodes passing the filters (whatever their load)


def _assess(group: PodGroup, cluster: list[_Node]) -> _Assessed:
    need = _one_pod(group)
    pools = {n.pool: [0, 0] for n in cluster}
    reasons: Counter[str] = Counter()
    eligible = []
    for n in cluster:
        reason = filter_reason(group, n.obj)
        if reason:
            reasons[reason] += 1
            continue
        eligible.append(n)
        missing = _missing(need, n.free)
        reasons.update(_insufficient(r) for r in missing)
        pools[n.pool][0] += not missing
        pools[n.pool][1] += not _missing(need, n.allocatable)
    blockers = [f"{_plural(k, 'node')}: {r}" for r, k in sorted(reasons.items(), key=lambda rk: (-rk[1], rk[0]))]
    fit = GroupFit(group.name, group.count, dict(group.requests), {p: (now, ever) for p, (now, ever) in sorted(pools.items())},
                   blockers)
    return _Assessed(group, fit, eligible)


def _size(group: PodGroup) -> tuple[Decimal, Decimal, Decimal]:
    r = group.requests
    return _gpus(r), r.get("cpu", _ZERO), r.get("memory", _ZERO)


def _simulate(active: list[_Assessed], room: Callable[[_Node], Resources]) -> tuple[dict[str, list[str]], int]:
    """Place every pod, largest first, each on the eligible node with the fewest free GPUs that holds it (the
    first such node on a tie). -> (group -> nodes of its placed pods, how many pods found no node)."""
    free = {n.name: dict(room(n)) for a in active for n in a.eligible}
    placement: dict[str, list[str]] = {a.group.name: [] for a in active}
    unplaced = 0
    for a in sorted((a for a in active for _ in range(a.group.count)), key=lambda a: _size(a.group), reverse=True):
        need = _one_pod(a.group)
        fitting = [n for n in a.eligible if not _missing(need, free[n.name])]
        if not fitting:
            unplaced += 1
            continue
        best = min(fitting, key=lambda n: _gpus(free[n.name]))
        free[best.name] = _sub(free[best.name], need)
        placement[a.group.name].append(best.name)
    return placement, unplaced


def _job_total(groups: Iterable[PodGroup]) -> Resources:
    total: Resources = {}
    for g in groups:
        total = _add(total, {r: v * g.count for r, v in _one_pod(g).items()})
    return total


def _shortfall(active: list[_Assessed], room: Callable[[_Node], Resources]) -> tuple[str, Decimal, Decimal] | None:
    """The first resource the job needs more of, all pods at once, than the eligible nodes hold in all:
    (resource, held, needed)."""
    need = _job_total(a.group for a in active)
    for r in _ordered(need):
        nodes = {n.name: n for a in active if _one_pod(a.group).get(r) for n in a.eligible}
        held = sum((max(room(n).get(r, _ZERO), _ZERO) for n in nodes.values()), _ZERO)
        if need[r] > held:
            return r, held, need[r]
    return None


def _never_reason(a: _Assessed, cluster: list[_Node]) -> str:
    """Why one pod of the group fits no node, even empty."""
    name = a.group.name
    if not cluster:
        return f"{name}: the cluster has no nodes"
    if not a.eligible:
        return f"{name}: no node is eligible ({'; '.join(a.fit.blockers)})"
    for r in _ordered(a.group.requests):
        largest = max(n.allocatable.get(r, _ZERO) for n in a.eligible)
        if a.group.requests[r] > largest:
            return f"{name}: {_human(r, a.group.requests[r])} {r} per pod, the largest eligible node has {_human(r, largest)} allocatable"
    return f"{name}: no eligible node holds one pod ({_requests_text(a.group.requests)}) even empty"


def _shortfall_text(active: list[_Assessed], room: Callable[[_Node], Resources], template: str) -> str:
    """``template`` filled with the first shortfall (``{r}``, ``{held}``, ``{need}``), or "" without one."""
    short = _shortfall(active, room)
    if not short:
        return ""
    r, held, need = short
    return template.format(r=r, held=_human(r, held), need=_human(r, need))


def _gang_never_reason(active: list[_Assessed], pods: int, unplaced: int) -> str:
    return (_shortfall_text(active, lambda n: n.allocatable,
                            "the job needs {need} {r} at once, the eligible nodes have {held} allocatable in all")
            or f"the job's {pods} pods cannot all be placed at once even on the empty cluster "
               f"(the simulation placed {pods - unplaced})")


def _waits_reason(active: list[_Assessed], pods: int, unplaced: int) -> str:
    short = _shortfall_text(active, lambda n: n.free, "waits: {held} {r} free now on eligible nodes, the job needs "
                            "{need} at once")
    if short:
        return short
    full = next((a for a in active if not any(now for now, _ in a.fit.pools.values())), None)
    if full:
        return f"waits: {full.group.name}: no eligible node has room for one pod now ({'; '.join(full.fit.blockers)})"
    return f"waits: only {pods - unplaced} of the job's {pods} pods can be placed at once now (the free resources are fragmented)"


def _fits_reason(active: list[_Assessed], placement: dict[str, list[str]], quota: _QuotaCheck | None) -> str:
    nodes = sorted({n for names in placement.values() for n in names})
    if not nodes:
        return "fits now: the job asks for no pods"
    pods = ", ".join(_plural(a.group.count, f"{a.group.name} pod") for a in active)
    text = f"fits now: {pods} on {'node' if len(nodes) == 1 else 'nodes'} {', '.join(nodes)}"
    return text + (f", within the free quota of cluster queue {quota.name}" if quota else "")


def check_fit(groups: list[PodGroup], nodes: list[dict], pods: list[dict], *, cluster_queue: dict | None = None,
              local_queue: str = "") -> FitResult:
    """Whether the job of ``groups`` fits: now, once the pods of others finish (``busy``), or never. ``pods``: every
    pod of the cluster (those bound and not finished use their node's resources). ``cluster_queue``: the Kueue
    ClusterQueue of the job's LocalQueue ``local_queue``, when it has one."""
    cluster = _cluster(nodes, pods)
    assessed = [_assess(g, cluster) for g in groups]
    active = [a for a in assessed if a.group.count > 0]
    total = sum(a.group.count for a in active)
    placement, unplaced_now = _simulate(active, lambda n: n.free)
    _, unplaced_ever = _simulate(active, lambda n: n.allocatable)
    gang_now = unplaced_now == 0
    gang_ever = gang_now or unplaced_ever == 0  # the greedy placement may miss on the empty cluster what it found now
    quota = _quota(cluster_queue, [a.group for a in active]) if cluster_queue is not None else None
    hopeless = next((a for a in active if not any(ever for _, ever in a.fit.pools.values())), None)
    if hopeless:
        verdict, reason = "never", _never_reason(hopeless, cluster)
    elif not gang_ever:
        verdict, reason = "never", _gang_never_reason(active, total, unplaced_ever)
    elif quota and quota.never:
        verdict, reason = "never", quota.never
    elif not gang_now:
        verdict, reason = "busy", _waits_reason(active, total, unplaced_now)
    elif quota and quota.waits:
        verdict, reason = "busy", quota.waits
    else:
        verdict, reason = "fits", _fits_reason(active, placement, quota)
    return FitResult(verdict=verdict, exit_code=EXIT_CODES[verdict], reason=reason, groups=[a.fit for a in assessed],
                     gang_now=gang_now, gang_ever=gang_ever, placement=placement if gang_now else {},
                     quota=quota.to_json(local_queue) if quota else None)


# ---- Kueue quota --------------------------------------------------------------------------------------------
@dataclass
class _Row:
    """One resource of one flavor: its quota, what is reserved of it, what the job needs."""

    nominal: Decimal
    used: Decimal
    needed: Decimal
    cap: Decimal | None  # the most the ClusterQueue could ever hold (with borrowing); None: unbounded

    @property
    def free(self) -> Decimal:
        return max(self.nominal - self.used, _ZERO)

    def to_json(self, flavor: str, resource: str) -> dict[str, str]:
        return {"flavor": flavor, "nominal": _quantity_text(resource, self.nominal), "used": _quantity_text(resource, self.used),
                "free": _quantity_text(resource, self.free), "needed": _quantity_text(resource, self.needed)}


@dataclass
class _Flavor:
    name: str
    rows: dict[str, _Row]

    @property
    def fits(self) -> bool:
        return all(row.needed <= row.free for row in self.rows.values())

    @property
    def ever(self) -> bool:
        return all(row.cap is None or row.needed <= row.cap for row in self.rows.values())


@dataclass
class _QuotaCheck:
    name: str
    resources: dict[str, dict[str, str]]
    never: str = ""  # the first reason the ClusterQueue can never admit the job
    waits: str = ""  # the first reason it cannot admit it now

    def to_json(self, local_queue: str) -> dict[str, Any]:
        return {"clusterQueue": self.name, "localQueue": local_queue, "resources": self.resources,
                "fits": not (self.never or self.waits), "ever": not self.never}


def _reserved(cq: dict) -> dict[tuple[str, str], Decimal]:
    """(flavor, resource) -> the quota reserved (flavorsReservation; flavorsUsage on a Kueue without it)."""
    status = cq.get("status") or {}
    out = {}
    for flavor in status.get("flavorsReservation") or status.get("flavorsUsage") or []:
        for res in flavor.get("resources") or []:
            out[(flavor.get("name", ""), res.get("name", ""))] = parse_quantity(res.get("total")) or _ZERO
    return out


def _flavor(flavor: dict, wanted: Resources, reserved: dict[tuple[str, str], Decimal], cohort: bool) -> _Flavor:
    name = flavor.get("name", "")
    quotas = {q.get("name"): q for q in flavor.get("resources") or []}
    rows = {}
    for r, needed in wanted.items():
        q = quotas.get(r) or {}
        nominal = parse_quantity(q.get("nominalQuota")) or _ZERO
        limit = parse_quantity(q.get("borrowingLimit"))
        cap = nominal if not cohort else None if limit is None else nominal + limit
        rows[r] = _Row(nominal, reserved.get((name, r), _ZERO), needed, cap)
    return _Flavor(name, rows)


def _quota(cq: dict, groups: list[PodGroup]) -> _QuotaCheck:
    """The job's total requests against the ClusterQueue, one resource group at a time (flavorassigner): the
    first flavor that holds them now, else the first that could once the others finish, else the first."""
    spec = cq.get("spec") or {}
    check = _QuotaCheck(str((cq.get("metadata") or {}).get("name") or ""), {})
    resource_groups = [rg for rg in spec.get("resourceGroups") or [] if rg.get("flavors")]
    covered = {r for rg in resource_groups for r in rg.get("coveredResources") or []}
    need = {r: v for r, v in _job_total(groups).items() if v > 0 and (r != "pods" or "pods" in covered)}
    for r in _ordered(set(need) - covered):
        check.resources[r] = {"flavor": "", "nominal": "0", "used": "0", "free": "0", "needed": _quantity_text(r, need[r])}
        check.never = check.never or f"cluster queue {check.name} does not cover {r}: Kueue does not admit a workload requesting it"
    reserved = _reserved(cq)
    cohort = bool(spec.get("cohort") or spec.get("cohortName"))
    for rg in resource_groups:
        wanted = {r: need[r] for r in rg.get("coveredResources") or [] if r in need}
        if not wanted:
            continue
        options = [_flavor(f, wanted, reserved, cohort) for f in rg["flavors"]]
        chosen = next((f for f in options if f.fits), None) or next((f for f in options if f.ever), options[0])
        for r in _ordered(wanted):
            row = chosen.rows[r]
            check.resources[r] = row.to_json(chosen.name, r)
            if row.cap is not None and row.needed > row.cap:
                check.never = check.never or (f"cluster queue {check.name} can never admit the job: its {r} quota is "
                                              f"{_human(r, row.cap)} (flavor {chosen.name}), the job needs {_human(r, row.needed)}")
            elif row.needed > row.free:
                check.waits = check.waits or (f"waits: cluster queue {check.name} has {_human(r, row.free)} of "
                                              f"{_human(r, row.nominal)} {r} free (flavor {chosen.name}), the job needs "
                                              f"{_human(r, row.needed)}")
    return check


# ---- fit -----------------------------------------------------------------------------------------
def fit_job(c: Cluster, job: dict) -> FitResult:
    """Whether the rendered ``job`` would fit the cluster: its pod groups (with the node selector of its
    namespace's PodNodeSelector annotation) against the nodes and the unfinished pods of the cluster, and the
    ClusterQueue of its LocalQueue when it names one. Three reads (five with a queue), whatever the cluster's
    size. The nodes and the pods of every namespace are needed (ForbiddenError naming the ClusterRole); what
    the namespace's selector or the ClusterQueue would add, unreadable, is a note."""
    ns = (job.get("metadata") or {}).get("namespace") or ""
    notes = []
    try:
        namespace = c.kube.get_namespace(ns)
    except ForbiddenError as exc:  # a namespaced user: the scheduler still applies the selector, unseen here
        log.debug("namespace %s: %s", ns, exc)
        namespace = None
        notes.append(f"the node selector of namespace {ns} (PodNodeSelector) is unknown: {exc.denied or exc}")
    try:
        extra = namespace_selector(namespace)
    except ValueError as exc:
        raise UsageError(f"namespace {ns}: {exc} (the API server refuses its pods: fix the annotation)") from None
    groups = [pod_group(name, count, pod_spec, extra) for name, count, pod_spec in pod_templates(job)]
    try:
        nodes = c.kube.list_nodes()
        pods = c.kube.list_pods(None, selector="", field_selector="status.phase!=Succeeded,status.phase!=Failed",
                                slim=slim_pod_requests)
    except ForbiddenError as exc:
        raise ForbiddenError(f"{exc.denied or exc}: fit reads every node and the pods of every namespace (what "
                             f"the nodes have allocated): ask a cluster admin for the ClusterRole of {ROLE_DOC}") from None
    local_queue, cluster_queue, problem = queue_of(job), None, ""
    if local_queue:
        lq = c.kube.get_local_queue(ns, local_queue)
        cq_name = str(((lq or {}).get("spec") or {}).get("clusterQueue") or "")
        try:
            cluster_queue = c.kube.get_cluster_queue(cq_name) if cq_name else None
        except ForbiddenError as exc:
            notes.append(f"the quota of cluster queue {cq_name} is unknown: {exc.denied or exc}")
            cq_name = ""
        if lq is None:
            problem = (f"local queue {local_queue} does not exist in namespace {ns}: Kueue admits no job of it "
                       f"(kubectl get localqueues -n {ns})")
        elif cluster_queue is None and cq_name:
            problem = f"local queue {local_queue} points to cluster queue {cq_name}, which does not exist"
    result = check_fit(groups, nodes, pods, cluster_queue=cluster_queue, local_queue=local_queue)
    if problem and result.verdict != "never":
        result = dataclasses.replace(result, verdict="never", exit_code=EXIT_CODES["never"], reason=problem)
    return dataclasses.replace(result, notes=notes) if notes else result
