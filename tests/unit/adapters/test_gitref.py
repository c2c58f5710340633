"""arena_helm.adapters.gitref.pick: the commit a ref names in ``git ls-remote`` output (branch, peeled annotated tag,
lightweight tag); a full commit name resolves to itself without git. (git itself runs in the cluster tier.)"""

from __future__ import annotations

from arena_helm.adapters.gitref import Resolved, pick, resolve

A, B, C = "a" * 40, "b" * 40, "c" * 40
LISTING = f"{A}\trefs/heads/dev\n{B}\trefs/tags/v1\n{C}\trefs/tags/v1^{{}}\n{A}\trefs/tags/light\n"


def test_a_branch_then_the_peeled_tag_then_the_tag():
    assert pick(LISTING, "dev") == A
    assert pick(LISTING, "v1") == C  # the commit an annotated tag points at, not the tag object
    assert pick(LISTING, "light") == A
    assert pick(LISTING, "nosuch") == ""
    assert pick("warning: junk\n", "dev") == ""


def test_a_full_commit_name_needs_no_git():
    assert resolve("file:///nowhere", B, git="/nonexistent/git") == Resolved(B)
