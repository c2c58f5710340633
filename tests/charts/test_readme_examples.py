"""The charts as a helm user meets them: every fenced shell example of charts/*/README.md and of the main
README's chart section runs, as written, with the real helm (3 and 4), in a fresh copy of the checkout
(no dependency built yet): ``helm lint``/``helm template`` locally, ``helm install`` against the test API
server (its namespace mapped to the test's, then uninstalled). Also: the one documented command
(``scripts/charts-deps.sh``) is what makes a fresh clone lint- and template-ready; the job charts take
their dependencies as version ranges; ct.yaml checks every chart every time."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHARTS = sorted(p.parent.name for p in (REPO / "charts").glob("*/Chart.yaml"))
JOB_CHARTS = ("tfjob", "pytorchjob", "mpijob")
FENCE = re.compile(r"^```(sh|bash|shell|console)\n(.*?)^```", re.M | re.S)
# The README's chart repository, a placeholder: the test serves the folder scripts/package-charts.sh makes there
REPO_PLACEHOLDER = "https://charts.example.org/arena-helm"
# the user's own values file of the README's repository example: here, the tfjob chart's minimal ci values
USER_VALUES = ("my-values.yaml", REPO / "charts" / "tfjob" / "ci" / "minimal-values.yaml")


def chart_section(readme: str) -> str:
    """The main README's section on the charts with plain helm."""
    start = readme.index("## The charts, with plain helm")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def commands(block: str) -> list[list[str]]:
    """The block's commands: continuation lines joined, comments dropped, split as the shell would."""
    joined = re.sub(r"\\\n", " ", block)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(words)
    return out


def examples() -> list:
    cases = []
    sources = [(f"charts/{c}/README.md", (REPO / "charts" / c / "README.md").read_text()) for c in CHARTS]
    sources.append(("README.md", chart_section((REPO / "README.md").read_text())))
    for name, text in sources:
        for i, m in enumerate(FENCE.finditer(text)):
            cases.append(pytest.param(m.group(2), id=f"{name}#{i + 1}"))
    return cases


EXAMPLES = examples()


def test_every_chart_readme_with_a_helm_example_is_collected():
    ids = {p.id.split("#")[0] for p in EXAMPLES}
    charts = ("jaxjob", "mpijob", "pytorchjob", "tensorboard", "tfjob", "trainjob", "xgboostjob",
              "paddlejob", "workspace", "custom-serving", "vllm-serving", "sglang-serving",
              "tf-serving", "triton-serving", "kserve", "distributed-serving", "traffic-split")
    assert ids == {f"charts/{c}/README.md" for c in charts} | {"README.md"}
    for p in EXAMPLES:
        assert not re.search(r"\\\\\s*$", p.values[0], re.M), f"{p.id}: a line ends in a double backslash"


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A fresh copy of what a clone holds for the charts: charts/ (no built dependency) and scripts/."""
    root = tmp_path / "clone"
    shutil.copytree(REPO / "charts", root / "charts", ignore=shutil.ignore_patterns("*.tgz", "__pycache__"))
    shutil.copytree(REPO / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def helm_env(tmp: Path, helm_bin: Path, kubeconfig: Path | None) -> dict:
    env = dict(os.environ)
    for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[var] = str(tmp / var.lower())
    env["PATH"] = f"{helm_bin.parent}:{env['PATH']}"
    env["KUBECONFIG"] = str(kubeconfig or tmp / "no-kubeconfig")
    env.pop("HELM", None)
    return env


def _namespace_flag(words: list[str]) -> int | None:
    for i, w in enumerate(words):
        if w in ("-n", "--namespace"):
            return i
    return None


@pytest.mark.parametrize("block", EXAMPLES)
def test_readme_example_runs_with_the_real_helm(block, helm_bin, checkout, tmp_path, request):
    cmds = commands(block)
    assert cmds, "an empty example"
    text = " ".join(" ".join(c) for c in cmds)
    with contextlib.ExitStack() as stack:
        if REPO_PLACEHOLDER in text:  # the README's "serve that folder": scripts/package-charts.sh's, served here
            subprocess.run(["scripts/package-charts.sh", "dist/charts"], cwd=checkout, check=True, capture_output=True,
                           env={**os.environ, "HELM": str(helm_bin)})
            url = stack.enter_context(served(checkout / "dist" / "charts"))
            cmds = [[w.replace(REPO_PLACEHOLDER, url) for w in c] for c in cmds]
            shutil.copy(USER_VALUES[1], checkout / USER_VALUES[0])
        run_example(cmds, helm_bin, checkout, tmp_path, request)


@contextlib.contextmanager
def served(folder: Path):
    """``folder`` over HTTP on 127.0.0.1 (a static web server, as the README asks for): its URL."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def run_example(cmds: list[list[str]], helm_bin, checkout: Path, tmp_path: Path, request) -> None:
    installs = [c for c in cmds if c[:2] == ["helm", "install"]]
    kubeconfig = namespace = None
    if installs:
        cluster = request.getfixturevalue("cluster")
        namespace = request.getfixturevalue("namespace")
        kubeconfig = cluster.admin.kubeconfig
    env = helm_env(tmp_path, helm_bin, kubeconfig)
    if not any(c[0] == "scripts/charts-deps.sh" for c in cmds):
        # a chart README's example follows the README's one set-up command (already part of the example)
        subprocess.run(["scripts/charts-deps.sh"], cwd=checkout, env=env, check=True, capture_output=True)
    installed = []
    try:
        for words in cmds:
            assert words[0] in ("helm", "scripts/charts-deps.sh"), f"unexpected command {words[0]}"
            if words[:2] == ["helm", "install"]:
                i = _namespace_flag(words)
                assert i is not None, "an install example names its namespace"
                words = [*words[: i + 1], namespace, *words[i + 2 :]]
                installed.append(words[2])
            proc = subprocess.run(words, cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, f"{shlex.join(words)}:\n{proc.stdout}\n{proc.stderr}"
            if words[:2] == ["helm", "lint"]:
                assert "0 chart(s) failed" in proc.stdout, proc.stdout
            if words[:2] == ["helm", "template"]:
                assert any(d for d in yaml.safe_load_all(proc.stdout)), "template rendered nothing"
        for release in installed:
            status = subprocess.run(["helm", "status", release, "-n", namespace, "-o", "json"], env=env,
                                    capture_output=True, text=True)
            assert '"status":"deployed"' in status.stdout.replace(" ", ""), status.stdout[:500]
    finally:
        for release in installed:
            subprocess.run(["helm", "uninstall", release, "-n", namespace], env=env, capture_output=True)


def test_a_fresh_clone_is_lint_and_template_ready_after_the_one_documented_command(helm_bin, checkout, tmp_path):
    env = helm_env(tmp_path, helm_bin, None)
    before = subprocess.run(["helm", "lint", "charts/tfjob"], cwd=checkout, env=env, capture_output=True, text=True)
    assert before.returncode != 0 and "is missing these dependencies: arena-common,tensorboard" in before.stdout
    assert "scripts/charts-deps.sh" in (REPO / "README.md").read_text()
    out = subprocess.run(["scripts/charts-deps.sh"], cwd=checkout, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"built the dependencies of charts/{c}" for c in CHARTS
                                       if "dependencies:" in (REPO / "charts" / c / "Chart.yaml").read_text()]
    for chart in CHARTS:
        ci = sorted((checkout / "charts" / chart / "ci").glob("*-values.yaml"))
        extra = ["-f", str(ci[0])] if ci else []
        library = yaml.safe_load((REPO / "charts" / chart / "Chart.yaml").read_text()).get("type") == "library"
        for verb in (["lint", "--strict"],) if library else (["lint", "--strict"], ["template", "t"]):
            proc = subprocess.run(["helm", *verb, f"charts/{chart}", *extra], cwd=checkout, env=env,
                                  capture_output=True, text=True)
            assert proc.returncode == 0, f"{chart} {verb}: {proc.stdout}{proc.stderr}"


def test_charts_deps_script_arguments(checkout, helm_bin, tmp_path):
    env = helm_env(tmp_path, helm_bin, None)
    res = subprocess.run(["scripts/charts-deps.sh", "--help"], cwd=checkout, env=env, capture_output=True, text=True)
    assert res.returncode == 0 and "helm dependency build" in res.stdout
    assert not list((checkout / "charts").glob("*/charts/*.tgz"))
    res = subprocess.run(["scripts/charts-deps.sh", "--all"], cwd=checkout, env=env, capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr == "usage: scripts/charts-deps.sh [--help]\n"


@pytest.mark.parametrize("chart", JOB_CHARTS)
def test_job_charts_take_their_dependencies_as_a_version_range(chart, helm_bin, checkout, tmp_path):
    """``~0.1.0``: a patch release of arena-common (0.1.1) is taken without editing the job charts."""
    meta = yaml.safe_load((REPO / "charts" / chart / "Chart.yaml").read_text())
    assert {d["name"]: d["version"] for d in meta["dependencies"]} == {"arena-common": "~0.1.0",
                                                                        "tensorboard": "~0.1.0"}
    lib = checkout / "charts" / "arena-common" / "Chart.yaml"
    lib.write_text(lib.read_text().replace("version: 0.1.0", "version: 0.1.1"))
    env = helm_env(tmp_path, helm_bin, None)
    proc = subprocess.run(["helm", "dependency", "update", f"charts/{chart}"], cwd=checkout, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (checkout / "charts" / chart / "charts" / "arena-common-0.1.1.tgz").exists()
    lock = yaml.safe_load((checkout / "charts" / chart / "Chart.lock").read_text())
    assert {d["name"]: d["version"] for d in lock["dependencies"]}["arena-common"] == "0.1.1"


def test_ct_checks_every_chart_every_time():
    ct = yaml.safe_load((REPO / "ct.yaml").read_text())
    assert ct["all"] is True and ct["chart-dirs"] == ["charts"]
    assert ct["validate-maintainers"] is False
    # with all: true, ct's version-bump check would fail every unchanged chart against target-branch
    assert ct["check-version-increment"] is False
    assert (REPO / ct["chart-yaml-schema"]).exists() and (REPO / ct["lint-conf"]).exists()

