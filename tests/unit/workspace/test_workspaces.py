"""arena_helm.workspace.workspaces: the spec (the flags of workspace start), its chart values, and the view of a
workspace from its Job, pods and home (pure)."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.workspace.workspaces import WorkspaceSpec, workspace_state, workspace_values, workspace_view


def test_the_values_hold_only_what_the_flags_set():
    assert workspace_values(WorkspaceSpec(name="nb")) == {"type": "jupyter", "idleStopSeconds": 7200,
                                                          "tokenSecret": "nb-token"}
    spec = WorkspaceSpec(name="dev", type="code-server", image="codercom/code-server:4.106.0", gpus=2, cpu="8",
                         memory="32Gi", home_size="50Gi", storage_class="fast", idle_stop="30m",
                         max_lifetime="24h", data=["training-data:/data"],
                         data_dir=["/mnt/ds:/datasets"], env=["EPOCHS=3"], env_from_secret=["HF_TOKEN=hf:token"],
                         env_from=["wandb"], secret=["s3:/var/secrets/s3"], selector=["accelerator=a100"],
                         toleration=["nvidia.com/gpu:NoSchedule,Exists"], priority="high", queue_name="team-a",
                         image_pull_secret=["regcred"], label=["team=vision"], annotation=["owner=alice"],
                         share_memory="0")
    assert workspace_values(spec) == {
        "type": "code-server", "idleStopSeconds": 1800, "tokenSecret": "dev-token",
        "image": "codercom/code-server:4.106.0", "activeDeadlineSeconds": 86400, "gpus": 2,
        "resources": {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"cpu": "8", "memory": "32Gi"}},
        "shmSize": "", "home": {"size": "50Gi", "storageClassName": "fast"},
        "data": [{"claimName": "training-data", "mountPath": "/data", "readOnly": False}],
        "hostPaths": [{"path": "/mnt/ds", "mountPath": "/datasets", "readOnly": False}],
        "secretVolumes": [{"secretName": "s3", "mountPath": "/var/secrets/s3"}],
        "env": [{"name": "EPOCHS", "value": "3"},
                {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        "envFrom": [{"secretRef": {"name": "wandb"}}], "nodeSelector": {"accelerator": "a100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "priorityClassName": "high", "queue": "team-a", "imagePullSecrets": ["regcred"],
        "labels": {"team": "vision"}, "annotations": {"owner": "alice"}}


def test_a_shell_has_no_token_and_an_existing_home_is_used_as_it_is():
    assert workspace_values(WorkspaceSpec(name="sh", type="shell", home="mine", idle_stop="0")) == {
        "type": "shell", "idleStopSeconds": 0, "home": {"claimName": "mine"}}


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "Nb"}, "workspace name 'Nb' must start with a lowercase letter"),
    ({"name": "a" * 41}, f"workspace name '{'a' * 41}' is 41 characters; at most 40"),
    ({"name": "nb", "idle_stop": "soon"}, "--idle-stop: 'soon' is not a duration"),
    ({"name": "nb", "home": "mine", "home_size": "5Gi"}, "--home-size is for the home PVC arena-helm makes"),
    ({"name": "nb", "home": "mine", "storage_class": "fast"}, "--storage-class is for the home PVC arena-helm makes"),
    ({"name": "nb", "data": ["a:/d", "b:/d"]}, "--data/--data-dir: mount path /d is used twice"),
    ({"name": "nb", "type": "code-server", "idle_stop": "1m"}, "--idle-stop 60s: code-server stops itself only "
     "after more than 60s without activity (its --idle-timeout-seconds)"),
    ({"name": "nb", "type": "vscode"}, "--type: 'vscode': input should be 'jupyter', 'code-server' or 'shell'"),
])
def test_bad_flags_are_one_line_naming_the_flag(fields, message):
    from arena_helm.core.errors import SURFACE

    token = SURFACE.set("cli")
    try:
        with pytest.raises(UsageError) as err:
            WorkspaceSpec(**fields)
    finally:
        SURFACE.reset(token)
    assert message in str(err.value), str(err.value)


def job(*conditions, suspend=False, labels=None):
    return {"metadata": {"name": "nb-1", "labels": labels or {}}, "spec": {"suspend": suspend},
            "status": {"conditions": [{"type": t, "status": "True", "reason": r, "message": m}
                                      for t, r, m in conditions]}}


def pod(phase="Running", ready=True, deleting=False, waiting=None):
    status = {"phase": phase, "containerStatuses": [{"name": "workspace", "ready": ready,
                                                     "state": {"waiting": {"reason": waiting}} if waiting else {}}]}
    meta = {"name": "nb-1-abcde", **({"deletionTimestamp": "2026-12-04T00:00:00Z"} if deleting else {})}
    return {"metadata": meta, "status": status}


@pytest.mark.parametrize(("the_job", "pods", "stopped", "state"), [
    (None, [], True, ("STOPPED", "stopped (workspace stop)")),
    (job(("Complete", "", "")), [], False, ("STOPPED", "ended itself (idle, or its server exited 0)")),
    (job(("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")), [], False,
     ("STOPPED", "its --max-lifetime was reached")),
    (job(("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")), [], False,
     ("FAILED", "BackoffLimitExceeded: Job has reached the specified backoff limit")),
    (job(suspend=True, labels={"kueue.x-k8s.io/queue-name": "lq"}), [], False,
     ("QUEUED", "suspended until Kueue admits it")),
    (job(), [pod()], False, ("RUNNING", "")),
    (job(), [pod(ready=False)], False, ("PENDING", "Running")),
    (job(), [pod("Pending", ready=False, waiting="ImagePullBackOff")], False, ("PENDING", "ImagePullBackOff")),
    (job(), [pod(deleting=True)], False, ("PENDING", "no pod yet")),
    (job(), [{"metadata": {"name": "p"}, "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."}]}}], False,
     ("PENDING", "Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")),
])
def test_the_state_of_a_workspace(the_job, pods, stopped, state):
    assert workspace_state(the_job, pods, stopped) == state


def test_a_stopped_workspace_is_read_from_its_values_and_its_home():
    view = workspace_view({"name": "nb", "namespace": "team-a"}, {"type": "jupyter", "stopped": True, "run": 3,
                                                                  "gpus": 2, "idleStopSeconds": 600},
                          None, [], {"metadata": {"name": "nb-home", "creationTimestamp": "2026-12-04T10:00:00Z"},
                                     "status": {"phase": "Bound"}})
    assert view.to_json() == {"name": "nb", "namespace": "team-a", "type": "jupyter", "status": "STOPPED",
                              "reason": "stopped (workspace stop)", "gpus": 2, "idleStopSeconds": 600,
                              "home": "nb-home (Bound)", "run": 3, "pod": None}


def test_the_url_open_prints():
    from arena_helm.workspace.workspaces import workspace_url

    assert workspace_url("jupyter", 8888, "a/b+c") == "http://localhost:8888/lab?token=a%2Fb%2Bc"
    assert workspace_url("jupyter", 9999, None) == "http://localhost:9999/lab"
    assert workspace_url("code-server", 8080, "secret") == "http://localhost:8080/"
