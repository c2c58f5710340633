"""The specs: every field is a flag, one way to say each thing, the project's errors naming the flag."""

from __future__ import annotations

import pytest

from arena_helm import MPIJobSpec, PyTorchJobSpec, TFJobSpec
from arena_helm.core.errors import UsageError
from arena_helm.core.jobkinds import KINDS
from arena_helm.workload.spec import flag_info


def tf(**kw):
    return TFJobSpec(name="mnist", image="tf:2", command="python train.py", **kw)


def test_the_flag_forms_and_the_structured_forms_mean_the_same():
    a = tf(env=["A=1", "B=x=y"], data=["d:/data"], data_dir=["/host:/c"], label=["k=v"], selector=["gpu=a100"],
           toleration=["k=v:NoSchedule"], device=["amd.com/gpu=2"])
    b = tf(env={"A": "1", "B": "x=y"}, data=[{"claim_name": "d", "mount_path": "/data"}],
           data_dir=[{"path": "/host", "mount_path": "/c"}], label={"k": "v"}, selector={"gpu": "a100"},
           toleration=[{"key": "k", "value": "v", "effect": "NoSchedule"}], device={"amd.com/gpu": 2})
    assert a == b
    assert a.env[1].value == "x=y"
    assert a.toleration[0].to_values() == {"operator": "Equal", "key": "k", "value": "v", "effect": "NoSchedule"}


def test_kubernetes_names_with_dots_are_accepted_where_kubernetes_accepts_them():
    s = tf(data=["my.pvc:/data"], sync_source="https://example.com/a/b.git", sync_secret="git.creds",
           service_account="a.b", priority="high.prio", queue_name="team.a")
    assert (s.data[0].claim_name, s.sync_secret, s.service_account, s.queue_name) == ("my.pvc", "git.creds", "a.b",
                                                                                    "team.a")


@pytest.mark.parametrize(("fields", "message"), [
    ({"cpu": "1."}, "--cpu: '1.' is not a valid quantity"),
    ({"cpu": "+2"}, "--cpu: '+2' is not a valid quantity"),
    ({"memory": "1e-3"}, "--memory: '1e-3' is not a valid quantity"),
    ({"queue_name": "Team_A"}, "--queue-name: 'Team_A' must be a LocalQueue name"),
    ({"running_timeout": 0}, "--running-timeout: 0s: give 1s or more, or leave it out for no limit"),
    ({"running_timeout": "0s"}, "--running-timeout: 0s: give 1s or more, or leave it out for no limit"),
    ({"service_account": "A_b"}, "--service-account: 'A_b' must be a lowercase DNS subdomain"),
    ({"cpu": "1", "worker_cpu": "2"}, "--cpu 1 and --worker-cpu 2 say different things: give one"),
    ({"memory": "1Gi", "worker_memory": "2Gi"}, "--memory 1Gi and --worker-memory 2Gi say different things"),
    ({"no_such_field": 1}, "unknown field 'no_such_field'"),
    ({"workers": "x"}, "--workers: 'x' is not a whole number"),
    ({"sync_branch": "dev"}, "--sync-branch needs --sync-source URL"),
    ({"tensorboard_image": "tb:1"}, "--tensorboard-image needs --tensorboard"),
    ({"image_entrypoint": True}, "--image-entrypoint runs the image's own entrypoint"),
    ({"env_from_secret": ["HF_TOKEN"]}, "--env-from-secret: 'HF_TOKEN' is not NAME=SECRET[:KEY]"),
    ({"env_from_secret": ["A=S"]}, "--env-from-secret: 'S' must be a lowercase DNS subdomain"),
    ({"env": ["A=1"], "env_from_secret": ["A=s"]}, "--env-from-secret A: -e sets A too: give it once"),
    ({"env_from_secret": ["A=s", "A=t:k"]}, "--env-from-secret: A is given twice: give it once"),
    ({"env_from": ["vault:x"]}, "--env-from: 'vault:x' is not SECRET, secret:SECRET or configmap:CONFIGMAP"),
    ({"env_from": ["x", "secret:x"]}, "--env-from: secret x is given twice: give it once"),
    ({"secret": ["s"]}, "--secret: 's' is not SECRET:PATH"),
    ({"secret": ["s:/data"], "data": ["d:/data"]}, "--secret s:/data: /data is a --data mount: mount the Secret "
     "elsewhere"),
    ({"secret": ["s:/etc/s", "t:/etc/s/"]}, "--secret t:/etc/s: /etc/s is another --secret"),
    ({"secret": ["s:/"]}, "--secret s:/: / is the container's root"),
])
def test_bad_fields_are_one_usage_error_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as err:
        tf(**fields)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_several_problems_are_one_line():
    with pytest.raises(UsageError) as err:
        TFJobSpec(name="x", image="i", cpu="1x", gpus=-1)
    assert str(err.value) == ("--gpus: -1: give 0 or more; "
                              "--cpu: '1x' is not a valid quantity (e.g. 2, 0.5, 500m, 512Mi, 16Gi)")


def test_a_name_is_required_and_must_fit_the_pod_names():
    with pytest.raises(UsageError, match="--name is required"):
        TFJobSpec(image="i")
    with pytest.raises(UsageError, match="at most 52 fit this mpijob"):
        MPIJobSpec(name="a" * 53, image="i")


def test_tf_layout_follows_arena():
    assert list(tf().replicas()) == ["chief"]  # one worker, no PS: a single Chief
    reps = tf(workers=2, ps=1, chief=True, evaluator=True, gpus=2, ps_gpus=1, worker_port=3333, ps_image="ps:1",
              worker_selector=["a=b"], ps_cpu="2").replicas()
    assert list(reps) == ["chief", "worker", "ps", "evaluator"]
    assert (reps["worker"].replicas, reps["worker"].gpus, reps["worker"].port, reps["worker"].selector) == \
        (2, 2, 3333, {"a": "b"})
    assert (reps["ps"].image, reps["ps"].gpus, reps["ps"].cpu, reps["ps"].devices) == ("ps:1", 1, "2", False)
    standalone = tf(cpu="4", worker_memory="8Gi", chief_cpu="6").replicas()["chief"]
    assert (standalone.cpu, standalone.memory) == ("6", "8Gi")


def test_pytorch_workers_count_the_master():
    reps = PyTorchJobSpec(name="p", image="i", command="c", workers=3, gpus=1).replicas()
    assert {k: r.replicas for k, r in reps.items()} == {"master": 1, "worker": 2}


def test_every_spec_field_but_three_is_a_flag_with_help():
    for info in KINDS:
        for name, field in info.spec_class().model_fields.items():
            meta = flag_info(field)
            assert meta is not None, name
            assert field.description, name
            assert meta.get("cli", True) is (name not in ("namespace", "command", "user")), name


def test_from_python_one_item_of_a_repeatable_flag_is_a_list_and_a_command_list_runs_word_for_word():
    s = PyTorchJobSpec(name="p", image="i", data="pvc:/data", env="A=1", secret="s:/etc/s",
                       command=["python", "train.py", "--note", "a b; rm -rf /", "it's"])
    assert [(d.claim_name, d.mount_path) for d in s.data] == [("pvc", "/data")]
    assert [(e.name, e.value) for e in s.env] == [("A", "1")]
    assert [(v.secret, v.mount_path) for v in s.secret] == [("s", "/etc/s")]
    import shlex

    assert shlex.split(s.command) == ["python", "train.py", "--note", "a b; rm -rf /", "it's"]


def test_the_package_lists_its_api():
    import arena_helm

    names = dir(arena_helm)
    assert {"TFJobSpec", "PyTorchJobSpec", "TrainJobSpec", "render", "submit", "UsageError"} <= set(names)


def test_every_pod_level_flag_reaches_the_values_of_every_kind_of_every_family():
    """A pod-level flag (spec.PodLevelFlags) is a flag of every job kind, serving kind and the workspace, and
    sets its chart value for each: --termination-grace-period 2m is terminationGracePeriodSeconds 120 (0s is 0)."""
    from arena_helm.core.servekinds import SERVE_KINDS
    from arena_helm.serving.servings import serving_values
    from arena_helm.workload.job_values import build_values
    from arena_helm.workload.spec import PodLevelFlags
    from arena_helm.workspace.workspaces import WorkspaceSpec, workspace_values

    assert {"data", "env", "selector", "toleration", "priority", "termination_grace_period"} <= set(
        PodLevelFlags.model_fields)
    pods = {"termination_grace_period": "2m", "selector": ["pool=gpu"], "label": ["team=a"]}
    want = {"terminationGracePeriodSeconds": 120, "nodeSelector": {"pool": "gpu"}}
    for info in KINDS:  # (a TFJob puts --selector on its replicas, as Arena)
        spec = info.spec_class()(name="j", image="img:1", command="true", **pods)
        assert build_values(spec)["terminationGracePeriodSeconds"] == 120, info.key
    for kind in SERVE_KINDS:
        module = kind.module()
        spec = module.SPEC(name="s", version="v1", **module.PLACEHOLDERS, **pods)
        values = serving_values(spec)
        assert {k: values[k] for k in want} == want, kind.key
        assert values["labels"] == {"team": "a"}
    values = workspace_values(WorkspaceSpec(name="nb", **pods))
    assert {k: values[k] for k in want} == want
    assert workspace_values(WorkspaceSpec(name="nb", termination_grace_period="0s"))[
        "terminationGracePeriodSeconds"] == 0
