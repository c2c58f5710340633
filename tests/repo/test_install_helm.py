"""scripts/install-helm.sh: its arguments, its platform check and its checksum check, run for real with a
temporary cache (and, where a platform or a download is faked, a shim on PATH or as PYTHON)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-helm.sh"
REAL_CACHE = Path(os.environ.get("ARENA_HELM_CACHE") or Path.home() / ".cache" / "arena-helm")
VERSIONS = ("3.17.3", "4.1.4")


def run(*args: str, cache: Path, path_prefix: Path | None = None, python: str | None = None):
    env = {**os.environ, "ARENA_HELM_CACHE": str(cache)}
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}:{env['PATH']}"
    if python is not None:
        env["PYTHON"] = python
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_installs_nothing(flag, tmp_path):
    res = run(flag, cache=tmp_path / "cache")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: scripts/install-helm.sh [--bin DIR | --bin=DIR] [--help]\n")
    assert res.stderr == ""
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--bni", "x"], "unknown argument: --bni"),
    (["extra"], "unknown argument: extra"),
    (["--bin"], "--bin needs a folder: --bin DIR"),
    (["--bin="], "--bin= needs a folder: --bin=DIR"),
])
def test_bad_arguments_are_usage_errors(args, message, tmp_path):
    res = run(*args, cache=tmp_path / "cache")
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[0] == f"[install-helm] {message}"
    assert "usage: scripts/install-helm.sh" in res.stderr and res.stdout == ""
    assert not (tmp_path / "cache").exists()


def _uname_shim(directory: Path, system: str, machine: str) -> Path:
    directory.mkdir()
    shim = directory / "uname"
    shim.write_text(f'#!/bin/sh\ncase "$1" in -s) echo {system} ;; -m) echo {machine} ;; *) echo {system} ;; esac\n')
    shim.chmod(0o755)
    return directory


@pytest.mark.parametrize(("system", "machine"), [("Darwin", "arm64"), ("Linux", "aarch64"), ("Darwin", "x86_64")])
def test_other_platforms_are_refused_with_a_clear_message(system, machine, tmp_path):
    shim = _uname_shim(tmp_path / "shim", system, machine)
    res = run("--bin", str(tmp_path / "bin"), cache=tmp_path / "cache", path_prefix=shim)
    assert res.returncode == 1, res.stderr
    assert f"this machine is {system} {machine}" in res.stderr
    assert "--helm-binary" in res.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "bin").exists()


@pytest.fixture
def cache_of_real_binaries(tmp_path) -> Path:
    """A cache holding (links to) the binaries scripts/install-helm.sh installed for this test run."""
    cache = tmp_path / "cache"
    for version in VERSIONS:
        src = REAL_CACHE / f"helm-{version}"
        if not (src / "helm").exists():
            pytest.skip(f"helm {version} not installed in the cache (run scripts/install-helm.sh)")
        (cache / f"helm-{version}").mkdir(parents=True)
        for name in ("helm", "kubectl"):
            (cache / f"helm-{version}" / name).symlink_to(src / name)
        if (src / ".verified").exists():  # the links have the same size and mtime: no need to hash again
            shutil.copy(src / ".verified", cache / f"helm-{version}" / ".verified")
    return cache


@pytest.mark.parametrize("form", ["--bin=DIR", "--bin DIR"])
def test_bin_links_helm_and_helm4_in_both_forms(form, cache_of_real_binaries, tmp_path):
    bin_dir = tmp_path / "links"
    args = [f"--bin={bin_dir}"] if "=" in form else ["--bin", str(bin_dir)]
    res = run(*args, cache=cache_of_real_binaries)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"{v} {cache_of_real_binaries}/helm-{v}" for v in VERSIONS]
    for link, version in (("helm", "3.17.3"), ("helm4", "4.1.4")):
        out = subprocess.run([str(bin_dir / link), "version", "--short"], capture_output=True, text=True).stdout
        assert out.startswith(f"v{version}"), out


def _fake_wheel(directory: Path, helm: bytes, kubectl: bytes) -> Path:
    """A wheel shaped like the real ones (layer.zip inside a .jsii.tgz), carrying these binaries."""
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as lz:
        lz.writestr("helm/helm", helm)
        lz.writestr("kubectl/kubectl", kubectl)
    tgz = io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as tf:
        info = tarfile.TarInfo("package/lib/layer.zip")
        info.size = len(layer.getvalue())
        tf.addfile(info, io.BytesIO(layer.getvalue()))
    directory.mkdir(parents=True, exist_ok=True)
    whl = directory / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as wz:
        wz.writestr("fake/fake.jsii.tgz", tgz.getvalue())
    return whl


def _python_shim(directory: Path, wheel: Path) -> Path:
    """A PYTHON whose ``-m pip download ... -d DIR`` puts ``wheel`` in DIR; anything else runs the real python."""
    shim = directory / "python-shim"
    shim.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
        '  while [ $# -gt 0 ]; do if [ "$1" = "-d" ]; then cp "' + str(wheel) + '" "$2/"; fi; shift; done\n'
        "  exit 0\nfi\n"
        f'exec "{sys.executable}" "$@"\n'
    )
    shim.chmod(0o755)
    return shim


def test_binaries_with_another_checksum_are_not_installed(tmp_path):
    fake_helm = b"#!/bin/sh\necho v3.17.3\n"  # says the right version, but is not the binary
    wheel = _fake_wheel(tmp_path / "wheels", fake_helm, b"#!/bin/sh\n")
    res = run("--bin", str(tmp_path / "bin"), cache=tmp_path / "cache", python=str(_python_shim(tmp_path, wheel)))
    assert res.returncode == 1, res.stderr
    assert "[install-helm] helm from fake-1.0-py3-none-any.whl has sha256 " in res.stderr
    assert "expected c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3: not installed" in res.stderr
    assert not (tmp_path / "cache" / "helm-3.17.3" / "helm").exists()
    assert not (tmp_path / "bin").exists()


def test_a_tampered_cache_is_not_used(tmp_path):
    cache = tmp_path / "cache"
    (cache / "helm-3.17.3").mkdir(parents=True)
    for name in ("helm", "kubectl"):
        path = cache / "helm-3.17.3" / name
        path.write_text("#!/bin/sh\necho v3.17.3\n")
        path.chmod(0o755)
    # a stamp of an earlier verification does not cover files changed since (size and mtime differ)
    (cache / "helm-3.17.3" / ".verified").write_text(
        "c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3 58155160 1 "
        "720d31a15368ad56993c127a7d4fa2688a8520029c2e6be86b1a877ad6f92624 56909976 1\n")
    wheel = _fake_wheel(tmp_path / "wheels", b"other", b"other")
    res = run(cache=cache, python=str(_python_shim(tmp_path, wheel)))
    assert res.returncode == 1
    assert "the cached helm 3.17.3 in" in res.stderr and "is not the expected binary (sha256): reinstalling" in res.stderr
    assert "not installed" in res.stderr

