"""arena_helm.adapters.failures: the failure classifier (helm 3's and helm 4's words, the API's) and what counts as
nothing installed."""

from __future__ import annotations

import pytest

from arena_helm.adapters import failures
from arena_helm.core.errors import (
    CredentialsError,
    ForbiddenError,
    HelmError,
    HelmNotFoundError,
    HelmTooOldError,
    KubeconfigError,
    UnreachableError,
    UsageError,
)

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


@pytest.mark.parametrize("msg", [
    'INSTALLATION FAILED: create: failed to create: namespaces "nosuch" not found',  # helm 3.17.3
    'installation failed: create: failed to create: namespaces "nosuch" not found',  # helm 4.1.4
])
def test_a_namespace_that_does_not_exist_is_named_and_nothing_was_installed(msg):
    err = failures.from_helm(msg, "installing release mnist")
    assert str(err) == ("installing release mnist: namespace nosuch does not exist: create it (kubectl create "
                        "namespace nosuch) or give another with -n NAMESPACE")
    assert failures.nothing_installed(err)
    api = failures.from_api(404, 'namespaces "nosuch" not found', "installing release mnist", None)
    assert (type(api), str(api)) == (type(err), str(err))  # the API client's answer says the same


def test_other_helm_errors_are_left_alone():
    assert failures.from_helm('cannot re-use a name that is still in use', "installing") is None


def test_nothing_installed():
    assert failures.nothing_installed(UnreachableError("x"))
    assert failures.nothing_installed(UsageError("values rejected"))
    assert failures.nothing_installed(ForbiddenError('i: forbidden: User "a" cannot get tfjobs.kubeflow.org in x'))
    assert not failures.nothing_installed(ForbiddenError('i: forbidden: User "a" cannot create pods in namespace x'))
    # no usable helm ran: nothing to remove; helm that ran and failed may have left a release
    assert failures.nothing_installed(HelmTooOldError("helm v3.2.0 at /x is too old"))
    assert failures.nothing_installed(HelmNotFoundError("no helm"))
    assert not failures.nothing_installed(HelmError("installing release x: timed out waiting for the condition"))


def test_a_resource_quota_refusal_names_the_quota_and_its_numbers():
    msg = ('INSTALLATION FAILED: tfjobs.kubeflow.org "j" is forbidden: exceeded quota: team, requested: '
           'count/tfjobs.kubeflow.org=1, used: count/tfjobs.kubeflow.org=2, limited: count/tfjobs.kubeflow.org=2')
    err = failures.from_helm(msg, "installing release j")
    assert isinstance(err, ForbiddenError)
    assert str(err) == ('installing release j: the ResourceQuota team refuses tfjobs.kubeflow.org "j" (requested '
                        'count/tfjobs.kubeflow.org=1, used count/tfjobs.kubeflow.org=2, limited '
                        'count/tfjobs.kubeflow.org=2): free some of it or ask a cluster admin for more (kubectl '
                        'describe resourcequota team in the release\'s namespace)')
