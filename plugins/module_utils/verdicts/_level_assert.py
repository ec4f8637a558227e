# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""level_assert's argument spec and verdict, shared by the module and its action plugin (standard library only).

The action plugin (plugins/action/level_assert.py) judges in the controller: the evidence is already there, and a
module run costs a Python start and an import of the collection on the host for each level (about 2 s on 2 cores).
"""

from __future__ import annotations

import json

from ansible_collections.rlstack.validation.plugins.module_utils.fleet._bad_nodes import findings
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._nccl_checks import nccl_checks, nccl_sweep
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._verdict import (
    OPS,
    build_level_result,
    failed_lines,
    summary_message,
)


def argument_spec():
    """The options of rlstack.validation.level_assert (DOCUMENTATION in plugins/modules/level_assert.py)."""
    return dict(
        id=dict(type="str", required=True),
        level=dict(type="str"),
        name=dict(type="str"),
        order=dict(type="float"),
        checks=dict(
            type="list", elements="dict", default=[],
            options=dict(
                name=dict(type="str", required=True),
                node=dict(type="str", default=""),
                op=dict(type="str", default="eq", choices=list(OPS)),
                actual=dict(type="raw"),
                expected=dict(type="raw"),
                tolerance=dict(type="float"),
                unit=dict(type="str", default=""),
                hint=dict(type="str", default=""),
                fail_msg=dict(type="str", default=""),
                evidence_missing=dict(type="bool", default=False),
                severity=dict(type="str", default="fail", choices=["fail", "warn"]),
                excerpt=dict(type="list", elements="str"),
            ),
        ),
        nccl=dict(
            type="list", elements="dict", default=[],
            options=dict(
                name=dict(type="str", default="nccl"),
                node=dict(type="str", default=""),
                instance_type=dict(type="str", default=""),
                hosts=dict(type="dict", default={}),
                facts=dict(type="dict"),
                expect=dict(
                    type="dict", default={},
                    options=dict(
                        network=dict(type="list", elements="str"),
                        min_busbw=dict(
                            type="list", elements="dict",
                            options=dict(
                                size=dict(type="raw", required=True),
                                floor=dict(type="float", required=True),
                                tolerance=dict(type="float"),
                            ),
                        ),
                        test=dict(type="str"),
                        tolerance=dict(type="float", default=0.0),
                        nranks=dict(type="int"),
                        nnodes=dict(type="int"),
                        forbid_signatures=dict(type="list", elements="str"),
                        require_complete=dict(type="bool", default=True),
                        max_wrong=dict(type="int", default=0),
                        single_rank_ok=dict(type="bool", default=False),
                        transport=dict(
                            type="dict",
                            options=dict(
                                instance_type=dict(type="str"),
                                provider=dict(type="str"),
                                fabric=dict(type="list", elements="str"),
                                nics=dict(type="int"),
                                protocol=dict(type="str"),
                                gdrdma=dict(type="bool", default=False),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        skip_reason=dict(type="str", default=""),
        started=dict(type="float"),
        duration_s=dict(type="float"),
        report_only=dict(type="bool", default=False),
        node_names=dict(type="list", elements="str", default=[]),
        attach=dict(type="dict", default={}),
        publish_host=dict(type="str", default=""),
        rows=rows_spec(),
    )


def rows_spec():
    """The option rows: several rows of one level, each a few of the task's options in their place (judge_rows)."""
    return dict(type="list", elements="dict", default=[],
                options=dict(id=dict(type="str", required=True), name=dict(type="str"), checks=dict(type="raw"),
                             skip_reason=dict(type="str"), attach=dict(type="dict")))


# What a row of O(rows) sets in place of the task's own option (attach is merged into the task's).
ROW_OPTIONS = ("id", "name", "checks", "skip_reason")


# The statistic the report callback and AWX read (plugins/callback/report.py).
STATS_KEY = "rlstack_validation"


def _canonical_value(spec, value):
    """`value` as the spec's type makes it when it already is of that type (a whole number for a float is made one,
    as the type does), else _NOT_CANONICAL: then the spec decides."""
    kind = spec.get("type", "str")
    if kind == "raw":
        return value
    if kind == "str" and isinstance(value, str) and value in spec.get("choices", [value]):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, (int, float)):
        return float(value)
    if kind == "list" and spec.get("elements") == "str" and isinstance(value, list) \
            and all(isinstance(item, str) for item in value):
        return value
    return _NOT_CANONICAL


_NOT_CANONICAL = object()


def _canonical_check(check, options):
    """`check` with the defaults of `options` (the spec's suboptions of a check), when every option it sets already
    has the type (and choice) the spec gives it, else None."""
    if not isinstance(check, dict) or not set(check).issubset(options):
        return None
    out = {}
    for key, spec in options.items():
        if key not in check:
            if spec.get("required"):
                return None
            out[key] = spec.get("default")
            continue
        value = check[key]
        if value is None and spec.get("type") != "raw":
            return None  # none where the spec wants a value: it decides
        value = _canonical_value(spec, value)
        if value is _NOT_CANONICAL:
            return None  # another type: the spec decides
        out[key] = value
    return out


class ChecksTextError(ValueError):
    pass


def decoded_checks(checks):
    """`checks` as a list when it came as JSON text of one (the runner hands a level's checks over so: filter
    rlstack.validation.json_text says why), else as it came. Raises ChecksTextError with one sentence when the text
    is not JSON of a list."""
    if not isinstance(checks, str):
        return checks
    try:
        decoded = json.loads(checks)
    except ValueError as exc:
        raise ChecksTextError("level_assert: checks is text that is not JSON (%s); give a list of checks or its "
                              "JSON text" % exc) from None
    if not isinstance(decoded, list):
        raise ChecksTextError("level_assert: checks is JSON of a %s, not of a list of checks"
                              % type(decoded).__name__)
    return decoded


def canonical_checks(checks):
    """The checks as the argument spec validates them, made without it when every check is already canonical (a
    level's filters build them so: 8,196 checks over 256 nodes, about 0.3 s of the controller's CPU through the
    spec, 0.06 s here, which reads the types, defaults and choices from the spec itself); None when one is not, and
    the spec decides (its conversions and messages)."""
    if not isinstance(checks, list):
        return None
    options = argument_spec()["checks"]["options"]
    out = []
    for check in checks:
        canonical = _canonical_check(check, options)
        if canonical is None:
            return None
        out.append(canonical)
    return out


def row_checks(checks):
    """A row's checks (a list or its JSON text) as the argument spec makes them: (checks, None), or (None, the
    spec's sentence) when one is not a check. ChecksTextError when the text is not JSON of a list."""
    checks = decoded_checks([] if checks is None else checks)
    canonical = canonical_checks(checks)
    if canonical is not None:
        return canonical, None
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    validated = ArgumentSpecValidator({"checks": argument_spec()["checks"]}).validate({"checks": checks})
    if validated.error_messages:
        return None, "; ".join(validated.error_messages)
    return validated.validated_parameters["checks"], None


def judge_rows(params):
    """Every row of a level judged in one call: the task's own when O(rows) is empty, else one per row, each with the
    task's parameters and the row's in their place (a loop of the task would send each row's whole result through
    ansible-core twice, the item's and the loop's: 0.6 s of the controller at 32,772 checks, docs/fleet-scale.md).
    {failed, msg, failed_checks, findings, verdict (the last row's), rows: [{id, verdict, findings, failed_checks,
    msg, result unless published}], and ansible_stats (every row's result) when publish_host is set, else result
    (the last row's)}."""
    outcomes = []
    for row in params.get("rows") or [{"id": params["id"]}]:
        one = dict(params, **dict((key, row[key]) for key in ROW_OPTIONS if row.get(key) is not None))
        one["attach"] = dict(params.get("attach") or {}, **(row.get("attach") or {}))
        if row.get("checks") is not None:  # the task's own were validated with the task
            try:
                one["checks"], error = row_checks(one["checks"])
            except ChecksTextError as exc:
                error = str(exc).partition("level_assert: ")[2] or str(exc)
            if error:
                return {"failed": True, "msg": "level_assert: row %s: %s" % (one["id"], error), "failed_checks": []}
        outcome = judge(one)
        if "verdict" not in outcome:  # refused (attach)
            return outcome
        outcome["id"] = one["id"]
        outcomes.append(outcome)
    out = {"failed": any(o.pop("failed") for o in outcomes), "msg": "\n".join(o["msg"] for o in outcomes),
           "failed_checks": [line for o in outcomes for line in o["failed_checks"]],
           "findings": [found for o in outcomes for found in o["findings"]], "verdict": outcomes[-1]["verdict"]}
    if params.get("publish_host"):
        # What ansible.builtin.set_stats (per_host: false, aggregate) records, without templating the result again.
        levels = dict((o["id"], o.pop("result")) for o in outcomes)
        out["ansible_stats"] = {"data": {STATS_KEY: {params["publish_host"]: {"levels": levels}}},
                                "per_host": False, "aggregate": True}
    else:
        out["result"] = outcomes[-1]["result"]
    out["rows"] = outcomes
    return out


def judge(params):
    """One row judged, from validated parameters: {failed, msg, result, verdict, findings, failed_checks}
    (judge_rows publishes the results)."""
    result = build_level_result(
        params["id"],
        level=params["level"],
        name=params["name"],
        order=params["order"],
        checks=list(params["checks"]) + [spec for item in params["nccl"] for spec in nccl_checks(item)],
        skip_reason=params["skip_reason"],
        duration_s=params["duration_s"],
        started=params["started"],
    )
    result["sweeps"] = [sweep for sweep in (nccl_sweep(item) for item in params["nccl"]) if sweep]
    attach = params.get("attach") or {}
    clash = sorted(set(attach) & set(result))
    if clash:
        return {"failed": True, "msg": "level_assert: attach may not replace the result's own fields (%s)"
                % ", ".join(clash), "failed_checks": []}
    result.update(attach)
    outcome = {"failed": result["status"] == "FAIL" and not params["report_only"], "msg": summary_message(result),
               "failed_checks": failed_lines(result), "verdict": verdict(result),
               "findings": findings(result, params.get("node_names") or []), "result": result}
    return outcome


def verdict(result):
    """The level result with only its failed checks and nodes: what later steps read (status, reason, summary,
    failed checks, sweeps), at a size that does not grow with the passing checks (8,000 of them over 256 nodes)."""
    out = dict(result)
    out["checks"] = [entry for entry in result.get("checks") or [] if not entry.get("passed")]
    out["nodes"] = dict((name, info) for name, info in (result.get("nodes") or {}).items()
                        if info.get("status") != "PASS")
    return out
