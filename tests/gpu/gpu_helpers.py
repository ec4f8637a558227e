"""Helpers for the GPU tests of the probes (a plain module: conftest names clash across folders)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROBES = {
    "node": os.path.join(ROOT, "roles", "l0_infrastructure", "files", "probe_node.py"),
    "runtime": os.path.join(ROOT, "roles", "l1_runtime", "files", "probe_runtime.py"),
    "model": os.path.join(ROOT, "roles", "l2_single_gpu", "files", "probe_model.py"),
    "multigpu": os.path.join(ROOT, "roles", "l3_multi_gpu", "files", "probe_multigpu.py"),
    "sim_import": os.path.join(ROOT, "roles", "l4_rollout", "files", "probe_sim_import.py"),
}
FAKE_SIMS = os.path.join(HERE, "fake_sims")


class ProbeRun(object):
    def __init__(self, proc):
        self.rc, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.last_line = proc.stdout.rstrip("\n").split("\n")[-1]
        try:
            self.json = json.loads(self.last_line)
        except ValueError:
            self.json = None

    def __repr__(self):
        return "ProbeRun(rc=%r, stdout=...%r, stderr=...%r)" % (self.rc, self.stdout[-3000:], self.stderr[-3000:])


def run_probe(name, params, launcher=None, env=None, timeout=600):
    cmd = (launcher or [sys.executable]) + [PROBES[name], json.dumps(params)]
    full_env = dict(os.environ, NCCL_NVLS_ENABLE="0", HF_HUB_OFFLINE="1")
    full_env.update(env or {})
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=full_env, timeout=timeout, check=False)
    return ProbeRun(proc)
