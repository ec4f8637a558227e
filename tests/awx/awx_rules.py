# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""AWX's rules for survey specs and custom credential types, written down so unit tests can check the
data of awx/ without an AWX server.

The rules follow what AWX 24.x (ansible/awx at e21dd0a, October 2024; awx.awx 24.6.1) enforces, read
from its sources: the survey spec endpoint (awx/api/views/__init__.py, JobTemplateSurveySpec),
survey answers and defaults at launch (awx/main/models/mixins.py, SurveyJobTemplateMixin), credential
type inputs and injectors (awx/main/fields.py, CredentialTypeInputField / CredentialTypeInjectorField,
constants.ENV_BLOCKLIST) and how injectors are rendered (awx/main/models/credential.py,
CredentialType.inject_credential). This is an independent restatement of those rules, not AWX code;
where this project is stricter than AWX, the function says so.
"""
from __future__ import annotations

import keyword
import os
import re
import tempfile

from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

SURVEY_TYPES = {
    "text": str, "textarea": str, "password": str, "multiplechoice": str, "multiselect": str,
    "integer": int, "float": (int, float),
}
ENV_BLOCKLIST = frozenset((
    "VIRTUAL_ENV", "PATH", "PYTHONPATH", "JOB_ID", "INVENTORY_ID", "INVENTORY_SOURCE_ID", "INVENTORY_UPDATE_ID",
    "AD_HOC_COMMAND_ID", "REST_API_URL", "REST_API_TOKEN", "MAX_EVENT_RES", "CALLBACK_QUEUE",
    "CALLBACK_CONNECTION", "CACHE", "JOB_CALLBACK_DEBUG", "INVENTORY_HOSTVARS", "AWX_HOST", "PROJECT_REVISION",
    "SUPERVISOR_CONFIG_PATH",
))
_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_FILE_KEY = re.compile(r"^template(\.[a-zA-Z_][a-zA-Z0-9_]*)?$")
_INPUT_FIELD_KEYS = {"id", "label", "type", "format", "choices", "help_text", "multiline", "secret",
                     "ask_at_runtime", "default"}


def _lines(value: str) -> list:
    return [line for line in value.splitlines() if line.strip() != ""]


def _choices(item: dict) -> list:
    choices = item.get("choices", [])
    return _lines(choices) if isinstance(choices, str) else list(choices)


# --------------------------------------------------------------------------------------- survey specs

def survey_spec_errors(spec) -> list:
    """What POST /api/v2/job_templates/<id>/survey_spec/ rejects (AWX), plus this project's stricter rules
    (marked "project:"): valid Ansible variable names, non-empty unique string choices, min <= max,
    defaults inside min/max, no password defaults (AWX would report the template changed on every run)."""
    errors = []
    if not isinstance(spec, dict):
        return ["the survey spec is not a mapping"]
    for field, kind in (("name", str), ("description", str), ("spec", list)):
        if field not in spec:
            errors.append(f"field '{field}' is missing from the survey spec")
        elif not isinstance(spec[field], kind):
            errors.append(f"field '{field}' must be a {kind.__name__}")
    if errors:
        return errors
    if not spec["spec"]:
        return ["'spec' has no question"]
    seen = set()
    for idx, item in enumerate(spec["spec"]):
        where = f"question {idx}"
        if not isinstance(item, dict):
            errors.append(f"{where} is not a mapping")
            continue
        where = f"question {idx} ({item.get('variable', '?')})"
        missing = False
        for field in ("type", "question_name", "variable", "required"):
            if field not in item:
                errors.append(f"{where}: '{field}' is missing")
                missing = True
            elif not isinstance(item[field], bool if field == "required" else str):
                errors.append(f"{where}: '{field}' must be a {'boolean' if field == 'required' else 'string'}")
                missing = True
        if missing:
            continue
        variable, qtype = item["variable"], item["type"]
        if variable in seen:
            errors.append(f"{where}: variable '{variable}' is used twice")
        seen.add(variable)
        if qtype not in SURVEY_TYPES:
            errors.append(f"{where}: type '{qtype}' is not one of {', '.join(SURVEY_TYPES)}")
            continue
        default = item.get("default")
        if "default" in item and default != "" and not isinstance(default, SURVEY_TYPES[qtype]):
            errors.append(f"{where}: default {default!r} is not a {qtype} value")
        if qtype in ("integer", "float") and isinstance(default, bool):
            errors.append(f"{where}: default {default!r} is a boolean, not a number")
        for key in ("min", "max"):
            if key in item and item[key] is not None and not isinstance(item[key], int):
                errors.append(f"{where}: '{key}' must be an integer")
        if qtype in ("multiplechoice", "multiselect"):
            if "choices" not in item:
                errors.append(f"{where}: a {qtype} question needs choices")
            elif not isinstance(item["choices"], (list, str)):
                errors.append(f"{where}: choices must be a list or a newline-separated string")
            else:
                choices = _choices(item)
                if "default" in item and isinstance(default, str):
                    defaults = _lines(default)
                    if qtype == "multiplechoice" and len(defaults) > 1:
                        errors.append(f"{where}: a multiplechoice question takes one default")
                    if any(value not in choices for value in defaults):
                        errors.append(f"{where}: default {default!r} is not among the choices {choices}")
                # project rules
                if not choices:
                    errors.append(f"project: {where}: no choices")
                if any(not isinstance(c, str) or not c.strip() for c in choices):
                    errors.append(f"project: {where}: every choice must be a non-empty string (quote 'true'/'false')")
                if len(set(map(str, choices))) != len(choices):
                    errors.append(f"project: {where}: choices repeat")
        if isinstance(default, str) and default.startswith("$encrypted$"):
            errors.append(f"{where}: '$encrypted$' is reserved for password defaults")
        # project rules
        if not _NAME.match(variable) or keyword.iskeyword(variable) or variable.startswith("ansible_"):
            errors.append(f"project: {where}: '{variable}' is not a usable Ansible variable name")
        if not item["question_name"].strip():
            errors.append(f"project: {where}: empty question_name")
        if qtype == "password" and item.get("default"):
            errors.append(f"project: {where}: a password default is stored encrypted and breaks idempotence")
        low, high = item.get("min"), item.get("max")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            errors.append(f"project: {where}: min {low} > max {high}")
        if "default" in item and default != "":
            measure = len(default) if qtype in ("text", "textarea", "password") and isinstance(default, str) else (
                default if qtype in ("integer", "float") else None)
            if measure is not None and ((isinstance(low, int) and measure < low) or (isinstance(high, int) and measure > high)):
                errors.append(f"project: {where}: default {default!r} is outside min/max")
    return errors


def stored_survey_spec(spec: dict) -> dict:
    """The spec as AWX stores (and later returns) it: multiplechoice/multiselect choices and defaults given
    as strings lose their empty lines. awx.awx.job_template compares this with the spec it is given, so a
    spec that changes here would report changed=true on every run."""
    import copy
    stored = copy.deepcopy(spec)
    for item in stored.get("spec", []):
        if item.get("type") in ("multiplechoice", "multiselect"):
            if isinstance(item.get("choices"), str):
                item["choices"] = "\n".join(_lines(item["choices"]))
            if isinstance(item.get("default"), str):
                item["default"] = "\n".join(_lines(item["default"]))
    return stored


def survey_answer_errors(item: dict, answers: dict) -> list:
    """What AWX says about one question's answer at launch (answers = the extra vars sent)."""
    var = item["variable"]
    if var not in answers:
        return [f"'{var}' value missing"] if item["required"] else []
    value, qtype = answers[var], item["type"]
    low = item.get("min") if item.get("min") not in ("", None) else None
    high = item.get("max") if item.get("max") not in ("", None) else None
    if qtype in ("text", "textarea", "password"):
        if not isinstance(value, str):
            return [f"'{var}': {value!r} is not a string"]
        if (low is not None and len(value) < int(low)) or (high is not None and len(value) > int(high)):
            return [f"'{var}': length {len(value)} is outside {low}..{high}"]
    elif qtype == "integer":
        if value.__class__ is not int:  # AWX rejects bool (a subclass of int) and str alike
            return [f"'{var}': {value!r} is not an integer"]
        if (low is not None and value < int(low)) or (high is not None and value > int(high)):
            return [f"'{var}': {value} is outside {low}..{high}"]
    elif qtype == "float":
        if value.__class__ not in (int, float):
            return [f"'{var}': {value!r} is not a number"]
        if (low is not None and value < float(low)) or (high is not None and value > float(high)):
            return [f"'{var}': {value} is outside {low}..{high}"]
    elif qtype == "multiselect":
        if value.__class__ is not list:
            return [f"'{var}' value is expected to be a list"]
        return [f"'{var}': {v!r} is not one of {_choices(item)}" for v in value if v not in _choices(item)]
    elif qtype == "multiplechoice":
        if value not in _choices(item):
            return [f"'{var}': {value!r} is not one of {_choices(item)}"]
    return []


def survey_defaults_applied(spec: dict) -> dict:
    """The extra vars AWX adds from survey defaults when a job is launched without answers (API/CLI):
    a default is used only when it passes the launch validation itself, so a multiselect default (a
    string) never is."""
    applied = {}
    for item in spec.get("spec", []):
        if item.get("default") is None:
            continue
        if not survey_answer_errors(item, {item["variable"]: item["default"]}):
            applied[item["variable"]] = item["default"]
    return applied


# --------------------------------------------------------------------------------- credential types

def credential_type_input_errors(inputs: dict) -> list:
    """What AWX rejects in a custom credential type's `inputs`, plus "project:" rules: every field names
    its type (AWX adds type: string when missing, and awx.awx.credential_type would then report changed
    on every run) and every required id is a field."""
    errors = []
    if not isinstance(inputs, dict) or set(inputs) - {"fields", "required"}:
        return ["inputs may only have 'fields' and 'required'"]
    ids = []
    for idx, field in enumerate(inputs.get("fields", [])):
        where = f"field {idx} ({field.get('id', '?')})"
        extra = set(field) - _INPUT_FIELD_KEYS
        if extra:
            errors.append(f"{where}: unknown keys {sorted(extra)}")
        if "id" not in field or "label" not in field:
            errors.append(f"{where}: 'id' and 'label' are required")
            continue
        if not _NAME.match(str(field["id"])):
            errors.append(f"{where}: '{field['id']}' is an invalid variable name")
        if field["id"] == "tower":
            errors.append(f"{where}: 'tower' is reserved")
        if field["id"] in ids:
            errors.append(f"{where}: field ids must be unique")
        ids.append(field["id"])
        ftype = field.get("type", "string")
        if ftype not in ("string", "boolean"):
            errors.append(f"{where}: type must be string or boolean")
        if "type" not in field:
            errors.append(f"project: {where}: give the type (AWX adds it, which breaks idempotence)")
        if "format" in field and field["format"] not in ("ssh_private_key", "url"):
            errors.append(f"{where}: format must be ssh_private_key or url")
        for key in ("choices", "multiline", "format", "secret"):
            if key in field and ftype != "string":
                errors.append(f"{where}: {key} is only for string fields")
        for key in ("multiline", "secret", "ask_at_runtime"):
            if key in field and not isinstance(field[key], bool):
                errors.append(f"{where}: {key} must be a boolean")
        if "default" in field and field["default"].__class__ is not {"string": str, "boolean": bool}.get(ftype):
            errors.append(f"{where}: default is not a {ftype}")
    for req in inputs.get("required", []):
        if req not in ids:
            errors.append(f"project: required '{req}' is not a field")
    return errors


class _Exploding:
    def __init__(self, message):
        self._message = message

    def __str__(self):
        raise UndefinedError(self._message)


def credential_type_injector_errors(inputs: dict, injectors: dict) -> list:
    """What AWX rejects in `injectors`: only file/env/extra_vars; file keys `template` or
    `template.<name>` (not both styles); env names shell-safe, ASCII values, no ANSIBLE_* and none of
    ENV_BLOCKLIST; every template renders with StrictUndefined when every input field is 'EXAMPLE'."""
    errors = []
    if set(injectors) - {"file", "env", "extra_vars"}:
        return [f"unknown injector kinds {sorted(set(injectors) - {'file', 'env', 'extra_vars'})}"]
    files = injectors.get("file", {})
    for key in files:
        if not _FILE_KEY.match(key):
            errors.append(f"file injector key '{key}' must be 'template' or 'template.<name>'")
    if "template" in files and len(files) > 1:
        errors.append("use the multi-file syntax (template.<name>) for several files")
    for name, value in injectors.get("env", {}).items():
        if not _NAME.match(name):
            errors.append(f"env '{name}' is not a valid variable name")
        if name.startswith("ANSIBLE_") or name in ENV_BLOCKLIST:
            errors.append(f"env '{name}' may not be set by a credential")
        if not isinstance(value, str) or any(ord(c) > 127 for c in value):
            errors.append(f"env '{name}' must be an ASCII string template")

    class _Tower:
        def __str__(self):
            raise UndefinedError("cannot reference the `tower` namespace itself")

    tower = _Tower()
    if "template" in files:
        tower.filename = "EXAMPLE_FILENAME"
    else:
        tower.filename = _Exploding("define a file injector before referencing tower.filename")
        holder = type("Files", (), {})()
        named = [k.split(".", 1)[1] for k in files if "." in k]
        for name in named:
            setattr(holder, name, "EXAMPLE_FILENAME")
        if named:
            tower.filename = holder
    namespace = {field["id"]: "EXAMPLE" for field in inputs.get("fields", [])}
    namespace["tower"] = tower
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
    for kind in ("file", "env"):
        for key, template in injectors.get(kind, {}).items():
            try:
                env.from_string(template).render(namespace)
            except UndefinedError as exc:
                errors.append(f"{kind} '{key}' uses an undefined field ({exc})")
            except (TemplateSyntaxError, SecurityError) as exc:
                errors.append(f"{kind} '{key}': {exc}")
    return errors


def inject(credential_type: dict, values: dict, private_data_dir: str | None = None):
    """Render a custom credential type's injectors the way AWX does at job start; returns (env, files)
    with files = {label: (path, content)}. As in AWX: inputs that are empty are undefined (render as ""),
    missing boolean fields are False, templates render in a sandbox with the default (lenient) Undefined,
    each file is written 0600 under <private_data_dir>/env."""
    fields = credential_type["inputs"].get("fields", [])
    namespace = {}
    for key, value in values.items():
        if isinstance(value, bool) or len(value):
            namespace[key] = value
    for field in fields:
        if field.get("type") == "boolean" and field["id"] not in values:
            namespace[field["id"]] = False

    class _Tower:
        pass

    tower = _Tower()
    namespace["tower"] = tower
    sandbox = ImmutableSandboxedEnvironment()
    private_data_dir = private_data_dir or tempfile.mkdtemp(prefix="awx_inject_")
    env_dir = os.path.join(private_data_dir, "env")
    os.makedirs(env_dir, exist_ok=True)
    files = {}
    for label, template in credential_type["injectors"].get("file", {}).items():
        content = sandbox.from_string(template).render(**namespace)
        handle, path = tempfile.mkstemp(dir=env_dir)
        with os.fdopen(handle, "w") as out:
            out.write(content)
        os.chmod(path, 0o600)
        if "." in label:
            if not hasattr(tower, "filename"):
                tower.filename = _Tower()
            setattr(tower.filename, label.split(".", 1)[1], path)
        else:
            tower.filename = path
        files[label] = (path, content)
    env = {name: sandbox.from_string(template).render(**namespace)
           for name, template in credential_type["injectors"].get("env", {}).items()}
    return env, files
