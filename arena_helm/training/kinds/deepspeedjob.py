"""Arena's ``submit deepspeedjob`` as a preset of the MPIJob (``arena_helm.core.jobkinds.PRESETS``): mpi-operator's
launcher runs the command (``deepspeed train.py ...``), its workers the image's sshd; DeepSpeed's launcher finds
the workers in its default hostfile, ``/job/hostfile`` (deepspeed/launcher/runner.py ``DLTS_HOSTFILE``), where
the chart mounts mpi-operator's hostfile (``<worker> slots=<N>`` lines: the format DeepSpeed reads), and reaches
them over the SSH mpi-operator sets up (pdsh, DeepSpeed's default, or ``--launcher openmpi``).

Arena's deepspeedjob is its etjob chart (Alibaba's et-operator TrainingJob); its launcher and worker flags are
the MPIJob's here (``--launcher-selector``, ``--launcher-annotation``, ``--worker-annotation``), and its job
restart flags map to the launcher (``--job-restart-policy``) and ``runPolicy.backoffLimit``
(``--job-backoff-limit``, default 6 as Arena's).
"""

from typing import Annotated, ClassVar

from pydantic import Field, field_validator

from ...workload.spec import opt
from .mpijob import MPIJobSpec

DEEPSPEED_HOSTFILE = "/job/hostfile"  # deepspeed/launcher/runner.py DLTS_HOSTFILE


class DeepSpeedJobSpec(MPIJobSpec):
    """A DeepSpeed job: an MPIJob whose launcher runs the command (deepspeed train.py ...) over --workers workers;
    DeepSpeed finds them in /job/hostfile (mpi-operator's hostfile, GPUs per worker as slots)."""

    HOSTFILE_PATH: ClassVar[str] = DEEPSPEED_HOSTFILE

    retry: Annotated[int, Field(ge=0, le=1000)] = opt(
        "Retries of the launcher before the job is marked failed (backoffLimit; Arena's --job-backoff-limit).", 6,
        hidden=("--job-backoff-limit",), values="runPolicy.backoffLimit")
    job_restart_policy: str | None = opt("Restart policy of the launcher: Never (the default) or OnFailure "
                                         "(Arena's deepspeedjob).", metavar="Never|OnFailure")
    ssh_secret: str | None = opt("Not available on mpi-operator: it makes each job's SSH keys itself (the Secret "
                                 "<job>-ssh).")

    @field_validator("job_restart_policy")
    @classmethod
    def _restart(cls, v: str | None) -> str | None:
        if v not in (None, "", "Never", "OnFailure"):
            raise ValueError(f"{v!r}: give Never or OnFailure")
        return v or None

    def launcher_restart(self) -> str:
        return self.job_restart_policy or super().launcher_restart()

    @field_validator("ssh_secret")
    @classmethod
    def _ssh_secret(cls, v: str | None) -> str | None:
        if v:
            raise ValueError("mpi-operator makes the job's SSH keys itself (the Secret <job>-ssh): leave it out")
        return v
