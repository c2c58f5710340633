"""Finding helm, and living beside Arena, whose installer puts its helm on PATH as ``arena-helm``."""

from __future__ import annotations

import os

import pytest

from arena_helm.adapters import helmbin

OURS = "#!/venv/bin/python\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom arena_helm.cli import main\n"


def program(folder, name: str, text: str | bytes):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def path_of(tmp_path, monkeypatch):
    def set_path(*folders):
        monkeypatch.setenv("PATH", os.pathsep.join(str(tmp_path / f) for f in folders))
    return set_path


def test_arenas_helm_is_the_first_arena_helm_on_path_that_is_not_this_tool(tmp_path, path_of):
    ours = program(tmp_path / "venv", "arena-helm", OURS)
    arenas = program(tmp_path / "usr", "arena-helm", b"\x7fELF\x02\x01\x01 helm")
    program(tmp_path / "later", "arena-helm", b"\x7fELF another")
    (tmp_path / "noexec").mkdir()
    (tmp_path / "noexec" / "arena-helm").write_bytes(b"\x7fELF")  # not executable: not a command
    path_of("noexec", "venv", "usr", "venv", "later")
    assert helmbin.commands_on_path() == [ours, arenas, str(tmp_path / "later" / "arena-helm")]
    assert helmbin.is_ours(ours) and not helmbin.is_ours(arenas)
    assert helmbin.arenas_helm() == arenas
    assert helmbin.arenas_helm([ours]) is None  # of the files given
    path_of("usr", "venv")
    assert helmbin.arenas_helm() == arenas
    path_of("venv")
    assert helmbin.arenas_helm() is None


def test_a_helm_command_line_goes_to_arenas_helm_and_only_then(tmp_path, path_of, monkeypatch):
    program(tmp_path / "venv", "arena-helm", OURS)
    arenas = program(tmp_path / "usr", "arena-helm", b"\x7fELF")
    path_of("venv", "usr")
    monkeypatch.setattr(helmbin, "run_by_arena", lambda depth=3: False)
    assert helmbin.helm_for_arena(["template", "x", "chart"]) == arenas
    assert helmbin.helm_for_arena(["del", "arena-artifacts", "-n", "x"]) == arenas
    assert helmbin.helm_for_arena(["list"]) is None  # arena-helm's own list
    assert helmbin.helm_for_arena([]) is None
    monkeypatch.setattr(helmbin, "run_by_arena", lambda depth=3: True)  # Arena runs it: even its list
    assert helmbin.helm_for_arena(["list", "--all"]) == arenas
    assert helmbin.helm_for_arena(["get", "job"]) == arenas

    def unread(depth=3):
        raise AssertionError("a command only this tool has reads no process table")

    monkeypatch.setattr(helmbin, "run_by_arena", unread)
    assert helmbin.helm_for_arena(["submit", "tf"]) is None
    assert helmbin.helm_for_arena(["logs", "job"]) is None
    path_of("venv")
    assert helmbin.helm_for_arena(["template", "x", "chart"]) is None  # no helm of Arena's: the tool's own error


def test_run_by_arena_looks_at_the_parent_and_the_shell_that_started_it(monkeypatch):
    exes = {100: "/usr/bin/bash", 50: "/usr/local/bin/arena", 10: "/usr/bin/python3"}
    parents = {100: 50, 50: 1, 10: 1}
    monkeypatch.setattr(helmbin.os, "readlink", lambda p: exes[int(p.split("/")[2])])
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            import io

            pid = int(str(path).split("/")[2])
            return io.StringIO(f"{pid} (some (odd) name) S {parents[pid]} 1 1")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(helmbin.os, "getppid", lambda: 100)
    assert helmbin.run_by_arena() is True  # bash -c under arena (helm_advanced.go)
    assert helmbin.run_by_arena(depth=1) is False
    monkeypatch.setattr(helmbin.os, "getppid", lambda: 10)
    assert helmbin.run_by_arena() is False
