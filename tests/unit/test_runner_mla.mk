# tools/runner's latent attention (deepseek2) with YaRN against a double
# reference: the model test's sources (recursive: that .mk is read after
# this one).
test_runner_mla_SRCS = $(test_runner_model_SRCS)
test_runner_mla_CFLAGS = $(test_runner_model_CFLAGS)
test_runner_mla_LDLIBS = $(test_runner_model_LDLIBS)
