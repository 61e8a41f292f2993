#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# template-model.py SRC DST FAMILY — copy a `tprun --export-gguf` file
# with the tokenizer and chat template of a model family, so that
# `tprun serve` must recognise the template and render a chat in it:
#   deepseek3  DeepSeek V3 (deepseek2 files): pre-tokenizer deepseek-v3,
#              <｜begin▁of▁sentence｜> (BOS, added), <｜end▁of▁sentence｜>,
#              <｜User｜>, <｜Assistant｜>
#   harmony    gpt-oss: pre-tokenizer gpt-4o (o200k), <|start|>,
#              <|message|>, <|channel|>, <|end|>, <|return|> (no BOS)
#   kimi-k2    Kimi K2: pre-tokenizer kimi-k2, [BOS], [EOS], <|im_end|>,
#              <|im_user|>, <|im_assistant|>, <|im_system|>, <|im_middle|>
# template-model.py SRC DST FAMILY TEMPLATE.jinja: with that template
# (tests/llama-ref/compare.sh gives it the models' own).
# The vocabulary is the 256 byte symbols and those control tokens, no
# merges: every byte outside a control token is one token, so the prompt
# tokens of a chat are countable (`template-model.py --count FAMILY
# SYSTEM USER` prints how many the family's template gives, BOS included).
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "llama-ref"))
import gguf_io

SPECIAL = {
    "deepseek3": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"],
    "harmony": ["<|start|>", "<|message|>", "<|channel|>", "<|end|>", "<|return|>"],
    "kimi-k2": ["[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>",
                "<|im_middle|>"],
}
# Each family's template, reduced to the markers tprun (and llama.cpp)
# recognise it by; tprun renders a chat as the full template would
TEMPLATE = {
    "deepseek3": "{{ bos_token }}{{ ns.system_prompt }}{{'<｜User｜>' + message['content']}}"
                 "{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{{'<｜Assistant｜>'}}",
    "harmony": "{{- \"<|start|>system<|message|>\" }}{{- \"<|start|>assistant<|channel|>final<|message|>\" }}"
               "{{- \"<|end|>\" }}{{- \"<|return|>\" }}",
    "kimi-k2": "{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}",
}
PRE = {"deepseek3": "deepseek-v3", "harmony": "gpt-4o", "kimi-k2": "kimi-k2"}


def rendered(family, system, user):
    """The prompt the family's template renders for SYSTEM, USER (its
    control tokens, then its text, in order), and whether BOS comes first."""
    if family == "deepseek3":
        return [system, "<｜User｜>", user, "<｜Assistant｜>"], True
    date = "YYYY-MM-DD"	# today's, as long as this
    return ["<|start|>", "system", "<|message|>",
            "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n"
            "Current date: " + date + "\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, "
            "final. Channel must be included for every message.", "<|end|>",
            "<|start|>", "developer", "<|message|>", "# Instructions\n\n" + system + "\n\n", "<|end|>",
            "<|start|>", "user", "<|message|>", user, "<|end|>", "<|start|>", "assistant"], False


if sys.argv[1] == "--count":
    family, system, user = sys.argv[2:5]
    parts, bos = rendered(family, system, user)
    print(bos + sum(1 if p in SPECIAL[family] else len(p.encode()) for p in parts))
    sys.exit(0)
src, dst, family = sys.argv[1:4]
template = TEMPLATE[family].encode()
if len(sys.argv) > 4:
    template = open(sys.argv[4], "rb").read()
magic, ver, kvs, tensors, data = gguf_io.read(src)
vocab = len([v for k, t, v in kvs if k == b'tokenizer.ggml.tokens'][0][1])
bmap = gguf_io.gpt2_bytes()
toks = [bmap[i] for i in range(256)]
special = SPECIAL[family]
toks += ["<unused%d>" % i for i in range(256, vocab - len(special))] + special
kvs = [kv for kv in kvs if not kv[0].startswith(b'tokenizer.')]
kvs += [
    (b'tokenizer.ggml.model', 8, b'gpt2'), (b'tokenizer.ggml.pre', 8, PRE[family].encode()),
    (b'tokenizer.ggml.tokens', 9, (8, toks)),
    (b'tokenizer.ggml.token_type', 9, (5, [1] * (vocab - len(special)) + [3] * len(special))),
    (b'tokenizer.ggml.merges', 9, (8, [])),
    (b'tokenizer.ggml.bos_token_id', 4, vocab - len(special)),
    (b'tokenizer.ggml.eos_token_id', 4, vocab - len(special) + (1 if family == "deepseek3" else 4)),
    (b'tokenizer.ggml.add_bos_token', 7, family == "deepseek3"),
    (b'tokenizer.chat_template', 8, template),
]
gguf_io.write(dst, magic, ver, kvs, tensors, data)
