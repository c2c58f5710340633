"""Stand-ins for Kubeflow Trainer v2.3.0 and JobSet v0.12.0, acting only through the API (the test cluster has
neither controller, nor the batch Job controller). Tests drive them step by step, so every state is exact.

- ``TrainerSim`` acts like the TrainJob controller of kubeflow/trainer v2.3.0: it reads the runtime the
  TrainJob references (ClusterTrainingRuntime or TrainingRuntime), applies the TrainJob's ``runtimePatches``
  to the runtime's JobSet template (``pkg/runtime/core/trainingruntime.go``: ``mergeRuntimePatches``, a
  strategic merge: replicated jobs, containers and volumes by name; pod-template labels and annotations
  merged), sizes the trainer's replicated job to ``numNodes`` (``pkg/runtime/framework/plugins/jobset/
  jobset.go``: ``SyncParallelCount``; an MPI runtime with ``runLauncherAsNode`` runs numNodes - 1 ``node``
  pods besides the launcher, ``plugins/mpi/mpi.go``), applies the trainer's image, command, args and env to
  the ``node`` container (``plugins/jobset/builder.go``: ``Trainer``) and its ``resourcesPerNode``
  (``trainingruntime.go``: ``newRuntimeInfo``), adds the torch plugin's ``PET_*`` env and port 29500
  (``plugins/torch/torch.go``), and creates the JobSet named after the TrainJob, owned by it, with its
  ``suspend``. ``sync_status`` maps the JobSet's conditions to the TrainJob's (``plugins/jobset/jobset.go``:
  ``Status``: JobSet Completed -> TrainJob Complete, Failed -> Failed) and copies ``jobsStatus``; a suspended
  TrainJob gets ``Suspended`` (``pkg/controller/trainjob_controller.go``).
- ``JobSetSim`` acts like kubernetes-sigs/jobset v0.12.0's controller (``pkg/controllers/jobset_controller.go``:
  ``constructJob``, ``labelAndAnnotateObject``) and the Job controller it relies on: one batch Job
  ``<jobset>-<replicated job>-<job index>`` per replica, labelled ``jobset.sigs.k8s.io/jobset-name``,
  ``replicatedjob-name``, ``job-index``, and its Indexed pods ``<job>-<index>-<suffix>`` with
  ``batch.kubernetes.io/job-name`` and ``batch.kubernetes.io/job-completion-index``, hostname
  ``<job>-<index>`` and subdomain ``<jobset>``. ``sync_status`` counts the pods into the Jobs' and the
  JobSet's status (``Completed`` when every Job succeeded, ``Failed`` when one failed).
"""

from __future__ import annotations

import copy
import secrets
import time

from simulators import now_rfc3339

TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOBSET = ("jobset.x-k8s.io", "v1alpha2")
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE = "node"
TRAINER_PORT = 29500
JS_NAME, JS_RJOB, JS_INDEX = "jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/replicatedjob-name", \
    "jobset.sigs.k8s.io/job-index"
JOB_NAME, COMPLETION_INDEX = "batch.kubernetes.io/job-name", "batch.kubernetes.io/job-completion-index"


def _merge_by_name(base: list[dict], patch: list[dict], merge) -> list[dict]:
    out = [copy.deepcopy(b) for b in base]
    for p in patch or []:
        found = next((b for b in out if b.get("name") == p.get("name")), None)
        if found is None:
            out.append(copy.deepcopy(p))
        else:
            merge(found, p)
    return out


def _merge_container(base: dict, patch: dict) -> None:
    for key, value in patch.items():
        if key in ("env", "volumeMounts"):
            ident = "name" if key == "env" else "mountPath"
            merged = {x[ident]: x for x in base.get(key) or []}
            merged.update({x[ident]: x for x in value})
            base[key] = list(merged.values())
        elif key != "name":
            base[key] = copy.deepcopy(value)


def _merge_pod_spec(base: dict, patch: dict) -> None:
    """A strategic merge of a pod-spec patch (k8s.io/api core/v1 patch strategies)."""
    for key, value in patch.items():
        if key in ("containers", "initContainers"):
            base[key] = _merge_by_name(base.get(key) or [], value, _merge_container)
        elif key in ("volumes", "imagePullSecrets"):
            base[key] = _merge_by_name(base.get(key) or [], value, lambda b, p: b.update(copy.deepcopy(p)))
        elif key == "nodeSelector":
            base[key] = {**(base.get(key) or {}), **value}
        else:  # tolerations, affinity, serviceAccountName, ... are replaced
            base[key] = copy.deepcopy(value)


def _merge_rjob(base: dict, patch: dict) -> None:
    tpl, ptpl = base.setdefault("template", {}), patch.get("template") or {}
    for part in ("labels", "annotations"):
        if (ptpl.get("metadata") or {}).get(part):
            tpl.setdefault("metadata", {}).setdefault(part, {}).update(ptpl["metadata"][part])
    ppod = ((ptpl.get("spec") or {}).get("template")) or {}
    pod = tpl.setdefault("spec", {}).setdefault("template", {})
    for part in ("labels", "annotations"):
        if (ppod.get("metadata") or {}).get(part):
            pod.setdefault("metadata", {}).setdefault(part, {}).update(ppod["metadata"][part])
    if ppod.get("spec"):
        _merge_pod_spec(pod.setdefault("spec", {}), ppod["spec"])


def _merge_resources(base: dict, per_node: dict) -> dict:
    out = copy.deepcopy(base or {})
    for part in ("requests", "limits"):
        if per_node.get(part):
            out.setdefault(part, {}).update(per_node[part])
    return out


def _create(fn, *args, timeout: float = 20.0):
    """Create an object, waiting out the namespace's default ServiceAccount (pods need it)."""
    from kubernetes.client.rest import ApiException

    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn(*args)
        except ApiException as exc:
            body = exc.body or ""
            if ((exc.status == 403 and "serviceaccount" in body) or "No API token found" in body) \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            raise


def _owner(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _set_condition(conditions: list[dict], ctype: str, status: str, reason: str, message: str) -> list[dict]:
    stamp = now_rfc3339()
    out = [c for c in conditions if c["type"] != ctype]
    old = next((c for c in conditions if c["type"] == ctype), None)
    changed = old is None or old["status"] != status
    out.append({"type": ctype, "status": status, "reason": reason, "message": message,
                "lastTransitionTime": stamp if changed else old["lastTransitionTime"]})
    return out


class TrainerSim:
    """The Trainer v2.3.0 TrainJob controller, one reconcile when a test asks."""

    def __init__(self, api_client):
        from kubernetes import client

        self.custom = client.CustomObjectsApi(api_client)

    def trainjob(self, namespace: str, name: str) -> dict:
        return self.custom.get_namespaced_custom_object(*TRAINER, namespace, "trainjobs", name)

    def runtime(self, trainjob: dict) -> dict:
        ref = trainjob["spec"]["runtimeRef"]
        if ref.get("kind", "ClusterTrainingRuntime") == "ClusterTrainingRuntime":
            return self.custom.get_cluster_custom_object(*TRAINER, "clustertrainingruntimes", ref["name"])
        return self.custom.get_namespaced_custom_object(*TRAINER, trainjob["metadata"]["namespace"],
                                                        "trainingruntimes", ref["name"])

    def build_jobset(self, trainjob: dict) -> dict:
        """The JobSet Trainer v2.3.0 makes of the TrainJob (see the module docstring)."""
        runtime = self.runtime(trainjob)
        spec, rspec = trainjob["spec"], runtime["spec"]
        template = copy.deepcopy(rspec["template"])
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        annotations = dict((template.get("metadata") or {}).get("annotations") or {})
        js_spec = template["spec"]
        for patch in spec.get("runtimePatches") or []:
            tpl = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
            labels.update((tpl.get("metadata") or {}).get("labels") or {})
            annotations.update((tpl.get("metadata") or {}).get("annotations") or {})
            for rpatch in (tpl.get("spec") or {}).get("replicatedJobs") or []:
                names = [r["name"] for r in js_spec["replicatedJobs"]]
                assert rpatch["name"] in names, f"Trainer's webhook refuses a patch of {rpatch['name']}: {names}"
                _merge_rjob(next(r for r in js_spec["replicatedJobs"] if r["name"] == rpatch["name"]), rpatch)
        policy = rspec.get("mlPolicy") or {}
        trainer = spec.get("trainer") or {}
        nodes = int(trainer.get("numNodes") or policy.get("numNodes") or 1)
        mpi = policy.get("mpi") or {}
        launcher_as_node = bool(mpi.get("runLauncherAsNode"))
        for rjob in js_spec["replicatedJobs"]:
            ancestor = ((rjob["template"].get("metadata") or {}).get("labels") or {}).get(ANCESTOR)
            job_spec = rjob["template"]["spec"]
            pod = job_spec["template"]["spec"]
            count = int(job_spec.get("parallelism") or 1)
            if ancestor == "trainer" and not launcher_as_node:
                count = nodes
            elif launcher_as_node and rjob["name"] == NODE:
                count = nodes - 1
            job_spec["parallelism"] = job_spec["completions"] = count
            job_spec.setdefault("completionMode", "Indexed")
            if ancestor == "trainer":
                rjob["replicas"] = 1
            for c in pod.get("containers") or []:
                if c["name"] != NODE:
                    continue
                if ancestor == "trainer":
                    for key in ("image", "command", "args"):
                        if trainer.get(key) is not None:
                            c[key] = copy.deepcopy(trainer[key])
                if ancestor == "trainer" or (launcher_as_node and rjob["name"] == NODE):
                    _merge_container(c, {"env": trainer.get("env") or []})
                    if trainer.get("resourcesPerNode"):
                        c["resources"] = _merge_resources(c.get("resources"), trainer["resourcesPerNode"])
                if ancestor == "trainer" and "torch" in policy:
                    name = trainjob["metadata"]["name"]
                    nproc = trainer.get("numProcPerNode", (policy["torch"] or {}).get("numProcPerNode", "auto"))
                    _merge_container(c, {"env": [
                        {"name": "PET_NNODES", "value": str(nodes)},
                        {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
                        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
                            "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}},
                        {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
                        {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)},
                    ]})
                    ports = c.setdefault("ports", [])
                    if not any(p.get("containerPort") == TRAINER_PORT for p in ports):
                        ports.append({"containerPort": TRAINER_PORT, "protocol": "TCP"})
        js_spec["suspend"] = bool(spec.get("suspend"))
        meta = trainjob["metadata"]
        return {"apiVersion": "/".join(JOBSET), "kind": "JobSet",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": labels,
                             "annotations": annotations, "ownerReferences": [_owner(trainjob)]},
                "spec": js_spec}

    def reconcile(self, namespace: str, name: str) -> dict:
        """Create the TrainJob's JobSet (once) and set the TrainJob's status; returns the JobSet."""
        from kubernetes.client.rest import ApiException

        trainjob = self.trainjob(namespace, name)
        try:
            jobset = self.custom.get_namespaced_custom_object(*JOBSET, namespace, "jobsets", name)
            if bool(jobset["spec"].get("suspend")) != bool(trainjob["spec"].get("suspend")):
                jobset = self.custom.patch_namespaced_custom_object(
                    *JOBSET, namespace, "jobsets", name, {"spec": {"suspend": bool(trainjob["spec"].get("suspend"))}})
        except ApiException as exc:
            if exc.status != 404:
                raise
            jobset = _create(self.custom.create_namespaced_custom_object, *JOBSET, namespace, "jobsets",
                             self.build_jobset(trainjob))
        self.sync_status(namespace, name)
        return jobset

    def sync_status(self, namespace: str, name: str) -> dict:
        trainjob = self.trainjob(namespace, name)
        jobset = self.custom.get_namespaced_custom_object(*JOBSET, namespace, "jobsets", name)
        conds = list((trainjob.get("status") or {}).get("conditions") or [])
        if trainjob["spec"].get("suspend"):
            conds = _set_condition(conds, "Suspended", "True", "Suspended", "TrainJob is suspended")
        elif any(c["type"] == "Suspended" for c in conds):
            conds = _set_condition(conds, "Suspended", "False", "Resumed", "TrainJob is resumed")
        for c in (jobset.get("status") or {}).get("conditions") or []:
            ttype = {"Completed": "Complete", "Failed": "Failed"}.get(c["type"])
            if ttype and c["status"] == "True":
                conds = _set_condition(conds, ttype, "True", c.get("reason", ttype), c.get("message", ""))
        jobs = [{"name": r["name"], **{k: int(r.get(k, 0)) for k in
                                       ("ready", "succeeded", "failed", "active", "suspended")}}
                for r in (jobset.get("status") or {}).get("replicatedJobsStatus") or []]
        status = {"conditions": conds, "jobsStatus": jobs} if jobs else {"conditions": conds}
        if not conds and not jobs:
            return trainjob
        return self.custom.patch_namespaced_custom_object_status(*TRAINER, namespace, "trainjobs", name,
                                                                 {"status": status})


class JobSetSim:
    """The JobSet v0.12.0 controller with the batch Job controller's pod creation."""

    def __init__(self, api_client):
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    def jobset(self, namespace: str, name: str) -> dict:
        return self.custom.get_namespaced_custom_object(*JOBSET, namespace, "jobsets", name)

    def create_pods(self, namespace: str, name: str) -> list[str]:
        """Create the JobSet's Jobs and their pods (none while it is suspended); returns the pod names."""
        js = self.jobset(namespace, name)
        if js["spec"].get("suspend"):
            return []
        pods = []
        for rjob in js["spec"]["replicatedJobs"]:
            for job_idx in range(int(rjob.get("replicas", 1))):
                job_name = f"{name}-{rjob['name']}-{job_idx}"
                tpl = copy.deepcopy(rjob["template"])
                extra = {JS_NAME: name, JS_RJOB: rjob["name"], JS_INDEX: str(job_idx),
                         "jobset.sigs.k8s.io/jobset-uid": js["metadata"]["uid"]}
                meta = tpl.get("metadata") or {}
                job_body = {"apiVersion": "batch/v1", "kind": "Job",
                            "metadata": {"name": job_name, "labels": {**(meta.get("labels") or {}), **extra},
                                         "annotations": {**(meta.get("annotations") or {}), JS_NAME: name},
                                         "ownerReferences": [_owner(js)]},
                            "spec": tpl["spec"]}
                pod_tpl = job_body["spec"]["template"]
                pod_tpl.setdefault("metadata", {}).setdefault("labels", {}).update(extra)
                pod_tpl["spec"].setdefault("restartPolicy", "Never" if pod_tpl["spec"].get("restartPolicy") in
                                           (None, "Always") else pod_tpl["spec"]["restartPolicy"])
                if pod_tpl["spec"]["restartPolicy"] == "Always":
                    pod_tpl["spec"]["restartPolicy"] = "Never"
                spec = job_body["spec"]
                spec.pop("completionMode", None)  # batch/v1 of the 1.20 API server predates Indexed Jobs
                # ... so this stand-in makes the indexed pods itself, as the job controller of 1.21+ does for
                # completionMode Indexed; the Job gets parallelism 0 so that the real 1.20 job controller of
                # the test cluster makes none, and the pods carry no controller-uid label so that it does not
                # adopt them (their ownerReference still ties them to the Job for the garbage collector).
                parallelism = int(spec.get("parallelism") or 1)
                spec["parallelism"] = 0
                job = _create(self.batch.create_namespaced_job, namespace, job_body)
                # a plain (not controller) owner: the 1.20 job controller releases pods whose controller
                # reference names a Job that does not select them; the garbage collector follows any owner
                job_owner = {"apiVersion": "batch/v1", "kind": "Job", "name": job_name, "uid": job.metadata.uid,
                             "controller": False, "blockOwnerDeletion": True}
                for index in range(parallelism):
                    pod_name = f"{job_name}-{index}-{secrets.token_hex(3)[:5]}"
                    labels = {**(pod_tpl["metadata"].get("labels") or {}), JOB_NAME: job_name,
                              "job-name": job_name, COMPLETION_INDEX: str(index)}
                    annotations = {**(pod_tpl["metadata"].get("annotations") or {}), COMPLETION_INDEX: str(index)}
                    pod_spec = copy.deepcopy(pod_tpl["spec"])
                    pod_spec.update({"hostname": f"{job_name}-{index}", "subdomain": name})
                    body = {"metadata": {"name": pod_name, "labels": labels, "annotations": annotations,
                                         "ownerReferences": [job_owner]}, "spec": pod_spec}
                    _create(self.core.create_namespaced_pod, namespace, body)
                    pods.append(pod_name)
        self.sync_status(namespace, name)
        return pods

    def sync_status(self, namespace: str, name: str) -> dict:
        """The pods' phases into each Job's status and the JobSet's replicatedJobsStatus and conditions."""
        js = self.jobset(namespace, name)
        pods = self.core.list_namespaced_pod(namespace, label_selector=f"{JS_NAME}={name}").items
        rstatus, failed, all_done = [], False, True
        for rjob in js["spec"]["replicatedJobs"]:
            mine = [p for p in pods if p.metadata.labels.get(JS_RJOB) == rjob["name"]]
            want = int(rjob["template"]["spec"].get("completions") or 1) * int(rjob.get("replicas", 1))
            succeeded = sum(p.status.phase == "Succeeded" for p in mine)
            bad = sum(p.status.phase == "Failed" for p in mine)
            running = sum(p.status.phase in ("Pending", "Running") for p in mine)
            jobs_ok = want > 0 and succeeded >= want
            failed = failed or bad > 0
            all_done = all_done and (jobs_ok or want == 0)
            rstatus.append({"name": rjob["name"], "ready": sum(p.status.phase == "Running" for p in mine),
                            "succeeded": int(jobs_ok) * int(rjob.get("replicas", 1)), "failed": int(bad > 0),
                            "active": int(running > 0), "suspended": int(bool(js["spec"].get("suspend")))})
        conds = list((js.get("status") or {}).get("conditions") or [])
        if failed and not any(c["type"] == "Failed" for c in conds):
            conds = _set_condition(conds, "Failed", "True", "FailedJobs", "jobset failed due to one or more "
                                   "job failures")
        elif all_done and pods and not any(c["type"] == "Completed" for c in conds):
            conds = _set_condition(conds, "Completed", "True", "AllJobsCompleted", "jobset completed successfully")
        return self.custom.patch_namespaced_custom_object_status(
            *JOBSET, namespace, "jobsets", name,
            {"status": {"conditions": conds, "replicatedJobsStatus": rstatus, "restarts": 0}})


def install_default_runtimes(api_client, crd_dir) -> list[str]:
    """Create the ClusterTrainingRuntimes Trainer v2.3.0 installs (tests/data/crds/trainer-v2.3.0/runtimes)."""
    import yaml
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    custom = client.CustomObjectsApi(api_client)
    names = []
    for path in sorted((crd_dir / "trainer-v2.3.0" / "runtimes").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        try:
            custom.create_cluster_custom_object(*TRAINER, "clustertrainingruntimes", body)
        except ApiException as exc:
            if exc.status != 409:
                raise
        names.append(body["metadata"]["name"])
    return names
