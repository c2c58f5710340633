"""arena_helm.adapters.kube: a LIST answer decoded an item at a time gives what json.loads gives; an exec handshake's
error keeps the API server's message."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_helm.adapters.kube import exec_handshake_error as _handshake_error
from arena_helm.adapters.kube import parse_list_page
from arena_helm.core.errors import ForbiddenError, NotFoundError

text = st.text(max_size=6)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
                      max_leaves=8)
items = st.lists(st.dictionaries(text, values, max_size=4), max_size=5)
others = st.dictionaries(text.filter(lambda k: k != "items"), values, max_size=3)


@settings(max_examples=80, deadline=None)
@given(items=items, others=others, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans(),
       first=st.booleans())
def test_same_items_and_fields_as_json_loads(items, others, indent, ascii_only, first):
    doc = {"items": items, **others} if first else {**others, "items": items}
    data = json.dumps(doc, indent=indent, ensure_ascii=ascii_only).encode()
    into: list = []
    rest = parse_list_page(data, None, into)
    assert into == json.loads(data)["items"]
    assert rest == others


def test_each_item_is_cut_down_as_it_is_decoded_and_none_is_dropped():
    data = b'{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"abc","resourceVersion":"7"},"items":' \
           b'[{"metadata":{"name":"a"},"spec":{"big":"x"}},{"metadata":{"name":"b"}},{"metadata":{"name":"c"}}]}'
    seen: list[str] = []

    def slim(item):
        seen.append(item["metadata"]["name"])
        return None if item["metadata"]["name"] == "b" else item["metadata"]["name"]

    into = ["before"]
    rest = parse_list_page(data, slim, into)
    assert into == ["before", "a", "c"] and seen == ["a", "b", "c"]
    assert rest == {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "abc", "resourceVersion": "7"}}


def test_a_list_of_no_items_and_a_null_items():
    assert parse_list_page(b' { "items" : [ ] , "metadata" : { } } ', None, into := []) == {"metadata": {}}
    assert into == []
    assert parse_list_page(b'{"items":null}', None, into) == {"items": None} and into == []


@pytest.mark.parametrize("data", [b"", b"[]", b"{", b'{"items":[{}', b'{"items":[{} {}]}', b'{"a" 1}', b'{"a":1 "b":2}',
                                  b'{1:2}', b'{"items":[]}x', b'{"a":}', b"<html>Bad Gateway</html>"])
def test_what_is_not_a_list_object_is_a_value_error(data):
    with pytest.raises(ValueError):
        parse_list_page(data, None, [])


def test_handshake_errors_keep_the_api_servers_message():
    class Exc(Exception):
        def __init__(self, reason):
            self.reason = reason

    body = '{"kind":"Status","message":"pods \\"x\\" is forbidden: no","code":403}'
    err = _handshake_error(Exc(f"Handshake status 403 Forbidden -+-+- {{'a': 'b'}} -+-+- {body}"), "x")
    assert isinstance(err, ForbiddenError) and str(err) == 'exec in pod x: forbidden: pods "x" is forbidden: no'
    err = _handshake_error(Exc("Handshake status 404 Not Found -+-+- {} -+-+- not json"), "x")
    assert isinstance(err, NotFoundError) and str(err) == "exec in pod x: Handshake status 404 Not Found -+-+- {} -+-+- not json"
