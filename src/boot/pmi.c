/* SPDX-License-Identifier: BSD-3-Clause */
#include "pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FIELDS 32

typedef struct field {
    const char *key, *value;
} field_t;

/* A parsed reply: fields point into `text` (a copy, cut at the separators). */
typedef struct reply {
    char text[4096 + 8];
    char shown[160]; /* the reply as it came, shortened, for messages */
    int n;
    field_t f[MAX_FIELDS];
} reply_t;

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* What came back, printable and short enough for one message line. */
static void show(char *dst, size_t cap, const char *src, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c >= 32 && c < 127 && c != '\\') {
            dst[o++] = (char)c;
        } else {
            o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
        }
    }
    if (o + 5 >= cap && cap > 4)
        memcpy(dst + cap - 4, "...", 4), o = cap - 1;
    dst[o < cap ? o : cap - 1] = 0;
}

static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        /* a launcher that is gone is an error to report, not a SIGPIPE */
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read exactly n bytes (PMI-2 frames); 0, or -1 with errno (0: the launcher closed it). */
static int read_all(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            errno = 0;
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
    }
    return 0;
}

static const char *get(const reply_t *r, const char *key) {
    for (int i = 0; i < r->n; i++) {
        if (!strcmp(r->f[i].key, key))
            return r->f[i].value;
    }
    return NULL;
}

static int parse_int(const char *s, int *out) {
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* Split "k=v k=v" (PMI-1, sep ' ') or "k=v;k=v;" (PMI-2, sep ';', ";;" a ';' in a value)
 * into fields. -1 when a field has no '=' or an empty key, or there are too many. */
static int split(reply_t *r, char sep) {
    char *s = r->text;
    r->n = 0;
    while (*s) {
        if (*s == sep) {
            s++;
            continue;
        }
        if (r->n == MAX_FIELDS)
            return -1;
        char *key = s, *eq = NULL;
        while (*s && *s != sep && *s != '=')
            s++;
        if (*s != '=' || s == key)
            return -1;
        eq = s;
        *eq = 0;
        char *val = eq + 1, *w = val;
        s = val;
        for (;;) {
            if (!*s)
                break;
            if (*s == sep) {
                if (sep == ';' && s[1] == ';') {
                    *w++ = ';';
                    s += 2;
                    continue;
                }
                s++;
                break;
            }
            *w++ = *s++;
        }
        /* the terminator may overwrite the separator just consumed: `w` < `s` */
        *w = 0;
        r->f[r->n].key = key;
        r->f[r->n].value = val;
        r->n++;
    }
    return 0;
}

/* One PMI-1 line from the socket into r->text (without the newline). */
static int read_line(tdm_pmi_t *p, reply_t *r, const char *sent, char *why, size_t len) {
    for (;;) {
        char *nl = memchr(p->rbuf, '\n', p->have);
        if (nl) {
            size_t n = (size_t)(nl - p->rbuf);
            memcpy(r->text, p->rbuf, n);
            r->text[n] = 0;
            show(r->shown, sizeof(r->shown), p->rbuf, n);
            p->have -= n + 1;
            memmove(p->rbuf, nl + 1, p->have);
            if (strlen(r->text) != n)
                return fail(why, len, "PMI: the reply to '%s' holds a NUL byte: '%s'", sent,
                            r->shown);
            return 0;
        }
        if (p->have == sizeof(p->rbuf))
            return fail(why, len, "PMI: the reply to '%s' is longer than %zu bytes: '%.60s...'",
                        sent, sizeof(p->rbuf), p->rbuf);
        ssize_t got = read(p->fd, p->rbuf + p->have, sizeof(p->rbuf) - p->have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            char part[96];
            show(part, sizeof(part), p->rbuf, p->have);
            return fail(why, len, "PMI: no reply to '%s' (%s)%s%s%s", sent,
                        got == 0 ? "the launcher closed the connection" : strerror(errno),
                        p->have ? ", only '" : "", part, p->have ? "'" : "");
        }
        p->have += (size_t)got;
    }
}

/* Send `msg` (without framing) and read the reply that must be cmd=`expect`, with fields
 * and, unless `rc_ok_any`, rc=0 (when present). The message shows `msg` as the command. */
static int transact(tdm_pmi_t *p, const char *msg, const char *expect, reply_t *r, bool rc_ok_any,
                    char *why, size_t len) {
    char shown_cmd[128];
    size_t mlen = strlen(msg);
    show(shown_cmd, sizeof(shown_cmd), msg, mlen && msg[mlen - 1] == '\n' ? mlen - 1 : mlen);
    if (p->fd < 0)
        return fail(why, len, "PMI: '%s' without a connection to the launcher", shown_cmd);
    if (p->version == 1) {
        if (write_all(p->fd, msg, mlen) != 0)
            return fail(why, len, "PMI: sending '%s' failed: %s", shown_cmd, strerror(errno));
        if (read_line(p, r, shown_cmd, why, len) != 0)
            return -1;
        if (split(r, ' ') != 0)
            return fail(why, len, "PMI: the reply to '%s' does not parse as key=value fields: '%s'",
                        shown_cmd, r->shown);
    } else {
        char head[8];
        if (mlen > 999999)
            return fail(why, len, "PMI: '%.60s...' is too long for PMI-2", shown_cmd);
        snprintf(head, sizeof(head), "%-6zu", mlen);
        if (write_all(p->fd, head, 6) != 0 || write_all(p->fd, msg, mlen) != 0)
            return fail(why, len, "PMI: sending '%s' failed: %s", shown_cmd, strerror(errno));
        char lenbuf[7] = {0};
        if (read_all(p->fd, lenbuf, 6) != 0)
            return fail(why, len, "PMI: no reply to '%s' (%s)", shown_cmd,
                        errno ? strerror(errno) : "the launcher closed the connection");
        /* the length: digits, padded with spaces on either side */
        char *s = lenbuf;
        while (*s == ' ')
            s++;
        char *end = s;
        while (*end >= '0' && *end <= '9')
            end++;
        const char *t = end;
        while (*t == ' ')
            t++;
        long n = end > s ? strtol(s, NULL, 10) : -1;
        if (end == s || *t || n < 0 || n > (long)sizeof(r->text) - 8) {
            show(r->shown, sizeof(r->shown), lenbuf, 6);
            return fail(why, len,
                        "PMI: the reply to '%s' does not start with a PMI-2 length "
                        "(6 digits): '%s'",
                        shown_cmd, r->shown);
        }
        if (read_all(p->fd, r->text, (size_t)n) != 0)
            return fail(why, len, "PMI: the reply to '%s' ended after fewer than %ld bytes (%s)",
                        shown_cmd, n, errno ? strerror(errno) : "connection closed");
        r->text[n] = 0;
        show(r->shown, sizeof(r->shown), r->text, (size_t)n);
        if (strlen(r->text) != (size_t)n)
            return fail(why, len, "PMI: the reply to '%s' holds a NUL byte: '%s'", shown_cmd,
                        r->shown);
        if (split(r, ';') != 0)
            return fail(why, len,
                        "PMI: the reply to '%s' does not parse as key=value; fields: '%s'",
                        shown_cmd, r->shown);
    }
    if (r->n == 0 || strcmp(r->f[0].key, "cmd") != 0 || strcmp(r->f[0].value, expect) != 0)
        return fail(why, len, "PMI: expected cmd=%s in reply to '%s', got '%s'", expect, shown_cmd,
                    r->shown);
    const char *rc = get(r, "rc");
    int rcv = 0;
    if (rc && parse_int(rc, &rcv) != 0)
        return fail(why, len, "PMI: the reply to '%s' has rc=%s, not a number: '%s'", shown_cmd, rc,
                    r->shown);
    if (rcv != 0 && !rc_ok_any) {
        const char *m = get(r, "msg") ? get(r, "msg") : get(r, "errmsg");
        return fail(why, len, "PMI: the launcher refused '%s' (rc=%d%s%s): '%s'", shown_cmd, rcv,
                    m ? ", " : "", m ? m : "", r->shown);
    }
    return 0;
}

/* A field that must be there (and, with `out`, a number). */
static int need(const reply_t *r, const char *key, int *out, const char *sent, char *why,
                size_t len) {
    const char *v = get(r, key);
    if (!v)
        return fail(why, len, "PMI: the reply to '%s' has no %s: '%s'", sent, key, r->shown);
    if (out && parse_int(v, out) != 0)
        return fail(why, len, "PMI: the reply to '%s' has %s=%s, not a number: '%s'", sent, key, v,
                    r->shown);
    return 0;
}

static int check_word(const char *what, const char *s, bool is_key, char *why, size_t len) {
    size_t n = strlen(s);
    if (n == 0 || n >= (is_key ? 64u : TDM_PMI_VALUE_MAX) || strpbrk(s, " \t\n;") ||
        (is_key && strchr(s, '=')))
        return fail(why, len,
                    "PMI: %s '%.80s' cannot be sent (empty, too long, or holds "
                    "white space, ';'%s)",
                    what, s, is_key ? " or '='" : "");
    return 0;
}

static int init_v1(tdm_pmi_t *p, int pmi_id, char *why, size_t len) {
    reply_t r;
    if (pmi_id >= 0) {
        /* PMI_PORT: the launcher learns who we are, and answers with our rank and size */
        char msg[64];
        snprintf(msg, sizeof(msg), "cmd=initack pmiid=%d\n", pmi_id);
        if (transact(p, msg, "initack", &r, false, why, len) != 0)
            return -1;
        int seen = 0;
        p->rank = p->size = -1;
        while (seen < 3) { /* size, rank, debug in any order */
            if (read_line(p, &r, "cmd=initack", why, len) != 0)
                return -1;
            int v;
            if (split(&r, ' ') != 0 || r.n != 2 || strcmp(r.f[0].key, "cmd") ||
                strcmp(r.f[0].value, "set") || parse_int(r.f[1].value, &v) != 0)
                return fail(why, len,
                            "PMI: expected 'cmd=set size|rank|debug=N' after the initack, got '%s'",
                            r.shown);
            if (!strcmp(r.f[1].key, "size"))
                p->size = v;
            else if (!strcmp(r.f[1].key, "rank"))
                p->rank = v;
            else if (strcmp(r.f[1].key, "debug") != 0)
                return fail(why, len, "PMI: unexpected '%s' after the initack", r.shown);
            seen++;
        }
        if (p->rank < 0 || p->size < 1)
            return fail(why, len, "PMI: the initack gave no rank and size (rank %d, size %d)",
                        p->rank, p->size);
    }
    static const char init[] = "cmd=init pmi_version=1 pmi_subversion=1\n";
    int ver, sub;
    if (transact(p, init, "response_to_init", &r, false, why, len) != 0 ||
        need(&r, "pmi_version", &ver, "cmd=init", why, len) != 0 ||
        need(&r, "pmi_subversion", &sub, "cmd=init", why, len) != 0)
        return -1;
    if (ver != 1)
        return fail(why, len, "PMI: the launcher speaks PMI version %d, not 1: '%s'", ver, r.shown);
    int kvsmax, keymax, valmax;
    if (transact(p, "cmd=get_maxes\n", "maxes", &r, false, why, len) != 0 ||
        need(&r, "kvsname_max", &kvsmax, "cmd=get_maxes", why, len) != 0 ||
        need(&r, "keylen_max", &keymax, "cmd=get_maxes", why, len) != 0 ||
        need(&r, "vallen_max", &valmax, "cmd=get_maxes", why, len) != 0)
        return -1;
    if (keymax < 32 || valmax < 256)
        return fail(why, len,
                    "PMI: the launcher's key-value space is too small (keys %d, "
                    "values %d bytes; Tandem needs 32 and 256)",
                    keymax, valmax);
    if (transact(p, "cmd=get_appnum\n", "appnum", &r, false, why, len) != 0 ||
        need(&r, "appnum", &p->appnum, "cmd=get_appnum", why, len) != 0)
        return -1;
    if (transact(p, "cmd=get_my_kvsname\n", "my_kvsname", &r, false, why, len) != 0 ||
        need(&r, "kvsname", NULL, "cmd=get_my_kvsname", why, len) != 0)
        return -1;
    const char *kvs = get(&r, "kvsname");
    if (!*kvs || strlen(kvs) >= sizeof(p->kvsname))
        return fail(why, len, "PMI: unusable kvsname in '%s'", r.shown);
    snprintf(p->kvsname, sizeof(p->kvsname), "%s", kvs);
    return 0;
}

static int init_v2(tdm_pmi_t *p, int rank, const char *jobid, char *why, size_t len) {
    reply_t r;
    char msg[TDM_PMI_VALUE_MAX + 96];
    /* PMI-2 over PMI_FD opens with PMI-1's init line naming version 2: Slurm's srun
     * --mpi=pmi2 reads the first message as that line and drops a client without it */
    static const char init[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    int iver, isub;
    p->version = 1;
    int rc = transact(p, init, "response_to_init", &r, false, why, len);
    p->version = 2;
    if (rc != 0 || need(&r, "pmi_version", &iver, "cmd=init", why, len) != 0 ||
        need(&r, "pmi_subversion", &isub, "cmd=init", why, len) != 0)
        return -1;
    if (iver != 2)
        return fail(why, len, "PMI: the launcher answered PMI-2's init with version %d: '%s'", iver,
                    r.shown);
    if (jobid && check_word("PMI_JOBID", jobid, false, why, len) != 0)
        return -1;
    if (jobid)
        snprintf(msg, sizeof(msg), "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", jobid,
                 rank);
    else
        snprintf(msg, sizeof(msg), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
    static const char sent[] = "cmd=fullinit";
    int ver;
    if (transact(p, msg, "fullinit-response", &r, false, why, len) != 0 ||
        need(&r, "pmi-version", &ver, sent, why, len) != 0 ||
        need(&r, "rank", &p->rank, sent, why, len) != 0 ||
        need(&r, "size", &p->size, sent, why, len) != 0 ||
        need(&r, "appnum", &p->appnum, sent, why, len) != 0)
        return -1;
    if (ver != 2)
        return fail(why, len, "PMI: the launcher answered fullinit with PMI version %d: '%s'", ver,
                    r.shown);
    if (rank >= 0 && p->rank != rank)
        return fail(why, len, "PMI: fullinit for rank %d answered for rank %d: '%s'", rank, p->rank,
                    r.shown);
    if (p->size < 1 || p->rank < 0 || p->rank >= p->size)
        return fail(why, len, "PMI: the launcher gave rank %d of %d: '%s'", p->rank, p->size,
                    r.shown);
    if (transact(p, "cmd=job-getid;", "job-getid-response", &r, false, why, len) != 0 ||
        need(&r, "jobid", NULL, "cmd=job-getid", why, len) != 0)
        return -1;
    const char *id = get(&r, "jobid");
    if (!*id || strlen(id) >= sizeof(p->kvsname))
        return fail(why, len, "PMI: unusable jobid in '%s'", r.shown);
    snprintf(p->kvsname, sizeof(p->kvsname), "%s", id);
    return 0;
}

int tdm_pmi_connect_fd(tdm_pmi_t *p, int fd, int version, int rank, int size, int pmi_id,
                       const char *jobid, char *why, size_t len) {
    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->version = version;
    p->rank = rank;
    p->size = size;
    if (version != 1 && version != 2)
        return fail(why, len, "PMI: version %d is not 1 or 2", version);
    int rc = version == 1 ? init_v1(p, pmi_id, why, len) : init_v2(p, rank, jobid, why, len);
    if (rc == 0 && (p->size < 1 || p->rank < 0 || p->rank >= p->size))
        rc = fail(why, len, "PMI: the launcher gave rank %d of %d", p->rank, p->size);
    return rc;
}

static int env_int(const char *name, int *out, char *why, size_t len) {
    const char *v = getenv(name);
    if (!v || parse_int(v, out) != 0 || *out < 0)
        return fail(why, len, "PMI: %s='%s' is not a number", name, v ? v : "(unset)");
    return 0;
}

int tdm_pmi_connect_env(tdm_pmi_t *p, int version, char *why, size_t len) {
    int fd = -1, rank = -1, size = 0, id = -1;
    const char *port = getenv("PMI_PORT");
    p->fd = -1;
    if (getenv("PMI_FD")) {
        if (env_int("PMI_FD", &fd, why, len) != 0)
            return -1;
        if (fcntl(fd, F_GETFD) < 0)
            return fail(why, len, "PMI: PMI_FD=%d is not an open descriptor", fd);
        /* PMI-1 over PMI_FD: rank and size are the launcher's variables */
        if (env_int("PMI_RANK", &rank, why, len) != 0 ||
            (version == 1 && env_int("PMI_SIZE", &size, why, len) != 0))
            return -1;
    } else if (port) {
        if (version == 2)
            return fail(why, len, "PMI: PMI-2 needs PMI_FD (PMI_PORT is for PMI-1 here)");
        if (env_int("PMI_ID", &id, why, len) != 0)
            return -1;
        const char *colon = strrchr(port, ':');
        char host[256];
        if (!colon || colon == port || (size_t)(colon - port) >= sizeof(host) || !colon[1])
            return fail(why, len, "PMI: PMI_PORT='%s' is not host:port", port);
        snprintf(host, sizeof(host), "%.*s", (int)(colon - port), port);
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
        int e = getaddrinfo(host, colon + 1, &hints, &res);
        if (e != 0)
            return fail(why, len, "PMI: cannot resolve PMI_PORT=%s: %s", port, gai_strerror(e));
        for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
            fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
                e = errno;
                close(fd);
                fd = -1;
                errno = e;
            }
        }
        freeaddrinfo(res);
        if (fd < 0)
            return fail(why, len, "PMI: cannot connect to PMI_PORT=%s: %s", port, strerror(errno));
    } else {
        return fail(why, len, "PMI: neither PMI_FD nor PMI_PORT is set");
    }
    /* the socket is this process's: a program it starts must not talk on it */
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return tdm_pmi_connect_fd(p, fd, version, rank, size, id, getenv("PMI_JOBID"), why, len);
}

int tdm_pmi_put(tdm_pmi_t *p, const char *key, const char *value, char *why, size_t len) {
    char msg[TDM_PMI_VALUE_MAX + TDM_PMI_KVS_MAX + 128];
    reply_t r;
    if (check_word("key", key, true, why, len) != 0 ||
        check_word("value", value, false, why, len) != 0)
        return -1;
    if (p->version == 1) {
        snprintf(msg, sizeof(msg), "cmd=put kvsname=%s key=%s value=%s\n", p->kvsname, key, value);
        return transact(p, msg, "put_result", &r, false, why, len);
    }
    snprintf(msg, sizeof(msg), "cmd=kvs-put;key=%s;value=%s;", key, value);
    return transact(p, msg, "kvs-put-response", &r, false, why, len);
}

int tdm_pmi_fence(tdm_pmi_t *p, char *why, size_t len) {
    reply_t r;
    if (p->version == 1)
        return transact(p, "cmd=barrier_in\n", "barrier_out", &r, false, why, len);
    if (transact(p, "cmd=kvs-fence;", "kvs-fence-response", &r, false, why, len) != 0)
        return -1;
    /* Hydra answers kvs-fence at once and holds back a get until every process has fenced:
     * a get of a key nobody puts makes the fence a barrier there too (under launchers whose
     * fence is one already it costs a round trip) */
    char val[8];
    int got = tdm_pmi_get(p, "tdm-fence-never-put", val, sizeof(val), why, len);
    if (got > 0)
        return fail(why, len,
                    "PMI: the launcher has a value for a key nobody put "
                    "(tdm-fence-never-put=%s)",
                    val);
    return got;
}

/* The value of a get reply: PMI-1 says not-found with rc != 0, PMI-2 with found=FALSE. */
static int got_value(const reply_t *r, const char *sent, char *value, size_t vlen, char *why,
                     size_t len) {
    const char *found = get(r, "found");
    const char *rc = get(r, "rc");
    if (found && strcmp(found, "TRUE") && strcmp(found, "FALSE"))
        return fail(why, len, "PMI: the reply to '%s' has found=%s, not TRUE or FALSE: '%s'", sent,
                    found, r->shown);
    if ((found && !strcmp(found, "FALSE")) || (rc && strcmp(rc, "0") != 0))
        return 0;
    const char *v = get(r, "value");
    if (!v)
        return fail(why, len, "PMI: the reply to '%s' has no value: '%s'", sent, r->shown);
    if (strlen(v) >= vlen)
        return fail(why, len, "PMI: the value in the reply to '%s' is longer than %zu bytes", sent,
                    vlen - 1);
    memcpy(value, v, strlen(v) + 1);
    return 1;
}

int tdm_pmi_get(tdm_pmi_t *p, const char *key, char *value, size_t vlen, char *why, size_t len) {
    char msg[TDM_PMI_KVS_MAX + 160], sent[128];
    reply_t r;
    if (check_word("key", key, true, why, len) != 0)
        return -1;
    if (p->version == 1) {
        snprintf(msg, sizeof(msg), "cmd=get kvsname=%s key=%s\n", p->kvsname, key);
        snprintf(sent, sizeof(sent), "cmd=get key=%s", key);
        if (transact(p, msg, "get_result", &r, true, why, len) != 0)
            return -1;
    } else {
        snprintf(msg, sizeof(msg), "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;", p->kvsname, key);
        snprintf(sent, sizeof(sent), "cmd=kvs-get key=%s", key);
        if (transact(p, msg, "kvs-get-response", &r, false, why, len) != 0)
            return -1;
    }
    return got_value(&r, sent, value, vlen, why, len);
}

int tdm_pmi_job_attr(tdm_pmi_t *p, const char *key, char *value, size_t vlen, char *why,
                     size_t len) {
    if (p->version == 1) /* PMI-1 serves the job's attributes as keys of its space */
        return tdm_pmi_get(p, key, value, vlen, why, len);
    char msg[160], sent[128];
    reply_t r;
    if (check_word("key", key, true, why, len) != 0)
        return -1;
    snprintf(msg, sizeof(msg), "cmd=info-getjobattr;key=%s;", key);
    snprintf(sent, sizeof(sent), "cmd=info-getjobattr key=%s", key);
    if (transact(p, msg, "info-getjobattr-response", &r, false, why, len) != 0)
        return -1;
    return got_value(&r, sent, value, vlen, why, len);
}

void tdm_pmi_abort(tdm_pmi_t *p, int code, bool v1_line, const char *msg) {
    char buf[512];
    int n;
    if (p->fd < 0)
        return;
    if (p->version == 1 || v1_line) {
        n = snprintf(buf, sizeof(buf), "cmd=abort exitcode=%d\n", code);
    } else {
        /* the message is a value: no ';' (it would need doubling), kept short */
        char m[256];
        snprintf(m, sizeof(m), "%s", msg ? msg : "MPI_Abort");
        for (char *c = m; *c; c++)
            if (*c == ';' || *c == '\n')
                *c = ',';
        int body = snprintf(buf + 6, sizeof(buf) - 6, "cmd=abort;isworldabort=TRUE;msg=%s;", m);
        char head[8];
        snprintf(head, sizeof(head), "%-6d", body);
        memcpy(buf, head, 6);
        n = body + 6;
    }
    if (n > 0 && (size_t)n < sizeof(buf))
        (void)write_all(p->fd, buf, (size_t)n);
}

int tdm_pmi_finalize(tdm_pmi_t *p, char *why, size_t len) {
    reply_t r;
    int rc = 0;
    if (p->fd < 0)
        return 0;
    if (p->version == 1)
        rc = transact(p, "cmd=finalize\n", "finalize_ack", &r, false, why, len);
    else
        rc = transact(p, "cmd=finalize;", "finalize-response", &r, false, why, len);
    close(p->fd);
    p->fd = -1;
    return rc;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int tdm_pmi_parse_mapping(const char *map, int size, int *node_of, char *why, size_t len) {
    enum { MAX_BLOCKS = 1024 };
    int blk[MAX_BLOCKS][3];
    int nb = 0;
    const char *s = map;
    if (strncmp(s, "(vector,", 8) != 0)
        return fail(why, len, "PMI_process_mapping '%.100s' does not start with '(vector,'", map);
    s += 8;
    for (;;) {
        int v[3];
        if (*s != '(')
            return fail(why, len, "PMI_process_mapping '%.100s': expected '(' at offset %d", map,
                        (int)(s - map));
        s++;
        for (int k = 0; k < 3; k++) {
            char *end;
            if (*s < '0' || *s > '9')
                return fail(why, len,
                            "PMI_process_mapping '%.100s': expected a number at offset %d", map,
                            (int)(s - map));
            errno = 0;
            long x = strtol(s, &end, 10);
            if (errno || x > INT_MAX)
                return fail(why, len, "PMI_process_mapping '%.100s': number out of range", map);
            v[k] = (int)x;
            s = end;
            if (*s != (k < 2 ? ',' : ')'))
                return fail(why, len, "PMI_process_mapping '%.100s': expected '%c' at offset %d",
                            map, k < 2 ? ',' : ')', (int)(s - map));
            s++;
        }
        if (v[1] < 1 || v[2] < 1)
            return fail(why, len,
                        "PMI_process_mapping '%.100s': a block of %d nodes x %d ranks is empty",
                        map, v[1], v[2]);
        if (nb == MAX_BLOCKS)
            return fail(why, len, "PMI_process_mapping has more than %d blocks", MAX_BLOCKS);
        memcpy(blk[nb++], v, sizeof(v));
        if (*s == ')')
            break;
        if (*s != ',')
            return fail(why, len, "PMI_process_mapping '%.100s': expected ',' or ')' at offset %d",
                        map, (int)(s - map));
        s++;
    }
    if (s[1] != 0)
        return fail(why, len, "PMI_process_mapping '%.100s': text after the closing ')'", map);
    /* assign ranks block by block, node by node; repeat the pattern until all have one */
    int r = 0;
    while (r < size) {
        for (int b = 0; b < nb && r < size; b++) {
            for (int n = 0; n < blk[b][1] && r < size; n++) {
                long node = (long)blk[b][0] + n;
                if (node > INT_MAX)
                    return fail(why, len, "PMI_process_mapping '%.100s': node id out of range",
                                map);
                for (int k = 0; k < blk[b][2] && r < size; k++)
                    node_of[r++] = (int)node;
            }
        }
    }
    int *sorted = malloc((size_t)size * sizeof(int));
    if (!sorted)
        return fail(why, len, "out of memory reading PMI_process_mapping");
    memcpy(sorted, node_of, (size_t)size * sizeof(int));
    qsort(sorted, (size_t)size, sizeof(int), cmp_int);
    int nodes = 0;
    for (int i = 0; i < size; i++)
        nodes += i == 0 || sorted[i] != sorted[i - 1];
    free(sorted);
    return nodes;
}
