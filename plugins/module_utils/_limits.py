# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one home of the run's thresholds and defaults that are not NCCL-specific (NCCL floors: _nccl*.py).

Standard library only. Python reads the constants directly; task files and templates read them through
the `rlstack.validation.limit` and `rlstack.validation.job_deadline_s` filters. Argument specs and
`defaults/main.yml` files must hold literals: tests/unit/plugins/module_utils/test_limits.py keeps those
copies and the table "Where thresholds live" in docs/verdicts.md equal to LIMITS.
"""

from __future__ import annotations

# Smallest activeDeadlineSeconds of a Job: first pulls of 15-20 GB images take 5-10 minutes (seed pitfall 3).
JOB_DEADLINE_FLOOR_S = 600
# activeDeadlineSeconds of an L5/L6 Job when the level does not set one.
JOB_DEADLINE_S = 3600
# How long ImagePullBackOff / Unschedulable / CreateContainerConfigError may last before a wait stops on it:
# a cluster autoscaler may be adding the node the pod waits for.
PROBLEM_GRACE_S = 45
# Longest wait for probe pods to start (first pulls of 15-20 GB images take 5-10 minutes).
START_TIMEOUT_S = 900
# Added to each wait's own bound in the run's lease (the anchor Job's deadline, runner/tasks/lease.yml).
LEASE_MARGIN_S = 600
# The run's short lease, renewed by the interrupt watchdog every 2 s while the run lives
# (plugins/plugin_utils/_run_lease.py): an AWX cancel kills the watchdog too, and the run's objects must be gone
# within 30 s of it (25 s + the Job, TTL and garbage collector controllers, about 1 s), while a control-plane restart
# must not end a live run: etcd killed and back 10 s later leaves the API server unable to write for 15 to 18 s
# (its etcd client's reconnect backoff; docs/reliability.md), which a 20-s lease renewed every 5 s did not always
# survive (the Job controller failed the lease first).
RENEWED_LEASE_S = 25
# How long the objects of a failed level stay with validation_keep_failed.
KEEP_FAILED_S = 14400
# Slack on top of a probe's own watchdog for its pod to end and its log to be read (runner/tasks/probe_kubernetes.yml).
PROBE_SLACK_S = 120
# tolerationSeconds of the probe pods for the NoExecute taints node.kubernetes.io/unreachable and not-ready: a node
# lost mid-probe (kubelet down, instance stopped) gets them after kube-controller-manager's node-monitor grace
# period (50 s), and the taint eviction controller then deletes the probe pod within this, which ends the level's
# wait (the default 300 s that the DefaultTolerationSeconds admission plugin adds held it to its whole bound).
LOST_NODE_TOLERATION_S = 30
# Baselines (_baseline.py, docs/baselines.md): a level may take this much longer than the baseline's time on top of
# BASELINE_TIME_TOLERANCE (a short level's time is mostly pod start-up, which varies by tens of seconds).
BASELINE_TIME_SLACK_S = 60
# busbw is compared with the baseline from this message size up: smaller sizes measure latency, not bandwidth.
BASELINE_MIN_SIZE_BYTES = 1 << 20
# A busbw more than this fraction below the baseline's at the same size is a regression: the example (15%)
# must be caught while the floors (_nccl_catalog.py) keep judging the absolute value.
BASELINE_BUSBW_TOLERANCE = 0.10
# A level more than this fraction (plus BASELINE_TIME_SLACK_S) slower than in the baseline is a regression.
BASELINE_TIME_TOLERANCE = 0.50
# Smallest locked-memory limit (RLIMIT_MEMLOCK, soft, KiB) a container on an EFA node must have; 0 means unlimited,
# as libfabric's EFA provider docs ask ("unlimited is fine", prov/efa/docs/overview.md) and AWS's note on
# "Libfabric error: (-12) Cannot allocate memory" says (awslabs/awsome-distributed-ai #647: 65536 was too low).
EFA_MEMLOCK_MIN_KIB = 0

# name -> value, as the `limit` filter and the tests read them.
LIMITS = {
    "job_deadline_floor_s": JOB_DEADLINE_FLOOR_S,
    "job_deadline_s": JOB_DEADLINE_S,
    "problem_grace_s": PROBLEM_GRACE_S,
    "start_timeout_s": START_TIMEOUT_S,
    "lease_margin_s": LEASE_MARGIN_S,
    "renewed_lease_s": RENEWED_LEASE_S,
    "keep_failed_s": KEEP_FAILED_S,
    "probe_slack_s": PROBE_SLACK_S,
    "lost_node_toleration_s": LOST_NODE_TOLERATION_S,
    "baseline_time_slack_s": BASELINE_TIME_SLACK_S,
    "baseline_min_size_bytes": BASELINE_MIN_SIZE_BYTES,
    "efa_memlock_min_kib": EFA_MEMLOCK_MIN_KIB,
}
# Limits whose 0 has a meaning (not "none"): efa_memlock_min_kib 0 asks for unlimited.
ZERO_MEANS = {"efa_memlock_min_kib": "unlimited"}
# name -> fraction (0 to 1), read the same way as LIMITS.
TOLERANCES = {
    "baseline_busbw_tolerance": BASELINE_BUSBW_TOLERANCE,
    "baseline_time_tolerance": BASELINE_TIME_TOLERANCE,
}


class LimitError(ValueError):
    """An unknown limit name or a value that is not a number of seconds."""


def limit(name):
    """The value of one limit by its name in LIMITS; LimitError names the known ones otherwise."""
    known = dict(LIMITS, **TOLERANCES)
    try:
        return known[str(name)]
    except KeyError:
        raise LimitError("unknown limit %r; known: %s" % (name, ", ".join(sorted(known)))) from None


def grace_s(value=None):
    """The problem grace period in seconds: `value` when given, else PROBLEM_GRACE_S."""
    if value is None or value == "":
        return float(PROBLEM_GRACE_S)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise LimitError("the problem grace period must be a number of seconds, not %r" % (value,)) from None


def job_deadline_s(value=None):
    """A Job's activeDeadlineSeconds: `value` (JOB_DEADLINE_S when None or empty), at least JOB_DEADLINE_FLOOR_S."""
    if value is None or value == "":
        value = JOB_DEADLINE_S
    try:
        seconds = int(float(value))
    except (TypeError, ValueError):
        raise LimitError("a Job deadline must be a number of seconds, not %r" % (value,)) from None
    return max(seconds, JOB_DEADLINE_FLOOR_S)
