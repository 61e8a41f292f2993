# tools/tbrdma's counter sets and rates.
test_admin_rates_SRCS   := $(TOP)/tools/admin/counters.c
test_admin_rates_CFLAGS := -I$(TOP)/tools/admin
