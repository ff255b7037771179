/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prints the collective algorithm table for the tunables in the environment,
 * exactly as TANDEM_COLL_INFO=1 shows it at start-up; the golden test compares
 * it with coll_*.txt beside this file.
 */
#include "base/params.h"
#include "coll/select.h"

#include <stdio.h>

int main(void) {
    tdm_params_init();
    tdm_coll_select_print(stdout);
    return 0;
}
