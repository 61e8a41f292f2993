# tools/runner's K-quants (tprun): layouts, the quantisers and Q8_K bit for
# bit against ggml's own (node-llama-cpp's libggml, loaded with dlopen when
# tests/llama-ref installed it, else those points are skipped), the dot
# products on the blocks, the per-tensor fallback types.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_kquant_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c)
test_runner_kquant_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES))
test_runner_kquant_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off \
	-DGGML_DIR='"$(TOP)/tests/llama-ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"'
test_runner_kquant_LDLIBS := -lm -ldl
