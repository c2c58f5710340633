"""Bad input to every family's commands, as a new user types it with no cluster configured: one line naming the
flag, exit 2, nothing on stdout, no traceback, refused before any kubeconfig is read (KUBECONFIG names a file that
does not exist: reaching it would be exit 1 and its own line)."""

from __future__ import annotations

import pytest
from edgetools import cli

CUSTOM = ["serve", "custom", "--image", "nginx", "--dry-run", "--name", "s1"]
KSERVE = ["serve", "kserve", "--name", "k1", "--model-format", "sklearn", "--dry-run"]
LIVE = [*CUSTOM, "--liveness-probe-action"]
WS = ["workspace", "start", "w1", "--dry-run"]
SPLIT = ["serve", "traffic-split", "s1", "-v", "a:50", "-v", "b:50", "--dry-run"]
NO_SUCH_TYPE = ("error: -T/--type 'nosuch': use tfjob, pytorchjob, mpijob, jaxjob, xgboostjob, paddlejob, trainjob "
                "(or tf, pytorch, py, mpi, mj, jax, xgboost, xgb, paddle, tj)")
LONG = "a" * 38  # with the default version (12 digits): a 51-character release

CASES = {
    # text that ends in a newline is not a name (a pattern's '$' alone would take it)
    "serving version with a newline": (
        [*CUSTOM, "--version", "v1\n", "--", "python", "s.py"],
        "error: --version: 'v1\\n' must be a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)"),
    "model name with a newline": (
        ["serve", "vllm", "--name", "s1", "--model", "org/m", "--model-name", "m\n", "--dry-run"],
        "error: --model-name: label value 'm\\n' must be at most 63 letters, digits, '-', '_', '.', starting and "
        "ending with a letter or digit"),
    "job name with a newline": (
        ["submit", "tfjob", "--name", "j1\n", "--image", "busybox", "--dry-run", "python", "a.py"],
        "error: --name: job name 'j1\\n' must start with a lowercase letter and hold only a-z, 0-9 and '-' (not "
        "ending in '-')"),
    # labels the chart sets itself
    "serving label release": (
        [*CUSTOM, "-l", "release=x", "--", "python", "s.py"],
        "error: --label: release=x: the chart sets label release itself: give another key"),
    "serving label servingName": (
        [*CUSTOM, "-l", "servingName=x", "--", "python", "s.py"],
        "error: --label: servingName=x: the chart sets label servingName itself: give another key"),
    "serving label serviceName": (
        [*CUSTOM, "-l", "serviceName=x", "--", "python", "s.py"],
        "error: --label: serviceName=x: the chart sets label serviceName itself: give another key"),
    "workspace label release": (
        [*WS, "-l", "release=x"], "error: --label: release=x: the chart sets label release itself: give another key"),
    "workspace label type": (
        [*WS, "-l", "arena-helm.kubeflow.org/workspace-type=x"],
        "error: --label: arena-helm.kubeflow.org/workspace-type=x: the chart sets label "
        "arena-helm.kubeflow.org/workspace-type itself: give another key"),
    "job label app.kubernetes.io/name": (
        ["submit", "tfjob", "--name", "j1", "--image", "busybox", "-l", "app.kubernetes.io/name=x", "--dry-run",
         "python", "a.py"],
        "error: --label: app.kubernetes.io/name=x: the chart sets label app.kubernetes.io/name itself: give "
        "another key"),
    # URIs and references
    "storage URI with a password": (
        [*KSERVE, "--storage-uri", "s3://user:secret@bucket/m"],
        "error: --storage-uri s3://***@bucket/m carries a password (user:password@), which would be written in "
        "clear: KServe reads a storage's credentials from a Secret of the predictor's service account, never from "
        "the URI"),
    "pvc claim that cannot exist": (
        [*KSERVE, "--storage-uri", "pvc://Bad_Name/m"],
        "error: --storage-uri: the claim 'Bad_Name' must be a lowercase DNS subdomain (a-z, 0-9, '-', '.'; e.g. "
        "training-data)"),
    "runtime version not a tag": (
        [*KSERVE, "--storage-uri", "s3://b/m", "--runtime-version", "bad tag!"],
        "error: --runtime-version 'bad tag!': not an image tag (at most 128 letters, digits, '_', '.', '-', not "
        "starting with '.' or '-')"),
    "sync source with a password": (
        ["submit", "tfjob", "--name", "j1", "--image", "busybox", "--sync-mode", "git", "--sync-source",
         "https://u:p@example.com/a/b.git", "--dry-run", "python", "a.py"],
        "error: --sync-source: https://***@example.com/a/b.git carries a password (user:password@), which would be "
        "written in clear: give them in a Secret with keys username and password (--sync-secret)"),
    # probes, by Kubernetes' rules
    "liveness successThreshold": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 8080", "--liveness-probe-option",
         "successThreshold: 2", "--", "python", "s.py"],
        "error: --liveness-probe-option 'successThreshold: 2': a liveness probe's successThreshold must be 1 "
        "(Kubernetes' rule)"),
    "startup successThreshold": (
        [*CUSTOM, "--startup-probe-action", "tcpSocket", "--startup-probe-action-option", "port: 8080",
         "--startup-probe-option", "successThreshold: 3", "--", "python", "s.py"],
        "error: --startup-probe-option 'successThreshold: 3': a startup probe's successThreshold must be 1 "
        "(Kubernetes' rule)"),
    "probe command with an unbalanced quote": (
        [*LIVE, "exec", "--liveness-probe-action-option", "command=cat '/h", "--", "python", "s.py"],
        "error: --liveness-probe-action-option \"command=cat '/h\": the command cannot be split as a shell does "
        "(no closing quotation)"),
    "probe timing given twice": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 8080", "--liveness-probe-option",
         "periodSeconds: 2", "--liveness-probe-option", "periodSeconds: 3", "--", "python", "s.py"],
        "error: --liveness-probe-option 'periodSeconds: 3': periodSeconds is given twice: give it once"),
    "probe action option given twice": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 8080", "--liveness-probe-action-option",
         "port: 8081", "--", "python", "s.py"],
        "error: --liveness-probe-action-option 'port: 8081': port is given twice: give it once"),
    "probe port out of range": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 99999", "--", "python", "s.py"],
        "error: --liveness-probe-action-option 'port: 99999': port 99999 is out of range: give 1-65535"),
    "probe port name with --": (
        [*LIVE, "tcpSocket", "--liveness-probe-action-option", "port: my--port", "--", "python", "s.py"],
        "error: --liveness-probe-action-option 'port: my--port': a tcpSocket probe's port is a number 1-65535 or a "
        "port's name (at most 15 a-z, 0-9, '-', a letter)"),
    "grpc probe port by name": (
        [*LIVE, "grpc", "--liveness-probe-action-option", "port: grpc", "--", "python", "s.py"],
        "error: --liveness-probe-action-option 'port: grpc': a grpc probe's port is a number 1-65535"),
    "probe scheme": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 80", "--liveness-probe-action-option",
         "scheme: ftp", "--", "python", "s.py"],
        "error: --liveness-probe-action-option 'scheme: ftp': the scheme is HTTP or HTTPS"),
    "probe period zero": (
        [*LIVE, "httpGet", "--liveness-probe-action-option", "port: 80", "--liveness-probe-option",
         "periodSeconds: 0", "--", "python", "s.py"],
        "error: --liveness-probe-option 'periodSeconds: 0': periodSeconds is 1 or more"),
    # name limits of what the chart creates
    "distributed serving StatefulSet name": (
        ["serve", "distributed", "--name", LONG, "--version", "202612062019", "--image", "nginx", "--replicas", "2",
         "--dry-run", "--", "python", "s.py"],
        f"error: --name/--version: the StatefulSet '{LONG}-202612062019-1' would be 53 characters; its pods' "
        "controller-revision-hash label allows 52: shorten the name or the version"),
    # durations and sizes
    "idle stop under a second": (
        [*WS, "--idle-stop", "500ms"], "error: --idle-stop: '500ms' is under one second: give 1s or more (or 0)"),
    "max lifetime under a second": (
        [*WS, "--max-lifetime", "500ms"],
        "error: --max-lifetime: '500ms' is under one second: give 1s or more (or 0)"),
    "max lifetime zero": (
        [*WS, "--max-lifetime", "0"], "error: --max-lifetime: 0s: give 1s or more, or leave it out for no limit"),
    "home size zero": (
        [*WS, "--home-size", "0"], "error: --home-size 0: give a size greater than zero (e.g. 20Gi)"),
    "job timeout under a second": (
        ["submit", "tfjob", "--name", "j1", "--image", "busybox", "--running-timeout", "1ns", "--dry-run",
         "python", "a.py"],
        "error: --running-timeout: '1ns' is under one second: give 1s or more (or 0)"),
    # the longest name of each family follows from every object it makes (tests/cluster/test_server_validation.py)
    "job name too long for its TensorBoard": (
        ["submit", "tfjob", "--name", "a" * 52, "--image", "busybox", "--tensorboard", "--logdir", "/logs",
         "--dry-run", "-o", "values", "python", "a.py"],
        f"error: --name: job name '{'a' * 52}' is 52 characters; at most 51 fit a job with --tensorboard (its "
        "TensorBoard's Service is <name>-tensorboard, a DNS label of at most 63)"),
    "traffic split name no serving has": (
        ["serve", "traffic-split", "a" * 52, "-v", "a:50", "-v", "b:50", "--port", "http:80", "--dry-run"],
        f"error: NAME: serving name '{'a' * 52}' is 52 characters; a serving's name is at most 51 (its versions' "
        "releases are NAME-VERSION, at most 53)"),
    "traffic split name grammar": (
        ["serve", "traffic-split", "S1", "-v", "a:50", "-v", "b:50", "--port", "http:80", "--dry-run"],
        "error: NAME: serving name 'S1' must start with a lowercase letter and hold only a-z, 0-9 and '-' (not "
        "ending in '-')"),
    "workspace name too long": (
        ["workspace", "start", "a" * 41, "--dry-run"],
        f"error: NAME: workspace name '{'a' * 41}' is 41 characters; at most 40 (its Job is <name>-<run>, its home "
        "<name>-home)"),
    "tensorboard name too long": (
        ["tensorboard", "start", "a" * 52, "--logdir", "logs:/x", "--dry-run"],
        f"error: NAME: tensorboard name '{'a' * 52}' is 52 characters; at most 51 (its Service is "
        "<name>-tensorboard)"),
    "tensorboard logdir out of its PVC": (
        ["tensorboard", "start", "t1", "--logdir", "logs:/../etc", "--dry-run"],
        "error: --logdir 'logs:/../etc': PATH is a folder of the PVC: no '..' and no newline"),
    "job timeout zero": (
        ["submit", "tfjob", "--name", "j1", "--image", "busybox", "--running-timeout", "0", "--dry-run", "-o",
         "values", "python", "a.py"],
        "error: --running-timeout: 0s: give 1s or more, or leave it out for no limit"),
    "serving port out of range": (
        [*CUSTOM, "--restful-port", "65536", "--", "python", "s.py"],
        "error: --restful-port: 65536: give at most 65535"),
    "kserve canary share over 100": (
        [*KSERVE, "--canary-traffic-percent", "101"],
        "error: --canary-traffic-percent: 101: give at most 100"),
    "serving label on the component": (
        [*KSERVE, "-l", "app.kubernetes.io/component=x"],
        "error: --label: app.kubernetes.io/component=x: the chart sets label app.kubernetes.io/component itself: "
        "give another key"),
    "distributed serving name too long for its StatefulSets": (
        ["serve", "distributed", "--name", "a" * 48, "--version", "v1", "--image", "x", "--workers", "1",
         "--dry-run", "--", "python", "s.py"],
        f"error: --name/--version: the StatefulSet '{'a' * 48}-v1-0' would be 53 characters; its pods' "
        "controller-revision-hash label allows 52: shorten the name or the version"),
    # traffic split ports
    "traffic split port name": (
        [*SPLIT, "--port", "Bad Name:80"],
        "error: --port Bad Name:80: name 'Bad Name' must start with a lowercase letter and hold only a-z, 0-9 and "
        "'-' (not ending in '-')"),
    "traffic split port name twice": (
        [*SPLIT, "--port", "http:80", "--port", "http:81"],
        "error: --port 'http:81': name http is given twice: give each port once"),
    "traffic split port number twice": (
        [*SPLIT, "--port", "http:80", "--port", "grpc:80"],
        "error: --port 'grpc:80': port 80 is given twice: give each port once"),
    # a chart schema's refusal names the -f/--set* flags whose values it is in (helm 3's wording: helm on PATH)
    "schema refusal of --set": (
        ["submit", "tfjob", "--name", "j1", "--image", "busybox", "--set", "runPolicy.backoffLimit=-3", "--dry-run",
         "python", "a.py"],
        "error: values rejected by the chart schema (the values of --set): runPolicy.backoffLimit: Must be greater "
        "than or equal to 0"),
    # checked before the kubeconfig is read
    "serve update negative replicas": (
        ["serve", "update", "custom", "s1", "--replicas", "-1"],
        "error: --replicas: -1: give 0 or more"),
    "serve update nothing to change": (
        ["serve", "update", "custom", "s1"],
        "error: serve update custom: give what to change (e.g. --image, --replicas, --gpus)"),
    "serve update bad storage URI": (
        ["serve", "update", "kserve", "s1", "--storage-uri", "bad"],
        "error: --storage-uri 'bad': not a URI KServe reads (pvc://CLAIM/PATH, s3://, gs://, hf://, oci://, "
        "https://...)"),
    "rerun --name": (
        ["rerun", "j1", "--name", "Bad_Name"],
        "error: --name 'Bad_Name' must start with a lowercase letter and hold only a-z, 0-9 and '-' (not ending in "
        "'-')"),
    "export -T": (
        ["export", "j1", "-T", "nosuch"],
        NO_SUCH_TYPE),
    "logs -T": (
        ["logs", "j1", "-T", "nosuch"],
        NO_SUCH_TYPE),
    "get -T": (
        ["get", "j1", "-T", "nosuch"],
        NO_SUCH_TYPE),
    "wait --notify with a password": (
        ["wait", "j1", "--notify", "https://user:pw@example.com/hook"],
        "error: --notify https://example.com/...: the URL carries a user or password (user:password@), which is "
        "never sent: give a URL whose path or query holds its token, or none"),
    "top node --prometheus-url": (
        ["top", "node", "--prometheus-url", "notaurl"],
        "error: --prometheus-url (the URL given): give an http:// or https:// URL with a host (e.g. "
        "http://prometheus.monitoring:9090)"),
    "top job --prometheus-service port": (
        ["top", "job", "--prometheus-service", "monitoring/prom:70000"],
        "error: --prometheus-service 'monitoring/prom:70000': port 70000 is out of range: give 1-65535 (or the "
        "port's name)"),
    "serve get --prometheus-url": (
        ["serve", "get", "s1", "--prometheus-url", "ftp://prom"],
        "error: --prometheus-url ftp://prom: give an http:// or https:// URL with a host (e.g. "
        "http://prometheus.monitoring:9090)"),
    "workspace list --prometheus-url port": (
        ["workspace", "list", "--prometheus-url", "http://prom:99999"],
        "error: --prometheus-url (the URL given): not a URL (Port out of range 0-65535)"),
    "doctor --prometheus-service port": (
        ["doctor", "--prometheus-service", "ns/name:99999"],
        "error: --prometheus-service 'ns/name:99999': port 99999 is out of range: give 1-65535 (or the port's name)"),
    "doctor -T": (
        ["doctor", "-T", "kserve", "-T", "vllm"],
        "error: -T/--type 'vllm': use tfjob, pytorchjob, mpijob, jaxjob, xgboostjob, paddlejob, trainjob (or tf, "
        "pytorch, py, mpi, mj, jax, xgboost, xgb, paddle, tj), or kserve, distributed, traffic-split"),
}


@pytest.mark.parametrize("args", [pytest.param(a, id=k) for k, (a, _) in CASES.items()])
def test_bad_input_is_one_line_naming_the_flag_exit_2_before_the_cluster(args, tmp_path):
    expected = next(line for a, line in CASES.values() if a is args)
    res = cli(*args, env={"KUBECONFIG": str(tmp_path / "missing"), "ARENA_HELM_CACHE": str(tmp_path / "cache")})
    assert (res.exit_code, res.stdout, res.stderr) == (2, "", expected + "\n"), res.exception
