"""Arena's job info (issue #24): the annotation ``requestGPUsOfJobOwner`` on the job and every pod and the env
``workers`` and ``gpus`` of every training container are computed by the charts (``<chart>.jobInfo``) from the
values they render, so that a user's ``-f``/``--set*`` (or a plain helm user's values) are counted: the figures
are always what the rendered pods request.

Each case is rendered by the real helm, through ``arena-helm submit --dry-run`` (the generated values, then the
user's, merged by helm); the expected figures are worked out by hand in the table, and requestGPUs is also
checked against the rendered pods themselves (replicas x ``nvidia.com/gpu`` limits of the roles that train).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_charts import job_of, render_docs
from typer.testing import CliRunner

from arena_helm.cli import app
from arena_helm.core.jobkinds import BY_KEY

IMAGE = {"tfjob": "tf:2", "pytorchjob": "pt:2", "mpijob": "mpi:1", "jaxjob": "jax:0.4", "xgboostjob": "xgb:2",
         "paddlejob": "paddle:2"}
NOT_COUNTED = {("tfjob", "PS")}  # Arena counts chief, workers and evaluator (submit_tfjob.go)

# (kind, flags, -f file content or None, (workers, gpus, requestGPUs))
CASES = [
    # no overrides: Arena's command-line figures, as arena-helm wrote them before the charts computed them
    ("tfjob", ["--workers", "2", "--gpus", "1"], None, (2, 1, 2)),
    ("tfjob", ["--workers", "1", "--gpus", "2"], None, (1, 2, 2)),  # standalone: the one worker is the chief
    ("tfjob", ["--workers", "0", "--chief", "--gpus", "1"], None, (0, 1, 1)),
    ("tfjob", ["--workers", "2", "--ps", "1", "--ps-gpus", "3", "--chief", "--evaluator", "--gpus", "1"], None,
     (2, 1, 4)),
    ("pytorchjob", ["--workers", "3", "--gpus", "2"], None, (3, 2, 6)),
    ("mpijob", ["--workers", "2", "--gpus", "4"], None, (2, 4, 8)),
    ("jaxjob", ["--workers", "3", "--gpus", "1"], None, (3, 1, 3)),
    ("xgboostjob", ["--workers", "3", "--gpus", "1"], None, (3, 1, 3)),
    ("paddlejob", ["--workers", "2", "--servers", "1", "--gpus", "1"], None, (2, 1, 3)),
    # overrides: what is rendered
    ("pytorchjob", ["--workers", "2", "--gpus", "1", "--set", "worker.gpus=2"], "worker:\n  replicas: 4\n",
     (5, 1, 9)),
    ("tfjob", ["--workers", "2", "--gpus", "1", "--set", "worker.replicas=3,worker.gpus=2"], None, (3, 2, 6)),
    ("tfjob", ["--workers", "1", "--gpus", "1", "--set", "chief.gpus=4"], None, (1, 4, 4)),
    ("tfjob", ["--workers", "2", "--ps", "1", "--gpus", "1", "--set", "ps.gpus=2,evaluator.replicas=1"], None,
     (2, 1, 2)),  # the evaluator has the chart's default gpus (0); the PS's are not counted
    ("mpijob", ["--workers", "2", "--gpus", "1", "--set", "worker.replicas=3,launcher.gpus=1"], None, (3, 1, 4)),
    ("jaxjob", ["--workers", "1", "--set-json", 'worker={"replicas": 2, "gpus": 3}'], None, (2, 3, 6)),
    ("xgboostjob", ["--workers", "2", "--gpus", "1", "--set", "master.gpus=2"], None, (2, 2, 3)),
    ("paddlejob", ["--workers", "2", "--gpus", "1", "--set", "master.replicas=2,master.gpus=1"], None, (2, 1, 4)),
    # a user's own env and annotation of Arena's names lose to Arena's, from -e/-a and from -f alike
    ("pytorchjob", ["--workers", "2", "--gpus", "1", "-e", "workers=7", "-e", "A=1", "-a", "requestGPUsOfJobOwner=1"],
     None, (2, 1, 2)),
    ("pytorchjob", ["--workers", "2", "--gpus", "1"],
     "env:\n- {name: gpus, value: '7'}\n- {name: A, value: '1'}\nannotations: {requestGPUsOfJobOwner: '7'}\n",
     (2, 1, 2)),
]


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path, monkeypatch):
    (tmp_path / "none.yaml").write_text("{}\n")
    monkeypatch.setenv("ARENA_HELM_CONFIG", str(tmp_path / "none.yaml"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))


def dry_run(helm_bin: Path, tmp_path: Path, kind: str, flags: list[str], values_file: str | None) -> dict:
    extra = []
    if values_file is not None:
        (tmp_path / "over.yaml").write_text(values_file, encoding="utf-8")
        extra = ["-f", str(tmp_path / "over.yaml")]
    res = CliRunner().invoke(app, ["submit", kind, "--name", "job", "--image", IMAGE[kind], "--helm-binary",
                                   str(helm_bin), *flags, *extra, "--dry-run", "--", "python", "train.py"])
    assert res.exit_code == 0, res.output
    (job,) = [d for d in yaml.safe_load_all(res.stdout) if d and d["kind"] == BY_KEY[kind].kind]
    return job


def pod_gpus(template: dict) -> int:
    return sum(int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0))
               for c in template["spec"]["containers"])


@pytest.mark.parametrize(("kind", "flags", "values_file", "want"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_job_info_is_what_the_chart_renders(helm_bin, tmp_path, kind, flags, values_file, want):
    job = dry_run(helm_bin, tmp_path, kind, flags, values_file)
    workers, gpus, request = want
    specs = job["spec"][BY_KEY[kind].replica_key]
    rendered = sum(s.get("replicas", 1) * pod_gpus(s["template"]) for rtype, s in specs.items()
                   if (kind, rtype) not in NOT_COUNTED)
    assert rendered == request
    assert job["metadata"]["annotations"]["requestGPUsOfJobOwner"] == str(request)
    for rtype, spec in specs.items():
        assert spec["template"]["metadata"]["annotations"]["requestGPUsOfJobOwner"] == str(request), rtype
        (container,) = spec["template"]["spec"]["containers"]
        env = [(e["name"], e.get("value")) for e in container["env"] if e["name"] in ("workers", "gpus")]
        assert env == [("workers", str(workers)), ("gpus", str(gpus))], rtype
        if "A=1" in flags or values_file and "name: A" in values_file:  # the user's other variables stay
            assert ("A", "1") in [(e["name"], e.get("value")) for e in container["env"]], rtype


def test_values_output_leaves_the_job_info_to_the_chart(tmp_path):
    """``--dry-run -o values``: the generated values hold no job info (the chart computes it from them)."""
    res = CliRunner().invoke(app, ["submit", "pytorchjob", "--name", "job", "--image", "pt:2", "--workers", "2",
                                   "--gpus", "1", "-e", "A=1", "--dry-run", "-o", "values", "--", "python", "t.py"])
    assert res.exit_code == 0, res.output
    values = yaml.safe_load(res.stdout)
    assert values["env"] == [{"name": "A", "value": "1"}] and "annotations" not in values


def test_a_chart_user_gets_the_job_info_too(helm_bin):
    """Plain helm (no arena-helm): the pytorchjob chart with a master of 1 GPU and 3 workers of 2."""
    job = job_of(render_docs(helm_bin, "pytorchjob", {"image": "pt:2", "master": {"gpus": 1},
                                                      "worker": {"replicas": 3, "gpus": 2}}))
    assert job["metadata"]["annotations"] == {"requestGPUsOfJobOwner": "7"}
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        assert spec["template"]["spec"]["containers"][0]["env"] == [{"name": "workers", "value": "4"},
                                                                    {"name": "gpus", "value": "1"}]


def test_a_trainjob_carries_no_job_info(helm_bin):
    """Arena has no TrainJob (its descriptor: arena_metadata=False): the chart sets no job info."""
    res = CliRunner().invoke(app, ["submit", "trainjob", "--name", "job", "--helm-binary", str(helm_bin),
                                   "--workers", "2", "--gpus", "1", "--dry-run", "--", "torchrun", "t.py"])
    assert res.exit_code == 0, res.output
    (job,) = [d for d in yaml.safe_load_all(res.stdout) if d and d["kind"] == "TrainJob"]
    # only what made it (provenance), on the TrainJob alone; none of Arena's job info
    assert set(job["metadata"]["annotations"]) == {"arena-helm.kubeflow.org/version",
                                                   "arena-helm.kubeflow.org/command-line"}
    assert "annotations" not in job["spec"]["trainer"] and res.stdout.count("arena-helm.kubeflow.org/version") == 1
    assert "requestGPUsOfJobOwner" not in res.stdout
    assert not {"workers", "gpus"} & {e["name"] for e in job["spec"]["trainer"].get("env", [])}
