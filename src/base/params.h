/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tunables: one line each in params.def. Values are read once from the
 * environment (TANDEM_<NAME>) by tdm_params_init(); accessors are plain array
 * loads so hot paths may use them, though they usually cache the value.
 */
#ifndef TDM_PARAMS_H
#define TDM_PARAMS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { TDM_PTYPE_BOOL, TDM_PTYPE_INT, TDM_PTYPE_SIZE, TDM_PTYPE_STRING } tdm_ptype_t;
typedef enum {
    TDM_PSCOPE_LOCAL,
    TDM_PSCOPE_JOB,
    TDM_PSCOPE_LAUNCHER,
    TDM_PSCOPE_LOCAL_RUN,
    TDM_PSCOPE_JOB_RUN,
    TDM_PSCOPE_WRAPPER,
} tdm_pscope_t;
typedef enum { TDM_PVERB_USER, TDM_PVERB_TUNER, TDM_PVERB_DEV } tdm_pverb_t;
typedef enum { TDM_PSRC_DEFAULT, TDM_PSRC_ENV, TDM_PSRC_API } tdm_psrc_t;

typedef enum {
#define TDM_PARAM(_name, ...) TDM_PARAM_##_name,
#include "params.def"
#undef TDM_PARAM
    TDM_PARAM_COUNT
} tdm_param_id_t;

/* Categories (params.def's TDM_PARAM_CATEGORY lines), named tandem_<id>. */
typedef enum {
#define TDM_PARAM(...)
#define TDM_PARAM_CATEGORY(_id, _desc) TDM_PCAT_##_id,
#include "params.def"
#undef TDM_PARAM_CATEGORY
#undef TDM_PARAM
    TDM_PCAT_COUNT
} tdm_param_cat_t;

typedef struct tdm_param_cat_desc {
    const char *name; /* tandem_<id> */
    const char *desc;
} tdm_param_cat_desc_t;
extern const tdm_param_cat_desc_t tdm_param_cats[TDM_PCAT_COUNT];
/* The category a parameter's line is under. */
tdm_param_cat_t tdm_param_category(tdm_param_id_t id);

typedef struct tdm_param_desc {
    const char *name; /* without the TANDEM_ prefix */
    tdm_ptype_t type;
    const char *defval;
    const char *range; /* params.def's RANGE: "LO..HI[ pow2| x64]", "a|b|c" or "" */
    tdm_pscope_t scope;
    tdm_pverb_t verbosity;
    const char *desc;
} tdm_param_desc_t;

typedef union tdm_param_val {
    long long i;   /* BOOL, INT, SIZE */
    const char *s; /* STRING (owned by the table) */
} tdm_param_val_t;

extern const tdm_param_desc_t tdm_param_descs[TDM_PARAM_COUNT];
extern tdm_param_val_t tdm_param_vals[TDM_PARAM_COUNT];
extern tdm_psrc_t tdm_param_srcs[TDM_PARAM_COUNT];

#define TDM_PARAM_I(_name) (tdm_param_vals[TDM_PARAM_##_name].i)
#define TDM_PARAM_S(_name) (tdm_param_vals[TDM_PARAM_##_name].s)

/* Read every TANDEM_* variable. A value that does not parse or lies outside
 * its RANGE is refused: the default is kept, and the first local rank (one
 * per job) says so, as it does for unknown names ("did you mean"). Idempotent. */
void tdm_params_init(void);
/* Parse text as a value of the given type; 0 on success. */
int tdm_param_parse(tdm_ptype_t type, const char *text, tdm_param_val_t *val_p);
/* 0 when `val` lies in the RANGE of parameter `id` (bounds naming other
 * parameters read their current values); otherwise -1, with the reason
 * ("outside its range 0..524288 (0..SHM_CELLS*SHM_CELL_SIZE)") in why. */
int tdm_param_check(tdm_param_id_t id, const tdm_param_val_t *val, char *why, size_t len);
/* The bounds of an INT or SIZE parameter now: 0, or -1 when it has none or
 * its RANGE does not parse (a mistake in params.def; unit/base_params checks). */
int tdm_param_bounds(tdm_param_id_t id, long long *lo_p, long long *hi_p);
/* Choices of a STRING parameter with a RANGE of words: their number (0: any
 * text), the index of `text` among them (-1: none), and the i-th into buf. */
int tdm_param_nchoices(tdm_param_id_t id);
int tdm_param_choice_index(tdm_param_id_t id, const char *text);
int tdm_param_choice_name(tdm_param_id_t id, int i, char *buf, size_t len);
/* Set a parameter from the tool interface (MPI_T_cvar_write): checked as an
 * environment value is (0, or -1 with the reason in why); a string is copied.
 * The caller decides whether the scope lets it be written now. */
int tdm_param_set(tdm_param_id_t id, const tdm_param_val_t *val, char *why, size_t len);
/* Format the current value of a parameter into buf. */
void tdm_param_format(tdm_param_id_t id, char *buf, int len);
const char *tdm_param_type_name(tdm_ptype_t type);
const char *tdm_param_scope_name(tdm_pscope_t scope);
const char *tdm_param_src_name(tdm_psrc_t src);
/* Closest known parameter name to `name` (edit distance), or NULL. */
const char *tdm_params_suggest(const char *name);

#endif
