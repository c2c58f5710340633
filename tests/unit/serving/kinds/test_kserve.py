"""The KServe kind's reading of its objects (kserve/kserve v0.20.0: the predictor Service's port names)."""

from __future__ import annotations

import dataclasses

from arena_helm.serving.servings import ServingView


def test_the_predictor_services_port_is_named_by_the_protocol_a_client_speaks():
    from arena_helm.serving.kinds.kserve import port_protocol

    assert [port_protocol(n) for n in ("iris-v1-predictor", "http1", "h2c", "metrics")] == [
        "http", "http", "grpc", "metrics"]


def test_workload_view_gives_the_ports_protocol_names_and_the_url():
    from arena_helm.serving.kinds.kserve import workload_view

    view = ServingView(name="iris", version="v1", namespace="team", type="kserve", release="iris-v1", desired=1,
                       available=1, ready=1, gpus=0, address="10.96.0.9", ports=[("iris-v1-predictor", 80)],
                       created="2026-12-04T11:00:00Z")
    isvc = {"status": {"url": "http://iris-v1.team.example.com",
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    out = workload_view(isvc, view)
    assert (out["ports"], out["url"]) == ([("http", 80)], "http://iris-v1.team.example.com")
    assert dataclasses.replace(view, **out).endpoint() == "HTTP:80"
