"""``serve custom``: the user's image and command as the server (Arena's custom serving; charts/custom-serving)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ..chart_values import Empty, ValuesModel
from ..k8s import Image
from ..serving import ServeSpec, ServingValues, _shared
from ..spec import JobSpec, opt

PORTS = (("port", "grpc"), ("restful_port", "restful"), ("metrics_port", "metrics"))  # flag field, port name
WORDS = "The serving command (joined with spaces; none: the image's entrypoint)."


class CustomServeSpec(ServeSpec):
    """A custom serving: the user's image and command as a Deployment (and a Service for its ports). Each field
    is the flag of the same name."""

    KIND: ClassVar[str] = "custom"
    IMAGE_REQUIRED: ClassVar[bool] = True

    command: str = Field("", description="The serving command, run as [SHELL, -c, COMMAND] byte for byte (none: "
                         "the image's entrypoint).", json_schema_extra={"flag": {"cli": False}})
    shell: str = _shared(JobSpec, "shell")
    port: int = opt("gRPC port the server listens on (0: none): the Service's port grpc.", 0, ge=0, le=65535)
    restful_port: int = opt("HTTP (REST) port the server listens on (0: none): the Service's port restful.", 0,
                            ge=0, le=65535)
    metrics_port: int = opt("Metrics port (0: none): the Service's port metrics.", 0, ge=0, le=65535)

    @model_validator(mode="after")
    def _ports(self) -> CustomServeSpec:
        ports = [getattr(self, f) for f, _ in PORTS if getattr(self, f)]
        if len(set(ports)) < len(ports):
            raise ValueError("--port/--restful-port/--metrics-port: two of them are the same port: give each its own")
        return self


class ServingPorts(ValuesModel):
    grpc: int = Field(0, ge=0, le=65535, description="gRPC port of the server (Service port grpc); 0 = none.")
    restful: int = Field(0, ge=0, le=65535, description="HTTP (REST) port of the server (Service port restful); "
                         "0 = none.")
    metrics: int = Field(0, ge=0, le=65535, description="Metrics port (Service port metrics); 0 = none.")


class CustomServingValues(ServingValues):
    """The values of the custom-serving chart."""

    image: Empty | Image = Field("", description="Image of the server (required).")
    command: str = Field("", description="The server's command, run as [shell, -c, command] byte for byte; \"\" = "
                         "the image's entrypoint.")
    shell: str = Field("sh", min_length=1, description="Shell that runs the command.")
    ports: ServingPorts = Field(default_factory=ServingPorts, description="The server's ports; the Service has one "
                                "port per port set (none set: no Service).")


SPEC, VALUES = CustomServeSpec, CustomServingValues
PLACEHOLDERS = {"image": "placeholder.invalid/image:0"}  # what a spec needs to be built for serve update's patch
UPDATES = {"command": ("command", "shell"), "shell": ("command", "shell"), "port": ("ports.grpc",),
           "restful_port": ("ports.restful",), "metrics_port": ("ports.metrics",)}


def values(spec: CustomServeSpec) -> dict[str, Any]:
    """What a custom serving adds to the common values: its command and ports. Pure."""
    out: dict[str, Any] = {}
    if spec.command:
        out["command"] = spec.command
        if spec.shell != "sh":
            out["shell"] = spec.shell
    ports = {name: getattr(spec, f) for f, name in PORTS if getattr(spec, f)}
    if ports:
        out["ports"] = ports
    return out


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: the command, joined with spaces (as submit's)."""
    return {"command": " ".join(words)}
