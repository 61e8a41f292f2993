# tools/runner's F16 KV cache rows (kernels/kvcache.c): the conversions
# and the sum over V, F16C against the portable C. The math test's
# sources (recursive: that .mk is read after this one).
test_runner_kvcache_SRCS = $(test_runner_math_SRCS)
test_runner_kvcache_CFLAGS = $(test_runner_math_CFLAGS)
test_runner_kvcache_LDLIBS = $(test_runner_math_LDLIBS)
