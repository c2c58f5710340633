"""``serve custom``: the user's image and command as the server (Arena's custom serving; charts/custom-serving)."""

from __future__ import annotations

import enum
import shlex
from typing import Any, ClassVar

from pydantic import Field, model_validator

from ...core.grammars import PORT_NAME_RX, Image, is_port_number, matches
from ...workload.chart_values import Empty, Probes, ValuesModel
from ...workload.spec import JobSpec, opt
from ..servings import ServeSpec, ServingValues, _shared

PORTS = (("port", "grpc"), ("restful_port", "restful"), ("metrics_port", "metrics"))  # flag field, port name
WORDS = "The serving command (joined with spaces; none: the image's entrypoint)."
PROBES = ("liveness", "readiness", "startup")
# what each probe action takes (Kubernetes' HTTPGetAction, TCPSocketAction, GRPCAction, ExecAction)
ACTION_KEYS = {"httpGet": ("path", "port", "host", "scheme"), "tcpSocket": ("port", "host"),
               "grpc": ("port", "service"), "exec": ("command",)}
TIMING_KEYS = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold",
               "terminationGracePeriodSeconds")


class ProbeAction(enum.StrEnum):
    """How a probe checks the server (Arena's --*-probe-action)."""

    httpGet = "httpGet"  # noqa: N815 - Kubernetes' spelling is the flag's value
    tcpSocket = "tcpSocket"  # noqa: N815
    grpc = "grpc"
    exec = "exec"


def _pair(text: str, flag: str) -> tuple[str, str]:
    """Arena's "KEY: VALUE" (or KEY=VALUE) of a probe option."""
    colon, equals = text.find(":"), text.find("=")
    cut = min(i for i in (colon, equals) if i >= 0) if max(colon, equals) >= 0 else -1
    key, value = (text[:cut].strip(), text[cut + 1:].strip()) if cut > 0 else ("", "")
    if not key or not value:
        raise ValueError(f"{flag} {text!r}: not KEY: VALUE (e.g. \"path: /healthz\")")
    return key, value


def _probe_port(value: str, action: str, text: str, flag: str) -> int | str:
    """A probe's port: a number 1-65535, or (not grpc's) a container port's name, an IANA service name
    (pkg/apis/core/validation ValidatePortNumOrName, validation.IsValidPortName)."""
    if value.isdigit():
        if not is_port_number(value):
            raise ValueError(f"{flag} {text!r}: port {value} is out of range: give 1-65535")
        return int(value)
    if action == "grpc" or not matches(PORT_NAME_RX, value):
        what = "a number 1-65535" + ("" if action == "grpc" else " or a port's name (at most 15 a-z, 0-9, '-', a letter)")
        raise ValueError(f"{flag} {text!r}: a {action} probe's port is {what}")
    return value


def probe_values(kind: str, action: ProbeAction | None, action_options: list[str], options: list[str]
                 ) -> dict[str, Any] | None:
    """One probe from Arena's three flags: --KIND-probe-action, its --KIND-probe-action-option "KEY: VALUE" (exec's
    command=WORDS, split as a shell splits), --KIND-probe-option "KEY: SECONDS". Checked by Kubernetes' rules
    (pkg/apis/core/validation/validation.go validateProbe, validateLivenessProbe, validateStartupProbe)."""
    flag = f"--{kind}-probe"
    if action is None:
        if action_options or options:
            raise ValueError(f"{flag}-action: give the probe's action (httpGet, tcpSocket, grpc, exec) for its options")
        return None
    act: dict[str, Any] = {}
    for text in action_options:
        key, value = _pair(text, f"{flag}-action-option")
        if key not in ACTION_KEYS[action.value]:
            raise ValueError(f"{flag}-action-option {text!r}: a {action.value} probe takes "
                             f"{', '.join(ACTION_KEYS[action.value])}")
        if key in act:
            raise ValueError(f"{flag}-action-option {text!r}: {key} is given twice: give it once")
        if key == "command":
            try:
                act[key] = shlex.split(value)
            except ValueError as exc:  # an unbalanced quote
                raise ValueError(f"{flag}-action-option {text!r}: the command cannot be split as a shell does "
                                 f"({str(exc).lower()})") from None
        elif key == "port":
            act[key] = _probe_port(value, action.value, text, f"{flag}-action-option")
        elif key == "scheme" and value not in ("HTTP", "HTTPS"):
            raise ValueError(f"{flag}-action-option {text!r}: the scheme is HTTP or HTTPS")
        else:
            act[key] = value
    needs = "command" if action is ProbeAction.exec else "port"
    if needs not in act:
        raise ValueError(f"{flag}-action-option: a {action.value} probe needs its {needs} (e.g. "
                         f"--{kind}-probe-action-option \"{'command=cat /tmp/healthy' if needs == 'command' else 'port: 8080'}\")")
    probe: dict[str, Any] = {action.value: act}
    for text in options:
        key, value = _pair(text, f"{flag}-option")
        if key not in TIMING_KEYS or not value.isdigit():
            raise ValueError(f"{flag}-option {text!r}: one of {', '.join(TIMING_KEYS)} and a whole number")
        if key in probe:
            raise ValueError(f"{flag}-option {text!r}: {key} is given twice: give it once")
        if key != "initialDelaySeconds" and int(value) < 1:
            raise ValueError(f"{flag}-option {text!r}: {key} is 1 or more")
        if key == "successThreshold" and kind in ("liveness", "startup") and value != "1":
            raise ValueError(f"{flag}-option {text!r}: a {kind} probe's successThreshold must be 1 (Kubernetes' rule)")
        probe[key] = int(value)
    return probe


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
    liveness_probe_action: ProbeAction | None = opt("The liveness probe's action: httpGet, tcpSocket, grpc, exec.")
    liveness_probe_action_option: list[str] = opt("An option of its action, \"KEY: VALUE\" (httpGet: path, port, "
                                                  "host, scheme; tcpSocket: port, host; grpc: port, service; exec: "
                                                  "command=WORDS) (repeatable).", [])
    liveness_probe_option: list[str] = opt("Its timing, \"KEY: SECONDS\" (initialDelaySeconds, periodSeconds, "
                                           "timeoutSeconds, successThreshold, failureThreshold) (repeatable).", [])
    readiness_probe_action: ProbeAction | None = opt("The readiness probe's action: httpGet, tcpSocket, grpc, exec.")
    readiness_probe_action_option: list[str] = opt("An option of its action, \"KEY: VALUE\", as the liveness "
                                                   "probe's (repeatable).", [])
    readiness_probe_option: list[str] = opt("Its timing, \"KEY: SECONDS\", as the liveness probe's (repeatable).",
                                            [])
    startup_probe_action: ProbeAction | None = opt("The startup probe's action: httpGet, tcpSocket, grpc, exec.")
    startup_probe_action_option: list[str] = opt("An option of its action, \"KEY: VALUE\", as the liveness probe's "
                                                 "(repeatable).", [])
    startup_probe_option: list[str] = opt("Its timing, \"KEY: SECONDS\", as the liveness probe's (repeatable).", [])

    @model_validator(mode="after")
    def _ports(self) -> CustomServeSpec:
        ports = [getattr(self, f) for f, _ in PORTS if getattr(self, f)]
        if len(set(ports)) < len(ports):
            raise ValueError("--port/--restful-port/--metrics-port: two of them are the same port: give each its own")
        self.probes()  # a bad probe flag is the user's input
        return self

    def probes(self) -> dict[str, Any]:
        """The probes of the flags, as the chart's probes value ({livenessProbe: {...}, ...})."""
        out = {}
        for kind in PROBES:
            probe = probe_values(kind, getattr(self, f"{kind}_probe_action"),
                                 getattr(self, f"{kind}_probe_action_option"), getattr(self, f"{kind}_probe_option"))
            if probe is not None:
                out[f"{kind}Probe"] = probe
        return out


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
    probes: Probes = Field(default_factory=Probes, description="The server container's probes (none by default).")


SPEC, VALUES = CustomServeSpec, CustomServingValues
workload_view = workload_shape = None  # its workload is the serving's Deployment
PLACEHOLDERS = {"image": "placeholder.invalid/image:0"}  # what a spec needs to be built for serve update's patch
UPDATES = {"command": ("command", "shell"), "shell": ("command", "shell"), "port": ("ports.grpc",),
           "restful_port": ("ports.restful",), "metrics_port": ("ports.metrics",),
           **{f"{kind}_{flag}": (f"probes.{kind}Probe",) for kind in PROBES
              for flag in ("probe_action", "probe_action_option", "probe_option")}}


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
    probes = spec.probes()
    if probes:
        out["probes"] = probes
    return out


def from_words(words: list[str]) -> dict[str, Any]:
    """The words after the flags: the command, joined with spaces (as submit's)."""
    return {"command": " ".join(words)}
