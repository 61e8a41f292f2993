# tools/runner's newer block types (tprun: Q2_K, Q3_K, IQ4_NL, IQ4_XS,
# MXFP4, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): tables,
# layouts, quantisers, dequantisation and dot products, against ggml's own
# (node-llama-cpp's libggml, loaded with dlopen when tests/llama-ref
# installed it, else those points are skipped).
RUNNER_DIR := $(TOP)/tools/runner
test_runner_iquant_SRCS   := $(addprefix $(RUNNER_DIR)/,base/util.c \
	kernels/float16.c kernels/types.c kernels/vector.c kernels/quant.c \
	kernels/act.c $(RUNNER_QTYPES))
test_runner_iquant_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread \
	-DGGML_DIR='"$(TOP)/tests/llama-ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"'
test_runner_iquant_LDLIBS := -lm -ldl -pthread
