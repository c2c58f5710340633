"""Bad input to every serving kind's spec (what ``serve KIND`` and ``serve update`` build from the flags): one
line naming the flag and the fix, the whole message asserted, raised before anything renders."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.core.servekinds import BY_KEY

# the least each kind needs, so that each case below has one problem
BASE = {"custom": {"image": "nginx", "command": "python s.py"}, "vllm": {"model": "org/m"},
        "sglang": {"model": "org/m"}, "tensorflow": {"model_path": "/m"}, "triton": {"model_repository": "/models"},
        "kserve": {"model_format": "sklearn"}, "distributed": {"image": "x", "command": "python s.py"}}
QUANTITY = "is not a valid quantity (e.g. 2, 0.5, 500m, 512Mi, 16Gi)"
LIVE = {"liveness_probe_action": "httpGet", "liveness_probe_action_option": ["port: 8080"]}

CASES = [
    # names and versions: the whole value, a DNS label; the release and the StatefulSets fit their limits
    ("custom", {"version": "v1\n"},
     "--version: 'v1\\n' must be a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)"),
    ("vllm", {"name": "a" * 49, "version": "v123"},
     f"--name/--version: the release '{'a' * 49}-v123' is 54 characters; helm allows 53: shorten the name or the "
     "version"),
    ("distributed", {"name": "a" * 47, "version": "v12"},
     f"--name/--version: the StatefulSet '{'a' * 47}-v12-0' would be 53 characters; its pods' "
     "controller-revision-hash label allows 52: shorten the name or the version"),
    ("vllm", {"model": "org/m\n"}, "--model 'org/m\\n': not a Hugging Face id (org/name) nor an absolute path"),
    ("sglang", {"model": "org/m\n"}, "--model 'org/m\\n': not a Hugging Face id (org/name) nor an absolute path"),
    ("vllm", {"model_name": "m\n"},
     "--model-name: label value 'm\\n' must be at most 63 letters, digits, '-', '_', '.', starting and ending with "
     "a letter or digit"),
    # URIs, paths and references
    ("kserve", {"storage_uri": "s3://u:p@b/m"},
     "--storage-uri s3://***@b/m carries a password (user:password@), which would be written in clear: KServe reads "
     "a storage's credentials from a Secret of the predictor's service account, never from the URI"),
    ("kserve", {"storage_uri": "pvc://Bad_Name/m"},
     "--storage-uri: the claim 'Bad_Name' must be a lowercase DNS subdomain (a-z, 0-9, '-', '.'; e.g. "
     "training-data)"),
    ("kserve", {"runtime_version": "v1 beta"},
     "--runtime-version 'v1 beta': not an image tag (at most 128 letters, digits, '_', '.', '-', not starting with "
     "'.' or '-')"),
    ("tensorflow", {"model_path": "rel/m"}, "--model-path: 'rel/m' must be absolute (start with /) and hold no ':' or "
     "newline"),
    ("triton", {"model_repository": "pvc://m/x"},
     "--model-repository: 'pvc://m/x' must be absolute (start with /) and hold no ':' or newline"),
    ("custom", {"data": ["Bad_Claim:/m"]},
     "--data: 'Bad_Claim' must be a lowercase DNS subdomain (a-z, 0-9, '-', '.'; e.g. training-data)"),
    ("custom", {"data": ["m:relative"]}, "--data: 'relative' must be absolute (start with /) and hold no ':' or newline"),
    # numbers and sizes: the value given and what to give
    ("kserve", {"canary_traffic_percent": 101}, "--canary-traffic-percent: 101: give at most 100"),
    ("custom", {"replicas": -1}, "--replicas: -1: give 0 or more"),
    ("tensorflow", {"gpus": -1}, "--gpus: -1: give 0 or more"),
    ("custom", {"restful_port": 65536}, "--restful-port: 65536: give at most 65535"),
    ("custom", {"cpu": "4 cores"}, f"--cpu: '4 cores' {QUANTITY}"),
    ("triton", {"memory": "1Q"}, f"--memory: '1Q' {QUANTITY}"),
    ("custom", {"termination_grace_period": -1}, "--termination-grace-period: -1: a duration cannot be negative"),
    # pod flags every kind shares
    ("sglang", {"env": ["1BAD=x"]}, "--env: environment variable name '1BAD' must match [-._a-zA-Z][-._a-zA-Z0-9]*"),
    ("custom", {"toleration": ["k=v:Bad"]},
     "--toleration: toleration effect 'Bad' must be one of NoSchedule, PreferNoSchedule, NoExecute"),
    ("kserve", {"label": ["servingVersion=x"]},
     "--label: servingVersion=x: the chart sets label servingVersion itself: give another key"),
    ("distributed", {"label": ["app.kubernetes.io/component=x"]},
     "--label: app.kubernetes.io/component=x: the chart sets label app.kubernetes.io/component itself: give another "
     "key"),
    # probes, by Kubernetes' rules (validateProbe, validateLivenessProbe, validateStartupProbe)
    ("custom", {**LIVE, "liveness_probe_option": ["successThreshold: 2"]},
     "--liveness-probe-option 'successThreshold: 2': a liveness probe's successThreshold must be 1 (Kubernetes' "
     "rule)"),
    ("custom", {"readiness_probe_action": "grpc", "readiness_probe_action_option": ["port: http"]},
     "--readiness-probe-action-option 'port: http': a grpc probe's port is a number 1-65535"),
    ("custom", {"readiness_probe_action": "httpGet", "readiness_probe_action_option": ["port: 8080", "scheme: FTP"]},
     "--readiness-probe-action-option 'scheme: FTP': the scheme is HTTP or HTTPS"),
    ("custom", {"readiness_probe_option": ["periodSeconds: 2"]},
     "--readiness-probe-action: give the probe's action (httpGet, tcpSocket, grpc, exec) for its options"),
    ("custom", {"liveness_probe_action": "exec", "liveness_probe_action_option": ["command=cat '/h"]},
     "--liveness-probe-action-option \"command=cat '/h\": the command cannot be split as a shell does (no closing "
     "quotation)"),
]


@pytest.mark.parametrize(("kind", "fields", "message"), CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CASES])
def test_a_bad_flag_is_one_line_naming_it(kind, fields, message):
    with pytest.raises(UsageError) as err:
        BY_KEY[kind].spec_class()(**{"name": "s1", "version": "v1", **BASE[kind], **fields})
    assert str(err.value) == message


@pytest.mark.parametrize("kind", sorted(BASE))
def test_the_base_of_each_kind_is_good(kind):
    """Each case above has exactly the problem it names: its kind's base alone is accepted."""
    assert BY_KEY[kind].spec_class()(name="s1", version="v1", **BASE[kind]).release == "s1-v1"
