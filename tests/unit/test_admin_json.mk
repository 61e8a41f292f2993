# tools/tbrdma's JSON writer.
test_admin_json_SRCS   := $(TOP)/tools/admin/json.c
test_admin_json_CFLAGS := -I$(TOP)/tools/admin
