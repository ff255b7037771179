/* SPDX-License-Identifier: BSD-3-Clause */
/* The legacy-name test of tests/mpi/abi, built with Tandem's own header. */
#include "../abi/legacy_abi.c"
