"""A plain helm user's ``labels`` may not set what a serving or workspace chart sets itself: each chart refuses
them in one line (arena-common.refuseOwnLabels), exactly the keys the CLI refuses for ``-l`` (the kind's spec's
``OWNED_LABELS``), so that neither side can drift. The job charts list these with their other problems
(test_charts.py)."""

from __future__ import annotations

import pytest
import yaml

from arena_helm.core.catalog import Family
from arena_helm.workload.chart_registry import ALL_KINDS
from tests.support.helmtools import REPO, RenderError, render_text

OWNING = [k for k in ALL_KINDS if k.family in (Family.SERVING, Family.WORKSPACE)]


def minimal(chart: str) -> dict:
    return yaml.safe_load((REPO / "charts" / chart / "ci" / "minimal-values.yaml").read_text()) or {}


@pytest.mark.parametrize("kind", OWNING, ids=lambda k: k.chart)
def test_each_label_the_chart_sets_is_refused_in_labels_as_the_cli_refuses_it(helm_bin, kind):
    owned = sorted(kind.spec_class().OWNED_LABELS)
    with pytest.raises(RenderError) as err:
        render_text(helm_bin, kind.chart, {**minimal(kind.chart), "labels": dict.fromkeys(owned, "x")})
    message = ", ".join(f'"{k}"' for k in owned)
    assert str(err.value).splitlines()[0].endswith(f"): labels: {message} are set by the chart and cannot be "
                                                   "overridden"), str(err.value)


@pytest.mark.parametrize("kind", OWNING, ids=lambda k: k.chart)
def test_a_label_of_the_users_own_is_rendered_once_on_every_object(helm_bin, kind):
    docs = [d for d in yaml.safe_load_all(render_text(helm_bin, kind.chart, {**minimal(kind.chart),
                                                                            "labels": {"team": "vision"}})) if d]
    assert docs and all(d["metadata"]["labels"]["team"] == "vision" for d in docs), [d["kind"] for d in docs]
    with pytest.raises(RenderError) as err:
        render_text(helm_bin, kind.chart, {**minimal(kind.chart), "labels": {"release": "other"}})
    assert str(err.value).splitlines()[0].endswith('): labels: "release" is set by the chart and cannot be '
                                                   'overridden'), str(err.value)
