# tools/runner's rendezvous, TCP transport and liveness monitor (tprun),
# as real processes on 127.0.0.1: agreement, a killed rank, a hung rank.
RUNNER_DIR := $(TOP)/tools/runner
test_runner_net_SRCS := $(addprefix $(RUNNER_DIR)/, \
	base/util.c \
	comm/route.c comm/rendezvous.c comm/liveness.c comm/tcp.c \
	comm/allreduce.c)
test_runner_net_CFLAGS := -I$(RUNNER_DIR) -D_GNU_SOURCE -pthread
test_runner_net_LDLIBS := -lm -pthread
