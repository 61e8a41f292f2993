# tools/runner's launcher environments (tprun under mpirun, srun, PMI,
# torchrun style) and its peak-RSS reading.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_launch_SRCS   := $(addprefix $(RUNNER_DIR)/,launch_env.c memstat.c \
			     util.c allreduce.c)
test_runner_launch_CFLAGS := -I$(RUNNER_DIR) -D_GNU_SOURCE -pthread
test_runner_launch_LDLIBS := -lm -pthread
