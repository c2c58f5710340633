"""The contract between the specs and the charts: whatever spec hypothesis can build, its values validate
against the chart's committed ``values.schema.json`` (Draft 7, as helm 3 reads it). A spec that accepts a
value the chart refuses fails here, before any user meets helm's schema text."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena_helm.core import grammars as k8s
from arena_helm.core.errors import UsageError
from arena_helm.core.jobkinds import KINDS
from arena_helm.workload.job_values import build_values

REPO = Path(__file__).resolve().parents[3]


def rx(pattern: str, max_size: int | None = None):
    s = st.from_regex(pattern, fullmatch=True)
    return s.filter(lambda v: len(v) <= max_size) if max_size else s


quantity = rx(k8s.QUANTITY_RX, 12)
subdomain = rx(k8s.DNS1123_SUBDOMAIN_RX, 40)
label_value = rx(k8s.LABEL_VALUE_RX, 63)
label_key = st.builds(lambda p, n: f"{p}/{n}" if p else n, st.one_of(st.just(""), subdomain),
                      rx(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$"))
abs_path = st.lists(rx(r"^[a-z0-9_.-]{1,8}$"), min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts))
duration = st.one_of(st.integers(0, 10**6), st.builds(lambda h, m: f"{h}h{m}m", st.integers(0, 99), st.integers(0, 59)))
toleration = st.one_of(st.just("all"), st.builds(lambda k, v, e: f"{k}={v}:{e}" if e else f"{k}={v}", label_key,
                                                 label_value.filter(bool), st.sampled_from(["", "NoSchedule",
                                                                                            "NoExecute"])))
COMMON = {
    "image_pull_policy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
    "image_pull_secret": st.lists(subdomain, max_size=3),
    "shell": st.sampled_from(["sh", "bash", "/bin/bash"]),
    "working_dir": abs_path,
    "env": st.dictionaries(rx(k8s.ENV_NAME_RX, 20), st.text(max_size=20), max_size=3),
    "data": st.lists(st.builds(lambda c, m: f"{c}:{m}", subdomain, abs_path), max_size=3),
    "data_dir": st.lists(st.builds(lambda h, m: f"{h}:{m}", abs_path, abs_path), max_size=2),
    "annotation": st.dictionaries(label_key, st.text(max_size=20), max_size=3),
    "label": st.dictionaries(label_key, label_value, max_size=3),
    "selector": st.dictionaries(label_key, label_value, max_size=2),
    "toleration": st.lists(toleration, max_size=2),
    "priority": subdomain, "service_account": subdomain, "scheduler": subdomain,
    "queue": st.booleans(), "queue_name": rx(k8s.DNS1123_SUBDOMAIN_RX, 63),
    "retry": st.integers(0, 1000), "ttl_after_finished": duration,
    "running_timeout": st.integers(1, 10**6),
    "clean_task_policy": st.sampled_from(["None", "Running", "All"]),
    "share_memory": quantity,
    "device": st.dictionaries(st.sampled_from(["amd.com/gpu", "example.com/fpga"]), st.integers(0, 8), max_size=2),
    "sync_source": st.sampled_from(["https://example.com/team/repo.git", "git@example.com:team/repo.git"]),
    "host_network": st.booleans(),
    "gpus": st.integers(0, 128), "cpu": quantity, "memory": quantity,
}
# --logdir and --tensorboard-service-type need --tensorboard: drawn together, so that no draw is spent on a
# spec the cross-field rule refuses (that rule is tested in test_spec.py)
TENSORBOARD = st.one_of(st.just({}), st.just({"tensorboard": False}), st.fixed_dictionaries(
    {"tensorboard": st.just(True)},
    optional={"logdir": st.one_of(abs_path, st.just("s3://bucket/logs")),
              "tensorboard_service_type": st.sampled_from(["ClusterIP", "NodePort", "LoadBalancer"])}))
PER_KIND = {
    "tfjob": {"workers": st.integers(0, 5), "ps": st.integers(0, 3), "chief": st.booleans(), "evaluator": st.booleans(),
              "worker_port": st.integers(1, 65535), "ps_gpus": st.integers(0, 8), "ps_cpu": quantity,
              "worker_memory_limit": quantity, "chief_cpu_limit": quantity, "ps_selector":
              st.dictionaries(label_key, label_value, max_size=2), "success_policy": st.just("AllWorkers")},
    "pytorchjob": {"workers": st.integers(1, 5), "cpu_limit": quantity, "memory_limit": quantity,
                   "nproc_per_node": st.one_of(st.sampled_from(["auto", "cpu", "gpu"]), st.integers(1, 8).map(str))},
    "mpijob": {"workers": st.integers(1, 5), "launcher_cpu": quantity, "launcher_memory": quantity,
               "slots_per_worker": st.integers(1, 1024), "mpi_api": st.sampled_from(["auto", "v2beta1", "v1"])},
    "jaxjob": {"workers": st.integers(1, 5), "cpu_limit": quantity, "memory_limit": quantity, "retry": st.integers(0, 5)},
    "xgboostjob": {"workers": st.integers(1, 5), "cpu_limit": quantity, "memory_limit": quantity,
                   "retry": st.integers(0, 5)},
    "paddlejob": {"workers": st.integers(1, 5), "servers": st.integers(0, 3), "cpu_limit": quantity,
                  "memory_limit": quantity, "retry": st.integers(0, 5)},
    "trainjob": {"workers": st.integers(1, 5), "nproc_per_node": st.integers(1, 8), "suspend": st.booleans(),
                 "runtime": subdomain, "runtime_kind": st.sampled_from(["ClusterTrainingRuntime", "TrainingRuntime"])},
}


def schema_of(chart: str) -> dict:
    return json.loads((REPO / "charts" / chart / "values.schema.json").read_text())


@pytest.mark.parametrize("info", KINDS, ids=[k.key for k in KINDS])
def test_every_spec_hypothesis_builds_gives_values_the_chart_schema_accepts(info):
    validator = jsonschema.Draft7Validator(schema_of(info.chart))
    refused = dict(getattr(info.spec_class(), "UNSUPPORTED", ()))  # flags a kind refuses
    fields = st.tuples(st.fixed_dictionaries(
        {"name": rx(r"^[a-z][a-z0-9]{0,10}$"), "image": st.just("busybox:1.36"), "command": st.text(max_size=30)},
        optional={k: v for k, v in {**COMMON, **PER_KIND[info.key]}.items() if k not in refused},
    ), st.just({}) if "tensorboard" in refused else TENSORBOARD).map(lambda parts: {**parts[0], **parts[1]})

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fields)
    def check(kw):
        try:
            spec = info.spec_class()(**kw)
        except UsageError:
            assume(False)  # a cross-field rule (a mount used twice, no replicas, ...) refused it: fine
            return
        values = build_values(spec)
        errors = sorted(validator.iter_errors(values), key=lambda e: list(e.path))
        assert not errors, f"{kw} -> {values}: {[(list(e.path), e.message) for e in errors]}"

    check()
