"""The test suite's cluster for a person (``scripts/dev-cluster.sh up|down|env``): the same Kubernetes control
plane, kwok and real controllers that ``tests/conftest.py`` starts, plus two kwok GPU nodes, kept running
until SIGTERM. Writes ``kubeconfig`` (the admin's) and ``ready`` into the state folder it is given.

    python tests/support/devcluster.py STATE_DIR [--nodes N] [--gpus G]

kwok plays the nodes: a pod bound to them runs at once and stays Running; ``attach``/exec runs the command
on this machine, as the user who started the cluster (kwok has no containers).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from controllers import ALL, Controllers  # noqa: E402
from kubecluster import start_cluster  # noqa: E402
from kwok import Kwok  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state", type=Path, help="folder for the kubeconfig and the ready mark")
    parser.add_argument("--nodes", type=int, default=2, help="kwok GPU nodes (default 2)")
    parser.add_argument("--gpus", type=int, default=8, help="nvidia.com/gpu per node (default 8)")
    args = parser.parse_args(argv)
    args.state.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    cluster = start_cluster()
    kwok = ctl = None
    try:
        kwok = Kwok(cluster)
        ctl = Controllers(cluster).start(ALL)
        for name, why in ctl.errors.items():
            print(f"[dev-cluster] {name} did not start: {why.splitlines()[0] if why else '?'}", flush=True)
        for i in range(1, args.nodes + 1):
            kwok.add_node(f"gpu-node-{i}", gpus=args.gpus, labels={"node-role.kubernetes.io/gpu": ""})
        shutil.copyfile(cluster.admin.kubeconfig, args.state / "kubeconfig")
        (args.state / "kubeconfig").chmod(0o600)
        (args.state / "ready").write_text(cluster.server + "\n")
        print(f"[dev-cluster] ready at {cluster.server}", flush=True)
        stop.wait()
    finally:
        (args.state / "ready").unlink(missing_ok=True)
        if ctl is not None:
            ctl.stop()
        if kwok is not None:
            kwok.close()
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
