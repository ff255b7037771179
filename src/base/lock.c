/* SPDX-License-Identifier: BSD-3-Clause */
#include "lock.h"

/* Raised by MPI initialisation when it grants MPI_THREAD_MULTIPLE (lock.h says when). */
bool tdm_threaded;
