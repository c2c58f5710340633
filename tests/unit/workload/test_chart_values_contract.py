"""One contract: the chart values models (arena_helm/workload/chart_values.py) and the generated values.schema.json
accept the same values.

- whatever values hypothesis builds from the models (every grammar type drawn from its own regex), once the
  model accepts them, the chart's schema accepts the model's dump too (jsonschema, draft-07);
- hand-picked values: refused by both, or accepted by both (the Kubernetes grammar decides);
- the values the CLI builds today (``values.build_values``) and the charts' ci values files round-trip
  through the models unchanged.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types
import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, BeforeValidator, ValidationError, WithJsonSchema
from pydantic.fields import FieldInfo

from arena_helm.core.grammars import GRAMMARS
from arena_helm.training.kinds import tfjob as tf
from arena_helm.workload import chart_registry
from arena_helm.workload import chart_values as cv

REPO = Path(__file__).resolve().parents[3]
CHARTS = REPO / "charts"
APP_CHARTS = tuple(c for c in chart_registry.CHART_VALUES if c != "arena-common")  # every job chart and tensorboard


def _validator(chart: str) -> jsonschema.Draft7Validator:
    schema = json.loads((CHARTS / chart / "values.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


VALIDATORS = {chart: _validator(chart) for chart in APP_CHARTS}
MODELS = {chart: chart_registry.CHART_VALUES[chart] for chart in APP_CHARTS}


# ---------------------------------------------------------------- strategies from the models
def _bounds(metadata) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in metadata:
        if isinstance(m, FieldInfo):
            out.update(_bounds(m.metadata))
        elif isinstance(m, annotated_types.Ge):
            out["min_value"] = m.ge
        elif isinstance(m, annotated_types.Le):
            out["max_value"] = m.le
        elif isinstance(m, annotated_types.MinLen):
            out["min_size"] = m.min_length
        elif isinstance(m, annotated_types.MaxLen):
            out["max_size"] = m.max_length
    return out


def _grammar(metadata):
    """(regex, check) of a core/grammars.py type, from its WithJsonSchema title and BeforeValidator."""
    name = next((m.json_schema.get("title") for m in metadata if isinstance(m, WithJsonSchema)), None)
    check = next((m.func for m in metadata if isinstance(m, BeforeValidator)), None)
    if name in GRAMMARS and check:
        return GRAMMARS[name]["pattern"], check
    return None


def _accepted(check):
    def ok(value: str) -> bool:
        try:
            check(value)
        except ValueError:
            return False
        return True
    return ok


def for_type(tp, metadata=()) -> st.SearchStrategy:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        return for_type(base, (*meta, *metadata))
    grammar = _grammar(metadata)
    if grammar:
        rx, check = grammar
        return st.from_regex(rx, fullmatch=True).filter(_accepted(check))
    bounds = _bounds(metadata)
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return st.one_of([st.none() if a is type(None) else for_type(a, metadata) for a in typing.get_args(tp)])
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(min_value=bounds.get("min_value", -(2**31)), max_value=bounds.get("max_value", 2**31))
    if tp is str:
        return st.text(min_size=bounds.get("min_size", 0), max_size=min(bounds.get("max_size", 20), 20))
    if tp is Any:
        return st.none() | st.booleans() | st.integers() | st.text(max_size=5)
    if origin is list:
        (item,) = typing.get_args(tp)
        return st.lists(for_type(item), max_size=3)
    if origin is dict:
        key, value = typing.get_args(tp)
        return st.dictionaries(for_type(key), for_type(value), max_size=3)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return for_model(tp)
    raise TypeError(f"no strategy for {tp!r}")


def _exactly_one_of(model: type[BaseModel]) -> tuple[str, ...]:
    """The keys of which the model takes exactly one (its schema's ``oneOf`` of ``required``), if any."""
    extra = model.model_config.get("json_schema_extra")
    one_of = extra.get("oneOf", ()) if isinstance(extra, dict) else ()
    return tuple(k for alt in one_of for k in alt["required"])


def for_model(model: type[BaseModel]) -> st.SearchStrategy:
    """Raw values (alias keys) of ``model``: required fields always, the others sometimes; of a model that
    takes exactly one of some keys, each alternative with exactly one (no draw spent on values it refuses)."""
    required, optional = {}, {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key in ("global", "arena-common"):
            optional[key] = st.just({"global": {}} if key == "arena-common" else {"anything": [1]})
            continue
        strategy = st.deferred(lambda f=field: for_type(f.annotation, tuple(f.metadata)))
        (required if field.is_required() else optional)[key] = strategy
    alternatives = _exactly_one_of(model)
    if not alternatives:
        return st.fixed_dictionaries(required, optional=optional)
    rest = {k: v for k, v in optional.items() if k not in alternatives}
    return st.one_of([st.fixed_dictionaries({**required, key: optional[key]}, optional=rest) for key in alternatives])


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.filter_too_much])


# fuzzed: each distinct set of blocks once (jaxjob, xgboostjob and paddlejob are JobValues with replica blocks of
# the same shape as pytorchjob's; their specs are fuzzed through their schemas in test_spec_schema_contract.py)
FUZZED = ("tfjob", "pytorchjob", "mpijob", "tensorboard", "trainjob")


@pytest.mark.parametrize("chart", FUZZED)
def test_what_the_model_accepts_the_schema_accepts(chart):
    model, validator = MODELS[chart], VALIDATORS[chart]

    @SETTINGS
    @given(raw=for_model(model))
    def check(raw):
        try:
            values = model.model_validate(raw)
        except ValidationError:
            assume(False)
            return
        dumped = values.model_dump(by_alias=True, exclude_unset=True, mode="json")
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(dumped)]
        assert not errors, (dumped, errors)
        # and the dump is stable: built again from it, the same values
        assert model.model_validate(dumped).model_dump(by_alias=True, exclude_unset=True, mode="json") == dumped

    check()


@pytest.mark.parametrize("chart", APP_CHARTS)
def test_the_defaults_pass_the_schema(chart):
    dumped = MODELS[chart]().model_dump(by_alias=True, mode="json")
    VALIDATORS[chart].validate(dumped)


# ---------------------------------------------------------------- hand-picked values
def _cpu(value):
    return {"worker": {"resources": {"requests": {"cpu": value}}}}


REFUSED = [
    ("tfjob", _cpu("1."), "cpu"),
    ("tfjob", _cpu("+2"), "cpu"),
    ("tfjob", _cpu("1e-3"), "cpu"),
    ("tfjob", _cpu("-1"), "cpu"),
    ("tfjob", _cpu(""), "cpu"),
    ("tfjob", {"shmSize": "8 Gi"}, "shmSize"),
    ("tfjob", {"nameOverride": "1job"}, "nameOverride"),
    ("tfjob", {"nameOverride": "Job"}, "nameOverride"),
    ("tfjob", {"nameOverride": "a" * 64}, "nameOverride"),
    ("tfjob", {"data": [{"claimName": "My_PVC", "mountPath": "/data"}]}, "claimName"),
    ("tfjob", {"data": [{"claimName": "d", "mountPath": "data"}]}, "mountPath"),
    ("tfjob", {"data": [{"claimName": "d", "mountPath": "/a:b"}]}, "mountPath"),
    ("tfjob", {"queue": "team a"}, "queue"),
    ("tfjob", {"queue": "-team"}, "queue"),
    ("tfjob", {"labels": {"bad key": "v"}}, "labels"),
    ("tfjob", {"labels": {"ok": "not ok!"}}, "labels"),
    ("tfjob", {"annotations": {"-bad": "x"}}, "annotations"),
    ("tfjob", {"nodeSelector": {"zone": "a b"}}, "nodeSelector"),
    ("tfjob", {"env": [{"name": "1A", "value": "x"}]}, "name"),
    ("tfjob", {"codeSync": {"secretName": "Git_Creds"}}, "secretName"),
    ("tfjob", {"codeSync": {"repo": "example.com/r.git"}}, "repo"),
    ("tfjob", {"codeSync": {"linkName": "a/b"}}, "linkName"),
    ("tfjob", {"serviceAccountName": "A"}, "serviceAccountName"),
    ("tfjob", {"imagePullSecrets": ["regcred", "regcred"]}, "imagePullSecrets"),
    ("tfjob", {"runPolicy": {"activeDeadlineSeconds": -1}}, "activeDeadlineSeconds"),
    ("tfjob", {"runPolicy": {"activeDeadlineSeconds": 0}}, "activeDeadlineSeconds"),  # must be positive
    ("tfjob", {"queue": "Team_A"}, "queue"),  # not a LocalQueue name
    ("tfjob", {"runPolicy": {"suspend": "maybe"}}, "suspend"),
    ("tfjob", {"chief": {"replicas": 2}}, "replicas"),
    ("tfjob", {"worker": {"devices": {"example.com/fpga": -1}}}, "devices"),
    ("tfjob", {"image": "two words"}, "image"),
    ("tfjob", {"imagee": "x"}, "imagee"),
    ("pytorchjob", {"nprocPerNode": "0"}, "nprocPerNode"),
    ("pytorchjob", {"nprocPerNode": "many"}, "nprocPerNode"),
    ("pytorchjob", {"master": {"replicas": 2}}, "replicas"),
    ("mpijob", {"worker": {"replicas": 0}}, "replicas"),
    ("mpijob", {"worker": {"port": 2222}}, "port"),
    ("tfjob", {"env": [{"name": "A"}]}, "value"),  # a value or a valueFrom
    ("tfjob", {"env": [{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
     "value"),
    ("tfjob", {"env": [{"name": "A", "valueFrom": {}}]}, "secretKeyRef"),
    ("tfjob", {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "a/b"}}}]}, "key"),
    ("tfjob", {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "S", "key": "k"}}}]}, "name"),
    ("tfjob", {"envFrom": [{"prefix": "X_"}]}, "secretRef"),
    ("tfjob", {"envFrom": [{"secretRef": {"name": "a"}, "configMapRef": {"name": "b"}}]}, "secretRef"),
    ("tfjob", {"secretVolumes": [{"secretName": "s", "mountPath": "rel"}]}, "mountPath"),
    ("tfjob", {"secretVolumes": [{"secretName": "s", "mountPath": "/s", "defaultMode": 512}]}, "defaultMode"),
    ("tensorboard", {"envFrom": [{"secretRef": {"name": "Bad"}}]}, "name"),
    ("trainjob", {"envFrom": [{"secretRef": {"name": "s"}}]}, "envFrom"),  # Trainer v2.3 has no envFrom
    ("tensorboard", {"nameOverride": "a" * 52}, "nameOverride"),
    ("tensorboard", {"pvc": {"claimName": "Logs"}}, "claimName"),
    ("tensorboard", {"service": {"nodePort": 0}}, "nodePort"),
    ("tensorboard", {"podSecurityContext": {"seccompProfile": {"type": "Default"}}}, "seccompProfile"),
]


@pytest.mark.parametrize(("chart", "values", "key"), REFUSED, ids=[f"{c}-{json.dumps(v)[:50]}" for c, v, _ in REFUSED])
def test_refused_by_schema_and_model(chart, values, key):
    errors = list(VALIDATORS[chart].iter_errors(values))
    assert errors, f"the {chart} schema accepts {values}"
    with pytest.raises(ValidationError) as info:
        MODELS[chart].model_validate(values)
    assert key in str(info.value), str(info.value)


ACCEPTED = [
    ("tfjob", {"data": [{"claimName": "my.pvc", "mountPath": "/data"}]}),  # a PVC name is a DNS subdomain
    ("tfjob", {"queue": "team.a"}),  # a LocalQueue name is a DNS subdomain (and a label value)
    ("tfjob", {"runPolicy": {"activeDeadlineSeconds": 1}}),
    ("tfjob", {"codeSync": {"enabled": True, "repo": "https://example.com/r.git", "secretName": "git.creds"}}),
    ("tfjob", {"serviceAccountName": "a.b"}),  # a ServiceAccount name is a DNS subdomain
    ("tfjob", {"imagePullSecrets": ["registry.creds"]}),
    ("tfjob", {"priorityClassName": "high.priority", "schedulerName": "volcano"}),
    ("tfjob", _cpu("0.5")), ("tfjob", _cpu(".5")), ("tfjob", _cpu("500m")), ("tfjob", _cpu("1e3")),
    ("tfjob", _cpu("16Gi")), ("tfjob", _cpu(2)),
    ("tfjob", {"nameOverride": "a" * 63}),
    ("tfjob", {"labels": {"example.com/Team_A": "Vision.1"}, "annotations": {"example.com/x": "any text: #"}}),
    ("tfjob", {"env": [{"name": "_A.b-1", "value": ""}]}),
    ("tfjob", {"env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                       {"name": "K", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k.v", "optional": True}}}],
               "envFrom": [{"secretRef": {"name": "s"}, "prefix": "S_"}, {"configMapRef": {"name": "c"}}],
               "secretVolumes": [{"secretName": "s", "mountPath": "/s", "defaultMode": 256, "optional": True}]}),
    ("tensorboard", {"env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "ak"}}}],
                     "envFrom": [{"secretRef": {"name": "s3"}}]}),
    ("tfjob", {"runPolicy": {"suspend": True, "schedulingPolicy": {"minAvailable": 2, "queue": "q",
                                                                   "minResources": {"cpu": "4"}}}}),
    ("pytorchjob", {"nprocPerNode": "8"}), ("pytorchjob", {"nprocPerNode": "auto"}),
    ("mpijob", {"mpiApiVersion": "v1", "slotsPerWorker": 8}),
    ("tensorboard", {"nameOverride": "a" * 51, "logDir": "s3://bucket/logs"}),
    ("tensorboard", {"pvc": {"claimName": "logs.v2"}, "service": {"type": "NodePort", "nodePort": 30001}}),
]


@pytest.mark.parametrize(("chart", "values"), ACCEPTED, ids=[f"{c}-{json.dumps(v)[:50]}" for c, v in ACCEPTED])
def test_accepted_by_schema_and_model(chart, values):
    errors = [e.message for e in VALIDATORS[chart].iter_errors(values)]
    assert not errors, errors
    dumped = MODELS[chart].model_validate(values).model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert not list(VALIDATORS[chart].iter_errors(dumped))


# ---------------------------------------------------------------- today's values round-trip
def _ci_files():
    for chart in APP_CHARTS:
        for path in sorted((CHARTS / chart / "ci").glob("*.yaml")):
            yield chart, path


@pytest.mark.parametrize(("chart", "path"), list(_ci_files()), ids=lambda x: getattr(x, "name", x))
def test_ci_values_round_trip(chart, path):
    values = yaml.safe_load(path.read_text(encoding="utf-8"))
    model = MODELS[chart].model_validate(values)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == values


def _specs():
    from arena_helm import JAXJobSpec, MPIJobSpec, PaddleJobSpec, PyTorchJobSpec, TFJobSpec, TrainJobSpec, XGBoostJobSpec

    common = dict(
        image="reg.example.com/ml/train:1", command="python train.py --lr 0.1", env=["A=1", "B=x: y"],
        data=["training-data:/data", "my.pvc:/ckpt"], label={"team": "vision"},
        annotation={"example.com/owner": "alice"}, selector={"pool": "gpu"}, image_pull_secret=["reg.creds"],
        priority="high", service_account="a.b", queue_name="team.a", retry=2, running_timeout=1,
        ttl_after_finished=3600, share_memory="8Gi", scheduler="volcano",
        toleration=["gpu=yes:NoSchedule", "all", "example.com/spot:NoExecute,Exists"],
        env_from_secret=["HF_TOKEN=hf.token", "AWS_SECRET_ACCESS_KEY=s3:secret-key"], env_from=["s3-env",
                                                                                            "configmap:cfg"],
        secret=["gcs-key:/var/secrets/gcs"],
    )
    return [
        ("tfjob", TFJobSpec(name="tf", **common, workers=2, gpus=1, ps=1, chief=True,
                            evaluator=True, success_policy="AllWorkers")),
        ("tfjob", TFJobSpec(name="tf1", image="tf:2", command="c", sync_source="https://example.com/r.git",
                            sync_secret="git.creds", sync_branch="main")),
        ("tfjob", TFJobSpec(name="tf2", image="tf:2", command="c", data=["logs:/logs"], tensorboard=True,
                            logdir="/logs/run", device={"example.com/fpga": 1})),
        ("tfjob", TFJobSpec(name="tf3", image="tf:2", command="c", tensorboard=True, logdir="s3://b/logs",
                            env=["AWS_ENDPOINT_URL=http://s3:9000"], env_from_secret=["AWS_ACCESS_KEY_ID=s3:ak"],
                            env_from=["configmap:s3"])),
        ("pytorchjob", PyTorchJobSpec(name="pt", **common, workers=3, gpus=2, nproc_per_node="auto")),
        ("mpijob", MPIJobSpec(name="mpi", **common, workers=2, gpus=1, slots_per_worker=4, mpi_api="v1")),
        ("mpijob", MPIJobSpec(name="mpi2", image="mpi:1", command="c")),
        ("jaxjob", JAXJobSpec(name="jax", **common, workers=2, gpus=1, cpu_limit="8")),
        ("xgboostjob", XGBoostJobSpec(name="xgb", **common, workers=3, memory="4Gi")),
        ("paddlejob", PaddleJobSpec(name="pd", **common, workers=2, servers=1, gpus=1)),
        ("paddlejob", PaddleJobSpec(name="pd2", image="p:1", command="c")),
        ("trainjob", TrainJobSpec(name="tj", command="torchrun t.py", workers=2, gpus=1, cpu="4",
                                  env=["A=1"], env_from_secret=["HF_TOKEN=hf"], secret=["gcs:/gcs"],
                                  data=["training-data:/data"], label={"team": "vision"},
                                  selector={"pool": "gpu"}, toleration=["gpu=yes:NoSchedule"],
                                  queue_name="team.a", nproc_per_node=2, share_memory="8Gi", suspend=True)),
    ]


@pytest.mark.parametrize(("chart", "spec"), _specs(), ids=lambda x: getattr(x, "name", x))
def test_build_values_round_trip(chart, spec):
    from arena_helm.workload.job_values import build_values

    values = build_values(spec)
    model = MODELS[chart].model_validate(values)
    assert model.model_dump(by_alias=True, exclude_unset=True) == values
    VALIDATORS[chart].validate(model.model_dump(by_alias=True, exclude_unset=True, mode="json"))


def test_construction_by_field_name():
    values = tf.TFJobValues(
        image="tf:2", command="python train.py", host_pid=True,
        worker=tf.TFWorkerReplica(replicas=2, gpus=1, resources=cv.Resources(requests=cv.ResourceList(cpu=4))),
        data=[cv.DataVolume(claim_name="my.pvc", mount_path="/data/")],
        run_policy=cv.RunPolicy(active_deadline_seconds=1, suspend=True),
        tensorboard=cv.TensorBoardValues(enabled=True, log_dir="/data/logs",
                                         pvc=cv.TensorBoardPvc(claim_name="my.pvc", mount_path="/data")),
    )
    assert values.model_dump(by_alias=True, exclude_unset=True, mode="json") == {
        "image": "tf:2", "command": "python train.py", "hostPID": True,
        "worker": {"replicas": 2, "gpus": 1, "resources": {"requests": {"cpu": "4"}}},
        "data": [{"claimName": "my.pvc", "mountPath": "/data"}],
        "runPolicy": {"activeDeadlineSeconds": 1, "suspend": True},
        "tensorboard": {"enabled": True, "logDir": "/data/logs", "pvc": {"claimName": "my.pvc", "mountPath": "/data"}},
    }
    # unset pass-through keys are left out, never null, even without exclude_unset
    full = tf.TFJobValues().model_dump(by_alias=True, mode="json")
    assert full["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["NET_RAW"]}}
    assert full["chief"]["resources"] == {} and full["podSecurityContext"] == {}
    VALIDATORS["tfjob"].validate(full)
