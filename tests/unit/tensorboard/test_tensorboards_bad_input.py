"""Bad input to ``tensorboard start``: one line naming the flag or the NAME argument and the fix, the whole
message asserted."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.tensorboard.tensorboards import tensorboard_values

ONE_OF = "give exactly one of --logdir PVC:PATH (the logs in a PVC) and --host-path DIR"
CASES = [
    ("T1", {"logdir": "l:/x"}, "NAME: tensorboard name 'T1' must start with a lowercase letter and hold only a-z, "
     "0-9, '-'"),
    ("t1\n", {"logdir": "l:/x"}, "NAME: tensorboard name 't1\\n' must start with a lowercase letter and hold only "
     "a-z, 0-9, '-'"),
    ("a" * 52, {"logdir": "l:/x"}, f"NAME: tensorboard name '{'a' * 52}' is 52 characters; at most 51 (its Service "
     "is <name>-tensorboard)"),
    ("t1", {}, ONE_OF),
    ("t1", {"logdir": "l:/x", "host_path": "/x"}, ONE_OF),
    ("t1", {"logdir": "l"}, "--logdir 'l' is not PVC:PATH (e.g. training-logs:/mnist)"),
    ("t1", {"logdir": "Bad_Claim:/x"}, "--logdir: PVC name 'Bad_Claim' must be a lowercase DNS subdomain"),
    ("t1", {"logdir": "l:/x/../../etc"}, "--logdir 'l:/x/../../etc': PATH is a folder of the PVC: no '..' and no "
     "newline"),
    ("t1", {"host_path": "rel"}, "--host-path 'rel' must be absolute"),
]


@pytest.mark.parametrize(("name", "options", "message"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_a_bad_flag_is_one_line_naming_it(name, options, message):
    with pytest.raises(UsageError) as err:
        tensorboard_values(name, **{"logdir": None, "host_path": None, "image": None, "service_type": "ClusterIP",
                                    **options})
    assert str(err.value) == message


def test_the_edges_are_taken():
    values = tensorboard_values("a" * 51, logdir="logs:/", host_path=None, image=None, service_type="ClusterIP")
    assert (values["pvc"], values["logDir"]) == ({"claimName": "logs", "mountPath": "/logs"}, "/logs")
