# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which task results the interrupt_cleanup callback reads: only those that can concern the run's objects, so
Ansible does not convert every other result (a 256-node list, 8,000 checks) for it. The signal paths themselves
are proven against the simulated cluster (tests/faults, tests/sim/test_sim_interrupt.py), where the callback must
see the real tasks' actions to start its watchdog."""

from __future__ import annotations

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


def test_the_anchor_tells_the_watchdog_its_renewed_lease_and_image():
    anchor = {"result": {"kind": "Job", "metadata": {"annotations": {"rlstack.io/renewed-lease-s": "20"}},
                         "spec": {"template": {"spec": {"containers": [{"name": "anchor", "image": "img:1"}]}}}}}
    assert interrupt_cleanup._run_lease_of(anchor) == {"lease_s": 20, "image": "img:1"}
    # an anchor from before this setting, or one that asks for none: no renewed lease
    assert interrupt_cleanup._run_lease_of({"result": {"kind": "Job", "metadata": {}}})["lease_s"] == 0
