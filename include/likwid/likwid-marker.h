/* likwid-marker.h -- spanscope's drop-in for LIKWID's marker header.
 *
 * Build a LIKWID-annotated program against spanscope by putting this
 * directory first on the include path (-I<prefix>/include/likwid) and
 * linking -lspanscope: with -DLIKWID_PERFMON every LIKWID_MARKER_* macro
 * calls spanscope (spanscope_likwid.h says what each one does); without it
 * they expand to nothing, as LIKWID's own header does.  The likwid_marker*
 * function names are mapped too, for code that calls them directly. */
#ifndef LIKWID_MARKER_H
#define LIKWID_MARKER_H

#ifdef LIKWID_PERFMON
#include "../spanscope_likwid.h"
#define likwid_markerInit() sps_likwid_init()
#define likwid_markerThreadInit() sps_likwid_thread_init()
#define likwid_markerNextGroup() sps_likwid_switch()
#define likwid_markerClose() sps_likwid_close()
#define likwid_markerRegisterRegion(regionTag) sps_likwid_register(regionTag)
#define likwid_markerStartRegion(regionTag) sps_likwid_start(regionTag)
#define likwid_markerStopRegion(regionTag) sps_likwid_stop(regionTag)
#define likwid_markerResetRegion(regionTag) sps_likwid_reset(regionTag)
#define likwid_markerGetRegion(regionTag, nevents, events, time, count) \
    sps_likwid_get(regionTag, nevents, events, time, count)
#define LIKWID_MARKER_INIT sps_likwid_init()
#define LIKWID_MARKER_THREADINIT sps_likwid_thread_init()
#define LIKWID_MARKER_SWITCH sps_likwid_switch()
#define LIKWID_MARKER_REGISTER(regionTag) sps_likwid_register(regionTag)
#define LIKWID_MARKER_START(regionTag) sps_likwid_start(regionTag)
#define LIKWID_MARKER_STOP(regionTag) sps_likwid_stop(regionTag)
#define LIKWID_MARKER_CLOSE sps_likwid_close()
#define LIKWID_MARKER_RESET(regionTag) sps_likwid_reset(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
    sps_likwid_get(regionTag, nevents, events, time, count)
#else /* LIKWID_PERFMON */
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_CLOSE
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#define LIKWID_MARKER_RESET(regionTag)
#endif /* LIKWID_PERFMON */

#endif /* LIKWID_MARKER_H */
