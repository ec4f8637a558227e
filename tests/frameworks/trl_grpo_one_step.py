"""One real GRPO optimisation step with Hugging Face TRL on a tiny, randomly initialised Llama.

Everything is built in-process (WordLevel tokenizer, LlamaConfig model, prompts, reward), so nothing is
downloaded. It is the program the collection's L5/L6 examples run on a host or in a pod, and the
recorder of the TRL fixtures (tests/unit/fixtures/frameworks/SOURCES.md).

Training arguments are TRL's own (TrlParser over GRPOConfig), so the framework contract's one-step
override `--max_steps 1` reaches GRPOConfig exactly as it does in TRL's own scripts.

    python trl_grpo_one_step.py train --max_steps 1 --output_dir /tmp/out    # L5
    python trl_grpo_one_step.py eval --output_dir /tmp/out                   # L6 (no training step)

`--crash_in_step` makes the reward function raise inside the step (a broken run); `--eval_target`
picks the token a held-out answer must start with, so the success rate can be driven below a floor.
"""
from __future__ import annotations

import argparse
import sys

import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from trl import GRPOConfig, GRPOTrainer, TrlParser

WORDS = ["red", "green", "blue", "cat", "dog", "sun", "moon", "tree", "box", "cup", "yes", "no"]
TARGET = "yes"


def tokenizer():
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    for word in WORDS:
        vocab[word] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def model(tok, seed):
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None)
    return LlamaForCausalLM(cfg)


def prompts(n, offset=0):
    return [" ".join(WORDS[(i + offset + k) % 10] for k in range(3)) for i in range(n)]


def make_reward(crash):
    def target_fraction(completions, **_):
        """The fraction of completion tokens that are the target word."""
        if crash:
            raise RuntimeError("reward function failed inside the training step (--crash_in_step)")
        return [c.split().count(TARGET) / max(1, len(c.split())) for c in completions]
    return target_fraction


def evaluate(trainer_model, tok, target, n=16):
    """Greedy answers to held-out prompts; success = the first generated word is the target."""
    trainer_model.eval()
    hits = 0
    with torch.no_grad():
        for prompt in prompts(n, offset=5):
            ids = tok(prompt, return_tensors="pt").input_ids.to(trainer_model.device)
            out = trainer_model.generate(ids, max_new_tokens=1, do_sample=False, pad_token_id=tok.pad_token_id)
            hits += tok.decode(out[0, ids.shape[1]:]).strip() == target
    return hits / n


def main(argv=None):
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("mode", choices=["train", "eval"])
    own.add_argument("--crash_in_step", action="store_true")
    own.add_argument("--eval_target", default=None,
                     help="word counted as success (default: the model's greedy answer to the first prompt)")
    own.add_argument("--seed_model", type=int, default=0)
    opts, rest = own.parse_known_args(argv)
    (args,) = TrlParser((GRPOConfig,)).parse_args_and_config(
        ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "4",
         "--logging_steps", "1", "--save_strategy", "no", "--report_to", "none",
         # the GPU when there is one (the H200 run of docs/hardware.md), else the CPU
         "--use_cpu", "false" if torch.cuda.is_available() else "true",
         "--learning_rate", "1e-3", "--seed", "0"] + rest)
    tok = tokenizer()
    policy = model(tok, opts.seed_model)
    trainer = GRPOTrainer(model=policy, reward_funcs=make_reward(opts.crash_in_step), args=args,
                          train_dataset=Dataset.from_dict({"prompt": prompts(32)}), processing_class=tok)
    if opts.mode == "train":
        trainer.train()
        state = trainer.state
        print("global_step=%d max_steps=%d device=%s" % (state.global_step, state.max_steps, trainer.model.device),
              flush=True)
        if trainer.state.global_step == 1:
            print("TRAINING_STEP_TEST_PASSED", flush=True)
        return 0
    # Evaluation only: no optimisation step is taken.
    target = opts.eval_target
    if target is None:
        ids = tok(prompts(1, offset=5)[0], return_tensors="pt").input_ids.to(trainer.model.device)
        out = policy.generate(ids, max_new_tokens=1, do_sample=False, pad_token_id=tok.pad_token_id)
        target = tok.decode(out[0, ids.shape[1]:]).strip()
    rate = evaluate(trainer.model, tok, target)
    print("global_step=%d (evaluation only) device=%s" % (trainer.state.global_step, trainer.model.device), flush=True)
    print("eval/success_rate=%.4f" % rate, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
