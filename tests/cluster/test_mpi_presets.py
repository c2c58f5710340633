"""Arena's deepspeedjob and horovodjob as presets of the MPIJob, through the CLI against the real API server and
the real mpi-operator v0.8.0 with kwok's nodes, with both helm versions: the launcher mounts the hostfile
mpi-operator writes where DeepSpeed's launcher reads it (/job/hostfile), Arena's launcher/worker flags reach the
pods, a rerun rebuilds the preset (its defaults, its hostfile), and Horovod's Open MPI settings sit beside
mpi-operator's own env in the launcher (the user's -e winning)."""

from __future__ import annotations

import json
import re

import pytest
from clictx import cli
from edgetools import one_error
from helmtools import release_values
from kubernetes import client
from waits import wait_for, wait_job_pods

pytestmark = pytest.mark.cluster
# deepspeed/launcher/runner.py (_parse_hostfile): one "<host> slots=<n>" line per worker
DEEPSPEED_HOSTFILE_LINE = re.compile(r"^(\S+)\s+slots=(\d+)$")


@pytest.fixture
def ctx(helm_bin, cluster, namespace):
    return cli(helm_bin, cluster, namespace)


def ok(res):
    assert res.exit_code == 0, res.output
    return res.stdout


def mpijob(cluster, ns, name) -> dict:
    return client.CustomObjectsApi(cluster.api_client()).get_namespaced_custom_object(
        "kubeflow.org", "v2beta1", ns, "mpijobs", name)


def launcher_pod(core, ns, name):
    pods = wait_job_pods(core, ns, name, count=3)
    (launcher,) = [p for p in pods if p.startswith(f"{name}-launcher-")]
    return core.read_namespaced_pod(launcher, ns)


def test_a_deepspeed_job_reads_mpi_operators_hostfile_at_deepspeeds_path(ctx, helm_bin, cluster, namespace,
                                                                         controllers):
    controllers.require("mpi-operator")
    ns, core = namespace, client.CoreV1Api(cluster.api_client())
    ok(ctx("submit", "deepspeedjob", "--name", "ds", "--image", "ds:1", "--workers", "2", "--gpus", "2",
           "--launcher-selector", "pool=cpu", "--launcher-annotation", "a.io/x=1", "--worker-annotation", "b.io/y=2",
           "--", "deepspeed", "train.py", "--deepspeed_config", "ds.json"))
    launcher = launcher_pod(core, ns, "ds")
    mount = next(m for m in launcher.spec.containers[0].volume_mounts if m.mount_path == "/job/hostfile")
    volume = next(v for v in launcher.spec.volumes if v.name == mount.name)
    assert (mount.sub_path, mount.read_only, volume.config_map.name) == ("hostfile", True, "ds-config")
    assert launcher.spec.containers[0].command == ["sh", "-c", "deepspeed train.py --deepspeed_config ds.json"]
    # what the launcher reads there: mpi-operator's ConfigMap, a line per worker in DeepSpeed's format
    hostfile = wait_for(lambda: (core.read_namespaced_config_map("ds-config", ns).data or {}).get("hostfile"),
                        "mpi-operator's hostfile")
    parsed = [DEEPSPEED_HOSTFILE_LINE.match(line).groups() for line in hostfile.splitlines()]
    assert parsed == [(f"ds-worker-{i}.ds.{ns}.svc", "2") for i in range(2)]
    assert (launcher.spec.node_selector or {}).get("pool") == "cpu"
    assert launcher.metadata.annotations["a.io/x"] == "1" and "b.io/y" not in launcher.metadata.annotations
    worker = core.read_namespaced_pod("ds-worker-0", ns)
    assert worker.metadata.annotations["b.io/y"] == "2" and "a.io/x" not in worker.metadata.annotations
    job = mpijob(cluster, ns, "ds")
    assert job["spec"]["runPolicy"]["backoffLimit"] == 6  # Arena's --job-backoff-limit default

    # the job is an MPIJob to every other command; a rerun rebuilds the preset (its defaults and hostfile)
    assert json.loads(ok(ctx("get", "ds", "-o", "json")))["trainer"] == "mpijob"
    assert release_values(helm_bin, cluster, ns, "ds")["provenance"]["preset"] == "deepspeedjob"
    assert "mpijob.kubeflow.org/ds-2 created" in ok(ctx("rerun", "ds", "--workers", "1"))
    again = mpijob(cluster, ns, "ds-2")
    assert again["spec"]["runPolicy"]["backoffLimit"] == 6
    assert again["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1
    spec = again["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert {"name": "mpi-hostfile", "configMap": {"name": "ds-2-config", "items": [
        {"key": "hostfile", "path": "hostfile"}]}} in spec["volumes"]


def test_a_horovod_job_runs_open_mpi_with_horovods_settings_beside_mpi_operators(ctx, cluster, namespace,
                                                                                 controllers):
    controllers.require("mpi-operator")
    ns, core = namespace, client.CoreV1Api(cluster.api_client())
    ok(ctx("submit", "horovod", "--name", "hvd", "--image", "hvd:1", "--workers", "2", "-e", "OMPI_MCA_btl=tcp,self",
           "--", "mpirun", "python", "train.py"))
    env = [(e.name, e.value) for e in launcher_pod(core, ns, "hvd").spec.containers[0].env]
    assert [(n, v) for n, v in env if n.startswith("OMPI_MCA_") or n in ("workers", "gpus")] == [
        ("OMPI_MCA_btl", "tcp,self"),  # the user's, first and kept
        ("OMPI_MCA_hwloc_base_binding_policy", "none"),
        ("OMPI_MCA_rmaps_base_mapping_policy", "slot"),
        ("OMPI_MCA_pml", "ob1"),
        ("workers", "2"), ("gpus", "0"),
        # mpi-operator v0.8.0's own (pkg/controller/mpi_job_controller.go ompiEnvVars), after ours
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
        ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
        ("OMPI_MCA_orte_set_default_slots", "1"),  # slotsPerWorker
    ]
    res = ctx("submit", "horovodjob", "--name", "hvd2", "--image", "hvd:1", "--ssh-port", "2222", "--", "mpirun", "x")
    one_error(res, 2, "error: --ssh-port: mpi-operator's launcher reaches the workers' sshd on the port the image's "
                      "sshd config sets (22 by default), not one set per job: leave it out")
