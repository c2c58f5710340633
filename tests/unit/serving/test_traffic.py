"""arena_helm.serving.traffic: serve traffic-split's spec, values and router choice (pure)."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.serving.servings import ServingView
from arena_helm.serving.traffic import (
    Router,
    TrafficSplitSpec,
    TrafficSplitValues,
    assumed_views,
    choose_router,
    describe,
    parse_ports,
    traffic_values,
)


def view(version: str, ports: list[tuple[str, int]]) -> ServingView:
    return ServingView(name="mnist", version=version, namespace="team", type="custom-serving",
                       release=f"mnist-{version}", desired=1, available=1, ready=1, gpus=0, address="10.0.0.1",
                       ports=ports)


def test_the_weights_go_to_each_versions_service_on_the_ports_they_share():
    spec = TrafficSplitSpec(name="mnist", namespace="team", version_weight=["v1:80", "v2:20"])
    views = [view("v1", [("grpc", 8500), ("restful", 8501)]), view("v2", [("restful", 8501), ("metrics", 9090)]),
             view("v3", [("restful", 8501)])]
    values = traffic_values(spec, views, Router.istio)
    assert values == {"servingName": "mnist", "router": "istio", "ports": [{"name": "restful", "port": 8501}],
                      "backends": [{"version": "v1", "service": "mnist-v1", "weight": 80},
                                   {"version": "v2", "service": "mnist-v2", "weight": 20}]}
    TrafficSplitValues.model_validate(values)
    assert describe(values) == "v1 80%, v2 20% (Istio VirtualService and DestinationRule)"
    assert describe({**values, "router": "gateway"}) == "v1 80%, v2 20% (Gateway API HTTPRoute)"


@pytest.mark.parametrize(("weights", "message"), [
    (["v1:80", "v2:10"], "--version-weight: the weights sum to 90, not 100: v1:80, v2:10"),
    (["v1=100"], "--version-weight 'v1=100': not VERSION:WEIGHT (e.g. v1:80)"),
    (["v1:60", "v1:40"], "--version-weight: version v1 is given twice"),
    (["v1:101"], "--version-weight v1:101: a weight is a percent, 0 to 100"),
    ([], "--version-weight: give each version its share"),
    (["V1:100"], "--version-weight V1:100: version 'V1' must be a lowercase DNS label"),
])
def test_bad_weights_are_one_line_naming_the_flag(weights, message):
    with pytest.raises(UsageError) as err:
        TrafficSplitSpec(name="mnist", version_weight=weights)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_version_the_serving_lacks_or_no_shared_port_is_refused():
    spec = TrafficSplitSpec(name="mnist", namespace="team", version_weight=["v1:50", "v3:50"])
    with pytest.raises(UsageError, match=r"--version-weight v3: serving mnist has no version v3 in namespace team "
                                         r"\(its versions: v1, v2\)"):
        traffic_values(spec, [view("v1", [("http", 80)]), view("v2", [("http", 80)])], Router.gateway)
    spec = TrafficSplitSpec(name="mnist", namespace="team", version_weight=["v1:50", "v2:50"])
    with pytest.raises(UsageError, match="versions v1, v2 have no port in common"):
        traffic_values(spec, [view("v1", [("http", 80)]), view("v2", [("http", 8080)])], Router.gateway)
    with pytest.raises(UsageError, match=r"--port grpc:8500: not a port every version has \(theirs in common: "
                                         r"http:80\)"):
        traffic_values(spec, [view("v1", [("http", 80)]), view("v2", [("http", 80)])], Router.gateway,
                       [("grpc", 8500)])


def test_the_router_is_what_the_cluster_serves_the_gateway_api_first():
    both = {"gateway.networking.k8s.io": ["v1", "v1beta1"], "networking.istio.io": ["v1", "v1beta1"]}
    assert choose_router(both, None) is Router.gateway
    assert choose_router(both, Router.istio) is Router.istio
    assert choose_router({"networking.istio.io": ["v1"]}, None) is Router.istio
    with pytest.raises(UsageError, match=r"--router gateway: the cluster does not serve gateway.networking.k8s.io/v1"):
        choose_router({"networking.istio.io": ["v1"]}, Router.gateway)
    with pytest.raises(UsageError, match="serves neither the Gateway API"):
        choose_router({"apps": ["v1"]}, None)


def test_a_dry_run_takes_each_version_to_be_its_release_with_the_ports_given():
    spec = TrafficSplitSpec(name="mnist", version_weight=["v1:90", "v2:10"])
    assert [(v.release, v.ports) for v in assumed_views(spec, parse_ports(["restful:8501"]))] == [
        ("mnist-v1", [("restful", 8501)]), ("mnist-v2", [("restful", 8501)])]
    with pytest.raises(UsageError, match="--port: a dry run reads no serving"):
        assumed_views(spec, [])
    with pytest.raises(UsageError, match=r"--port 'restful:0': not NAME:NUMBER"):
        parse_ports(["restful:0"])
