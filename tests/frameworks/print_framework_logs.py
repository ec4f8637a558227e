"""Print RLinf's and veRL's log lines with the frameworks' own printing code (no training).

Neither framework can run one real step on this CPU machine (RLinf's embodied runner needs a VLA and a
simulator; veRL 0.9 needs vLLM/SGLang for its rollout), so these fixtures are produced by installing
the released wheels (rlinf 0.3.0, verl 0.9.1, --no-deps plus what the printing modules import) and
calling the functions their runners call at those points:

- RLinf training table: rlinf.utils.metric_utils.print_metrics_table(step, total_steps, ...), called by
  EmbodiedRunner.run() once per step (rlinf/runners/embodied_runner.py:447 in 0.3.0) with
  total_steps = self.max_steps (set_max_steps, :654-659).
- RLinf evaluation: rlinf.utils.metric_utils.compute_evaluate_metrics over per-env tensors, prefixed
  `eval/` and logged with rlinf.utils.logging.get_logger().info(...), as EmbodiedEvalRunner.run() does
  (rlinf/runners/embodied_eval_runner.py:79-83).
- veRL: verl.utils.tracking.Tracking(default_backend=["console"]).log(data, step), as
  RayPPOTrainer.fit() does (verl/trainer/ppo/ray_trainer.py:1442 and :1802), with validation metrics
  named by RayPPOTrainer._val_metrics_update over process_validation_metrics (:721-738).

The metric values are inputs chosen here (a run's numbers); every character around them is the
framework's. Usage: print_framework_logs.py CASE   (see CASES)
"""
from __future__ import annotations

import sys
import time


def _rlinf_train(total_steps, steps):
    from rlinf.utils.metric_utils import print_metrics_table
    start = time.time()
    for step in range(steps):
        metrics = {"time/step": 41.3 + step, "time/rollout": 30.2, "env/success_once": 0.25 + 0.01 * step,
                   "env/return": 1.84, "rollout/rewards": 0.31, "train/actor/policy_loss": -0.0123,
                   "train/actor/grad_norm": 1.92, "train/critic/value_loss": 0.214}
        print_metrics_table(step, total_steps, start, metrics, 0, None)
        sys.stdout.flush()


def _rlinf_eval(success):
    import torch
    from rlinf.utils.logging import get_logger
    from rlinf.utils.metric_utils import compute_evaluate_metrics
    n = 64
    hits = int(round(success * n))
    per_env = [{"success_once": torch.tensor([1.0] * hits + [0.0] * (n - hits)),
                "success_at_end": torch.tensor([1.0] * max(0, hits - 3) + [0.0] * (n - max(0, hits - 3))),
                "return": torch.full((n,), 2.5 * success), "episode_len": torch.full((n,), 80.0)}]
    metrics = compute_evaluate_metrics(per_env)
    metrics = {"eval/%s" % k: v for k, v in metrics.items()}
    get_logger().info(metrics)


def _verl_val_metrics(acc):
    import numpy as np
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    n = 16
    hits = int(round(acc * n))
    sources = np.array(["openai/gsm8k"] * n, dtype=object)
    uids = ["uid-%d" % i for i in range(n)]
    scores = [1.0] * hits + [0.0] * (n - hits)
    infos = {"reward": scores, "acc": scores}
    return RayPPOTrainer._val_metrics_update(None, sources, uids, infos, [])


def _verl_tracking():
    from verl.utils.tracking import Tracking
    return Tracking(project_name="rlstack", experiment_name="one-step", default_backend=["console"])


def _verl_train(steps):
    tracking = _verl_tracking()
    tracking.log(data=_verl_val_metrics(0.5), step=0)  # val_before_train (default True) logs step 0 first
    for step in range(1, steps + 1):
        tracking.log(data={"actor/pg_loss": -0.0021, "actor/entropy": 1.13, "actor/grad_norm": 0.87,
                           "critic/score/mean": 0.41, "response_length/mean": 212.5, "timing_s/step": 38.2},
                     step=step)


def _verl_val_only(acc):
    _verl_tracking().log(data=_verl_val_metrics(acc), step=0)


CASES = {
    "rlinf-train-one-step": lambda: _rlinf_train(1, 1),
    # maniskill_ppo_openvlaoft.yaml: max_epochs 1000, max_steps -1 (the launcher dropped runner.max_steps=1)
    "rlinf-train-override-ignored": lambda: _rlinf_train(1000, 2),
    "rlinf-eval": lambda: _rlinf_eval(0.69),
    "rlinf-eval-low": lambda: _rlinf_eval(0.20),
    "verl-train-one-step": lambda: _verl_train(1),
    "verl-train-override-ignored": lambda: _verl_train(2),
    "verl-val-only": lambda: _verl_val_only(0.75),
    "verl-val-only-low": lambda: _verl_val_only(0.25),
}

if __name__ == "__main__":
    CASES[sys.argv[1]]()
