"""The helm adapter: every helm call goes through here; those that reach a cluster through pyhelm3's Command.

pyhelm3 runs helm through a shell string; arena-helm never lets user text near a shell, so its one spawning
method is replaced (in ``ExecCommand``, the one subclass) by a *runner*: a function that gets the argument
vector and stdin and returns ``(returncode, stdout, stderr)``. The default runner execs helm; tests inject
their own, so the adapter's logic runs without a helm binary. Generated values always travel on stdin as
JSON (``--values -``), never as ``--set`` strings; the user's own ``-f``/``--set*`` items follow them, so
helm's own merge and type rules apply.

The local commands (``helm version``, ``helm template``: what ``submit --dry-run`` runs) need neither
pyhelm3 nor asyncio: the default runner's work is then one ``subprocess.run`` of the same argument vector,
and ``--dry-run`` pays for no pyhelm3 import (``benchmarks/dry_run_overhead.py``). pyhelm3 and asyncio are
imported lazily, by the cluster commands.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import stats
from ..core.debuglog import debug
from ..core.errors import (
    AlreadyExistsError,
    ClusterError,
    ForbiddenError,
    HelmError,
    HelmTooOldError,
    NotFoundError,
    UsageError,
)
from .helmbin import find_helm

MIN_HELM = (3, 8)
NAME_IN_USE = re.compile(r"cannot re-?use a name")  # helm 3 says re-use, helm 4 reuse

# A runner: (argv, stdin or None) -> (returncode, stdout, stderr)
Runner = Callable[[list[str], bytes | None], Awaitable[tuple[int, bytes, bytes]]]


async def exec_runner(argv: list[str], stdin: bytes | None) -> tuple[int, bytes, bytes]:
    """Run helm as a child process from an argument vector (never a shell)."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await proc.communicate(stdin)
    except asyncio.CancelledError:
        try:
            proc.terminate()
            await proc.communicate()
        except ProcessLookupError:
            pass
        raise
    return proc.returncode or 0, stdout, stderr


def run_local(argv: list[str], stdin: bytes | None) -> tuple[int, bytes, bytes]:
    """``exec_runner`` without an event loop: one child process from an argument vector (never a shell)."""
    import subprocess

    io = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
    proc = subprocess.run(argv, capture_output=True, check=False, **io)  # noqa: S603 - an argument vector
    return proc.returncode, proc.stdout, proc.stderr


@dataclass(frozen=True)
class KubeTarget:
    """Which cluster and how: passed to helm as --kubeconfig / --kube-context."""

    kubeconfig: str | None = None
    context: str | None = None

    def flags(self) -> list[str]:
        return (["--kubeconfig", str(self.kubeconfig)] if self.kubeconfig else []) + (
            ["--kube-context", self.context] if self.context else [])


def _counted(argv: list[str]) -> list[str]:
    """Count and (--debug) log one helm process about to start."""
    stats.count("helm_calls")
    debug(__name__, "helm: %s", " ".join(a if "\n" not in a else "<multi-line>" for a in argv))
    return argv


class HelmFailed(Exception):
    """A helm process that exited non-zero (pyhelm3's ``errors.Error`` for the local commands)."""

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes):
        super().__init__(returncode, stdout, stderr)
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


VALUE_FLAGS = ("--values", "--set", "--set-string", "--set-file", "--set-json")


@dataclass(frozen=True)
class ValueSources:
    """The user's own helm value flags, as ``(flag, argument)`` pairs in the order given. They reach helm
    after the generated values, exactly as typed (helm parses them: its merge and type rules apply)."""

    items: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for flag, arg in self.items:
            if flag not in VALUE_FLAGS:
                raise UsageError(f"{flag}: not a helm value flag (use one of {', '.join(VALUE_FLAGS)})")
            if flag != "--values" and "=" not in arg:
                raise UsageError(f"{flag} {arg!r}: expected KEY=VALUE (e.g. {flag} worker.replicas=3)")

    @classmethod
    def of(cls, values: Sequence[str] = (), set_: Sequence[str] = (), set_string: Sequence[str] = (),
           set_file: Sequence[str] = (), set_json: Sequence[str] = ()) -> ValueSources:
        return cls(tuple([("--values", v) for v in values] + [("--set", v) for v in set_]
                         + [("--set-string", v) for v in set_string] + [("--set-file", v) for v in set_file]
                         + [("--set-json", v) for v in set_json]))

    def __bool__(self) -> bool:
        return bool(self.items)

    def check_files(self) -> None:
        """A file named by -f or --set-file must be readable: a usage error naming the flag otherwise."""
        for flag, arg in self.items:
            path = arg if flag == "--values" else arg.partition("=")[2]
            if flag in ("--values", "--set-file") and path != "-":
                try:
                    with open(path, "rb"):
                        pass
                except OSError as exc:
                    name = "-f/--values" if flag == "--values" else flag
                    raise UsageError(f"{name} {path}: cannot read the file ({exc.strerror})") from None

    def argv(self) -> list[str]:
        return [part for flag, arg in self.items for part in (flag, arg)]


NO_SOURCES = ValueSources()


def _make_command_class():
    from pyhelm3 import Command, errors

    class ExecCommand(Command):
        """pyhelm3's Command with its spawning replaced by a runner (argument vector, no shell).

        It reads Command's ``_executable``, ``_kubeconfig`` and ``_kubecontext`` (set by Command's own
        constructor) to build the same argument vector Command would.
        """

        def __init__(self, *, runner: Runner, **kwargs: Any):
            super().__init__(**kwargs)
            self._runner = runner

        async def run(self, command, input=None):  # noqa: A002 - pyhelm3's signature
            target = KubeTarget(self._kubeconfig, self._kubecontext)
            argv = _counted([self._executable, *(str(p) for p in command), *target.flags()])
            returncode, stdout, stderr = await self._runner(argv, input)
            if returncode == 0:
                return stdout
            raise errors.Error(returncode, stdout, stderr)

    return ExecCommand


def _first_line(stderr: bytes | str) -> str:
    """helm's error as one line: the ``Error:`` line and the detail lines helm puts under it."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # helm prints warnings before the error; the error starts with "Error:".
    for i, line in enumerate(lines):
        if line.startswith("Error:"):
            rest = [ln.lstrip("* ").strip() for ln in lines[i + 1 :]]
            msg = " ".join([line[len("Error:") :].strip(), *rest])
            return re.sub(r"\d+ errors? occurred: ", "", msg)
    return lines[-1] if lines else "helm failed without a message"


SCHEMA_REJECTED = "values rejected by the chart schema"
_HELM4_AT = re.compile(r"^at '(/[^']*)': (.*)$")


def _dotted(problem: str) -> str:
    """helm 4's ``at '/runPolicy/backoffLimit': MESSAGE`` as helm 3's ``runPolicy.backoffLimit: MESSAGE``."""
    m = _HELM4_AT.match(problem)
    if not m:
        return problem
    path = ".".join(part.replace("~1", "/").replace("~0", "~") for part in m.group(1).strip("/").split("/"))
    return f"{path or '(the values)'}: {m.group(2)}"


def translate(exc: Exception, *, action: str, target: KubeTarget | None = None) -> Exception:
    """Turn a pyhelm3 error into arena-helm's hierarchy, with helm's own first error line."""
    stderr = getattr(exc, "stderr", b"") or b""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else str(stderr)
    if "don't meet the specifications of the schema" in text:
        # helm lists one problem per line after the chart name; keep them on one line
        problems = [ln.strip().lstrip("-").strip() for ln in text.splitlines()[1:]]
        problems = [p for p in problems if p and not p.endswith(":") and not p.startswith("Error")]
        problems = sorted(_dotted(p) for p in problems)  # helm 3 and 4 name a value alike: runPolicy.backoffLimit
        return UsageError(f"{SCHEMA_REJECTED}: {'; '.join(problems) or _first_line(stderr)}")
    m = re.search(r"execution error at \([^)]*\): (.*)", text, re.S)
    if m:
        return UsageError(" ".join(m.group(1).split()))
    msg = _first_line(stderr)
    bad_input = _bad_value_source(msg)
    if bad_input is not None:
        return bad_input
    from .failures import from_helm  # unreachable, 401, 403, kubeconfig: worded as for the API's errors

    classified = from_helm(msg, action, target.kubeconfig if target else None, target.context if target else None)
    if classified is not None:
        return classified
    low = msg.lower()
    if "forbidden" in low:
        return ForbiddenError(f"{action}: forbidden: {msg}")
    if "release: not found" in low or "not found" in low and "release" in low:
        return NotFoundError(f"{action}: {msg}")
    if NAME_IN_USE.search(low) or "already exists" in low or "exists and cannot be imported" in low:
        return AlreadyExistsError(f"{action}: {msg}")
    if re.search(r"kubernetes cluster unreachable|connection refused|no such host|i/o timeout", low):
        return ClusterError(f"{action}: the cluster is unreachable: {msg}")
    return HelmError(f"{action}: {msg}")


def _bad_value_source(msg: str) -> UsageError | None:
    """helm refusing one of the user's -f/--set* sources (the same words in helm 3 and 4): the user's input,
    one line naming the file or flag."""
    # helm's own words, after its action's prefix (Error:, INSTALLATION FAILED:, UPGRADE FAILED:)
    m = re.match(r"(?:[A-Za-z ]+: )*?failed to parse (.+?): (?:cannot unmarshal yaml document: )?(.*)", msg)
    if m:
        path, why = m.groups()
        if re.search(r"cannot unmarshal \w+ into Go value of type map", why):
            why = "its top level is not a map of keys to values"
        else:
            why = re.sub(r"^error converting YAML to JSON: ", "", why)
        return UsageError(f"-f/--values {path}: not a values file: {why}")
    m = re.match(r"(?:[A-Za-z ]+: )*?failed parsing (--set(?:-json|-string|-file)?) data:? ?(.*)", msg)
    if m:
        flag, why = m.groups()
        if flag == "--set-json":  # helm names the data, not the problem
            return UsageError(f"--set-json {why}: helm cannot parse it as KEY=JSON (e.g. --set-json "
                              "'worker.nodeSelector={\"pool\":\"a100\"}')")
        return UsageError(f"{flag}: helm cannot parse it: {why}")
    return None


def _version_cache() -> Path:
    from .defaults import cache_dir

    return cache_dir() / "helm-versions.json"


def _binary_key(binary: str) -> str:
    import os

    st = os.stat(binary)
    return f"{os.path.realpath(binary)}:{st.st_size}:{st.st_mtime_ns}"


def _cached_version(binary: str) -> str | None:
    try:
        return json.loads(_version_cache().read_text()).get(_binary_key(binary))
    except (OSError, ValueError, AttributeError):
        return None


def _store_version(binary: str, version: str) -> None:
    import os

    path = _version_cache()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
        data[_binary_key(binary)] = version
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # a cache only


class Helm:
    """Synchronous facade over pyhelm3's asynchronous Command, one per CLI invocation."""

    def __init__(self, binary: str | None = None, target: KubeTarget | None = None, runner: Runner | None = None):
        self.binary = binary if runner is not None and binary else find_helm(binary)
        self.target = target or KubeTarget()
        self.runner = runner or exec_runner
        self._command = None
        self._version: str | None = None

    @property
    def command(self):
        if self._command is None:
            cls = _make_command_class()
            self._command = cls(
                runner=self.runner,
                executable=self.binary,
                kubeconfig=self.target.kubeconfig,
                kubecontext=self.target.context,
            )
        return self._command

    def _local(self, command: list[str], stdin: bytes | None, action: str) -> bytes:
        """A helm command that reaches no cluster (version, template), without pyhelm3 or an event loop
        (an injected runner still runs it: tests)."""
        argv = _counted([self.binary, *command, *self.target.flags()])
        try:
            if self.runner is exec_runner:
                returncode, stdout, stderr = run_local(argv, stdin)
            else:
                import asyncio

                returncode, stdout, stderr = asyncio.run(self.runner(argv, stdin))
        except OSError as exc:
            raise HelmError(f"{action}: cannot run {self.binary}: {exc.strerror}") from None
        if returncode != 0:
            raise translate(HelmFailed(returncode, stdout, stderr), action=action, target=self.target)
        return stdout

    def _run(self, coro, action: str):
        import asyncio

        from pyhelm3 import errors

        try:
            return asyncio.run(coro)
        except errors.Error as exc:
            raise translate(exc, action=action, target=self.target) from None
        except OSError as exc:
            raise HelmError(f"{action}: cannot run {self.binary}: {exc.strerror}") from None

    # ---- local ----------------------------------------------------------------------------------
    def version(self) -> str:
        """helm's version, e.g. ``v3.17.3``; raises when it is too old. Cached per binary (path, size,
        mtime) so that a command does not pay for a second helm process every time."""
        if self._version is not None:
            return self._version
        cacheable = self.runner is exec_runner
        version = _cached_version(self.binary) if cacheable else None
        if version is None:
            version = self._local(["version", "--template", "{{ .Version }}"], None, "helm version").decode().strip()
            if cacheable:
                _store_version(self.binary, version)
        m = re.match(r"v?(\d+)\.(\d+)", version)
        if not m or (int(m.group(1)), int(m.group(2))) < MIN_HELM:
            raise HelmTooOldError(
                f"helm {version or '(unknown version)'} at {self.binary} is too old: arena-helm needs helm "
                f"{MIN_HELM[0]}.{MIN_HELM[1]} or newer (scripts/install-helm.sh installs 3.17 and 4.1)"
            )
        self._version = version
        return version

    def template(self, release: str, chart: Path, values: dict[str, Any], namespace: str,
                 sources: ValueSources = NO_SOURCES) -> str:
        """``helm template``: the rendered manifests as multi-document YAML. Never contacts a cluster."""
        self.version()  # a missing or too old helm fails here, with one clear line
        sources.check_files()
        argv = ["template", release, str(chart), "--namespace", namespace, "--values", "-", *sources.argv()]
        return self._local(argv, json.dumps(values, ensure_ascii=False).encode(), "rendering the chart").decode()

    # ---- cluster --------------------------------------------------------------------------------
    def install(self, release: str, chart: Path, values: dict[str, Any], namespace: str,
                timeout: str = "5m", labels: dict[str, str] | None = None,
                sources: ValueSources = NO_SOURCES) -> dict:
        """``helm install`` (never upgrade: an existing release of that name is an error).

        ``labels`` become release labels (kept on helm's storage Secret), e.g. to know a release is ours.
        """
        self.version()  # a missing or too old helm fails here, with one clear line
        argv = [
            "install", release, str(chart), "--namespace", namespace, "--values", "-", *sources.argv(),
            "--output", "json", "--timeout", timeout,
        ]
        sources.check_files()
        if labels:
            argv += ["--labels", ",".join(f"{k}={v}" for k, v in sorted(labels.items()))]
        out = self._run(self.command.run(argv, json.dumps(values, ensure_ascii=False).encode()), f"installing release {release}")
        return json.loads(out[out.index(b"{") :])

    def uninstall(self, release: str, namespace: str, timeout: str = "5m", wait: bool = False) -> None:
        self.version()  # a missing or too old helm fails here, with one clear line
        self._run(self.command.uninstall(release, namespace=namespace, timeout=timeout, wait=wait),
                  f"uninstalling release {release}")

    def list(self, namespace: str | None = None, all_namespaces: bool = False, selector: str | None = None) -> list[dict]:
        """Every release in every live state (helm 4 dropped ``--all``; the state flags work in both);
        ``selector`` filters on release labels."""
        self.version()  # a missing or too old helm fails here, with one clear line
        argv = ["list", "--deployed", "--failed", "--pending", "--uninstalling", "--max", "0", "--output", "json"]
        if selector:
            argv += ["--selector", selector]
        argv += ["--all-namespaces"] if all_namespaces else ["--namespace", namespace or "default"]
        out = self._run(self.command.run(argv), "listing releases")
        return json.loads(out or b"[]")

    def get_values(self, release: str, namespace: str) -> dict[str, Any]:
        """``helm get values``: the values the release's latest revision was installed with (the user-supplied
        ones: arena-helm's generated values with the user's -f/--set* merged), through helm's own storage driver."""
        self.version()  # a missing or too old helm fails here, with one clear line
        out = self._run(self.command.run(["get", "values", release, "--namespace", namespace, "--output", "json"]),
                        f"reading the values of release {release}")
        return json.loads(out or b"{}") or {}

    def merged_values(self, values: dict[str, Any], sources: ValueSources) -> dict[str, Any]:
        """The values a release would record (``helm get values``): ``values`` with the user's -f/--set*
        items merged by helm itself, rendered through a one-template chart that prints ``.Values``."""
        import tempfile

        import yaml

        if not sources:
            return values
        self.version()
        sources.check_files()
        with tempfile.TemporaryDirectory(prefix="arena-helm-values-") as tmp:
            chart = Path(tmp) / "values"
            (chart / "templates").mkdir(parents=True)
            (chart / "Chart.yaml").write_text("apiVersion: v2\nname: values\nversion: 0.1.0\n")
            (chart / "templates" / "values.yaml").write_text("{{ toJson .Values }}\n")
            argv = ["template", "values", str(chart), "--values", "-", *sources.argv()]
            out = self._local(argv, json.dumps(values, ensure_ascii=False).encode(), "merging the chart values")
        docs = [d for d in yaml.safe_load_all(out.decode()) if d is not None]
        return docs[0] if docs and isinstance(docs[0], dict) else {}
    # ---- upgrade (suspend/resume) -----------------------------------------------------------------
    def upgrade(self, release: str, chart: Path, values: dict[str, Any], namespace: str, *,
                reuse_values: bool = False, timeout: str = "5m") -> dict:
        """``helm upgrade`` of an existing release (never ``--install``): values on stdin as JSON.

        With ``reuse_values`` the release's stored values are kept and ``values`` merged over them
        (``--reuse-values``): what suspend/resume use to flip one value. Returns helm's release JSON.
        """
        self.version()  # a missing or too old helm fails here, with one clear line
        argv = ["upgrade", release, str(chart), "--namespace", namespace, "--values", "-",
                "--output", "json", "--timeout", timeout]
        if reuse_values:
            argv.append("--reuse-values")
        out = self._run(self.command.run(argv, json.dumps(values, ensure_ascii=False).encode()),
                        f"upgrading release {release}")
        return json.loads(out[out.index(b"{") :])
