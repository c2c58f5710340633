"""Run by the Kubeflow training SDK's own virtualenv (scripts/sdk-venv.sh), never imported by the suite:
reads jobs through ``kubeflow.training.TrainingClient`` (kubeflow-training 1.9.4) and prints what it saw as
JSON, for tests/cluster/test_sdk_interop.py to assert.

    python sdk_driver.py KUBECONFIG NAMESPACE read KIND:NAME[,KIND:NAME...]
    python sdk_driver.py KUBECONFIG NAMESPACE create-tfjob NAME IMAGE
"""

from __future__ import annotations

import json
import sys

from kubeflow.training import TrainingClient


def pods(client: TrainingClient, name: str, **kw) -> list[str]:
    return sorted(p.metadata.name for p in client.get_job_pods(name, **kw))


def read(client: TrainingClient, namespace: str, refs: list[str]) -> dict:
    out: dict = {"list": {}, "jobs": {}}
    for ref in refs:
        kind, name = ref.split(":", 1)
        out["list"].setdefault(kind, sorted(j.metadata.name for j in client.list_jobs(namespace, job_kind=kind)))
        job = client.get_job(name, namespace, job_kind=kind)
        replica_specs = {"TFJob": "tf_replica_specs", "PyTorchJob": "pytorch_replica_specs",
                         "MPIJob": "mpi_replica_specs"}[kind]
        specs = getattr(job.spec, replica_specs) or {}
        logs, _ = client.get_job_logs(name, namespace, job_kind=kind)  # the master pod's
        out["jobs"][ref] = {
            "kind": job.kind,
            "apiVersion": job.api_version,
            "name": job.metadata.name,
            "replicas": {rtype: spec.replicas for rtype, spec in specs.items()},
            "conditions": [[c.type, c.status, c.reason, c.message]
                           for c in client.get_job_conditions(name, namespace, job_kind=kind)],
            "running": client.is_job_running(name, namespace, job_kind=kind),
            "succeeded": client.is_job_succeeded(name, namespace, job_kind=kind),
            "failed": client.is_job_failed(name, namespace, job_kind=kind),
            "restarting": client.is_job_restarting(name, namespace, job_kind=kind),
            "pods": pods(client, name, namespace=namespace),
            "master_pods": pods(client, name, namespace=namespace, is_master=True),
            "worker_pods": pods(client, name, namespace=namespace, replica_type="worker"),
            "worker_0": pods(client, name, namespace=namespace, replica_type="worker", replica_index=0),
            "logs": logs,
        }
        elastic = getattr(job.spec, "elastic_policy", None)  # a PyTorchJob's (KubeflowOrgV1ElasticPolicy)
        if elastic is not None:
            out["jobs"][ref]["elastic"] = {k: v for k, v in elastic.to_dict().items() if v is not None}
    return out


def create_tfjob(client: TrainingClient, namespace: str, name: str, image: str) -> dict:
    """A TFJob made the SDK's way (base image + workers), as a Kubeflow user would."""
    client.create_job(name=name, namespace=namespace, job_kind="TFJob", base_image=image, num_workers=2)
    job = client.get_job(name, namespace, job_kind="TFJob")
    return {"name": job.metadata.name, "replicas": {k: v.replicas for k, v in job.spec.tf_replica_specs.items()}}


def main() -> None:
    kubeconfig, namespace, action, *args = sys.argv[1:]
    client = TrainingClient(config_file=kubeconfig, namespace=namespace, job_kind="TFJob")
    if action == "read":
        result = read(client, namespace, args[0].split(","))
    elif action == "create-tfjob":
        result = create_tfjob(client, namespace, *args)
    else:
        raise SystemExit(f"unknown action {action}")
    json.dump(result, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
