# Our verbs_context_ops against the installed libibverbs's verbs_set_ops().
test_provider_ops_LDLIBS := -libverbs
