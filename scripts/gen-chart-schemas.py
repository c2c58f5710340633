#!/usr/bin/env python3
"""Write every chart's ``values.schema.json`` (JSON Schema draft-07) from the values models of
``arena_helm/workload/chart_values.py`` (``model_json_schema(by_alias=True)``, made readable).

    scripts/gen-chart-schemas.py           # rewrite charts/*/values.schema.json
    scripts/gen-chart-schemas.py --check   # exit 1 if a committed schema differs from what this writes

What the post-processing does to pydantic's schema:
- the Kubernetes grammars of ``arena_helm/core/grammars.py`` (recognised by their ``pattern``) become shared
  definitions under ``$defs`` (named as in ``k8s.GRAMMARS``); so do the sub-objects used more than once
  (resources, a replica block, tolerations...); an object used once is inlined where it is used;
- helm 3 validates with gojsonschema (draft-07: keywords beside a ``$ref`` are ignored), so a ``$ref`` never
  has siblings: a property that refers to a definition and adds a description (or a constraint) is written
  ``{"description": ..., "allOf": [{"$ref": ...}]}``;
- ``anyOf [X, {type: null}]`` of a plain type becomes ``type: [X, "null"]``; pydantic's titles and defaults
  are dropped (values.yaml holds the defaults); maps keyed by a grammar get ``propertyNames``;
- every object with properties has ``additionalProperties: false``, every property a description (checked
  here: a model field without a description fails the generation).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from arena_helm.core.grammars import GRAMMARS  # noqa: E402
from arena_helm.workload import chart_registry, chart_values  # noqa: E402
from arena_helm.workload.generated import parse_args, write_or_check  # noqa: E402

CHARTS = REPO / "charts"
DRAFT = "http://json-schema.org/draft-07/schema#"
PREFIX = "#/$defs/"
ORDER = ["$ref", "type", "description", "allOf", "anyOf", "const", "enum", "pattern", "minLength", "maxLength",
         "minimum", "maximum", "uniqueItems", "propertyNames", "additionalProperties", "items", "required",
         "properties"]
_BY_PATTERN: dict[str, str] = {}
for _name, _g in GRAMMARS.items():  # two grammars may share a pattern (queueName: a shorter subdomain)
    _BY_PATTERN.setdefault(_g["pattern"], _name)


def _def_name(class_name: str) -> str:
    # TFReplica -> tfReplica, SELinuxOptions -> seLinuxOptions, ResourceList -> resourceList
    upper = len(class_name) - len(class_name.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    cut = upper - 1 if 1 < upper < len(class_name) else upper if upper == len(class_name) else 1
    return class_name[:cut].lower() + class_name[cut:]


def _ordered(node: dict) -> dict:
    keys = sorted(node, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k))
    return {k: node[k] for k in keys}


def _ref(target: str, siblings: dict) -> dict:
    if not siblings:
        return {"$ref": target}
    return _ordered({**siblings, "allOf": [{"$ref": target}]})


class Builder:
    def __init__(self) -> None:
        self.grammars: set[str] = set()

    def clean(self, node, *, is_property: bool = False):
        """pydantic's schema node -> the readable form (recursively)."""
        if isinstance(node, list):
            return [self.clean(n) for n in node]
        if not isinstance(node, dict):
            return node
        title = node.get("title")
        node = {k: v for k, v in node.items() if k not in ("title", "default")}
        if node.get("additionalProperties") is True:
            del node["additionalProperties"]
        # a map keyed by a grammar: pydantic writes patternProperties; say it with propertyNames
        pattern_props = node.pop("patternProperties", None)
        if pattern_props:
            (pattern, value), = pattern_props.items()
            node.pop("propertyNames", None)
            node["propertyNames"] = {"$ref": PREFIX + self._grammar(pattern)}
            node["additionalProperties"] = value
        # a grammar, inlined by its WithJsonSchema: a reference, plus what differs
        grammar = title if title in GRAMMARS and GRAMMARS[title].get("pattern") == node.get("pattern") else \
            _BY_PATTERN.get(node.get("pattern"))
        if grammar and node.get("type") == GRAMMARS[grammar]["type"]:
            self.grammars.add(grammar)
            base = GRAMMARS[grammar]
            siblings = {k: v for k, v in node.items() if k not in base or base[k] != v}
            if not is_property:
                siblings.pop("description", None)
            return _ref(PREFIX + grammar, {k: self.clean(v) for k, v in siblings.items()})
        # nullable plain type
        any_of = node.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
            other = next(n for n in any_of if n != {"type": "null"})
            if isinstance(other.get("type"), str) and "$ref" not in other:
                del node["anyOf"]
                node = {**other, **node, "type": [other["type"], "null"]}
        out = {}
        for key, value in node.items():
            if key == "properties":
                out[key] = {name: self.clean(sub, is_property=True) for name, sub in value.items()}
            elif key == "$ref":
                out[key] = PREFIX + _def_name(value.removeprefix(PREFIX))
            else:
                out[key] = self.clean(value)
        if "$ref" in out and len(out) > 1:
            target = out.pop("$ref")
            return _ref(target, out)
        return _ordered(out)

    def _grammar(self, pattern: str) -> str:
        name = _BY_PATTERN[pattern]
        self.grammars.add(name)
        return name


def _walk_refs(node, counts: dict[str, int]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            name = node["$ref"].removeprefix(PREFIX)
            counts[name] = counts.get(name, 0) + 1
        for value in node.values():
            _walk_refs(value, counts)
    elif isinstance(node, list):
        for value in node:
            _walk_refs(value, counts)


def _inline(node, name: str, definition: dict):
    """Replace the (single) reference to ``name`` by the definition, merged with its siblings."""
    if isinstance(node, list):
        return [_inline(n, name, definition) for n in node]
    if not isinstance(node, dict):
        return node
    target = PREFIX + name
    if node.get("$ref") == target:
        return definition
    if node.get("allOf") and len(node["allOf"]) == 1 and node["allOf"][0].get("$ref") == target:
        siblings = {k: v for k, v in node.items() if k != "allOf"}
        return _ordered({**definition, **siblings})
    return {k: _inline(v, name, definition) for k, v in node.items()}


def _check_descriptions(node, path: str, chart: str) -> None:
    if not isinstance(node, dict):
        return
    for name, prop in node.get("properties", {}).items():
        if not prop.get("description"):
            raise SystemExit(f"{chart}: {path}.{name} has no description: describe the field in chart_values.py")
        _check_descriptions(prop, f"{path}.{name}", chart)
    if "properties" in node and node.get("additionalProperties") is not False:
        raise SystemExit(f"{chart}: {path or '.'} accepts unknown keys")
    for key in ("items", "additionalProperties"):
        _check_descriptions(node.get(key), f"{path}[]", chart)
    for sub in node.get("allOf", []) + node.get("anyOf", []):
        _check_descriptions(sub, path, chart)


def chart_schema(chart: str, keep: frozenset[str] = frozenset()) -> dict:
    """The schema of ``chart``; the model definitions named in ``keep`` stay definitions even if used once."""
    model = chart_registry.CHART_VALUES[chart]
    raw = model.model_json_schema(by_alias=True, ref_template=PREFIX + "{model}")
    builder = Builder()
    raw_defs = raw.pop("$defs", {})
    root = builder.clean(raw)
    defs = {_def_name(name): builder.clean(d) for name, d in raw_defs.items()}
    # the subchart's block last (as in values.yaml)
    props = root["properties"]
    root["properties"] = {k: v for k, v in props.items() if k not in chart_values.SUBCHART_KEYS}
    root["properties"].update({k: v for k, v in props.items() if k in chart_values.SUBCHART_KEYS})
    # inline the model definitions used once (innermost first, until every one left is shared)
    while True:
        counts: dict[str, int] = {}
        _walk_refs([root, defs], counts)
        single = [n for n in defs if counts.get(n, 0) <= 1 and n not in GRAMMARS and not (counts.get(n) and n in keep)]
        if not single:
            break
        name = single[0]
        definition = defs.pop(name)
        root = _inline(root, name, definition)
        defs = {k: _inline(v, name, definition) for k, v in defs.items()}
    for name in sorted(builder.grammars):
        counts = {}
        _walk_refs([root, defs], counts)
        if counts.get(name):
            defs[name] = {k: v for k, v in GRAMMARS[name].items()}
    root = _ordered(root)
    out = {"$schema": DRAFT, "title": f"{chart} values", **root}
    if defs:
        out["$defs"] = {name: _ordered(defs[name]) for name in sorted(defs)}
    _check_descriptions(out, "", chart)
    for name, definition in out.get("$defs", {}).items():
        _check_descriptions(definition, f"$defs.{name}", chart)
    return out


def schemas() -> dict[str, dict]:
    # A definition shared in one chart is one in every chart: the tensorboard block of a job chart is then
    # exactly the tensorboard chart's schema.
    shared = frozenset(name for chart in chart_registry.CHART_VALUES
                       for name in chart_schema(chart).get("$defs", {}))
    return {chart: chart_schema(chart, shared) for chart in chart_registry.CHART_VALUES}


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__.splitlines()[0], "schemas", argv, CHARTS)
    outputs = ((args.charts_dir / chart / "values.schema.json", render(schema)) for chart, schema in schemas().items())
    return write_or_check(outputs, check=args.check, rerun="scripts/gen-chart-schemas.py",
                          shown=lambda p: str(p.relative_to(args.charts_dir.parent)))


if __name__ == "__main__":
    sys.exit(main())
