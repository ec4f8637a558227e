# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_log_excerpt.py on real logs (provenance in the fixtures' SOURCES.md)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _log_excerpt as ex

REPO = Path(__file__).resolve().parents[4]
FRAMEWORK_LOGS = REPO / "tests" / "unit" / "fixtures" / "frameworks"
NCCL_LOGS = REPO / "tests" / "unit" / "fixtures" / "nccl"
SIM_LOGS = REPO / "sim" / "replay" / "logs"
# The made-up secrets the recorded raise-in-step.log printed (tests/unit/fixtures/frameworks/SOURCES.md).
HF_TOKEN = "hf_FAKEexampleTOKEN0123456789abcdefgh"
WANDB_KEY = "0123456789abcdef0123456789abcdef01234567"
STORE_PASSWORD = "Tr0ub4dor-and-3"


def _read(path):
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")


def test_real_trl_crash_shows_the_frame_code_and_exception_then_the_last_lines():
    out = ex.excerpt(_read(FRAMEWORK_LOGS / "trl" / "trl-train-crash.log.gz"))
    assert out[0].startswith('  File "') and out[0].endswith('trl_grpo_one_step.py", line 56, in target_fraction')
    assert out[1] == '    raise RuntimeError("reward function failed inside the training step (--crash_in_step)")'
    assert out[2] == "RuntimeError: reward function failed inside the training step (--crash_in_step)"
    assert out[3] == "last 20 lines of the log:"
    assert len(out) == 4 + 20 and out[-1] == "rc=1"


def test_real_python_traceback_skips_the_caret_lines_and_redacts_the_printed_secrets():
    log = _read(FRAMEWORK_LOGS / "python" / "raise-in-step.log")
    assert HF_TOKEN in log and WANDB_KEY in log
    out = ex.excerpt(log, {"HF_TOKEN": HF_TOKEN, "WANDB_API_KEY": WANDB_KEY, "STORE_PASSWORD": STORE_PASSWORD,
                           "PATH": "/usr/bin"})
    assert out[:3] == ['  File "/work/wt/l5/tests/frameworks/raise_in_step.py", line 15, in reward',
                       '    raise ValueError("reward model returned NaN at step %d (--crash_in_step)" % step)',
                       "ValueError: reward model returned NaN at step 1 (--crash_in_step)"]
    assert "config: steps=1 hf_token=[redacted]" in out
    assert "config: wandb_api_key=[redacted]" in out
    assert "connecting to the dataset store as trainer/[redacted]" in out
    assert not any(HF_TOKEN in line or WANDB_KEY in line or STORE_PASSWORD in line for line in out)
    assert not any(set(line.strip()) <= set("^") for line in out[:3])  # the traceback part skips the ^^^ lines


def test_the_token_shapes_go_without_the_environment():
    out = ex.excerpt(_read(FRAMEWORK_LOGS / "python" / "raise-in-step.log"))
    assert "config: steps=1 hf_token=[redacted]" in out and "config: wandb_api_key=[redacted]" in out
    # a password of no known shape goes only when the run's environment names it
    assert "connecting to the dataset store as trainer/" + STORE_PASSWORD in out


def test_real_torch_nccl_failure_gives_the_rank_traceback_and_the_first_nccl_warn():
    out = ex.excerpt(_read(NCCL_LOGS / "efa-cm-req-handle-error-unresponsive-receiver-torch.log"))
    assert out[0].startswith('[rank0]:   File "/usr/local/lib/python3.12/site-packages/torch/distributed/'
                             'distributed_c10d.py", line 2824, in broadcast')
    assert out[1] == "[rank0]:     work = group.broadcast([tensor], opts)"
    assert out[2].startswith("[rank0]: torch.distributed.DistBackendError: NCCL error in: ")
    assert "NCCL WARN NET/OFI Request" in out[3] and out[3].startswith("[2026-01-01 12:08:32]")
    assert out[4] == "last 20 lines of the log:"


def test_real_nccl_tests_segfault_has_no_traceback_but_its_signal_line():
    out = ex.excerpt(_read(SIM_LOGS / "l3-nccl-crash.log"), last=3)
    assert "Caught signal 11 (Segmentation fault" in out[0]
    assert out[1] == "last 3 lines of the log:" and len(out) == 5


def test_a_healthy_log_has_only_its_last_lines():
    out = ex.excerpt(_read(FRAMEWORK_LOGS / "rlinf" / "rlinf-train-one-step.log"), last=2)
    assert out[0] == "last 2 lines of the log:" and len(out) == 3
    assert ex.excerpt("") == [] and ex.excerpt(None) == []


def test_chained_exceptions_end_with_the_last_one():
    log = "\n".join(["Traceback (most recent call last):", '  File "a.py", line 1, in f', "    g()",
                     "KeyError: 'x'", "", "During handling of the above exception, another exception occurred:", "",
                     "Traceback (most recent call last):", '  File "a.py", line 3, in f', "    raise RuntimeError(1)",
                     "RuntimeError: 1"])
    assert ex.traceback_tail(ex.log_lines(log)) == ['  File "a.py", line 3, in f', "    raise RuntimeError(1)",
                                                    "RuntimeError: 1"]


def test_ray_prefixes_are_read_through():
    lines = ["(TaskRunner pid=4242, ip=10.0.0.7) Traceback (most recent call last):",
             '(TaskRunner pid=4242, ip=10.0.0.7)   File "main_ppo.py", line 9, in run',
             "(TaskRunner pid=4242, ip=10.0.0.7)     trainer.fit()",
             "(TaskRunner pid=4242, ip=10.0.0.7) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    assert ex.traceback_tail(lines) == lines[1:]
    assert ex.first_error_line(lines) == lines[3]


@pytest.mark.parametrize("text,env,expected", [
    ("key AKIAIOSFODNN7EXAMPLE used", {}, "key [redacted] used"),
    ("Authorization: Bearer abcdef123456.xyz", {}, "Authorization: Bearer [redacted]"),
    ("clone https://bob:pa55word@github.com/x", {}, "clone https://[redacted]@github.com/x"),
    ("token ghp_" + "a" * 36, {}, "token [redacted]"),
    ("MY_SECRET=abcdefgh rest", {}, "MY_SECRET=[redacted] rest"),
    ("wandb_api_key=\nconnecting as bob", {}, "wandb_api_key=\nconnecting as bob"),  # an empty value, a whole log
    ('{"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG"}', {}, '{"aws_secret_access_key": "[redacted]"}'),
    ("pad_token=<|endoftext|> num_tokens=100000", {}, "pad_token=<|endoftext|> num_tokens=100000"),
    ("loaded plainvalue99 from s3", {"DB_PASSWORD": "plainvalue99"}, "loaded [redacted] from s3"),
    ("port 6379 and steps 100", {"API_KEY": "6379", "NODES": "2"}, "port 6379 and steps 100"),  # too short
    ("ok", [{"name": "HF_TOKEN", "value": "x" * 8}, {"name": "FROM_SECRET", "valueFrom": {}}], "ok"),
])
def test_redact(text, env, expected):
    assert ex.redact(text, ex.secret_values(env)) == expected


def test_secret_names():
    names = {"HF_TOKEN": 1, "AWS_SECRET_ACCESS_KEY": 1, "AWS_ACCESS_KEY_ID": 1, "AWS_SESSION_TOKEN": 1,
             "WANDB_API_KEY": 1, "DB_PASSWORD": 1, "GITHUB_AUTH": 1, "SSH_KEY": 1,
             "PATH": 0, "RLSTACK_NODES": 0, "NCCL_DEBUG": 0, "KEYBOARD": 0, "HOME": 0}
    assert {n: int(bool(ex.SECRET_NAME.search(n))) for n in names} == names


def test_long_lines_are_cut():
    assert ex.excerpt("x" * 1000, last=1)[1] == "x" * 297 + "..."
