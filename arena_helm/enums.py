"""Choices shared by the specs and the command line (no pydantic here: the CLI imports it at start-up)."""

from __future__ import annotations

import enum


class JobKind(str, enum.Enum):
    tfjob = "tfjob"
    pytorchjob = "pytorchjob"
    mpijob = "mpijob"


class ImagePullPolicy(str, enum.Enum):
    Always = "Always"
    IfNotPresent = "IfNotPresent"
    Never = "Never"


class CleanPodPolicy(str, enum.Enum):
    None_ = "None"
    Running = "Running"
    All = "All"
