"""What a command accepts at the edge of what it allows, the API server accepts too: every family's dry run at its
longest name and at edge values (label keys and values at their limits, ports 1 and 65535, probes by Kubernetes'
rules, durations of one second, the smallest sizes) is created on the real API server with ``dryRun=All`` and
strict field validation (``kubectl create --dry-run=server --validate=strict``: the CRDs' schemas and CEL rules,
the operators' admission webhooks, the built-in types' validation); nothing is written. One character more is
refused by the command itself: one line naming the flag, exit 2 (the limits follow from every object a family
makes)."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from clictx import cli as make_cli
from helmtools import kubectl_path

pytestmark = pytest.mark.cluster

NAME = "\0name"  # replaced by the case's name
# a label key at its limits (a DNS subdomain prefix, a 63-character name) and a value of 63 characters
LABEL = f"{'p' * 50}.example.com/{'k' * 63}={'v' * 63}"
SERVE = ["--version", "v1", "-l", LABEL, "--annotation", "note.example.com/a=b"]
JOB = ["-l", LABEL, "--annotation", "note.example.com/a=b", "--running-timeout", "1s"]

# the one line that refuses a name one character longer than the longest the command takes ({name}: that name)
KIND_LIMIT = ("--name: job name '{{name}}' is {over} characters; at most {longest} fit this {kind} (its pod names and "
              "the helm release name have length limits)")
RELEASE_LIMIT = ("--name/--version: the release '{name}-v1' is 54 characters; helm allows 53: shorten the name or the "
                 "version")


def job(kind: str, longest: int) -> str:
    return KIND_LIMIT.format(over=longest + 1, longest=longest, kind=kind)


# (id, the longest name the command takes, the refusal of one character more, its words)
CASES = [
    ("tfjob", 51, "--name: job name '{name}' is 52 characters; at most 51 fit a job with --tensorboard (its "
     "TensorBoard's Service is <name>-tensorboard, a DNS label of at most 63)",
     ["submit", "tfjob", "--name", NAME, "--image", "busybox", "--workers", "2", "--ps", "1", "--tensorboard",
      "--logdir", "/logs", *JOB, "--", "python", "t.py"]),
    ("pytorchjob", 53, job("pytorchjob", 53),
     ["submit", "pytorchjob", "--name", NAME, "--image", "busybox", "--workers", "3", *JOB, "--", "python", "t.py"]),
    ("mpijob", 52, job("mpijob", 52),
     ["submit", "mpijob", "--name", NAME, "--image", "busybox", "--workers", "2", *JOB, "--", "python", "t.py"]),
    ("jaxjob", 53, job("jaxjob", 53),
     ["submit", "jaxjob", "--name", NAME, "--image", "busybox", "--workers", "2", *JOB, "--", "python", "t.py"]),
    ("xgboostjob", 53, job("xgboostjob", 53),
     ["submit", "xgboostjob", "--name", NAME, "--image", "busybox", "--workers", "2", *JOB, "--", "python", "t.py"]),
    ("paddlejob", 53, job("paddlejob", 53),
     ["submit", "paddlejob", "--name", NAME, "--image", "busybox", "--workers", "2", *JOB, "--", "python", "t.py"]),
    ("trainjob", 50, "--name: job name '{name}' is 51 characters; at most 50 fit a TrainJob (its JobSet's pod host "
     "names and the helm release name have length limits)",
     ["submit", "trainjob", "--name", NAME, "--workers", "2", *JOB, "--", "python", "t.py"]),
    ("serve custom", 50, RELEASE_LIMIT, [
        "serve", "custom", "--name", NAME, *SERVE, "--image", "nginx:1.27", "--port", "1", "--restful-port", "65535",
        "--liveness-probe-action", "tcpSocket", "--liveness-probe-action-option", "port: 65535",
        "--liveness-probe-option", "successThreshold: 1", "--liveness-probe-option", "periodSeconds: 1",
        "--readiness-probe-action", "httpGet", "--readiness-probe-action-option", "port: restful",
        "--readiness-probe-action-option", "scheme: HTTPS", "--readiness-probe-action-option", "path: /v1/ready",
        "--readiness-probe-option", "successThreshold: 3",
        "--startup-probe-action", "grpc", "--startup-probe-action-option", "port: 1",
        "--startup-probe-option", "failureThreshold: 1",
        "--", "python", "s.py"]),
    ("serve vllm", 50, RELEASE_LIMIT, ["serve", "vllm", "--name", NAME, *SERVE, "--model", "org/model"]),
    ("serve sglang", 50, RELEASE_LIMIT, ["serve", "sglang", "--name", NAME, *SERVE, "--model", "org/model"]),
    ("serve tensorflow", 50, RELEASE_LIMIT,
     ["serve", "tensorflow", "--name", NAME, *SERVE, "--model-path", "/models/m"]),
    ("serve triton", 50, RELEASE_LIMIT, ["serve", "triton", "--name", NAME, *SERVE, "--model-repository", "/models"]),
    ("serve kserve", 50, RELEASE_LIMIT,
     ["serve", "kserve", "--name", NAME, *SERVE, "--model-format", "sklearn", "--storage-uri", "pvc://models/iris"]),
    ("serve distributed", 47, "--name/--version: the StatefulSet '{name}-v1-0' would be 53 characters; its pods' "
     "controller-revision-hash label allows 52: shorten the name or the version",
     ["serve", "distributed", "--name", NAME, *SERVE, "--image", "vllm:1", "--workers", "1", "--", "python",
      "s.py"]),
    ("serve traffic-split", 51, "NAME: serving name '{name}' is 52 characters; a serving's name is at most 51 (its "
     "versions' releases are NAME-VERSION, at most 53)",
     ["serve", "traffic-split", NAME, "-v", "a:50", "-v", "b:50", "--port", "restful:1", "--port", "grpc:65535"]),
    ("workspace", 40, "NAME: workspace name '{name}' is 41 characters; at most 40 (its Job is <name>-<run>, its "
     "home <name>-home)",
     ["workspace", "start", NAME, "-l", LABEL, "--idle-stop", "1s", "--max-lifetime", "1s", "--home-size", "1Mi"]),
    ("tensorboard", 51, "NAME: tensorboard name '{name}' is 52 characters; at most 51 (its Service is "
     "<name>-tensorboard)", ["tensorboard", "start", NAME, "--logdir", "logs:/logs"]),
]


def words(case_words: list[str], name: str) -> list[str]:
    out = [name if w == NAME else w for w in case_words]
    i = out.index("--") if "--" in out else len(out)
    return [*out[:i], "--dry-run", *out[i:]]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_longest_name_and_edge_values_pass_the_api_servers_strict_validation(case, helm_bin, cluster,
                                                                                controllers, namespace):
    cid, longest, refusal, case_words = case
    run = make_cli(helm_bin, cluster, namespace)
    name = "e" * longest
    res = run(*words(case_words, name))
    assert res.exit_code == 0, res.output
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    assert docs, res.stdout
    proc = subprocess.run([str(kubectl_path()), "--kubeconfig", str(cluster.admin.kubeconfig), "create", "-n",
                           namespace, "--dry-run=server", "--validate=strict", "-f", "-"],
                          input=res.stdout, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    created = proc.stdout.splitlines()
    assert len(created) == len(docs) and all(line.endswith(" created (server dry run)") for line in created), (
        proc.stdout, proc.stderr)
    assert proc.stderr == ""  # no warning either (an unknown field is an error under strict validation)

    longer = run(*words(case_words, name + "e"))
    lines = longer.stderr.splitlines()
    assert (longer.exit_code, longer.stdout, len(lines)) == (2, "", 1), longer.output
    assert lines[0] == "error: " + refusal.format(name=name + "e")
