// SPDX-License-Identifier: GPL-2.0-only
/*
 * A ggml RPC server on ggml's public API (what llama.cpp's rpc-server does,
 * CPU backend only): ggml_rpc_server HOST:PORT [THREADS].  ggml's RPC layer
 * picks RDMA by itself when the socket's address is a RoCE GID of an RDMA
 * device, and logs "RDMA activated".  GGML_RDMA_DEV=NAME limits the search
 * to one device; a name no device has (e.g. none) keeps the connection on TCP.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ggml-backend.h"
#include "ggml-rpc.h"

int main(int argc, char **argv)
{
	ggml_backend_dev_t dev;
	size_t threads = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;

	if (argc < 2) {
		fprintf(stderr, "usage: %s HOST:PORT [THREADS]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
	if (!dev) {
		fprintf(stderr, "no CPU backend\n");
		return 1;
	}
	ggml_backend_rpc_start_server(argv[1], NULL, threads, 1, &dev);
	return 0;
}
