"""cli/rerun: the submit command line a rerun is equivalent to (what export prints for it)."""

from __future__ import annotations

import pytest

from arena_helm.cli.rerun import _given_fields, _submit_line

BASE = ["arena-helm", "-n", "team", "submit", "tf", "--name", "orig", "--image", "tf:2", "--workers", "2",
        "--gpus=1", "-e", "A=1", "-e", "B=2", "--set-string", "annotations.team=vision", "--tensorboard", "--",
        "python", "train.py", "--lr", "0.1"]


def line(args: list[str], base: list[str] = BASE, name: str = "orig-2") -> list[str]:
    _, given = _given_fields("tfjob", args)
    return _submit_line("tfjob", base, args, name, given)


def test_the_rerun_flags_replace_the_originals_and_the_rest_is_kept():
    assert line(["--gpus", "2"]) == [
        "arena-helm", "-n", "team", "submit", "tf", "--image", "tf:2", "--workers", "2", "-e", "A=1", "-e", "B=2",
        "--set-string", "annotations.team=vision", "--tensorboard", "--name", "orig-2", "--gpus", "2", "--",
        "python", "train.py", "--lr", "0.1"]
    # a repeatable flag given replaces every recorded occurrence (as rerun replaces the list); a switch too
    assert line(["-e", "C=3", "--tensorboard"]) == [
        "arena-helm", "-n", "team", "submit", "tf", "--image", "tf:2", "--workers", "2", "--gpus=1",
        "--set-string", "annotations.team=vision", "--name", "orig-2", "-e", "C=3", "--tensorboard", "--",
        "python", "train.py", "--lr", "0.1"]


def test_a_new_training_command_replaces_the_old_one():
    assert line(["--", "python", "train.py", "--lr", "0.2"])[-7:] == [
        "--name", "orig-2", "--", "python", "train.py", "--lr", "0.2"]
    # the original's command without --: the first word that is no option starts it
    base = ["arena-helm", "submit", "tf", "--name", "orig", "--image", "tf:2", "python", "train.py"]
    assert line([], base) == ["arena-helm", "submit", "tf", "--image", "tf:2", "--name", "orig-2", "--",
                              "python", "train.py"]


def test_a_rerun_of_a_rerun_starts_from_the_equivalent_submit_line():
    first = line(["--gpus", "2"])
    assert line(["--workers", "4"], first, "orig-3") == [
        "arena-helm", "-n", "team", "submit", "tf", "--image", "tf:2", "-e", "A=1", "-e", "B=2", "--set-string",
        "annotations.team=vision", "--tensorboard", "--gpus", "2", "--name", "orig-3", "--workers", "4", "--",
        "python", "train.py", "--lr", "0.1"]


@pytest.mark.parametrize("base", [[], ["arena-helm", "rerun", "orig"], ["python", "api.py"]])
def test_no_submit_line_without_a_recorded_submit(base):
    assert line(["--gpus", "2"], base) == []
