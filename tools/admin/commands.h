/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tbrdma subcommands.  Each gets its own argv (argv[0] is the command
 * name) and returns an exit code (exit_codes.h).
 */
#ifndef TBRDMA_ADMIN_COMMANDS_H
#define TBRDMA_ADMIN_COMMANDS_H

#include <stdbool.h>

struct global_opts {
	bool json;
};

int cmd_status(int argc, char **argv, const struct global_opts *g);
int cmd_stats(int argc, char **argv, const struct global_opts *g);
int cmd_attach(int argc, char **argv, const struct global_opts *g);
int cmd_detach(int argc, char **argv, const struct global_opts *g);
int cmd_thunderbolt(int argc, char **argv, const struct global_opts *g);

/* Usage text of one command (NULL: all), to @out. */
void print_usage(const char *command, bool to_stderr);

#endif /* TBRDMA_ADMIN_COMMANDS_H */
