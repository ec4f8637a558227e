# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the cluster modules end (plugins/module_utils/k8s/_module_end.py): their result, or one sentence."""
from __future__ import annotations

import json
import types

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _module_end


class ApiException(Exception):
    def __init__(self, status, message):
        super().__init__("(%s)\nReason: Forbidden\nHTTP response headers: ..." % status)
        self.status = status
        self.body = json.dumps({"kind": "Status", "message": message})


class CoreException(Exception):
    pass


class APIUnreachableError(Exception):
    """Named as the API guard's (sitecustomize loads it under its own name)."""


KUBERNETES = types.SimpleNamespace(client=types.SimpleNamespace(exceptions=types.SimpleNamespace(ApiException=ApiException)))


class Ended(Exception):
    pass


class Module:
    def __init__(self):
        self.ended = None

    def exit_json(self, **result):
        self.ended = ("exit", result)
        raise Ended()

    def fail_json(self, **result):
        self.ended = ("fail", result)
        raise Ended()

    def fail_from_exception(self, exc):
        self.ended = ("core", str(exc))
        raise Ended()


def ended(call):
    module = Module()
    with pytest.raises(Ended):
        _module_end.end(module, KUBERNETES, CoreException, call, "the Jobs in namespace ns")
    return module.ended


def raising(exc, cause=None):
    def call():
        if cause is not None:
            raise exc from cause
        raise exc
    return call


def test_a_result_exits_and_each_failure_is_one_sentence():
    assert ended(lambda: {"finished": True}) == ("exit", {"finished": True})
    refused = ApiException(403, 'jobs.batch is forbidden: User "ci" cannot create resource "jobs"')
    assert ended(raising(_module_end.StartFailed("x"), refused)) == ("fail", {
        "msg": 'the Jobs in namespace ns: (403) jobs.batch is forbidden: User "ci" cannot create resource "jobs"',
        "start_failed": True})
    # a start failure that carries its own sentence and fields (probe_run's refused pods)
    fields = {"created": ["p0"], "refused": [{"name": "p1", "error": "quota"}]}
    assert ended(raising(_module_end.StartFailed("1 of 2 pods could not be created", fields))) == (
        "fail", dict(fields, msg="1 of 2 pods could not be created", start_failed=True))
    assert ended(raising(ValueError("unknown framework 'x'"))) == ("fail", {"msg": "unknown framework 'x'"})
    assert ended(raising(CoreException("no kubeconfig"))) == ("core", "no kubeconfig")
    assert ended(raising(ApiException(500, "etcdserver: request timed out"))) == (
        "fail", {"msg": "the Jobs in namespace ns: (500) etcdserver: request timed out"})
    assert ended(raising(APIUnreachableError("The Kubernetes API server did not answer"))) == (
        "fail", {"msg": "The Kubernetes API server did not answer"})


def test_anything_else_is_a_defect_and_raises():
    with pytest.raises(KeyError):
        _module_end.end(Module(), KUBERNETES, CoreException, raising(KeyError("x")), "what")
    assert _module_end.unreachable(APIUnreachableError()) and not _module_end.unreachable(RuntimeError())
