# tools/runner's OpenAI JSON (tprun serve): requests read into jobs or
# refused with a message, answers and stream chunks as JSON, and 20000
# corrupted request bodies (none may crash or be half-read).
RUNNER_DIR := $(TOP)/tools/runner
test_runner_oai_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c \
	gguf/reader.c gguf/writer.c \
	text/chat_template.c text/tokenizer.c text/tokenizer_gguf.c \
	text/pretokenizer.c text/utf8.c text/tokenizer_synth.c \
	cmd/openai.c cmd/job_queue.c)
test_runner_oai_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_oai_LDLIBS := -ljson-c -lm -pthread
test_runner_oai_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
