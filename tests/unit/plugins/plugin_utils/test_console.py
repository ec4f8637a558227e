# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The console's lines (plugins/plugin_utils/_console.py): a level's start, its end with the first failure, the
waits, one sentence for an error that stops the play, and the cluster's name when there are several."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.plugin_utils._console import Console, error_message

L0 = {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0, "started": 100.0}
L5 = {"id": "l5_training_step", "level": "L5", "name": "Training step", "order": 5, "started": 200.0}
CHECK = {"name": "job", "node": "p5-node-1", "passed": False, "message": "job: Error: the command exited with 1",
         "hint": "read the log lines below", "excerpt": ["a", "b", "c", "ValueError: boom"]}


def text(lines):
    return [line for line, _kind in lines]


def test_a_level_starts_and_ends_on_one_line_each():
    con = Console()
    con.host_seen("eks")
    assert text(con.level_started("eks", L0, 100.0)) == ["L0    Infrastructure: starting (probe pods on the GPU nodes)"]
    assert con.verdict("eks", {"id": "l0_infrastructure", "status": "PASS", "summary": {"total": 9}}, 112.0) == []
    assert con.level_done("eks", 112.0) == [("L0    Infrastructure: PASS in 12 s (9 checks)", "PASS")]
    assert con.level_done("eks", 113.0) == []


def test_a_level_notice_follows_its_start_line():
    """L0's DCGM notice (l0_infrastructure_notice) is said before the probe starts, under the start line."""
    con = Console()
    con.host_seen("eks")
    lines = text(con.level_started("eks", dict(L0, notice="DCGM diagnostic level 3 runs on every GPU node"), 100.0))
    assert lines == ["L0    Infrastructure: starting (probe pods on the GPU nodes)",
                     "      DCGM diagnostic level 3 runs on every GPU node"]


def test_a_level_of_examples_ends_with_its_first_failure_and_three_excerpt_lines():
    con = Console()
    con.host_seen("eks")
    con.level_started("eks", L5, 200.0)
    assert con.level_started("eks", dict(L5, id="l5_training_step/a", started=201.0), 201.0) == []
    con.verdict("eks", {"id": "l5_training_step/a", "name": "Training step: a", "status": "PASS", "duration_s": 60.4,
                        "gpu": [{"gpu_minutes": 1.5}]}, 230.0)
    con.verdict("eks", {"id": "l5_training_step/b", "name": "Training step: b", "status": "FAIL", "checks": [CHECK]},
                260.0)
    assert con.failed("eks", "task 'Watch' failed") == []  # inside a level: its verdict says it
    assert text(con.level_done("eks", 265.0)) == [
        "L5    Training step: FAIL in 60 s (1 of 2 examples failed, 1.5 GPU-min)",
        "      Training step: b on p5-node-1: job: Error: the command exited with 1",
        "      -> read the log lines below",
        "      | b", "      | c", "      | ValueError: boom"]
    assert con.finish(300.0) == []


def test_a_check_failed_across_the_fleet_names_the_other_nodes_at_the_end_of_the_level():
    cordoned = {"name": "node_schedulable", "passed": False, "hint": "uncordon it (kubectl uncordon) or replace it",
                "message": "node_schedulable: the node is cordoned (expected true, saw false)"}
    con = Console()
    con.host_seen("eks")
    con.level_started("eks", L0, 100.0)
    con.verdict("eks", {"id": "l0_infrastructure", "status": "FAIL",
                        "checks": [dict(cordoned, node="p5-node-%d" % i) for i in range(256)]}, 120.0)
    assert text(con.level_done("eks", 120.0)) == [
        "L0    Infrastructure: FAIL in 20 s",
        "      p5-node-0: node_schedulable: the node is cordoned (expected true, saw false)",
        "        node_schedulable also failed on 255 more nodes: p5-node-1, p5-node-2, p5-node-3 and 252 more",
        "      -> uncordon it (kubectl uncordon) or replace it"]


def test_diagnostic_rows_end_at_their_verdict_and_a_new_level_ends_the_last():
    con = Console()
    con.host_seen("eks")
    con.level_started("eks", L0, 100.0)
    con.verdict("eks", {"id": "l0_infrastructure", "status": "PASS"}, 101.0)
    lines = text(con.level_started("eks", {"id": "baseline", "level": "BASE", "name": "Baseline", "started": 102.0},
                                   102.0))
    assert lines == ["L0    Infrastructure: PASS in 2 s"]
    assert text(con.verdict("eks", {"id": "baseline", "status": "PASS"}, 103.0)) == ["BASE  Baseline: PASS in 1 s"]


def test_several_clusters_name_theirs_and_errors_are_one_sentence():
    con = Console()
    con.host_seen("eks-a")
    con.host_seen("eks-b")
    assert text(con.level_started("eks-b", L0, 1.0))[0].startswith("[eks-b] L0    Infrastructure: starting")
    assert text(con.failed("eks-a", "validation_x must be one of a, b, not 'c'.\nvalidation_y must be an int.")) == [
        "eks-a: validation_x must be one of a, b, not 'c'.", "eks-a: validation_y must be an int."]
    assert text(con.unreachable("eks-a", "timed out")) == ["eks-a: cannot reach the cluster: timed out"]
    assert error_message({"msg": " one sentence "}) == "one sentence"
    # what one of the collection's filters raised, without ansible-core 2.19's framing (seen with -e
    # validation_levels=l9); another plugin's error keeps it, which names what failed
    framed = ("Task failed: Finalization of task args for 'ansible.builtin.set_fact' failed: Error while resolving "
              "value for 'runner_survey': The filter plugin 'rlstack.validation.validation_survey' failed: "
              "validation_levels: 'l9' is not a level; choose among l0, l1")
    assert error_message({"msg": framed}) == "validation_levels: 'l9' is not a level; choose among l0, l1"
    other = framed.replace("rlstack.validation.validation_survey", "community.general.json_query")
    assert error_message({"msg": other}) == other
    # a loop: each failed item's sentence (Ansible's own "One or more items failed" says which none)
    loop = {"msg": "One or more items failed", "results": [
        {"msg": "Inventory 'a' could not\n import its hosts.", "failed": True}, {"msg": "ok", "failed": False},
        {"skipped": True}, {"module_stderr": "Traceback ...", "failed": True}]}
    assert error_message(loop) == "Inventory 'a' could not import its hosts.\nTraceback ..."
    assert text(con.failed("eks-a", error_message(loop))) == [
        "eks-a: Inventory 'a' could not import its hosts.", "eks-a: Traceback ..."]


def test_waits_print_after_first_after_s_then_every_interval():
    con = Console(interval_s=30, first_after_s=10)
    con.host_seen("eks")
    con.level_started("eks", {"id": "l3_multi_gpu", "level": "L3", "name": "Multi GPU / NCCL"}, 0.0)
    result = {"attempts": 2, "retries": 181, "resources": [], "gpu_minutes": 0.5}
    assert con.wait("eks", "k", result, "the launcher", 5.0, 10, 5.0) == []
    (line, kind), = con.wait("eks", "k", result, "the launcher", 12.0, 10, 12.0)
    assert line == "L3    waiting for the launcher: 12 s of at most 30 min 00 s (no pods yet), 0.5 GPU-min so far"
    assert kind == "WAIT"
    assert con.wait("eks", "k", result, "the launcher", 20.0, 10, 20.0) == []
    assert con.wait("eks", "k", result, "the launcher", 43.0, 10, 43.0)


def test_the_end_of_the_run_ends_an_open_level_and_says_an_unrecorded_failure():
    con = Console()
    con.host_seen("eks")
    con.level_started("eks", {"id": "local_checks", "level": "LOCAL", "name": "Local checks", "started": 1.0}, 1.0)
    con.verdict("eks", {"id": "local_checks", "status": "PASS"}, 2.0)
    con.failed("eks", "the API server stopped answering")
    assert text(con.finish(3.0)) == ["LOCAL  Local checks: PASS in 2 s", "eks: the API server stopped answering"]


def test_a_debug_message_is_printed_as_it_is():
    con = Console()
    con.host_seen("eks")
    assert con.message("eks", ["3 findings:", "", "  a.yml:1 x"]) == [("3 findings:", None), ("  a.yml:1 x", None)]
    assert con.message("eks", "Cleanup of L3: gone\nsecond") == [("Cleanup of L3: gone", None), ("second", None)]


def test_lines_are_wrapped_only_on_a_terminal_that_is_someones(monkeypatch):
    import io
    import os

    from ansible_collections.rlstack.validation.plugins.plugin_utils import _console

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("AWX_ISOLATED_DATA_DIR", raising=False)
    monkeypatch.setattr(_console.sys, "stdout", io.StringIO())
    assert _console.terminal_width() is None  # piped: a CI log keeps whole lines
    monkeypatch.setattr(_console.sys, "stdout", Tty())
    monkeypatch.setattr(_console.shutil, "get_terminal_size", lambda: os.terminal_size((80, 24)))
    assert _console.terminal_width() == 80
    monkeypatch.setenv("AWX_ISOLATED_DATA_DIR", "/runner/artifacts/1")  # ansible-runner's pty is no one's terminal
    assert _console.terminal_width() is None


def test_a_rescue_that_fails_with_the_rescued_sentence_says_it_once():
    # the plan's read of the cluster fails with the API guard's sentence; its rescue fails the play with the same
    con = Console()
    con.host_seen("eks")
    down = "The Kubernetes API server of cluster eks (https://127.0.0.1:1) did not answer GET /version within 33 s"
    assert text(con.failed("eks", down)) == ["eks: " + down]
    assert con.failed("eks", down) == []
    # another sentence is said
    assert text(con.failed("eks", "Cannot use the Kubernetes API of eks (403).")) == [
        "eks: Cannot use the Kubernetes API of eks (403)."]
