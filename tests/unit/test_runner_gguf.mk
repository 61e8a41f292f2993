# tools/runner's GGUF reader and writer (tprun), and loading llama weights
# from GGUF: good, truncated and malformed files.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_gguf_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c base/pool.c \
	kernels/float16.c kernels/types.c kernels/vector.c \
	kernels/quant.c kernels/matmul.c kernels/dispatch.c kernels/act.c \
	kernels/kvcache.c \
	kernels/generic.c kernels/avx2.c kernels/avx512.c \
	comm/allreduce.c \
	gguf/reader.c gguf/writer.c \
	text/tokenizer.c text/tokenizer_gguf.c text/pretokenizer.c \
	text/utf8.c text/tokenizer_synth.c \
	model/shard.c model/weights.c model/residual.c model/attention.c \
	model/ffn.c model/forward.c model/load_gguf.c model/synthetic.c \
	model/vocab_ends.c model/export.c model/moe.c model/mla.c \
	model/rope_scaling.c model/gguf_keys.c \
	model/arch/llama.c model/arch/qwen2.c model/arch/qwen3.c \
	model/arch/qwen3moe.c model/arch/glm4moe.c model/arch/deepseek2.c \
	model/arch/gpt_oss.c \
	model/arch/registry.c)
test_runner_gguf_SRCS += $(addprefix $(RUNNER_DIR)/,$(RUNNER_QTYPES) $(RUNNER_SIMD))
test_runner_gguf_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_gguf_LDLIBS := -lm -pthread
