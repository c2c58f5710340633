"""arena_helm.releases.attach: the exit code from the exec status channel."""

from __future__ import annotations

import json

import pytest

from arena_helm.core.errors import ClusterError
from arena_helm.releases.attach import exit_code


def test_exit_code_from_the_status_channel():
    assert exit_code(b'{"metadata":{},"status":"Success"}', "p") == 0
    failure = {"status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated ...",
               "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}}
    assert exit_code(json.dumps(failure).encode(), "p") == 42
    with pytest.raises(ClusterError, match=r"^exec in pod p: Internal error occurred: boom$"):
        exit_code(b'{"status":"Failure","reason":"InternalError","message":"Internal error occurred:\\n boom"}', "p")
    with pytest.raises(ClusterError, match="closed without an exit status"):
        exit_code(b"", "p")
    with pytest.raises(ClusterError, match="^exec in pod p: container not found$"):
        exit_code(b"container not found\n", "p")
