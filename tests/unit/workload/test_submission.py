

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
