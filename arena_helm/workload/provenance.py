"""Provenance: what made a job, kept in its release (values key ``provenance``) and on the job object
(annotations), so that ``rerun`` and ``export`` can make it again. Pure.

- ``version``: arena-helm's version; ``commandLine``: the submit's words (a ``--notify`` URL masked: a webhook
  URL often carries its secret); ``submitLine``, a rerun's only: the submit command line it is equivalent to (the
  original's with the rerun's flags in place of its own), which ``export`` prints; ``gitCommit``: the commit
  ``--sync-branch`` named when the job was submitted (``git ls-remote``; a dry run leaves it out, as it names no
  cluster user either); ``spec``: the spec's fields that were set (JSON), without name and namespace, which a
  rerun gives anew (it sets its own submitting user too); ``preset``: the preset it was submitted as
  (``deepspeedjob``: its spec's defaults are the preset's), absent for a kind's own.
- ``rerun_values``: the values of a rerun. The old release's values are the base (they hold the user's own
  ``-f``/``--set`` values too); what the given flags change is what changes: the difference between the values
  the old spec and the new spec generate is laid over the old values (a key the new spec no longer sets is
  removed).
- ``image_digests``: what the images resolved to where the job ran: each container image's ``imageID`` as its
  pods report it (``repo@sha256:...``); ``get`` keeps them on the job object (annotation ``image-digests``) once
  the pods report them, so that they outlive the pods.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.jobkinds import PRESETS

if TYPE_CHECKING:
    from .spec import JobSpec

VERSION_ANNOTATION = "arena-helm.kubeflow.org/version"
COMMAND_ANNOTATION = "arena-helm.kubeflow.org/command-line"
GIT_COMMIT_ANNOTATION = "arena-helm.kubeflow.org/git-commit"
DIGESTS_ANNOTATION = "arena-helm.kubeflow.org/image-digests"  # image -> the digest its pods ran (JSON), by get
# how container runtimes prefix an imageID (dockershim / cri-dockerd: docker-pullable://repo@sha256:...)
IMAGE_ID_PREFIXES = ("docker-pullable://", "docker://")
NOT_SPEC = frozenset({"name", "namespace"})  # a rerun names and places the job anew (and sets its own user)
MASKED = {"--notify"}  # options whose value never reaches a record
MASK = "***"


def record(spec: JobSpec, command_line: list[str] | None = None, git_commit: str = "", *,
           submit_line: list[str] | None = None) -> dict[str, Any]:
    """The values block ``provenance`` of a submit; ``git_commit``: what ``--sync-branch`` resolved to;
    ``submit_line``: a rerun's equivalent submit command line."""
    from ..__about__ import __version__

    out: dict[str, Any] = {"version": __version__}
    if command_line:
        out["commandLine"] = mask(command_line)
    if submit_line:
        out["submitLine"] = mask(submit_line)
    if git_commit:
        out["gitCommit"] = git_commit
    out["spec"] = spec_fields(spec)
    preset = preset_of(spec)
    if preset:
        out["preset"] = preset
    return out


def preset_of(spec: JobSpec) -> str:
    """The preset whose spec ``spec`` is (``deepspeedjob``), "" for a kind's own: what a rerun rebuilds it as."""
    ref = f"{type(spec).__module__}:{type(spec).__name__}"
    return next((p.key for p in PRESETS if p.spec == ref), "")


def spec_fields(spec: JobSpec) -> dict[str, Any]:
    """The fields of ``spec`` that differ from their defaults, as JSON (what ``spec_from`` takes back)."""
    return json.loads(json.dumps(spec.model_dump(mode="json", exclude_defaults=True, exclude=set(NOT_SPEC))))


def mask(words: list[str]) -> list[str]:
    """The command line with the value of every ``MASKED`` option replaced by ``***`` (after ``--``: as given)."""
    out: list[str] = []
    hide = False
    for i, word in enumerate(words):
        if word == "--":
            return out + words[i:]
        if hide:
            out.append(MASK)
            hide = False
            continue
        name, eq, _ = word.partition("=")
        if name in MASKED:
            out.append(f"{name}={MASK}" if eq else word)
            hide = not eq
            continue
        out.append(word)
    return out


def of_values(values: dict[str, Any] | None) -> dict[str, Any]:
    """The provenance block of a release's values ({} when it has none: not submitted by arena-helm, or before
    arena-helm kept it)."""
    block = (values or {}).get("provenance")
    return block if isinstance(block, dict) else {}


def extras(old: Any, generated: Any) -> Any:
    """What the release's values ``old`` hold beyond what arena-helm generated (``generated``): the user's own
    ``-f``/``--set`` values. Dicts are compared key by key; a key generated but no longer in ``old`` is None
    (helm's way to remove a key); any other value that differs is taken whole."""
    if isinstance(old, dict) and isinstance(generated, dict):
        out: dict[str, Any] = {}
        for key, value in old.items():
            if key not in generated:
                out[key] = value
                continue
            diff = extras(value, generated[key])
            if diff is not _SAME:
                out[key] = diff
        for key in generated:
            if key not in old:
                out[key] = None
        return out or _SAME
    return _SAME if old == generated else old


_SAME = object()


def overlay(base: dict[str, Any], top: Any) -> dict[str, Any]:
    """``top`` laid over ``base`` as helm merges a values file: dicts key by key, None removes a key, any other
    value replaces. Returns a new dict."""
    if top is _SAME or not isinstance(top, dict):
        return dict(base)
    out = dict(base)
    for key, value in top.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = overlay(out[key], value)
        else:
            out[key] = value
    return out


def rerun_values(old_values: dict[str, Any], old_generated: dict[str, Any], new_generated: dict[str, Any],
                 new_provenance: dict[str, Any]) -> dict[str, Any]:
    """The values of a rerun: the new spec's generated values with the user's own values of the old release
    (``extras``) over them, and the rerun's own provenance."""
    base = {k: v for k, v in old_values.items() if k != "provenance"}
    generated = {k: v for k, v in old_generated.items() if k != "provenance"}
    out = overlay(new_generated, extras(base, generated))
    out["provenance"] = new_provenance
    return out


def image_digests(pods: list[dict]) -> dict[str, str]:
    """Image -> the digest reference (``repo@sha256:...``) the pods' container statuses report for it (init
    containers too); images whose pods report no digest yet (pulling, or a runtime that does not say) are left
    out."""
    out: dict[str, str] = {}
    for pod in pods:
        status = pod.get("status") or {}
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            image, image_id = str(cs.get("image") or ""), str(cs.get("imageID") or "")
            for prefix in IMAGE_ID_PREFIXES:
                image_id = image_id.removeprefix(prefix)
            if image and ("@sha256:" in image_id or image_id.startswith("sha256:")):
                out.setdefault(image, image_id)
    return dict(sorted(out.items()))


def recorded_digests(job: dict | None) -> dict[str, str]:
    """The digests ``get`` recorded on the job ({} when none, or not readable)."""
    raw = (((job or {}).get("metadata") or {}).get("annotations") or {}).get(DIGESTS_ANNOTATION) or ""
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def digests_to_record(job: dict | None, pods: list[dict]) -> dict[str, str] | None:
    """The job's digests with what its pods report now added, when that adds something (None: nothing new).
    An image keeps the digest first recorded for it: a later pull of a moved tag does not rewrite history."""
    known = recorded_digests(job)
    merged = {**image_digests(pods), **known}
    return dict(sorted(merged.items())) if merged != known else None


__all__ = ["COMMAND_ANNOTATION", "DIGESTS_ANNOTATION", "GIT_COMMIT_ANNOTATION", "VERSION_ANNOTATION",
           "digests_to_record", "extras", "image_digests", "mask", "of_values", "overlay", "record",
           "recorded_digests", "rerun_values", "spec_fields"]
