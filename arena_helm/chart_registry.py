"""Every chart arena-helm ships, by name, with the typed model of its values (the one source of the chart's
``values.schema.json``, ``values.yaml`` and README table): the job kinds', the serving kinds', the workspace's,
the TensorBoard's, the traffic split's and ``arena-common``'s. It imports every family, so it stands above them
all; the generators in ``scripts/`` and the tests read it, the commands never do."""

from __future__ import annotations

from .chart_values import ArenaCommonValues, TensorBoardValues, ValuesModel
from .kinds import KINDS
from .serve_kinds import SERVE_KINDS
from .traffic import CHART as TRAFFIC_CHART
from .traffic import TrafficSplitValues
from .workspace import CHART as WORKSPACE_CHART
from .workspace import WorkspaceValues

JOB_VALUES: dict[str, type[ValuesModel]] = {k.chart: k.values_class() for k in KINDS}
CHART_VALUES: dict[str, type[ValuesModel]] = {
    **JOB_VALUES, "tensorboard": TensorBoardValues, WORKSPACE_CHART: WorkspaceValues,
    **{k.chart: k.values_class() for k in SERVE_KINDS}, TRAFFIC_CHART: TrafficSplitValues,
    "arena-common": ArenaCommonValues,
}
