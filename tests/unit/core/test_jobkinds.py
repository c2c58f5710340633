"""The kinds registry is the one source of per-kind facts: everything else is derived from it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena_helm.adapters.charts import chart_source
from arena_helm.adapters.defaults import IMAGE_KEYS
from arena_helm.cli import app
from arena_helm.core import jobkinds as kinds
from arena_helm.core.errors import UsageError
from arena_helm.releases.reader import kind_of_type
from arena_helm.views.jobs import chart_kind


def test_every_kind_has_its_chart_spec_and_names():
    for info in kinds.KINDS:
        assert (chart_source(info.chart) / "Chart.yaml").is_file()
        assert info.spec_class().kind == info.key
        for name in info.names:
            assert kinds.lookup(name) is info
            assert kinds.lookup(name.upper()) is info
        assert info.api_versions()[0] == f"{info.group}/{info.versions[0]}"


def test_a_kind_s_apis_are_its_versions_each_with_who_serves_it():
    from arena_helm.core.catalog import Api

    assert kinds.BY_KEY["mpijob"].apis == (
        Api("kubeflow.org", "v2beta1", "MPIJob", "mpijobs", "the Kubeflow mpi-operator"),
        Api("kubeflow.org", "v1", "MPIJob", "mpijobs", kinds.TRAINING_OPERATOR))
    assert kinds.BY_KEY["tfjob"].apis == (Api("kubeflow.org", "v1", "TFJob", "tfjobs", kinds.TRAINING_OPERATOR,
                                              "validator.tfjob.training-operator.kubeflow.org"),)
    assert kinds.BY_KEY["mpijob"].api_versions() == ("kubeflow.org/v2beta1", "kubeflow.org/v1")


def test_a_kind_s_operator_says_restarting_or_its_pods_tell_it():
    assert {k.key: k.writes_restarting for k in kinds.KINDS} == {
        "tfjob": True, "pytorchjob": True, "mpijob": True, "jaxjob": True, "xgboostjob": True, "paddlejob": True,
        "trainjob": False}


def test_derived_tables_follow_the_registry():
    assert tuple(kinds.BY_CHART) == tuple(k.key for k in kinds.KINDS)
    assert {k.key: chart_kind({"chart": f"{k.chart}-0.1.0"}) for k in kinds.KINDS} == {k.key: k.kind for k in kinds.KINDS}
    assert chart_kind({"chart": "nginx-1.0.0"}) is None
    assert {k.key for k in kinds.KINDS} <= IMAGE_KEYS
    assert kinds.REPLICA_KEYS == ("tfReplicaSpecs", "pytorchReplicaSpecs", "mpiReplicaSpecs", "jaxReplicaSpecs",
                                 "xgbReplicaSpecs", "paddleReplicaSpecs")
    assert kind_of_type("py") == "PyTorchJob" and kind_of_type(None) is None


def test_an_unknown_name_is_a_usage_error_listing_the_names():
    with pytest.raises(UsageError, match=r"-T/--type 'caffe': use tfjob, pytorchjob, mpijob, jaxjob, xgboostjob, "
                                         r"paddlejob, trainjob \(or tf, pytorch, py, mpi, mj, jax, xgboost, "
                                         r"xgb, paddle, tj\)"):
        kinds.lookup("caffe")


def test_submit_offers_every_kind_and_alias():
    out = CliRunner().invoke(app, ["submit", "--help"]).stdout
    for info in kinds.KINDS:
        assert f"  {', '.join(info.names)} " in out  # each kind with its aliases, as kubectl lists short names
        for alias in info.aliases:
            res = CliRunner().invoke(app, ["submit", alias, "--help"])
            assert res.exit_code == 0 and f"Submit {info.summary}." in res.stdout


def test_data_completion_is_wired_into_every_submit_command():
    import typing

    from arena_helm.cli.common import complete_claims
    from arena_helm.cli.specflags import spec_options

    for info in kinds.KINDS:
        params, _ = spec_options(info.spec_class())
        data = next(p for p in params if p.name == "data")
        assert typing.get_args(data.annotation)[1].autocompletion is complete_claims


def test_a_mistyped_kind_gets_the_kinds_it_may_mean():
    res = CliRunner().invoke(app, ["submit", "pyt", "--name", "x"])
    assert res.exit_code == 2
    assert res.stderr == "error: No such command 'pyt'. Did you mean 'pytorchjob'? (see 'arena-helm submit --help')\n"
    res = CliRunner().invoke(app, ["submit", "xgboots"])
    assert "Did you mean 'xgboostjob'?" in res.stderr
    res = CliRunner().invoke(app, ["submit", "caffe"])
    assert res.stderr == "error: No such command 'caffe'. (see 'arena-helm submit --help')\n"


# Arena v0.15.5's submit aliases (pkg/commands/training/submit_*.go): each reaches the same command here
ARENA_SUBMIT_ALIASES = {"tf": "tfjob", "pytorch": "pytorchjob", "mpi": "mpijob", "mj": "mpijob", "horovod": "horovodjob",
                        "hj": "horovodjob", "dp": "deepspeedjob", "et": "etjob", "vj": "volcanojob", "rj": "rayjob",
                        "spark": "sparkjob"}


@pytest.mark.parametrize(("alias", "key"), sorted(ARENA_SUBMIT_ALIASES.items()))
def test_arenas_submit_aliases_are_taken(alias, key):
    target = kinds.SUBMITTABLE.get(key) or kinds.BY_REFUSED_NAME[key]
    assert alias in target.names


@pytest.mark.parametrize("name", [n for r in kinds.REFUSED for n in r.names])
def test_arenas_kinds_without_a_job_here_are_refused_in_one_line_whatever_the_flags(name):
    refused = kinds.BY_REFUSED_NAME[name]
    res = CliRunner().invoke(app, ["submit", name, "--name", "x", "--taskImages", "a", "--help", "python", "t.py"])
    assert (res.exit_code, res.stdout, res.stderr) == (2, "", f"error: submit {refused.key}: {refused.why}\n")


def test_a_presets_job_is_its_kinds_to_the_read_side():
    for preset in kinds.PRESETS:
        assert all(kinds.BY_NAME[n] is kinds.BY_KEY[preset.base] for n in preset.names)
        assert preset.key not in kinds.BY_CHART and preset.key not in {k.key for k in kinds.KINDS}
