/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keyvals and attribute lists (see attr.h for the contract).
 *
 * Keyvals live in fixed chunks reached through a directory that never moves,
 * so a lookup needs no lock even while another thread creates a keyval. A
 * keyval is referenced by its user handle and by every attribute that uses it;
 * its slot returns to the free list when both are gone.
 *
 * Threads: kv_lock serialises the keyval table's changes (its reference counts
 * and `user_freed` are also read without it, atomically). list_lock guards every
 * object's attribute list: several threads may set, get and delete attributes
 * of one object at once (MPI_COMM_WORLD's, say, with different keyvals). Neither
 * is held while a user callback runs, so a callback may call MPI; after one, the
 * list is looked up again. Order: list_lock, then kv_lock. Both are base/lock.h
 * locks: nothing unless the process is threaded.
 */
#include "attr.h"

#include "../base/lock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KV_CHUNK 256
#define KV_MAX_CHUNKS ((TDM_ATTR_KEYVAL_INDEX_MASK + 1) / KV_CHUNK)

typedef struct keyval {
    tdm_attr_copy_fn_t *copy;
    tdm_attr_delete_fn_t *del;
    void *extra;
    int refs;      /* user handle (until freed) + attributes using it; 0 = free slot */
    int next_free; /* free-list link (index), -1 at the end */
    uint8_t kind;
    uint8_t lang;
    uint8_t user_freed;
} keyval_t;

static keyval_t *kv_chunks[KV_MAX_CHUNKS];
static int kv_count;     /* slots handed out so far (high-water mark) */
static int kv_free = -1; /* head of the free list */
static tdm_lock_t kv_lock = TDM_LOCK_INITIALIZER;
static tdm_lock_t list_lock = TDM_LOCK_INITIALIZER;

typedef struct attr {
    int keyval; /* handle */
    int index;  /* keyval slot */
    uint8_t lang;
    void *val;
} attr_t;

struct tdm_attr_list {
    int n, cap;
    attr_t a[];
};

static inline keyval_t *kv_slot(int index) {
    return &kv_chunks[index / KV_CHUNK][index % KV_CHUNK];
}

static inline int kv_handle(tdm_attr_kind_t kind, int index) {
    return (int)(TDM_ATTR_KEYVAL_USER | ((unsigned)kind << TDM_ATTR_KEYVAL_KIND_SHIFT) |
                 (unsigned)index);
}

/* The keyval slot a handle names if it is a user keyval of `kind` that has been
 * created and not yet recycled; NULL otherwise. Freed-but-referenced keyvals
 * are returned too (callers check user_freed where it matters). */
static keyval_t *kv_lookup(tdm_attr_kind_t kind, int keyval, int *index_p) {
    unsigned h = (unsigned)keyval;
    if ((h & ~TDM_ATTR_KEYVAL_INDEX_MASK) !=
        (TDM_ATTR_KEYVAL_USER | ((unsigned)kind << TDM_ATTR_KEYVAL_KIND_SHIFT)))
        return NULL;
    int index = (int)(h & TDM_ATTR_KEYVAL_INDEX_MASK);
    if (index >= __atomic_load_n(&kv_count, __ATOMIC_ACQUIRE))
        return NULL;
    keyval_t *kv = kv_slot(index);
    if (TDM_LOAD_RELAXED(&kv->refs) <= 0 || kv->kind != (uint8_t)kind)
        return NULL;
    if (index_p)
        *index_p = index;
    return kv;
}

static void kv_release(int index) {
    tdm_lock_acquire(&kv_lock);
    keyval_t *kv = kv_slot(index);
    int left = kv->refs - 1;
    TDM_STORE_RELAXED(&kv->refs, left);
    if (left == 0) {
        kv->next_free = kv_free;
        kv_free = index;
    }
    tdm_lock_release(&kv_lock);
}

static void kv_retain(int index) {
    tdm_lock_acquire(&kv_lock);
    TDM_STORE_RELAXED(&kv_slot(index)->refs, kv_slot(index)->refs + 1);
    tdm_lock_release(&kv_lock);
}

int tdm_attr_keyval_create(tdm_attr_kind_t kind, tdm_attr_copy_fn_t *copy,
                           tdm_attr_delete_fn_t *del, void *extra_state, tdm_attr_lang_t lang,
                           int *keyval_p) {
    tdm_lock_acquire(&kv_lock);
    int index = kv_free;
    if (index >= 0) {
        kv_free = kv_slot(index)->next_free;
    } else {
        index = kv_count;
        if (index > (int)TDM_ATTR_KEYVAL_INDEX_MASK) {
            tdm_lock_release(&kv_lock);
            return TDM_ATTR_ENOMEM;
        }
        if (!kv_chunks[index / KV_CHUNK]) {
            kv_chunks[index / KV_CHUNK] = calloc(KV_CHUNK, sizeof(keyval_t));
            if (!kv_chunks[index / KV_CHUNK]) {
                tdm_lock_release(&kv_lock);
                return TDM_ATTR_ENOMEM;
            }
        }
    }
    keyval_t *kv = kv_slot(index);
    *kv = (keyval_t){.copy = copy,
                     .del = del,
                     .extra = extra_state,
                     .refs = 1,
                     .next_free = -1,
                     .kind = (uint8_t)kind,
                     .lang = (uint8_t)lang};
    if (index == kv_count)
        __atomic_store_n(&kv_count, index + 1, __ATOMIC_RELEASE);
    tdm_lock_release(&kv_lock);
    *keyval_p = kv_handle(kind, index);
    return 0;
}

int tdm_attr_keyval_free(tdm_attr_kind_t kind, int keyval) {
    int index;
    keyval_t *kv = kv_lookup(kind, keyval, &index);
    if (!kv || TDM_LOAD_RELAXED(&kv->user_freed))
        return TDM_ATTR_EKEYVAL;
    TDM_STORE_RELAXED(&kv->user_freed, 1);
    kv_release(index);
    return 0;
}

bool tdm_attr_keyval_valid(tdm_attr_kind_t kind, int keyval) {
    keyval_t *kv = kv_lookup(kind, keyval, NULL);
    return kv && !TDM_LOAD_RELAXED(&kv->user_freed);
}

/* ---- lists ---- */

static attr_t *list_find(tdm_attr_list_t *l, int keyval) {
    if (!l)
        return NULL;
    for (int i = 0; i < l->n; i++) {
        if (l->a[i].keyval == keyval)
            return &l->a[i];
    }
    return NULL;
}

static int list_append(tdm_attr_list_t **list, const attr_t *a) {
    tdm_attr_list_t *l = *list;
    if (!l || l->n == l->cap) {
        int cap = l ? 2 * l->cap : 4;
        tdm_attr_list_t *nl = realloc(l, sizeof(*nl) + (size_t)cap * sizeof(attr_t));
        if (!nl)
            return TDM_ATTR_ENOMEM;
        if (!l)
            nl->n = 0;
        nl->cap = cap;
        *list = l = nl;
    }
    l->a[l->n++] = *a;
    return 0;
}

static void list_remove(tdm_attr_list_t **list, attr_t *a) {
    tdm_attr_list_t *l = *list;
    int i = (int)(a - l->a);
    memmove(&l->a[i], &l->a[i + 1], (size_t)(l->n - i - 1) * sizeof(attr_t));
    if (--l->n == 0) {
        free(l);
        *list = NULL;
    }
}

/* Run the delete callback of an attribute value; keyval slot stays referenced. */
static int run_delete(int index, int keyval, int obj, void *val) {
    keyval_t *kv = kv_slot(index);
    if (!kv->del)
        return 0;
    int rc = kv->del(obj, keyval, val, kv->extra);
    return rc == 0 ? 0 : (rc > 0 ? rc : TDM_ATTR_ECALLBACK);
}

/* Value conversion between how it was stored and how it is asked for. */
static void put_value(void *val_p, void *val, tdm_attr_lang_t want) {
    switch (want) {
    case TDM_ATTR_FINT:
        *(int *)val_p = (int)(intptr_t)val;
        break;
    case TDM_ATTR_FAINT:
        *(intptr_t *)val_p = (intptr_t)val;
        break;
    default:
        *(void **)val_p = val;
        break;
    }
}

int tdm_attr_set(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj, int keyval, void *val,
                 tdm_attr_lang_t lang) {
    int index;
    keyval_t *kv = kv_lookup(kind, keyval, &index);
    if (!kv || TDM_LOAD_RELAXED(&kv->user_freed))
        return TDM_ATTR_EKEYVAL;
    tdm_lock_acquire(&list_lock);
    attr_t *a = list_find(*list, keyval);
    if (a) {
        void *old = a->val;
        tdm_lock_release(&list_lock);
        int rc = run_delete(index, keyval, obj, old);
        if (rc)
            return rc;
        /* the callback may have changed the list (other keyvals): look again */
        tdm_lock_acquire(&list_lock);
        a = list_find(*list, keyval);
        if (a) {
            a->val = val;
            a->lang = (uint8_t)lang;
            tdm_lock_release(&list_lock);
            return 0;
        }
    }
    attr_t na = {.keyval = keyval, .index = index, .lang = (uint8_t)lang, .val = val};
    int rc = list_append(list, &na);
    if (rc == 0)
        kv_retain(index);
    tdm_lock_release(&list_lock);
    return rc;
}

int tdm_attr_get(tdm_attr_kind_t kind, tdm_attr_list_t *const *list, int keyval, void *val_p,
                 int *flag_p, tdm_attr_lang_t lang) {
    /* a freed keyval still names the attributes that use it */
    keyval_t *kv = kv_lookup(kind, keyval, NULL);
    if (!kv)
        return TDM_ATTR_EKEYVAL;
    tdm_lock_acquire(&list_lock);
    attr_t *a = list_find(*list, keyval);
    void *val = a ? a->val : NULL;
    tdm_lock_release(&list_lock);
    if (!a) {
        *flag_p = 0;
        return 0;
    }
    put_value(val_p, val, lang);
    *flag_p = 1;
    return 0;
}

int tdm_attr_delete(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj, int keyval) {
    int index;
    /* MPI-4.1 §7.7.2: a freed keyval lives on until the last attribute using it is
     * deleted, which the user does with it (or by freeing the objects) */
    keyval_t *kv = kv_lookup(kind, keyval, &index);
    if (!kv)
        return TDM_ATTR_EKEYVAL;
    tdm_lock_acquire(&list_lock);
    attr_t *a = list_find(*list, keyval);
    void *val = a ? a->val : NULL;
    tdm_lock_release(&list_lock);
    if (!a)
        return 0;
    int rc = run_delete(index, keyval, obj, val);
    if (rc)
        return rc;
    tdm_lock_acquire(&list_lock);
    a = list_find(*list, keyval);
    if (a) {
        list_remove(list, a);
        kv_release(index);
    }
    tdm_lock_release(&list_lock);
    return 0;
}

int tdm_attr_copy_all(tdm_attr_kind_t kind, tdm_attr_list_t *const *src, int old_obj, int new_obj,
                      tdm_attr_list_t **dst) {
    (void)kind;
    for (int i = 0;; i++) {
        tdm_lock_acquire(&list_lock);
        bool more = *src && i < (*src)->n;
        attr_t a = more ? (*src)->a[i] : (attr_t){0};
        tdm_lock_release(&list_lock);
        if (!more)
            break;
        keyval_t *kv = kv_slot(a.index);
        if (!kv->copy)
            continue; /* MPI_*_NULL_COPY_FN */
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy(old_obj, a.keyval, kv->extra, a.val, &out, &flag);
        if (rc != 0) {
            tdm_attr_delete_all(kind, dst, new_obj);
            return rc > 0 ? rc : TDM_ATTR_ECALLBACK;
        }
        if (!flag)
            continue;
        attr_t na = {.keyval = a.keyval, .index = a.index, .lang = a.lang, .val = out};
        tdm_lock_acquire(&list_lock);
        rc = list_append(dst, &na);
        if (rc == 0)
            kv_retain(a.index);
        tdm_lock_release(&list_lock);
        if (rc) {
            tdm_attr_delete_all(kind, dst, new_obj);
            return rc;
        }
    }
    return 0;
}

int tdm_attr_delete_all(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj) {
    (void)kind;
    /* last set, first deleted; the list may change under callbacks, so take the
     * current last entry each time */
    for (;;) {
        tdm_lock_acquire(&list_lock);
        bool more = *list && (*list)->n > 0;
        attr_t a = more ? (*list)->a[(*list)->n - 1] : (attr_t){0};
        tdm_lock_release(&list_lock);
        if (!more)
            break;
        int rc = run_delete(a.index, a.keyval, obj, a.val);
        if (rc)
            return rc;
        tdm_lock_acquire(&list_lock);
        attr_t *cur = list_find(*list, a.keyval);
        if (cur) {
            list_remove(list, cur);
            kv_release(a.index);
        }
        tdm_lock_release(&list_lock);
    }
    tdm_lock_acquire(&list_lock);
    free(*list);
    *list = NULL;
    tdm_lock_release(&list_lock);
    return 0;
}

void tdm_attr_list_drop(tdm_attr_list_t **list) {
    tdm_lock_acquire(&list_lock);
    tdm_attr_list_t *l = *list;
    *list = NULL;
    tdm_lock_release(&list_lock);
    if (!l)
        return;
    for (int i = 0; i < l->n; i++) {
        if (l->a[i].index < TDM_LOAD_ACQUIRE(&kv_count)) /* the table is still there */
            kv_release(l->a[i].index);
    }
    free(l);
}

int tdm_attr_count(tdm_attr_list_t *const *list) {
    tdm_lock_acquire(&list_lock);
    int n = *list ? (*list)->n : 0;
    tdm_lock_release(&list_lock);
    return n;
}

void tdm_attr_fini(void) {
    tdm_lock_acquire(&kv_lock);
    for (unsigned i = 0; i < KV_MAX_CHUNKS && kv_chunks[i]; i++) {
        free(kv_chunks[i]);
        kv_chunks[i] = NULL;
    }
    kv_count = 0;
    kv_free = -1;
    tdm_lock_release(&kv_lock);
}
