"""Tests of the Helm charts in charts/ (arena-common, tfjob, pytorchjob, mpijob, tensorboard).

Every helm-touching test runs with Helm 3 and Helm 4 (the ``helm_bin`` fixture). They cover (chart-testing
itself lints every chart: tests/repo/test_chart_testing.py):
- ``helm template`` of every chart with every ``ci/*-values.yaml``; the rendered
  Kubeflow custom resources validated against the vendored CRDs (tests/data/crds) made strict (a field the
  CRD does not declare fails: a real API server would silently prune it), the core objects with
  kubernetes-validate (strict);
- yamllint on the YAML files ct does not lint (ct.yaml, .yamllint, the checkov and Chart.yaml schema files);
  what the project asks of a Chart.yaml beyond ct's schema;
- values.schema.json: its shape, and that both helm versions reject wrong types, bad enums, unknown keys;
- exact paths of renders (command, env, GPUs, volumes, git-sync, labels, runPolicy, replica shapes, TensorBoard);
- the cross-field checks (a render fails once, listing every problem);
- golden files (tests/golden/);
- checkov on the rendered manifests (charts/.checkov.yaml lists the justified skips);
- the generated schemas and README tables are up to date; Chart.lock builds offline; packaging.

Golden files: a golden render that differs fails the test. After a deliberate chart change, regenerate
them with

    ARENA_HELM_UPDATE_GOLDEN=1 python -m pytest tests/charts/test_charts.py -k golden

and review the diff before committing.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml
from helmtools import REPO, RenderError, render_text
from yamllint import linter
from yamllint.config import YamlLintConfig

from arena_helm.adapters.charts import assemble_chart
from arena_helm.core.jobkinds import KINDS
from arena_helm.core.servekinds import SERVE_KINDS

UPDATE_GOLDEN = os.environ.get("ARENA_HELM_UPDATE_GOLDEN") == "1"

CHARTS_DIR = REPO / "charts"
GOLDEN_DIR = REPO / "tests" / "golden"
CRD_DIR = REPO / "tests" / "data" / "crds"
LIBRARY_CHARTS = ("arena-common",)
JOB_CHARTS = tuple(k.chart for k in KINDS if k.replica_key)
SERVING_CHARTS = tuple(k.chart for k in SERVE_KINDS)
APP_CHARTS = (*JOB_CHARTS, "tensorboard", "workspace", *SERVING_CHARTS, "traffic-split")
# tested in test_trainjob_chart.py; here: lint, Chart.yaml, packaging
TRAINER_CHARTS = tuple(k.chart for k in KINDS if not k.replica_key)
ALL_CHARTS = (*LIBRARY_CHARTS, *APP_CHARTS, *TRAINER_CHARTS)
JOB_KINDS = {k.kind for k in KINDS if k.replica_key}
REPLICA_SPECS_KEY = {k.kind: k.replica_key for k in KINDS if k.replica_key}
BASE = {"image": "registry.example.com/trainer:1.0", "command": "python train.py"}
# what each chart needs besides its defaults to render (a job: an image and a command; a custom serving: an image)
NEEDS = {"custom-serving": {"image": "registry.example.com/server:1.0"}, "vllm-serving": {"model": "org/llm"},
         "sglang-serving": {"model": "org/llm"},
         "kserve": {"modelFormat": {"name": "sklearn"}, "storageUri": "pvc://models/iris"},
         "distributed-serving": {"image": "registry.example.com/server:1.0", "command": "python -m server"},
         "traffic-split": {"servingName": "mnist", "ports": [{"name": "http", "port": 8000}],
                           "backends": [{"version": "v1", "service": "mnist-v1", "weight": 100}]},
         "tf-serving": {"modelPath": "/models/m"}, "triton-serving": {"modelRepository": "/models/repo"}}


def base_values(chart: str) -> dict:
    return dict(BASE) if chart in JOB_CHARTS else dict(NEEDS.get(chart, {}))


def ci_values(chart: str) -> list[Path]:
    return sorted((CHARTS_DIR / chart / "ci").glob("*-values.yaml"))


CI_CASES = [pytest.param(chart, path, id=f"{chart}-{path.stem}") for chart in APP_CHARTS for path in ci_values(chart)]


# ---------------------------------------------------------------------------------------------- rendering
@functools.cache
def _render_cached(helm: str, chart: str, values_json: str, release: str, namespace: str,
                   extra_args: tuple[str, ...]) -> str:
    # The values go to helm as JSON (helm reads it as YAML): YAML written by PyYAML leaves strings such as
    # "y" or "N" unquoted, which helm's YAML parser reads as booleans; and characters beyond the BMP must be
    # written raw (ensure_ascii=False), since helm's YAML parser rejects JSON's surrogate-pair escapes.
    with tempfile.TemporaryDirectory() as tmp:
        values_file = Path(tmp) / "values.json"
        values_file.write_text(values_json, encoding="utf-8")
        return render_text(helm, chart, None, release=release, namespace=namespace,
                           extra_args=("--values", str(values_file), *extra_args))


def render_docs(helm, chart: str, values: dict | None = None, *, release: str = "demo", namespace: str = "team-a",
                extra_args: tuple[str, ...] = ()) -> list[dict]:
    """helm template (cached per helm, chart, values): the rendered documents (fresh copies)."""
    text = render_text_cached(helm, chart, values, release=release, namespace=namespace, extra_args=extra_args)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def render_text_cached(helm, chart: str, values: dict | None = None, *, release: str = "demo",
                       namespace: str = "team-a", extra_args: tuple[str, ...] = ()) -> str:
    return _render_cached(str(helm), chart, json.dumps(values or {}, sort_keys=True, ensure_ascii=False), release,
                          namespace, tuple(extra_args))


def render_ci(helm, chart: str, path: Path, *, release: str = "demo") -> str:
    """Render with a ci values file given to helm as a file, exactly as chart-testing does."""
    return render_text_cached(helm, chart, None, release=release, extra_args=("--values", str(path)))


def render_error(helm, chart: str, values: dict, **kwargs) -> str:
    with pytest.raises(RenderError) as err:
        render_docs(helm, chart, values, **kwargs)
    return str(err.value)


def job_of(docs: list[dict]) -> dict:
    jobs = [d for d in docs if d["kind"] in JOB_KINDS]
    assert len(jobs) == 1, [d["kind"] for d in docs]
    return jobs[0]


def replica_specs(job: dict) -> dict:
    return job["spec"][REPLICA_SPECS_KEY[job["kind"]]]


def pod_spec(job: dict, rtype: str) -> dict:
    return replica_specs(job)[rtype]["template"]["spec"]


def main_container(job: dict, rtype: str) -> dict:
    containers = pod_spec(job, rtype)["containers"]
    assert len(containers) == 1
    return containers[0]


def env_of(container: dict) -> dict:
    names = [e["name"] for e in container.get("env", [])]
    assert len(names) == len(set(names)), names
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


# -------------------------------------------------------------------------- CRD schemas, made strict
def _strict(schema: dict, path: str = "") -> dict:
    """The CRD's structural schema as plain JSON Schema that rejects undeclared fields.

    - x-kubernetes-int-or-string -> anyOf integer/string; nullable -> type [..., "null"];
    - an object that neither lists additionalProperties nor sets x-kubernetes-preserve-unknown-fields gets
      additionalProperties: false (what the API server would prune is an error here); the root metadata is
      ObjectMeta, which the API server validates itself (checked by check_object_meta);
    - x-kubernetes-list-type / -list-map-keys stay: the validator below enforces them (set and map lists
      must not repeat an item or a key).
    """
    out: dict = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {name: _strict(sub, f"{path}.{name}") for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _strict(value, f"{path}[]")
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_strict(sub, path) for sub in value]
        elif key in ("x-kubernetes-int-or-string", "nullable", "x-kubernetes-validations"):
            continue
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if (out.get("type") == "object" and "additionalProperties" not in out
            and not schema.get("x-kubernetes-preserve-unknown-fields") and path != ".metadata"):
        out["additionalProperties"] = False
    return out


def _list_map_keys(validator, keys, instance, schema):
    if not validator.is_type(instance, "array"):
        return
    defaults = {k: (schema.get("items", {}).get("properties", {}).get(k, {}).get("default")) for k in keys}
    seen: dict = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = tuple(json.dumps(item.get(k, defaults[k]), sort_keys=True) for k in keys)
        if key in seen:
            yield jsonschema.ValidationError(
                f"duplicate entry for list-map keys {keys} = {key}: items {seen[key]} and {index}")
        seen[key] = index


def _list_type(validator, list_type, instance, schema):
    if list_type == "set" and validator.is_type(instance, "array"):
        dumped = [json.dumps(item, sort_keys=True) for item in instance]
        if len(dumped) != len(set(dumped)):
            yield jsonschema.ValidationError(f"list-type set has duplicates: {instance}")


_FORMATS = jsonschema.FormatChecker()
_FORMATS.checks("int32")(lambda v: not isinstance(v, int) or -(2**31) <= v < 2**31)
_FORMATS.checks("int64")(lambda v: not isinstance(v, int) or -(2**63) <= v < 2**63)
CRDValidator = jsonschema.validators.extend(
    jsonschema.Draft7Validator,
    {"x-kubernetes-list-map-keys": _list_map_keys, "x-kubernetes-list-type": _list_type},
)


@functools.cache
def crd_validators() -> dict[tuple[str, str], jsonschema.protocols.Validator]:
    """(apiVersion, kind) -> a strict validator, for every served version of every vendored CRD."""
    out = {}
    for path in sorted(CRD_DIR.glob("*/*.yaml")):
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                schema = _strict(version["schema"]["openAPIV3Schema"])
                # every object has these, whether or not its schema lists them (Istio's list spec and status only)
                for key, kind_ in (("apiVersion", "string"), ("kind", "string"), ("metadata", "object")):
                    schema["properties"].setdefault(key, {"type": kind_})
                out[(f"{group}/{version['name']}", kind)] = CRDValidator(schema, format_checker=_FORMATS)
    return out


def validate_custom_resource(doc: dict) -> None:
    validator = crd_validators()[(doc["apiVersion"], doc["kind"])]
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])
    check_object_meta(doc["metadata"])


LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                       r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def check_object_meta(meta: dict) -> None:
    """What the API server checks of ObjectMeta (the CRD schemas leave the root metadata open)."""
    assert set(meta) <= {"name", "namespace", "labels", "annotations"}, meta
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", meta["name"]) and len(meta["name"]) <= 63
    assert meta["namespace"] == "team-a"
    for key, value in (meta.get("labels") or {}).items():
        assert LABEL_KEY.match(key) and isinstance(value, str), (key, value)
        assert LABEL_VALUE.match(value) and len(value) <= 63, (key, value)
    for key, value in (meta.get("annotations") or {}).items():
        assert LABEL_KEY.match(key) and isinstance(value, str), (key, value)


K8S_VERSIONS = sorted({"1.25.0", kubernetes_validate.latest_version()})


def validate_core(doc: dict) -> None:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(doc, version, strict=True)
    check_object_meta(doc["metadata"])


def validate_docs(docs: list[dict]) -> None:
    assert docs, "nothing rendered"
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in crd_validators():
            validate_custom_resource(doc)
        else:
            assert doc["kind"] in {"Deployment", "Service", "Job", "PersistentVolumeClaim"}, doc["kind"]
            validate_core(doc)


# ============================================================================ lint, template, validation
@pytest.mark.parametrize(("chart", "values"), CI_CASES)
def test_ci_values_render_valid_objects(helm_bin, chart, values):
    docs = [d for d in yaml.safe_load_all(render_ci(helm_bin, chart, values)) if d]
    validate_docs(docs)
    kinds = sorted(d["kind"] for d in docs)
    if chart == "tensorboard":
        assert kinds == ["Deployment", "Service"]
    elif chart == "custom-serving":  # a Service only for a server with a port
        assert kinds == sorted(["Deployment", *(["Service"] if yaml.safe_load(values.read_text()).get("ports") else [])])
    elif chart == "kserve":  # KServe makes the Deployment and Service
        assert kinds == ["InferenceService"]
    elif chart == "traffic-split":  # a Service and the router's objects (an HTTPRoute a port)
        doc = yaml.safe_load(values.read_text())
        assert kinds == (["DestinationRule", "Service", "VirtualService"] if doc.get("router") == "istio"
                         else sorted(["Service", *["HTTPRoute"] * len(doc["ports"])]))
    elif chart == "distributed-serving":  # the LeaderWorkerSet controller makes the pods; a Service with a port
        assert kinds == ["LeaderWorkerSet", *(["Service"] if yaml.safe_load(values.read_text()).get("ports") else [])]
    elif chart in SERVING_CHARTS:
        assert kinds == ["Deployment", "Service"]
    elif chart == "workspace":  # its Service with a server, its home PVC unless an existing claim is the home
        values_doc = yaml.safe_load(values.read_text())
        assert kinds == sorted(["Job", *([] if values_doc.get("type") == "shell" else ["Service"]),
                                *([] if values_doc.get("home", {}).get("claimName") else ["PersistentVolumeClaim"])])
    else:
        expected_tb = ["Deployment", "Service"] if yaml.safe_load(values.read_text()).get("tensorboard", {}).get(
            "enabled") else []
        assert sorted(k for k in kinds if k not in JOB_KINDS) == expected_tb
        assert len([k for k in kinds if k in JOB_KINDS]) == 1


@pytest.mark.parametrize("chart", APP_CHARTS)
def test_kube_version_constraint(helm_bin, chart):
    values = base_values(chart)
    render_docs(helm_bin, chart, values, extra_args=("--kube-version", "1.20.2"))  # the test API server
    render_docs(helm_bin, chart, values, extra_args=("--kube-version", "1.33.1"))
    message = render_error(helm_bin, chart, values, extra_args=("--kube-version", "1.19.16"))
    assert "kubeVersion" in message or "incompatible" in message, message


def test_strict_crd_validation_can_fail(helm_bin):
    """The CRD check is real: an undeclared field, a wrong type and a duplicate list-map key all fail."""
    job = job_of(render_docs(helm_bin, "tfjob", BASE))
    validate_custom_resource(job)
    for mutate, expected in [
        (lambda j: main_container(j, "Worker").update(cpus=2), "cpus"),
        (lambda j: j["spec"]["runPolicy"].update(backoffLimit="3"), "backoffLimit"),
        (lambda j: j["spec"].update(tfReplicaSpec={}), "tfReplicaSpec"),
        (lambda j: main_container(j, "Worker").update(env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]),
         "env"),
        (lambda j: j["spec"]["runPolicy"].update(ttlSecondsAfterFinished=2**40), "ttlSecondsAfterFinished"),
    ]:
        bad = copy.deepcopy(job)
        mutate(bad)
        with pytest.raises(AssertionError, match=expected):
            validate_custom_resource(bad)


def test_kubernetes_validate_can_fail(helm_bin):
    docs = render_docs(helm_bin, "tensorboard", {})
    deployment = by_kind(docs, "Deployment")[0]
    validate_core(deployment)
    bad = copy.deepcopy(deployment)
    bad["spec"]["template"]["spec"]["containers"][0]["portz"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_core(bad)


# ============================================================================ Chart.yaml and YAML files
def _yamllint_config() -> YamlLintConfig:
    return YamlLintConfig(file=str(REPO / ".yamllint"))


def yaml_files_linted() -> list[Path]:
    """The YAML files ct lint does not lint (it lints every Chart.yaml, values.yaml and ci/*-values.yaml)."""
    return [REPO / "ct.yaml", REPO / ".yamllint", CHARTS_DIR / ".checkov.yaml", REPO / "tests/data/chart_schema.yaml"]


@pytest.mark.parametrize("path", yaml_files_linted(), ids=lambda p: str(p.relative_to(REPO)))
def test_yamllint(path):
    conf = _yamllint_config()
    if conf.is_file_ignored(str(path.relative_to(REPO))):
        pytest.fail(f"{path} is ignored by .yamllint")
    problems = list(linter.run(path.read_text(encoding="utf-8"), conf, str(path)))
    assert not problems, "\n".join(f"{path.name}:{p.line}:{p.column} {p.desc} ({p.rule})" for p in problems)


def test_yamllint_ignores_templates_and_catches_problems():
    conf = _yamllint_config()
    assert conf.is_file_ignored("charts/tfjob/templates/tfjob.yaml")
    problems = list(linter.run("a: yes\nb:  [1,2]\n", conf))
    assert {p.rule for p in problems} >= {"truthy"}


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_chart_yaml(chart):
    path = CHARTS_DIR / chart / "Chart.yaml"
    meta = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert meta["apiVersion"] == "v2"
    assert meta["name"] == chart
    assert meta["type"] == ("library" if chart in LIBRARY_CHARTS else "application")
    assert re.fullmatch(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?",
                        meta["version"])
    assert isinstance(meta["appVersion"], str) and meta["appVersion"]
    assert meta["kubeVersion"] == ">=1.20.0-0"
    assert meta["description"] and meta["keywords"]
    assert {"name": "arena-helm"} in meta["maintainers"]
    # a job chart states the kind it makes (its objects' createdBy label), the same as the kinds registry's
    stated = (meta.get("annotations") or {}).get("arena-helm.kubeflow.org/kind")
    assert stated == next((k.kind for k in KINDS if k.chart == chart), None), stated
    if chart in JOB_CHARTS:
        deps = {d["name"]: d for d in meta["dependencies"]}
        assert deps["arena-common"]["repository"] == "file://../arena-common"
        assert deps["tensorboard"]["repository"] == "file://../tensorboard"
        assert deps["tensorboard"]["condition"] == "tensorboard.enabled"
        for name, dep in deps.items():
            dep_meta = yaml.safe_load((CHARTS_DIR / name / "Chart.yaml").read_text(encoding="utf-8"))
            # a range (~X.Y.Z: X.Y.Z up to the next minor) that admits the dependency's own version
            m = re.fullmatch(r"~(\d+)\.(\d+)\.(\d+)", dep["version"])
            assert m, f"{chart} takes {name} as {dep['version']!r}, not a ~X.Y.Z range"
            have = tuple(int(x) for x in dep_meta["version"].split("-")[0].split("."))
            want = tuple(int(x) for x in m.groups())
            assert have[:2] == want[:2] and have >= want, f"{chart}: {name} {dep_meta['version']} not in {dep['version']}"
    elif chart in TRAINER_CHARTS or chart in ("workspace", *SERVING_CHARTS, "traffic-split"):
        assert meta["dependencies"] == [{"name": "arena-common", "version": "~0.1.0",
                                         "repository": "file://../arena-common"}]
    else:
        assert "dependencies" not in meta


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_chart_lock_builds_offline(helm_bin, chart, tmp_path):
    """Chart.lock is committed: `helm dependency build` must use it, offline, without complaint."""
    lock = yaml.safe_load((CHARTS_DIR / chart / "Chart.lock").read_text(encoding="utf-8"))
    meta = yaml.safe_load((CHARTS_DIR / chart / "Chart.yaml").read_text(encoding="utf-8"))
    assert [(d["name"], d["repository"]) for d in lock["dependencies"]] == [
        (d["name"], d["repository"]) for d in meta["dependencies"]]
    charts = tmp_path / "charts"
    shutil.copytree(CHARTS_DIR, charts, ignore=shutil.ignore_patterns("*.tgz"))
    proc = subprocess.run([str(helm_bin), "dependency", "build", str(charts / chart)], capture_output=True,
                          text=True, env=_isolated_helm_env(tmp_path))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "out of sync" not in output.lower(), output
    built = sorted(p.name for p in (charts / chart / "charts").glob("*.tgz"))
    assert built == sorted(f"{d['name']}-{d['version']}.tgz" for d in lock["dependencies"])


def _isolated_helm_env(tmp: Path) -> dict:
    env = dict(os.environ)
    for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[var] = str(tmp / var.lower())
    env["KUBECONFIG"] = str(tmp / "no-kubeconfig")
    return env


def test_package_charts_script(helm_bin, tmp_path):
    out = tmp_path / "repo"
    env = _isolated_helm_env(tmp_path) | {"HELM": str(helm_bin)}
    before = sorted(str(p) for p in CHARTS_DIR.glob("*/charts"))
    proc = subprocess.run(["bash", str(REPO / "scripts/package-charts.sh"), str(out)], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    index = yaml.safe_load((out / "index.yaml").read_text(encoding="utf-8"))
    assert sorted(index["entries"]) == sorted(ALL_CHARTS)
    for chart in ALL_CHARTS:
        version = yaml.safe_load((CHARTS_DIR / chart / "Chart.yaml").read_text())["version"]
        assert (out / f"{chart}-{version}.tgz").is_file()
    assert sorted(str(p) for p in CHARTS_DIR.glob("*/charts")) == before, "packaging touched the work tree"


def test_package_charts_script_says_what_it_does_and_what_it_lacks(tmp_path):
    script = str(REPO / "scripts/package-charts.sh")
    proc = subprocess.run(["bash", script, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("Package every chart of charts/ into a Helm repository")
    assert not (REPO / "--help").exists()
    proc = subprocess.run(["bash", script, str(tmp_path / "out")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HELM": "no-such-helm"})
    assert proc.returncode == 1 and proc.stderr == ("package-charts: no-such-helm not found (scripts/install-helm.sh "
                                                    "installs it; HELM names another)\n")
    assert not (tmp_path / "out").exists()


# ============================================================================ values.schema.json
def _schema(chart: str) -> dict:
    return json.loads((CHARTS_DIR / chart / "values.schema.json").read_text(encoding="utf-8"))


def _walk_schema(schema: dict, path: str = "", defs: dict | None = None):
    """Every sub-schema, following the references to shared definitions ($defs)."""
    defs = schema.get("$defs", {}) if defs is None else defs
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from _walk_schema(sub, f"{path}.{name}", defs)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _walk_schema(schema[key], f"{path}[{key}]", defs)
    for sub in schema.get("allOf", []) + schema.get("anyOf", []):
        if "$ref" in sub:
            yield from _walk_schema(defs[sub["$ref"].removeprefix("#/$defs/")], f"{path}[$ref]", defs)


def _deref(prop: dict, defs: dict) -> dict:
    """A property written {description, allOf: [{$ref}]}: the definition it refers to."""
    all_of = prop.get("allOf", [])
    return defs[all_of[0]["$ref"].removeprefix("#/$defs/")] if len(all_of) == 1 and "$ref" in all_of[0] else prop


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_values_schema_shape(chart):
    schema = _schema(chart)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert schema["properties"]["global"]["type"] == "object"
    if chart in JOB_CHARTS:
        assert schema["properties"]["arena-common"]["properties"] == {"global": {
            "type": "object", "description": schema["properties"]["global"]["description"]}}
        standalone = _schema("tensorboard")
        tensorboard = {k: v for k, v in standalone.items() if k not in ("$schema", "title", "description", "$defs")}
        embedded = {k: v for k, v in schema["properties"]["tensorboard"].items() if k != "description"}
        assert embedded == tensorboard, "the job chart's tensorboard schema differs from the tensorboard chart's"
        for name, definition in standalone["$defs"].items():  # and refers to the same definitions
            assert schema["$defs"][name] == definition, name
    for path, sub in _walk_schema(schema):
        if path and not path.endswith("]"):
            assert sub.get("description"), f"{chart}: {path} has no description"
        if "properties" in sub:
            assert sub.get("additionalProperties") is False, f"{chart}: {path} accepts unknown keys"
    values = yaml.safe_load((CHARTS_DIR / chart / "values.yaml").read_text(encoding="utf-8")) or {}
    jsonschema.Draft7Validator(schema).validate(values)
    for path in ci_values(chart):
        jsonschema.Draft7Validator(schema).validate(yaml.safe_load(path.read_text(encoding="utf-8")))


REPLICA_KEYS = {"replicas", "image", "command", "gpus", "devices", "resources", "nodeSelector", "annotations",
                "restartPolicy", "affinity"}
COMMON_JOB_KEYS = {
    "nameOverride", "image", "imagePullPolicy", "imagePullSecrets", "command", "shell", "workingDir", "env", "envFrom",
    "secretVolumes", "shmSize", "configFiles", "data", "hostPaths", "codeSync", "nodeSelector", "tolerations",
    "affinity", "terminationGracePeriodSeconds", "priorityClassName",
    "schedulerName", "serviceAccountName", "podSecurityContext", "securityContext", "hostNetwork", "hostPID",
    "hostIPC", "labels", "podLabels", "annotations", "queue", "provenance", "runPolicy", "tensorboard",
}
CONTRACT = {
    "tfjob": (COMMON_JOB_KEYS | {"chief", "worker", "ps", "evaluator", "successPolicy"},
              {"chief", "worker", "ps", "evaluator"}, True),
    "pytorchjob": (COMMON_JOB_KEYS | {"master", "worker", "nprocPerNode", "elasticPolicy"}, {"master", "worker"}, True),
    "mpijob": (COMMON_JOB_KEYS | {"mpiApiVersion", "launcher", "worker", "slotsPerWorker", "mpiImplementation",
                                  "sshAuthMountPath", "hostfilePath"}, {"launcher", "worker"}, False),
    "jaxjob": (COMMON_JOB_KEYS | {"worker"}, {"worker"}, True),
    "xgboostjob": (COMMON_JOB_KEYS | {"master", "worker"}, {"master", "worker"}, True),
    "paddlejob": (COMMON_JOB_KEYS | {"master", "worker"}, {"master", "worker"}, True),
}


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_values_contract(chart):
    """values.yaml and the schema hold exactly the contract's keys (the CLI generates these)."""
    keys, replica_blocks, has_port = CONTRACT[chart]
    values = yaml.safe_load((CHARTS_DIR / chart / "values.yaml").read_text(encoding="utf-8"))
    schema = _schema(chart)
    props = {name: _deref(prop, schema["$defs"]) for name, prop in schema["properties"].items()}
    assert set(values) == keys
    assert set(props) == keys | {"global", "arena-common"}
    for block in replica_blocks:
        expected = REPLICA_KEYS | ({"port"} if has_port else set())
        assert set(values[block]) == expected, block
        assert set(props[block]["properties"]) == expected, block
    assert set(values["codeSync"]) == set(props["codeSync"]["properties"]) == {
        "enabled", "mode", "repo", "ref", "root", "linkName", "image", "secretName", "depth", "env", "resources"}
    assert set(values["runPolicy"]) == set(props["runPolicy"]["properties"]) == {
        "cleanPodPolicy", "backoffLimit", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "suspend",
        "schedulingPolicy"}
    assert set(props["runPolicy"]["properties"]["schedulingPolicy"]["properties"]) == {
        "minAvailable", "queue", "priorityClass", "minResources", "scheduleTimeoutSeconds"}
    assert values["securityContext"]["allowPrivilegeEscalation"] is False
    assert "privileged" not in values["securityContext"]
    # a job's TensorBoard Service is NodePort, as Arena's job charts' tensorboardServiceType
    assert values["tensorboard"] == {"enabled": False, "inJobChart": True, "service": {"type": "NodePort"}}
    assert values["codeSync"]["image"] == "registry.k8s.io/git-sync/git-sync:v4.4.0"
    # Arena's defaults
    assert (values["imagePullPolicy"], values["shell"], values["workingDir"], values["shmSize"]) == (
        "Always", "sh", "/root", "2Gi")


def test_tensorboard_values_contract():
    values = yaml.safe_load((CHARTS_DIR / "tensorboard/values.yaml").read_text(encoding="utf-8"))
    assert values["image"] == "tensorflow/tensorflow:2.15.0"
    assert values["service"] == {"type": "ClusterIP", "port": 6006, "nodePort": None}
    assert values["hostPath"]["enabled"] is False
    assert set(values["pvc"]) == {"claimName", "mountPath"}
    assert set(values) | {"global"} == set(_schema("tensorboard")["properties"])


KEY_LINE = re.compile(r"^(\s*)([A-Za-z0-9_.\-/\"]+):(\s|$)")


@pytest.mark.parametrize("chart", ALL_CHARTS)
def test_every_value_is_commented(chart):
    lines = (CHARTS_DIR / chart / "values.yaml").read_text(encoding="utf-8").splitlines()
    missing = []
    for number, line in enumerate(lines):
        match = KEY_LINE.match(line)
        if not match or "#" in line.split(":", 1)[1]:
            continue
        previous = lines[number - 1].strip() if number else ""
        if not previous.startswith("#"):
            missing.append(f"{number + 1}: {line.strip()}")
    assert not missing, f"{chart}/values.yaml keys without a comment:\n" + "\n".join(missing)


SCHEMA_REJECTS = [
    ("tfjob", {"worker": {"replicas": "two"}}, "replicas"),
    ("tfjob", {"imagee": "x"}, "imagee"),
    ("tfjob", {"imagePullPolicy": "Sometimes"}, "imagePullPolicy"),
    ("tfjob", {"runPolicy": {"cleanPodPolicy": "Never"}}, "cleanPodPolicy"),
    ("tfjob", {"chief": {"replicas": 2}}, "replicas"),
    ("tfjob", {"labels": {"team": 7}}, "team"),
    ("tfjob", {"arena-common": {"extra": 1}}, "extra"),
    ("tfjob", {"labels": {"bad key": "v"}}, "bad key"),  # the label grammars: the schema's, not the templates'
    ("tfjob", {"labels": {"ok": "not ok!"}}, "ok"),
    ("tfjob", {"annotations": {"-bad": "x"}}, "-bad"),
    ("pytorchjob", {"codeSync": {"branch": "main"}}, "branch"),
    ("pytorchjob", {"master": {"replicas": 2}}, "replicas"),
    ("pytorchjob", {"env": [{"name": "A", "value": 1}]}, "value"),
    ("pytorchjob", {"nprocPerNode": 4}, "nprocPerNode"),
    ("pytorchjob", {"worker": {"gpus": -1}}, "gpus"),
    ("mpijob", {"mpiApiVersion": "v2"}, "mpiApiVersion"),
    ("mpijob", {"worker": {"port": 2222}}, "port"),
    ("mpijob", {"tensorboard": {"logdir": "/logs"}}, "logdir"),  # the subchart is disabled: the parent checks
    ("mpijob", {"data": [{"claimName": "d", "mountPath": "relative"}]}, "mountPath"),
    ("tensorboard", {"service": {"type": "Ingress"}}, "type"),
    ("tensorboard", {"hostpath": {"enabled": True}}, "hostpath"),
    ("tensorboard", {"pvc": {"claimName": "logs", "subPath": "x"}}, "subPath"),
]


@pytest.mark.parametrize(("chart", "values", "key"), SCHEMA_REJECTS,
                         ids=[f"{c}-{json.dumps(v)[:40]}" for c, v, _ in SCHEMA_REJECTS])
def test_schema_rejects(helm_bin, chart, values, key):
    message = render_error(helm_bin, chart, {**base_values(chart), **values})
    assert "values don't meet the specifications of the schema" in message, message
    assert key in message, message


@pytest.mark.parametrize("chart", APP_CHARTS)
def test_schema_accepts_global_values(helm_bin, chart):
    """helm passes `global` to every chart (and `arena-common: {global: {}}` to a job chart): both allowed."""
    values = {**base_values(chart), "global": {"imageRegistry": "x", "anything": [1]}}
    if chart in JOB_CHARTS:
        values["arena-common"] = {"global": {}}
        values["tensorboard"] = {"enabled": True, "global": {}}
    assert render_docs(helm_bin, chart, values)


# ============================================================================ exact paths
def test_command_env_and_image(helm_bin):
    job = job_of(render_docs(helm_bin, "tfjob", {
        **BASE, "shell": "bash", "workingDir": "/work", "imagePullPolicy": "Always",
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "x: y # z"}],
        "chief": {"replicas": 1, "command": "python chief.py", "image": "chief:2"},
    }))
    worker, chief = main_container(job, "Worker"), main_container(job, "Chief")
    assert worker["name"] == "tensorflow" and chief["name"] == "tensorflow"
    assert worker["command"] == ["bash", "-c", "python train.py"]
    assert chief["command"] == ["bash", "-c", "python chief.py"]
    assert worker["image"] == BASE["image"] and chief["image"] == "chief:2"
    assert worker["imagePullPolicy"] == "Always" and worker["workingDir"] == "/work"
    assert "args" not in worker
    # the values' env, then Arena's job info (one worker of no GPUs), then the no-GPU guard
    assert worker["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "x: y # z"},
                             {"name": "workers", "value": "1"}, {"name": "gpus", "value": "0"},
                             {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    assert worker["ports"] == [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}]
    assert worker["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["NET_RAW"]}}


def test_empty_command_runs_the_entrypoint(helm_bin):
    job = job_of(render_docs(helm_bin, "pytorchjob", {"image": "img"}))
    container = main_container(job, "Master")
    assert "command" not in container and "args" not in container and "workingDir" not in container


def test_gpus_and_devices_in_requests_and_limits(helm_bin):
    job = job_of(render_docs(helm_bin, "tfjob", {
        **BASE,
        "worker": {"replicas": 2, "gpus": 4, "devices": {"example.com/fpga": 1, "example.com/unused": 0},
                   "resources": {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"memory": "32Gi"}}},
        "ps": {"replicas": 1, "resources": {"requests": {"cpu": 2}}},
        "codeSync": {"enabled": True, "repo": "https://example.com/r.git"},
    }))
    worker = main_container(job, "Worker")
    assert worker["resources"] == {
        "requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 4, "example.com/fpga": 1},
        "limits": {"memory": "32Gi", "nvidia.com/gpu": 4, "example.com/fpga": 1},
    }
    assert "NVIDIA_VISIBLE_DEVICES" not in env_of(worker)
    assert "NVIDIA_VISIBLE_DEVICES" not in env_of(pod_spec(job, "Worker")["initContainers"][0])
    ps = main_container(job, "PS")
    assert ps["resources"] == {"requests": {"cpu": 2}}
    assert env_of(ps)["NVIDIA_VISIBLE_DEVICES"] == "void"
    assert env_of(pod_spec(job, "PS")["initContainers"][0])["NVIDIA_VISIBLE_DEVICES"] == "void"
    minimal = job_of(render_docs(helm_bin, "tfjob", BASE))
    assert "resources" not in main_container(minimal, "Worker")


def test_shm_data_and_host_paths(helm_bin):
    job = job_of(render_docs(helm_bin, "pytorchjob", {
        **BASE, "shmSize": "8Gi",
        "data": [{"claimName": "datasets", "mountPath": "/data", "readOnly": True, "subPath": "imagenet"},
                 {"claimName": "ckpt", "mountPath": "/ckpt"}],
        "hostPaths": [{"path": "/mnt/cache", "mountPath": "/cache", "readOnly": True},
                      {"path": "/x", "mountPath": "/y"}],
    }))
    spec = pod_spec(job, "Master")
    assert spec["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        {"name": "data-0", "persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}},
        {"name": "data-1", "persistentVolumeClaim": {"claimName": "ckpt"}},
        {"name": "hostpath-0", "hostPath": {"path": "/mnt/cache"}},
        {"name": "hostpath-1", "hostPath": {"path": "/x"}},
    ]
    assert main_container(job, "Master")["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "data-0", "mountPath": "/data", "subPath": "imagenet", "readOnly": True},
        {"name": "data-1", "mountPath": "/ckpt"},
        {"name": "hostpath-0", "mountPath": "/cache", "readOnly": True},
        {"name": "hostpath-1", "mountPath": "/y"},
    ]
    # by default a 2Gi memory-backed /dev/shm, as Arena; shmSize "" leaves the runtime's
    bare = job_of(render_docs(helm_bin, "pytorchjob", BASE))
    assert pod_spec(bare, "Master")["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory",
                                                                                "sizeLimit": "2Gi"}}]
    assert main_container(bare, "Master")["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    bare = job_of(render_docs(helm_bin, "pytorchjob", {**BASE, "shmSize": ""}))
    assert "volumes" not in pod_spec(bare, "Master") and "volumeMounts" not in main_container(bare, "Master")


def test_git_sync_init_container(helm_bin):
    values = {**BASE, "codeSync": {"enabled": True, "repo": "https://github.com/org/models.git", "ref": "v1.2",
                                   "secretName": "git-creds", "depth": 5}, "worker": {"replicas": 1, "gpus": 1}}
    job = job_of(render_docs(helm_bin, "tfjob", values))
    spec = pod_spec(job, "Worker")
    (sync,) = spec["initContainers"]
    assert sync["name"] == "git-sync"
    assert sync["image"] == "registry.k8s.io/git-sync/git-sync:v4.4.0"
    assert sync["args"] == ["--repo=https://github.com/org/models.git", "--ref=v1.2", "--root=/code",
                            "--link=models", "--one-time", "--depth=5"]
    assert sync["env"] == [
        {"name": "GITSYNC_USERNAME", "valueFrom": {"secretKeyRef": {"name": "git-creds", "key": "username"}}},
        {"name": "GITSYNC_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "git-creds", "key": "password"}}},
    ]
    assert sync["volumeMounts"] == [{"name": "code-sync", "mountPath": "/code"}]
    assert sync["securityContext"]["runAsNonRoot"] is True
    assert sync["securityContext"]["allowPrivilegeEscalation"] is False
    assert {"name": "code-sync", "emptyDir": {}} in spec["volumes"]
    assert {"name": "code-sync", "mountPath": "/code"} in main_container(job, "Worker")["volumeMounts"]
    assert "git-creds" not in json.dumps(main_container(job, "Worker"))

    public = job_of(render_docs(helm_bin, "tfjob", {**BASE, "codeSync": {
        "enabled": True, "repo": "git@github.com:org/data-tools.git", "root": "/src", "depth": 0}}))
    (sync,) = pod_spec(public, "Worker")["initContainers"]
    assert sync["args"] == ["--repo=git@github.com:org/data-tools.git", "--ref=HEAD", "--root=/src",
                            "--link=data-tools", "--one-time", "--depth=0"]
    assert sync["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    named = job_of(render_docs(helm_bin, "tfjob", {**BASE, "codeSync": {
        "enabled": True, "repo": "https://example.com/a/b/", "linkName": "code"}}))
    assert "--link=code" in pod_spec(named, "Worker")["initContainers"][0]["args"]
    off = job_of(render_docs(helm_bin, "tfjob", BASE))
    assert "initContainers" not in pod_spec(off, "Worker")


def _expected_labels(chart: str, release: str = "demo") -> dict:
    return {
        "app.kubernetes.io/name": chart, "app.kubernetes.io/instance": release,
        "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/part-of": "arena-helm",
        "helm.sh/chart": f"{chart}-0.1.0", "app": chart, "release": release,
        # Arena's labels (its charts' chart, heritage and createdBy)
        "chart": f"{chart}-0.1.0", "heritage": "Helm",
        "createdBy": {"tfjob": "TFJob", "pytorchjob": "PyTorchJob", "mpijob": "MPIJob", "jaxjob": "JAXJob",
                      "xgboostjob": "XGBoostJob", "paddlejob": "PaddleJob"}[chart],
    }


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_labels_annotations_and_queue(helm_bin, chart):
    values = {**BASE, "labels": {"team": "vision", "example.com/tier": "gold"},
              "annotations": {"example.com/owner": "alice: ops"}, "queue": "team-queue"}
    job = job_of(render_docs(helm_bin, chart, values, release="mnist"))
    expected = _expected_labels(chart, "mnist") | {"team": "vision", "example.com/tier": "gold"}
    assert job["metadata"]["labels"] == expected | {"kueue.x-k8s.io/queue-name": "team-queue"}
    # the user's, with Arena's requestGPUsOfJobOwner (the chart's defaults request no GPU)
    annotations = {"example.com/owner": "alice: ops", "requestGPUsOfJobOwner": "0"}
    assert job["metadata"]["annotations"] == annotations
    assert job["metadata"]["name"] == "mnist" and job["metadata"]["namespace"] == "team-a"
    for rtype, spec in replica_specs(job).items():
        assert spec["template"]["metadata"]["labels"] == expected, rtype
        assert spec["template"]["metadata"]["annotations"] == annotations, rtype
    renamed = job_of(render_docs(helm_bin, chart, {**BASE, "nameOverride": "other"}, release="mnist"))
    assert renamed["metadata"]["name"] == "other"
    assert renamed["metadata"]["labels"]["release"] == "mnist"


def test_pod_spec_pieces(helm_bin):
    values = {
        **BASE, "nodeSelector": {"pool": "gpu", "zone": "a"},
        "worker": {"replicas": 2, "nodeSelector": {"zone": "b", "gpu": "a100"}, "restartPolicy": "OnFailure"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]}}},
        "priorityClassName": "high", "schedulerName": "volcano", "imagePullSecrets": ["reg-a", "reg-b"],
        "podSecurityContext": {"fsGroup": 1000}, "securityContext": {"runAsUser": 1000},
        "hostNetwork": True, "hostPID": True, "hostIPC": True,
    }
    job = job_of(render_docs(helm_bin, "tfjob", values))
    worker = replica_specs(job)["Worker"]
    assert worker["replicas"] == 2 and worker["restartPolicy"] == "OnFailure"
    spec = worker["template"]["spec"]
    assert spec["nodeSelector"] == {"pool": "gpu", "zone": "b", "gpu": "a100"}
    assert spec["tolerations"] == values["tolerations"]
    assert spec["affinity"] == values["affinity"]
    assert spec["priorityClassName"] == "high" and spec["schedulerName"] == "volcano"
    assert spec["imagePullSecrets"] == [{"name": "reg-a"}, {"name": "reg-b"}]
    assert spec["securityContext"] == {"fsGroup": 1000}
    assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert spec["hostPID"] is True and spec["hostIPC"] is True
    assert spec["automountServiceAccountToken"] is False and "serviceAccountName" not in spec
    assert main_container(job, "Worker")["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["NET_RAW"]}, "runAsUser": 1000}
    defaults = pod_spec(job_of(render_docs(helm_bin, "tfjob", BASE)), "Worker")
    assert set(defaults) == {"automountServiceAccountToken", "containers", "volumes"}  # volumes: /dev/shm
    with_sa = pod_spec(job_of(render_docs(helm_bin, "tfjob", {**BASE, "serviceAccountName": "trainer"})), "Worker")
    assert with_sa["serviceAccountName"] == "trainer" and "automountServiceAccountToken" not in with_sa


def test_run_policy(helm_bin):
    job = job_of(render_docs(helm_bin, "pytorchjob", {**BASE, "runPolicy": {
        "cleanPodPolicy": "All", "backoffLimit": 0, "ttlSecondsAfterFinished": 3600, "activeDeadlineSeconds": 86400,
        "schedulingPolicy": {"minAvailable": 1, "queue": "q", "minResources": {"cpu": "4", "nvidia.com/gpu": 2}}}}))
    assert job["spec"]["runPolicy"] == {
        "cleanPodPolicy": "All", "backoffLimit": 0, "ttlSecondsAfterFinished": 3600, "activeDeadlineSeconds": 86400,
        "schedulingPolicy": {"minAvailable": 1, "queue": "q", "minResources": {"cpu": "4", "nvidia.com/gpu": 2}}}
    # no retries by default: PyTorch's replicas are Never, with no backoffLimit (under which the operator would
    # delete the failed pod); TF leaves it to the operator
    default = job_of(render_docs(helm_bin, "pytorchjob", {**BASE, "worker": {"replicas": 1}}))
    assert default["spec"]["runPolicy"] == {"cleanPodPolicy": "Running"}
    assert {r: s["restartPolicy"] for r, s in replica_specs(default).items()} == {"Master": "Never", "Worker": "Never"}
    assert job_of(render_docs(helm_bin, "tfjob", BASE))["spec"]["runPolicy"] == {"cleanPodPolicy": "Running"}
    mpi = job_of(render_docs(helm_bin, "mpijob", BASE))
    assert mpi["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 0}
    nulls = job_of(render_docs(helm_bin, "pytorchjob", {**BASE, "runPolicy": {"backoffLimit": None}}))
    assert nulls["spec"]["runPolicy"] == {"cleanPodPolicy": "Running"}


def test_tfjob_replica_types(helm_bin):
    standalone = job_of(render_docs(helm_bin, "tfjob", {**BASE, "chief": {"replicas": 1}, "worker": {"replicas": 0}}))
    assert standalone["apiVersion"] == "kubeflow.org/v1" and standalone["kind"] == "TFJob"
    assert list(replica_specs(standalone)) == ["Chief"]
    assert replica_specs(standalone)["Chief"]["replicas"] == 1
    full = job_of(render_docs(helm_bin, "tfjob", {
        **BASE, "chief": {"replicas": 1}, "ps": {"replicas": 2, "port": 2300}, "worker": {"replicas": 4},
        "evaluator": {"replicas": 1}, "successPolicy": "AllWorkers"}))
    assert {k: v["replicas"] for k, v in replica_specs(full).items()} == {"Chief": 1, "PS": 2, "Worker": 4,
                                                                         "Evaluator": 1}
    assert full["spec"]["successPolicy"] == "AllWorkers"
    assert main_container(full, "PS")["ports"][0] == {"name": "tfjob-port", "containerPort": 2300, "protocol": "TCP"}
    assert "successPolicy" not in standalone["spec"]


def test_pytorchjob_master_and_workers(helm_bin):
    job = job_of(render_docs(helm_bin, "pytorchjob", {
        **BASE, "nprocPerNode": "4", "master": {"gpus": 1}, "worker": {"replicas": 3, "gpus": 1, "port": 29500}}))
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "PyTorchJob"
    assert {k: v["replicas"] for k, v in replica_specs(job).items()} == {"Master": 1, "Worker": 3}
    assert job["spec"]["nprocPerNode"] == "4"
    for rtype, port in (("Master", 23456), ("Worker", 29500)):
        container = main_container(job, rtype)
        assert container["name"] == "pytorch"
        assert container["ports"] == [{"name": "pytorchjob-port", "containerPort": port, "protocol": "TCP"}]
        assert container["command"] == ["sh", "-c", "python train.py"]
    single = job_of(render_docs(helm_bin, "pytorchjob", BASE))
    assert list(replica_specs(single)) == ["Master"] and "nprocPerNode" not in single["spec"]


def test_mpijob_v2beta1(helm_bin):
    job = job_of(render_docs(helm_bin, "mpijob", {
        **BASE, "slotsPerWorker": 4, "mpiImplementation": "Intel", "worker": {"replicas": 2, "gpus": 4},
        "runPolicy": {"cleanPodPolicy": "All", "backoffLimit": 1}}))
    assert job["apiVersion"] == "kubeflow.org/v2beta1" and job["kind"] == "MPIJob"
    assert job["spec"]["slotsPerWorker"] == 4 and job["spec"]["mpiImplementation"] == "Intel"
    assert job["spec"]["sshAuthMountPath"] == "/root/.ssh"
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 1}
    assert {k: v["replicas"] for k, v in replica_specs(job).items()} == {"Launcher": 1, "Worker": 2}
    launcher, worker = main_container(job, "Launcher"), main_container(job, "Worker")
    assert launcher["name"] == worker["name"] == "mpi"
    assert launcher["command"] == ["sh", "-c", "python train.py"]
    assert worker["command"] == ["/usr/sbin/sshd", "-De"]
    assert "ports" not in launcher and "ports" not in worker
    assert env_of(launcher)["NVIDIA_VISIBLE_DEVICES"] == "void" and "NVIDIA_VISIBLE_DEVICES" not in env_of(worker)
    assert pod_spec(job, "Launcher")["automountServiceAccountToken"] is False
    custom = job_of(render_docs(helm_bin, "mpijob", {**BASE, "worker": {"replicas": 1, "command": "sleep 10"}}))
    assert main_container(custom, "Worker")["command"] == ["sh", "-c", "sleep 10"]


def test_mpijob_v1(helm_bin):
    job = job_of(render_docs(helm_bin, "mpijob", {**BASE, "mpiApiVersion": "v1", "worker": {"replicas": 3}}))
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "MPIJob"
    assert set(job["spec"]) == {"slotsPerWorker", "runPolicy", "mpiReplicaSpecs"}
    assert {k: v["replicas"] for k, v in replica_specs(job).items()} == {"Launcher": 1, "Worker": 3}
    assert main_container(job, "Launcher")["command"] == ["sh", "-c", "python train.py"]
    assert main_container(job, "Worker")["command"] == ["sleep", "infinity"]
    assert main_container(job, "Worker")["name"] == "mpi"
    assert "automountServiceAccountToken" not in pod_spec(job, "Launcher")
    assert pod_spec(job, "Worker")["automountServiceAccountToken"] is False


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_tensorboard_subchart(helm_bin, chart):
    values = {**BASE, "nameOverride": "mnist", "tensorboard": {
        "enabled": True, "nameOverride": "mnist", "logDir": "/logs/run-1",
        "pvc": {"claimName": "training-logs", "mountPath": "/logs"}}}
    docs = render_docs(helm_bin, chart, values, release="rel")
    validate_docs(docs)
    (deployment,), (service,) = by_kind(docs, "Deployment"), by_kind(docs, "Service")
    assert deployment["metadata"]["name"] == service["metadata"]["name"] == "mnist-tensorboard"
    for obj in (deployment, service, {"metadata": deployment["spec"]["template"]["metadata"]}):
        labels = obj["metadata"]["labels"]
        assert labels["release"] == labels["app.kubernetes.io/instance"] == "rel"
        assert labels["app.kubernetes.io/component"] == "tensorboard"
        assert labels["app.kubernetes.io/part-of"] == "arena-helm"
        assert (labels["role"], labels["app"]) == ("tensorboard", chart)  # Arena's labels
    assert service["spec"]["type"] == "NodePort"
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert [*container["command"], *container["args"]] == [
        "tensorboard", "--logdir", "/logs/run-1", "--bind_all", "--port", "6006"]
    assert {"name": "logs", "mountPath": "/logs", "readOnly": True} in container["volumeMounts"]
    assert {"name": "logs", "persistentVolumeClaim": {"claimName": "training-logs", "readOnly": True}} in (
        deployment["spec"]["template"]["spec"]["volumes"])
    default_name = render_docs(helm_bin, chart, {**BASE, "tensorboard": {"enabled": True}}, release="rel")
    assert by_kind(default_name, "Service")[0]["metadata"]["name"] == "rel-tensorboard"
    assert not by_kind(render_docs(helm_bin, chart, BASE), "Deployment")


def test_tensorboard_standalone(helm_bin):
    docs = render_docs(helm_bin, "tensorboard", {}, release="tb")
    validate_docs(docs)
    (deployment,), (service,) = by_kind(docs, "Deployment"), by_kind(docs, "Service")
    assert deployment["metadata"]["name"] == service["metadata"]["name"] == "tb-tensorboard"
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector == {"app.kubernetes.io/name": "tensorboard", "app.kubernetes.io/instance": "tb",
                        "app.kubernetes.io/component": "tensorboard"}
    assert service["spec"]["selector"] == selector
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= pod_labels.items() and pod_labels["helm.sh/chart"] == "tensorboard-0.1.0"
    for labels in (deployment["metadata"]["labels"], pod_labels, service["metadata"]["labels"]):
        assert (labels["role"], labels["app"], labels["release"]) == ("tensorboard", "tensorboard", "tb")
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["image"] == "tensorflow/tensorflow:2.15.0"
    assert container["args"] == ["--logdir", "/logs", "--bind_all", "--port", "6006"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/", "port": "http"}
    assert container["ports"] == [{"name": "http", "containerPort": 6006, "protocol": "TCP"}]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["automountServiceAccountToken"] is False
    assert [v["name"] for v in spec["volumes"]] == ["tmp"]
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["ports"] == [{"name": "http", "port": 6006, "targetPort": "http", "protocol": "TCP"}]

    node_port = render_docs(helm_bin, "tensorboard", {"service": {"type": "NodePort", "nodePort": 30606}})
    assert by_kind(node_port, "Service")[0]["spec"]["ports"][0]["nodePort"] == 30606
    host = render_docs(helm_bin, "tensorboard", {"logDir": "/h/run", "hostPath": {
        "enabled": True, "path": "/var/logs", "mountPath": "/h"}})
    host_spec = by_kind(host, "Deployment")[0]["spec"]["template"]["spec"]
    assert {"name": "logs", "hostPath": {"path": "/var/logs"}} in host_spec["volumes"]
    assert {"name": "logs", "mountPath": "/h", "readOnly": True} in host_spec["containers"][0]["volumeMounts"]
    assert render_docs(helm_bin, "tensorboard", {"enabled": False}) == []


def _mounts_at(container: dict, volumes: list[dict], path: str) -> list[dict]:
    """The volumes mounted at ``path`` in ``container`` (each as the pod declares it)."""
    by_name = {v["name"]: v for v in volumes}
    return [by_name[m["name"]] | {"readOnly": m.get("readOnly", False)}
            for m in container.get("volumeMounts", []) if m["mountPath"] == path]


LOCAL_LOGGING = {  # (spec, the replica types of the job, the writer pod's matchExpressions)
    "tfjob": ("TFJobSpec", {"workers": 2, "ps": 1}, ("Worker", "PS"), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/replica-type", "operator": "In", "values": ["worker"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "In", "values": ["0"]}]),
    "pytorchjob": ("PyTorchJobSpec", {"workers": 3}, ("Master", "Worker"), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/replica-type", "operator": "In", "values": ["master"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "In", "values": ["0"]}]),
    "mpijob": ("MPIJobSpec", {"workers": 2}, ("Launcher", "Worker"), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/job-role", "operator": "NotIn", "values": ["launcher", "master"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "NotIn", "values": ["1"]}]),
    "xgboostjob": ("XGBoostJobSpec", {"workers": 3}, ("Master", "Worker"), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/replica-type", "operator": "In", "values": ["master"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "In", "values": ["0"]}]),
    "paddlejob": ("PaddleJobSpec", {"workers": 2, "servers": 1}, ("Master", "Worker"), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/replica-type", "operator": "In", "values": ["worker"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "In", "values": ["0"]}]),
    "jaxjob": ("JAXJobSpec", {"workers": 2}, ("Worker",), [
        {"key": "training.kubeflow.org/job-name", "operator": "In", "values": ["mnist"]},
        {"key": "training.kubeflow.org/replica-type", "operator": "In", "values": ["worker"]},
        {"key": "training.kubeflow.org/replica-index", "operator": "In", "values": ["0"]}]),
}


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_tensorboard_with_local_logging_reads_the_writers_node_directory(helm_bin, chart):
    """--tensorboard without a --data PVC (Arena's isLocalLogging): every training container writes to the
    node directory mounted at --logdir, and TensorBoard mounts it read-only next to the pod that writes."""
    import arena_helm as specs  # the kinds' spec classes (arena_helm.core.jobkinds), by name
    from arena_helm.workload.submission import job_values

    cls, fields, rtypes, writer = LOCAL_LOGGING[chart]
    spec = getattr(specs, cls)(name="mnist", namespace="team-a", image="trainer:1", command="python train.py",
                               tensorboard=True, data=["data:/data"], **fields)
    docs = render_docs(helm_bin, chart, job_values(spec), release="mnist")
    validate_docs(docs)
    job = job_of(docs)
    for rtype in rtypes:
        pod = pod_spec(job, rtype)
        assert _mounts_at(main_container(job, rtype), pod["volumes"], "/training_logs") == [
            {"name": "hostpath-0", "hostPath": {"path": "/arena_logs/team-a/mnist"}, "readOnly": False}], rtype
    (deployment,), (service,) = by_kind(docs, "Deployment"), by_kind(docs, "Service")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][:2] == ["--logdir", "/training_logs"]
    assert _mounts_at(container, pod["volumes"], "/training_logs") == [
        {"name": "logs", "hostPath": {"path": "/arena_logs/team-a/mnist"}, "readOnly": True}]
    assert not any("persistentVolumeClaim" in v for v in pod["volumes"])  # the data PVC does not hold the logs
    assert pod["affinity"] == {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": writer}, "topologyKey": "kubernetes.io/hostname"}]}}
    assert service["spec"]["type"] == "NodePort"
    for labels in (deployment["metadata"]["labels"], deployment["spec"]["template"]["metadata"]["labels"],
                   service["metadata"]["labels"]):
        assert {k: labels[k] for k in ("role", "app", "release")} == {"role": "tensorboard", "app": chart,
                                                                       "release": "mnist"}


@pytest.mark.parametrize("stype", ["ClusterIP", "LoadBalancer"])
def test_a_jobs_tensorboard_service_type_can_be_chosen(helm_bin, stype):
    from arena_helm import TFJobSpec
    from arena_helm.workload.submission import job_values

    spec = TFJobSpec(name="t", image="i", command="c", tensorboard=True, logdir="s3://bucket/t",
                     tensorboard_service_type=stype)
    docs = render_docs(helm_bin, "tfjob", job_values(spec), release="t")
    assert by_kind(docs, "Service")[0]["spec"]["type"] == stype
    pod = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["tmp"] and "affinity" not in pod  # a URL: no volume
    assert not any("hostPath" in v for v in pod_spec(job_of(docs), "Chief").get("volumes", []))


# ============================================================================ cross-field checks
def _problems(message: str) -> list[str]:
    assert message.count("problem(s)") == 1, message
    return [line[4:] for line in message.splitlines() if line.startswith("  - ")]


def test_cross_field_problems_fail_once_listing_all(helm_bin):
    values = {
        "image": "", "command": "x",
        "worker": {"replicas": 2, "devices": {"nvidia.com/gpu": 1}},
        "chief": {"replicas": 1, "image": "chief:1"},
        "ps": {"replicas": 1},
        "codeSync": {"enabled": True, "repo": ""},
        "shmSize": "1Gi",
        "data": [{"claimName": "a", "mountPath": "/data"}, {"claimName": "b", "mountPath": "/dev/shm"}],
        "hostPaths": [{"path": "/x", "mountPath": "/data/"}],
        "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"},
                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
        "labels": {"release": "mine"},
        "runPolicy": {"schedulingPolicy": {"minAvailable": 10}},
        "evaluator": {"replicas": 1, "image": "e:1"},
        "successPolicy": "AllWorkers",
        "tensorboard": {"enabled": True, "nameOverride": "other", "hostPath": {"path": "/var/log/tb"}},
    }
    problems = _problems(render_error(helm_bin, "tfjob", values))
    expected = [
        "worker.replicas is 2 but no image is set",
        "worker.devices sets nvidia.com/gpu",
        "ps.replicas is 1 but no image is set",
        "runPolicy.schedulingPolicy.minAvailable is 10 but the job has only 5 pods",
        "codeSync.enabled is true but codeSync.repo is empty",
        "mountPath /dev/shm is used twice: by shmSize (/dev/shm) and by data[1]",
        "mountPath /data is used twice: by data[0] and by hostPaths[0]",
        "env[1]: \"A\" is defined twice (first in env[0])",
        "env[2]: NVIDIA_VISIBLE_DEVICES is managed by the chart",
        "labels: \"release\" is set by the chart",
        "tensorboard.nameOverride (\"other\") must name the job (\"demo\")",
        "tensorboard: hostPath.path is set but hostPath.enabled is false",  # the subchart's own check
    ]
    for text in expected:
        assert sum(text in p for p in problems) == 1, f"{text!r} not reported once in {problems}"
    assert len(problems) == len(expected), problems
    # The tfjob chart's own checks are reported together with the shared ones.
    problems = _problems(render_error(helm_bin, "tfjob", {**BASE, "worker": {"replicas": 0}, "ps": {"replicas": 1},
                                                            "successPolicy": "AllWorkers", "shmSize": "1Gi",
                                                            "hostPaths": [{"path": "/a", "mountPath": "/dev/shm"}]}))
    assert len(problems) == 3, problems
    assert any("parameter servers need workers" in p for p in problems)
    assert any("successPolicy AllWorkers needs worker.replicas > 0" in p for p in problems)


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_job_name_and_defaults_problems(helm_bin, chart):
    problems = _problems(render_error(helm_bin, chart, {}))  # the default values: no image
    defaults = yaml.safe_load((CHARTS_DIR / chart / "values.yaml").read_text(encoding="utf-8"))
    running = [key for key in CONTRACT[chart][1] if defaults[key]["replicas"] > 0]
    assert sorted(problems) == sorted(f"{key}.replicas is 1 but no image is set: set image (or {key}.image)"
                                      for key in running)
    problems = _problems(render_error(helm_bin, chart, {**BASE, "nameOverride": "x" * 56}))
    assert len(problems) == 1 and "is too long" in problems[0], problems
    problems = _problems(render_error(helm_bin, chart, BASE, release="1job"))
    assert len(problems) == 1 and "must start with a letter" in problems[0], problems
    problems = _problems(render_error(helm_bin, chart, {**BASE, "codeSync": {
        "enabled": True, "repo": "https://user:s3cret@example.com/r.git"}}))
    assert problems == ["codeSync.repo must not carry credentials (user:password@): put them in a Secret and set "
                        "codeSync.secretName"]


def test_tensorboard_under_another_chart_still_checks_itself(helm_bin, tmp_path):
    """Only under an arena-helm job chart does TensorBoard leave its checks to the parent."""
    umbrella = tmp_path / "umbrella"
    (umbrella / "templates").mkdir(parents=True)
    (umbrella / "Chart.yaml").write_text("apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n"
                                         "  - name: tensorboard\n    version: 0.1.0\n")
    assemble_chart("tensorboard", umbrella / "charts")
    proc = subprocess.run([str(helm_bin), "template", "u", str(umbrella), "--set", "tensorboard.hostPath.path=/x"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert _problems(proc.stderr) == [
        "hostPath.path is set but hostPath.enabled is false: host paths must be enabled explicitly"]


def test_tensorboard_problems(helm_bin):
    problems = _problems(render_error(helm_bin, "tensorboard", {
        "logDir": "/elsewhere/x", "pvc": {"claimName": "logs"},
        "hostPath": {"enabled": True, "path": ""}, "service": {"nodePort": 30001},
        "labels": {"app": "x", "role": "y"}}))
    assert len(problems) == 7, problems
    for text in ("pvc.claimName and hostPath.enabled are both set",
                 "hostPath.enabled is true but hostPath.path is empty",
                 "logDir \"/elsewhere/x\" is not inside pvc.mountPath",
                 "logDir \"/elsewhere/x\" is not inside hostPath",
                 "service.nodePort is set but service.type is ClusterIP",
                 "labels: \"app\" is set by the chart", "labels: \"role\" is set by the chart"):
        assert sum(text in p for p in problems) == 1, (text, problems)
    problems = _problems(render_error(helm_bin, "tensorboard", {"hostPath": {"path": "/var/log"}}))
    assert problems == ["hostPath.path is set but hostPath.enabled is false: host paths must be enabled explicitly"]
    problems = _problems(render_error(helm_bin, "tensorboard", {"logDir": "relative/dir"}))
    assert len(problems) == 1 and "absolute path or a URL" in problems[0]


# ============================================================================ golden files
GOLDEN_CASES = [("tfjob", "distributed"), ("tfjob", "full"), ("pytorchjob", "distributed"), ("mpijob", "minimal"),
                ("mpijob", "v1"), ("tensorboard", "distributed")]


@pytest.mark.parametrize(("chart", "name"), GOLDEN_CASES, ids=[f"{c}-{n}" for c, n in GOLDEN_CASES])
def test_golden(helm_bin, chart, name):
    text = render_ci(helm_bin, chart, CHARTS_DIR / chart / "ci" / f"{name}-values.yaml", release="mnist")
    path = GOLDEN_DIR / f"{chart}-{name}.yaml"
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with ARENA_HELM_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{chart} render differs from {path.relative_to(REPO)}; if intended: ARENA_HELM_UPDATE_GOLDEN=1")


# ============================================================================ NOTES.txt
@pytest.mark.parametrize("chart", APP_CHARTS)
def test_notes(helm_bin, chart, tmp_path, request):
    version = subprocess.run([str(helm_bin), "version", "--short"], capture_output=True, text=True).stdout
    env = _isolated_helm_env(tmp_path)
    if version.startswith("v3."):  # helm 3's `install --dry-run=client` still reads the cluster's capabilities
        env["KUBECONFIG"] = str(request.getfixturevalue("cluster").admin.kubeconfig)
    chart_dir = assemble_chart(chart, tmp_path)
    values = {**BASE, "nameOverride": "mnist", "tensorboard": {"enabled": True, "nameOverride": "mnist"}} \
        if chart in JOB_CHARTS else {**base_values(chart), **({} if chart == "traffic-split" else {"nameOverride": "mnist"})}
    proc = subprocess.run([str(helm_bin), "install", "rel", str(chart_dir), "-n", "team-a", "--dry-run=client",
                           "--values", "-"], input=yaml.safe_dump(values), capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("NOTES:", 1)[1]
    if chart in JOB_CHARTS:
        for line in ("arena-helm get mnist -n team-a", "arena-helm logs mnist -n team-a",
                     f"kubectl get {chart} mnist -n team-a", "kubectl port-forward service/mnist-tensorboard 6006:6006",
                     "helm uninstall rel -n team-a",
                     # a job's TensorBoard Service is a NodePort by default, as Arena's
                     "or, as its Service is a NodePort, at http://NODE_IP:NODE_PORT (arena-helm get mnist -n team-a"):
            assert line in notes, notes
    elif chart == "workspace":
        for line in ("Workspace mnist (jupyter) runs as Job mnist-1 in namespace team-a; it stops itself after 7200s "
                     "without activity.", "arena-helm workspace get mnist -n team-a",
                     "kubectl get jobs,pods -n team-a -l app.kubernetes.io/instance=rel",
                     "kubectl port-forward -n team-a service/mnist 8888",
                     "The home mnist-home is kept when the workspace stops."):
            assert line in notes, notes
    elif chart == "vllm-serving":
        for line in ("Serving rel runs as Deployment mnist (1 replica) in namespace team-a.",
                     "arena-helm serve get rel -n team-a", "Service mnist.team-a (ClusterIP), port http:8000",
                     "kubectl port-forward -n team-a service/mnist 8000",
                     "The OpenAI-compatible API (once the model has loaded): http://mnist.team-a:8000/v1"):
            assert line in notes, notes
    elif chart == "sglang-serving":
        for line in ("Serving rel runs as Deployment mnist (1 replica) in namespace team-a.",
                     "arena-helm serve get rel -n team-a", "Service mnist.team-a (ClusterIP), port http:30000",
                     "kubectl port-forward -n team-a service/mnist 30000",
                     "The OpenAI-compatible API (once the model has loaded): http://mnist.team-a:30000/v1 (models: "
                     "/v1/models; SGLang's own: /generate)"):
            assert line in notes, notes
    elif chart == "tf-serving":
        for line in ("Serving rel runs as Deployment mnist (1 replica) in namespace team-a.",
                     "Service mnist.team-a (ClusterIP), ports grpc:8500 restful:8501",
                     "The REST API: http://mnist.team-a:8501/v1/models/rel"):
            assert line in notes, notes
    elif chart == "traffic-split":
        for line in ("Traffic of serving mnist in namespace team-a: v1 100%, through the HTTPRoute mnist-http "
                     "(Gateway API).", "The mesh applies the weights to what reaches Service mnist.team-a http:8000.",
                     "arena-helm serve get mnist -n team-a"):
            assert line in notes, notes
    elif chart == "distributed-serving":
        for line in ("Serving rel runs as LeaderWorkerSet mnist (1 group of a leader and 1 worker) in namespace "
                     "team-a.", "arena-helm serve get rel -n team-a", "kubectl get leaderworkerset mnist -n team-a",
                     "No port is set: no Service."):
            assert line in notes, notes
    elif chart == "kserve":
        for line in ("Serving rel runs as InferenceService mnist in namespace team-a (a sklearn model from "
                     "pvc://models/iris); KServe makes its predictor mnist-predictor.",
                     "arena-helm serve get rel -n team-a", "kubectl get inferenceservice mnist -n team-a",
                     "Its URL, once ready: kubectl get inferenceservice mnist -n team-a -o jsonpath='{.status.url}'"):
            assert line in notes, notes
    elif chart == "triton-serving":
        for line in ("Serving rel runs as Deployment mnist (1 replica) in namespace team-a.",
                     "Service mnist.team-a (ClusterIP), ports http:8000 grpc:8001",
                     "kubectl port-forward -n team-a service/mnist 8000",
                     "The HTTP/REST API (once the models have loaded): http://mnist.team-a:8000/v2/models"):
            assert line in notes, notes
        assert "metrics" not in notes, notes
    elif chart == "custom-serving":
        for line in ("Serving rel runs as Deployment mnist (1 replica) in namespace team-a.",
                     "arena-helm serve get rel -n team-a", "kubectl rollout status -n team-a deployment/mnist",
                     "No port is set: no Service."):
            assert line in notes, notes
    else:
        assert "kubectl port-forward service/mnist-tensorboard 6006:6006 -n team-a" in notes, notes


# ============================================================================ checkov
def _checkov_command() -> list[str] | None:
    if importlib.util.find_spec("checkov") is not None:
        return [sys.executable, "-m", "checkov.main"]
    script = shutil.which("checkov")
    return [script] if script else None


def _as_pods(doc: dict) -> list[dict]:
    """Each replica's pod template of a Kubeflow job as a Pod: checkov's Kubernetes checks read Pods."""
    pods = []
    for rtype, spec in (doc["spec"].get(REPLICA_SPECS_KEY.get(doc["kind"], ""), {}) or {}).items():
        meta = spec["template"].get("metadata", {})
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{doc['metadata']['name']}-{rtype.lower()}", "namespace": doc["metadata"]["namespace"], **meta},
            "spec": spec["template"]["spec"]})
    return pods


CHECKOV_CANARY = "zz-canary"  # a deliberately bad Pod: proves that the checkov run reports failures


@pytest.fixture(scope="session")
def checkov_failures(helm_bin, tmp_path_factory) -> dict[str, list[str]]:
    """Run checkov once over every ci render (plus the canary): file stem -> failed check ids."""
    command = _checkov_command()
    if command is None:
        pytest.skip("checkov is not installed (pip install checkov, or the [test] extra)")
    out = tmp_path_factory.mktemp("checkov")
    for chart, values in [(c, v) for c in APP_CHARTS for v in ci_values(c)]:
        docs = [d for d in yaml.safe_load_all(render_ci(helm_bin, chart, values)) if d]
        docs += [pod for d in docs if d["kind"] in JOB_KINDS for pod in _as_pods(d)]
        (out / f"{chart}-{values.stem}.yaml").write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    (out / f"{CHECKOV_CANARY}.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "canary", "namespace": "team-a"},
        "spec": {"hostPID": True, "containers": [{"name": "c", "image": "busybox:1.36",
                                                  "securityContext": {"privileged": True}}]}}), encoding="utf-8")
    env = dict(os.environ, CKV_SKIP_PACKAGE_UPDATE_CHECK="true", BC_SKIP_MAPPING="TRUE")
    proc = subprocess.run([*command, "--config-file", str(CHARTS_DIR / ".checkov.yaml"), "-d", str(out),
                           "-o", "json"], capture_output=True, text=True, env=env, cwd=out)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    reports = report if isinstance(report, list) else [report]
    failures: dict[str, list[str]] = {}
    for rep in reports:
        assert rep["summary"]["parsing_errors"] == 0, rep["summary"]
        for failed in rep["results"]["failed_checks"]:
            failures.setdefault(Path(failed["file_path"]).stem, []).append(
                f"{failed['check_id']} {failed['resource']}: {failed['check_name']}")
    return failures


@pytest.mark.parametrize(("chart", "values"), CI_CASES)
def test_checkov(checkov_failures, chart, values):
    canary = checkov_failures.get(CHECKOV_CANARY, [])
    assert any(f.startswith("CKV_K8S_16 ") for f in canary) and any(f.startswith("CKV_K8S_17 ") for f in canary), (
        "checkov did not flag the privileged canary pod: the checkov run is not working")
    assert not checkov_failures.get(f"{chart}-{values.stem}"), "\n".join(checkov_failures[f"{chart}-{values.stem}"])


def test_checkov_skips_are_justified():
    text = (CHARTS_DIR / ".checkov.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    lines = text.splitlines()
    assert config["skip-check"], "no skips?"
    for check in config["skip-check"]:
        index = lines.index(f"  - {check}")
        assert lines[index - 1].strip().startswith("# ") and len(lines[index - 1].strip()) > 30, check
    for never in ("CKV_K8S_16", "CKV_K8S_17", "CKV_K8S_19", "CKV_K8S_20", "CKV_K8S_21", "CKV_K8S_28"):
        assert never not in config["skip-check"], f"{never} must be met by the charts, not skipped"


# ============================================================================ generated files
@pytest.mark.parametrize("script", ["gen-chart-readme.py", "gen-chart-schemas.py"])
def test_generated_files_are_current(script, tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # --check really detects staleness: on a copy with one changed description it exits 1.
    charts = tmp_path / "charts"
    shutil.copytree(CHARTS_DIR, charts)
    target = charts / "tfjob" / ("README.md" if script == "gen-chart-readme.py" else "values.schema.json")
    target.write_text(target.read_text(encoding="utf-8").replace("Shell that runs the command", "Shell of the command"),
                      encoding="utf-8")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--check", "--charts-dir", str(charts)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "tfjob" in proc.stderr, proc.stdout + proc.stderr


def test_readme_tables_cover_every_value():
    for chart in ALL_CHARTS:
        readme = (CHARTS_DIR / chart / "README.md").read_text(encoding="utf-8")
        for name in _schema(chart)["properties"]:
            if name not in ("global", "arena-common"):
                assert f"| `{name}` |" in readme, f"{chart}/README.md lacks {name}"


def test_no_machine_paths_in_chart_files():
    """Nothing of the machine that rendered them (the checkout, the helm cache) leaks into charts or goldens."""
    leaks = (str(REPO), ".cache/arena-helm")
    for path in [*CHARTS_DIR.rglob("*"), *GOLDEN_DIR.glob("*"), REPO / "ct.yaml", REPO / ".yamllint"]:
        if path.is_file() and path.suffix != ".tgz":
            text = path.read_text(encoding="utf-8")
            assert not any(leak in text for leak in leaks), path


@pytest.mark.parametrize(("chart", "rtype"), [("tfjob", "Worker"), ("pytorchjob", "Master"), ("mpijob", "Launcher")])
def test_full_values_text_reaches_the_pod(helm_bin, chart, rtype):
    """The YAML-hostile command and env value of ci/full-values.yaml come back byte for byte."""
    path = CHARTS_DIR / chart / "ci" / "full-values.yaml"
    values = yaml.safe_load(path.read_text(encoding="utf-8"))
    job = job_of([d for d in yaml.safe_load_all(render_ci(helm_bin, chart, path)) if d])
    container = main_container(job, rtype)
    assert container["command"] == ["bash", "-c", values["command"]]
    assert "{{ .Values.image }}" in values["command"] and "\n" in values["command"]
    assert env_of(container)["NOTE"] == values["env"][1]["value"]
