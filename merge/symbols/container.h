/*
 * container.h - the perf map of a live process in namespaces of its own (a
 * container).  Such a process names its map by its PID in its own PID
 * namespace, in its own /tmp: perf-1.map for the namespace's init.  perf
 * looks there first, through the process's root, and then in the host's
 * /tmp by host PID (dso__find_perf_map); pymerge does the same.
 */
#ifndef PYMERGE_CONTAINER_H
#define PYMERGE_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

/* The NSpid line of a /proc/PID/status text (len bytes, not terminated):
 * stores the process's PID in its innermost PID namespace in *nspid and
 * returns how many PID namespaces the line names (1: the reader's own).
 * -ENOENT when there is no NSpid line (kernels before 4.1), -EINVAL when
 * it is malformed. */
int container__nspid(const char *status, size_t len, uint32_t *nspid);

/* Writes "/proc/PID/root/tmp/perf-NSPID.map" into path (size bytes) when
 * process pid is alive and in a PID or mount namespace other than
 * pymerge's; returns 0.  -ENOENT when it is gone or shares both (its map
 * is the host's /tmp/perf-PID.map), another negative errno when /proc
 * cannot tell. */
int container__perfmap_path(uint32_t pid, char *path, size_t size);

#endif
