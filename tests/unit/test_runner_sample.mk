# tools/runner's sampler (tprun): greedy, temperature, top-p, seeds.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_sample_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	text/sampler.c)
test_runner_sample_CFLAGS := -I$(RUNNER_DIR)
test_runner_sample_LDLIBS := -lm
