# tools/runner's chat templates (tprun --chat, tprun serve): recognising
# the llama2, llama3, chatml and zephyr families, refusing the others,
# the rendering of each, and its control tokens becoming tokens.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_chat_SRCS   := $(addprefix $(RUNNER_DIR)/,chat.c tokenizer.c \
			   tok_load.c tok_pre.c tok_synth.c gguf.c gguf_write.c \
			   util.c math.c quant.c)
test_runner_chat_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_chat_LDLIBS := -lm
test_runner_chat_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE
