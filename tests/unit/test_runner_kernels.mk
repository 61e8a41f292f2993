# tools/runner's dot-product kernels (tprun): every instruction set this
# CPU has against the portable one on the same inputs (bit for bit for the
# quantised types, within rounding for the float ones), and tp_matmul on
# the thread pool against single rows.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_kernels_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c base/pool.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c kernels/matmul.c kernels/dispatch.c kernels/act.c \
	kernels/kvcache.c \
	kernels/generic.c kernels/avx2.c kernels/avx512.c)
test_runner_kernels_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_kernels_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_kernels_LDLIBS := -lm -pthread
