"""What one flag's text parses into: the small models of a job spec's repeatable flags (an environment variable,
a Secret's key or a whole Secret as env, a mounted Secret, a PVC, a host path, a local file, a toleration) and
the ``KEY=VALUE`` parsers. Each model takes the flag's text form (``parse``) or, from Python, its fields.
Pure, but for :meth:`ConfigFile.parse`, which reads the file the flag names (its content travels in the values).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from . import grammars as k8s
from .grammars import AbsPath, ConfigKey, DNSSubdomain, EnvName

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


# ---- parsing helpers --------------------------------------------------------------------------------
def split_kv(item: Any, what: str, example: str) -> tuple[str, str]:
    if not isinstance(item, str):
        raise ValueError(f"{item!r} is not {what} (expected {example})")
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ValueError(f"{item!r} is not {what} (expected {example})")
    return key, value


def kv_items(v: Any, what: str = "KEY=VALUE") -> Any:
    """``["a=b", ...]`` or a mapping -> a dict; a key given twice with two values is an error."""
    if isinstance(v, dict):
        return v
    out: dict[str, str] = {}
    for item in v or []:
        key, value = split_kv(item, what, "KEY=VALUE")
        if key in out and out[key] != value:
            raise ValueError(f"{key} is given twice ({out[key]!r} and {value!r}): give it once")
        out[key] = value
    return out


def check_labels(v: dict[str, str], what: str) -> dict[str, str]:
    for key, value in v.items():
        k8s.check_label_key(key, what)
        if len(value) > 63 or not k8s.matches(k8s.LABEL_VALUE_RX, value):
            raise ValueError(f"{what} {key}={value!r}: a value must be at most 63 letters, digits, '-', '_', '.', "
                             "starting and ending with a letter or digit")
    return v


# ---- small models -----------------------------------------------------------------------------------
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)  # built on first use


class EnvVar(Strict):
    name: EnvName
    value: str = ""

    def to_values(self) -> dict[str, str]:
        return {"name": self.name, "value": self.value}


class DataVolume(Strict):
    """A PersistentVolumeClaim mounted into every training container (``--data PVC:MOUNT``)."""

    claim_name: DNSSubdomain
    mount_path: AbsPath
    read_only: bool = False


class HostPathVolume(Strict):
    """A node directory mounted into every training container (``--data-dir HOST[:CONTAINER]``)."""

    path: AbsPath
    mount_path: AbsPath
    read_only: bool = False


class ConfigFile(Strict):
    """A local file mounted into every training container (``--config-file HOST_FILE[:CONTAINER_FILE]``, as in
    Arena: the container path defaults to the host path). Parsing the flag reads the file (UTF-8 text)."""

    host_file: str
    mount_path: AbsPath
    content: str

    @classmethod
    def parse(cls, text: str) -> "ConfigFile":
        import os

        host, sep, container = text.partition(":")
        if not host or (sep and not container) or ":" in container:
            raise ValueError(f"{text!r} is not HOST_FILE[:CONTAINER_FILE] (e.g. ./train.yaml:/etc/train.yaml)")
        host = os.path.abspath(os.path.expanduser(host))
        container = container or host
        if not container.startswith("/"):
            raise ValueError(f"{text!r}: the path in the container must be absolute")
        try:
            with open(host, encoding="utf-8") as f:
                content = f.read()
        except FileNotFoundError:
            raise ValueError(f"{host} does not exist: give a file that exists") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{host} cannot be read as UTF-8 text ({exc.__class__.__name__})") from None
        if len(content.encode()) > 900 * 1024:
            raise ValueError(f"{host} is over 900 KiB: a ConfigMap holds at most 1 MiB; put it on a --data PVC")
        return cls(host_file=host, mount_path=container, content=content)


class Toleration(Strict):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: str = ""

    @model_validator(mode="after")
    def _check(self) -> "Toleration":
        if self.effect and self.effect not in TAINT_EFFECTS:
            raise ValueError(f"toleration effect {self.effect!r} must be one of {', '.join(TAINT_EFFECTS)}")
        if self.operator == "Exists" and self.value:
            raise ValueError("a toleration with operator Exists takes no value")
        if self.key:
            k8s.check_label_key(self.key, "toleration")
        elif self.operator != "Exists":
            raise ValueError("a toleration without a key must use operator Exists")
        if self.value:
            k8s.check_label_value(self.value, "toleration value")
        return self

    @classmethod
    def parse(cls, text: str) -> "Toleration":
        """``all`` | ``KEY[=VALUE][:EFFECT][,OPERATOR]``."""
        if text == "all":
            return cls(operator="Exists")
        body, _, operator = text.partition(",")
        body, _, effect = body.partition(":")
        key, eq, value = body.partition("=")
        if not key or (":" in text and not effect) or ("," in text and not operator):
            raise ValueError(f"{text!r} is not a toleration (expected all or KEY[=VALUE][:EFFECT][,OPERATOR])")
        if operator and operator not in ("Equal", "Exists"):
            raise ValueError(f"toleration operator {operator!r} must be Equal or Exists")
        op = operator or ("Equal" if eq else "Exists")
        return cls(key=key, value=value, effect=effect, operator=op)

    def to_values(self) -> dict[str, str]:
        out = {"operator": self.operator}
        for k in ("key", "value", "effect"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        return out


class SecretEnv(Strict):
    """A variable from one key of a Secret (``--env-from-secret NAME=SECRET[:KEY]``: Arena's serving flag, whose
    key is always the variable's name; here the key can differ). Only the names reach the values."""

    name: EnvName
    secret: DNSSubdomain
    key: ConfigKey

    @classmethod
    def fields_of(cls, text: str) -> dict[str, str]:
        """The fields of the flag's text (validated by the model that holds them, so a problem names the flag)."""
        name, sep, rest = text.partition("=")
        secret, colon, key = rest.partition(":")
        if not sep or not name or not secret or (colon and not key):
            raise ValueError(f"{text!r} is not NAME=SECRET[:KEY] (e.g. HF_TOKEN=hf-token, or "
                             "AWS_ACCESS_KEY_ID=s3-credentials:access-key)")
        return {"name": name, "secret": secret, "key": key or name}

    def to_values(self) -> dict[str, Any]:
        return {"name": self.name, "valueFrom": {"secretKeyRef": {"name": self.secret, "key": self.key}}}


class EnvSource(Strict):
    """Every key of a Secret or a ConfigMap as a variable (``--env-from [secret:|configmap:]NAME``; a plain name is
    a Secret)."""

    kind: Literal["secret", "configmap"] = "secret"
    name: DNSSubdomain

    @classmethod
    def fields_of(cls, text: str) -> dict[str, str]:
        kind, sep, name = text.partition(":")
        if not sep:
            kind, name = "secret", text
        if kind not in ("secret", "configmap") or not name:
            raise ValueError(f"{text!r} is not SECRET, secret:SECRET or configmap:CONFIGMAP")
        return {"kind": kind, "name": name}

    def to_values(self) -> dict[str, Any]:
        return {"secretRef" if self.kind == "secret" else "configMapRef": {"name": self.name}}


class SecretVolume(Strict):
    """A Secret mounted read-only, each key a file (``--secret SECRET:PATH``)."""

    secret: DNSSubdomain
    mount_path: AbsPath

    @classmethod
    def fields_of(cls, text: str) -> dict[str, str]:
        secret, sep, path = text.partition(":")
        if not sep or not secret or not path:
            raise ValueError(f"{text!r} is not SECRET:PATH (e.g. gcs-key:/var/secrets/gcs)")
        return {"secret": secret, "mount_path": path}

    def to_values(self) -> dict[str, Any]:
        return {"secretName": self.secret, "mountPath": self.mount_path}
