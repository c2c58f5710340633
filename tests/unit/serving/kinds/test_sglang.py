"""arena_helm.serving.kinds.sglang: an SGLang serving's flags -> values, its bad input, and serve update's patch."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.core.servekinds import BY_KEY
from arena_helm.serving.kinds.sglang import SglangServeSpec, SglangServingValues
from arena_helm.serving.servings import serving_type, serving_values, update_patch


def sglang(**kw) -> SglangServeSpec:
    return SglangServeSpec(**{"name": "qwen", "version": "v1", "model": "Qwen/Qwen2.5-0.5B-Instruct", **kw})


def test_an_sglang_serving_takes_a_model_and_one_gpu_by_default():
    assert serving_values(sglang()) == {"servingName": "qwen", "servingVersion": "v1", "gpus": 1,
                                        "model": "Qwen/Qwen2.5-0.5B-Instruct"}
    assert serving_type("sglang") == serving_type("sglang-serving") == "sglang-serving"


def test_sglang_flags_and_server_arguments_reach_their_values():
    s = sglang(model="/models/llama", gpus=4, tensor_parallel_size=2, context_length=8192, mem_fraction_static="0.85",
               port=8080, replicas=2, startup_timeout=3600,
               server_args=["--dtype", "half", "--served-model-name", "it's"],
               data=["models:/models"], env_from_secret=["HF_TOKEN=hf"], image="lmsysorg/sglang:v0.5.16")
    values = serving_values(s)
    assert values == {
        "servingName": "qwen", "servingVersion": "v1", "image": "lmsysorg/sglang:v0.5.16", "replicas": 2, "gpus": 4,
        "data": [{"claimName": "models", "mountPath": "/models", "readOnly": False}],
        "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "HF_TOKEN"}}}],
        "model": "/models/llama", "port": 8080, "tensorParallelSize": 2, "contextLength": 8192,
        "memFractionStatic": 0.85, "startupTimeoutSeconds": 3600,
        "extraArgs": ["--dtype", "half", "--served-model-name", "it's"]}
    SglangServingValues.model_validate(values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"model": ""}, "--model: give the model to serve"),
    ({"model": "not a model"}, "--model 'not a model': not a Hugging Face id (org/name) nor an absolute path"),
    ({"model": "org/name\n"}, "--model 'org/name\\n': not a Hugging Face id (org/name) nor an absolute path"),
    ({"gpus": 0}, "--gpus 0: the SGLang image runs on NVIDIA GPUs"),
    ({"gpus": 2, "tensor_parallel_size": 4}, "--tensor-parallel-size 4: more than the replica's 2 GPU(s)"),
    ({"mem_fraction_static": "1.5"}, "--mem-fraction-static: 1.5: give less than 1"),
    ({"port": 0}, "--port"),
])
def test_bad_sglang_input_is_one_line_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as err:
        sglang(**fields)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_update_patches_the_model_and_the_server_arguments_only():
    kind = BY_KEY["sglang"]
    assert update_patch(kind, "qwen", "v1", {"model": "org/other", "server_args": ["--dtype", "half"],
                                             "context_length": 4096}) == {
        "model": "org/other", "extraArgs": ["--dtype", "half"], "contextLength": 4096}
    with pytest.raises(UsageError, match="--gpus 0: the SGLang image runs on NVIDIA GPUs"):
        update_patch(kind, "qwen", "v1", {"gpus": 0})
