"""charts/trainjob: every rendered TrainJob is valid against the Trainer v2.3.0 CRD made strict (a field the CRD
does not declare fails), with both helms, for the ci values files and for ``submit trainjob --dry-run`` over
the flag combinations below; the values schema is the one generated from the TrainJobValues model (arena_helm.training.kinds.trainjob)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from helmtools import REPO, RenderError, render, render_text
from test_charts import crd_validators, validate_custom_resource
from typer.testing import CliRunner

from arena_helm import TrainJobSpec
from arena_helm.cli import app
from arena_helm.training.kinds.trainjob import TrainJobValues
from arena_helm.workload.spec import flag_of_field

CHART = "trainjob"
CI_FILES = sorted((REPO / "charts" / CHART / "ci").glob("*-values.yaml"))
RUNTIMES = sorted(p.stem.replace("_", "-") for p in (REPO / "tests/data/crds/trainer-v2.3.0/runtimes").glob("*.yaml"))
HOSTILE = "set -e\necho \"a: b # c\" 'q' {{ .Values.image }} && python train.py --lr=0.1  "


def trainjob_of(docs: list[dict]) -> dict:
    jobs = [d for d in docs if d["kind"] == "TrainJob"]
    assert len(jobs) == 1 and len(docs) == 1, [d["kind"] for d in docs]
    return jobs[0]


def dry_run(helm_bin: Path, *args: str) -> dict:
    res = CliRunner().invoke(app, ["submit", "trainjob", "-n", "team-a", "--helm-binary", str(helm_bin),
                                   "--dry-run", *args])
    assert res.exit_code == 0, res.output
    job = trainjob_of([d for d in yaml.safe_load_all(res.stdout) if d])
    validate_custom_resource(job)
    return job


def patch_pod(job: dict, rjob: str = "node") -> dict:
    patch = job["spec"]["runtimePatches"][0]
    assert patch["manager"] == "arena-helm/trainjob-chart"
    jobs = {j["name"]: j for j in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]}
    return jobs[rjob]["template"]["spec"]["template"]


# ------------------------------------------------------------------------------------------ ci values
@pytest.mark.parametrize("path", CI_FILES, ids=[p.stem for p in CI_FILES])
def test_ci_values_render_a_crd_valid_trainjob(helm_bin, path):
    values = yaml.safe_load(path.read_text())
    job = trainjob_of(render(helm_bin, CHART, values))
    validate_custom_resource(job)
    spec = job["spec"]
    assert spec["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org",
                                  "kind": values.get("runtime", {}).get("kind", "ClusterTrainingRuntime"),
                                  "name": values["runtime"]["name"] if "runtime" in values else "torch-distributed"}
    assert spec["trainer"]["numNodes"] == values.get("numNodes", 1)
    if values.get("command"):
        assert spec["trainer"]["command"] == [values.get("shell", "sh"), "-c", values["command"]]
    else:
        assert "command" not in spec["trainer"]
    assert spec.get("suspend", False) is values.get("suspend", False)


def test_full_values_carry_every_setting(helm_bin):
    values = yaml.safe_load((REPO / "charts/trainjob/ci/full-values.yaml").read_text())
    job = trainjob_of(render(helm_bin, CHART, values))
    trainer = job["spec"]["trainer"]
    assert trainer["resourcesPerNode"] == {
        "requests": {**values["resources"]["requests"], "nvidia.com/gpu": 8, "example.com/fpga": 1},
        "limits": {**values["resources"]["limits"], "nvidia.com/gpu": 8, "example.com/fpga": 1},
    }
    assert trainer["env"] == values["env"] and trainer["numProcPerNode"] == 8
    assert job["spec"]["activeDeadlineSeconds"] == 172800
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-vision"
    for rjob in ("node", "launcher"):
        pod = patch_pod(job, rjob)
        assert pod["metadata"]["annotations"] == values["annotations"]
        assert pod["metadata"]["labels"]["team"] == "vision"
        spec = pod["spec"]
        assert spec["nodeSelector"] == values["nodeSelector"] and spec["tolerations"] == values["tolerations"]
        assert spec["affinity"] == values["affinity"] and spec["serviceAccountName"] == "trainer"
        assert spec["imagePullSecrets"] == [{"name": "registry-credentials"}]
        assert [v["name"] for v in spec["volumes"]] == ["dshm", "data-0", "data-1", "hostpath-0", "secret-0"]
        assert spec["volumes"][-1] == {"name": "secret-0", "secret": {"secretName": "gcs-key", "defaultMode": 256}}
        assert spec["containers"] == [{"name": "node", "volumeMounts": [
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "data-0", "mountPath": "/data", "subPath": "mnist", "readOnly": True},
            {"name": "data-1", "mountPath": "/checkpoints"},
            {"name": "hostpath-0", "mountPath": "/datasets", "readOnly": True},
            {"name": "secret-0", "mountPath": "/var/secrets/gcs", "readOnly": True}]}]


# ------------------------------------------------------------------------ submit trainjob --dry-run
FLAG_CASES = {
    "defaults": [],
    "nodes-and-resources": ["--workers", "4", "--gpus", "2", "--cpu", "8", "--memory", "32Gi", "--device",
                            "example.com/fpga=1", "--nproc-per-node", "2"],
    "cpu-only": ["--workers", "2", "--cpu", "500m"],
    "volumes": ["-d", "training-data:/data", "-d", "ckpt:/ckpt", "--data-dir", "/mnt/ds:/datasets",
                "--share-memory", "4Gi"],
    "placement": ["--selector", "pool=gpu", "--toleration", "nvidia.com/gpu:NoSchedule", "--toleration", "all",
                  "--service-account", "trainer", "--image-pull-secret", "regcred"],
    "metadata": ["-l", "team=vision", "-a", "example.com/owner=alice", "--queue-name", "team-queue"],
    "lifecycle": ["--suspend", "--running-timeout", "2h"],
    "namespaced-runtime": ["--runtime", "team-torch", "--runtime-kind", "TrainingRuntime"],
    "entrypoint": ["--image-entrypoint"],
    **{f"runtime-{r}": ["--runtime", r, "--workers", "2"] for r in RUNTIMES},
}


@pytest.mark.parametrize("case", sorted(FLAG_CASES))
def test_submit_dry_run_renders_a_crd_valid_trainjob(helm_bin, case):
    args = FLAG_CASES[case]
    command = [] if case == "entrypoint" else ["--", HOSTILE]
    job = dry_run(helm_bin, "--name", "mnist", "--image", "registry.example.com/trainer:1.0", *args, *command)
    spec, trainer = job["spec"], job["spec"]["trainer"]
    assert trainer["image"] == "registry.example.com/trainer:1.0"
    if command:
        assert trainer["command"] == ["sh", "-c", HOSTILE]  # byte for byte
    else:
        assert "command" not in trainer
    kw = dict(zip(args[::2], args[1::2], strict=False))
    assert spec["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org",
                                  "kind": kw.get("--runtime-kind", "ClusterTrainingRuntime"),
                                  "name": kw.get("--runtime", "torch-distributed")}
    assert trainer["numNodes"] == int(kw.get("--workers", 1))
    if case == "nodes-and-resources":
        per_node = {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 2, "example.com/fpga": 1}
        assert trainer["resourcesPerNode"] == {"requests": per_node, "limits": per_node}
        assert trainer["numProcPerNode"] == 2
    elif case == "cpu-only":
        assert trainer["resourcesPerNode"] == {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}
        assert trainer["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    elif case == "volumes":
        pod = patch_pod(job)["spec"]
        assert pod["volumes"] == [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}},
            {"name": "data-0", "persistentVolumeClaim": {"claimName": "training-data"}},
            {"name": "data-1", "persistentVolumeClaim": {"claimName": "ckpt"}},
            {"name": "hostpath-0", "hostPath": {"path": "/mnt/ds"}}]
        assert [m["mountPath"] for m in pod["containers"][0]["volumeMounts"]] == ["/dev/shm", "/data", "/ckpt",
                                                                                  "/datasets"]
    elif case == "placement":
        pod = patch_pod(job)["spec"]
        assert pod["nodeSelector"] == {"pool": "gpu"} and pod["serviceAccountName"] == "trainer"
        assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                                      {"operator": "Exists"}]
        assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    elif case == "metadata":
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-queue"
        assert job["metadata"]["labels"]["team"] == "vision"
        meta = patch_pod(job)["metadata"]
        assert meta["labels"]["team"] == "vision" and meta["annotations"] == {"example.com/owner": "alice"}
        assert "kueue.x-k8s.io/queue-name" not in meta["labels"]
    elif case == "lifecycle":
        assert spec["suspend"] is True and spec["activeDeadlineSeconds"] == 7200
    else:
        assert "suspend" not in spec and "activeDeadlineSeconds" not in spec


@pytest.mark.parametrize(("field", "why"), TrainJobSpec.UNSUPPORTED, ids=[f for f, _ in TrainJobSpec.UNSUPPORTED])
def test_flags_a_trainjob_cannot_carry_are_refused_in_one_line(field, why):
    flag = flag_of_field(field)
    value = {"host_network": [], "tensorboard": [], "host_ipc": [], "host_pid": [], "rdma": [],
             "queue": []}.get(field)
    sample = {"priority": "high", "scheduler": "volcano", "working_dir": "/code", "image_pull_policy": "Always",
              "retry": "2", "ttl_after_finished": "1h", "clean_task_policy": "All", "sync_mode": "git",
              "sync_source": "https://example.com/a/b.git",
              "config_file": "train.yaml:/etc/train.yaml", "env_from": "s3-env"}.get(field)
    args = [flag] if value is not None else [flag, sample]
    res = CliRunner().invoke(app, ["submit", "tj", "--name", "m", "--dry-run", *args, "python", "t.py"])
    assert res.exit_code == 2
    assert res.output == f"error: {flag} cannot be used with a TrainJob: {why}\n"


def test_bad_runtime_names_are_refused_offline():
    res = CliRunner().invoke(app, ["submit", "tj", "--name", "m", "--dry-run", "--runtime", "Torch_X", "python"])
    assert res.exit_code == 2 and res.output.startswith("error: --runtime: ") and res.output.count("\n") == 1
    res = CliRunner().invoke(app, ["submit", "tj", "--name", "m", "--dry-run", "--runtime-kind", "Runtime"])
    assert res.exit_code == 2 and "--runtime-kind" in res.output


# ---------------------------------------------------------------------------------------- strictness
def test_the_strict_crd_check_refuses_unknown_fields_and_wrong_types(helm_bin):
    job = trainjob_of(render(helm_bin, CHART, {"image": "x:1", "command": "true"}))
    validate_custom_resource(job)
    validator = crd_validators()[("trainer.kubeflow.org/v1alpha1", "TrainJob")]
    for mutate in (
        lambda j: j["spec"]["trainer"].__setitem__("priorityClassName", "high"),
        lambda j: patch_pod(j).setdefault("spec", {}).__setitem__("priorityClassName", "high"),
        lambda j: patch_pod(j).setdefault("spec", {}).__setitem__("containers", [{"name": "node", "image": "x:2"}]),
        lambda j: j["spec"]["trainer"].__setitem__("numProcPerNode", "auto"),
        lambda j: j["spec"].__setitem__("runtimePatches", [{"trainingRuntimeSpec": {}}]),  # no manager
    ):
        bad = copy.deepcopy(job)
        mutate(bad)
        assert list(validator.iter_errors(bad)), json.dumps(bad["spec"])[:300]


def test_values_schema_refuses_unknown_keys(helm_bin):
    schema = json.loads((REPO / "charts/trainjob/values.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    for bad in ({"numNode": 2}, {"runtime": {"kind": "Runtime"}}, {"numNodes": 0}, {"priorityClassName": "x"},
                {"gpus": -1}, {"data": [{"claimName": "d"}]}):
        with pytest.raises(RenderError) as err:
            render_text(helm_bin, CHART, bad)
        assert "values don't meet the specifications of the schema" in str(err.value), str(err.value)
    for default in (yaml.safe_load((REPO / "charts/trainjob/values.yaml").read_text()),):
        assert TrainJobValues.model_validate(default).model_dump(by_alias=True, exclude_none=True) \
            == {k: v for k, v in default.items() if v is not None}


def test_helm_lint_strict_with_every_ci_values_file(helm_bin, tmp_path):
    import subprocess

    from arena_helm.adapters.charts import assemble_chart

    chart_dir = assemble_chart(CHART, tmp_path)
    for values in CI_FILES:
        proc = subprocess.run([str(helm_bin), "lint", "--strict", str(chart_dir), "--values", str(values)],
                              capture_output=True, text=True)
        assert proc.returncode == 0 and "[WARNING]" not in proc.stdout, f"{values.name}:\n{proc.stdout}{proc.stderr}"

