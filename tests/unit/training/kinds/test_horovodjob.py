"""Arena's horovodjob as a preset of the MPIJob: Horovod's Open MPI settings as MCA env (the user's -e wins) and
Arena's --ssh-port refused (pure: no helm, no API server)."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.core.jobkinds import SUBMITTABLE
from arena_helm.training.kinds.horovodjob import HorovodJobSpec
from arena_helm.training.kinds.mpijob import MPIJobSpec
from arena_helm.workload.job_values import build_values

HOROVOD_ENV = [
    {"name": "OMPI_MCA_hwloc_base_binding_policy", "value": "none"},
    {"name": "OMPI_MCA_rmaps_base_mapping_policy", "value": "slot"},
    {"name": "OMPI_MCA_pml", "value": "ob1"},
    {"name": "OMPI_MCA_btl", "value": "^openib"},
]


def test_the_preset_runs_open_mpi_with_horovods_settings_after_the_users_env():
    assert SUBMITTABLE["horovodjob"].spec_class() is HorovodJobSpec and SUBMITTABLE["horovodjob"].base == "mpijob"
    values = build_values(HorovodJobSpec(name="h", image="i", command="mpirun python t.py", env=["A=1"]))
    assert values["env"] == [{"name": "A", "value": "1"}, *HOROVOD_ENV]
    assert "hostfilePath" not in values


def test_the_users_env_overrides_a_horovod_setting():
    values = build_values(HorovodJobSpec(name="h", image="i", command="c", env=["OMPI_MCA_btl=tcp,self"]))
    assert values["env"] == [{"name": "OMPI_MCA_btl", "value": "tcp,self"},
                             *[e for e in HOROVOD_ENV if e["name"] != "OMPI_MCA_btl"]]


def test_a_plain_mpijob_gets_none_of_them():
    assert "env" not in build_values(MPIJobSpec(name="m", image="i", command="c"))


def test_arenas_ssh_port_is_refused_naming_the_flag():
    with pytest.raises(UsageError) as err:
        HorovodJobSpec(name="h", image="i", command="c", ssh_port=2222)
    assert str(err.value) == ("--ssh-port: mpi-operator's launcher reaches the workers' sshd on the port the image's "
                              "sshd config sets (22 by default), not one set per job: leave it out")
