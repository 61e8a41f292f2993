# tools/runner's tokenizer (tprun): SentencePiece and byte-level BPE from
# GGUF metadata, round trips, byte fallback, special tokens, merge order,
# pre-tokenizers, streaming UTF-8, malformed metadata.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_tokenizer_SRCS   := $(addprefix $(RUNNER_DIR)/,tokenizer.c \
				tok_load.c tok_pre.c tok_synth.c gguf.c \
				gguf_write.c util.c math.c quant.c)
test_runner_tokenizer_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_tokenizer_LDLIBS := -lm
test_runner_tokenizer_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE
