"""``rerun`` and ``export``: a job made again from what its release keeps (``arena_helm.workload.provenance``).

The release's values (``helm get values``) and the spec they record are read through the adapters; the rest
is pure: the new spec is the old one with the given fields over it, and its values are ``rerun_values``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import NotFoundError, UsageError
from ..core.jobkinds import BY_KIND, SUBMITTABLE
from ..workload.provenance import of_values

if TYPE_CHECKING:
    from ..workload.gateway import Cluster
    from ..workload.spec import JobSpec


@dataclass
class Recorded:
    """What a release keeps of the job it made."""

    kind: str
    name: str
    namespace: str
    values: dict[str, Any]  # the release's values (helm get values)
    provenance: dict[str, Any]  # its provenance block ({} when it has none)

    @property
    def submit_line(self) -> list[str]:
        """The submit command line that makes the job: a rerun's equivalent one (``submitLine``), else the
        command line itself; [] when none was recorded (the Python API)."""
        return [str(w) for w in self.provenance.get("submitLine") or self.provenance.get("commandLine") or []]

    @property
    def spec_fields(self) -> dict[str, Any]:
        return dict(self.provenance.get("spec") or {})

    @property
    def submit_key(self) -> str:
        """What it was submitted as: its preset (``deepspeedjob``), else its kind's key."""
        preset = str(self.provenance.get("preset") or "")
        return preset if preset in SUBMITTABLE else BY_KIND[self.kind].key

    def old_spec(self) -> JobSpec:
        return _spec(self.submit_key, self.name, self.namespace, self.spec_fields)


def read(c: Cluster, namespace: str, name: str, kind: str | None = None) -> Recorded:
    """The release of job ``name`` and what it recorded; one line when there is nothing to rerun from."""
    from .reader import find_job

    k, _, _, release = find_job(c, namespace, name, kind)
    if release is None:
        raise NotFoundError(f"{k} {name} in namespace {namespace} has no helm release (not submitted with "
                            "arena-helm or helm): there are no values to rerun it from")
    values = c.values(namespace, name)
    rec = Recorded(k, name, namespace, values, of_values(values))
    if not rec.spec_fields:
        raise UsageError(f"release {name} in namespace {namespace} keeps no arena-helm spec (installed with plain "
                         "helm, or by an arena-helm that did not record one): submit it anew")
    return rec


def _spec(key: str, name: str, namespace: str, fields: dict[str, Any]) -> JobSpec:
    from pydantic import ValidationError

    cls = SUBMITTABLE[key].spec_class()
    try:
        return cls(**{**fields, "name": name, "namespace": namespace})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "spec"
        raise UsageError(f"the spec release {name} recorded no longer validates ({where}: {err.get('msg')}): "
                         "submit it anew") from None


def new_spec(rec: Recorded, name: str, given: dict[str, Any]) -> JobSpec:
    """The rerun's spec: the recorded fields with the given ones over them (a repeatable flag given replaces
    the recorded list), named ``name`` in the recorded namespace."""
    fields = {**rec.spec_fields, **given}
    fields.pop("user", None)  # the rerunning user submits it
    return _spec(rec.submit_key, name, rec.namespace, fields)


def next_name(name: str, taken: set[str]) -> str:
    """``mnist`` -> ``mnist-2`` (``mnist-2`` -> ``mnist-3``): the first such name not taken."""
    stem, sep, tail = name.rpartition("-")
    base, n = (stem, int(tail)) if sep and tail.isdigit() and stem else (name, 1)
    while True:
        n += 1
        candidate = f"{base[:63 - len(str(n)) - 1]}-{n}"
        if candidate not in taken:
            return candidate


def command_line(rec: Recorded) -> str:
    """The submit command line that makes the job (a rerun's equivalent one), as a shell would take it
    (shlex-quoted words); "" when none was recorded."""
    return shlex.join(rec.submit_line)


__all__ = ["Recorded", "command_line", "new_spec", "next_name", "read"]
