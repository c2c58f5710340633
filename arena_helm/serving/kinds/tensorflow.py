"""``serve tensorflow``: a SavedModel behind TensorFlow Serving (Arena's tf-serving; charts/tf-serving).

The server is ``tensorflow_model_server --port=GRPC --rest_api_port=REST --model_name=NAME
--model_base_path=PATH`` (or ``--model_config_file=FILE`` for several models), as Arena's tfserving chart runs it
(kubeflow/arena charts/tfserving/templates/deployment.yaml), in the tensorflow/serving image (its -gpu tag with
GPUs). The model's versions are numbered folders under the path, on a mounted volume (``-d``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import AbsPath, Image
from ...workload.chart_values import Empty, ValuesModel
from ...workload.spec import opt
from ..servings import ServeSpec, ServingValues, changed_values

WORDS = "More arguments of tensorflow_model_server, passed as they are (e.g. --enable_batching=true)."


class TFServeSpec(ServeSpec):
    """A TensorFlow Serving serving: the model's gRPC API on --port and REST API on --restful-port
    (/v1/models/NAME:predict). Each field is the flag of the same name."""

    KIND: ClassVar[str] = "tensorflow"

    model_path: AbsPath | None = opt("Where the model's version folders are, in the container (under a -d mount); "
                                     "required without --model-config-file.")
    model_config_file: AbsPath | None = opt("TensorFlow Serving's model config file, in the container (several "
                                            "models): instead of --model-path.")
    monitoring_config_file: AbsPath | None = opt("TensorFlow Serving's monitoring config file, in the container.")
    port: int = opt("gRPC port (the Service's port grpc).", 8500, ge=1, le=65535)
    restful_port: int = opt("REST port (the Service's port restful; 0: none).", 8501, ge=0, le=65535)
    server_args: list[str] = Field([], description="More arguments of tensorflow_model_server (the words after "
                                   "the flags).", json_schema_extra={"flag": {"cli": False}})

    @model_validator(mode="after")
    def _tf(self) -> TFServeSpec:
        if not self.model_path and not self.model_config_file:
            raise ValueError("--model-path: give where the model is (a path under a -d mount), or "
                             "--model-config-file")
        if self.model_path and self.model_config_file:
            raise ValueError("--model-path and --model-config-file: give one (the config file names the models "
                             "and their paths)")
        if self.port == self.restful_port:
            raise ValueError(f"--port/--restful-port: both are {self.port}: give each its own")
        return self


class TFServingImages(ValuesModel):
    cpu: Image = Field("tensorflow/serving:2.19.0", description="Image without GPUs.")
    gpu: Image = Field("tensorflow/serving:2.19.0-gpu", description="Image with GPUs (gpus > 0).")


class TFServingValues(ServingValues):
    """The values of the tf-serving chart."""

    image: Empty | Image = Field("", description="Image; \"\" = images.gpu with GPUs, else images.cpu.")
    images: TFServingImages = Field(default_factory=TFServingImages, description="The default images.")
    model_name: str = Field("", description="--model_name; \"\" = the serving's name.")
    model_path: Empty | AbsPath = Field("", description="--model_base_path: the model's version folders, in the "
                                        "container (this or modelConfigFile is required).")
    model_config_file: Empty | AbsPath = Field("", description="--model_config_file, in the container.")
    monitoring_config_file: Empty | AbsPath = Field("", description="--monitoring_config_file, in the container.")
    port: int = Field(8500, ge=1, le=65535, description="gRPC port (the Service's port grpc).")
    restful_port: int = Field(8501, ge=0, le=65535, description="REST port (the Service's port restful); 0 = none.")
    extra_args: list[str] = Field([], description="More arguments of tensorflow_model_server, after arena-helm's.")


SPEC, VALUES = TFServeSpec, TFServingValues
workload_view = workload_shape = None  # its workload is the serving's Deployment
PLACEHOLDERS = {"model_path": "/placeholder"}  # what a spec needs to be built for serve update's patch
UPDATES = {"model_path": ("modelPath",), "model_config_file": ("modelConfigFile",),
           "monitoring_config_file": ("monitoringConfigFile",), "server_args": ("extraArgs",)}


def values(spec: TFServeSpec) -> dict[str, Any]:
    """What a TensorFlow serving adds to the common values: the model, the ports, more server arguments. Pure."""
    return {"modelName": spec.model_name or spec.name, **changed_values(spec, {
        "model_path": "modelPath", "model_config_file": "modelConfigFile", "monitoring_config_file": "monitoringConfigFile",
        "port": "port", "restful_port": "restfulPort", "server_args": "extraArgs"})}


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: more arguments of tensorflow_model_server, each as it is."""
    return {"server_args": list(words)}
