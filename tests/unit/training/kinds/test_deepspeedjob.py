"""Arena's deepspeedjob as a preset of the MPIJob: its values (the hostfile where DeepSpeed reads it, Arena's
launcher flags and defaults) and its refusals (pure: no helm, no API server)."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.core.jobkinds import BY_NAME, SUBMITTABLE
from arena_helm.training.kinds.deepspeedjob import DeepSpeedJobSpec
from arena_helm.training.kinds.mpijob import MPIJobSpec, MPIJobValues
from arena_helm.workload.job_values import build_values


def test_the_preset_makes_an_mpijob_whose_launcher_finds_the_workers_in_deepspeeds_hostfile():
    preset = SUBMITTABLE["deepspeedjob"]
    assert (preset.base, preset.spec_class()) == ("mpijob", DeepSpeedJobSpec)
    assert BY_NAME["dp"] is BY_NAME["deepspeed"] is SUBMITTABLE["mpijob"]  # -T dp: the kind it makes
    spec = DeepSpeedJobSpec(name="ds", image="i", command="deepspeed train.py", workers=2, gpus=4,
                            launcher_selector=["pool=cpu"], launcher_annotation=["a.io/x=1"],
                            worker_annotation=["b.io/y=2"], job_restart_policy="OnFailure")
    values = build_values(spec)
    assert values["hostfilePath"] == "/job/hostfile"
    assert values["runPolicy"]["backoffLimit"] == 6  # Arena's --job-backoff-limit default
    assert values["slotsPerWorker"] == 4
    launcher, worker = values["launcher"], values["worker"]
    assert (launcher["nodeSelector"], launcher["annotations"], launcher["restartPolicy"]) == (
        {"pool": "cpu"}, {"a.io/x": "1"}, "OnFailure")
    assert (worker["annotations"], worker["restartPolicy"], worker["replicas"]) == ({"b.io/y": "2"}, "Never", 2)
    assert "nodeSelector" not in worker
    MPIJobValues.model_validate(values)  # the mpijob chart's contract


def test_a_plain_mpijob_has_no_hostfile_path_and_arenas_backoff_limit_0():
    values = build_values(MPIJobSpec(name="m", image="i", command="mpirun python t.py"))
    assert "hostfilePath" not in values and values["runPolicy"]["backoffLimit"] == 0
    assert values["launcher"]["restartPolicy"] == "Never"


def test_arenas_job_backoff_limit_spelling_sets_the_retries():
    spec = DeepSpeedJobSpec(name="ds", image="i", command="c", retry=2)
    assert build_values(spec)["runPolicy"]["backoffLimit"] == 2


@pytest.mark.parametrize(("given", "line"), [
    ({"ssh_secret": "keys"}, "--ssh-secret: mpi-operator makes the job's SSH keys itself (the Secret <job>-ssh): "
     "leave it out"),
    ({"job_restart_policy": "Always"}, "--job-restart-policy: 'Always': give Never or OnFailure"),
    ({"launcher_annotation": ["nokey"]}, "--launcher-annotation: 'nokey' is not an annotation (expected KEY=VALUE)"),
])
def test_what_mpi_operator_cannot_do_is_refused_naming_the_flag(given, line):
    with pytest.raises(UsageError) as err:
        DeepSpeedJobSpec(name="ds", image="i", command="c", **given)
    assert str(err.value) == line
