# provider/wqe.c: pure WR -> WQE, CQE -> WC and doorbell translation.
# Only libibverbs' headers are needed, not the library.
test_wqe_SRCS := $(PROVIDER_DIR)/wqe.c
