"""Print the lines RLinf's Cluster logs when its Ray cluster comes up, with RLinf's own code (no Ray needed).

RLinf 0.3.0 (rlinf/scheduler/cluster/cluster.py, Cluster._init_and_launch_managers, lines 355-374) logs,
through the logger that Cluster._setup_logger (lines 213-227) sets up:
- while fewer Ray nodes are alive than cluster.num_nodes, once a second:
  `Waiting for {num_nodes} nodes to be ready, currently {alive} nodes available.` (WARNING)
- then `RLinf is running on a cluster with {nodes} node(s) and {accelerators} accelerator(s). The nodes'
  details are: ` (INFO), followed by the YAML of each node and node group.
Those calls need a live Ray cluster, so this script reads that file (give its path: an unpacked
`pip download --no-deps rlinf==0.3.0` wheel), takes the logging.Formatter arguments, the SYS_NAME and
the two f-string expressions from its syntax tree, evaluates them with the cluster's numbers and logs
them through logging with that formatter. Only each message's first line is printed: the node and
node-group YAML that follows the second needs Ray's node table and is left out.

Usage: rlinf_cluster_lines.py CLUSTER_PY NODES ACCELERATORS_PER_NODE [ALIVE_WHILE_WAITING]
"""
from __future__ import annotations

import ast
import logging
import sys
import types


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node


def _text(node):
    return ast.unparse(node)


def main(argv):
    path, nodes, per_node = argv[1], int(argv[2]), int(argv[3])
    alive = int(argv[4]) if len(argv) > 4 else None
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    sys_name = next(ast.literal_eval(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "SYS_NAME" for t in n.targets))
    formatter = next(c for c in _calls(tree) if c.func.attr == "Formatter")
    kwargs = {k.arg: ast.literal_eval(k.value) for k in formatter.keywords}
    logged = {c.func.attr: c.args[0] for c in _calls(tree)
              if c.func.attr in ("warning", "info") and c.args and ("Waiting for" in _text(c.args[0])
                                                                    and "nodes to be ready" in _text(c.args[0])
                                                                    or "is running on a cluster" in _text(c.args[0]))}
    cluster = types.SimpleNamespace(SYS_NAME=sys_name, get_alive_nodes=lambda: [None] * (alive or 0))
    this = types.SimpleNamespace(_num_nodes=nodes, _nodes=[None] * nodes, _node_groups=[],
                                 num_accelerators=nodes * per_node)
    logger = logging.getLogger(sys_name)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(**kwargs))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    scope = {"Cluster": cluster, "self": this, "len": len, "str": str}
    if alive is not None:
        message = eval(compile(ast.Expression(logged["warning"]), path, "eval"), scope)  # pylint: disable=eval-used
        logger.warning(message.split("\n")[0])
    message = eval(compile(ast.Expression(logged["info"]), path, "eval"), scope)  # pylint: disable=eval-used
    logger.info(message.split("\n")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
