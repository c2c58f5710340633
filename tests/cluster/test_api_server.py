"""The test cluster itself: a real API server with the real Kubeflow CRDs, helm 3 and 4 against it, logs
through the API server from kwok."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from waits import wait_for

pytestmark = pytest.mark.cluster

MINI_CHART = Path(__file__).resolve().parents[1] / "data" / "charts" / "mini-tfjob"


def helm(helm_bin, cluster, *args, user="admin", input=None):
    return subprocess.run(
        [str(helm_bin), *args, "--kubeconfig", str(cluster.users[user].kubeconfig)],
        capture_output=True, text=True, input=input,
    )


def test_helm_installs_lists_and_uninstalls_a_tfjob(helm_bin, cluster, namespace):
    res = helm(helm_bin, cluster, "install", "mini", str(MINI_CHART), "-n", namespace, "--set", "workers=3")
    assert res.returncode == 0, res.stderr

    listed = helm(helm_bin, cluster, "list", "-n", namespace, "-o", "json")
    assert [(r["name"], r["status"]) for r in json.loads(listed.stdout)] == [("mini", "deployed")]

    custom = client.CustomObjectsApi(cluster.api_client())
    job = custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", "mini")
    assert job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 3
    assert job["metadata"]["labels"]["release"] == "mini"

    res = helm(helm_bin, cluster, "uninstall", "mini", "-n", namespace)
    assert res.returncode == 0, res.stderr
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", "mini")
    assert err.value.status == 404
    assert json.loads(helm(helm_bin, cluster, "list", "-n", namespace, "-o", "json").stdout) == []


def _tfjob(name: str, **spec_extra) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "busybox"}]}},
                }
            },
            **spec_extra,
        },
    }


def test_api_server_rejects_a_wrong_type_in_a_tfjob(cluster, namespace):
    custom = client.CustomObjectsApi(cluster.api_client())
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(
            "kubeflow.org", "v1", namespace, "tfjobs", _tfjob("bad", runPolicy={"backoffLimit": "three"})
        )
    # Kueue's mutating webhook for TFJobs decodes the object into its Go type first (admission runs before the
    # API server's schema validation, which alone would answer 422 Invalid): 400 from the webhook
    assert err.value.status == 400, err.value.body
    assert 'admission webhook \\"mtfjob.kb.io\\" denied the request' in err.value.body
    assert "RunPolicy.spec.runPolicy.backoffLimit of type int32" in err.value.body


def test_api_server_prunes_an_unknown_field(cluster, namespace):
    custom = client.CustomObjectsApi(cluster.api_client())
    custom.create_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "tfjobs", _tfjob("pruned", notAField={"x": 1}, successPolicy="AllWorkers")
    )
    job = custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", "pruned")
    assert "notAField" not in job["spec"]
    assert job["spec"]["successPolicy"] == "AllWorkers"


def test_both_mpijob_crds_can_be_served(cluster, controllers, namespace):
    custom = client.CustomObjectsApi(cluster.api_client())
    body = {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m2"},
        "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "mpi", "image": "busybox"}]}}}}},
    }
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", namespace, "mpijobs", body)
    try:
        cluster.swap_mpi_crd("v1")
        body_v1 = dict(body, apiVersion="kubeflow.org/v1", metadata={"name": "m1"})
        custom.create_namespaced_custom_object("kubeflow.org", "v1", namespace, "mpijobs", body_v1)
        assert custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "mpijobs", "m1")
    finally:
        cluster.swap_mpi_crd("v2beta1")
    # the session's mpi-operator (it lists v2beta1 MPIJobs) outlived its CRD's swap
    mpi = controllers.running.get("mpi-operator")
    assert mpi is None or mpi.proc.poll() is None, controllers.log("mpi-operator")[-2000:]


def test_pod_logs_come_through_the_api_server_from_kwok(cluster, kubelet, namespace):
    core = client.CoreV1Api(cluster.api_client())
    kubelet.add_node(f"node-{namespace}", pool=namespace, gpus=2)
    core.create_namespaced_pod(
        namespace,
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}},
    )
    assert kubelet.run_pod(namespace, "p") == f"node-{namespace}"  # bound by the real scheduler
    kubelet.write_log(namespace, "p", "main", "epoch 1\nepoch 2\nepoch 3")

    def read(**kw) -> str:
        # _preload_content=False: the client otherwise returns str(bytes) for log text
        return core.read_namespaced_pod_log("p", namespace, container="main", _preload_content=False, **kw).data.decode()

    assert read() == "epoch 1\nepoch 2\nepoch 3\n"
    assert read(tail_lines=1) == "epoch 3\n"
    stamped = read(timestamps=True, tail_lines=1)
    assert stamped.endswith("Z epoch 3\n") and stamped[:4].isdigit()
    # each read reached kwok: the stamp is the one of the container's log file (CRI format), and a line
    # written after the reads above is in the next one
    written = kubelet.log_file(namespace, "p", "main").read_text().splitlines()
    assert stamped == f"{written[-1].split(' ', 1)[0]} epoch 3\n"
    kubelet.write_log(namespace, "p", "main", "epoch 3b")
    assert read(tail_lines=1) == "epoch 3b\n"

    # follow: lines written later arrive on the open stream, which ends when the container's output does
    # (kwok: close_log, whose read error is the stream's last text)
    resp = core.read_namespaced_pod_log("p", namespace, container="main", follow=True, _preload_content=False)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend(resp.stream(16)), daemon=True)
    reader.start()
    wait_for(lambda: b"".join(got).count(b"\n") == 4, "the first lines on the follow stream", timeout=15,
             interval=0.05)
    kubelet.write_log(namespace, "p", "main", "epoch 4")
    wait_for(lambda: b"epoch 4\n" in b"".join(got), "epoch 4 on the open stream", timeout=15, interval=0.05)
    kubelet.close_log(namespace, "p", "main")
    reader.join(15)
    assert not reader.is_alive()
    text = b"".join(got).decode()
    assert kubelet.strip_close_marker(text) == "epoch 1\nepoch 2\nepoch 3\nepoch 3b\nepoch 4\n"
    kubelet.remove_node(f"node-{namespace}")


def test_the_limited_user_is_confined_to_its_namespace(cluster):
    from kubecluster import LIMITED_NAMESPACE

    core = client.CoreV1Api(cluster.api_client("alice"))
    assert core.list_namespaced_pod(LIMITED_NAMESPACE).items == []
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("default")
    assert err.value.status == 403
    with pytest.raises(ApiException) as err:
        core.list_node()
    assert err.value.status == 403


def test_api_server_accepts_empty_strings_and_zeros_in_a_tfjob(cluster, namespace):
    """Regression: built with Go >= 1.18, the vendored OpenAPI validator took "" and 0 for null."""
    custom = client.CustomObjectsApi(cluster.api_client())
    body = _tfjob("zeros", runPolicy={"backoffLimit": 0}, successPolicy="")
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = [{"name": "E", "value": ""}]
    custom.create_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", body)
    job = custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", "zeros")
    assert job["spec"]["runPolicy"]["backoffLimit"] == 0
    assert job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "E", "value": ""}]
