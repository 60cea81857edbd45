#!/usr/bin/env python3
"""Writes tiny_llama.safetensors: a one-layer llama-style decoder (Hugging Face names, bfloat16) whose
Linear layers have 128 or 256 input features, so per-group and 1x128 block formats fit every weight.

The weights are PyTorch's default initialisation under a fixed seed (torch.manual_seed(39)): the
model computes nothing useful, but its tensors have the names, shapes, dtype and value spread of a
real checkpoint. Licence: Apache-2.0 (LICENSE-Apache-2.0.txt beside this script).

    python3 resources/sample/make_tiny_llama.py resources/sample/tiny_llama.safetensors
"""
import json
import struct
import sys

import torch
from torch import nn

HIDDEN, INTERMEDIATE, HEADS, KV_HEADS, VOCAB = 128, 256, 4, 2, 96


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        head = HIDDEN // HEADS
        self.q_proj = nn.Linear(HIDDEN, HEADS * head, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * head, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * head, bias=False)
        self.o_proj = nn.Linear(HEADS * head, HIDDEN, bias=False)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(HIDDEN)
        self.self_attn = Attention()
        self.mlp = Mlp()
        self.post_attention_layernorm = nn.LayerNorm(HIDDEN)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([Layer()])
        self.norm = nn.LayerNorm(HIDDEN)


class TinyLlama(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Model()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)


def main(path):
    torch.manual_seed(39)
    state = TinyLlama().state_dict()
    # RMS norms have a weight only: the LayerNorms' biases are left out, as llama checkpoints have none.
    tensors = {k: v.to(torch.bfloat16).contiguous() for k, v in state.items() if not k.endswith("norm.bias")
               and not k.endswith("layernorm.bias")}
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        raw = tensors[name].view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt", "source": "resources/sample/make_tiny_llama.py"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main(sys.argv[1])
