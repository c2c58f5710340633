"""Pure pieces of the CLI's edges: client-go's kubeconfig merge, the failure classifier (helm 3's and helm 4's
words, the API's), job phases from the training operator's conditions, and state reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_helm import failures
from arena_helm.errors import CredentialsError, ForbiddenError, KubeconfigError, UnreachableError, UsageError
from arena_helm.kinds import KINDS
from arena_helm.kubeconfig import merge
from arena_helm.queueing import queue_info
from arena_helm.views import job_phase
from arena_helm.waiting import state_reason


def test_merge_first_file_wins_per_name_and_for_current_context():
    a = {"contexts": [{"name": "x", "context": {"cluster": "c1", "namespace": "a"}}], "current-context": "x"}
    b = {"clusters": [{"name": "c1", "cluster": {"server": "https://b", "certificate-authority": "ca.crt"}}],
         "contexts": [{"name": "x", "context": {"cluster": "c1", "namespace": "b"}},
                      {"name": "y", "context": {"cluster": "c1"}}],
         "users": [{"name": "u", "user": {"client-key": "/abs/key", "tokenFile": "tok"}}],
         "current-context": "y"}
    out = merge([(Path("/h/a/config"), a), (Path("/h/b/config"), b)])
    assert out["current-context"] == "x"
    assert [(c["name"], c["context"].get("namespace")) for c in out["contexts"]] == [("x", "a"), ("y", None)]
    # relative paths are relative to the file that holds them
    assert out["clusters"][0]["cluster"]["certificate-authority"] == "/h/b/ca.crt"
    assert out["users"][0]["user"] == {"client-key": "/abs/key", "tokenFile": "/h/b/tok"}


def test_merge_current_context_from_the_first_file_that_sets_it():
    out = merge([(Path("/a"), {"contexts": []}), (Path("/b"), {"current-context": "from-b"})])
    assert out["current-context"] == "from-b"


HELM_MESSAGES = [
    # (helm 3's error line, helm 4's, the class, words in the message)
    ('Kubernetes cluster unreachable: Get "https://127.0.0.1:6443/version": dial tcp 127.0.0.1:6443: connect: '
     "connection refused", UnreachableError, "cannot reach the API server at https://127.0.0.1:6443: connection refused"),
    ("Kubernetes cluster unreachable: the server has asked for the client to provide credentials",
     CredentialsError, "rejected the kubeconfig's credentials (401 Unauthorized)"),
    ("Kubernetes cluster unreachable: stat /k/nope: no such file or directory", KubeconfigError,
     "kubeconfig /k/nope does not exist: give the right one with --kubeconfig"),
    ('Kubernetes cluster unreachable: error loading config file "/k/bad": yaml: line 3: did not find expected node '
     "content", KubeconfigError, "kubeconfig /k/bad is malformed: yaml: line 3: did not find expected node content"),
    ('list: failed to list: secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in '
     'the namespace "default"', ForbiddenError,
     'forbidden: User "alice" cannot list secrets in namespace default: ask a cluster admin'),
    ('INSTALLATION FAILED: tfjobs.kubeflow.org "t" is forbidden: User "bob" cannot create resource "tfjobs" in API '
     'group "kubeflow.org" in the namespace "ml"', ForbiddenError,
     'User "bob" cannot create tfjobs.kubeflow.org in namespace ml'),
]


@pytest.mark.parametrize("major", [3, 4])
@pytest.mark.parametrize(("msg", "cls", "words"), HELM_MESSAGES)
def test_helm_errors_are_classified(major, msg, cls, words):
    if major == 4:
        msg = msg.replace("Kubernetes cluster unreachable", "kubernetes cluster unreachable")
    err = failures.from_helm(msg, "listing releases")
    assert isinstance(err, cls), err
    assert words in str(err), str(err)


def test_helm_and_api_say_the_same_for_401_and_403():
    server = "https://10.0.0.1:6443"
    api401 = failures.from_api(401, "Unauthorized", "listing nodes", server)
    helm401 = failures.from_helm("Kubernetes cluster unreachable: Get \"https://10.0.0.1:6443/version\": "
                                 "the server has asked for the client to provide credentials", "listing nodes")
    assert str(api401) == str(helm401)
    body = 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope'
    assert str(failures.from_api(403, body, "a", None)) == str(failures.from_helm(body, "a"))
    assert str(failures.from_api(403, body, "a", None)) == (
        'a: forbidden: User "alice" cannot list nodes cluster-wide: ask a cluster admin for that permission '
        "(RBAC), or stay in one namespace you may use (-n NAMESPACE without -A; top job rather than top node)")


def test_other_helm_errors_are_left_alone():
    assert failures.from_helm('cannot re-use a name that is still in use', "installing") is None


def test_nothing_installed():
    assert failures.nothing_installed(UnreachableError("x"))
    assert failures.nothing_installed(UsageError("values rejected"))
    assert failures.nothing_installed(ForbiddenError('i: forbidden: User "a" cannot get tfjobs.kubeflow.org in x'))
    assert not failures.nothing_installed(ForbiddenError('i: forbidden: User "a" cannot create pods in namespace x'))


def _job(*conds, suspend=None, labels=None):
    job = {"kind": "TFJob", "metadata": {"name": "j", "labels": labels or {}, "uid": "u1"},
           "status": {"conditions": [{"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conds]}}
    if suspend is not None:
        job["spec"] = {"runPolicy": {"suspend": suspend}}
    return job


@pytest.mark.parametrize(("conds", "suspend", "phase"), [
    ([("Created", "True", "", "")], None, "Pending"),
    ([("Created", "True", "", ""), ("Running", "True", "", "")], None, "Running"),
    ([("Created", "True", "", ""), ("Restarting", "True", "", "")], None, "Restarting"),
    ([("Created", "True", "", ""), ("Running", "False", "", ""), ("Suspended", "True", "", "")], True, "Suspended"),
    ([("Created", "True", "", "")], True, "Suspended"),
    ([("Running", "False", "", ""), ("Suspended", "False", "JobResumed", ""), ("Running", "True", "", "")], False,
     "Running"),
    ([("Running", "False", "", ""), ("Failed", "True", "", "")], None, "Failed"),
    ([("Running", "False", "", ""), ("Succeeded", "True", "", "")], None, "Succeeded"),
])
def test_job_phase_follows_the_operators_conditions(conds, suspend, phase):
    assert job_phase(_job(*conds, suspend=suspend)) == phase


def test_state_reasons():
    failed = _job(("Failed", "True", "TFJobFailed", "TFJob j has failed\n because x."))
    assert state_reason("FAILED", job=failed, kind="TFJob", name="j", namespace="n") == \
        "TFJobFailed: TFJob j has failed because x."
    queued = _job(("Created", "True", "", ""), suspend=True, labels={"kueue.x-k8s.io/queue-name": "q"})
    workload = {"metadata": {"name": "w", "ownerReferences": [{"uid": "u1"}]},
                "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "message": "no\n GPUs"}]}}
    queue = queue_info(queued, workload=workload)
    assert state_reason("QUEUED", job=queued, kind="TFJob", name="j", namespace="n", queue=queue) == \
        "held by Kueue: waiting in queue q (workload w: no GPUs)"
    assert state_reason("RUNNING", job=queued, kind="TFJob", name="j", namespace="n") == ""


def test_state_reasons_before_the_controllers_react():
    """The states the real controllers leave within a moment (no cluster test can hold them): suspend set but the
    operator has not written Suspended yet; a job Kueue's webhook suspended before its Workload exists."""
    asked = _job(("Created", "True", "", ""), suspend=True)
    assert job_phase(asked) == "Suspended"
    assert state_reason("SUSPENDED", job=asked, kind="TFJob", name="j", namespace="n") == "runPolicy.suspend is true"
    done = _job(("Created", "True", "", ""), ("Suspended", "True", "TFJobSuspended", "TFJob j is suspended."),
                suspend=True)
    assert state_reason("SUSPENDED", job=done, kind="TFJob", name="j", namespace="n") == \
        "TFJob j is suspended. (runPolicy.suspend is true)"
    queued = _job(("Created", "True", "", ""), suspend=True, labels={"kueue.x-k8s.io/queue-name": "team-q"})
    assert state_reason("QUEUED", job=queued, kind="TFJob", name="j", namespace="n", queue=queue_info(queued)) == \
        "held by Kueue: waiting in queue team-q"


HELP_PAGES = [[], ["submit"], *[["submit", k.key] for k in KINDS], ["list"],
              ["get"], ["logs"], ["delete"], ["prune"], ["top"], ["top", "job"], ["top", "node"], ["suspend"],
              ["resume"], ["attach"], ["data"], ["data", "list"], ["tensorboard"], ["tensorboard", "start"],
              ["tensorboard", "stop"], ["tensorboard", "list"], ["tensorboard", "open"], ["version"]]


@pytest.mark.parametrize("page", HELP_PAGES, ids=lambda p: " ".join(p) or "root")
def test_help_reads_as_plain_text(page):
    """No reST literals, no Typer placeholders (``{name}``, ``<list[str]>``): the usage line names arguments
    as kubectl does (NAME, [NAME...])."""
    from typer.testing import CliRunner

    from arena_helm.cli import app

    res = CliRunner().invoke(app, [*page, "--help"])
    assert res.exit_code == 0, res.output
    for bad in ("``", "<list[", "{"):
        assert bad not in res.stdout, (bad, res.stdout)
