# tools/runner's model (tprun): the forward pass against an independent
# double-precision reference, determinism, and N ranks as threads over
# the in-process transport (mesh and ring), synthetic and GGUF weights.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_model_SRCS   := $(addprefix $(RUNNER_DIR)/,model.c math.c util.c \
			    weights_synth.c weights_gguf.c vocab.c gguf.c gguf_write.c \
			    export.c allreduce.c ar_loop.c sample.c \
			    tokenizer.c tok_load.c tok_pre.c tok_synth.c quant.c \
			    pool.c kernels/matmul.c kernels/dispatch.c \
			    kernels/act.c kernels/generic.c kernels/avx2.c kernels/avx512.c)
test_runner_model_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_model_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_model_LDLIBS := -lm -pthread
