#!/bin/bash
# tprun over the loopback device against llama.cpp: the models `make
# llama-ref` exported on the host in every weight type (and the Qwen2,
# RoPE-scaling and byte-level BPE variants), with llama.cpp's greedy
# answer to each (build/llama-ref, kept by compare.sh --save-ref: llama.cpp
# itself would take minutes to start in this guest, and its answer depends
# only on the file and the prompt); here tprun decodes the first prompt
# with 2 and 4 ranks over RDMA on tbrlo0 (1 rank uses no transport: the
# host checks it) and must give the same prompt tokens, tokens and text.
# Every weight type, each with its own shard layout (the saved model is
# the one checked, so nothing is exported here: 78 s for the eleven types;
# TBR_LLAMA_REF_TYPES picks fewer).  The host's `make llama-ref` also
# checks 1 rank, the logits and the architecture and tokenizer variants
# over TCP: none of those depend on the transport (the variants here took
# 329 s).
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

refs=$TBRDMA_ROOT/build/llama-ref
[[ -f $refs/f32_prompt_0.json ]] ||
	skip "no saved llama.cpp answers in $refs (make llama-ref writes them)"
verbs_setup
verbs_is_rxe && skip "runs on tbrdma devices"

types=${TBR_LLAMA_REF_TYPES:-f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k}
rc=0
TMPDIR=$TBRDMA_OUT "$TBRDMA_ROOT/tests/llama-ref/compare.sh" --ref "$refs" \
	--prompts 0 --ranks "2 4" --types "$types" --types-only --no-logits \
	--tprun "$TPRUN --local {N} --transport rdma --devices $TBR_TEST_DEV" \
	>"$TBRDMA_OUT/compare.tap" 2>&1 || rc=$?
{ grep -E '^(not )?ok ' "$TBRDMA_OUT/compare.tap" || true; } | sed -n '1,400p'
# grep -c exits 1 when it counts nothing (set -e)
n_ok=$(grep -c '^ok ' "$TBRDMA_OUT/compare.tap" || true)
n_bad=$(grep -c '^not ok ' "$TBRDMA_OUT/compare.tap" || true)
((rc == 0 && n_bad == 0 && n_ok == 2 * $(wc -w <<<"$types"))) ||
	{ grep -A6 '^not ok' "$TBRDMA_OUT/compare.tap" | head -40 || true
	  fail "compare.sh: $n_ok ok, $n_bad not ok (exit $rc)"; }
echo "tprun over $TBR_TEST_DEV = llama.cpp: $n_ok checks"
