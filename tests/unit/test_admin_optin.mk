# tools/tbrdma's Thunderbolt opt-in: modprobe.d persistence, module parameter.
test_admin_optin_SRCS   := $(addprefix $(TOP)/tools/admin/,tb_optin.c sysfs.c)
test_admin_optin_CFLAGS := -I$(TOP)/tools/admin
