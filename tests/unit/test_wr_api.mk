# provider/wr.c (ibv_wr_* API of extended QPs) with the post.c/wqe.c pieces
# it shares with post_send, on rings in plain memory (fastpath_harness.h).
# libibverbs itself for the real ibv_qp_to_qp_ex().
test_wr_api_SRCS   := $(addprefix $(PROVIDER_DIR)/,wr.c post.c wqe.c queue.c)
test_wr_api_LDLIBS := -libverbs -lpthread
