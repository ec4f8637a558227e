# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report.html (plugins/plugin_utils/_report_html.py): structure, escaping, matrices and the busbw chart.

Inputs are real: report.json files the playbook wrote on the lent H200 machines (sim/replay/recorded/playbook-*)
and the nccl-tests table the L3 probe printed on 2 x H200 (sim/replay/recorded/h200x2/), parsed by the
collection's own parser. The browser test is tests/html (make test-html).
"""

from __future__ import annotations

import copy
import json
import math
import os
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _nccl_checks
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _report as r
from ansible_collections.rlstack.validation.plugins.plugin_utils import _report_html as h

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
RECORDED = os.path.join(ROOT, "sim", "replay", "recorded")
L3_REPORT = os.path.join(RECORDED, "playbook-h200x2", "l3-2gpu.report.json")
BROKEN_REPORT = os.path.join(RECORDED, "playbook-h200x1-2026-12-01", "broken.report.json")
L3_LOG = os.path.join(RECORDED, "h200x2", "probe_multigpu_torchrun_2gpu.out")
EVIL = '<script>alert(1)</script>"><img src=x onerror=alert(2)>&amp;'


class Page(HTMLParser):
    """Every start tag with its attributes, the text, and per table its rows of cells (text, attrs)."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr", "circle",
            "line", "rect", "polyline", "path"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.stack, self.tables = [], [], [], []
        self._cell = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self.tables.append({"class": attrs.get("class", ""), "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = [tag, attrs, ""]
            self.tables[-1]["rows"][-1].append(self._cell)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, "unbalanced </%s> after %s" % (tag, self.stack[-3:])
        self.stack.pop()
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell[2] += data

    def table(self, css):
        return [t for t in self.tables if css in t["class"].split()]


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def l3_sweep(instance_type=None):
    """The sweep of the 2 x H200 L3 probe log as level_assert records it, with the recorded run's floor."""
    facts = _nccl.parse_file(L3_LOG)
    # the floor of the recorded run: its check sweep_busbw_4GiB expected 337.5 GB/s
    floor = [c for lv in load(L3_REPORT)["clusters"][0]["levels"] for c in lv["checks"]
             if c["name"] == "sweep_busbw_4GiB"][0]["expected"]
    expect = {"min_busbw": [{"size": "4G", "floor": floor}]}
    if instance_type:
        expect["transport"] = {"instance_type": instance_type}
    return _nccl_checks.nccl_sweep({"name": "sweep", "node": "gpu-host", "facts": facts, "expect": expect}), facts


def l3_document(instance_type="p5en.48xlarge"):
    doc = load(L3_REPORT)
    sweep, _facts = l3_sweep(instance_type)
    for level in doc["clusters"][0]["levels"]:
        if level["id"] == "l3_multi_gpu":
            level["sweeps"] = [sweep]
    return doc


def test_page_is_self_contained_and_balanced():
    text = h.render_html(load(BROKEN_REPORT))
    page = Page(text)
    assert text.startswith("<!DOCTYPE html>") and not page.stack
    tags = [t for t, _a in page.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    for _tag, attrs in page.tags:
        assert "src" not in attrs and "href" not in attrs
        assert not [k for k in attrs if k.startswith("on")]
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text


def test_level_table_has_status_time_and_reason_of_every_level():
    doc = load(BROKEN_REPORT)
    page = Page(h.render_html(doc))
    levels = doc["clusters"][0]["levels"]
    rows = page.table("levels")[0]["rows"]
    assert [c[2] for c in rows[0]] == ["Level", "Name", "Status", "Time", "Reason"]
    assert len(rows) == 1 + len(levels)
    for cells, level in zip(rows[1:], levels):
        assert cells[0][2] == level["level"] and cells[1][2] == level["name"]
        assert cells[2][2] == level["status"]
        assert cells[3][2] == ("-" if level["duration_s"] is None else "%ds" % round(level["duration_s"]))
        if level["status"] == "SKIPPED":
            assert cells[4][2] == level["reason"]
        if level["status"] == "FAIL":
            first = [c for c in level["checks"] if not c["passed"]][0]
            assert first["message"] in cells[4][2]
    text = "".join(page.text)
    assert r.summary_line(doc["clusters"][0]) in text  # the console table's footer, same words


def test_cost_footer_is_the_tables():
    report = r.cluster_report("eks-p5", {"levels": {"l3": {
        "id": "l3", "level": "L3", "name": "NCCL", "order": 3, "status": "PASS", "duration_s": 60.0,
        "gpu": {"gpu_seconds": 960.0, "gpu_minutes": 16.0, "by_instance_type": {"p5en.48xlarge": {
            "gpu_seconds": 960.0, "gpu_minutes": 16.0, "gpus": 16}}}}}})
    assert report["cost"]["gpu_minutes"] == 16.0
    text = "".join(Page(h.render_html(r.report_json([report]))).text)
    lines = r.cost_lines(report["cost"])
    assert lines and lines[0].startswith("GPU time: 16.0 GPU-min (L3 16.0); estimated $")
    for line in lines:
        assert line in text


def test_untrusted_text_is_escaped_everywhere():
    doc = load(BROKEN_REPORT)
    cluster = doc["clusters"][0]
    cluster["cluster"] = EVIL
    level = [lv for lv in cluster["levels"] if lv["status"] == "FAIL"][0]
    level["name"] = EVIL
    level["checks"][0].update(node=EVIL, name=EVIL, message=EVIL, hint=EVIL, passed=False)
    cluster["isolation"] = {"pairs": [{"a": EVIL, "b": "n1", "busbw_gbps": 1.0, "status": "slow", "reason": EVIL}],
                            "suspects": [{"node": EVIL, "confidence": "high", "evidence": [EVIL]}]}
    sweep, _facts = l3_sweep()
    sweep.update(name=EVIL, node=EVIL)
    level["sweeps"] = [sweep]
    text = h.render_html(doc)
    page = Page(text)
    tags = [t for t, _a in page.tags]
    assert "script" not in tags and "img" not in tags
    assert "<script>" not in text and "<img" not in text
    assert not [k for _t, a in page.tags for k in a if k.startswith("on")]
    # the text itself survives, as text: 7 places at least (heading, table, matrix, pairs, suspects, chart)
    assert "".join(page.text).count(EVIL) >= 5
    titles = [a["title"] for _t, a in page.tags if "title" in a]
    assert any(EVIL in t for t in titles)


def test_node_matrix_has_a_cell_per_node_and_check_with_the_failure_as_title():
    checks = []
    for i in range(3):
        node = "p5-node-%d" % i
        checks.append({"name": "gpu_count", "node": node, "op": "eq", "expected": 8, "actual": 8 if i else 7,
                       "passed": bool(i), "message": "gpu_count expected 8, saw %d" % (8 if i else 7),
                       "hint": "check XID errors", "evidence_missing": False})
        checks.append({"name": "efa_devices", "node": node, "op": "eq", "expected": 32, "actual": None,
                       "passed": i != 2, "message": "no probe output", "hint": "", "evidence_missing": i == 2})
    checks.append({"name": "nodes_ready", "node": "", "op": "true", "passed": True, "message": "3 of 3 ready"})
    report = r.cluster_report("eks-p5", {"levels": {"l0": {
        "id": "l0", "level": "L0", "name": "Infrastructure", "order": 0, "status": "FAIL", "checks": checks}}})
    page = Page(h.render_html(r.report_json([report])))
    rows = page.table("mx")[0]["rows"]
    assert [c[2] for c in rows[1][1:]] == ["gpu_count", "efa_devices", "nodes_ready"]
    body = dict((cells[0][2], cells[1:]) for cells in rows[2:])
    assert list(body) == ["(cluster)", "p5-node-0", "p5-node-1", "p5-node-2"]
    bad = body["p5-node-0"][0]
    assert bad[1]["class"] == "f" and bad[2] == "\u2717"
    assert bad[1]["title"] == ("p5-node-0: gpu_count expected 8, saw 7\nexpected: 8\nactual: 7\n"
                               "hint: check XID errors")
    assert body["p5-node-1"][0][1]["class"] == "p" and body["p5-node-1"][0][1]["title"] == \
        "p5-node-1: gpu_count expected 8, saw 8"
    assert body["p5-node-2"][1][1]["class"] == "m"  # evidence missing
    assert body["(cluster)"][0][1]["class"] == "x" and body["(cluster)"][2][1]["class"] == "p"
    assert "4 node(s), 2 with a failed check" in "".join(page.text)


def test_node_matrix_keeps_rows_of_one_level_apart():
    """Two L5 examples with the same check: two column groups, the failure of one is not hidden by the other."""
    levels = {}
    for i, status in enumerate(("FAIL", "PASS")):
        levels["l5/ex%d" % i] = {"id": "l5/ex%d" % i, "level": "L5", "name": "Training step: ex%d" % i, "order": 5,
                                 "status": status, "checks": [{"name": "job", "node": "", "passed": status == "PASS",
                                                               "message": "job %s" % status}]}
    page = Page(h.render_html(r.report_json([r.cluster_report("c", {"levels": levels})])))
    rows = page.table("mx")[0]["rows"]
    assert [c[1].get("title") for c in rows[0][1:]] == ["L5 Training step: ex0", "L5 Training step: ex1"]
    assert [c[1]["class"] for c in rows[2][1:]] == ["f", "p"]


def test_junit_has_one_case_per_node_and_check():
    checks = [{"name": n, "node": "p5-node-%d" % i, "passed": i != 1, "message": "m"}
              for i in range(3) for n in ("gpu_count", "efa_devices")]
    report = r.cluster_report("c", {"levels": {"l0": {"id": "l0", "level": "L0", "name": "Infra", "order": 0,
                                                      "status": "FAIL", "checks": checks}}})
    cases = ET.fromstring(r.junit_xml([report]).encode()).findall("testsuite/testcase")
    names = sorted(c.get("name") for c in cases if c.get("classname").endswith(".l0"))
    assert names == sorted("p5-node-%d: %s" % (i, n) for i in range(3) for n in ("gpu_count", "efa_devices"))
    assert len([c for c in cases if c.find("failure") is not None]) == 1 + 2  # the level and node 1's two


def test_pair_matrix_and_suspects():
    nodes = ["n%02d" % i for i in range(8)]
    pairs = []
    for i, a in enumerate(nodes):
        b = nodes[(i + 1) % len(nodes)]
        slow = "n03" in (a, b)
        pairs.append({"a": a, "b": b, "busbw_gbps": 61.5 if slow else 402.3, "status": "slow" if slow else "ok"})
    isolation = {"pairs": pairs, "suspects": [{"node": "n03", "confidence": "high",
                                               "evidence": ["n02-n03: busbw 61.5 GB/s below the floor"]}],
                 "rounds": 3, "round_bound": 5}
    page = Page(h.pair_matrix(isolation))
    rows = page.table("pairs")[0]["rows"]
    assert [c[2] for c in rows[0][1:]] == nodes
    by_node = dict((cells[0][2].rstrip(" *"), cells[1:]) for cells in rows[1:])
    assert rows[4][0][2] == "n03 *"
    cell = by_node["n03"][nodes.index("n04")]
    assert cell[1]["class"] == "slow" and cell[2] == "62" and "n03 - n04: 61.50 GB/s, slow" in cell[1]["title"]
    assert by_node["n00"][nodes.index("n01")][1]["class"] == "ok"
    assert by_node["n00"][0][1]["class"] == "self" and by_node["n00"][nodes.index("n05")][1]["class"] == "x"
    text = "".join(page.text)
    assert "n03 (confidence high)" in text and "n02-n03: busbw 61.5 GB/s below the floor" in text
    assert "rounds 3, round bound 5, 8 pair(s)" in text
    healthy = Page(h.pair_matrix({"pairs": pairs[:1], "suspects": []}))
    assert "No suspect node" in "".join(healthy.text)
    assert h.pair_matrix(None) == ""


def test_pair_matrix_reads_the_isolate_roles_records():
    """The shape _isolate.outcome() of the isolate branch (18a8785) records: nodes [a, b], phase, slow, crashed;
    bisection groups are not pairs."""
    isolation = {"nodes": 4, "rounds": 2, "round_bound": 4, "note": "", "suspects": [
        {"node": "p5-2", "confidence": "medium", "evidence": ["p5-1-p5-2: busbw 50.0 GB/s below the floor"]}],
        "pairs": [
            {"nodes": ["p5-1", "p5-2"], "round": 1, "phase": "ring", "busbw_gbps": 50.0, "crashed": False,
             "error": "", "job": "iso-r1-0", "slow": "busbw 50.0 GB/s below the 2-node floor 100.0 GB/s"},
            {"nodes": ["p5-3", "p5-4"], "round": 1, "phase": "ring", "busbw_gbps": 410.0, "crashed": False,
             "error": "", "job": "iso-r1-1", "slow": ""},
            {"nodes": ["p5-2", "p5-3"], "round": 2, "phase": "ring", "busbw_gbps": None, "crashed": True,
             "error": "NCCL error", "job": "iso-r2-0", "slow": "crashed: NCCL error"},
            {"nodes": ["p5-1", "p5-2", "p5-3", "p5-4"], "round": 3, "phase": "bisect", "busbw_gbps": 300.0}]}
    pairs = h.isolation_pairs(isolation)
    assert [(p["a"], p["b"], p["status"]) for p in pairs] == [
        ("p5-1", "p5-2", "slow"), ("p5-3", "p5-4", "ok"), ("p5-2", "p5-3", "crashed")]
    rows = Page(h.pair_matrix(isolation)).table("pairs")[0]["rows"]
    assert [c[2] for c in rows[0][1:]] == ["p5-1", "p5-2", "p5-3", "p5-4"]
    crashed = rows[2][3]
    assert crashed[1]["class"] == "slow" and crashed[2] == "\u2717" and "NCCL error" in crashed[1]["title"]
    assert rows[3][4][1]["class"] == "ok" and rows[3][4][2] == "410"


def test_isolation_reaches_the_page_through_the_report():
    stats = {"levels": {"l3": {"id": "l3", "level": "L3", "name": "NCCL", "order": 3, "status": "FAIL"}},
             "isolation": {"pairs": [{"a": "a", "b": "b", "busbw_gbps": None, "status": "crashed"}],
                           "suspects": ["a"]}}
    report = r.cluster_report("c", stats)
    assert report["isolation"]["suspects"] == ["a"]
    page = Page(h.render_html(r.report_json([report])))
    assert page.table("pairs") and "Suspect node(s):" in "".join(page.text)


def test_sweep_comes_from_the_table_the_checks_judge():
    sweep, facts = l3_sweep("p5en.48xlarge")
    table = _nccl_results.last_table(facts)
    assert len(sweep["points"]) == len(table["rows"]) and sweep["test"] == "all_reduce_perf"
    assert sweep["nranks"] == 2 and sweep["nnodes"] == 1 and sweep["instance_type"] == "p5en.48xlarge"
    four = [p for p in sweep["points"] if p["size"] == 4 << 30][0]
    assert four["busbw"] == _nccl_results.busbw_at_size(facts, 4 << 30)
    assert sweep["floors"] == [{"size": 4 << 30, "floor": 337.5}]
    assert _nccl_checks.nccl_sweep({"name": "x", "facts": None}) is None
    assert _nccl_checks.nccl_sweep({"name": "x", "facts": {"tables": []}}) is None


def test_nccl_item_carries_the_nodes_instance_type_to_the_sweep():
    facts = _nccl.parse_file(L3_LOG)
    result = dict(facts, item={"key": "p5en-node-0", "value": {}})
    item = _nccl_checks.nccl_item(result, "sweep", {}, {"p5en-node-0": "p5en.48xlarge", "other": "g6.8xlarge"})
    assert item["instance_type"] == "p5en.48xlarge"
    sweep = _nccl_checks.nccl_sweep(item)
    assert sweep["instance_type"] == "p5en.48xlarge" and sweep["node"] == "p5en-node-0"
    assert h.sweep_limit(sweep)["gbps"] == 450.0
    assert "instance_type" not in _nccl_checks.nccl_item(result, "sweep", {}, {"other": "g6.8xlarge"})


def test_level_assert_records_the_sweeps():
    """What the action plugin and the module return: the level result with its sweeps."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _level_assert

    facts = _nccl.parse_file(L3_LOG)
    args = {"id": "l3_multi_gpu", "level": "L3", "name": "Multi GPU", "nccl": [
        {"name": "sweep", "node": "gpu-host", "instance_type": "p5en.48xlarge", "facts": facts,
         "expect": {"min_busbw": [{"size": "4G", "floor": 337.5}], "single_rank_ok": True}},
        {"name": "mpijob", "facts": None}]}
    validated = ArgumentSpecValidator(_level_assert.argument_spec()).validate(args)
    assert not validated.error_messages
    result = _level_assert.judge(validated.validated_parameters)["result"]
    assert [s["name"] for s in result["sweeps"]] == ["sweep"]
    assert result["sweeps"][0]["instance_type"] == "p5en.48xlarge"
    assert result["sweeps"][0]["points"][-1] == {"size": 4 << 30, "busbw": _nccl_results.busbw_at_size(facts, 4 << 30)}


def test_busbw_limit_from_the_instance_profile():
    assert _profiles.busbw_limit("p5en.48xlarge", 1, 2)["gbps"] == 450.0  # docs/hardware.md: NVLink 4 x 18
    assert _profiles.busbw_limit("p5.48xlarge", 2)["gbps"] == 750.0  # 400 GB/s x 2 x 15 / 16
    assert _profiles.busbw_limit("p5.48xlarge", 2)["line_rate_gbps"] == 400.0
    assert _profiles.busbw_limit("g6.8xlarge", 1) is None  # one GPU, no NVLink
    assert _profiles.busbw_limit("no.such", 2) is None
    # an MPIJob log without NCCL's node count: 16 ranks of 8-GPU nodes are 2 nodes, not one node's NVLink
    assert _profiles.busbw_limit("p5.48xlarge", None, 16)["gbps"] == 750.0
    assert _profiles.busbw_limit("p5en.48xlarge", None, 2)["gbps"] == 450.0


def test_chart_log2_axis_floor_and_limit():
    doc = l3_document("p5en.48xlarge")
    page = Page(h.render_html(doc))
    svg = [a for t, a in page.tags if t == "svg"]
    assert len(svg) == 1
    line = [a for t, a in page.tags if t == "polyline"][0]
    xy = [tuple(float(v) for v in p.split(",")) for p in line["points"].split()]
    sweep = doc["clusters"][0]["levels"][3]["sweeps"][0]
    assert len(xy) == len(sweep["points"])
    # sizes double row to row, so on a log2 axis the points are evenly spaced
    gaps = [b[0] - a[0] for a, b in zip(xy, xy[1:])]
    assert max(gaps) - min(gaps) < 0.2 and min(gaps) > 0
    # higher busbw is higher on the page (smaller y)
    assert xy[-1][1] < xy[0][1]
    limit = [a for t, a in page.tags if t == "line" and a.get("class") == "limit"][0]
    floor = [a for t, a in page.tags if t == "line" and a.get("class") == "floor"][0]
    assert float(limit["y1"]) < float(floor["y1"]) < xy[0][1]
    text = "".join(page.text)
    assert "limit 450 GB/s" in text and "floor 337.5 GB/s @ 4 GiB" in text
    assert "1 GiB" in text and "8 B" in text
    # the floor sits where 337.5 GB/s is on the same scale as the points
    top = max(sweep["points"], key=lambda p: p["busbw"])
    ratio = (float(svg_bottom(page)) - float(floor["y1"])) / (float(svg_bottom(page)) - min(y for _x, y in xy))
    assert math.isclose(ratio, 337.5 / top["busbw"], rel_tol=0.02)


def svg_bottom(page):
    rect = [a for t, a in page.tags if t == "rect"][0]
    return float(rect["y"]) + float(rect["height"])


def test_chart_without_a_profile_says_so():
    doc = l3_document(instance_type=None)
    page = Page(h.render_html(doc))
    assert not [a for t, a in page.tags if t == "line" and a.get("class") == "limit"]
    assert "physical limit: not drawn" in "".join(page.text)


def test_no_sweep_no_chart():
    page = Page(h.render_html(load(L3_REPORT)))
    assert not [t for t, _a in page.tags if t == "svg"]


@pytest.mark.parametrize("path", sorted(
    os.path.join(d, f) for d, _s, files in os.walk(RECORDED) for f in files if f.endswith(".report.json")))
def test_every_recorded_report_renders(path):
    doc = load(path)
    page = Page(h.render_html(copy.deepcopy(doc)))
    assert not page.stack
    assert len(page.table("levels")) == len([c for c in doc["clusters"] if c.get("has_data")])


def test_write_reports_writes_the_html(tmp_path):
    doc = load(BROKEN_REPORT)
    reports = [dict(c, start=None) for c in doc["clusters"]]
    paths = r.write_reports(str(tmp_path), reports, 1000.0, 1010.0, h.render_html)
    assert [os.path.basename(p) for p in paths] == ["report.json", "junit.xml", "report.html"]
    assert "Validation report" in (tmp_path / "report.html").read_text()
    assert [os.path.basename(p) for p in r.write_reports(str(tmp_path / "b"), reports)] == ["report.json", "junit.xml"]


def test_a_failed_check_shows_its_excerpt_escaped_in_the_level_table():
    check = {"name": "job", "node": "", "op": "eq", "expected": "Complete", "actual": "Failed", "passed": False,
             "message": "job: Error (exit code 1)", "hint": "", "evidence_missing": False,
             "excerpt": ['  File "train.py", line 14, in reward', "ValueError: <script>x</script>",
                         "last 1 line of the log:", "token=[redacted]"]}
    page = h.level_table({"levels": [{"id": "l5/x", "level": "L5", "name": "Training step: x", "status": "FAIL",
                                      "duration_s": 3, "checks": [check]}]})
    assert ('<pre class="excerpt">  File &quot;train.py&quot;, line 14, in reward\nValueError: &lt;script&gt;x'
            '&lt;/script&gt;\nlast 1 line of the log:\ntoken=[redacted]</pre>') in page
    assert "<script>" not in page


def test_a_check_failed_on_many_nodes_is_one_item_of_the_level_table():
    cordoned = {"name": "node_schedulable", "op": "true", "expected": True, "actual": False, "passed": False,
                "message": "node_schedulable: the node is cordoned (expected true, saw false)", "hint": "uncordon it"}
    checks = [dict(cordoned, node="p5-node-%d" % i) for i in range(256)]
    checks += [dict(cordoned, name="check_%d" % i, node="p5-node-0", hint="") for i in range(10)]
    page = h.level_table({"levels": [{"id": "l0", "level": "L0", "name": "Infrastructure", "status": "FAIL",
                                      "duration_s": 20, "checks": checks}]})
    assert page.count("<li>") == 11
    assert ('<li>p5-node-0: node_schedulable: the node is cordoned (expected true, saw false)<div class="also">'
            'node_schedulable also failed on 255 more nodes: p5-node-1, p5-node-2, p5-node-3 and 252 more</div></li>'
            ) in page
    assert "<li>... and 1 more (see the node matrix)</li>" in page


@pytest.mark.parametrize("itype", ["p5.48xlarge", "p5en.48xlarge", "p4de.24xlarge", "g6e.48xlarge"])
def test_the_limit_note_cites_only_what_the_user_has(itype):
    """The sources a page cites are public ones or files of the collection, never the project's own notes
    (landscape.md is not in the collection)."""
    page = h.render_html(l3_document(itype))
    assert "physical limit: " in page and "landscape" not in page
