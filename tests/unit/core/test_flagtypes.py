"""The flags' text forms (arena_helm.core.flagtypes): what each parses into, and the one line a wrong one gets."""

from __future__ import annotations

import pytest

from arena_helm.core.flagtypes import EnvSource, SecretEnv, SecretVolume, kv_items, split_kv


@pytest.mark.parametrize(("text", "fields"), [
    ("HF_TOKEN=hf-token", {"name": "HF_TOKEN", "secret": "hf-token", "key": "HF_TOKEN"}),  # Arena's form
    ("AWS_ACCESS_KEY_ID=s3.creds:access-key",
     {"name": "AWS_ACCESS_KEY_ID", "secret": "s3.creds", "key": "access-key"}),
    ("A=s:key.with.dots", {"name": "A", "secret": "s", "key": "key.with.dots"}),
])
def test_env_from_secret_names_a_variable_a_secret_and_a_key_that_defaults_to_the_name(text, fields):
    assert SecretEnv.fields_of(text) == fields
    assert SecretEnv(**fields).to_values() == {
        "name": fields["name"], "valueFrom": {"secretKeyRef": {"name": fields["secret"], "key": fields["key"]}}}


@pytest.mark.parametrize("text", ["HF_TOKEN", "HF_TOKEN=", "=hf", "A=s:", "A=:k"])
def test_env_from_secret_that_is_not_name_secret_key_says_the_form(text):
    with pytest.raises(ValueError, match=r"is not NAME=SECRET\[:KEY\] \(e\.g\. HF_TOKEN=hf-token"):
        SecretEnv.fields_of(text)


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "A", "secret": "Bad", "key": "A"}, "must be a lowercase DNS subdomain"),
    ({"name": "1A", "secret": "s", "key": "A"}, "must match"),
    ({"name": "A", "secret": "s", "key": "a/b"}, "must be a Secret or ConfigMap key"),
    ({"name": "A", "secret": "s", "key": ".."}, "must not be '.', '..' or start with '..'"),
    ({"name": "A", "secret": "s", "key": "..x"}, "must not be '.', '..' or start with '..'"),
])
def test_env_from_secret_checks_each_name_by_its_kubernetes_grammar(fields, message):
    with pytest.raises(ValueError, match=message):
        SecretEnv(**fields)


@pytest.mark.parametrize(("text", "values"), [
    ("s3-env", {"secretRef": {"name": "s3-env"}}),
    ("secret:s3-env", {"secretRef": {"name": "s3-env"}}),
    ("configmap:train.cfg", {"configMapRef": {"name": "train.cfg"}}),
])
def test_env_from_is_a_secret_unless_it_says_configmap(text, values):
    assert EnvSource(**EnvSource.fields_of(text)).to_values() == values


@pytest.mark.parametrize("text", ["vault:x", "secret:", "configmap:", ""])
def test_env_from_of_another_source_is_refused(text):
    with pytest.raises(ValueError, match="is not SECRET, secret:SECRET or configmap:CONFIGMAP"):
        EnvSource.fields_of(text)


def test_a_secret_volume_is_a_secret_and_a_path():
    fields = SecretVolume.fields_of("gcs-key:/var/secrets/gcs/")
    assert fields == {"secret": "gcs-key", "mount_path": "/var/secrets/gcs/"}
    assert SecretVolume(**fields).to_values() == {"secretName": "gcs-key", "mountPath": "/var/secrets/gcs"}
    for bad in ("gcs-key", "gcs-key:", ":/x"):
        with pytest.raises(ValueError, match=r"is not SECRET:PATH \(e\.g\. gcs-key:/var/secrets/gcs\)"):
            SecretVolume.fields_of(bad)
    with pytest.raises(ValueError, match="must be absolute"):
        SecretVolume(secret="s", mount_path="relative")


def test_key_value_parsing_keeps_everything_after_the_first_equals_sign():
    assert split_kv("A=b=c", "a label", "KEY=VALUE") == ("A", "b=c")
    assert kv_items(["a=1", "a=1", "b="]) == {"a": "1", "b": ""}
    with pytest.raises(ValueError, match="a is given twice"):
        kv_items(["a=1", "a=2"])
