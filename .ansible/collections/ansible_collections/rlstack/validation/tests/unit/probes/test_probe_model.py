"""L2 probe_model: config skew detection and the not-installed / not-found paths (no torch needed)."""
import json

import pytest

from probe_helpers import has_module, load_probe, run_probe

model = load_probe("model")
ATTRS = ["use_proprio", "num_action_chunks"]


class Cfg(object):
    use_proprio = True


def test_missing_attrs_from_object_then_raw_json():
    assert model.missing_attrs(Cfg(), None, ATTRS) == ["num_action_chunks"]
    assert model.missing_attrs(None, {"num_action_chunks": 8}, ATTRS) == ["use_proprio"]
    assert model.missing_attrs(None, {"use_proprio": 1, "num_action_chunks": 8}, ATTRS) == []


def test_skew_hint_names_the_fix():
    hint = model.skew_hint(ATTRS)
    assert hint.startswith("config.json lacks use_proprio, num_action_chunks")
    assert "Model/Config Version Skew" in hint
    assert "getattr(config, 'use_proprio', <default>)" in hint


def test_version_tuple():
    assert model._version_tuple("5.17.0") == (5, 17, 0)
    assert model._version_tuple("4.56.0.dev0") == (4, 56, 0)
    assert model._version_tuple("4.40") == (4, 40, 0)


def test_model_path_missing():
    run = run_probe("model", {"model_path": "/nonexistent/model", "required_config_attrs": ATTRS})
    j = run.json
    assert run.rc == 0, run
    assert j["model_path_exists"] is False and j["error"] == "model_path /nonexistent/model does not exist"
    for step in ("config", "tokenizer", "model", "forward"):
        assert j[step] == {"ok": False, "error": "not attempted (model_path missing)"}
    assert j["missing_config_attrs"] == [] and j["config_attrs_checked"] is False
    assert j["ok"] is False


def test_optional_steps_are_null_when_not_requested(tmp_path):
    j = run_probe("model", {"model_path": str(tmp_path / "x"), "tokenizer": False, "forward": False}).json
    assert j["tokenizer"] is None and j["forward"] is None


@pytest.mark.parametrize("params,needle", [
    ({"model_path": "/x", "dtype": "int3"}, "dtype"),
    ({"model_path": "/x", "required_config_attrs": [1]}, "required_config_attrs"),
    ({"model_path": "/x", "trust_remote_code": "yes"}, "trust_remote_code"),
])
def test_bad_params(params, needle):
    run = run_probe("model", params)
    assert run.rc == 2 and needle in run.json["error"]


def _skewed_checkpoint(tmp_path):
    d = tmp_path / "old-ckpt"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 512, "hidden_size": 64}))
    return str(d)


@pytest.mark.skipif(has_module("transformers"), reason="transformers is installed here")
def test_without_transformers_raw_config_is_still_checked(tmp_path):
    j = run_probe("model", {"model_path": _skewed_checkpoint(tmp_path), "required_config_attrs": ATTRS}).json
    assert "transformers" in j["missing_packages"]
    assert j["error"].startswith("not installed in this image:")
    assert j["config"] == {"ok": False, "error": "not attempted (transformers not installed)"}
    assert j["config_attrs_checked"] is True
    assert j["missing_config_attrs"] == ATTRS
    assert j["config_skew_hint"] == model.skew_hint(ATTRS)
    assert j["model"]["ok"] is False and j["ok"] is False
    assert j["files"] == ["config.json"] and j["files_bytes"] > 0


@pytest.mark.skipif(not has_module("transformers"), reason="needs transformers")
def test_with_transformers_config_is_loaded(tmp_path):
    j = run_probe("model", {"model_path": _skewed_checkpoint(tmp_path), "required_config_attrs": ATTRS,
                            "tokenizer": False}).json
    assert j["config"]["ok"] is True and j["config"]["model_type"] == "llama"
    assert j["missing_config_attrs"] == ATTRS
