"""arena_helm.insight.fit: will a job fit on the cluster. kube-scheduler's filters (unschedulable, readiness, taints,
node selector and affinity, resources with the effective-request rule), the gang simulated now and on the
empty cluster, Kueue's ClusterQueue quota, and the verdict's exit code and one-line reason."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from arena_helm.insight.fit import (
    POOL_LABELS,
    FitResult,
    PodGroup,
    check_fit,
    filter_reason,
    namespace_selector,
    node_pool,
    pod_group,
    pod_requests,
    tolerates,
)

GI = 2**30


def node(name, *, gpus=8, cpu="96", memory="1152Gi", pods="110", pool="p4d", labels=None, taints=None,
         unschedulable=False, ready="True"):
    all_labels = {"kubernetes.io/hostname": name, **({"node.kubernetes.io/instance-type": pool} if pool else {}),
                  **(labels or {})}
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    spec = {**({"taints": taints} if taints else {}), **({"unschedulable": True} if unschedulable else {})}
    return {"metadata": {"name": name, "labels": all_labels}, "spec": spec,
            "status": {"allocatable": allocatable, "capacity": allocatable,
                       "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}]}}


def running(node_name, *, gpus=0, cpu="1", memory="1Gi", phase="Running", name="other"):
    """A pod of someone else bound to ``node_name`` (its GPUs as limits, as a device plugin's users write them)."""
    resources = {"requests": {"cpu": cpu, "memory": memory}, **({"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {})}
    return {"metadata": {"name": name, "namespace": "others"},
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "resources": resources}]},
            "status": {"phase": phase}}


def spec(*, gpus=0, cpu="8", memory="64Gi", **extra):
    """A pod template's spec: CPU and memory requests, GPUs as limits."""
    resources = {"requests": {"cpu": cpu, "memory": memory}, **({"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {})}
    return {"containers": [{"name": "main", "image": "train", "resources": resources}], **extra}


def p4d_pool():
    """The issue's cluster: 4 nodes of 8 GPUs, n1 half used."""
    return [node(f"n{i}") for i in range(1, 5)], [running("n1", gpus=4)]


def fit(groups, nodes, pods=(), **kw) -> FitResult:
    return check_fit(groups, nodes, list(pods), **kw)


# ---- the acceptance case ------------------------------------------------------------------------
def test_a_job_that_fits_now_exits_0_and_says_where_best_fit_putting_the_small_pod_on_the_half_used_node():
    nodes, pods = p4d_pool()
    r = fit([pod_group("master", 1, spec(gpus=4)), pod_group("worker", 2, spec(gpus=8))], nodes, pods)
    assert (r.verdict, r.exit_code) == ("fits", 0)
    assert r.reason == "fits now: 1 master pod, 2 worker pods on nodes n1, n2, n3"
    assert (r.gang_now, r.gang_ever) == (True, True)
    assert r.placement == {"master": ["n1"], "worker": ["n2", "n3"]}
    assert [(g.name, g.pools, g.blockers) for g in r.groups] == [
        ("master", {"p4d": (4, 4)}, []),
        ("worker", {"p4d": (3, 4)}, ["1 node: Insufficient nvidia.com/gpu"])]


def test_a_job_that_fits_only_when_others_finish_exits_4():
    nodes, pods = p4d_pool()
    r = fit([pod_group("worker", 4, spec(gpus=8))], nodes, pods)
    assert (r.verdict, r.exit_code) == ("busy", 4)
    assert r.reason == "waits: 28 nvidia.com/gpu free now on eligible nodes, the job needs 32 at once"
    assert (r.gang_now, r.gang_ever, r.placement) == (False, True, {})
    assert r.groups[0].pools == {"p4d": (3, 4)}
    assert r.groups[0].blockers == ["1 node: Insufficient nvidia.com/gpu"]


def test_a_job_that_can_never_fit_exits_5_naming_the_group_the_resource_and_the_largest_node():
    nodes, pods = p4d_pool()
    r = fit([pod_group("worker", 2, spec(gpus=16))], nodes, pods)
    assert (r.verdict, r.exit_code) == ("never", 5)
    assert r.reason == "worker: 16 nvidia.com/gpu per pod, the largest eligible node has 8 allocatable"
    assert (r.gang_now, r.gang_ever) == (False, False)
    assert r.groups[0].pools == {"p4d": (0, 0)}
    assert r.groups[0].blockers == ["4 nodes: Insufficient nvidia.com/gpu"]


# ---- the gang ------------------------------------------------------------------------------------------------
def test_free_resources_in_the_wrong_places_wait_and_a_gang_larger_than_the_cluster_never_fits():
    nodes = [node("a"), node("b")]
    fragmented = fit([pod_group("worker", 3, spec(gpus=4))], nodes, [running("a", gpus=2), running("b", gpus=2)])
    assert (fragmented.exit_code, fragmented.reason) == (
        4, "waits: only 2 of the job's 3 pods can be placed at once now (the free resources are fragmented)")
    assert fragmented.groups[0].pools == {"p4d": (2, 2)}
    too_big = fit([pod_group("worker", 3, spec(gpus=8))], nodes)
    assert (too_big.exit_code, too_big.reason) == (
        5, "the job needs 24 nvidia.com/gpu at once, the eligible nodes have 16 allocatable in all")
    assert too_big.groups[0].pools == {"p4d": (2, 2)}
    unpackable = fit([pod_group("worker", 3, spec(gpus=4))], [node("a", gpus=6), node("b", gpus=6)])
    assert (unpackable.exit_code, unpackable.reason) == (
        5, "the job's 3 pods cannot all be placed at once even on the empty cluster (the simulation placed 2)")


def test_a_group_no_node_can_take_now_waits_with_the_schedulers_reasons():
    r = fit([pod_group("worker", 1, spec(gpus=8))], [node("a"), node("b")], [running("a", gpus=4), running("b", gpus=4)])
    assert (r.exit_code, r.reason) == (4, "waits: worker: no eligible node has room for one pod now "
                                          "(2 nodes: Insufficient nvidia.com/gpu)")


def test_best_fit_puts_cpu_pods_on_gpu_less_nodes_and_the_largest_pods_first():
    nodes = [node("gpu-a", pool="p4d"), node("cpu-a", gpus=0, pool="c6i"), node("gpu-b", pool="p4d")]
    r = fit([pod_group("launcher", 1, spec(cpu="2", memory="4Gi")), pod_group("worker", 2, spec(gpus=6))], nodes,
            [running("gpu-b", gpus=2)])
    assert r.placement == {"launcher": ["cpu-a"], "worker": ["gpu-b", "gpu-a"]}
    assert r.reason == "fits now: 1 launcher pod, 2 worker pods on nodes cpu-a, gpu-a, gpu-b"
    assert r.groups[0].pools == {"c6i": (1, 1), "p4d": (2, 2)}
    assert r.groups[1].pools == {"c6i": (0, 0), "p4d": (2, 2)}
    assert r.groups[1].blockers == ["1 node: Insufficient nvidia.com/gpu"]


def test_a_group_of_no_replicas_is_ignored_and_an_empty_cluster_has_no_node():
    nodes, pods = p4d_pool()
    r = fit([pod_group("ps", 0, spec(gpus=64)), pod_group("worker", 1, spec(gpus=8))], nodes, pods)
    assert (r.exit_code, r.reason, r.placement) == (0, "fits now: 1 worker pod on node n2", {"worker": ["n2"]})
    assert fit([pod_group("worker", 1, spec())], []).reason == "worker: the cluster has no nodes"
    assert fit([pod_group("worker", 0, spec())], []).reason == "fits now: the job asks for no pods"


# ---- effective requests -----------------------------------------------------------------------------------
def test_a_container_requests_its_limit_where_it_sets_no_request_and_zero_requests_are_left_out():
    g = pod_group("w", 2, {"containers": [
        {"resources": {"limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}}},
        {"resources": {"requests": {"cpu": "500m", "ephemeral-storage": "0"}, "limits": {"cpu": "4"}}}]})
    assert g == PodGroup(name="w", count=2, requests={"cpu": Decimal("2.5"), "memory": Decimal(4 * GI),
                                                      "nvidia.com/gpu": Decimal(1)},
                         node_selector={}, tolerations=(), required_terms=())


def test_init_containers_count_at_their_peak_sidecars_run_beside_the_containers_and_overhead_adds():
    pod = {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}],
           "overhead": {"cpu": "250m"}}
    assert pod_requests(pod) == {"cpu": Decimal("3.25"), "memory": Decimal(2 * GI)}
    sidecar = {"containers": [{"resources": {"requests": {"cpu": "1"}}}],
               "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                                  {"resources": {"requests": {"cpu": "2"}}}]}
    assert pod_requests(sidecar) == {"cpu": Decimal(3)}  # the init container beside the sidecar started before it
    sidecar["containers"][0]["resources"]["requests"]["cpu"] = "4"
    assert pod_requests(sidecar) == {"cpu": Decimal(5)}  # the containers beside the sidecar


def test_the_pods_of_a_node_use_their_effective_requests_unless_finished_or_unbound():
    nodes = [node("a", gpus=0, cpu="8")]
    init_heavy = running("a", cpu="1", name="init-heavy")
    init_heavy["spec"]["initContainers"] = [{"name": "setup", "resources": {"requests": {"cpu": "6"}}}]
    done = running("a", cpu="8", phase="Succeeded", name="done")
    unbound = running("a", cpu="8", phase="Pending", name="unbound")
    del unbound["spec"]["nodeName"]
    pods = [init_heavy, done, unbound]
    assert fit([pod_group("worker", 1, spec(cpu="2", memory="1Gi"))], nodes, pods).exit_code == 0
    r = fit([pod_group("worker", 1, spec(cpu="3", memory="1Gi"))], nodes, pods)
    assert (r.exit_code, r.reason) == (4, "waits: 2 cpu free now on eligible nodes, the job needs 3 at once")
    assert r.groups[0].blockers == ["1 node: Insufficient cpu"]


def test_a_node_full_of_pods_is_too_many_pods_and_every_missing_resource_is_counted():
    nodes = [node("a", pods="2"), node("b", cpu="4")]
    r = fit([pod_group("worker", 1, spec(gpus=1))], nodes, [running("a", name="x"), running("a", name="y")])
    assert r.groups[0].blockers == ["1 node: Insufficient cpu", "1 node: Too many pods"]
    assert (r.exit_code, r.groups[0].pools) == (4, {"p4d": (0, 1)})
    never = fit([pod_group("worker", 1, spec(gpus=1, cpu="200", memory="2Ti"))], nodes)
    assert never.groups[0].blockers == ["2 nodes: Insufficient cpu", "2 nodes: Insufficient memory"]
    assert never.reason == "worker: 200 cpu per pod, the largest eligible node has 96 allocatable"


def test_resources_that_fit_each_on_some_node_but_on_no_node_together_never_fit():
    nodes = [node("big-cpu", gpus=0, cpu="128"), node("gpu", cpu="16")]
    r = fit([pod_group("worker", 1, spec(gpus=8, cpu="64", memory="1Gi"))], nodes)
    assert r.reason == "worker: no eligible node holds one pod (cpu 64, memory 1Gi, nvidia.com/gpu 8) even empty"


# ---- node eligibility --------------------------------------------------------------------------------------
def test_the_node_selector_picks_the_pool_and_the_others_did_not_match():
    nodes = [node("a", pool="p4d"), node("b", pool="p5", gpus=8)]
    r = fit([pod_group("worker", 1, spec(gpus=8, nodeSelector={"node.kubernetes.io/instance-type": "p5"}))], nodes)
    assert (r.exit_code, r.placement) == (0, {"worker": ["b"]})
    assert r.groups[0].pools == {"p4d": (0, 0), "p5": (1, 1)}
    assert r.groups[0].blockers == ["1 node: node(s) didn't match Pod's node affinity/selector"]
    r = fit([pod_group("worker", 1, spec(nodeSelector={"node.kubernetes.io/instance-type": "p6"}))], nodes)
    assert (r.exit_code, r.reason) == (5, "worker: no node is eligible (2 nodes: node(s) didn't match Pod's node "
                                          "affinity/selector)")


AFFINITY_NODES = [node("old", labels={"gen": "3", "zone": "a"}), node("new", labels={"gen": "5", "zone": "b"}),
                  node("bare", labels={})]


def affinity(*terms):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key, op, *values):
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize(("terms", "eligible"), [
    ([{"matchExpressions": [expr("zone", "In", "b", "c")]}], ["new"]),
    ([{"matchExpressions": [expr("zone", "NotIn", "a")]}], ["new", "bare"]),  # no label: NotIn matches
    ([{"matchExpressions": [expr("gen", "Exists")]}], ["old", "new"]),
    ([{"matchExpressions": [expr("gen", "DoesNotExist")]}], ["bare"]),
    ([{"matchExpressions": [expr("gen", "Gt", "4")]}], ["new"]),
    ([{"matchExpressions": [expr("gen", "Lt", "4")]}], ["old"]),
    ([{"matchExpressions": [expr("gen", "Gt", "x")]}], []),
    ([{"matchExpressions": [expr("gen", "Exists"), expr("zone", "In", "a")]}], ["old"]),  # ANDed
    ([{"matchExpressions": [expr("zone", "In", "a")]}, {"matchExpressions": [expr("gen", "DoesNotExist")]}],
     ["old", "bare"]),  # ORed
    ([{"matchFields": [expr("metadata.name", "In", "bare", "new")]}], ["new", "bare"]),
    ([{}], []),  # an empty term matches nothing
])
def test_required_node_affinity(terms, eligible):
    g = pod_group("worker", 1, spec(affinity=affinity(*terms)))
    assert [n["metadata"]["name"] for n in AFFINITY_NODES if filter_reason(g, n) is None] == eligible


def test_an_untolerated_taint_keeps_pods_off_and_a_matching_toleration_lets_them_on():
    nodes = [node("tainted", taints=[{"key": "dedicated", "value": "infer", "effect": "NoSchedule"},
                                     {"key": "soft", "effect": "PreferNoSchedule"}]),
             node("evicting", taints=[{"key": "gpu-broken", "effect": "NoExecute"}])]
    r = fit([pod_group("worker", 1, spec(gpus=8))], nodes)
    assert r.groups[0].blockers == ["1 node: node(s) had untolerated taint {dedicated=infer:NoSchedule}",
                                    "1 node: node(s) had untolerated taint {gpu-broken:NoExecute}"]
    assert r.exit_code == 5
    tolerant = spec(gpus=8, tolerations=[{"key": "dedicated", "operator": "Equal", "value": "infer",
                                          "effect": "NoSchedule"}])
    r = fit([pod_group("worker", 1, tolerant)], nodes)
    assert (r.exit_code, r.placement) == (0, {"worker": ["tainted"]})


@pytest.mark.parametrize(("toleration", "tolerated"), [
    ({"key": "dedicated", "operator": "Equal", "value": "infer", "effect": "NoSchedule"}, True),
    ({"key": "dedicated", "value": "infer"}, True),  # no operator: Equal; no effect: every effect
    ({"key": "dedicated", "operator": "Equal", "value": "train"}, False),
    ({"key": "dedicated", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
    ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
])
def test_toleration_rules(toleration, tolerated):
    assert tolerates(toleration, {"key": "dedicated", "value": "infer", "effect": "NoSchedule"}) is tolerated


def test_cordoned_and_not_ready_nodes_are_out_unless_the_pod_tolerates_the_cordon():
    nodes = [node("cordoned", unschedulable=True), node("down", ready="False")]
    r = fit([pod_group("worker", 1, spec(gpus=8))], nodes)
    assert r.groups[0].blockers == ["1 node: node(s) were not ready", "1 node: node(s) were unschedulable"]
    assert (r.exit_code, r.reason) == (5, "worker: no node is eligible (1 node: node(s) were not ready; 1 node: node(s) "
                                          "were unschedulable)")
    tolerant = spec(gpus=8, tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                          "effect": "NoSchedule"}])
    assert fit([pod_group("worker", 1, tolerant)], nodes).placement == {"worker": ["cordoned"]}


def test_the_pool_is_the_first_pool_label_a_node_has():
    assert POOL_LABELS[0] == "cloud.google.com/gke-nodepool" and POOL_LABELS[-1] == "beta.kubernetes.io/instance-type"
    assert node_pool(node("a", labels={"cloud.google.com/gke-nodepool": "gpu-pool"})) == "gpu-pool"
    assert node_pool(node("a", pool="", labels={"agentpool": "nc24", "beta.kubernetes.io/instance-type": "x"})) == "nc24"
    assert node_pool(node("a")) == "p4d"
    assert node_pool(node("a", pool="")) == "(none)"


# ---- the namespace's node selector ---------------------------------------------------------------------------
def namespace(selector=None):
    annotations = {} if selector is None else {"scheduler.alpha.kubernetes.io/node-selector": selector}
    return {"metadata": {"name": "team", "annotations": annotations}}


def test_the_namespace_node_selector_annotation_is_parsed():
    assert namespace_selector(namespace("team=a, tier = gpu")) == {"team": "a", "tier": "gpu"}
    assert namespace_selector(namespace("team=")) == {"team": ""}
    assert namespace_selector(namespace("")) == {}
    assert namespace_selector(namespace()) == {}
    assert namespace_selector({"metadata": {"name": "team"}}) == {}
    assert namespace_selector(None) == {}
    with pytest.raises(ValueError, match="'tier' is not key=value"):
        namespace_selector(namespace("team=a,tier"))


def test_the_namespace_selector_narrows_the_nodes_and_a_conflicting_one_leaves_none():
    nodes = [node("a", labels={"team": "a"}), node("b", labels={"team": "b"})]
    g = pod_group("worker", 1, spec(gpus=8, nodeSelector={"zone": "z"}), {"team": "b"})
    assert g.node_selector == {"team": "b", "zone": "z"}
    nodes[1]["metadata"]["labels"]["zone"] = "z"
    assert fit([g], nodes).placement == {"worker": ["b"]}
    conflicting = pod_group("worker", 1, spec(gpus=8, nodeSelector={"team": "a"}), {"team": "b"})
    r = fit([conflicting], nodes)
    assert (r.exit_code, r.groups[0].blockers) == (5, ["2 nodes: node(s) didn't match Pod's node affinity/selector"])


# ---- Kueue quota --------------------------------------------------------------------------------------------
def cluster_queue(*flavors, covered=("cpu", "memory", "nvidia.com/gpu"), reserved=None, usage_key="flavorsReservation",
                  **spec_extra):
    """A ClusterQueue of one resource group: ``flavors`` are (name, {resource: nominal or (nominal, borrowingLimit)});
    ``reserved``: {flavor: {resource: total}}."""
    def quota(r, q):
        nominal, limit = q if isinstance(q, tuple) else (q, None)
        return {"name": r, "nominalQuota": nominal, **({"borrowingLimit": limit} if limit is not None else {})}

    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq-a"},
            "spec": {"resourceGroups": [{"coveredResources": list(covered), "flavors": [
                {"name": name, "resources": [quota(r, q) for r, q in quotas.items()]} for name, quotas in flavors]}],
                **spec_extra},
            "status": {usage_key: [{"name": f, "resources": [{"name": r, "total": t, "borrowed": "0"}
                                                             for r, t in res.items()]}
                                   for f, res in (reserved or {}).items()]}}


BIG = {"cpu": "1000", "memory": "10Ti"}


def test_quota_that_holds_the_job_lets_it_fit_and_reports_the_flavor():
    nodes, pods = p4d_pool()
    cq = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "32"}), reserved={"default": {"nvidia.com/gpu": "8"}})
    r = fit([pod_group("worker", 2, spec(gpus=8))], nodes, pods, cluster_queue=cq, local_queue="lq-a")
    assert (r.exit_code, r.reason) == (0, "fits now: 2 worker pods on nodes n2, n3, within the free quota of cluster "
                                          "queue cq-a")
    assert r.quota == {"clusterQueue": "cq-a", "localQueue": "lq-a", "fits": True, "ever": True, "resources": {
        "cpu": {"flavor": "default", "nominal": "1000", "used": "0", "free": "1000", "needed": "16"},
        "memory": {"flavor": "default", "nominal": "10Ti", "used": "0", "free": "10Ti", "needed": "128Gi"},
        "nvidia.com/gpu": {"flavor": "default", "nominal": "32", "used": "8", "free": "24", "needed": "16"}}}


def test_quota_in_use_makes_the_job_wait():
    nodes, pods = p4d_pool()
    cq = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "4"}), reserved={"default": {"nvidia.com/gpu": "2"}})
    r = fit([pod_group("worker", 1, spec(gpus=4))], nodes, pods, cluster_queue=cq)
    assert (r.verdict, r.exit_code, r.gang_now) == ("busy", 4, True)
    assert r.reason == "waits: cluster queue cq-a has 2 of 4 nvidia.com/gpu free (flavor default), the job needs 4"
    assert (r.quota["fits"], r.quota["ever"], r.quota["localQueue"]) == (False, True, "")
    # flavorsUsage where a Kueue reports no flavorsReservation
    old = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "4"}), reserved={"default": {"nvidia.com/gpu": "2"}},
                        usage_key="flavorsUsage")
    assert fit([pod_group("worker", 1, spec(gpus=4))], nodes, pods, cluster_queue=old).reason == r.reason


def test_the_first_flavor_with_room_is_taken_for_every_resource_of_its_group():
    nodes, pods = p4d_pool()
    cq = cluster_queue(("spot", {**BIG, "nvidia.com/gpu": "8"}), ("on-demand", {**BIG, "nvidia.com/gpu": "8"}),
                       reserved={"spot": {"nvidia.com/gpu": "8"}})
    r = fit([pod_group("worker", 1, spec(gpus=8))], nodes, pods, cluster_queue=cq)
    assert r.exit_code == 0
    assert {q["flavor"] for q in r.quota["resources"].values()} == {"on-demand"}


def test_quota_too_small_or_not_covering_a_resource_never_admits_the_job_unless_the_cohort_may_lend():
    nodes, pods = p4d_pool()
    job = [pod_group("worker", 1, spec(gpus=4))]
    small = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "2"}))
    r = fit(job, nodes, pods, cluster_queue=small)
    assert (r.exit_code, r.reason) == (5, "cluster queue cq-a can never admit the job: its nvidia.com/gpu quota is 2 "
                                          "(flavor default), the job needs 4")
    assert (r.quota["fits"], r.quota["ever"]) == (False, False)
    uncovered = cluster_queue(("default", BIG), covered=("cpu", "memory"))
    r = fit(job, nodes, pods, cluster_queue=uncovered)
    assert (r.exit_code, r.reason) == (5, "cluster queue cq-a does not cover nvidia.com/gpu: Kueue does not admit a "
                                          "workload requesting it")
    assert r.quota["resources"]["nvidia.com/gpu"] == {"flavor": "", "nominal": "0", "used": "0", "free": "0",
                                                      "needed": "4"}
    limited = cluster_queue(("default", {**BIG, "nvidia.com/gpu": ("2", "2")}), cohort="research")
    assert fit(job, nodes, pods, cluster_queue=limited).reason == (
        "waits: cluster queue cq-a has 2 of 2 nvidia.com/gpu free (flavor default), the job needs 4")
    too_limited = cluster_queue(("default", {**BIG, "nvidia.com/gpu": ("2", "1")}), cohort="research")
    assert fit(job, nodes, pods, cluster_queue=too_limited).exit_code == 5
    unlimited = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "2"}), cohortName="research")  # v1beta2's name
    assert fit(job, nodes, pods, cluster_queue=unlimited).exit_code == 4


def test_a_covered_pods_resource_counts_the_jobs_pods_and_unrequested_resources_are_ignored():
    nodes, pods = p4d_pool()
    cq = cluster_queue(("default", {"cpu": "100", "pods": "3"}), covered=("cpu", "pods"),
                       reserved={"default": {"pods": "2"}})
    job = [pod_group("worker", 2, {"containers": [{"resources": {"requests": {"cpu": "1"}}}]})]
    r = fit(job, nodes, pods, cluster_queue=cq)
    assert r.reason == "waits: cluster queue cq-a has 1 of 3 pods free (flavor default), the job needs 2"
    assert list(r.quota["resources"]) == ["pods", "cpu"]


# ---- the output ------------------------------------------------------------------------------------------------
def test_to_json_and_text_of_a_job_that_waits():
    nodes, pods = p4d_pool()
    nodes.append(node("m1", gpus=0, pool="m6i", cpu="16", memory="32Gi"))
    cq = cluster_queue(("default", {**BIG, "nvidia.com/gpu": "64"}))
    r = fit([pod_group("master", 1, spec(cpu="4", memory="16Gi")), pod_group("worker", 4, spec(gpus=8, cpu="500m"))],
            nodes, pods, cluster_queue=cq, local_queue="lq-a")
    assert r.to_json() == {
        "verdict": "busy", "exitCode": 4,
        "reason": "waits: 28 nvidia.com/gpu free now on eligible nodes, the job needs 32 at once",
        "gangFitsNow": False, "gangFitsEver": True, "placement": {},
        "groups": [
            {"name": "master", "count": 1, "requests": {"cpu": "4", "memory": "16Gi"},
             "pools": {"m6i": {"now": 1, "ever": 1}, "p4d": {"now": 4, "ever": 4}}, "blockers": []},
            {"name": "worker", "count": 4, "requests": {"cpu": "500m", "memory": "64Gi", "nvidia.com/gpu": "8"},
             "pools": {"m6i": {"now": 0, "ever": 0}, "p4d": {"now": 3, "ever": 4}},
             "blockers": ["2 nodes: Insufficient nvidia.com/gpu", "1 node: Insufficient memory"]}],
        "quota": {"clusterQueue": "cq-a", "localQueue": "lq-a", "fits": True, "ever": True, "resources": {
            "cpu": {"flavor": "default", "nominal": "1000", "used": "0", "free": "1000", "needed": "6"},
            "memory": {"flavor": "default", "nominal": "10Ti", "used": "0", "free": "10Ti", "needed": "272Gi"},
            "nvidia.com/gpu": {"flavor": "default", "nominal": "64", "used": "0", "free": "64", "needed": "32"}}},
        "notes": []}
    assert r.text() == (
        "GROUP   REPLICAS  REQUESTS                                 POOL  NODES(NOW)  NODES(EVER)\n"
        "master  1         cpu 4, memory 16Gi                       m6i   1           1\n"
        "                                                           p4d   4           4\n"
        "worker  4         cpu 500m, memory 64Gi, nvidia.com/gpu 8  m6i   0           0\n"
        "                                                           p4d   3           4\n"
        "Blockers (worker): 2 nodes: Insufficient nvidia.com/gpu; 1 node: Insufficient memory\n"
        "Gang: does not fit now (fits on the empty cluster)\n"
        "Quota: cluster queue cq-a (local queue lq-a): cpu needs 6, 1000 of 1000 free (flavor default); memory needs "
        "272Gi, 10Ti of 10Ti free (flavor default); nvidia.com/gpu needs 32, 64 of 64 free (flavor default)\n"
        "Verdict: waits: 28 nvidia.com/gpu free now on eligible nodes, the job needs 32 at once")


def test_the_text_of_a_job_that_never_fits_and_of_a_cluster_without_nodes():
    nodes, pods = p4d_pool()
    never = fit([pod_group("worker", 2, spec(gpus=16))], nodes, pods).text()
    assert never.splitlines()[-2:] == ["Gang: can never fit",
                                       "Verdict: worker: 16 nvidia.com/gpu per pod, the largest eligible node has 8 "
                                       "allocatable"]
    empty = fit([pod_group("worker", 1, spec())], []).text()
    assert empty.splitlines()[1] == "worker  1         cpu 8, memory 64Gi  -     0           0"


def test_notes_of_what_was_not_read_stand_before_the_verdict():
    nodes, pods = p4d_pool()
    r = dataclasses.replace(fit([pod_group("worker", 1, spec(gpus=1))], nodes, pods),
                            notes=["the quota of cluster queue cq-a is unknown: forbidden"])
    assert r.text().splitlines()[-2:] == ["Note: the quota of cluster queue cq-a is unknown: forbidden",
                                          "Verdict: fits now: 1 worker pod on node n1"]  # best fit: the half-used node
    assert r.to_json()["notes"] == ["the quota of cluster queue cq-a is unknown: forbidden"]
