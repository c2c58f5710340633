"""arena_helm.serving.servings: the spec of `serve custom`, its chart values, the view of a serving (pure)."""

from __future__ import annotations

import datetime as dt

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.serving.kinds.custom import CustomServeSpec, CustomServingValues
from arena_helm.serving.kinds.vllm import VllmServeSpec, VllmServingValues
from arena_helm.serving.servings import default_version, serving_type, serving_values, serving_view, update_patch


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
    assert serving_type("vllm") == "vllm-serving"
    assert serving_type("tensorflow") == serving_type("tf-serving") == "tf-serving"
    with pytest.raises(UsageError, match="--type tf: not a serving kind; one of custom, vllm, sglang, tensorflow, "
                                         r"triton, kserve, distributed \(or their types custom-serving, "
                                         r"vllm-serving, sglang-serving, tf-serving, triton-serving, kserve, "
                                         r"distributed-serving\)"):
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


# ---- vllm ----------------------------------------------------------------------------------------------------
def vllm(**kw) -> VllmServeSpec:
    return VllmServeSpec(**{"name": "qwen", "version": "v1", "model": "Qwen/Qwen2.5-0.5B-Instruct", **kw})


def test_a_vllm_serving_takes_a_model_and_one_gpu_by_default():
    assert serving_values(vllm()) == {"servingName": "qwen", "servingVersion": "v1", "gpus": 1,
                                      "model": "Qwen/Qwen2.5-0.5B-Instruct"}


def test_vllm_flags_and_engine_arguments_reach_their_values():
    s = vllm(model="/models/llama", gpus=4, tensor_parallel_size=2, max_model_len=8192, port=8080, replicas=2,
             startup_timeout=3600, engine_args=["--dtype", "half", "--served-model-name", "it's"],
             data=["models:/models"], env_from_secret=["HF_TOKEN=hf"], image="vllm/vllm-openai:v0.12.0")
    values = serving_values(s)
    assert values == {
        "servingName": "qwen", "servingVersion": "v1", "image": "vllm/vllm-openai:v0.12.0", "replicas": 2, "gpus": 4,
        "data": [{"claimName": "models", "mountPath": "/models", "readOnly": False}],
        "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "HF_TOKEN"}}}],
        "model": "/models/llama", "port": 8080, "tensorParallelSize": 2, "maxModelLen": 8192,
        "startupTimeoutSeconds": 3600, "extraArgs": ["--dtype", "half", "--served-model-name", "it's"]}
    VllmServingValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"model": ""}, "--model: give the model to serve"),
    ({"model": "not a model"}, "--model 'not a model': not a Hugging Face id (org/name) nor an absolute path"),
    ({"model": "org/name\n"}, "--model 'org/name\\n': not a Hugging Face id (org/name) nor an absolute path"),
    ({"gpus": 0}, "--gpus 0: the vLLM image runs on NVIDIA GPUs"),
    ({"gpus": 2, "tensor_parallel_size": 4}, "--tensor-parallel-size 4: more than the replica's 2 GPU(s)"),
    ({"port": 0}, "--port"),
])
def test_bad_vllm_input_is_one_line_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as err:
        vllm(**fields)
    assert message in str(err.value) and "\n" not in str(err.value)


# ---- serve update ------------------------------------------------------------------------------------------------
def test_update_patches_only_the_given_flags_keys_defaults_included():
    from arena_helm.core.servekinds import BY_KEY
    from arena_helm.serving.servings import update_patch

    custom, vllm_kind = BY_KEY["custom"], BY_KEY["vllm"]
    assert update_patch(custom, "mnist", "v1", {"image": "tensorflow/serving:2.16.1"}) == {
        "image": "tensorflow/serving:2.16.1"}
    # back to a default: still set (the release may hold another value)
    assert update_patch(custom, "mnist", "v1", {"replicas": 1, "gpus": 0}) == {"replicas": 1, "gpus": 0}
    assert update_patch(custom, "mnist", "v1", {"cpu": "2", "env": ["A=1"], "label": ["team=x"]}) == {
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}, "env": [{"name": "A", "value": "1"}],
        "labels": {"team": "x"}}
    assert update_patch(custom, "mnist", "v1", {"command": "python serve.py --port 80"}) == {
        "command": "python serve.py --port 80", "shell": "sh"}
    assert update_patch(vllm_kind, "qwen", "v1", {"model": "org/other", "engine_args": ["--dtype", "half"]}) == {
        "model": "org/other", "extraArgs": ["--dtype", "half"]}
    with pytest.raises(UsageError, match="serve update custom does not change name"):
        update_patch(custom, "mnist", "v1", {"name": "x"})
    with pytest.raises(UsageError, match="--gpus 0: the vLLM image runs on NVIDIA GPUs"):
        update_patch(vllm_kind, "qwen", "v1", {"gpus": 0})


def test_a_deployment_has_rolled_out_when_no_replica_of_an_older_template_is_left():
    from arena_helm.serving.servings import rolled_out

    def dep(gen, observed, replicas, updated, available, total):
        return {"metadata": {"generation": gen}, "spec": {"replicas": replicas},
                "status": {"observedGeneration": observed, "updatedReplicas": updated, "availableReplicas": available,
                           "replicas": total}}

    assert rolled_out(dep(2, 2, 2, 2, 2, 2))
    assert not rolled_out(dep(2, 1, 2, 2, 2, 2))  # the controller has not seen the new spec yet
    assert not rolled_out(dep(2, 2, 2, 1, 2, 3))  # an old pod is still there
    assert not rolled_out(dep(2, 2, 2, 2, 1, 2))  # a new one not available yet
    assert rolled_out(dep(1, 1, 0, 0, 0, 0)) and not rolled_out(None)


# ---- tensorflow ------------------------------------------------------------------------------------------------
def test_a_tensorflow_serving_names_its_model_after_the_serving_by_default():
    from arena_helm.serving.kinds.tensorflow import TFServeSpec, TFServingValues

    s = TFServeSpec(name="mnist", version="v1", model_path="/models/mnist", data=["models:/models"])
    assert serving_values(s) == {"servingName": "mnist", "servingVersion": "v1", "modelName": "mnist",
                                 "modelPath": "/models/mnist",
                                 "data": [{"claimName": "models", "mountPath": "/models", "readOnly": False}]}
    s = TFServeSpec(name="mnist", version="v1", model_config_file="/models/models.config", model_name="digits",
                    port=9000, restful_port=0, server_args=["--enable_batching=true"], gpus=1)
    values = serving_values(s)
    assert values == {"servingName": "mnist", "servingVersion": "v1", "gpus": 1, "labels": {"modelName": "digits"},
                      "modelName": "digits", "modelConfigFile": "/models/models.config", "port": 9000,
                      "restfulPort": 0, "extraArgs": ["--enable_batching=true"]}
    TFServingValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "--model-path: give where the model is (a path under a -d mount), or --model-config-file"),
    ({"model_path": "/m", "model_config_file": "/c"}, "--model-path and --model-config-file: give one"),
    ({"model_path": "models/m"}, "--model-path"),
    ({"model_path": "/m", "port": 8501}, "--port/--restful-port: both are 8501"),
])
def test_bad_tensorflow_input_is_one_line_naming_the_flag(fields, message):
    from arena_helm.serving.kinds.tensorflow import TFServeSpec

    with pytest.raises(UsageError) as err:
        TFServeSpec(name="mnist", version="v1", **fields)
    assert message in str(err.value) and "\n" not in str(err.value)


# ---- servings among the jobs of top job ----------------------------------------------------------------------------
def test_a_serving_version_is_a_row_of_top_job_with_its_own_total():
    from arena_helm.serving.servings import deployment_shape, serving_job_view
    from arena_helm.views.output import top_jobs_table

    now = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)
    labels = {"servingName": "qwen", "servingVersion": "v1", "servingType": "vllm-serving", "release": "qwen-v1"}
    dep = {"metadata": {"name": "qwen-v1", "namespace": "team", "labels": labels,
                        "creationTimestamp": "2026-12-04T11:00:00Z"},
           "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "serving", "resources": {
               "limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "4", "memory": "16Gi"}}}]}}}}

    def pod(name, phase, node):
        return {"metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-12-04T11:00:00Z"},
                "spec": {"nodeName": node, "containers": [{"name": "serving", "resources": {
                    "limits": {"nvidia.com/gpu": "1"}}}]},
                "status": {"phase": phase, "containerStatuses": [{"name": "serving", "ready": phase == "Running"}]}}

    v = serving_job_view(dep, deployment_shape(dep), [pod("qwen-v1-b", "Pending", None),
                                                      pod("qwen-v1-a", "Running", "n1")], now)
    assert (v.name, v.trainer, v.status, v.requested_gpus, v.allocated_gpus, v.requested_cpu, v.node, v.duration) == (
        "qwen/v1", "vllm-serving", "PENDING", 2, 1, 8.0, "n1", "60m")
    assert [i.name for i in v.instances] == ["qwen-v1-a", "qwen-v1-b"]
    lines = top_jobs_table([v], all_namespaces=False).splitlines()
    assert lines[1].split()[:5] == ["qwen/v1", "PENDING", "VLLM-SERVING", "2", "1"]
    assert lines[-2:] == ["Total Allocated/Requested GPUs of Training Jobs: 0/0",
                          "Total Allocated/Requested GPUs of Servings: 0/0"]  # Arena counts RUNNING rows only
    ready = serving_job_view(dep, deployment_shape(dep), [pod("qwen-v1-a", "Running", "n1"),
                                                          pod("qwen-v1-b", "Running", "n2")], now)
    assert (ready.status, ready.allocated_gpus, ready.node) == ("RUNNING", 2, "n1,n2")
    assert top_jobs_table([ready], all_namespaces=False).splitlines()[-1] == (
        "Total Allocated/Requested GPUs of Servings: 2/2")


def test_two_versions_of_a_serving_are_two_rows_named_apart():
    from arena_helm.serving.servings import deployment_shape, serving_job_view
    from arena_helm.views.output import top_jobs_table

    now = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)

    def deployment(version):
        labels = {"servingName": "qwen", "servingVersion": version, "servingType": "vllm-serving"}
        return {"metadata": {"name": f"qwen-{version}", "namespace": "team", "labels": labels,
                             "creationTimestamp": "2026-12-04T11:00:00Z"},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}}

    views = [serving_job_view(d, deployment_shape(d), [], now) for d in (deployment("v1"), deployment("v2"))]
    assert [line.split()[:3] for line in top_jobs_table(views, all_namespaces=False).splitlines()[1:3]] == [
        ["qwen/v1", "PENDING", "VLLM-SERVING"], ["qwen/v2", "PENDING", "VLLM-SERVING"]]
    unversioned = deployment("v1")
    del unversioned["metadata"]["labels"]["servingVersion"]
    assert serving_job_view(unversioned, deployment_shape(unversioned), [], now).name == "qwen"


def test_top_jobs_totals_count_each_row_in_its_own_family_whatever_its_chart_is_called():
    """A KServe serving's chart is ``kserve`` (no ``-serving`` suffix): its GPUs are a serving's, not a training
    job's. Each total line counts the RUNNING rows of its family only."""
    from arena_helm.serving.servings import deployment_shape, serving_job_view
    from arena_helm.views.jobs import job_view
    from arena_helm.views.output import top_jobs_table
    from arena_helm.workspace.workspaces import workspace_job_view

    now = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)
    created = "2026-12-04T11:00:00Z"

    def pod(name, gpus, labels=None):
        return {"metadata": {"name": name, "namespace": "team", "creationTimestamp": created, "labels": labels or {}},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {
                    "limits": {"nvidia.com/gpu": str(gpus)}}}]},
                "status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": True}]}}

    def deployment(name, chart, gpus):
        labels = {"servingName": name, "servingVersion": "v1", "servingType": chart, "release": f"{name}-v1"}
        return {"metadata": {"name": f"{name}-v1", "namespace": "team", "labels": labels, "creationTimestamp": created},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "resources": {
                    "limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}

    kserve = deployment("iris", "kserve", 2)
    vllm = deployment("qwen", "vllm-serving", 1)
    tfjob = {"kind": "TFJob", "metadata": {"name": "train", "namespace": "team", "creationTimestamp": created},
             "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
                 {"name": "tensorflow", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}}},
             "status": {"conditions": [{"type": "Running", "status": "True"}]}}
    ws = {"metadata": {"name": "nb-1", "namespace": "team", "creationTimestamp": created,
                       "labels": {"app.kubernetes.io/instance": "nb"}},
          "spec": {"template": {"spec": {"containers": [{"name": "workspace", "resources": {
              "limits": {"nvidia.com/gpu": "8"}}}]}}}, "status": {}}
    views = [serving_job_view(kserve, deployment_shape(kserve), [pod("iris-v1-a", 2)], now),
             serving_job_view(vllm, deployment_shape(vllm), [pod("qwen-v1-a", 1)], now),
             job_view(release=None, job=tfjob, pods=[pod("train-worker-0", 4, {
                 "training.kubeflow.org/job-name": "train", "training.kubeflow.org/replica-type": "worker",
                 "training.kubeflow.org/replica-index": "0"})], now=now),
             workspace_job_view(ws, [pod("nb-1-abcde", 8)], now)]
    assert [(v.name, v.trainer, v.status) for v in views] == [
        ("iris/v1", "kserve", "RUNNING"), ("qwen/v1", "vllm-serving", "RUNNING"), ("train", "tfjob", "RUNNING"),
        ("nb", "workspace", "RUNNING")]
    lines = top_jobs_table(views, all_namespaces=False).splitlines()
    assert lines[-3:] == ["Total Allocated/Requested GPUs of Training Jobs: 4/4",
                          "Total Allocated/Requested GPUs of Servings: 3/3",
                          "Total Allocated/Requested GPUs of Workspaces: 8/8"]


def test_a_distributed_serving_is_a_row_of_top_job_of_its_groups():
    """A LeaderWorkerSet's row: requested = groups x (the leader's GPUs + workers x a worker's), allocated = the
    running pods' GPUs, RUNNING once every pod of every group runs."""
    from arena_helm.serving.kinds.distributed import workload_shape
    from arena_helm.serving.servings import serving_job_view

    now = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)
    labels = {"servingName": "llama", "servingVersion": "v1", "servingType": "distributed-serving",
              "release": "llama-v1"}

    def spec(gpus, cpu):
        return {"priorityClassName": "high", "containers": [{"name": "c", "resources": {
            "limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": cpu}}}]}

    lws = {"metadata": {"name": "llama-v1", "namespace": "team", "labels": labels,
                        "creationTimestamp": "2026-12-04T11:30:00Z"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3, "leaderTemplate": {"spec": spec(4, "8")},
                                                            "workerTemplate": {"spec": spec(2, "4")}}}}

    def pod(name, phase, gpus):
        return {"metadata": {"name": name, "namespace": "team", "creationTimestamp": "2026-12-04T11:30:00Z"},
                "spec": {"nodeName": "n1", **spec(gpus, "1")},
                "status": {"phase": phase, "containerStatuses": [{"name": "c", "ready": phase == "Running"}]}}

    group0 = [pod("llama-v1-0", "Running", 4), pod("llama-v1-0-1", "Running", 2), pod("llama-v1-0-2", "Running", 2)]
    group1 = [pod("llama-v1-1", "Running", 4), pod("llama-v1-1-1", "Running", 2), pod("llama-v1-1-2", "Pending", 2)]
    v = serving_job_view(lws, workload_shape(lws), group0 + group1, now)
    assert (v.name, v.trainer, v.status, v.requested_gpus, v.allocated_gpus, v.requested_cpu, v.priority,
            v.duration, len(v.instances)) == ("llama/v1", "distributed-serving", "PENDING", 16, 14, 32.0, "high", "30m", 6)
    group1[-1]["status"]["phase"] = "Running"
    assert serving_job_view(lws, workload_shape(lws), group0 + group1, now).status == "RUNNING"


# ---- triton ----------------------------------------------------------------------------------------------------
def test_a_triton_serving_sets_only_what_differs_from_the_chart():
    from arena_helm.serving.kinds.triton import TritonServeSpec, TritonServingValues

    s = TritonServeSpec(name="resnet", version="v1", model_repository="/models/repo", data=["models:/models"])
    assert serving_values(s) == {"servingName": "resnet", "servingVersion": "v1", "modelRepository": "/models/repo",
                                 "data": [{"claimName": "models", "mountPath": "/models", "readOnly": False}]}
    s = TritonServeSpec(name="llm", version="v1", model_repository="/models/repo", backend="trt-llm", gpus=2,
                        http_port=9000, grpc_port=9001, metrics_port=9002, allow_metrics=True,
                        load_model=["ensemble", "preprocessing"], startup_timeout=1200,
                        server_args=["--log-verbose=1"])
    values = serving_values(s)
    assert values == {"servingName": "llm", "servingVersion": "v1", "gpus": 2, "modelRepository": "/models/repo",
                      "backend": "trt-llm", "httpPort": 9000, "grpcPort": 9001, "metricsPort": 9002,
                      "startupTimeoutSeconds": 1200, "allowMetrics": True,
                      "loadModels": ["ensemble", "preprocessing"], "extraArgs": ["--log-verbose=1"]}
    TritonServingValues.model_validate(values)
    # the metrics port may equal another while metrics are off (it is not opened)
    TritonServeSpec(name="r", version="v1", model_repository="/m", metrics_port=8000)


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "--model-repository: give where the models are (a path under a -d mount)"),
    ({"model_repository": "models"}, "--model-repository"),
    ({"model_repository": "/m", "backend": "vllm"},
     "--backend vllm: Triton's vllm backend runs on NVIDIA GPUs: give --gpus 1 or more"),
    ({"model_repository": "/m", "backend": "tensorrt", "gpus": 1}, "--backend"),
    ({"model_repository": "/m", "http_port": 8001}, "--http-port/--grpc-port/--metrics-port: two of them are the same"),
    ({"model_repository": "/m", "allow_metrics": True, "metrics_port": 8001}, "two of them are the same port"),
    ({"model_repository": "/m", "load_model": ["a/b"]}, "--load-model 'a/b': not a model's folder name"),
    ({"model_repository": "/m", "http_port": 70000}, "--http-port"),
])
def test_bad_triton_input_is_one_line_naming_the_flag(fields, message):
    from arena_helm.serving.kinds.triton import TritonServeSpec

    with pytest.raises(UsageError) as err:
        TritonServeSpec(name="resnet", version="v1", **fields)
    assert message in str(err.value) and "\n" not in str(err.value)


# ---- kserve ----------------------------------------------------------------------------------------------------
def test_a_kserve_serving_is_a_model_or_a_container():
    from arena_helm.serving.kinds.kserve import KServeSpec, KServeValues

    s = KServeSpec(name="iris", version="v1", model_format="sklearn", storage_uri="pvc://models/iris")
    assert serving_values(s) == {"servingName": "iris", "servingVersion": "v1", "modelFormat": {"name": "sklearn"},
                                 "storageUri": "pvc://models/iris"}
    s = KServeSpec(name="iris", version="v2", model_format="onnx:1", storage_uri="s3://m/iris", runtime="triton",
                   protocol_version="v2", min_replicas=2, max_replicas=4, scale_metric="cpu", scale_target=80,
                   container_concurrency=8, request_timeout=60, canary_traffic_percent=0, gpus=1)
    values = serving_values(s)
    assert values == {"servingName": "iris", "servingVersion": "v2", "gpus": 1,
                      "modelFormat": {"name": "onnx", "version": "1"}, "storageUri": "s3://m/iris", "runtime": "triton",
                      "protocolVersion": "v2", "maxReplicas": 4, "scaleMetric": "cpu", "scaleTarget": 80,
                      "containerConcurrency": 8, "timeout": 60, "canaryTrafficPercent": 0, "replicas": 2}
    KServeValues.model_validate(values)
    s = KServeSpec(name="web", version="v1", image="registry.example.com/server:1", port=8081, replicas=2,
                   command=["python", "-m", "server", "--name", "it's"])
    assert serving_values(s) == {"servingName": "web", "servingVersion": "v1", "image": "registry.example.com/server:1",
                                 "replicas": 2, "command": "python -m server --name 'it'\"'\"'s'", "port": 8081}


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "--model-format/--image: give the model's format (with --storage-uri), or your own --image"),
    ({"model_format": "Sk Learn"}, "--model-format 'Sk Learn': not NAME[:VERSION]"),
    ({"image": "x:1", "storage_uri": "pvc://a/b"}, "--storage-uri: only a model (--model-format) has one"),
    ({"model_format": "sklearn", "storage_uri": "/models/iris"}, "--storage-uri '/models/iris': not a URI KServe"),
    ({"model_format": "sklearn", "replicas": 2, "min_replicas": 3}, "--replicas 2 and --min-replicas 3: give one"),
    ({"model_format": "sklearn", "min_replicas": 3, "max_replicas": 2}, "--max-replicas 2: fewer than --min-replicas 3"),
    ({"model_format": "sklearn", "canary_traffic_percent": 101}, "--canary-traffic-percent"),
    ({"model_format": "sklearn", "scale_metric": "gpu"}, "--scale-metric"),
])
def test_bad_kserve_input_is_one_line_naming_the_flag(fields, message):
    from arena_helm.serving.kinds.kserve import KServeSpec

    with pytest.raises(UsageError) as err:
        KServeSpec(name="iris", version="v1", **fields)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_inferenceservice_adds_its_url_and_readiness_to_its_predictors_view():
    from arena_helm.serving.servings import serving_view

    labels = {"servingName": "iris", "servingVersion": "v1", "servingType": "kserve", "release": "iris-v1"}
    release = {"name": "iris-v1", "namespace": "team", "chart": "kserve-0.1.0", "revision": "1", "status": "deployed"}
    isvc = {"metadata": {"name": "iris-v1", "labels": labels, "creationTimestamp": "2026-12-04T11:00:00Z"},
            "spec": {"predictor": {"minReplicas": 2, "model": {"modelFormat": {"name": "sklearn"}, "resources": {
                "limits": {"nvidia.com/gpu": "1"}}}}},
            "status": {"url": "http://iris-v1-team.example.com", "conditions": [{"type": "Ready", "status": "False"}]}}
    # KServe has made no Deployment yet: what the InferenceService asks for
    view = serving_view(release, None, None, [], isvc)
    assert (view.name, view.version, view.type, view.desired, view.available, view.gpus, view.url, view.rolled_out,
            view.created) == ("iris", "v1", "kserve", 2, 0, 1, "http://iris-v1-team.example.com", False,
                              "2026-12-04T11:00:00Z")
    deployment = {"metadata": {"name": "iris-v1-predictor", "labels": labels, "generation": 1,
                               "creationTimestamp": "2026-12-04T11:00:05Z"},
                  "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "kserve-container"}]}}},
                  "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2,
                             "readyReplicas": 2}}
    view = serving_view(release, deployment, None, [], isvc)
    assert (view.desired, view.available, view.rolled_out) == (2, 2, False)  # KServe does not say Ready yet
    isvc["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    view = serving_view(release, deployment, None, [], isvc)
    assert (view.rolled_out, view.created, view.to_json()["url"]) == (
        True, "2026-12-04T11:00:05Z", "http://iris-v1-team.example.com")


def test_serve_update_kserve_patches_only_the_given_flags():
    from arena_helm.core.servekinds import BY_KEY

    assert update_patch(BY_KEY["kserve"], "iris", "v1", {"canary_traffic_percent": 10, "storage_uri": "s3://m/2"}) == {
        "canaryTrafficPercent": 10, "storageUri": "s3://m/2"}
    assert update_patch(BY_KEY["kserve"], "iris", "v1", {"min_replicas": 3, "max_replicas": 5}) == {
        "replicas": 3, "maxReplicas": 5}


# ---- distributed -----------------------------------------------------------------------------------------------
def test_a_distributed_serving_gives_each_role_its_command_and_resources():
    from arena_helm.serving.kinds.distributed import DistributedServeSpec, DistributedServingValues

    s = DistributedServeSpec(name="llama", version="v1", image="vllm/vllm-openai:v0.12.0", command=["serve", "it's"])
    assert serving_values(s) == {"servingName": "llama", "servingVersion": "v1", "image": "vllm/vllm-openai:v0.12.0",
                                 "command": "serve 'it'\"'\"'s'"}
    s = DistributedServeSpec(**{"name": "llama", "version": "v1", "image": "i:1", "replicas": 2, "workers": 3,
                                "gpus": 8, "cpu": "16", "leader_command": "ray start --head", "shell": "bash",
                                "worker_command": "ray start --block", "worker_gpus": 4, "leader_memory": "256Gi",
                                "restful_port": 8000, "metrics_port": 8080})
    values = serving_values(s)
    assert values == {"servingName": "llama", "servingVersion": "v1", "image": "i:1", "replicas": 2, "gpus": 8,
                      "resources": {"requests": {"cpu": "16"}, "limits": {"cpu": "16"}}, "shell": "bash",
                      "workers": 3, "leader": {"command": "ray start --head", "memory": "256Gi"},
                      "worker": {"command": "ray start --block", "gpus": 4},
                      "ports": {"restful": 8000, "metrics": 8080}}
    DistributedServingValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({}, "--image: a distributed serving runs your image: give --image IMAGE"),
    ({"image": "i:1"}, "--leader-command: give the leader's command (or one command for every pod after the flags)"),
    ({"image": "i:1", "leader_command": "a"}, "--worker-command: give the worker's command"),
    ({"image": "i:1", "command": "a", "port": 80, "metrics_port": 80}, "two of them are the same port"),
    ({"image": "i:1", "command": "a", "workers": -1}, "--workers"),
])
def test_bad_distributed_input_is_one_line_naming_the_flag(fields, message):
    from arena_helm.serving.kinds.distributed import DistributedServeSpec

    with pytest.raises(UsageError) as err:
        DistributedServeSpec(name="llama", version="v1", **fields)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_leaderworkersets_groups_are_the_servings_replicas():
    labels = {"servingName": "llama", "servingVersion": "v1", "servingType": "distributed-serving",
              "release": "llama-v1"}
    release = {"name": "llama-v1", "namespace": "team", "chart": "distributed-serving-0.1.0", "revision": "2"}

    def template(gpus):
        return {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}

    lws = {"metadata": {"name": "llama-v1", "labels": labels, "generation": 2,
                        "creationTimestamp": "2026-12-04T11:00:00Z"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 4, "leaderTemplate": template(8),
                                                            "workerTemplate": template(4)}},
           "status": {"observedGeneration": 2, "replicas": 2, "readyReplicas": 1, "updatedReplicas": 2}}
    view = serving_view(release, None, None, [], lws)
    assert (view.name, view.version, view.type, view.desired, view.ready, view.available, view.gpus, view.rolled_out,
            view.created, view.revision) == ("llama", "v1", "distributed-serving", 2, 1, 1, 8 + 3 * 4, False,
                                             "2026-12-04T11:00:00Z", 2)
    lws["status"]["readyReplicas"] = 2
    assert serving_view(release, None, None, [], lws).rolled_out
    lws["metadata"]["generation"] = 3  # a new spec the controller has not seen yet
    assert not serving_view(release, None, None, [], lws).rolled_out


def test_update_of_one_key_of_a_map_leaves_its_other_keys_to_the_release():
    from arena_helm.core.servekinds import BY_KEY

    assert update_patch(BY_KEY["custom"], "web", "v1", {"port": 9000}) == {"ports": {"grpc": 9000}}
    assert update_patch(BY_KEY["custom"], "web", "v1", {"restful_port": 0}) == {"ports": {"restful": 0}}
    assert update_patch(BY_KEY["distributed"], "llama", "v1", {"worker_gpus": 8, "workers": 1,
                                                               "leader_command": "serve"}) == {
        "worker": {"gpus": 8}, "workers": 1, "leader": {"command": "serve"}}


def test_a_custom_servings_probes_come_from_arenas_flags():
    s = spec(restful_port=8501, readiness_probe_action="httpGet",
             readiness_probe_action_option=["path: /v1/models/mnist", "port: restful", "scheme=HTTP"],
             readiness_probe_option=["initialDelaySeconds: 5", "periodSeconds: 10"],
             liveness_probe_action="exec", liveness_probe_action_option=["command=sh -c 'test -e /models/m'"],
             startup_probe_action="tcpSocket", startup_probe_action_option=["port: 8501"])
    values = serving_values(s)
    assert values["probes"] == {
        "livenessProbe": {"exec": {"command": ["sh", "-c", "test -e /models/m"]}},
        "readinessProbe": {"httpGet": {"path": "/v1/models/mnist", "port": "restful", "scheme": "HTTP"},
                           "initialDelaySeconds": 5, "periodSeconds": 10},
        "startupProbe": {"tcpSocket": {"port": 8501}}}
    CustomServingValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"liveness_probe_option": ["periodSeconds: 3"]},
     "--liveness-probe-action: give the probe's action (httpGet, tcpSocket, grpc, exec) for its options"),
    ({"readiness_probe_action": "httpGet", "readiness_probe_action_option": ["path: /"]},
     "--readiness-probe-action-option: a httpGet probe needs its port"),
    ({"startup_probe_action": "exec"}, "--startup-probe-action-option: a exec probe needs its command"),
    ({"liveness_probe_action": "grpc", "liveness_probe_action_option": ["path: /"]},
     "--liveness-probe-action-option 'path: /': a grpc probe takes port, service"),
    ({"liveness_probe_action": "tcpSocket", "liveness_probe_action_option": ["port"]},
     "--liveness-probe-action-option 'port': not KEY: VALUE"),
    ({"liveness_probe_action": "tcpSocket", "liveness_probe_action_option": ["port: 80"],
      "liveness_probe_option": ["delay: 3"]}, "--liveness-probe-option 'delay: 3': one of initialDelaySeconds"),
    ({"liveness_probe_action": "http"}, "--liveness-probe-action"),
])
def test_bad_probe_flags_are_one_line_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as err:
        spec(**fields)
    assert message in str(err.value) and "\n" not in str(err.value)
