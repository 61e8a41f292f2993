# tools/tbrdma's Thunderbolt link reading and judging, on fake sysfs trees.
test_admin_tbt_link_SRCS   := $(addprefix $(TOP)/tools/admin/,tbt_link.c \
			      sysfs.c)
test_admin_tbt_link_CFLAGS := -I$(TOP)/tools/admin
