"""Every regular expression a chart template validates with (``regexMatch``) is one of arena_helm/core/grammars.py's
grammars: the templates check nothing with a grammar of their own (the values schema, generated from the
same grammars, checks the values; the templates check only what is derived, such as the job name)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from arena_helm.core import grammars as k8s

CHARTS = Path(__file__).resolve().parents[2] / "charts"
CALL = re.compile(r"\bregexMatch\s+(\S+)")
GO_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _template_patterns() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CHARTS.glob("*/templates/*")):
        text = path.read_text(encoding="utf-8")
        for match in CALL.finditer(text):
            literal = GO_STRING.match(text, match.start(1))
            assert literal, f"{path.relative_to(CHARTS)}: regexMatch with a non-literal pattern: {match.group(0)}"
            out.append((str(path.relative_to(CHARTS)), json.loads(literal.group(0))))  # a Go string is JSON here
    return out


def test_template_regexes_are_k8s_grammars():
    grammars = {value for name, value in vars(k8s).items() if name.endswith("_RX") and isinstance(value, str)}
    patterns = _template_patterns()
    assert len(patterns) >= 3, patterns  # the job name, the TensorBoard name, the logDir URL, ...
    strays = [(where, rx) for where, rx in patterns if rx not in grammars]
    assert not strays, f"template regexes that are not arena_helm/core/grammars.py grammars: {strays}"


def test_no_label_grammar_left_in_the_templates():
    """The label key and value grammars are the schema's (propertyNames / additionalProperties)."""
    for where, rx in _template_patterns():
        assert rx not in (k8s.LABEL_KEY_RX, k8s.LABEL_VALUE_RX), where
