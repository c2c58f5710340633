"""Where a job stands in Kueue: its LocalQueue and ClusterQueue, its position among their pending workloads
(Kueue's visibility API, ``pendingworkloads``), its Workload's word on why it waits (the QuotaReserved
condition's message), and when it was admitted. Pure (no I/O): the kube adapter reads the objects.

Kueue (sigs.k8s.io/kueue v0.17, ``apis/visibility/v1beta2/types.go``) counts positions from 0; arena-helm says
them from 1 (position 1 is the next workload Kueue tries), in its tables and in its JSON alike.
"""

from __future__ import annotations

from dataclasses import dataclass

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # what submit --queue-name sets; Kueue's jobframework reads it
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta2", "v1beta1")  # Kueue 0.15+ serves both; 0.9-0.14 v1beta1 only


def queue_of(job: dict | None) -> str:
    """The LocalQueue a job was submitted to (its queue-name label), or ""."""
    return str((((job or {}).get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL) or "")


def condition(obj: dict | None, ctype: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == ctype), {})


def owned_workload(job: dict | None, workloads: list[dict]) -> dict | None:
    """The Kueue Workload whose owner is the job (Kueue's jobframework makes one per job), if any."""
    uid = ((job or {}).get("metadata") or {}).get("uid")
    for w in workloads:
        if uid and any(o.get("uid") == uid for o in (w.get("metadata") or {}).get("ownerReferences") or []):
            return w
    return None


@dataclass
class QueueInfo:
    """A job's place in Kueue. Positions count from 1; None when unknown (the visibility API not served or
    not readable here, or the workload no longer pending)."""

    local_queue: str
    cluster_queue: str = ""
    workload: str = ""
    pending: bool = True  # not admitted (yet, or again after an eviction)
    position_in_local_queue: int | None = None
    position_in_cluster_queue: int | None = None
    message: str = ""  # the Workload's QuotaReserved message while it waits (quota, flavors: Kueue's words)
    admitted_at: str = ""  # when the Workload's Admitted condition became True
    positions_served: bool | None = None  # whether the visibility API answered (None: not asked)

    def position_text(self) -> str:
        if self.position_in_local_queue is None:
            return ""
        text = f"position {self.position_in_local_queue} in local queue {self.local_queue}"
        if self.position_in_cluster_queue is not None:
            cq = f"cluster queue {self.cluster_queue}" if self.cluster_queue else "its cluster queue"
            text += f", {self.position_in_cluster_queue} in {cq}"
        return text

    def text(self) -> str:
        """``get``'s Queue line."""
        where = self.local_queue + (f" (cluster queue {self.cluster_queue})" if self.cluster_queue else "")
        if not self.pending:
            return where + (f", admitted {self.admitted_at}" if self.admitted_at else ", admitted")
        if self.position_in_local_queue is not None:
            return f"{where}: {self.position_text()}"
        if self.positions_served is False:
            return f"{where}: pending (position unknown: Kueue's visibility API is not served or not readable)"
        if self.positions_served and self.workload:
            return f"{where}: pending, not among the queue's pending workloads (Kueue is placing it)"
        return f"{where}: pending"

    def to_json(self) -> dict:
        return {"localQueue": self.local_queue, "clusterQueue": self.cluster_queue, "workload": self.workload,
                "pending": self.pending, "positionInLocalQueue": self.position_in_local_queue,
                "positionInClusterQueue": self.position_in_cluster_queue, "message": self.message,
                "admittedAt": self.admitted_at}


def queue_info(job: dict | None, *, workload: dict | None = None, local_queue: dict | None = None,
               pending: bool = True) -> QueueInfo | None:
    """A job's QueueInfo from what is known of it: the job alone (``list``), its Workload and LocalQueue
    (``get``). None for a job not submitted to a queue."""
    lq = queue_of(job)
    if not lq:
        return None
    info = QueueInfo(lq, pending=pending)
    info.cluster_queue = str(((local_queue or {}).get("spec") or {}).get("clusterQueue") or "")
    if workload is not None:
        info.workload = str((workload.get("metadata") or {}).get("name") or "")
        admission = (workload.get("status") or {}).get("admission") or {}
        info.cluster_queue = info.cluster_queue or str(admission.get("clusterQueue") or "")
        admitted = condition(workload, "Admitted")
        if admitted.get("status") == "True":
            info.pending = False
            info.admitted_at = str(admitted.get("lastTransitionTime") or "")
        quota = condition(workload, "QuotaReserved")
        if info.pending:
            if quota.get("status") == "True":
                info.message = "quota reserved, admission pending"
            else:
                info.message = " ".join(str(quota.get("message") or "no quota reserved yet").split())
    return info


def pending_positions(items: list[dict]) -> dict[str, tuple[int, int]]:
    """Owner UID -> (position in the LocalQueue, in the ClusterQueue), from 1, of a ``pendingworkloads``
    answer's items (each names its job in ownerReferences)."""
    out: dict[str, tuple[int, int]] = {}
    for it in items:
        pos = (int(it.get("positionInLocalQueue") or 0) + 1, int(it.get("positionInClusterQueue") or 0) + 1)
        for owner in (it.get("metadata") or {}).get("ownerReferences") or []:
            if owner.get("uid"):
                out[str(owner["uid"])] = pos
    return out


def place(info: QueueInfo, uid: str, positions: dict[str, tuple[int, int]] | None) -> None:
    """Set ``info``'s positions from a ``pending_positions`` map (None: the visibility API did not answer)."""
    info.positions_served = positions is not None
    if positions and uid in positions:
        info.position_in_local_queue, info.position_in_cluster_queue = positions[uid]
