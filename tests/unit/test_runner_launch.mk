# tools/runner's launcher environments (tprun under mpirun, srun, PMI,
# torchrun style) and its peak-RSS reading.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_launch_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/memstat.c base/util.c \
	cmd/launcher_env.c)
test_runner_launch_CFLAGS := -I$(RUNNER_DIR) -D_GNU_SOURCE -pthread
test_runner_launch_LDLIBS := -lm -pthread
