"""arena_helm.core.grammars: the quantity parser follows apimachinery's grammar and agrees with the kubernetes client's
parser on every quantity the API server writes (the client is imported here only to compare); the one time
parser reads the API server's and helm's RFC 3339 times."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.utils.quantity import parse_quantity as client_parse

from arena_helm.core import grammars as k8s
from arena_helm.core.grammars import epoch, parse_quantity, parse_time, quantity_float


@pytest.mark.parametrize(("text", "want"), [
    ("250m", Decimal("0.25")), ("1", Decimal(1)), ("123456789n", Decimal("0.123456789")),
    ("1500u", Decimal("0.0015")), ("512Mi", Decimal(512 * 2**20)), ("16Gi", Decimal(16 * 2**30)),
    ("1e3", Decimal(1000)), ("1E-3", Decimal("0.001")), (".5", Decimal("0.5")), ("5.", Decimal(5)),
    ("2k", Decimal(2000)), ("3M", Decimal(3_000_000)), ("1Ei", Decimal(2**60)), ("-1", Decimal(-1)),
    ("+2m", Decimal("0.002")), (4, Decimal(4)), (0.25, Decimal("0.25")),
    (".0E3000000", Decimal(0)), ("1e400", Decimal("1e400")),  # exponents past Decimal's default context
])
def test_quantities(text, want):
    assert parse_quantity(text) == want


@pytest.mark.parametrize("bad", ["", " ", "abc", "1Ki2", "K", "1K", "1ki", "1mi", "Infinity", "NaN", "1_000",
                                 "1 Gi", "1e", "--1", True, None, float("inf"), float("nan"), [], {}])
def test_not_quantities(bad):
    assert parse_quantity(bad) is None


number = st.from_regex(r"\A[+-]?([0-9]{1,6}(\.[0-9]{0,4})?|\.[0-9]{1,4})\Z")
suffix = st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
                          "e3", "E-2", "e+1"])


@given(number, suffix)
def test_agrees_with_the_kubernetes_client(n, s):
    # the client reads "e3" as a decimal number with an exponent, "E" as the exa suffix, like apimachinery
    assert parse_quantity(n + s) == client_parse(n + s)


def test_quantity_float_counts_what_is_not_a_quantity_as_zero():
    # metrics samples (metrics.k8s.io writes nano-cores and micro-cores) and node allocatable
    assert [quantity_float(v) for v in ("250m", "2", "1500000n", "1500u", "1Gi", "", None, "bad")] == [
        0.25, 2.0, 0.0015, 0.0015, float(2**30), 0.0, 0.0, 0.0]


@pytest.mark.parametrize(("text", "want"), [
    ("2026-01-02T15:04:05Z", dt.datetime(2026, 1, 2, 15, 4, 5, tzinfo=dt.UTC)),
    ("2026-01-02T15:04:05.123456Z", dt.datetime(2026, 1, 2, 15, 4, 5, 123456, tzinfo=dt.UTC)),
    # helm's last_deployed has nanoseconds and the machine's offset
    ("2026-01-02T16:04:05.123456789+01:00", dt.datetime(2026, 1, 2, 15, 4, 5, 123456, tzinfo=dt.UTC)),
])
def test_times(text, want):
    assert parse_time(text) == want
    assert epoch(text) == want.timestamp()


@pytest.mark.parametrize("bad", ["yesterday", "2026-01-02 15:04", "2026-13-02T15:04:05Z", "2026-01-02T15:04:05"])
def test_not_times(bad):
    with pytest.raises(ValueError):
        parse_time(bad)
    assert epoch(bad) == 0.0
    assert epoch(bad, default=7.0) == 7.0


def test_no_time():
    assert parse_time("") is None and parse_time(None) is None
    assert epoch("") == 0.0


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("10m", 600), ("1.5h", 5400), ("2h30m", 9000), ("0", 0), ("+5s", 5), (".5h", 1800),
    ("1h1m1.9s", 3661), ("1500ms", 1), ("1000000us", 1), ("90", None), ("1.5", None), ("-5m", None),
    ("5x", None), ("", None), ("1h 2m", None), ("h", None), ("1..5h", None),
])
def test_durations_are_gos_truncated_to_seconds_as_arena(text, seconds):
    if seconds is None:
        with pytest.raises(ValueError, match="is not a duration"):
            k8s.parse_duration(text)
    else:
        assert k8s.parse_duration(text) == seconds
    assert k8s.parse_duration(120) == 120  # from Python or a defaults file, an int is seconds


@pytest.mark.parametrize("text", ["300ms", "999999us", "0.5s", "1ns"])
def test_a_duration_under_one_second_is_refused_not_made_zero(text):
    # Arena truncates it to 0 s, which a flag reads as "none" or "never" (docs/compatibility.md)
    with pytest.raises(ValueError) as err:
        k8s.parse_duration(text)
    assert str(err.value) == f"{text!r} is under one second: give 1s or more (or 0)"


@pytest.mark.parametrize("image", [
    "busybox", "busybox:1.36", "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime", "localhost:5000/team/train:1",
    "reg.example.com/ml/train:v1.2_rc-3", "MyRegistry/team/train:1", "a__b-c.d/x", "[::1]:5000/x:y",
    "train@sha256:" + "0" * 64, "train:1@sha256:" + "a" * 64,
])
def test_image_references_follow_the_distribution_grammar(image):
    assert k8s.check_image(image) == image
    assert k8s.matches(k8s.IMAGE_RX, image)


@pytest.mark.parametrize("image", [
    "Busybox:1.36", "busybox:", "two words", "busybox:-x", "a//b", ":1", "team/Train", "x@sha256:abc", "foo/", "-a",
    "busybox:" + "a" * 129, "a" * 256,
])
def test_image_references_outside_the_grammar_are_refused(image):
    with pytest.raises(ValueError, match="image"):
        k8s.check_image(image, "image")
