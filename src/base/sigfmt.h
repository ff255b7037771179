/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Formatting text with no library call that is not async-signal-safe (no stdio, no
 * malloc, no locale): for what a signal handler prints (p2p/dump.c). A line is built in
 * a caller's buffer, silently cut at its end, and written with one write(2).
 */
#ifndef TDM_SIGFMT_H
#define TDM_SIGFMT_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

typedef struct tdm_sfmt {
    char *buf;
    size_t len, cap; /* cap includes room for a final newline */
} tdm_sfmt_t;

static inline void tdm_sfmt_init(tdm_sfmt_t *f, char *buf, size_t cap) {
    f->buf = buf;
    f->len = 0;
    f->cap = cap;
}

/* At most `max` bytes of s, stopping at its NUL. */
static inline void tdm_sfmt_strn(tdm_sfmt_t *f, const char *s, size_t max) {
    for (size_t i = 0; s && i < max && s[i] && f->len + 1 < f->cap; i++)
        f->buf[f->len++] = s[i];
}

static inline void tdm_sfmt_str(tdm_sfmt_t *f, const char *s) {
    tdm_sfmt_strn(f, s, (size_t)-1);
}

static inline void tdm_sfmt_uint(tdm_sfmt_t *f, unsigned long long v) {
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0 && f->len + 1 < f->cap)
        f->buf[f->len++] = d[--n];
}

static inline void tdm_sfmt_int(tdm_sfmt_t *f, long long v) {
    if (v < 0) {
        tdm_sfmt_str(f, "-");
        tdm_sfmt_uint(f, 0ull - (unsigned long long)v);
        return;
    }
    tdm_sfmt_uint(f, (unsigned long long)v);
}

static inline void tdm_sfmt_hex(tdm_sfmt_t *f, unsigned long long v) {
    char d[20];
    int n = 0;
    do {
        d[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    tdm_sfmt_str(f, "0x");
    while (n > 0 && f->len + 1 < f->cap)
        f->buf[f->len++] = d[--n];
}

/* End the line and write it (one write: lines of different ranks do not interleave). */
static inline void tdm_sfmt_write_line(tdm_sfmt_t *f, int fd) {
    f->buf[f->len++] = '\n';
    size_t off = 0;
    while (off < f->len) {
        ssize_t n = write(fd, f->buf + off, f->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    f->len = 0;
}

#endif
