"""Build a tiny Llama-style checkpoint for the L2/L3 probes, with no download.

    python3 make_tiny_model.py OUT_DIR [--no-weights]

OUT_DIR/ok    2-layer Llama (hidden 256, intermediate 688, vocab 512; 1,844,480 parameters) with random
              weights (seed 0), a byte-level BPE tokenizer trained in-process with `tokenizers`, and
              the config attributes a newer "VLA" modeling code reads (use_proprio, num_action_chunks).
              Its config.json also has an auto_map to modeling_tiny_vla.TinyVLAForCausalLM (remote
              code: a LlamaForCausalLM that reads those attributes in __init__).
OUT_DIR/skew  the same checkpoint whose config.json lacks use_proprio and num_action_chunks, as saved
              by an older code version (the seed's "Model/Config Version Skew" pitfall): loading it with
              trust_remote_code=True fails with AttributeError, and the plain auto class loads it.

--no-weights writes configs and tokenizers only (no torch needed). Prints one JSON summary line.
"""
import json
import os
import shutil
import sys

VOCAB = 512
SKEW_ATTRS = {"use_proprio": True, "num_action_chunks": 8}
MODELING = '''"""Remote code of the tiny test checkpoint: a newer modeling version that reads config attributes
older checkpoints lack (Model/Config Version Skew)."""
from transformers import LlamaForCausalLM


class TinyVLAForCausalLM(LlamaForCausalLM):
    def __init__(self, config):
        super().__init__(config)
        self.use_proprio = config.use_proprio
        self.num_action_chunks = config.num_action_chunks
'''
CORPUS = [
    "The robot picks up the red block and places it in the basket.",
    "Open the top drawer of the cabinet and put the bowl inside.",
    "Turn on the stove, then put the moka pot on it.",
    "Pick up the alphabet soup and place it in the tray.",
    "Put both the cream cheese box and the butter in the basket.",
    "Close the microwave door after putting the mug inside.",
    "Stack the green cube on top of the blue cube.",
    "Push the plate to the front of the table, left of the spoon.",
    "The gripper moves 3 cm to the right and rotates 15 degrees.",
    "Action chunk 0 1 2 3 4 5 6 7 8 9: joint positions and velocities.",
]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<unk>", "<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 50, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>")


def build_config():
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                       tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=3,
                       architectures=["LlamaForCausalLM"], **SKEW_ATTRS)


def edit_config(path, add=None, drop=()):
    cfg_path = os.path.join(path, "config.json")
    with open(cfg_path) as fh:
        cfg = json.load(fh)
    for key in drop:
        cfg.pop(key, None)
    cfg.update(add or {})
    with open(cfg_path, "w") as fh:
        json.dump(cfg, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return cfg


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    out = os.path.abspath(args[0])
    ok_dir, skew_dir = os.path.join(out, "ok"), os.path.join(out, "skew")
    for d in (ok_dir, skew_dir):
        if os.path.exists(d):
            shutil.rmtree(d)
    os.makedirs(ok_dir)
    config = build_config()
    params = None
    if "--no-weights" in argv:
        config.save_pretrained(ok_dir)
    else:
        import torch
        from transformers import LlamaForCausalLM

        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
        params = sum(p.numel() for p in model.parameters())
        model.save_pretrained(ok_dir)
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(ok_dir)
    with open(os.path.join(ok_dir, "modeling_tiny_vla.py"), "w") as fh:
        fh.write(MODELING)
    edit_config(ok_dir, add={"auto_map": {"AutoModelForCausalLM": "modeling_tiny_vla.TinyVLAForCausalLM"}})
    shutil.copytree(ok_dir, skew_dir)
    edit_config(skew_dir, drop=list(SKEW_ATTRS))
    print(json.dumps({"ok": ok_dir, "skew": skew_dir, "params": params, "tokenizer_len": len(tokenizer),
                      "files": sorted(os.listdir(ok_dir))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
