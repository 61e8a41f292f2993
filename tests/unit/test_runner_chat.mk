# tools/runner's chat templates (tprun --chat, tprun serve): recognising
# the llama2, llama3, chatml and zephyr families, refusing the others,
# the rendering of each, and its control tokens becoming tokens.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_chat_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c \
	gguf/reader.c gguf/writer.c \
	text/chat_template.c text/tokenizer.c text/tokenizer_gguf.c \
	text/pretokenizer.c text/utf8.c text/tokenizer_synth.c)
test_runner_chat_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_chat_LDLIBS := -lm
test_runner_chat_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE
