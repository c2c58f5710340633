

def test_a_missing_crd_is_explained_whichever_way_helm_meets_it():
    """helm meets a missing CRD as "no matches for kind" (discovery knows the kind is gone) or, when the CRD went
    away after discovery listed it, as a 404 on creating the job: both name the operator to install."""
    from arena_helm.core.errors import ClusterError, HelmError
    from arena_helm.workload.submission import _explain

    line = ("the cluster does not serve MPIJob (kubeflow.org/v2beta1 or kubeflow.org/v1): install the Kubeflow "
            "mpi-operator")
    for text in ('INSTALLATION FAILED: unable to build kubernetes objects from release manifest: resource mapping '
                 'not found for name: "x" namespace: "" from "": no matches for kind "MPIJob" in version '
                 '"kubeflow.org/v2beta1"',
                 "INSTALLATION FAILED: the server could not find the requested resource (post mpijobs.kubeflow.org)"):
        err = _explain(HelmError(text), "MPIJob")
        assert isinstance(err, ClusterError) and str(err).startswith(line), err
    other = HelmError("INSTALLATION FAILED: the server could not find the requested resource (post pods)")
    assert _explain(other, "MPIJob") is other


class SequenceKube:
    """The job objects and pods a wait sees, one of each a poll; what it asked for."""

    def __init__(self, steps):
        self.steps, self.pod_lists = list(steps), []

    def get_job(self, kind, version, namespace, name):
        self.job, self.pods = self.steps.pop(0)
        return self.job

    def list_pods(self, namespace, selector=""):
        self.pod_lists.append((namespace, selector))
        return self.pods


def _trainjob(active, complete=False):
    status = {"jobsStatus": [{"name": "node", "active": active}]}
    if complete:
        status["conditions"] = [{"type": "Complete", "status": "True"}]
    return {"kind": "TrainJob", "spec": {"trainer": {"numNodes": 2}}, "status": status}


def _pod(phase):
    cs = {"name": "node", "restartCount": 0, "state": {"running": {}} if phase == "Running" else {}}
    return {"metadata": {"name": f"p-{phase}"}, "status": {"phase": phase, "containerStatuses": [cs]}}


def test_wait_tells_a_trainjob_restarting_from_its_pods_as_get_does():
    from arena_helm.workload.submission import wait_job

    running, failed = _pod("Running"), _pod("Failed")
    kube = SequenceKube([(_trainjob(2), [running, running]), (_trainjob(1), [running, failed]),
                         (_trainjob(2), [running, failed, running]), (_trainjob(0, complete=True), [])])
    said = []
    assert wait_job(kube, "TrainJob", "v1alpha1", "ns", "tj", 60, poll=0, progress=said.append) == "Succeeded"
    assert said == ["trainjob/tj: Running", "trainjob/tj: Restarting", "trainjob/tj: Running",
                    "trainjob/tj: Succeeded"]
    assert kube.pod_lists[0] == ("ns", "jobset.sigs.k8s.io/jobset-name=tj")


def test_wait_reads_no_pods_of_a_kind_whose_operator_says_restarting():
    from arena_helm.workload.submission import wait_job

    job = {"kind": "PyTorchJob", "status": {"conditions": [{"type": "Restarting", "status": "True"}]}}
    done = {"kind": "PyTorchJob", "status": {"conditions": [{"type": "Failed", "status": "True"}]}}
    kube = SequenceKube([(job, []), (done, [])])
    said = []
    assert wait_job(kube, "PyTorchJob", "v1", "ns", "pt", 60, poll=0, progress=said.append) == "Failed"
    assert (said, kube.pod_lists) == (["pytorchjob/pt: Restarting", "pytorchjob/pt: Failed"], [])
