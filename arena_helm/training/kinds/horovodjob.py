"""Arena's ``submit horovodjob`` as a preset of the MPIJob (``arena_helm.core.jobkinds.PRESETS``): mpi-operator's
launcher runs the command (``mpirun ...`` or ``horovodrun --hostfile /etc/mpi/hostfile ...``), its workers the
image's sshd, as mpi-operator's Horovod example (mpi-operator v0.8.0 examples/v2beta1/horovod/tensorflow-mnist.yaml).

Arena's horovodjob (its ``tf-horovod`` chart) is a StatefulSet of workers and a Job whose image's own scripts
(``/openmpi/generated/runMPI.sh``) start sshd on ``--ssh-port`` and run the command; arena-helm gives the same
command line to mpi-operator instead. The preset's env is the Open MPI settings of that example and of Horovod's
own guide (docs/mpi.rst: ``-bind-to none -map-by slot -mca pml ob1 -mca btl ^openib``) as Open MPI's MCA
environment variables, so that a plain ``mpirun python train.py`` runs as Horovod recommends; ``-e`` overrides any
of them.
"""

from typing import ClassVar

from pydantic import field_validator

from ...workload.spec import opt
from .mpijob import MPIJobSpec


class HorovodJobSpec(MPIJobSpec):
    """A Horovod job: an MPIJob whose launcher runs the command (mpirun ... or horovodrun --hostfile
    /etc/mpi/hostfile ...) over --workers workers; Open MPI runs with Horovod's settings (OMPI_MCA_* env)."""

    FRAMEWORK_ENV: ClassVar[dict[str, str]] = {
        "OMPI_MCA_hwloc_base_binding_policy": "none",  # -bind-to none
        "OMPI_MCA_rmaps_base_mapping_policy": "slot",  # -map-by slot
        "OMPI_MCA_pml": "ob1",  # -mca pml ob1
        "OMPI_MCA_btl": "^openib",  # -mca btl ^openib
    }

    ssh_port: int | None = opt("Not available on mpi-operator (Arena's horovodjob image scripts): the workers run "
                               "the image's sshd on its own port.")

    @field_validator("ssh_port")
    @classmethod
    def _ssh_port(cls, v: int | None) -> int | None:
        if v is not None:
            raise ValueError("mpi-operator's launcher reaches the workers' sshd on the port the image's sshd "
                             "config sets (22 by default), not one set per job: leave it out")
        return v
