/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tunables: one line each in params.def. Values are read once from the
 * environment (TANDEM_<NAME>) by tdm_params_init(); accessors are plain array
 * loads so hot paths may use them, though they usually cache the value.
 */
#ifndef TDM_PARAMS_H
#define TDM_PARAMS_H

#include <stdint.h>

typedef enum { TDM_PTYPE_BOOL, TDM_PTYPE_INT, TDM_PTYPE_SIZE, TDM_PTYPE_STRING } tdm_ptype_t;
typedef enum { TDM_PSCOPE_LOCAL, TDM_PSCOPE_JOB, TDM_PSCOPE_LAUNCHER } tdm_pscope_t;
typedef enum { TDM_PVERB_USER, TDM_PVERB_TUNER, TDM_PVERB_DEV } tdm_pverb_t;
typedef enum { TDM_PSRC_DEFAULT, TDM_PSRC_ENV, TDM_PSRC_API } tdm_psrc_t;

typedef enum {
#define TDM_PARAM(_name, ...) TDM_PARAM_##_name,
#include "params.def"
#undef TDM_PARAM
    TDM_PARAM_COUNT
} tdm_param_id_t;

typedef struct tdm_param_desc {
    const char *name; /* without the TANDEM_ prefix */
    tdm_ptype_t type;
    const char *defval;
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

/* Read every TANDEM_* variable; warn once about unknown ones ("did you mean")
 * and about values that do not parse (the default is kept). Idempotent. */
void tdm_params_init(void);
/* Parse text as a value of the given type; 0 on success. */
int tdm_param_parse(tdm_ptype_t type, const char *text, tdm_param_val_t *val_p);
/* Format the current value of a parameter into buf. */
void tdm_param_format(tdm_param_id_t id, char *buf, int len);
const char *tdm_param_type_name(tdm_ptype_t type);
const char *tdm_param_scope_name(tdm_pscope_t scope);
const char *tdm_param_src_name(tdm_psrc_t src);
/* Closest known parameter name to `name` (edit distance), or NULL. */
const char *tdm_params_suggest(const char *name);

#endif
