# tools/runner's OpenAI JSON (tprun serve): requests read into jobs or
# refused with a message, answers and stream chunks as JSON, and 20000
# corrupted request bodies (none may crash or be half-read).
RUNNER_DIR := $(TOP)/tools/runner
test_runner_oai_SRCS   := $(addprefix $(RUNNER_DIR)/,oai.c job.c chat.c \
			  tokenizer.c tok_load.c tok_pre.c tok_synth.c gguf.c \
			  gguf_write.c util.c math.c quant.c)
test_runner_oai_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_oai_LDLIBS := -ljson-c -lm -pthread
test_runner_oai_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
