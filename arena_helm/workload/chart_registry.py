"""Every kind of every family (``ALL_KINDS``: each a ``catalog.Kind``) and every chart arena-helm ships, by name,
with the typed model of its values (``CHART_VALUES``: the one source of the chart's ``values.schema.json``,
``values.yaml`` and README table; ``arena-common``, the library chart, has only ``global``). It loads every
family's models, so it stands above them all; the generators in ``scripts/`` and the tests read it, the commands
never do."""

from __future__ import annotations

from ..core.catalog import ONE_CHART_KINDS, Kind
from ..core.jobkinds import KINDS
from ..core.servekinds import SERVE_KINDS
from .chart_values import ArenaCommonValues, ValuesModel

ALL_KINDS: tuple[Kind, ...] = (*KINDS, *SERVE_KINDS, *ONE_CHART_KINDS)
CHART_VALUES: dict[str, type[ValuesModel]] = {
    **{k.chart: k.values_class() for k in ALL_KINDS}, "arena-common": ArenaCommonValues,
}
