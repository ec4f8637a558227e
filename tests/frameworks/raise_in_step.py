"""A training script that fails inside its step, for the L5 failure excerpt (docs/verdicts.md, "Excerpt").

It prints its configuration the way many training scripts do, the Hugging Face token and a store password
included (leaks the collection must not repeat: the excerpt redacts them; the password has no shape a
pattern knows, only its variable's name gives it away), prints a progress line, then raises from a
nested function and exits 1 with Python's own traceback.
Usage: python3 raise_in_step.py [--steps N]
"""
import argparse
import os
import sys


def reward(step):
    raise ValueError("reward model returned NaN at step %d (--crash_in_step)" % step)


def train_step(step):
    return reward(step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    print("config: steps=%d hf_token=%s" % (args.steps, os.environ.get("HF_TOKEN", "")), flush=True)
    print("config: wandb_api_key=%s" % os.environ.get("WANDB_API_KEY", ""), flush=True)
    print("connecting to the dataset store as trainer/%s" % os.environ.get("STORE_PASSWORD", ""), flush=True)
    for step in range(1, args.steps + 1):
        print("step %d/%d: rollout done" % (step, args.steps), flush=True)
        train_step(step)
    print("TRAINING_STEP_TEST_PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
