"""`python3` inside a simulated pod: replays what a probe printed on a real GPU machine.

kwok runs `exec` commands on this machine; the node runtime (simctl.py runtime) puts a directory in
front of PATH whose `python3` is this script. It finds the probe by its file name, picks the recording
for the pod's node and the active scenario, prints it and exits with the recorded exit code.
Lookup: probes/<probe>/<variant>/<node>.out, then <instance-type>.out, then default.out, where the
variant comes from sim/scenarios.yaml (`replay:`, as simctl.py wrote it to $SIM_STATE/replay.json for the
active scenario) and is `healthy` otherwise; `probe_duration_s:` makes a probe sleep that long first.
"""
import json
import os
import sys
import time
from pathlib import Path

SIM = Path(__file__).resolve().parent


def active(state: Path) -> dict:
    """The active scenario's replay table and probe durations (simctl.py apply_scenario writes replay.json)."""
    try:
        return json.loads((state / "replay.json").read_text())
    except (OSError, ValueError):
        return {}


def node_variant(per_node: dict, node: str) -> str:
    """The variant a scenario gives `node`: an exact name first, then a key that lists it or matches it.

    A key is a node name, a comma-separated list of names, a shell pattern (`p5-node-1?`) or `*`, so a
    scenario can target any node or set of nodes of a cluster grown with SIM_NODES.
    """
    import fnmatch
    if node in per_node:
        return per_node[node]
    for key, variant in per_node.items():
        if key != "*" and any(fnmatch.fnmatchcase(node, part.strip()) for part in str(key).split(",")):
            return variant
    return per_node.get("*") or "healthy"


def adapt(text, probe, params, node):
    """What the probe would print for this pod: its node name, and (L1) only the imports it was asked for."""
    lines = text.rstrip("\n").split("\n")
    try:
        data = json.loads(lines[-1])
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    if node and "node" in data:
        data["node"] = node
    if probe == "probe_runtime" and isinstance(params.get("imports"), list):
        recorded = data.get("imports") or {}
        missing = {"ok": False, "version": None, "error_type": "ReplayError", "timed_out": False, "file": None,
                   "import_s": 0.0, "error": "not in the recording this replay comes from (it has: %s)"
                   % ", ".join(sorted(recorded))}
        data["imports"] = {name: recorded.get(name, missing) for name in params["imports"]}
        data["imports_ok"] = all(v.get("ok") for v in data["imports"].values())
    lines[-1] = json.dumps(data)
    return "\n".join(lines) + "\n"


def answer(argv, env):
    """What `python3 ARGV` prints in a pod with environment `env`: (stdout, stderr, exit code). The node runtime calls
    this in its own process for a probe pod (sim/node_runtime.py, replayed()); main() prints it."""
    script = next((a for a in argv if a.endswith(".py")), "")
    probe = Path(script).stem
    if not probe:
        return "", f"sim: no recording for `python3 {' '.join(argv)}` (only probe scripts are replayed)\n", 127
    node = env.get("SIM_NODE", "")
    itype = env.get("SIM_INSTANCE_TYPE", "")
    state = Path(env.get("SIM_STATE", SIM.parent / ".sim"))
    scenario = active(state)
    base = SIM / "replay" / "probes" / probe
    # A scenario may make a probe take this long on every node (a slow import, a pod to evict mid-probe).
    time.sleep(float((scenario.get("probe_duration_s") or {}).get(probe) or 0))
    chosen = node_variant((scenario.get("replay") or {}).get(probe) or {}, node)
    for variant in dict.fromkeys([chosen, "healthy"]):
        for name in (node, itype, "default"):
            out = base / variant / f"{name}.out"
            if name and out.exists():
                index = argv.index(script)
                try:
                    params = json.loads(argv[index + 1]) if len(argv) > index + 1 else {}
                except ValueError:
                    params = {}
                rc_file = out.with_suffix(".rc")
                return (adapt(out.read_text(), probe, params if isinstance(params, dict) else {}, node), "",
                        int(rc_file.read_text().strip()) if rc_file.exists() else 0)
    return "", f"sim: no recording of probe {probe} for node {node} ({itype}) in {base}\n", 127


def main(argv):
    stdout, stderr, rc = answer(argv, os.environ)
    sys.stdout.write(stdout)
    sys.stdout.flush()
    sys.stderr.write(stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
