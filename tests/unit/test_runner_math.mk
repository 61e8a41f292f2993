# tools/runner's math kernels (tprun): number formats, matmul, RMSNorm,
# RoPE, softmax, SwiGLU, against plain double-precision references.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_math_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/pool.c base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c kernels/matmul.c kernels/dispatch.c kernels/act.c \
	kernels/kvcache.c \
	kernels/generic.c kernels/avx2.c kernels/avx512.c)
test_runner_math_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_math_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_math_LDLIBS := -lm -pthread
