"""arena_helm.adapters.identity: a token's user, asked once an hour (the TokenReview's answer cached under a hash)."""

from __future__ import annotations

import json
import stat

import pytest

from arena_helm.adapters.identity import TOKEN_USER_TTL, TOKEN_USERS, cached_token_user


class Asker:
    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def __call__(self, token):
        self.asked.append(token)
        return self.answer


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_HELM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / TOKEN_USERS


def test_a_tokens_user_is_asked_once_then_read_from_the_cache_for_an_hour(cache):
    ask = Asker("system:serviceaccount:team-a:ci")
    assert cached_token_user("https://k8s:6443", "s3cret-token", ask, now=1000.0) == "system:serviceaccount:team-a:ci"
    assert cached_token_user("https://k8s:6443", "s3cret-token", ask, now=1000.0 + TOKEN_USER_TTL - 1) == (
        "system:serviceaccount:team-a:ci")
    assert ask.asked == ["s3cret-token"]
    text = cache.read_text()
    assert "s3cret-token" not in text and list(json.loads(text).values()) == [
        {"user": "system:serviceaccount:team-a:ci", "at": 1000.0}]
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    # an hour on, asked again; another server or token is another entry
    ask.answer = "alice"
    assert cached_token_user("https://k8s:6443", "s3cret-token", ask, now=1000.0 + TOKEN_USER_TTL) == "alice"
    assert cached_token_user("https://other:6443", "s3cret-token", ask, now=5000.0) == "alice"
    assert cached_token_user("https://k8s:6443", "another", ask, now=5000.0) == "alice"
    assert len(ask.asked) == 4 and len(json.loads(cache.read_text())) == 3


def test_no_answer_is_not_kept_and_a_broken_cache_is_no_cache(cache, tmp_path, monkeypatch):
    ask = Asker(None)  # refused or unreachable: asked again next time
    assert cached_token_user("https://k8s", "t", ask, now=1.0) is None
    assert cached_token_user("https://k8s", "t", ask, now=2.0) is None
    assert len(ask.asked) == 2 and not cache.exists()
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    ask.answer = "bob"
    assert cached_token_user("https://k8s", "t", ask, now=3.0) == "bob"
    assert json.loads(cache.read_text())  # rewritten whole
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("ARENA_HELM_CACHE", str(blocked / "cache"))  # a folder that cannot be made
    assert cached_token_user("https://k8s", "t", ask, now=4.0) == "bob"
