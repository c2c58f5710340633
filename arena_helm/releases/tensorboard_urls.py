"""Where a TensorBoard is reached: its Service's URL (a LoadBalancer's address, a NodePort on a node's
address) or, for a ClusterIP Service, the kubectl port-forward command that reaches it. Read through the
kube adapter; the URL itself is pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import ArenaHelmError

if TYPE_CHECKING:
    from ..adapters.kube import KubeReader

TB_SELECTOR = "app.kubernetes.io/component=tensorboard"  # every TensorBoard Service (a job's or standalone)


def tensorboard_url(svc: dict, node_ip: str | None) -> str:
    meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
    port = (spec.get("ports") or [{}])[0]
    stype = spec.get("type", "ClusterIP")
    if stype == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if ingress:
            host = ingress[0].get("ip") or ingress[0].get("hostname")
            return f"http://{host}:{port.get('port')}"
        stype = "NodePort" if port.get("nodePort") else "ClusterIP"
    if stype == "NodePort" and port.get("nodePort"):
        return f"http://{node_ip or '<node-ip>'}:{port['nodePort']}"
    return (f"kubectl port-forward -n {meta.get('namespace')} svc/{meta.get('name')} "
            f"{port.get('port', 6006)}:{port.get('port', 6006)}  # then open http://localhost:{port.get('port', 6006)}")


def first_node_ip(kube: KubeReader) -> str | None:
    try:
        nodes = kube.list_nodes()
    except ArenaHelmError:
        return None
    for node in nodes:
        for addr in (node.get("status") or {}).get("addresses") or []:
            if addr.get("type") in ("ExternalIP", "InternalIP"):
                return addr.get("address")
    return None


def tensorboard_urls(kube: KubeReader, namespace: str | None) -> dict[tuple[str, str], str]:
    """(namespace, release) -> TensorBoard URL or port-forward command."""
    services = kube.list_services(namespace, TB_SELECTOR)
    node_ip = first_node_ip(kube) if any(
        (s.get("spec") or {}).get("type") in ("NodePort", "LoadBalancer") for s in services) else None
    out = {}
    for svc in services:
        meta = svc.get("metadata") or {}
        release = (meta.get("labels") or {}).get("app.kubernetes.io/instance") or meta.get("name", "")
        out[(meta.get("namespace", ""), release)] = tensorboard_url(svc, node_ip)
    return out
