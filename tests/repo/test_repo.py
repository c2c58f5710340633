"""The repository's promises: the README's two commands, CI running exactly the README's test command, the
CLI's start-up staying free of heavy imports, the layers apart, ruff clean, and the unit tier's files named
after the modules they test."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from arena_helm.cli import app

REPO = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.S)


def test_readme_has_the_two_commands_and_ci_runs_the_test_command_verbatim():
    run_cmd, test_cmd, dev_cmd = readme_commands()  # and the dev cluster's, third
    assert "--dry-run" in run_cmd and "arena-helm submit" in run_cmd
    assert dev_cmd == 'scripts/dev-cluster.sh up && eval "$(scripts/dev-cluster.sh env)"'
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_cmd.strip() in [line.strip() for line in ci]


def test_the_readme_run_command_renders_manifests(helm_bin):
    run_cmd, *_ = readme_commands()
    argv = shlex.split(run_cmd.split("&& ")[-1])
    assert argv[0] == "arena-helm"
    res = CliRunner().invoke(app, [*argv[1:3], "--helm-binary", str(helm_bin), *argv[3:]],
                             env={"KUBECONFIG": "/nonexistent"})
    assert res.exit_code == 0, res.output
    kinds = [d["kind"] for d in yaml.safe_load_all(res.stdout) if d]
    assert kinds == ["TFJob"]


def test_cli_start_up_imports_neither_kubernetes_nor_pyhelm3_nor_the_specs():
    """``--help`` imports no heavy module; a submit command's help needs its spec (the flags are generated
    from it) but still neither kubernetes, pyhelm3 nor the adapters."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from arena_helm.cli import app\n"
        "heavy = ('kubernetes', 'pyhelm3', 'yaml', 'pydantic', 'arena_helm.workload.spec', 'arena_helm.adapters.kube',\n"
        "         'arena_helm.adapters.helm')\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "CliRunner().invoke(app, ['submit', 'tfjob', '--help'])\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "['arena_helm.workload.spec', 'pydantic']"]


def test_no_shell_anywhere_in_the_package():
    for path in (REPO / "arena_helm").rglob("*.py"):
        text = path.read_text()
        assert "shell=True" not in text, path
        assert "create_subprocess_shell" not in text, path
        assert "os.system" not in text, path


def _imports(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_layers_stay_apart():
    """Only the CLI imports Typer; only the adapters import pyhelm3 / kubernetes or start processes."""
    allowed = {
        "typer": lambda rel: rel.startswith("cli/"),
        "pyhelm3": lambda rel: rel == "adapters/helm.py",
        "kubernetes": lambda rel: rel == "adapters/kube.py",
        "urllib3": lambda rel: rel == "adapters/kube.py",
        # gitref: git ls-remote; tensorboard open and workspace open: kubectl port-forward
        "subprocess": lambda rel: rel in ("cli/tensorboard.py", "cli/workspace.py", "adapters/helm.py",
                                          "adapters/gitref.py"),
    }
    pkg = REPO / "arena_helm"
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg).as_posix()
        for mod in _imports(path) & set(allowed):
            assert allowed[mod](rel), f"{rel} imports {mod}"
    # the ground floor and the read models are pure, and so are the specs and their values
    pure = [*(pkg / "core").glob("*.py"), *(pkg / "views").glob("*.py"), pkg / "workload" / "spec.py",
            pkg / "workload" / "job_values.py", pkg / "workload" / "chart_values.py"]
    assert len(pure) > 20
    for path in pure:
        assert not _imports(path) & {"subprocess", "asyncio", "socket", "kubernetes", "pyhelm3", "typer"}, path


def test_only_the_kube_adapter_makes_api_requests():
    """No module but adapters/kube.py reaches the API client (``Kube.api``, ``call_api``): every request, its errors
    and its count go through the adapter's methods."""
    import ast

    pkg = REPO / "arena_helm"
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg).as_posix()
        if rel == "adapters/kube.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
            assert node.attr != "call_api", f"{rel}:{node.lineno} calls the API client's call_api"
            assert not (node.attr == "api" and owner == "kube"), f"{rel}:{node.lineno} reaches the API client"


RELEASE_COMMANDS = {"install", "upgrade", "uninstall", "get_values", "template", "list"}


def _helm_release_calls(path: Path) -> list[str]:
    """Calls of helm's release commands on a Helm (``x.helm.install(...)``, ``helm.list(...)``,
    ``Helm(...).template(...)``) in one module."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RELEASE_COMMANDS:
            owner = node.func.value
            name = (owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                    if not isinstance(owner, ast.Call) else getattr(owner.func, "id", ""))
            if name.lower() == "helm":
                found.append(f"{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_one_release_gateway_for_every_family(tmp_path):
    """No module but workload/gateway.py (and the adapter itself) runs helm's release commands: every family
    installs, upgrades, finds, reads and uninstalls its releases through ``gateway.Cluster``."""
    pkg = REPO / "arena_helm"
    calls = {path.relative_to(pkg).as_posix(): _helm_release_calls(path) for path in pkg.rglob("*.py")}
    assert {rel for rel, found in calls.items() if found} == {"workload/gateway.py"}, calls
    planted = ("def f(c, h):\n    c.helm.install('a', 'b', {}, 'ns')\n    Helm(h).template('a', 'b', {}, 'ns')\n"
               "    c.install('tfjob', 'ns', 'a', {})\n")
    probe = tmp_path / "probe.py"
    probe.write_text(planted)
    assert _helm_release_calls(probe) == ["2: c.helm.install", "3: Helm(h).template"]


def test_the_global_options_are_declared_once():
    """-n, --kubeconfig, --context, --helm-binary and --debug: one list (cli/common.py GLOBAL_OPTIONS) that
    every command gets through ``with_globals`` (or, for submit, its generated signature); the root group
    takes Arena's global flags before the command (``_root``)."""
    import ast

    types = {"Namespace", "Kubeconfig", "Context", "HelmBinary", "Debug"}
    for path in (REPO / "arena_helm" / "cli").glob("*.py"):
        if path.name == "common.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name != "_root":
                args = node.args.args + node.args.kwonlyargs
                declared = [a.arg for a in args if isinstance(a.annotation, ast.Name) and a.annotation.id in types]
                assert not declared, f"{path.name}: {node.name} declares {declared}: use with_globals"


def test_ruff_is_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "arena_helm", "tests", "scripts", "benchmarks"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_documented_role_covers_every_job_kind_and_the_setup_guide_names_the_tested_versions():
    """docs/rbac/arena-helm-user.yaml (which the cluster tests give their limited user) grants every kind of the
    registry, and docs/cluster-setup.md names the versions scripts/build-cluster.sh builds."""
    import yaml

    from arena_helm.core.jobkinds import KINDS

    docs = [d for d in yaml.safe_load_all((REPO / "docs/rbac/arena-helm-user.yaml").read_text()) if d]
    assert [d["kind"] for d in docs] == ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]
    granted = {(g, r) for rule in docs[0]["rules"] for g in rule["apiGroups"] for r in rule["resources"]
               if "create" in rule["verbs"] and "patch" in rule["verbs"] and "delete" in rule["verbs"]}
    for k in KINDS:
        assert (k.group, k.plural) in granted, k.kind
    guide = (REPO / "docs/cluster-setup.md").read_text()
    text = (REPO / "scripts/build-cluster.sh").read_text()
    for name in ("kubernetes", "training-operator", "mpi-operator", "trainer/v2", "jobset", "kueue"):
        version = re.search(rf"{re.escape(name)}\|(v[0-9.]+)\|", text)
        assert version, name
        assert version.group(1) in guide, (name, version.group(1))


def test_the_documented_rbac_is_exactly_what_doctor_checks():
    """One source of truth: the Role and ClusterRole of docs/rbac/arena-helm-user.yaml grant exactly the
    (group, resource, verb) triples of arena_helm.insight.doctor.PERMISSIONS, namespaced and cluster-wide."""
    import yaml

    from arena_helm.insight.doctor import PERMISSIONS

    docs = {d["kind"]: d for d in yaml.safe_load_all((REPO / "docs/rbac/arena-helm-user.yaml").read_text()) if d}

    def triples(rules):
        return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}

    def wanted(cluster: bool):
        return {(p.group, r, v) for p in PERMISSIONS if p.cluster is cluster for r in p.resources for v in p.verbs}

    assert triples(docs["Role"]["rules"]) == wanted(False)
    assert triples(docs["ClusterRole"]["rules"]) == wanted(True)


def _unit_test_target(path: Path) -> Path | None:
    """The module a unit test file is named after: ``tests/unit/<dir>/test_<module>[_<aspect>].py`` tests
    ``arena_helm/<dir>/<module>.py`` (or the package ``<module>/``); the longest such module wins."""
    folder = REPO / "arena_helm" / path.parent.relative_to(REPO / "tests" / "unit")
    words = path.stem.removeprefix("test_").split("_")
    for n in range(len(words), 0, -1):
        name = "_".join(words[:n])
        for target in (folder / f"{name}.py", folder / name / "__init__.py"):
            if target.is_file():
                return target
    return None


def test_the_unit_tier_mirrors_the_modules():
    """Each unit test file names the module it tests (a file testing something else belongs to another tier:
    tests/cli, tests/charts, tests/repo, tests/cluster)."""
    files = sorted((REPO / "tests" / "unit").rglob("test_*.py"))
    assert len(files) > 30
    strays = [f.relative_to(REPO).as_posix() for f in files if _unit_test_target(f) is None]
    assert strays == []
    assert _unit_test_target(REPO / "tests/unit/cli/test_submit.py") == REPO / "arena_helm/cli/submit.py"
    assert _unit_test_target(REPO / "tests/unit/workload/test_chart_values_contract.py") \
        == REPO / "arena_helm/workload/chart_values.py"
    assert _unit_test_target(REPO / "tests/unit/core/test_jobkinds.py") == REPO / "arena_helm/core/jobkinds.py"
    assert _unit_test_target(REPO / "tests/unit/test_flag_spelling.py") is None
