/*
 * sps_int.h -- every internal interface at once, for the code outside the
 * library that may use them: the tests, the command-line tool and the fuzz
 * harnesses.  Nothing in src/ includes it: each layer includes its own
 * header (util/util.h < core/core.h < model/model.h < formats/formats.h <
 * api/api.h), which includes the ones below; scripts/check-layers.sh
 * checks both the includes and the symbols.
 */
#ifndef SPS_INT_H
#define SPS_INT_H

#include "api/api.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#endif /* SPS_INT_H */
