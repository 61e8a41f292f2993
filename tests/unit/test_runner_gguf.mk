# tools/runner's GGUF reader and writer (tprun), and loading llama weights
# from GGUF: good, truncated and malformed files.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_gguf_SRCS   := $(addprefix $(RUNNER_DIR)/,gguf.c gguf_write.c \
			   math.c util.c model.c weights_gguf.c weights_synth.c vocab.c \
			   export.c allreduce.c tokenizer.c tok_load.c tok_pre.c tok_synth.c quant.c \
			   pool.c kernels/matmul.c kernels/dispatch.c \
			   kernels/act.c kernels/generic.c kernels/avx2.c kernels/avx512.c)
test_runner_gguf_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_gguf_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_gguf_LDLIBS := -lm -pthread
