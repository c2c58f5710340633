"""arena_helm.serving: the spec of `serve custom`, its chart values, the view of a serving (pure)."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.errors import UsageError
from arena_helm.serving import (
    CustomServeSpec,
    CustomServingValues,
    default_version,
    serving_type,
    serving_values,
    serving_view,
)


def spec(**kw) -> CustomServeSpec:
    return CustomServeSpec(**{"name": "mnist", "version": "v1", "image": "tensorflow/serving:2.15.0", **kw})


def test_the_least_a_serving_takes_is_a_name_and_an_image():
    assert serving_values(spec()) == {"servingName": "mnist", "servingVersion": "v1",
                                      "image": "tensorflow/serving:2.15.0"}
    assert spec().release == "mnist-v1"


def test_every_flag_reaches_its_value():
    s = spec(command=["tensorflow_model_server", "--port=8500", "--model_name=it's"], replicas=3, port=8500,
             restful_port=8501, metrics_port=9090, gpus=1, cpu="2", memory="8Gi", share_memory="1Gi",
             data=["models:/models"], data_dir=["/etc/ssl/certs"], env=["MODEL=mnist"],
             env_from_secret=["TOKEN=hf:token"], selector=["gpu=a100"], toleration=["nvidia.com/gpu:NoSchedule"],
             priority="serving", image_pull_secret=["registry"], image_pull_policy="Always", label=["team=vision"],
             annotation=["example.com/owner=vision"], model_name="mnist", model_version="3")
    values = serving_values(s)
    assert values == {
        "servingName": "mnist", "servingVersion": "v1", "image": "tensorflow/serving:2.15.0",
        # a list of words from Python runs as exactly those words (the CLI joins its words with spaces)
        "command": "tensorflow_model_server --port=8500 '--model_name=it'\"'\"'s'",
        "replicas": 3, "ports": {"grpc": 8500, "restful": 8501, "metrics": 9090}, "imagePullPolicy": "Always",
        "gpus": 1, "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}},
        "shmSize": "1Gi", "data": [{"claimName": "models", "mountPath": "/models", "readOnly": False}],
        "hostPaths": [{"path": "/etc/ssl/certs", "mountPath": "/etc/ssl/certs", "readOnly": False}],
        "env": [{"name": "MODEL", "value": "mnist"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "priorityClassName": "serving", "imagePullSecrets": ["registry"],
        "labels": {"team": "vision", "modelName": "mnist", "modelVersion": "3"},
        "annotations": {"example.com/owner": "vision"}}
    CustomServingValues.model_validate(values)  # what the chart's schema is generated from takes them


def test_the_version_defaults_to_the_minute_of_the_submit():
    assert default_version(dt.datetime(2026, 12, 4, 9, 5, tzinfo=dt.UTC)) == "202612040905"
    s = CustomServeSpec(name="mnist", image="x:1")
    assert len(s.version) == 12 and s.version.isdigit() and s.release == f"mnist-{s.version}"


@pytest.mark.parametrize(("fields", "message"), [
    ({"image": None}, "--image: a custom serving runs your image: give --image IMAGE"),
    ({"name": "Mnist"}, "serving name 'Mnist'"),
    ({"version": "V1"}, "--version"),
    ({"port": 70000}, "--port"),
    ({"port": 8500, "restful_port": 8500}, "--port/--restful-port/--metrics-port: two of them are the same port"),
    ({"replicas": -1}, "--replicas"),
    ({"name": "a" * 40, "version": "b" * 13}, "the release '" + "a" * 40 + "-" + "b" * 13 + "' is 54 characters"),
    ({"data": ["m:/models", "n:/models"]}, "mount path /models is used twice"),
])
def test_bad_input_is_one_line_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as err:
        spec(**fields)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_type_flag_takes_arenas_names():
    assert serving_type("custom") == serving_type("custom-serving") == "custom-serving"
    with pytest.raises(UsageError, match="--type tf: not a serving type; one of custom-serving"):
        serving_type("tf")


def test_the_view_joins_the_release_deployment_service_and_pods():
    labels = {"servingName": "mnist", "servingVersion": "v1", "servingType": "custom-serving", "release": "mnist-v1"}
    deployment = {"metadata": {"name": "mnist-v1", "namespace": "team", "labels": labels,
                               "creationTimestamp": "2026-12-04T10:00:00Z"},
                  "spec": {"replicas": 2, "template": {"spec": {"containers": [
                      {"name": "serving", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}},
                  "status": {"readyReplicas": 1, "availableReplicas": 1}}
    service = {"spec": {"clusterIP": "10.96.0.7", "ports": [{"name": "grpc", "port": 8500},
                                                            {"name": "restful", "port": 8501}]}}
    pods = [{"metadata": {"name": "mnist-v1-abc-2"}, "spec": {"nodeName": "n1", "containers": [{}]},
             "status": {"phase": "Running", "containerStatuses": [{"ready": True, "restartCount": 1}]}},
            {"metadata": {"name": "mnist-v1-abc-1"}, "spec": {"containers": [{}]}, "status": {"phase": "Pending"}}]
    v = serving_view({"name": "mnist-v1", "namespace": "team", "chart": "custom-serving-0.1.0", "revision": 2,
                      "status": "deployed"}, deployment, service, pods)
    assert (v.name, v.version, v.type, v.release, v.desired, v.available, v.ready, v.gpus, v.address) == (
        "mnist", "v1", "custom-serving", "mnist-v1", 2, 1, 1, 1, "10.96.0.7")
    assert v.endpoint() == "GRPC:8500,RESTFUL:8501"
    assert [(p["name"], p["status"], p["ready"], p["restarts"], p["node"]) for p in v.pods] == [
        ("mnist-v1-abc-1", "Pending", "0/1", 0, "N/A"), ("mnist-v1-abc-2", "Running", "1/1", 1, "n1")]
    assert v.to_json()["ports"] == {"grpc": 8500, "restful": 8501}
    # a serving without a Service (no port) or whose Deployment is gone
    bare = serving_view({"name": "x-v1", "namespace": "team", "chart": "custom-serving-0.1.0"}, None, None, [])
    assert (bare.name, bare.type, bare.desired, bare.address, bare.endpoint()) == ("x-v1", "custom-serving", 0, "",
                                                                                  "-")
