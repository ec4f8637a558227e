# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad input is refused before anything is created: validate.yml against the simulated cluster with a few
representative bad settings, a tag that selects no level and a survey answer that names none (the full space of
values is the property test of
tests/unit/plugins/plugin_utils/test_settings.py) exits 2 with one sentence per bad setting, no traceback,
no argument-spec dump, and the namespace it would have created does not exist afterwards. ~10 s each."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("bad,args,sentence", [
    ({"l0_infrastructure_timeout_s": "banana"}, [],
     'l0_infrastructure_timeout_s is "banana", but it must be an integer from 1 to 604800.'),
    ({"validation_start_timeout_s": -5}, [],
     "validation_start_timeout_s is -5, but it must be an integer from 1 to 604800."),
    ({"validation_tolerations": {"key": "nvidia.com/gpu"}}, [],
     'validation_tolerations is {"key": "nvidia.com/gpu"}, but it must be a list of dicts (mappings).'),
    ({"l5_training_step_examples": "x" * 10240}, [],
     'l5_training_step_examples is "' + "x" * 59 + "... (10242 characters), but it must be a list of dicts (mappings)."),
    # a misspelt key was ignored (L0 passed on the profile's count); a floor that is not a number failed L3 after
    # its MPIJob had run
    ({"l0_infrastructure_expected": {"gpu_cont": 4}}, [], "l0_infrastructure_expected has key gpu_cont, but its keys "
     "are cuda_version, driver_version, efa_count, gpu_count, gpu_memory_mib_min, gpu_name_pattern, nvlink_per_gpu, "
     "nvswitch, pcie_gen, pcie_width."),
    ({"l3_multi_gpu_min_busbw": [{"size": "1G", "floor": "fast"}]}, ["--tags", "l3"],
     'l3_multi_gpu_min_busbw[0].floor is "fast", but it must be a number from 0 to 1e+15.'),
    # Ansible runs nothing for a tag no task has: the run said "0/10 passed, 10 skipped" and exit code 0
    ({}, ["--tags", "l7"], "--tags l7: this tag selects no level. The tags are l0, dcgm, l1, l2, l3, phase0, l3_5, "
     "l4, l5, l6, isolate, and from_<tag> for a level and every one after it (from_l3)."),
    # the survey filter's own sentence, without ansible-core's "Task failed: Finalization of task args ..."
    ({"validation_levels": "l9"}, [], "validation_levels: 'l9' is not a level; choose among l0, l1, l2, l3, phase0, "
     "l4, l5, l6"),
], ids=["banana", "negative", "dict-for-list", "10kB-string", "misspelt-key", "floor-not-a-number", "unknown-tag",
        "survey-level"])
def test_bad_input_is_one_sentence_and_creates_nothing(core, batch, tmp_path, bad, args, sentence):
    namespace = "rlsv-bad-" + uuid.uuid4().hex[:6]
    run_id = "bad-" + uuid.uuid4().hex[:6]
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    extra = dict(bad, validation_kubeconfig=str(simkit.KUBECONFIG), validation_namespace=namespace,
                 validation_run_id=run_id, validation_report_dir=str(tmp_path / "report"))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", "inventories/sim", "-e", json.dumps(extra)] + args,
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert sentence in out
    assert "Traceback" not in out and "argument_spec" not in out and "argument_errors" not in out
    # one sentence naming the cluster and the setting, without Ansible's task frame (docs/console.md)
    assert "sim-eks: " + sentence in out and "Origin:" not in out and "TASK [" not in out
    assert len(out) < 8000, "the error should be a few lines, not a dump"
    assert namespace not in [ns.metadata.name for ns in core.list_namespace().items]
    assert not batch.list_job_for_all_namespaces(label_selector="rlstack.io/run-id=" + run_id).items
    assert not core.list_pod_for_all_namespaces(label_selector="rlstack.io/run-id=" + run_id).items
