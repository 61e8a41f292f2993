/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* This process's memory, as the kernel counts it (memstat.c). */
#ifndef TPRUN_MEMSTAT_H
#define TPRUN_MEMSTAT_H

#include <stdint.h>

/* This process's peak resident set in bytes (0 if unknown). */
uint64_t tp_peak_rss(void);

#endif /* TPRUN_MEMSTAT_H */
