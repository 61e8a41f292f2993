# tools/runner's tokenizer (tprun): SentencePiece and byte-level BPE from
# GGUF metadata, round trips, byte fallback, special tokens, merge order,
# pre-tokenizers, streaming UTF-8, malformed metadata.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_tokenizer_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c \
	gguf/reader.c gguf/writer.c \
	text/tokenizer.c text/tokenizer_gguf.c text/pretokenizer.c \
	text/utf8.c text/tokenizer_synth.c)
test_runner_tokenizer_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_tokenizer_LDLIBS := -lm
test_runner_tokenizer_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE
