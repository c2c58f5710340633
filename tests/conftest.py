from __future__ import annotations

import os
from pathlib import Path

import pytest
from helmtools import HELM_VERSIONS, helm_path
from hypothesis import settings

# The property tests draw the same examples on every run (a fixed, derandomized profile: CI's result does not
# depend on a seed); ARENA_HELM_HYPOTHESIS=explore draws new ones, to look for what the fixed draws miss.
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("ARENA_HELM_HYPOTHESIS", "fixed"))


@pytest.fixture(params=HELM_VERSIONS, ids=[f"helm{v.split('.')[0]}" for v in HELM_VERSIONS], scope="session")
def helm_bin(request) -> Path:
    """Every helm-touching test runs once with Helm 3 and once with Helm 4."""
    return helm_path(request.param)


# ---- the real API server ---------------------------------------------------------------------------
import itertools  # noqa: E402

from kubecluster import SKIP_CLUSTER, TestCluster, start_cluster  # noqa: E402

_ns_counter = itertools.count()


@pytest.fixture(scope="session")
def cluster():
    """The test cluster for the whole session: etcd + kube-apiserver + kube-controller-manager +
    kube-scheduler, kwok for the nodes and their pods (``cluster.kwok``; tests/support/kwok.py) and the real
    controllers: training-operator, mpi-operator, JobSet, Kubeflow Trainer, Kueue, LeaderWorkerSet, KServe,
    metrics-server and MetalLB's controller (``cluster.controllers``; tests/support/controllers.py).

    Local quick runs may set ARENA_HELM_SKIP_CLUSTER=1 to skip these tests; under CI they never skip:
    a failed build fails the run. (tests/cluster/bare/ overrides it with a control plane that runs no
    controller.)
    """
    if SKIP_CLUSTER:
        pytest.skip("ARENA_HELM_SKIP_CLUSTER=1: tests that need the API server are skipped")
    from controllers import ALL, Controllers
    from kwok import Kwok

    c: TestCluster = start_cluster()
    c.kwok = c.controllers = None
    try:
        c.kwok = Kwok(c)
        c.controllers = Controllers(c).start(ALL)
        yield c
    finally:
        if c.controllers is not None:
            c.controllers.stop(namespace_timeout=0)  # the whole cluster goes: no namespace need finish
        if c.kwok is not None:
            c.kwok.close()
        c.stop()


@pytest.fixture(scope="session")
def controllers(cluster):
    """The real controllers of the session's cluster (``require(name)`` fails a test with why one did not run)."""
    return cluster.controllers


@pytest.fixture(scope="session")
def kubelet(cluster):
    """The nodes and kubelets: kwok (tests/support/kwok.py), with the stand-in's methods."""
    return cluster.kwok


@pytest.fixture(scope="module")
def prometheus(cluster):
    """Debian's Prometheus scraping the GPU exporter stand-in (tests/support/promsim.py), for one module only:
    nothing scrapes in the background of the other tests."""
    from promsim import PrometheusServer

    p = PrometheusServer()
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture
def gpu_node(kubelet, namespace):
    """A kwok node with 8 GPUs (``nvidia.com/gpu``) for the test's namespace only (its pods go there)."""
    name = f"gpu-{namespace}"
    kubelet.add_node(name, pool=namespace, gpus=8)
    yield name
    kubelet.remove_node(name)


@pytest.fixture
def namespace(cluster, request):
    """A fresh namespace per test (deleted afterwards; the namespace controller empties it)."""
    from kubernetes import client

    name = f"t{next(_ns_counter)}-{os.getpid() % 10000}"
    cluster.create_namespace(name)
    yield name
    client.CoreV1Api(cluster.api_client()).delete_namespace(name)


@pytest.fixture(autouse=True)
def _arena_helm_logger_restored():
    """``--debug`` reconfigures the ``arena_helm`` logger in-process: undo it after each test."""
    import logging

    logger = logging.getLogger("arena_helm")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]


# ---- the order the tests are handed out in ---------------------------------------------------------
# The longest files first, the tiers of many short tests last: scripts/test.sh runs two pytest-xdist workers
# (--dist loadfile), and a worker that starts the 5-minute load test last would leave the other one idle.
# The same order for every worker (xdist wants the collections equal); in one process it changes nothing
# but the order.
_FIRST = ("tests/cluster/test_load.py", "tests/cluster/test_sdk_interop.py", "tests/cluster/test_trainjob_sdk.py",
          "tests/cluster/test_faults.py", "tests/cluster/test_ct_install.py", "tests/cluster/test_lifecycle.py",
          "tests/cluster/test_release_index.py")
_TIERS = ("tests/cluster/", "tests/charts/", "tests/cli/", "tests/repo/", "tests/unit/")


def pytest_collection_modifyitems(config, items):
    root = Path(str(config.rootpath))

    def rank(item) -> tuple[int, int]:
        rel = Path(str(item.path)).relative_to(root).as_posix()
        if rel in _FIRST:
            return (0, _FIRST.index(rel))
        return (1, next((i for i, t in enumerate(_TIERS) if rel.startswith(t)), len(_TIERS)))

    items.sort(key=rank)  # stable: within a file, and between files of one tier, the order stays
