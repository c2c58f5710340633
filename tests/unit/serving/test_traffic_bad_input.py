"""Bad input to ``serve traffic-split`` (its spec): one line naming the flag or the NAME argument and the fix, the
whole message asserted."""

from __future__ import annotations

import pytest

from arena_helm.core.errors import UsageError
from arena_helm.serving.traffic import TrafficSplitSpec

CASES = [
    ({"name": "S1"}, "NAME: serving name 'S1' must start with a lowercase letter and hold only a-z, 0-9 and '-' (not "
     "ending in '-')"),
    ({"name": "a" * 52}, f"NAME: serving name '{'a' * 52}' is 52 characters; a serving's name is at most 51 (its "
     "versions' releases are NAME-VERSION, at most 53)"),
    ({"version_weight": ["a:50"]}, "--version-weight: the weights sum to 50, not 100: a:50"),
    ({"version_weight": ["a:50", "a:50"]}, "--version-weight: version a is given twice: give each version once"),
    ({"version_weight": ["a50"]}, "--version-weight 'a50': not VERSION:WEIGHT (e.g. v1:80)"),
    ({"version_weight": ["a:50\n", "b:50"]}, "--version-weight 'a:50\\n': not VERSION:WEIGHT (e.g. v1:80)"),
    ({"version_weight": ["A:50", "b:50"]},
     "--version-weight A:50: version 'A' must be a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)"),
    ({"version_weight": ["a:150", "b:-50"]}, "--version-weight a:150: a weight is a percent, 0 to 100"),
    ({"version_weight": []}, "--version-weight: give each version its share, e.g. -v v1:80 -v v2:20"),
]


@pytest.mark.parametrize(("fields", "message"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_a_bad_flag_is_one_line_naming_it(fields, message):
    with pytest.raises(UsageError) as err:
        TrafficSplitSpec(**{"name": "s1", "version_weight": ["a:50", "b:50"], **fields})
    assert str(err.value) == message


def test_the_edges_are_taken():
    s = TrafficSplitSpec(name="a" * 51, version_weight=["a:100", "b:0"])
    assert s.version_weight == [("a", 100), ("b", 0)]
