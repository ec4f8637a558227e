# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which task results the interrupt_cleanup callback reads: only those that can concern the run's objects, so
Ansible does not convert every other result (a 256-node list, 8,000 checks) for it. The signal paths themselves
are proven against the simulated cluster (tests/faults, tests/sim/test_sim_interrupt.py), where the callback must
see the real tasks' actions to start its watchdog."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ansible_collections.rlstack.validation.plugins.callback import interrupt_cleanup


def task(data):
    """A task as a callback sees it: its action as the playbook names it, and its arguments."""
    (action, args), = data.items()
    return SimpleNamespace(action=action, args=args)


@pytest.mark.parametrize("data,reads", [
    ({"kubernetes.core.k8s": {"state": "present", "definition": {"kind": "Job"}}}, True),
    ({"k8s": {"state": "absent", "kind": "Job", "name": "anchor"}}, True),
    ({"rlstack.validation.objects_absent": {"namespace": "default"}}, True),
    ({"ansible.builtin.set_fact": {"runner_cleanup_auth": {"kubeconfig": "", "context": ""}}}, True),
    ({"ansible.builtin.set_fact": {"runner_gpu_node_objects": []}}, False),
    ({"kubernetes.core.k8s_info": {"kind": "Node"}}, False),
    ({"rlstack.validation.level_assert": {"id": "l0_infrastructure"}}, False),
    ({"rlstack.validation.pod_logs": {"namespace": "default"}}, False),
])
def test_only_results_that_can_concern_the_run_are_read(data, reads):
    assert interrupt_cleanup._may_concern_the_run(task(data)) is reads


def test_an_unread_result_is_never_converted():
    class Result:
        task = task({"kubernetes.core.k8s_info": {"kind": "Node"}})

        @property
        def _result(self):
            raise AssertionError("the result was read")

    interrupt_cleanup.CallbackModule().v2_runner_on_ok(Result())


@pytest.mark.parametrize("args,result,done", [
    # kubernetes.core.k8s deleting the anchor by name
    ({"state": "absent", "kind": "Job", "name": "rlsv-1-anchor"}, {}, True),
    ({"state": "absent", "kind": "Job", "name": "another"}, {}, False),
    # objects_absent removing the run's anchor (tasks/finish_run.yml): done only when nothing was left
    ({"label_selectors": ["rlstack.io/run-id=1", "app.kubernetes.io/component=anchor"]}, {"left": {}}, True),
    ({"label_selectors": ["rlstack.io/run-id=1", "app.kubernetes.io/component=anchor"]},
     {"left": {"Job": ["rlsv-1-anchor"]}, "timed_out": True}, False),
    # a level's cleanup
    ({"label_selectors": ["rlstack.io/run-id=1", "rlstack.io/level=l0_infrastructure"]}, {"left": {}}, False),
])
def test_the_watchdog_hears_that_the_run_removed_its_objects(args, result, done):
    sent = []
    callback = interrupt_cleanup.CallbackModule()
    callback._anchors["sim-eks"] = "rlsv-1-anchor"
    callback._send = sent.append

    class Result:
        task = task({"rlstack.validation.objects_absent" if "label_selectors" in args else "kubernetes.core.k8s": args})
        _result = dict(result, invocation={"module_args": args})
        _host = SimpleNamespace(get_name=lambda: "sim-eks")

    callback.v2_runner_on_ok(Result())
    assert sent == ([{"event": "done", "host": "sim-eks"}] if done else [])


def test_the_anchor_tells_the_watchdog_its_renewed_lease_and_image():
    anchor = {"result": {"kind": "Job", "metadata": {"annotations": {"rlstack.io/renewed-lease-s": "20"}},
                         "spec": {"template": {"spec": {"containers": [{"name": "anchor", "image": "img:1"}]}}}}}
    assert interrupt_cleanup._run_lease_of(anchor) == {"lease_s": 20, "image": "img:1"}
    # an anchor from before this setting, or one that asks for none: no renewed lease
    assert interrupt_cleanup._run_lease_of({"result": {"kind": "Job", "metadata": {}}})["lease_s"] == 0


@pytest.fixture
def sigint_handler():
    """Restores this process's SIGINT handler after a test that changes it."""
    saved = signal.getsignal(signal.SIGINT)
    yield signal
    signal.signal(signal.SIGINT, saved)


def test_a_ctrl_c_that_ansible_core_lost_stops_the_run_at_the_next_task(sigint_handler):
    # what TaskQueueManager does: a handler of its own from its creation; on SIGINT it resets the default first
    sigint_handler.signal(sigint_handler.SIGINT, lambda *_: None)
    callback = interrupt_cleanup.CallbackModule()
    callback.v2_playbook_on_play_start(None)
    callback.v2_playbook_on_task_start(None, False)  # armed, no interrupt: nothing happens
    sigint_handler.signal(sigint_handler.SIGINT, sigint_handler.SIG_DFL)  # the handler ran, its exception was lost
    with pytest.raises(KeyboardInterrupt):
        callback.v2_runner_on_start(None, None)


def test_a_default_handler_before_the_play_is_no_interrupt(sigint_handler):
    # ansible-playbook run with no handler installed (nothing armed): the default handler says nothing
    sigint_handler.signal(sigint_handler.SIGINT, sigint_handler.SIG_DFL)
    callback = interrupt_cleanup.CallbackModule()
    callback.v2_playbook_on_play_start(None)
    callback.v2_playbook_on_task_start(None, False)
    assert not interrupt_cleanup.interrupt_was_lost(False)


# A test-only callback that leaves the controller as a lost Ctrl-C does (ansible-core's handler ran: SIGINT back to
# the default; its KeyboardInterrupt swallowed) when the task named "lose" starts.
LOSE_CALLBACK = '''
import signal
from ansible.plugins.callback import CallbackBase
class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "lose_interrupt"
    def v2_playbook_on_task_start(self, task, is_conditional):
        if task.get_name() == "lose":
            signal.signal(signal.SIGINT, signal.SIG_DFL)
'''
PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - {name: lose, ansible.builtin.debug: {msg: one}}
    - {name: two, ansible.builtin.debug: {msg: two}}
    - {name: three, ansible.builtin.debug: {msg: three}}
'''


def test_ansible_playbook_ends_as_interrupted_after_a_lost_ctrl_c(tmp_path):
    (tmp_path / "cb").mkdir()
    (tmp_path / "cb" / "lose_interrupt.py").write_text(LOSE_CALLBACK)
    (tmp_path / "book.yml").write_text(PLAYBOOK)
    root = Path(__file__).resolve().parents[4]
    env = {"PATH": "%s:/usr/bin:/bin" % Path(sys.executable).parent, "HOME": str(tmp_path), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_CONFIG": str(root / "ansible.cfg"), "ANSIBLE_CALLBACK_PLUGINS": str(tmp_path / "cb"),
           "ANSIBLE_CALLBACKS_ENABLED": "lose_interrupt,rlstack.validation.interrupt_cleanup",
           "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default", "RLSTACK_REPORT_DIR": str(tmp_path / "report")}
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           str(tmp_path / "book.yml")], cwd=str(root), env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert "User interrupted execution" in out, out
    assert "Ctrl-C was received while ansible-core could not act on it" in out, out
    assert '"msg": "three"' not in out, out
    assert proc.returncode == 99, out


# A controller whose SIGINT handler, like ansible-core's, sets the default back, and then never gets out of the
# shutdown it starts (the hang seen once in the fault suite: no "User interrupted execution", killed 60 s later).
HANGING_CONTROLLER = '''
import signal, threading, time
from ansible_collections.rlstack.validation.plugins.callback import interrupt_cleanup
def hang(signum, frame):
    signal.signal(signum, signal.SIG_DFL)
    threading.Event().wait()
signal.signal(signal.SIGINT, hang)
assert interrupt_cleanup.bound_the_stop_after_ctrl_c(1.0)
assert not interrupt_cleanup.bound_the_stop_after_ctrl_c(1.0)  # once per process
print("ready", flush=True)
time.sleep(60)
'''


def test_a_controller_that_hangs_after_ctrl_c_is_ended_within_the_bound():
    proc = subprocess.Popen([sys.executable, "-c", HANGING_CONTROLLER], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read()
    assert rc == interrupt_cleanup.INTERRUPTED_RC, err
    assert "did not stop within 1 s of Ctrl-C" in err and "the interrupt watchdog deletes" in err, err
    assert took < 20, took


def test_the_watchdog_finds_kubernetes_core_without_importing_the_client():
    # in a fresh interpreter: this test process may have imported the kubernetes package already
    code = ("import os, sys\n"
            "from ansible.plugins.loader import init_plugin_loader\n"
            "init_plugin_loader()\n"
            "from ansible_collections.rlstack.validation.plugins.callback import interrupt_cleanup\n"
            "root = interrupt_cleanup._collections_root()\n"
            "print(os.path.isdir(os.path.join(root, 'ansible_collections', 'kubernetes', 'core')),"
            " 'kubernetes' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[4]))
    assert out.stdout.split() == ["True", "False"], out.stderr
