/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMI client (src/boot/pmi.c) against a fake launcher on a socketpair: a child process
 * reads each message the client sends (a PMI-1 line, or a PMI-2 length and body), checks
 * that it starts as expected and answers with a canned reply. A well-formed conversation
 * must work for both versions (and the PMI_PORT hello); each malformed reply must give an
 * error that names the command sent and quotes what came back, never a crash or a hang.
 * PMI-2 begins with PMI-1's init line (version 2), and its fullinit names PMI_JOBID when
 * there is one: the conversation of Slurm's srun --mpi=pmi2 is played as Slurm 22.05
 * answers (rc first, appnum=-1, a refused fullinit without pmijobid). Then
 * PMI_process_mapping strings, good and bad.
 */
#include "boot/pmi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed, passed;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (_cond) {                                                                               \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL line %d: ", __LINE__);                                                    \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

typedef struct step {
    const char *expect; /* the message must start with this */
    const char *reply;  /* sent back as is (PMI-2: framed unless it starts with '!') */
} step_t;

/* One message from the client: PMI-1 a line, PMI-2 a frame, or a line where a PMI-2 frame
 * was due (the init): *line says which. */
static int read_msg(int fd, int version, char *buf, size_t cap, int *line) {
    size_t n = 0;
    *line = version == 1;
    if (version == 2) {
        for (size_t got = 0; got < 4;) { /* a frame's length has 6 characters */
            ssize_t r = read(fd, buf + got, 4 - got);
            if (r <= 0)
                return -1;
            got += (size_t)r;
        }
        n = 4;
        if (strncmp(buf, "cmd=", 4) == 0)
            *line = 1;
    }
    if (*line) {
        while (n + 1 < cap) {
            if (read(fd, buf + n, 1) != 1)
                return -1;
            if (buf[n++] == '\n')
                break;
        }
    } else {
        char head[7] = {0};
        memcpy(head, buf, 4);
        n = 0;
        for (size_t got = 4; got < 6;) {
            ssize_t r = read(fd, head + got, 6 - got);
            if (r <= 0)
                return -1;
            got += (size_t)r;
        }
        size_t want = (size_t)atoi(head);
        if (want + 1 > cap)
            return -1;
        while (n < want) {
            ssize_t r = read(fd, buf + n, want - n);
            if (r <= 0)
                return -1;
            n += (size_t)r;
        }
    }
    buf[n] = 0;
    return 0;
}

/* The fake launcher: answers `steps` in turn, then closes. Exits 0 when every message
 * began as expected. */
static void serve(int fd, int version, const step_t *steps, int n) {
    char msg[4096];
    for (int i = 0; i < n; i++) {
        int line;
        if (read_msg(fd, version, msg, sizeof(msg), &line) != 0)
            _exit(0); /* the client gave up (an error): not this side's failure */
        if (strncmp(msg, steps[i].expect, strlen(steps[i].expect)) != 0) {
            printf("FAIL: fake launcher step %d expected '%s...', got '%s'\n", i, steps[i].expect,
                   msg);
            _exit(1);
        }
        const char *r = steps[i].reply;
        if (!r)
            continue;
        if (!line && r[0] != '!') {
            char head[24];
            snprintf(head, sizeof(head), "%-6zu", strlen(r));
            if (write(fd, head, 6) != 6)
                _exit(1);
        } else if (r[0] == '!') {
            r++;
        }
        if (write(fd, r, strlen(r)) != (ssize_t)strlen(r))
            _exit(1);
    }
    _exit(0);
}

typedef int (*client_fn)(tdm_pmi_t *p, char *why, size_t len);

/* Run `client` against a fake launcher playing `steps`; its result, the error in *why.
 * `jobid` is the PMI_JOBID the client is given. */
static int run_job(int version, int rank, int size, int pmi_id, const char *jobid,
                   const step_t *steps, int n, client_fn client, char *why, size_t len) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        alarm(30); /* a client that hangs must not hang the test */
        serve(sv[1], version, steps, n);
    }
    close(sv[1]);
    tdm_pmi_t p;
    why[0] = 0;
    int rc = tdm_pmi_connect_fd(&p, sv[0], version, rank, size, pmi_id, jobid, why, len);
    if (rc == 0 && client)
        rc = client(&p, why, len);
    close(sv[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fake launcher ended with status %#x", st);
    return rc;
}

static int run(int version, int rank, int size, int pmi_id, const step_t *steps, int n,
               client_fn client, char *why, size_t len) {
    return run_job(version, rank, size, pmi_id, NULL, steps, n, client, why, len);
}

/* ---- a whole conversation ---- */
static tdm_pmi_t seen;
static int conversation(tdm_pmi_t *p, char *why, size_t len) {
    char v[TDM_PMI_VALUE_MAX];
    seen = *p;
    if (tdm_pmi_put(p, "k1", "v1", why, len) != 0 || tdm_pmi_fence(p, why, len) != 0)
        return -1;
    if (tdm_pmi_get(p, "k0", v, sizeof(v), why, len) != 1 || strcmp(v, "v0") != 0)
        return snprintf(why, len, "get k0 gave '%s'", v), -1;
    if (tdm_pmi_get(p, "nope", v, sizeof(v), why, len) != 0)
        return snprintf(why, len, "get of a missing key found one"), -1;
    if (tdm_pmi_job_attr(p, "PMI_process_mapping", v, sizeof(v), why, len) != 1 ||
        strcmp(v, "(vector,(0,1,2))") != 0)
        return snprintf(why, len, "mapping '%s'", v), -1;
    return tdm_pmi_finalize(p, why, len);
}

static int conversation_slurm(tdm_pmi_t *p, char *why, size_t len) {
    char v[TDM_PMI_VALUE_MAX];
    int node_of[4];
    seen = *p;
    if (tdm_pmi_put(p, "k1", "v1", why, len) != 0 || tdm_pmi_fence(p, why, len) != 0)
        return -1;
    if (tdm_pmi_get(p, "k0", v, sizeof(v), why, len) != 1 || strcmp(v, "v0") != 0)
        return snprintf(why, len, "get k0 gave '%s'", v), -1;
    if (tdm_pmi_get(p, "nope", v, sizeof(v), why, len) != 0)
        return snprintf(why, len, "get of a missing key found one"), -1;
    if (tdm_pmi_job_attr(p, "PMI_process_mapping", v, sizeof(v), why, len) != 1)
        return -1;
    if (tdm_pmi_parse_mapping(v, 4, node_of, why, len) != 2 || node_of[0] != 0 || node_of[1] != 0 ||
        node_of[2] != 1 || node_of[3] != 1)
        return snprintf(why, len, "mapping '%s' is not 2 nodes x 2 ranks", v), -1;
    return tdm_pmi_finalize(p, why, len);
}

static int conversation_init_only(tdm_pmi_t *p, char *why, size_t len) {
    (void)why;
    (void)len;
    seen = *p;
    return 0;
}

static const step_t v1_init[] = {
    {"cmd=init pmi_version=1 pmi_subversion=1", "cmd=response_to_init pmi_version=1 "
                                                "pmi_subversion=1 rc=0\n"},
    {"cmd=get_maxes", "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"},
    {"cmd=get_appnum", "cmd=appnum appnum=0\n"},
    {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=kvs_1_0\n"},
};

static void good_conversations(void) {
    char why[512];
    step_t v1[16];
    int n = 0;
    for (size_t i = 0; i < 4; i++)
        v1[n++] = v1_init[i];
    v1[n++] = (step_t){"cmd=put kvsname=kvs_1_0 key=k1 value=v1", "cmd=put_result rc=0 "
                                                                  "msg=success\n"};
    v1[n++] = (step_t){"cmd=barrier_in", "cmd=barrier_out\n"};
    v1[n++] = (step_t){"cmd=get kvsname=kvs_1_0 key=k0", "cmd=get_result rc=0 msg=success "
                                                         "value=v0\n"};
    v1[n++] =
        (step_t){"cmd=get kvsname=kvs_1_0 key=nope", "cmd=get_result rc=-1 "
                                                     "msg=key_nope_not_found value=unknown\n"};
    v1[n++] = (step_t){"cmd=get kvsname=kvs_1_0 key=PMI_process_mapping",
                       "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n"};
    v1[n++] = (step_t){"cmd=finalize", "cmd=finalize_ack\n"};
    int rc = run(1, 1, 2, -1, v1, n, conversation, why, sizeof(why));
    CHECK(rc == 0, "PMI-1 conversation: %s", why);
    CHECK(seen.rank == 1 && seen.size == 2 && !strcmp(seen.kvsname, "kvs_1_0"),
          "PMI-1: rank %d size %d kvs %s", seen.rank, seen.size, seen.kvsname);

    /* PMI_PORT: rank and size come from the initack */
    step_t port[8] = {{"cmd=initack pmiid=5", "cmd=initack\ncmd=set size=4\ncmd=set rank=3\n"
                                              "cmd=set debug=0\n"}};
    for (size_t i = 0; i < 4; i++)
        port[1 + i] = v1_init[i];
    rc = run(1, -1, 0, 5, port, 5, conversation_init_only, why, sizeof(why));
    CHECK(rc == 0 && seen.rank == 3 && seen.size == 4, "PMI_PORT initack: rc %d rank %d size %d %s",
          rc, seen.rank, seen.size, why);

    const step_t v2[] = {
        {"cmd=init pmi_version=2 pmi_subversion=0\n",
         "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"},
        {"cmd=fullinit;pmirank=1;", "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;"
                                    "size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"},
        {"cmd=job-getid;", "cmd=job-getid-response;jobid=kvs_9_0;rc=0;"},
        {"cmd=kvs-put;key=k1;value=v1;", "cmd=kvs-put-response;rc=0;"},
        {"cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;"},
        {"cmd=kvs-get;jobid=kvs_9_0;srcid=-1;key=tdm-fence-never-put;",
         "cmd=kvs-get-response;found=FALSE;rc=0;"},
        {"cmd=kvs-get;jobid=kvs_9_0;srcid=-1;key=k0;", "cmd=kvs-get-response;found=TRUE;value=v0;"
                                                       "rc=0;"},
        {"cmd=kvs-get;jobid=kvs_9_0;srcid=-1;key=nope;", "cmd=kvs-get-response;found=FALSE;rc=0;"},
        {"cmd=info-getjobattr;key=PMI_process_mapping;",
         "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1,2));rc=0;"},
        {"cmd=finalize;", "cmd=finalize-response;rc=0;"},
    };
    rc = run(2, 1, 0, -1, v2, 10, conversation, why, sizeof(why));
    CHECK(rc == 0, "PMI-2 conversation: %s", why);
    CHECK(seen.rank == 1 && seen.size == 2 && !strcmp(seen.kvsname, "kvs_9_0"),
          "PMI-2: rank %d size %d jobid %s", seen.rank, seen.size, seen.kvsname);

    /* Slurm 22.05's srun --mpi=pmi2 (rank 3 of 4 on the second of 2 nodes, 2 per node):
     * its replies word for word; the fullinit must name PMI_JOBID */
    const step_t slurm[] = {
        {"cmd=init pmi_version=2 pmi_subversion=0\n",
         "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"},
        {"cmd=fullinit;pmijobid=1.0;pmirank=3;",
         "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;appnum=-1;"
         "debugged=FALSE;pmiverbose=FALSE;"},
        {"cmd=job-getid;", "cmd=job-getid-response;rc=0;jobid=1.0;"},
        {"cmd=kvs-put;key=k1;value=v1;", "cmd=kvs-put-response;rc=0;"},
        {"cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;"},
        {"cmd=kvs-get;jobid=1.0;srcid=-1;key=tdm-fence-never-put;",
         "cmd=kvs-get-response;rc=0;found=FALSE;"},
        {"cmd=kvs-get;jobid=1.0;srcid=-1;key=k0;",
         "cmd=kvs-get-response;rc=0;found=TRUE;value=v0;"},
        {"cmd=kvs-get;jobid=1.0;srcid=-1;key=nope;", "cmd=kvs-get-response;rc=0;found=FALSE;"},
        {"cmd=info-getjobattr;key=PMI_process_mapping;",
         "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));"},
        {"cmd=finalize;", "cmd=finalize-response;rc=0;"},
    };
    rc = run_job(2, 3, 4, -1, "1.0", slurm, 10, conversation_slurm, why, sizeof(why));
    CHECK(rc == 0, "Slurm's PMI-2 conversation: %s", why);
    CHECK(seen.rank == 3 && seen.size == 4 && seen.appnum == -1 && !strcmp(seen.kvsname, "1.0"),
          "Slurm's PMI-2: rank %d size %d appnum %d jobid %s", seen.rank, seen.size, seen.appnum,
          seen.kvsname);
    /* Slurm refuses a fullinit without pmijobid: the error says so, quoting the reply */
    const step_t refused[] = {slurm[0],
                              {"cmd=fullinit;pmirank=0;",
                               "cmd=fullinit-response;rc=3;pmi-version=2;"
                               "pmi-subversion=0;rank=0;size=4;appnum=-1;"
                               "debugged=FALSE;pmiverbose=FALSE;"}};
    rc = run_job(2, 0, 4, -1, NULL, refused, 2, NULL, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "refused 'cmd=fullinit") && strstr(why, "rc=3"),
          "fullinit refused: rc %d '%s'", rc, why);
    /* a PMI_JOBID that cannot go into a PMI-2 field is refused before it is sent */
    rc = run_job(2, 0, 4, -1, "1;0", slurm, 1, NULL, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "PMI_JOBID") && strstr(why, "cannot be sent"),
          "PMI_JOBID with a ';': rc %d '%s'", rc, why);
}

static int put_k(tdm_pmi_t *p, char *why, size_t len) {
    return tdm_pmi_put(p, "k", "v", why, len);
}

static int put_space(tdm_pmi_t *p, char *why, size_t len) {
    return tdm_pmi_put(p, "k", "a b", why, len);
}

static int get_k(tdm_pmi_t *p, char *why, size_t len) {
    char v[64];
    return tdm_pmi_get(p, "k", v, sizeof(v), why, len) < 0 ? -1 : 0;
}

static int fence_k(tdm_pmi_t *p, char *why, size_t len) {
    return tdm_pmi_fence(p, why, len);
}

/* ---- malformed replies ---- */
typedef struct bad {
    int version;
    int at;                    /* which step of the init conversation gets `reply` */
    const char *reply;         /* PMI-2: framed unless it starts with '!' */
    const char *want1, *want2; /* substrings of the error */
} bad_t;

static const step_t v2_init[] = {
    {"cmd=init pmi_version=2", "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"},
    {"cmd=fullinit;", "cmd=fullinit-response;pmi-version=2;rank=0;size=1;appnum=0;rc=0;"},
    {"cmd=job-getid;", "cmd=job-getid-response;jobid=j;rc=0;"},
};

static void bad_replies(void) {
    static const bad_t cases[] = {
        {1, 0, "hello world\n", "cmd=init", "'hello world'"},
        {1, 0, "cmd=maxes kvsname_max=1\n", "expected cmd=response_to_init", "cmd=maxes"},
        {1, 0, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n", "version 2", ""},
        {1, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=nope\n",
         "refused 'cmd=init", "msg=nope"},
        {1, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=zero\n", "rc=zero",
         "not a number"},
        {1, 1, "cmd=maxes kvsname_max=256 vallen_max=1024\n", "cmd=get_maxes", "no keylen_max"},
        {1, 1, "cmd=maxes kvsname_max=256 keylen_max=8 vallen_max=1024\n", "too small", ""},
        {1, 2, "cmd=appnum appnum=x1\n", "cmd=get_appnum", "appnum=x1, not a number"},
        {1, 2, "cmd=appnum =3\n", "cmd=get_appnum", "does not parse"},
        {1, 3, "cmd=my_kvsname\n", "cmd=get_my_kvsname", "no kvsname"},
        {1, 3, "cmd=my_kvsname kvsname=a", "cmd=get_my_kvsname", "closed"},
        {1, 3, "", "cmd=get_my_kvsname", "no reply"},
        {1, 3, "cmd=my_kvsname kvsname=a\0b\n", "cmd=get_my_kvsname", ""},
        {2, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
         "answered PMI-2's init with version 1", ""},
        {2, 0, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1\n", "refused 'cmd=init",
         "rc=-1"},
        {2, 1, "!abcdefcmd=x", "cmd=fullinit", "PMI-2 length"},
        {2, 1, "!20    cmd=short", "cmd=fullinit", "fewer than 20 bytes"},
        {2, 1, "cmd=fullinit-response;rank=0;size=1;appnum=0;rc=0;", "cmd=fullinit",
         "no pmi-version"},
        {2, 1, "cmd=fullinit-response;pmi-version=2;rank=1;size=1;appnum=0;rc=0;",
         "fullinit for rank 0 answered for rank 1", ""},
        {2, 1, "cmd=fullinit-response;pmi-version=2;rank=0;size=0;appnum=0;rc=0;", "rank 0 of 0",
         ""},
        {2, 1, "cmd=fullinit-response;pmi-version=2;rank=0;size=1;appnum=0;rc=3;", "refused", ""},
        {2, 1, "cmd=fullinit-response;pmi-version=2;rank=0;size;appnum=0;rc=0;", "does not parse",
         "size;appnum"},
        {2, 2, "cmd=job-getid-response;rc=0;", "cmd=job-getid", "no jobid"},
        {2, 2, "cmd=kvs-fence-response;rc=0;", "expected cmd=job-getid-response",
         "kvs-fence-response"},
    };
    char why[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const bad_t *c = &cases[i];
        step_t steps[8];
        const step_t *base = c->version == 1 ? v1_init : v2_init;
        int n = c->version == 1 ? 4 : 3;
        for (int k = 0; k <= c->at; k++)
            steps[k] = base[k];
        steps[c->at].reply = c->reply;
        /* the NUL case: a reply with a byte the string cannot hold */
        if (strstr(c->want1, "get_my_kvsname") && !c->want2[0]) {
            static const char nul[] = "cmd=my_kvsname kvsname=a\0b\n";
            int sv[2];
            socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
            pid_t pid = fork();
            if (pid == 0) {
                char m[512];
                close(sv[0]);
                for (int k = 0; k < 4; k++) {
                    int line;
                    if (read_msg(sv[1], 1, m, sizeof(m), &line) != 0)
                        _exit(1);
                    if (k < 3 && write(sv[1], v1_init[k].reply, strlen(v1_init[k].reply)) < 0)
                        _exit(1);
                }
                if (write(sv[1], nul, sizeof(nul) - 1) < 0)
                    _exit(1);
                _exit(0);
            }
            close(sv[1]);
            tdm_pmi_t p;
            int rc = tdm_pmi_connect_fd(&p, sv[0], 1, 0, 1, -1, NULL, why, sizeof(why));
            close(sv[0]);
            waitpid(pid, NULL, 0);
            CHECK(rc != 0 && strstr(why, "NUL byte") && strstr(why, "a\\x00b"),
                  "NUL in a reply: rc %d '%s'", rc, why);
            continue;
        }
        int rc = run(c->version, 0, 1, -1, steps, c->at + 1, NULL, why, sizeof(why));
        CHECK(rc != 0 && strstr(why, c->want1) && strstr(why, c->want2),
              "case %zu (PMI-%d, reply '%s'): rc %d, message '%s' lacks '%s' or '%s'", i,
              c->version, c->reply, rc, why, c->want1, c->want2);
        (void)n;
    }

    /* after init: a put refused, a get with found=MAYBE, a fence answered by another cmd */
    step_t s1[6];
    for (int k = 0; k < 4; k++)
        s1[k] = v1_init[k];
    s1[4] = (step_t){"cmd=put", "cmd=put_result rc=-1 msg=duplicate_key\n"};
    int rc = run(1, 0, 1, -1, s1, 5, put_k, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "refused 'cmd=put") && strstr(why, "duplicate_key"), "put: '%s'",
          why);
    step_t s2[4] = {v2_init[0],
                    v2_init[1],
                    v2_init[2],
                    {"cmd=kvs-get;", "cmd=kvs-get-response;found=MAYBE;value=v;rc=0;"}};
    rc = run(2, 0, 1, -1, s2, 4, get_k, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "cmd=kvs-get key=k") && strstr(why, "found=MAYBE"), "get: '%s'",
          why);
    s1[4] = (step_t){"cmd=barrier_in", "cmd=barrier_in\n"};
    rc = run(1, 0, 1, -1, s1, 5, fence_k, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "expected cmd=barrier_out in reply to 'cmd=barrier_in'"),
          "fence: '%s'", why);
    s1[4] = (step_t){"cmd=get", "cmd=get_result rc=0 msg=success\n"};
    rc = run(1, 0, 1, -1, s1, 5, get_k, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "cmd=get key=k") && strstr(why, "no value"), "get: '%s'", why);
    /* a put the protocol cannot carry is refused before it is sent */
    rc = run(1, 0, 1, -1, v1_init, 4, put_space, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "cannot be sent"), "put with a space: '%s'", why);
    /* PMI_PORT hello answered wrongly */
    step_t port[1] = {{"cmd=initack pmiid=2", "cmd=initack\ncmd=set size=2\ncmd=sit rank=1\n"}};
    rc = run(1, -1, 0, 2, port, 1, NULL, why, sizeof(why));
    CHECK(rc != 0 && strstr(why, "after the initack") && strstr(why, "cmd=sit rank=1"),
          "initack: '%s'", why);
}

/* ---- PMI_process_mapping ---- */
static void mappings(void) {
    struct {
        const char *map;
        int size, nodes;
        const char *node_of; /* one digit per rank */
    } good[] = {
        {"(vector,(0,1,2))", 2, 1, "00"},
        {"(vector,(0,1,1))", 3, 1, "000"},  /* Hydra, one host: the block repeats */
        {"(vector,(0,2,2))", 4, 2, "0011"}, /* -hosts a:2,b:2 */
        {"(vector,(0,2,1))", 4, 2, "0101"}, /* round robin */
        {"(vector,(0,2,1),(3,1,2))", 5, 3, "01330"},
        {"(vector,(1,2,1))", 2, 2, "12"},
    };
    const char *bad[] = {"",
                         "vector,(0,1,1)",
                         "(vector)",
                         "(vector,(0,1))",
                         "(vector,(0,1,1)",
                         "(vector,(0,1,1)) ",
                         "(vector,(0,0,1))",
                         "(vector,(0,1,0))",
                         "(vector,(-1,1,1))",
                         "(vector,(0,1,1);(1,1,1))",
                         "(vector,(99999999999,1,1))",
                         "(vector,(a,1,1))",
                         "(vector, (1,2,1))",
                         "(vector,(1, 2,1))"};
    int node_of[8];
    char why[256];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int n = tdm_pmi_parse_mapping(good[i].map, good[i].size, node_of, why, sizeof(why));
        char got[16] = "";
        for (int r = 0; r < good[i].size && n > 0; r++)
            got[r] = (char)('0' + node_of[r]);
        CHECK(n == good[i].nodes && !strcmp(got, good[i].node_of),
              "mapping %s x %d ranks: %d nodes '%s' (%s), expected %d '%s'", good[i].map,
              good[i].size, n, got, n < 0 ? why : "", good[i].nodes, good[i].node_of);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = 0;
        int n = tdm_pmi_parse_mapping(bad[i], 4, node_of, why, sizeof(why));
        CHECK(n < 0 && strstr(why, "PMI_process_mapping"), "bad mapping '%s' gave %d ('%s')",
              bad[i], n, why);
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    good_conversations();
    bad_replies();
    mappings();
    if (failed) {
        printf("%d of %d checks failed\n", failed, failed + passed);
        return 1;
    }
    printf("No Errors (%d checks)\n", passed);
    return 0;
}
