"""The CLI's edges that need no cluster, in-process: the root command's help and --version, a missing or
malformed kubeconfig in every command (one line, the hint), an explicit --kubeconfig as one file, the
namespace of a merged KUBECONFIG list in --dry-run, and tensorboard start --dry-run."""

from __future__ import annotations

import pytest
import yaml
from edgetools import cli, one_error, write_kubeconfig

from arena_helm.__about__ import __version__
from arena_helm.core.jobkinds import KINDS

HINT = "give the right one with --kubeconfig FILE (or KUBECONFIG)"
DRY_RUN = ", or use --dry-run to render without a cluster"  # said only by the commands that have --dry-run
COMMANDS = {
    "list": ["list"],
    "get": ["get", "x"],
    "logs": ["logs", "x"],
    "delete": ["delete", "x"],
    "prune": ["prune", "--since", "1h", "-y"],
    "top-job": ["top", "job"],
    "top-node": ["top", "node"],
    "tensorboard-list": ["tensorboard", "list"],
    "tensorboard-stop": ["tensorboard", "stop", "x"],
    "tensorboard-open": ["tensorboard", "open", "x"],
    "tensorboard-start": ["tensorboard", "start", "x", "--logdir", "logs:/a"],
}
WITH_DRY_RUN = {"tensorboard-start"}


def hint(command: str) -> str:
    return HINT + (DRY_RUN if command in WITH_DRY_RUN else "")


def test_the_root_command_alone_prints_its_help_and_exits_0():
    res = cli()
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    assert res.stdout.startswith("Usage: arena-helm [OPTIONS] COMMAND [ARGS]...")
    assert "  submit " in res.stdout and "  tensorboard " in res.stdout
    assert cli("--help").stdout == res.stdout


def test_a_group_alone_prints_its_help_and_exits_0():
    res = cli("top")
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert res.stdout.startswith("Usage: arena-helm top [OPTIONS] COMMAND [ARGS]...")


def test_version_flag():
    res = cli("--version")
    assert (res.exit_code, res.stdout, res.stderr) == (0, f"arena-helm {__version__}\n", "")


def test_an_unknown_command_is_still_a_usage_error():
    one_error(cli("bogus"), 2, "error: No such command 'bogus'. Did you mean 'logs'? (see 'arena-helm --help')")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_explicit_kubeconfig_that_does_not_exist(command, tmp_path, helm_bin):
    missing = tmp_path / "missing.yaml"
    res = cli(*COMMANDS[command], "--kubeconfig", str(missing), "--helm-binary", str(helm_bin))
    one_error(res, 1, f"error: kubeconfig {missing} (from --kubeconfig) does not exist: {hint(command)}")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_malformed_kubeconfig_is_one_line(command, tmp_path, helm_bin):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Config\nclusters: [\n")
    res = cli(*COMMANDS[command], "--helm-binary", str(helm_bin), env={"KUBECONFIG": str(bad)})
    one_error(res, 1, f"error: kubeconfig {bad} is malformed (line 4): expected the node content, but found "
                      f"'<stream end>': {hint(command)}")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_kubeconfig_at_all(command, tmp_path, helm_bin):
    env = {"KUBECONFIG": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}
    res = cli(*COMMANDS[command], "--helm-binary", str(helm_bin), env=env)
    one_error(res, 1, f"error: no kubeconfig: none of the files in KUBECONFIG={env['KUBECONFIG']} exists: "
                      f"{hint(command)}")


def test_a_kubeconfig_without_a_current_context_names_its_contexts(tmp_path, helm_bin):
    path = write_kubeconfig(tmp_path / "k.yaml", clusters=[("c", "https://127.0.0.1:1", None)], users=[("u", "t")],
                            contexts=[("one", "c", "u", None), ("two", "c", "u", None)])
    res = cli("top", "node", "--kubeconfig", str(path))
    one_error(res, 1, f"error: kubeconfig {path} (from --kubeconfig) has no current-context: pick one with "
                      f"--context NAME (it has one, two), or {HINT}")
    res = cli("top", "node", "--kubeconfig", str(path), "--context", "three")
    one_error(res, 1, f"error: kubeconfig {path} (from --kubeconfig) has no context 'three' (it has one, two): "
                      f"{HINT}")


@pytest.mark.parametrize("helm_kind", ["submit-missing", "submit-malformed"])
def test_submit_says_the_same_for_a_broken_kubeconfig(helm_kind, tmp_path, helm_bin):
    """submit's happy path runs helm first: helm's words for the same causes are classified alike."""
    path = tmp_path / "k.yaml"
    if helm_kind == "submit-malformed":
        path.write_text("apiVersion: v1\nkind: Config\nclusters: [\n")
    res = cli("submit", "tf", "--name", "t", "--image", "i", "--kubeconfig", str(path), "--helm-binary",
              str(helm_bin), "--", "python", "t.py")
    # submit has --dry-run: it says so
    if helm_kind == "submit-missing":
        one_error(res, 1, f"error: kubeconfig {path} (from --kubeconfig) does not exist: {HINT}{DRY_RUN}")
    else:
        one_error(res, 1, f"error: kubeconfig {path} is malformed (line 4): expected the node content, but found "
                          f"'<stream end>': {HINT}{DRY_RUN}")


def _rendered_namespaces(text: str) -> set:
    return {d["metadata"].get("namespace") for d in yaml.safe_load_all(text) if d}


def test_dry_run_takes_the_namespace_of_the_merged_kubeconfig_list(tmp_path, helm_bin):
    a = write_kubeconfig(tmp_path / "a.yaml", contexts=[("ctx", "c", "u", "team-a")])
    b = write_kubeconfig(tmp_path / "b.yaml", clusters=[("c", "https://127.0.0.1:1", None)], users=[("u", "t")],
                         contexts=[("ctx", "c", "u", "team-b")], current="ctx")
    env = {"KUBECONFIG": f"{a}:{tmp_path / 'missing'}:{b}"}
    argv = ["submit", "tf", "--name", "t", "--image", "i", "--dry-run", "--helm-binary", str(helm_bin), "--", "x"]
    res = cli(*argv, env=env)
    assert res.exit_code == 0, res.output
    assert _rendered_namespaces(res.stdout) == {"team-a"}  # a's context wins; the current-context from b
    env = {"KUBECONFIG": f"{b}:{a}"}
    assert _rendered_namespaces(cli(*argv, env=env).stdout) == {"team-b"}


@pytest.mark.parametrize("where", ["before", "after"])
def test_the_global_flags_apply_before_the_command_or_after_it(where, tmp_path, helm_bin):
    """``arena-helm -n team-x tensorboard start ...`` (Arena's order) as ``... start -n team-x``: every command
    gets the global options from one place (before the fix, tensorboard start and data list ignored the
    ones given before the command)."""
    ns = ["-n", "team-x"]
    argv = ["tensorboard", "start", "tb", "--logdir", "logs:/logs", "--dry-run", "--helm-binary", str(helm_bin)]
    res = cli(*(ns + argv if where == "before" else argv + ns), env={"KUBECONFIG": str(tmp_path / "none")})
    assert res.exit_code == 0, res.output
    assert _rendered_namespaces(res.stdout) == {"team-x"}


def test_dry_run_needs_no_kubeconfig(tmp_path, helm_bin):
    bad = tmp_path / "bad.yaml"
    bad.write_text("{{{")
    res = cli("submit", "tf", "--name", "t", "--image", "i", "--dry-run", "--helm-binary", str(helm_bin), "--", "x",
              env={"KUBECONFIG": str(bad)})
    assert res.exit_code == 0, res.output
    assert _rendered_namespaces(res.stdout) == {"default"}


def test_tensorboard_start_dry_run_prints_the_manifests_without_a_cluster(tmp_path, helm_bin):
    a = write_kubeconfig(tmp_path / "a.yaml", contexts=[("ctx", "c", "u", "team-a")], current="ctx")
    res = cli("tensorboard", "start", "tb1", "--logdir", "logs:/run1", "--dry-run", "--helm-binary", str(helm_bin),
              env={"KUBECONFIG": str(a)})
    assert res.exit_code == 0, res.output
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    assert sorted((d["kind"], d["metadata"]["name"], d["metadata"]["namespace"]) for d in docs) == [
        ("Deployment", "tb1-tensorboard", "team-a"), ("Service", "tb1-tensorboard", "team-a")]
    dep = next(d for d in docs if d["kind"] == "Deployment")
    volumes = dep["spec"]["template"]["spec"]["volumes"]
    assert [v for v in volumes if "persistentVolumeClaim" in v] == [
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs", "readOnly": True}}], volumes
    res = cli("tensorboard", "start", "tb1", "--logdir", "logs:/run1", "--dry-run", "-n", "x", "--helm-binary",
              str(helm_bin))
    assert {d["metadata"]["namespace"] for d in yaml.safe_load_all(res.stdout) if d} == {"x"}
    one_error(cli("tensorboard", "start", "tb1", "--dry-run", "--helm-binary", str(helm_bin)), 2,
              "error: give exactly one of --logdir PVC:PATH (the logs in a PVC) and --host-path DIR")


@pytest.mark.parametrize("kind", [k.key for k in KINDS])
def test_dry_run_never_imports_the_kubernetes_client(kind, helm_bin, tmp_path):
    """``submit --dry-run`` renders with helm and the pure core: ``python -X importtime`` of the real console
    entry point lists no ``kubernetes`` module (its client is about 870 modules and seconds of start-up),
    nor pyhelm3 or asyncio (helm template is one child process); no values model is defined (the shared
    blocks' module, ``job_values.values_models``) and ``logging`` waits for ``--debug``."""
    import subprocess
    import sys

    argv = [sys.executable, "-X", "importtime", "-m", "arena_helm", "submit", kind, "--name", "imp",
            "--image", "busybox:1.36", "--cpu", "500m", "--memory", "1Gi", "--gpus", "1",
            "--helm-binary", str(helm_bin), "--dry-run", "python", "train.py"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "kind: " in proc.stdout
    imported = [ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")]
    assert "arena_helm.cli" in imported  # the measurement is real
    for heavy in ("kubernetes", "pyhelm3", "asyncio", "arena_helm.workload.chart_values", "logging"):
        assert not [m for m in imported if m == heavy or m.startswith(f"{heavy}.")], heavy
