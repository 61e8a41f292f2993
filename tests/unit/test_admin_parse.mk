# tools/tbrdma's parsers: RDMA netlink messages, tbrdma_peers, GIDs.
test_admin_parse_SRCS   := $(addprefix $(TOP)/tools/admin/,rdma_nl.c \
			   counters.c peers.c gids.c sysfs.c)
test_admin_parse_CFLAGS := -I$(TOP)/tools/admin
test_admin_parse_LDLIBS := -lmnl
