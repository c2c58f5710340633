"""arena_helm.insight.fit.fit_job with a fake kube adapter: what it reads for the fit check, and what it says when
RBAC denies a read (the nodes and pods are needed: one error naming the ClusterRole; the namespace's node
selector and the ClusterQueue's quota are notes)."""

from __future__ import annotations

import pytest

from arena_helm.adapters.failures import forbidden
from arena_helm.core.errors import ForbiddenError
from arena_helm.insight.fit import fit_job
from arena_helm.workload.gateway import Cluster

NS = "team-a"


def denial(verb: str, resource: str, group: str = "") -> ForbiddenError:
    """The API server's 403 for a cluster-scoped read, as the kube adapter classifies it."""
    return forbidden(f"{'listing' if verb == 'list' else 'reading'} {resource}",
                     f'{resource} is forbidden: User "alice" cannot {verb} resource "{resource}" in API group '
                     f'"{group}" at the cluster scope')


def job(gpus: int = 4, workers: int = 1, queue: str = "") -> dict:
    template = {"spec": {"containers": [{"name": "pytorch", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "fit", "namespace": NS, "labels": labels},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template},
                                             "Worker": {"replicas": workers, "template": template}}}}


def node(name: str, gpus: int = 8, labels: dict | None = None) -> dict:
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}, "spec": {},
            "status": {"allocatable": alloc, "conditions": [{"type": "Ready", "status": "True"}]}}


class FakeKube:
    def __init__(self, *, nodes=(), pods=(), namespace=None, local_queue=None, cluster_queue=None, deny=()):
        self.nodes, self.pods, self.deny = list(nodes), list(pods), set(deny)
        self.namespace = namespace if namespace is not None else {"metadata": {"name": NS}}
        self.local_queue, self.cluster_queue = local_queue, cluster_queue
        self.calls: list[str] = []

    def _read(self, what: str, verb: str, resource: str, group: str = ""):
        self.calls.append(what)
        if resource in self.deny:
            raise denial(verb, resource, group)

    def get_namespace(self, name):
        self._read(f"namespace {name}", "get", "namespaces")
        return self.namespace

    def list_nodes(self):
        self._read("nodes", "list", "nodes")
        return self.nodes

    def list_pods(self, namespace, selector="", field_selector="", *, slim=None):
        assert namespace is None and selector == "" and field_selector == "status.phase!=Succeeded,status.phase!=Failed"
        self._read("pods", "list", "pods")
        return [slim(p) for p in self.pods]

    def get_local_queue(self, namespace, name):
        self.calls.append(f"localqueue {namespace}/{name}")
        return self.local_queue

    def get_cluster_queue(self, name):
        self._read(f"clusterqueue {name}", "get", "clusterqueues", "kueue.x-k8s.io")
        return self.cluster_queue


def fit(kube: FakeKube, j: dict):
    return fit_job(Cluster(lambda: pytest.fail("fit needs no helm"), kube), j)


def test_three_reads_without_a_queue_five_with_one_and_the_bound_pods_take_their_gpus():
    busy = {"metadata": {"name": "x", "namespace": "others"}, "status": {"phase": "Running"},
            "spec": {"nodeName": "a", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "6"}}}]}}
    kube = FakeKube(nodes=[node("a"), node("b")], pods=[busy])
    r = fit(kube, job(gpus=4, workers=2))
    assert kube.calls == ["namespace team-a", "nodes", "pods"]
    assert (r.exit_code, r.reason, r.notes) == (4, "waits: 10 nvidia.com/gpu free now on eligible nodes, the job "
                                                   "needs 12 at once", [])
    cq = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}}
    kube = FakeKube(nodes=[node("a"), node("b")], local_queue={"spec": {"clusterQueue": "cq"}}, cluster_queue=cq)
    r = fit(kube, job(gpus=4, workers=1, queue="lq"))
    assert kube.calls == ["namespace team-a", "nodes", "pods", "localqueue team-a/lq", "clusterqueue cq"]
    assert r.exit_code == 0 and r.quota["resources"]["nvidia.com/gpu"]["free"] == "8"


def test_the_namespace_node_selector_narrows_the_nodes_and_a_malformed_one_is_the_users_to_fix():
    ns = {"metadata": {"name": NS, "annotations": {"scheduler.alpha.kubernetes.io/node-selector": "pool=a"}}}
    r = fit(FakeKube(nodes=[node("a", labels={"pool": "a"}), node("b", labels={"pool": "b"})], namespace=ns),
            job(gpus=8, workers=1))
    assert (r.exit_code, r.reason) == (5, "the job needs 16 nvidia.com/gpu at once, the eligible nodes have 8 "
                                          "allocatable in all")
    bad = {"metadata": {"name": NS, "annotations": {"scheduler.alpha.kubernetes.io/node-selector": "pool"}}}
    with pytest.raises(Exception) as err:
        fit(FakeKube(nodes=[node("a")], namespace=bad), job())
    assert str(err.value) == ("namespace team-a: the namespace's scheduler.alpha.kubernetes.io/node-selector entry "
                              "'pool' is not key=value (the API server refuses its pods: fix the annotation)")


@pytest.mark.parametrize("denied", ["nodes", "pods"])
def test_without_the_nodes_or_the_pods_of_every_namespace_fit_says_which_cluster_role_to_ask_for(denied):
    with pytest.raises(ForbiddenError) as err:
        fit(FakeKube(nodes=[node("a")], deny=[denied]), job())
    assert str(err.value) == (
        f'listing {denied}: forbidden: User "alice" cannot list {denied} cluster-wide: fit reads every node and the '
        "pods of every namespace (what the nodes have allocated): ask a cluster admin for the ClusterRole of "
        "docs/rbac/arena-helm-user.yaml")


def test_an_unreadable_namespace_or_cluster_queue_is_a_note_and_the_rest_is_weighed():
    kube = FakeKube(nodes=[node("a"), node("b")], local_queue={"spec": {"clusterQueue": "cq"}},
                    deny=["namespaces", "clusterqueues"])
    r = fit(kube, job(gpus=4, queue="lq"))
    assert (r.exit_code, r.quota) == (0, None)
    assert r.notes == [
        'the node selector of namespace team-a (PodNodeSelector) is unknown: reading namespaces: forbidden: User '
        '"alice" cannot get namespaces cluster-wide',
        'the quota of cluster queue cq is unknown: reading clusterqueues: forbidden: User "alice" cannot get '
        "clusterqueues.kueue.x-k8s.io cluster-wide"]


def test_a_missing_local_queue_or_cluster_queue_never_admits_the_job():
    r = fit(FakeKube(nodes=[node("a"), node("b")]), job(queue="nosuch"))
    assert (r.exit_code, r.verdict, r.reason) == (5, "never", "local queue nosuch does not exist in namespace team-a: "
                                                  "Kueue admits no job of it (kubectl get localqueues -n team-a)")
    r = fit(FakeKube(nodes=[node("a"), node("b")], local_queue={"spec": {"clusterQueue": "gone"}}), job(queue="lq"))
    assert (r.exit_code, r.reason) == (5, "local queue lq points to cluster queue gone, which does not exist")
