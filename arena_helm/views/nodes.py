"""Node views: what ``top node`` shows of each node (GPUs, CPU and memory allocatable and requested, the pods
holding GPUs), computed from plain API dicts. Pure (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.grammars import quantity_float
from .jobs import container_requests, count_of, fmt_cpu, fmt_mem, is_gpu_resource, pod_allocates, pod_gpus

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"


@dataclass
class NodeView:
    name: str
    ip: str
    role: str
    status: str
    gpu_total: int
    gpu_allocatable: int
    gpu_allocated: int
    cpu_allocatable: float
    cpu_requested: float
    mem_allocatable: float
    mem_requested: float
    gpu_pods: list[dict] = field(default_factory=list)

    @property
    def unhealthy_gpus(self) -> int:
        return max(self.gpu_total - self.gpu_allocatable, 0)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ip": self.ip, "role": self.role, "status": self.status,
                "totalGPUs": self.gpu_total, "allocatableGPUs": self.gpu_allocatable,
                "allocatedGPUs": self.gpu_allocated, "unhealthyGPUs": self.unhealthy_gpus,
                "allocatableCPU": fmt_cpu(self.cpu_allocatable), "requestedCPU": fmt_cpu(self.cpu_requested),
                "allocatableMemory": fmt_mem(self.mem_allocatable), "requestedMemory": fmt_mem(self.mem_requested),
                "gpuPods": self.gpu_pods}


def node_role(node: dict) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(k[len(NODE_ROLE_PREFIX):] for k in labels if k.startswith(NODE_ROLE_PREFIX))
    if not roles and labels.get("kubernetes.io/role"):
        roles = [labels["kubernetes.io/role"]]
    return ",".join(r for r in roles if r) or "<none>"


def node_view(node: dict, pods: list[dict]) -> NodeView:
    meta, status, spec = node.get("metadata") or {}, node.get("status") or {}, node.get("spec") or {}
    name = meta.get("name", "")
    ip = next((a["address"] for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), "N/A")
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), "Unknown")
    state = "Ready" if ready == "True" else "NotReady"
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    cap, alloc = status.get("capacity") or {}, status.get("allocatable") or {}
    gpu_total = sum(count_of(v) for k, v in cap.items() if is_gpu_resource(k))
    gpu_alloc = sum(count_of(v) for k, v in alloc.items() if is_gpu_resource(k))
    active = [p for p in pods if (p.get("spec") or {}).get("nodeName") == name and pod_allocates(p)]
    gpu_pods = [
        {"namespace": p["metadata"].get("namespace", ""), "name": p["metadata"]["name"], "gpus": pod_gpus(p)}
        for p in active if pod_gpus(p)
    ]
    return NodeView(
        name=name, ip=ip, role=node_role(node), status=state, gpu_total=gpu_total, gpu_allocatable=gpu_alloc,
        gpu_allocated=sum(pod_gpus(p) for p in active),
        cpu_allocatable=quantity_float(alloc.get("cpu", 0)),
        cpu_requested=sum(container_requests((p.get("spec") or {}).get("containers") or [], "cpu") for p in active),
        mem_allocatable=quantity_float(alloc.get("memory", 0)),
        mem_requested=sum(container_requests((p.get("spec") or {}).get("containers") or [], "memory")
                          for p in active),
        gpu_pods=sorted(gpu_pods, key=lambda x: (x["namespace"], x["name"])),
    )
