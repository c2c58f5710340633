"""The bad-input table: each case is one command line that must fail with exactly one ``error:`` line holding
``text``, with exit code ``code``. ``where`` says what decides it: ``cli`` cases are refused before any helm
process starts (checked in the unit tier with no helm binary at all, and again against the API server);
``helm`` cases are refused by helm itself (the chart schema, helm's reading of a -f file) and run only
with the real helm binaries."""

from __future__ import annotations

TF = ["submit", "tf", "--image", "tf:2"]
OK_NAME = ["--name", "ok"]

# (id, argv before the cluster flags, exit code, text the one-line message must hold, where)
CASES = [
    ("no-name", [*TF], 2, "--name is required", "cli"),
    ("name-uppercase", [*TF, "--name", "Mnist"], 2, "--name: job name 'Mnist' must start with a lowercase letter", "cli"),
    ("name-dots", [*TF, "--name", "a.b"], 2, "--name: job name 'a.b'", "cli"),
    ("name-digit-first", [*TF, "--name", "1job"], 2, "--name: job name '1job'", "cli"),
    ("name-empty", [*TF, "--name", ""], 2, "--name is required", "cli"),
    ("name-too-long", [*TF, "--name", "a" * 60], 2, "--name: job name '" + "a" * 60 + "' is 60 characters; at most 53",
     "cli"),
    ("name-too-long-for-pods", ["submit", "tf", "--image", "x", "--name", "a" * 52, "--workers", "2", "--evaluator"],
     2, "at most 51 fit this tfjob", "cli"),
    ("name-too-long-for-mpi", ["submit", "mpi", "--image", "x", "--name", "a" * 53], 2, "at most 52 fit this mpijob",
     "cli"),
    ("gpus-negative", [*TF, *OK_NAME, "--gpus", "-1"], 2, "--gpus: Input should be greater than or equal to 0", "cli"),
    ("gpus-huge", [*TF, *OK_NAME, "--gpus", "1000"], 2, "--gpus: Input should be less than or equal to 128", "cli"),
    ("gpus-not-a-number", [*TF, *OK_NAME, "--gpus", "two"], 2, "Invalid value for '--gpus'", "cli"),
    ("workers-negative", [*TF, *OK_NAME, "--workers", "-3"], 2, "--workers: Input should be greater than or equal to 0",
     "cli"),
    ("workers-huge", [*TF, *OK_NAME, "--workers", "100000"], 2, "--workers: Input should be less than or equal to 1000",
     "cli"),
    ("workers-zero-mpi", ["submit", "mpi", "--image", "x", *OK_NAME, "--workers", "0"], 2, "--workers", "cli"),
    ("cpu-malformed", [*TF, *OK_NAME, "--cpu", "1x"], 2, "--cpu: '1x' is not a valid quantity", "cli"),
    ("cpu-trailing-dot", [*TF, *OK_NAME, "--cpu", "1."], 2, "--cpu: '1.' is not a valid quantity", "cli"),
    ("cpu-plus-sign", [*TF, *OK_NAME, "--cpu", "+2"], 2, "--cpu: '+2' is not a valid quantity", "cli"),
    ("memory-negative-exponent", [*TF, *OK_NAME, "--memory", "1e-3"], 2, "--memory: '1e-3' is not a valid quantity",
     "cli"),
    ("memory-malformed", [*TF, *OK_NAME, "--memory", "4GB"], 2, "--memory: '4GB' is not a valid quantity", "cli"),
    ("cpu-two-ways", [*TF, *OK_NAME, "--cpu", "1", "--worker-cpu", "2"], 2,
     "--cpu 1 and --worker-cpu 2 say different things: give one", "cli"),
    ("ps-memory-malformed", [*TF, *OK_NAME, "--ps", "1", "--ps-memory", "lots"], 2, "--ps-memory: 'lots'", "cli"),
    ("ttl-malformed", [*TF, *OK_NAME, "--ttl-after-finished", "5x"], 2, "--ttl-after-finished: '5x' is not a duration",
     "cli"),
    ("running-timeout-negative", [*TF, *OK_NAME, "--running-timeout", "-5m"], 2,
     "--running-timeout: '-5m' is not a duration", "cli"),
    ("running-timeout-zero", [*TF, *OK_NAME, "--running-timeout", "0"], 2,
     "--running-timeout: Input should be greater than or equal to 1", "cli"),
    ("data-no-mount", [*TF, *OK_NAME, "-d", "training-data"], 2, "--data: 'training-data' is not PVC:MOUNT_PATH", "cli"),
    ("data-relative-mount", [*TF, *OK_NAME, "-d", "pvc:data"], 2, "--data: 'data' must be absolute", "cli"),
    ("data-bad-claim", [*TF, *OK_NAME, "-d", "Bad_Claim:/data"], 2,
     "--data: 'Bad_Claim' must be a lowercase DNS subdomain", "cli"),
    ("data-duplicate-claim", [*TF, *OK_NAME, "-d", "a:/d", "-d", "a:/e"], 2, "--data: PVC a is given twice", "cli"),
    ("data-duplicate-mount", [*TF, *OK_NAME, "-d", "a:/d", "-d", "b:/d"], 2, "mount path /d is used twice", "cli"),
    ("data-dir-relative", [*TF, *OK_NAME, "--data-dir", "host:/c"], 2, "--data-dir: 'host' must be absolute", "cli"),
    ("env-no-equals", [*TF, *OK_NAME, "-e", "NOEQ"], 2, "--env: 'NOEQ' is not an environment variable", "cli"),
    ("env-bad-name", [*TF, *OK_NAME, "-e", "1BAD=x"], 2, "--env: environment variable name '1BAD'", "cli"),
    ("label-bad-key", [*TF, *OK_NAME, "-l", "bad key!=v"], 2, "--label: label key 'bad key!'", "cli"),
    ("label-bad-value", [*TF, *OK_NAME, "-l", "k=bad value"], 2, "--label: label k='bad value'", "cli"),
    ("label-long-value", [*TF, *OK_NAME, "-l", "k=" + "v" * 64], 2, "--label: label k=", "cli"),
    ("label-twice", [*TF, *OK_NAME, "-l", "k=a", "-l", "k=b"], 2, "--label: k is given twice ('a' and 'b')", "cli"),
    ("annotation-empty-key", [*TF, *OK_NAME, "-a", "=v"], 2, "--annotation: '=v' is not an annotation", "cli"),
    ("selector-no-equals", [*TF, *OK_NAME, "--selector", "gpu"], 2,
     "--selector: 'gpu' is not a node selector (expected KEY=VALUE)", "cli"),
    ("toleration-bad-effect", [*TF, *OK_NAME, "--toleration", "k=v:Bad"], 2,
     "--toleration: toleration effect 'Bad' must be one of", "cli"),
    ("toleration-empty-effect", [*TF, *OK_NAME, "--toleration", "k:"], 2, "--toleration: 'k:' is not a toleration", "cli"),
    ("toleration-bad-operator", [*TF, *OK_NAME, "--toleration", "k=v,Maybe"], 2,
     "--toleration: toleration operator 'Maybe' must be Equal or Exists", "cli"),
    ("toleration-exists-with-value", [*TF, *OK_NAME, "--toleration", "k=v,Exists"], 2, "takes no value", "cli"),
    ("pull-policy-unknown", [*TF, *OK_NAME, "--image-pull-policy", "Sometimes"], 2,
     "Invalid value for '--image-pull-policy'", "cli"),
    ("clean-policy-unknown", [*TF, *OK_NAME, "--clean-task-policy", "Some"], 2, "Invalid value for '--clean-task-policy'",
     "cli"),
    ("sync-mode-unknown", [*TF, *OK_NAME, "--sync-mode", "svn"], 2, "Invalid value for '--sync-mode'", "cli"),
    ("sync-branch-alone", [*TF, *OK_NAME, "--sync-branch", "dev"], 2, "--sync-branch needs --sync-source URL", "cli"),
    ("sync-source-not-a-url", [*TF, *OK_NAME, "--sync-source", "my repo"], 2, "--sync-source: 'my repo' is not a git URL",
     "cli"),
    ("device-bad-count", [*TF, *OK_NAME, "--device", "amd.com/gpu=x"], 2,
     "--device: 'amd.com/gpu=x': the count must be a whole number", "cli"),
    ("device-no-vendor", [*TF, *OK_NAME, "--device", "gpu=1"], 2, "--device: device 'gpu' must be VENDOR/RESOURCE", "cli"),
    ("device-nvidia", [*TF, *OK_NAME, "--device", "nvidia.com/gpu=1"], 2, "use --gpus for nvidia.com/gpu", "cli"),
    ("set-no-equals", [*TF, *OK_NAME, "--set", "worker.replicas"], 2, "--set 'worker.replicas': expected KEY=VALUE", "cli"),
    ("values-file-missing", [*TF, *OK_NAME, "-f", "/nonexistent/values.yaml"], 2,
     "-f/--values /nonexistent/values.yaml: cannot read the file", "cli"),
    ("set-file-missing", [*TF, *OK_NAME, "--set-file", "command=/nonexistent/cmd.sh"], 2,
     "--set-file /nonexistent/cmd.sh: cannot read the file", "cli"),
    ("share-memory-malformed", [*TF, *OK_NAME, "--share-memory", "lots"], 2, "--share-memory: 'lots'", "cli"),
    ("priority-bad-name", [*TF, *OK_NAME, "-p", "Bad_Name"], 2, "--priority: 'Bad_Name' must be a lowercase DNS", "cli"),
    ("queue-bad", [*TF, *OK_NAME, "--queue-name", "bad queue"], 2, "--queue-name: 'bad queue' must be a LocalQueue name", "cli"),
    ("queue-uppercase", [*TF, *OK_NAME, "--queue-name", "Team_A"], 2, "--queue-name: 'Team_A' must be a LocalQueue name", "cli"),
    ("shell-with-args", [*TF, *OK_NAME, "--shell", "bash -x"], 2, "--shell: shell 'bash -x' must be one program", "cli"),
    ("working-dir-relative", [*TF, *OK_NAME, "--working-dir", "work"], 2, "--working-dir: 'work' must be absolute",
     "cli"),
    ("logdir-relative", [*TF, *OK_NAME, "--tensorboard", "--logdir", "logs"], 2,
     "--logdir: 'logs' must be an absolute path or a URL such as s3://bucket/logs", "cli"),
    ("logdir-root", [*TF, *OK_NAME, "--tensorboard", "--logdir", "/"], 2,
     "--logdir / is the container's root: the logs' host directory is mounted there", "cli"),
    ("tensorboard-service-type-without-tensorboard", [*TF, *OK_NAME, "--tensorboard-service-type", "ClusterIP"], 2,
     "--tensorboard-service-type needs --tensorboard", "cli"),
    ("logdir-without-tensorboard", [*TF, *OK_NAME, "--logdir", "/logs"], 2, "--logdir needs --tensorboard", "cli"),
    ("namespace-bad", [*TF, *OK_NAME, "-n", "Bad_NS"], 2, "-n/--namespace: namespace 'Bad_NS'", "cli"),
    ("mpi-api-unknown", ["submit", "mpi", "--image", "x", *OK_NAME, "--mpi-api", "v3"], 2, "Invalid value for '--mpi-api'",
     "cli"),
    ("nproc-negative", ["submit", "py", "--image", "x", *OK_NAME, "--nproc-per-node", "-1"], 2,
     "--nproc-per-node: '-1' must be a positive number, auto, cpu or gpu", "cli"),
    ("slots-zero", ["submit", "mpi", "--image", "x", *OK_NAME, "--slots-per-worker", "0"], 2, "--slots-per-worker", "cli"),
    ("wait-timeout-malformed", [*TF, *OK_NAME, "--wait", "--timeout", "soon"], 2, "--timeout: 'soon' is not a duration",
     "cli"),
    ("timeout-without-wait", [*TF, *OK_NAME, "--timeout", "5m"], 2, "--timeout needs --wait", "cli"),
    ("output-without-dry-run", [*TF, *OK_NAME, "-o", "values"], 2, "-o/--output values needs --dry-run", "cli"),
    ("unknown-flag", [*TF, *OK_NAME, "--gpu", "1"], 2, "No such option: --gpu", "cli"),
    ("unknown-kind", ["submit", "caffe", "--name", "x"], 2, "No such command 'caffe'", "cli"),
    ("get-no-name", ["get"], 2, "Missing argument 'NAME'", "cli"),
    ("list-bad-type", ["list", "-T", "caffe"], 2, "-T/--type 'caffe'", "cli"),
    ("list-bad-output", ["list", "-o", "xml"], 2, "Invalid value for '--output' / '-o'", "cli"),
    ("top-node-bad-output", ["top", "node", "-o", "xml"], 2, "Invalid value for '--output' / '-o'", "cli"),
    ("prune-no-since", ["prune"], 2, "Missing option '--since'", "cli"),
    ("prune-bad-since", ["prune", "--since", "yesterday"], 2, "--since: 'yesterday' is not a duration", "cli"),
    ("logs-negative-tail", ["logs", "x", "--tail", "-5"], 2, "--tail -5", "cli"),
    ("logs-since-and-since-time", ["logs", "x", "--since", "1m", "--since-time", "2026-01-01T00:00:00Z"], 2,
     "--since and --since-time", "cli"),
    ("logs-bad-since-time", ["logs", "x", "--since-time", "yesterday"], 2, "--since-time 'yesterday' is not an RFC3339",
     "cli"),
    ("tensorboard-bad-name", ["tensorboard", "start", "Bad", "--logdir", "pvc:/x"], 2, "tensorboard name 'Bad'", "cli"),
    # refused by helm: the chart schema, helm's reading of the user's -f file
    ("set-wrong-type", [*TF, *OK_NAME, "--set", "worker.replicas=many"], 2, "values rejected by the chart schema", "helm"),
    ("set-unknown-key", [*TF, *OK_NAME, "--set", "notAValue=1"], 2, "values rejected by the chart schema", "helm"),
    ("values-file-list", [*TF, *OK_NAME, "-f", "{list_file}"], 1, "", "helm"),
    ("values-file-bad-yaml", [*TF, *OK_NAME, "-f", "{bad_yaml}"], 1, "", "helm"),
]


def command_line(argv: list[str], flags: list[str]) -> list[str]:
    """The cluster flags go before the training command, which a submit gets last."""
    return [*argv, *flags, "python", "train.py"] if argv[0] == "submit" else [*argv, *flags]


def with_files(argv: list[str], tmp_path) -> list[str]:
    list_file = tmp_path / "list.yaml"
    list_file.write_text("- a\n- b\n")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("a: [1, 2\nb: c\n")
    return [a.replace("{list_file}", str(list_file)).replace("{bad_yaml}", str(bad_yaml)) for a in argv]
