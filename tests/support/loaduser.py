"""One user of the load test (tests/cluster/test_load.py), as a process of its own.

``user``: runs N cycles of submit -> get -> delete with the real CLI (``arena_helm.cli.app`` through Typer's
CliRunner, in this process only: no threads share its global state), the job kind and options varying per
cycle. ``lister``: runs ``list -A -o json`` in a loop until a stop file appears. Each command becomes one
JSON line on stdout: the command, its exit code, its stderr, the seconds it took and (for list) how many
jobs it showed. Nothing is checked here: the test reads the lines.

    python loaduser.py user --kubeconfig KC --helm-binary HELM -n NS --prefix u0 --cycles 40
    python loaduser.py lister --kubeconfig KC --helm-binary HELM --stop FILE
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# one cycle's submit, by cycle number: the kinds and options a shared cluster sees
VARIANTS = (
    ("tf", ["--workers", "2", "--ps", "1"]),
    ("pytorch", ["--workers", "2", "--gpus", "1"]),
    ("mpi", ["--workers", "2"]),
    ("tf", ["--tensorboard", "--data", "logs:/logs", "--logdir", "/logs/tb"]),  # a Deployment and a Service too
)


def emit(record: dict) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def run(runner, app, argv: list[str]) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    res = runner.invoke(app, argv)
    return res.exit_code, res.stdout, res.stderr, time.perf_counter() - start


def user(args, runner, app) -> None:
    base = ["--kubeconfig", args.kubeconfig, "--helm-binary", args.helm_binary, "-n", args.namespace]
    for i in range(args.cycles):
        name = f"{args.prefix}-{i}"
        kind, extra = VARIANTS[i % len(VARIANTS)]
        steps = [
            ("submit", ["submit", kind, "--name", name, "--image", "busybox:1.36", *extra, *base, "--",
                        "python", "train.py", "--epochs", "1"]),
            ("get", ["get", name, "-o", "json", *base]),
            ("delete", ["delete", name, *base]),
        ]
        for step, argv in steps:
            code, out, err, seconds = run(runner, app, argv)
            record = {"user": args.prefix, "cycle": i, "step": step, "name": name, "exit": code, "stderr": err,
                      "seconds": round(seconds, 3)}
            if step == "get" and code == 0:
                try:
                    data = json.loads(out)
                    record["got"] = [data.get("name"), data.get("status"), data.get("trainer")]
                except ValueError:
                    record["got"] = None
            emit(record)


def lister(args, runner, app) -> None:
    argv = ["list", "-A", "-o", "json", "--kubeconfig", args.kubeconfig, "--helm-binary", args.helm_binary]
    n = 0
    while not os.path.exists(args.stop) or n == 0:
        code, out, err, seconds = run(runner, app, argv)
        record = {"user": "lister", "cycle": n, "step": "list", "exit": code, "stderr": err,
                  "seconds": round(seconds, 3)}
        if code == 0:
            try:
                record["jobs"] = len(json.loads(out))
            except ValueError:
                record["jobs"] = None
        emit(record)
        n += 1


def main() -> None:
    p = argparse.ArgumentParser(prog="loaduser.py")
    p.add_argument("role", choices=("user", "lister"))
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--helm-binary", required=True)
    p.add_argument("-n", "--namespace", default="default")
    p.add_argument("--prefix", default="u")
    p.add_argument("--cycles", type=int, default=40)
    p.add_argument("--stop", default="")
    args = p.parse_args()
    from typer.testing import CliRunner

    from arena_helm.cli import app

    runner = CliRunner()
    (user if args.role == "user" else lister)(args, runner, app)


if __name__ == "__main__":
    main()
