"""Kubeflow Trainer v2 training runtimes: check a TrainJob's ``--runtime`` against what the cluster serves.

A TrainJob names a ClusterTrainingRuntime (cluster-wide) or a TrainingRuntime (in the job's namespace)
(kubeflow/trainer v2.3.0, pkg/apis/trainer/v1alpha1/trainjob_types.go: ``runtimeRef``). Trainer's webhook
refuses a runtime patch naming a replicated job or container the runtime does not have
(pkg/runtime/framework/plugins/jobset/jobset.go, ``Validate``), so the chart patches only the replicated
jobs whose pods have the trainer container ``node``.
"""

from __future__ import annotations

from ..adapters.kube import Kube
from ..core.errors import ClusterError, ForbiddenError, NotFoundError, UsageError

GROUP_VERSION = "trainer.kubeflow.org/v1alpha1"
TRAINER_CONTAINER = "node"


def _names(items: list[dict]) -> list[str]:
    return sorted(i["metadata"]["name"] for i in items)


def _paths(namespace: str) -> dict[str, str]:
    return {"ClusterTrainingRuntime": f"/apis/{GROUP_VERSION}/clustertrainingruntimes",
            "TrainingRuntime": f"/apis/{GROUP_VERSION}/namespaces/{namespace}/trainingruntimes"}


def served_runtimes(kube: Kube, namespace: str) -> dict[str, dict[str, dict] | None]:
    """``{"ClusterTrainingRuntime": {name: obj}, "TrainingRuntime": {name: obj}}``; None for a list the user
    may not read."""
    out: dict[str, dict[str, dict] | None] = {}
    for kind, path in _paths(namespace).items():
        try:
            items = kube.get_json(path, f"listing {kind}s").get("items") or []
        except NotFoundError:
            raise ClusterError("the cluster does not serve TrainJob (trainer.kubeflow.org/v1alpha1): install "
                               "Kubeflow Trainer v2 (v2.3+) first") from None
        except ForbiddenError:
            out[kind] = None
            continue
        out[kind] = {i["metadata"]["name"]: i for i in items}
    return out


def patched_jobs(runtime: dict) -> list[str]:
    """The runtime's replicated jobs whose pod template has the trainer container (``node``)."""
    jobs = (((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    out = []
    for rjob in jobs:
        pod = ((((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {})
        if any(c.get("name") == TRAINER_CONTAINER for c in pod.get("containers") or []):
            out.append(rjob["name"])
    return out


def check_runtime(kube: Kube, name: str, kind: str, namespace: str) -> dict:
    """The runtime the TrainJob references, or a one-line usage error listing the runtimes served."""
    served = served_runtimes(kube, namespace)
    if served[kind] is None:  # the user may not list them: ask for the one named (a GET may be allowed)
        try:
            return kube.get_json(f"{_paths(namespace)[kind]}/{name}", f"reading {kind} {name}")
        except ForbiddenError:
            return {}  # nothing to check with: Trainer's webhook still refuses an unknown runtime
        except NotFoundError:
            served[kind] = {}
    found = served[kind].get(name)
    if found is not None:
        return found
    other = "TrainingRuntime" if kind == "ClusterTrainingRuntime" else "ClusterTrainingRuntime"
    if name in (served.get(other) or {}):
        raise UsageError(f"--runtime {name}: it is a {other}, not a {kind}: add --runtime-kind {other}")
    listed = [f"{', '.join(_names(list(served[k].values())))} ({k}{' in ' + namespace if k == 'TrainingRuntime' else ''})"
              for k in ("ClusterTrainingRuntime", "TrainingRuntime") if served.get(k)]
    where = f"in namespace {namespace}" if kind == "TrainingRuntime" else "in the cluster"
    raise UsageError(f"--runtime {name}: no {kind} {name} {where}; the cluster serves "
                     f"{'; '.join(listed) if listed else 'no training runtimes'}")
