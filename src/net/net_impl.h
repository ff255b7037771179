/* SPDX-License-Identifier: BSD-3-Clause */
/* Between net.c and remote.c: the remote transport's start-up and the address exchange. */
#ifndef TDM_NET_NET_IMPL_H
#define TDM_NET_NET_IMPL_H

#include "net.h"
#include "../base/lock.h"

/* Start UCX, trade addresses with every rank (tdm_net_exchange) and set tdm_net_remote.
 * 0, or -1 with *what_p naming what failed (the cause is logged). */
int tdm_net_remote_init(const tdm_net_config_t *cfg, const char **what_p);
/* Give `peer`'s address blob to the remote transport (tdm_ucx_peer_set's result). */
int tdm_net_remote_peer(int peer, const void *blob, size_t len);
/* Publish this rank's blob and hand every rank of another node's to tdm_net_remote_peer:
 * through the job's memfd when the nodes share it (cfg->shm_shared), else through the
 * launcher's key-value space (src/boot). Collective over the job. */
int tdm_net_exchange(const tdm_net_config_t *cfg, const void *blob, size_t len,
                     const char **what_p);

#endif
