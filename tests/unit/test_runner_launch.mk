# tools/runner's launcher environments (tprun under mpirun, srun, PMI,
# torchrun style), -d's device per peer, and its peak-RSS reading.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_launch_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/memstat.c base/util.c \
	kernels/float16.c kernels/types.c kernels/quant.c \
	cmd/launcher_env.c cmd/opts.c $(RUNNER_QTYPES))
test_runner_launch_CFLAGS := -I$(RUNNER_DIR) -D_GNU_SOURCE -pthread
test_runner_launch_LDLIBS := -lm -pthread
