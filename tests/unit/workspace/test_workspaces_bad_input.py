"""Bad input to ``workspace start`` (its spec): one line naming the flag or the NAME argument and the fix, the
whole message asserted."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.workspace.workspaces import WorkspaceSpec

NAME_GRAMMAR = "must start with a lowercase letter and hold only a-z, 0-9 and '-' (not ending in '-')"

CASES = [
    ({"name": "w1\n"}, f"NAME: workspace name 'w1\\n' {NAME_GRAMMAR}"),
    ({"name": "W1"}, f"NAME: workspace name 'W1' {NAME_GRAMMAR}"),
    ({"name": "a" * 41}, f"NAME: workspace name '{'a' * 41}' is 41 characters; at most 40 (its Job is <name>-<run>, "
     "its home <name>-home)"),
    ({"idle_stop": "500ms"}, "--idle-stop: '500ms' is under one second: give 1s or more (or 0)"),
    ({"idle_stop": "10s", "type": "code-server"},
     "--idle-stop 10s: code-server stops itself only after more than 60s without activity (its "
     "--idle-timeout-seconds): give more, or 0 for never"),
    ({"max_lifetime": "0"}, "--max-lifetime: 0s: give 1s or more, or leave it out for no limit"),
    ({"max_lifetime": "0.5s"}, "--max-lifetime: '0.5s' is under one second: give 1s or more (or 0)"),
    ({"home_size": "0"}, "--home-size 0: give a size greater than zero (e.g. 20Gi)"),
    ({"home_size": "1 Gi"}, "--home-size: '1 Gi' is not a valid quantity (e.g. 2, 0.5, 500m, 512Mi, 16Gi)"),
    ({"gpus": -1}, "--gpus: -1: give 0 or more"),
    ({"label": ["release=x"]}, "--label: release=x: the chart sets label release itself: give another key"),
    ({"label": ["arena-helm.kubeflow.org/workspace-run=1"]},
     "--label: arena-helm.kubeflow.org/workspace-run=1: the chart sets label arena-helm.kubeflow.org/workspace-run "
     "itself: give another key"),
]


@pytest.mark.parametrize(("fields", "message"), CASES, ids=[f"{'-'.join(c[0])}-{i}" for i, c in enumerate(CASES)])
def test_a_bad_flag_is_one_line_naming_it(fields, message):
    with pytest.raises(UsageError) as err:
        WorkspaceSpec(**{"name": "w1", **fields})
    assert str(err.value) == message


def test_the_edges_are_taken():
    s = WorkspaceSpec(name="a" * 40, idle_stop="1s", max_lifetime="1s", home_size="1Mi")
    assert (s.idle_stop, s.max_lifetime, s.home_size) == (1, 1, "1Mi")
