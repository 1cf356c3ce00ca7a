/* sps_ittnotify.h -- spanscope's way in to the vendored ittnotify (not an
 * upstream file): the static part is compiled with
 * INTEL_ITTNOTIFY_PREFIX=sps__itt_ (third_party/ittnotify/CMakeLists.txt),
 * so that its globals are spanscope's own names and a program that links
 * libspanscope.a beside another static part of ittnotify (its own, or a
 * library's) gets no duplicate symbols; each still loads the same
 * collector, whose protocol names ("__itt_task_begin", ...) do not change.
 * Every user of the static part includes this instead of ittnotify.h. */
#ifndef SPS_ITTNOTIFY_H
#define SPS_ITTNOTIFY_H

#define INTEL_ITTNOTIFY_PREFIX sps__itt_ /* as the static part is built */
#include "ittnotify.h"

/* __itt_get_collection_state (ittnotify.h declares it without the prefix):
 * initialises the static part -- loads the collector, if any -- and
 * answers whether one was loaded (__itt_collection_init_successful). */
__itt_collection_state ITTNOTIFY_NAME_AUX(get_collection_state)(void);
#define sps__itt_get_collection_state() ITTNOTIFY_NAME_AUX(get_collection_state)()

#endif /* SPS_ITTNOTIFY_H */
