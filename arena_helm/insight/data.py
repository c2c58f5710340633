"""``data list``: the PersistentVolumeClaims a job can mount (``--data CLAIM:PATH``), and which jobs mount them.

Arena v1's ``arena data list`` (pkg/datahouse/list.go) lists the namespace's PVCs (NAME, ACCESSMODE, the
``description`` and ``owner`` annotations, AGE), bound ones only. This one lists every claim with its
status (an unbound claim is what a pending job waits for), capacity, access modes (kubectl's short forms),
storage class and what uses it: the jobs whose pod templates mount it, and the workspaces (their home, which
their chart labels, and what their Job mounts). LISTs: claims, each served job kind, the workspaces' Jobs.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from ..adapters.kube import KubeReader, ns_path
from ..core.catalog import FAMILY_CHART, Family
from ..core.errors import ForbiddenError
from ..core.grammars import parse_time
from ..core.jobkinds import BY_KIND
from ..views.jobs import replica_specs, short_duration

CHART_LABEL, INSTANCE = "app.kubernetes.io/name", "app.kubernetes.io/instance"  # a chart's objects, its release
WORKSPACE_CHART = FAMILY_CHART[Family.WORKSPACE]  # its release is the workspace's name
ACCESS_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


@dataclass
class Claim:
    name: str
    namespace: str
    status: str
    capacity: str
    access_modes: list[str]
    storage_class: str
    age: str
    description: str = ""
    owner: str = ""
    used_by: list[str] = field(default_factory=list)  # kind/name of the jobs that mount it

    def to_json(self) -> dict:
        return {"name": self.name, "namespace": self.namespace, "status": self.status, "capacity": self.capacity,
                "accessModes": self.access_modes, "storageClass": self.storage_class, "age": self.age,
                "description": self.description, "owner": self.owner, "usedBy": self.used_by}


def claims_of_job(job: dict) -> set[str]:
    """The claim names a job's pod templates mount (every replica type)."""
    return {c for rspec in replica_specs(job).values() for c in claims_of_template((rspec or {}).get("template"))}


def claims_of_template(template: dict | None) -> set[str]:
    """The claim names a pod template mounts."""
    pod = (template or {}).get("spec") or {}
    return {c for vol in pod.get("volumes") or [] if (c := (vol.get("persistentVolumeClaim") or {}).get("claimName"))}


def _workspace_users(kube: KubeReader, namespace: str | None, pvcs: list[dict]) -> list[tuple[str, str, str]]:
    """(namespace, claim, workspace/NAME): each workspace's home (the claim its chart made and labelled; kept
    while it is stopped) and what its running Job mounts (--data, --home-claim). A user who may not list Jobs
    sees the homes only."""
    used = []
    for pvc in pvcs:
        meta = pvc.get("metadata") or {}
        labels = meta.get("labels") or {}
        if labels.get(CHART_LABEL) == WORKSPACE_CHART and INSTANCE in labels:
            used.append((meta.get("namespace", ""), meta.get("name", ""), f"{Family.WORKSPACE.value}/{labels[INSTANCE]}"))
    try:
        jobs = kube.list_path(f"/apis/batch/v1{ns_path(namespace)}/jobs", "listing jobs", labelSelector=f"{CHART_LABEL}={WORKSPACE_CHART}")
    except ForbiddenError:
        return used
    for job in jobs:
        meta = job.get("metadata") or {}
        name = (meta.get("labels") or {}).get(INSTANCE, "")
        for claim in claims_of_template((job.get("spec") or {}).get("template")):
            used.append((meta.get("namespace", ""), claim, f"{Family.WORKSPACE.value}/{name}"))
    return used


def claim_view(pvc: dict, users: list[str], now: dt.datetime) -> Claim:
    meta, spec, status = pvc.get("metadata") or {}, pvc.get("spec") or {}, pvc.get("status") or {}
    created = parse_time(meta.get("creationTimestamp"))
    modes = status.get("accessModes") or spec.get("accessModes") or []
    annotations = meta.get("annotations") or {}
    return Claim(
        name=meta.get("name", ""),
        namespace=meta.get("namespace", ""),
        status="Terminating" if meta.get("deletionTimestamp") else status.get("phase") or "Pending",
        capacity=(status.get("capacity") or {}).get("storage", ""),
        access_modes=[ACCESS_MODES.get(m, m) for m in dict.fromkeys(modes)],
        storage_class=spec.get("storageClassName") or "",
        age=short_duration((now - created).total_seconds()) if created else "N/A",
        description=annotations.get("description", ""),
        owner=annotations.get("owner", ""),
        used_by=sorted(users),
    )


def list_claims(kube: KubeReader, namespace: str | None) -> list[Claim]:
    """Every PVC of ``namespace`` (None: all namespaces), with the jobs and workspaces that use it."""
    pvcs = kube.list_path(f"/api/v1{ns_path(namespace)}/persistentvolumeclaims", "listing persistentvolumeclaims")
    users: dict[tuple[str, str], list[str]] = defaultdict(list)
    for kind, versions in kube.served_job_versions().items():
        info = BY_KIND[kind]
        try:
            jobs = kube.list_path(f"/apis/{info.group}/{versions[0]}{ns_path(namespace)}/{info.plural}",
                                  f"listing {info.plural}")
        except ForbiddenError:  # a kind this user may not read (e.g. no TrainJob rights): its users are unknown
            continue
        for job in jobs:
            meta = job.get("metadata") or {}
            for claim in claims_of_job(job):
                users[(meta.get("namespace", ""), claim)].append(f"{info.key}/{meta.get('name', '')}")
    for ns, claim, user in _workspace_users(kube, namespace, pvcs):
        if user not in users[(ns, claim)]:
            users[(ns, claim)].append(user)
    now = dt.datetime.now(dt.UTC)
    claims = [claim_view(p, users.get(((p.get("metadata") or {}).get("namespace", ""),
                                       (p.get("metadata") or {}).get("name", "")), []), now) for p in pvcs]
    return sorted(claims, key=lambda c: (c.namespace, c.name))


def claims_table(claims: list[Claim], *, all_namespaces: bool) -> str:
    from ..views.output import table

    headers = ["NAME", "STATUS", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "USED BY", "AGE"]
    if all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = []
    for c in claims:
        row = [c.name, c.status, c.capacity or "N/A", ",".join(c.access_modes) or "N/A", c.storage_class or "N/A",
               ",".join(c.used_by) or "N/A", c.age]
        rows.append([c.namespace, *row] if all_namespaces else row)
    return table(headers, rows)
