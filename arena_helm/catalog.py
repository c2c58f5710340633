"""The catalog: the facts on the ground floor that every layer may read without importing anything above it.

A *family* is a group of charts built the same way and shown together: the training jobs, the servings, the
workspaces, the standalone TensorBoards and the traffic splits. Every row a view shows carries its family (a
``JobView``'s ``family``), set by the code that makes the row; nothing tells families apart by a chart's or a
kind's name. Pure: imports nothing of the package.
"""

from __future__ import annotations

from enum import Enum

# The Role and ClusterRole a data scientist needs (doctor checks them; an error of a missing permission names it)
ROLE_DOC = "docs/rbac/arena-helm-user.yaml"


class Family(str, Enum):
    """The family of a chart and of the rows made from its release."""

    TRAINING = "training"
    SERVING = "serving"
    WORKSPACE = "workspace"
    TENSORBOARD = "tensorboard"
    TRAFFIC = "traffic-split"

    @property
    def title(self) -> str:
        """The name of the family's group in the GPU views (``top job``'s total lines, Arena's wording for the
        training jobs)."""
        return _TITLES[self]


_TITLES = {Family.TRAINING: "Training Jobs", Family.SERVING: "Servings", Family.WORKSPACE: "Workspaces",
           Family.TENSORBOARD: "TensorBoards", Family.TRAFFIC: "Traffic Splits"}


# The chart of each family that has one chart (the training and serving families have a chart a kind, named by
# their kinds' descriptors: arena_helm.kinds, arena_helm.serve_kinds).
FAMILY_CHART = {Family.WORKSPACE: "workspace", Family.TENSORBOARD: "tensorboard", Family.TRAFFIC: "traffic-split"}


def release_chart(release: dict) -> str:
    """The name of the chart a helm release was made from: its ``chart`` field is NAME-VERSION (``tfjob-0.1.0``)."""
    return str(release.get("chart", "")).rpartition("-")[0]
