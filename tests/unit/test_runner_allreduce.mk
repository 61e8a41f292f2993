# tools/runner's all-reduce (tprun): mesh and ring over the in-process
# transport, algorithm choice, chunking.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_allreduce_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	comm/allreduce.c comm/loopback.c)
test_runner_allreduce_CFLAGS := -I$(RUNNER_DIR) -ffp-contract=off -D_GNU_SOURCE -pthread
test_runner_allreduce_LDLIBS := -lm -pthread
