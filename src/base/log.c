/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

unsigned char tdm_log_levels[TDM_LOG_COMP_COUNT] = {
#define TDM_LOG_DEFAULT(_id, _name) [TDM_LOG_COMP_##_id] = TDM_LOG_WARN,
    TDM_LOG_COMPONENTS(TDM_LOG_DEFAULT)
#undef TDM_LOG_DEFAULT
};

static const char *const comp_names[TDM_LOG_COMP_COUNT] = {
#define TDM_LOG_NAME(_id, _name) [TDM_LOG_COMP_##_id] = _name,
    TDM_LOG_COMPONENTS(TDM_LOG_NAME)
#undef TDM_LOG_NAME
};

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};
static int log_rank = -1;

void tdm_log_set_rank(int rank) {
    log_rank = rank;
}

static int parse_level(const char *s, size_t n) {
    for (int l = 0; l <= TDM_LOG_TRACE; l++) {
        if (strlen(level_names[l]) == n && strncasecmp(s, level_names[l], n) == 0)
            return l;
    }
    return -1;
}

int tdm_log_configure(const char *spec) {
    int rc = 0;
    const char *p = spec;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        if (!colon) {
            int l = parse_level(p, n);
            if (l < 0)
                goto bad;
            for (int c = 0; c < TDM_LOG_COMP_COUNT; c++)
                tdm_log_levels[c] = (unsigned char)l;
        } else {
            int l = parse_level(colon + 1, n - (size_t)(colon + 1 - p));
            int found = 0;
            if (l < 0)
                goto bad;
            for (int c = 0; c < TDM_LOG_COMP_COUNT; c++) {
                if (strlen(comp_names[c]) == (size_t)(colon - p) &&
                    strncmp(p, comp_names[c], (size_t)(colon - p)) == 0) {
                    tdm_log_levels[c] = (unsigned char)l;
                    found = 1;
                }
            }
            if (!found)
                goto bad;
        }
        p = end ? end + 1 : NULL;
        continue;
    bad:
        tdm_log_emit(TDM_LOG_COMP_BASE, TDM_LOG_WARN,
                     "TANDEM_LOG: ignoring '%.*s' (want level or component:level; levels are "
                     "error,warn,info,debug,trace)",
                     (int)n, p);
        rc = -1;
        p = end ? end + 1 : NULL;
    }
    return rc;
}

void tdm_log_emit(tdm_log_comp_t comp, tdm_log_level_t level, const char *fmt, ...) {
    char line[1024];
    int saved = errno;
    int off;
    va_list ap;
    if (log_rank >= 0)
        off = snprintf(line, sizeof(line), "tandem[%d:%d] %s %s: ", log_rank, (int)getpid(),
                       comp_names[comp], level_names[level]);
    else
        off = snprintf(line, sizeof(line), "tandem[%d] %s %s: ", (int)getpid(), comp_names[comp],
                       level_names[level]);
    errno = saved; /* keep %m meaningful */
    va_start(ap, fmt);
    vsnprintf(line + off, sizeof(line) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    /* one write() so lines of different ranks do not interleave */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
    errno = saved;
}
