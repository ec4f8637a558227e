# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How the collection's cluster modules end (probe_run, job_run, mpijob_run, objects_absent; standard library only:
the module passes in the client package and kubernetes.core's CoreException): with their result, or with one sentence
that says what failed and where, never a traceback."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_batch import api_message


class StartFailed(Exception):
    """A call of a workload's start (the lease, a ConfigMap, a Service, a Job, an MPIJob) failed past the API guard's
    retries: a refusal (quota, PodSecurity, an admission webhook, a missing permission) or an API server that stayed
    away. The cause is the client's exception. Not worth another attempt: the task ends on it (start_failed), where a
    failed wait is tried again. `fields` are returned with the failure."""

    def __init__(self, message, fields=None):
        super().__init__(message)
        self.fields = fields or {}


def unreachable(exc):
    """Whether `exc` is the API guard's one sentence for an API server that stayed away (sitecustomize loads the guard
    under its own name, so the class is matched by name)."""
    return type(exc).__name__ == "APIUnreachableError"


def end(module, kubernetes, core_exception, call, what):
    """Exit `module` with call()'s result, or fail with one sentence: a failed start (StartFailed) with start_failed,
    a bad input (ValueError) as it is, kubernetes.core's own errors its way, an API refusal as "<what>: <the API
    server's sentence>", the API guard's sentence as it is. Anything else is a defect and raises."""
    try:
        module.exit_json(**call())
    except StartFailed as exc:
        cause = exc.__cause__
        text = api_message(cause) if isinstance(cause, kubernetes.client.exceptions.ApiException) else str(exc)
        module.fail_json(msg=str(exc) if exc.fields else "%s: %s" % (what, text), start_failed=True, **exc.fields)
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    except core_exception as exc:
        module.fail_from_exception(exc)
    except kubernetes.client.exceptions.ApiException as exc:
        module.fail_json(msg="%s: %s" % (what, api_message(exc)))
    except Exception as exc:  # pylint: disable=broad-except
        if not unreachable(exc):
            raise
        module.fail_json(msg=str(exc))
