# provider/post.c and the poll/arm half of provider/cq.c on rings in plain
# memory (cq.c's create/destroy pull in libibverbs' ibv_cmd_* symbols).
test_fastpath_SRCS   := $(addprefix $(PROVIDER_DIR)/,post.c cq.c wqe.c queue.c)
test_fastpath_LDLIBS := -libverbs -lpthread
