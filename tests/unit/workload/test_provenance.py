"""provenance: what a release keeps of its submit, and the values of a rerun (pure)."""

from __future__ import annotations

import json

import pytest

from arena_helm.core.jobkinds import KINDS
from arena_helm.workload.provenance import extras, mask, overlay, record, rerun_values, spec_fields
from arena_helm.workload.submission import job_values

RICH = dict(image="img:1", command="python t.py --lr 0.1", env=["A=1", "B=x y"], data=["d:/data"],
            toleration=["k=v:NoSchedule"], label=["a=b"], annotation=["c=d"], selector=["pool=a"], gpus=2, cpu="2",
            memory="4Gi", env_from_secret=["TOK=hf:token"], secret=["creds:/etc/creds"], image_pull_secret=["reg"],
            user="ada")


@pytest.mark.parametrize("info", KINDS, ids=[k.key for k in KINDS])
def test_spec_fields_make_the_same_spec_again(info, tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("lr: 1\n")
    cls = info.spec_class()
    fields = {k: v for k, v in RICH.items() if k in cls.model_fields}
    if "config_file" in cls.model_fields and info.key != "trainjob":
        fields["config_file"] = [f"{conf}:/etc/c.yaml"]
    spec = cls(name="x", namespace="ns", **fields)
    recorded = spec_fields(spec)
    assert "name" not in recorded and "namespace" not in recorded and recorded["user"] == "ada"
    conf.unlink()  # the recorded spec holds the file's content: a rerun reads no file
    assert cls(name="x", namespace="ns", **recorded) == spec


@pytest.mark.parametrize(("words", "masked"), [
    (["submit", "tf", "--notify", "https://h/s3cr3t", "--wait"], ["submit", "tf", "--notify", "***", "--wait"]),
    (["submit", "tf", "--notify=https://h/s3cr3t"], ["submit", "tf", "--notify=***"]),
    (["submit", "tf", "--", "python", "t.py", "--notify", "x"], ["submit", "tf", "--", "python", "t.py", "--notify", "x"]),
    (["submit", "tf", "python", "t.py"], ["submit", "tf", "python", "t.py"]),
])
def test_mask_hides_the_notify_url_only(words, masked):
    assert mask(words) == masked


def test_record():
    from arena_helm.__about__ import __version__
    from arena_helm.core.jobkinds import BY_KEY

    spec = BY_KEY["tfjob"].spec_class()(name="x", namespace="ns", image="i", command="c", workers=2)
    assert record(spec, ["arena-helm", "submit", "tf", "--notify", "u"]) == {
        "version": __version__, "commandLine": ["arena-helm", "submit", "tf", "--notify", "***"],
        "spec": {"image": "i", "command": "c", "workers": 2}}
    assert record(spec) == {"version": __version__, "spec": {"image": "i", "command": "c", "workers": 2}}


def test_extras_are_what_the_user_set_beyond_the_generated_values():
    generated = {"image": "i", "worker": {"replicas": 2, "gpus": 1}, "env": [{"name": "A", "value": "1"}], "shm": "2Gi"}
    old = {"image": "i", "worker": {"replicas": 2, "gpus": 1, "nodeSelector": {"x": "y"}},
           "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "extra": 1}
    assert extras(old, generated) == {"worker": {"nodeSelector": {"x": "y"}},
                                      "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                      "extra": 1, "shm": None}
    assert overlay({"image": "j", "worker": {"replicas": 4, "gpus": 1}, "shm": "2Gi"}, extras(old, generated)) == {
        "image": "j", "worker": {"replicas": 4, "gpus": 1, "nodeSelector": {"x": "y"}},
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "extra": 1}


def test_rerun_values_change_only_what_the_flags_change():
    from arena_helm.core.jobkinds import BY_KEY

    cls = BY_KEY["tfjob"].spec_class()
    old_spec = cls(name="a", namespace="ns", image="i", command="python t.py", workers=2, gpus=1, user="ada")
    new_spec = cls(name="b", namespace="ns", **{**spec_fields(old_spec), "gpus": 4})
    old_values = job_values(old_spec, record(old_spec))
    old_values["worker"]["nodeSelector"] = {"pool": "big"}  # a user's --set over the generated values
    prov = record(new_spec, ["arena-helm", "rerun", "a", "--gpus", "4"])
    got = rerun_values(old_values, job_values(old_spec), job_values(new_spec), prov)
    want = job_values(new_spec, prov)
    want["worker"]["nodeSelector"] = {"pool": "big"}
    assert got == want
    assert got["worker"]["gpus"] == 4 and got["provenance"]["spec"]["gpus"] == 4
    # no flag: the same values, but for the rerun's own provenance
    same = rerun_values(old_values, job_values(old_spec), job_values(old_spec), prov)
    assert {k: v for k, v in same.items() if k != "provenance"} == {
        k: v for k, v in old_values.items() if k != "provenance"}


def _pod(*statuses, init=()):
    return {"status": {"containerStatuses": [{"image": i, "imageID": d} for i, d in statuses],
                       "initContainerStatuses": [{"image": i, "imageID": d} for i, d in init]}}


def test_image_digests_from_the_pods_and_what_get_records():
    from arena_helm.workload.provenance import DIGESTS_ANNOTATION, digests_to_record, image_digests, recorded_digests

    d1, d2 = "docker.io/library/tf@sha256:" + "1" * 64, "registry.k8s.io/git-sync@sha256:" + "2" * 64
    pods = [_pod(("tf:2", d1), init=(("git-sync:v4", "docker-pullable://" + d2),)),
            _pod(("tf:2", d1), ("sidecar:1", ""))]  # a container still pulling reports no imageID
    assert image_digests(pods) == {"git-sync:v4": d2, "tf:2": d1}
    job = {"metadata": {"annotations": {}}}
    assert digests_to_record(job, pods) == {"git-sync:v4": d2, "tf:2": d1}
    job["metadata"]["annotations"][DIGESTS_ANNOTATION] = json.dumps({"tf:2": d1, "git-sync:v4": d2})
    assert recorded_digests(job) == {"tf:2": d1, "git-sync:v4": d2}
    assert digests_to_record(job, pods) is None  # nothing new: no write
    moved = "docker.io/library/tf@sha256:" + "9" * 64  # the tag moved since: the first digest stays
    assert digests_to_record(job, [_pod(("tf:2", moved), ("new:1", moved))]) == {
        "git-sync:v4": d2, "new:1": moved, "tf:2": d1}
    job["metadata"]["annotations"][DIGESTS_ANNOTATION] = "not json"
    assert recorded_digests(job) == {}


def test_the_sync_commit_is_recorded_only_when_known():
    from arena_helm.core.jobkinds import BY_KEY

    spec = BY_KEY["tfjob"].spec_class()(name="j", image="tf:2", command="python t.py")
    assert "gitCommit" not in record(spec, ["arena-helm"])
    assert record(spec, ["arena-helm"], "a" * 40)["gitCommit"] == "a" * 40
