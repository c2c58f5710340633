"""The commit a ``--sync-branch`` names, for the job's provenance: ``git ls-remote`` of the repository (the
one adapter that runs git). Best effort: a repository this machine cannot read (private, unreachable, no git
installed) leaves the commit unknown, with the reason; nothing here ever prompts for credentials.

The URL and the ref travel as arguments of their own (after ``--``), never through a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

COMMIT_RX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # a full SHA-1 (or SHA-256) object name
TIMEOUT = 10.0


@dataclass(frozen=True)
class Resolved:
    commit: str = ""  # the full commit name ("" when unknown)
    problem: str = ""  # why it is unknown


def pick(listing: str, ref: str) -> str:
    """The commit ``ref`` names in ``git ls-remote`` output: a branch, else an annotated tag's peeled commit,
    else a lightweight tag ("" when none matches). Pure."""
    refs = {}
    for line in listing.splitlines():
        sha, _, name = line.partition("\t")
        if COMMIT_RX.fullmatch(sha.strip()):
            refs[name.strip()] = sha.strip()
    for name in (f"refs/heads/{ref}", f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", ref):
        if name in refs:
            return refs[name]
    return ""


def resolve(url: str, ref: str, *, git: str | None = None, timeout: float = TIMEOUT) -> Resolved:
    """The commit ``ref`` (a branch or tag; a full commit name is already one) has in the repository ``url``."""
    if COMMIT_RX.fullmatch(ref):
        return Resolved(ref)
    git = git or shutil.which("git")
    if git is None:
        return Resolved(problem="git is not installed here")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
           "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")}
    argv = [git, "ls-remote", "--", url, f"refs/heads/{ref}", f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return Resolved(problem=f"git ls-remote did not answer in {timeout:.0f}s")
    except OSError as exc:
        return Resolved(problem=f"git cannot run: {exc.strerror}")
    if proc.returncode != 0:
        last = next((ln for ln in reversed(proc.stderr.splitlines()) if ln.strip()), f"exit {proc.returncode}")
        return Resolved(problem=f"git ls-remote: {last.strip()}")
    commit = pick(proc.stdout, ref)
    return Resolved(commit) if commit else Resolved(problem=f"the repository has no branch or tag {ref}")
