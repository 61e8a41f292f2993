# tools/runner's 4- and 5-bit block types (tprun): layouts, quantisation
# error, dot products on the blocks.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_quant_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/pool.c base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c kernels/matmul.c kernels/dispatch.c kernels/act.c \
	kernels/kvcache.c \
	kernels/generic.c kernels/avx2.c kernels/avx512.c)
test_runner_quant_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_quant_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_quant_LDLIBS := -lm -pthread
