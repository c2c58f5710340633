"""Install a chart with one of its ci/*-values.yaml with plain helm into a test cluster, read every object back
and uninstall it: the API server keeps every field the chart renders (it would silently prune one its CRD does
not declare) and nothing is left behind. Used by tests/cluster/test_chart_install.py (the real controllers
running) and tests/cluster/bare/test_chart_install_mpi_v1.py (MPIJob v1, on a cluster without mpi-operator)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from kubecluster import REPO
from waits import wait_for

from arena_helm.adapters.charts import assemble_chart
from arena_helm.core.jobkinds import KINDS
from arena_helm.core.servekinds import BY_CHART as SERVING_CHARTS

CASES = sorted(
    (chart.name, values.name)
    for chart in (REPO / "charts").iterdir()
    if (chart / "ci").is_dir()
    for values in (chart / "ci").glob("*-values.yaml")
)
MPI_V1_CASE = ("mpijob", "v1-values.yaml")  # the MPIJob v1 CRD, which a cluster running mpi-operator lacks


TRAINER = ("trainer.kubeflow.org", "v1alpha1")
# charts/trainjob's ci/full-values.yaml names the TrainingRuntime team-torch and patches its replicated jobs node and
# launcher: Trainer v2.3.0's deepspeed-distributed ClusterTrainingRuntime has both (torch-distributed has no
# launcher, and JobSet refuses a patched launcher that has no image)
TEAM_RUNTIME, TEAM_RUNTIME_SOURCE = "team-torch", "deepspeed-distributed"


def team_runtime(cluster, namespace: str) -> None:
    """The namespaced TrainingRuntime TEAM_RUNTIME, a copy of TEAM_RUNTIME_SOURCE: Trainer's admission webhook
    refuses a TrainJob whose runtime does not exist yet."""
    from kubernetes import client

    custom = client.CustomObjectsApi(cluster.api_client())
    source = custom.get_cluster_custom_object(*TRAINER, "clustertrainingruntimes", TEAM_RUNTIME_SOURCE)
    custom.create_namespaced_custom_object(*TRAINER, namespace, "trainingruntimes", {
        "apiVersion": "/".join(TRAINER), "kind": "TrainingRuntime",
        "metadata": {"name": TEAM_RUNTIME, "labels": source["metadata"].get("labels") or {}}, "spec": source["spec"]})


def case_id(case: tuple[str, str]) -> str:
    return f"{case[0]}-{case[1].removesuffix('-values.yaml')}"


PATHS = {  # kind -> API path segment (namespaced): the job kinds' from the registry
    **{k.kind: k.plural for k in KINDS}, "Deployment": "deployments", "Service": "services",
    "ServiceAccount": "serviceaccounts", "ConfigMap": "configmaps", "Job": "jobs",
    "PersistentVolumeClaim": "persistentvolumeclaims", "InferenceService": "inferenceservices",
    "LeaderWorkerSet": "leaderworkersets", "HTTPRoute": "httproutes", "VirtualService": "virtualservices",
    "DestinationRule": "destinationrules",
}
# objects a chart keeps on uninstall (helm.sh/resource-policy: keep): a workspace's home
KEPT = ("PersistentVolumeClaim",)


def is_subset(rendered, stored, path="") -> list[str]:
    """Where ``rendered`` is not kept in ``stored`` (stored may add defaults)."""
    if isinstance(rendered, dict):
        if not isinstance(stored, dict):
            return [path or "/"]
        out = []
        for key, value in rendered.items():
            if value is None:
                continue
            if key not in stored:
                out.append(f"{path}/{key}")
            else:
                out += is_subset(value, stored[key], f"{path}/{key}")
        return out
    if isinstance(rendered, list):
        key = map_key(rendered)
        if key and isinstance(stored, list) and map_key(stored) == key:
            # a list-map (+listType=map): a controller may add its own entry (Kueue its TrainJob runtimePatch)
            by = {item[key]: item for item in stored}
            return [p for item in rendered
                    for p in (is_subset(item, by[item[key]], f"{path}[{key}={item[key]}]") if item[key] in by
                              else [f"{path}[{key}={item[key]}]"])]
        if not isinstance(stored, list) or len(rendered) != len(stored):
            return [path]
        return [p for i, (a, b) in enumerate(zip(rendered, stored, strict=True)) for p in is_subset(a, b, f"{path}/{i}")]
    return [] if str(rendered) == str(stored) else [f"{path}: {rendered!r} != {stored!r}"]


def map_key(items: list) -> str | None:
    """The key a list of objects is keyed by (``manager`` of Trainer's runtimePatches), if any."""
    return "manager" if items and all(isinstance(i, dict) and "manager" in i for i in items) else None


def api_path(obj: dict, namespace: str) -> str:
    group_version = obj["apiVersion"]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    return f"{base}/namespaces/{namespace}/{PATHS[obj['kind']]}/{obj['metadata']['name']}"


def install_read_back_uninstall(chart: str, values: str, helm_bin: Path, cluster, namespace: str,
                                tmp_path: Path) -> None:
    kc = ["--kubeconfig", str(cluster.admin.kubeconfig)]
    chart_dir = assemble_chart(chart, tmp_path)
    release = "ci-" + chart[:10]
    res = subprocess.run([str(helm_bin), "install", release, str(chart_dir), "-n", namespace, "-f",
                          str(REPO / "charts" / chart / "ci" / values), *kc], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    if chart == "workspace":
        assert "arena-helm workspace get" in res.stdout  # NOTES.txt tells how to follow the workspace
    elif chart in SERVING_CHARTS or chart == "traffic-split":
        assert "arena-helm serve get" in res.stdout  # NOTES.txt tells how to follow the serving
    elif chart != "tensorboard":
        assert "arena-helm get" in res.stdout  # NOTES.txt tells how to follow the job
    manifest = subprocess.run([str(helm_bin), "get", "manifest", release, "-n", namespace, *kc],
                              capture_output=True, text=True, check=True).stdout
    objects = [d for d in yaml.safe_load_all(manifest) if d]
    assert objects
    api = cluster.api_client()
    for obj in objects:
        resp = api.call_api(api_path(obj, namespace), "GET", auth_settings=["BearerToken"],
                            _preload_content=False, _return_http_data_only=True)
        stored = json.loads(resp.data)
        assert stored["metadata"]["labels"] == obj["metadata"]["labels"]
        if "." in obj["apiVersion"].split("/")[0]:  # a custom resource: its CRD would prune what it lacks
            changed = is_subset(obj["spec"], stored["spec"])
            assert changed == [], f"{obj['kind']} fields pruned or changed: {changed}"
    res = subprocess.run([str(helm_bin), "uninstall", release, "-n", namespace, *kc], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    for obj in objects:
        if obj["kind"] in KEPT and (obj["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") == "keep":
            kept = api.call_api(api_path(obj, namespace), "GET", auth_settings=["BearerToken"], _preload_content=False)
            assert kept.status == 200  # kept, as the chart says: removed here by hand
            api.call_api(api_path(obj, namespace), "DELETE", auth_settings=["BearerToken"], _preload_content=False)
            continue
        wait_for(lambda o=obj: gone(api, api_path(o, namespace)), f"{obj['kind']} {obj['metadata']['name']} gone",
                 30.0)  # at once, or once its controller removed its finalizer (LWS's, KServe's)


def gone(api, path: str) -> bool:
    from kubernetes.client.rest import ApiException

    try:
        api.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False)
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False
