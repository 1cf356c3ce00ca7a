/* frames.c -- the stack of open calls, a plain container.  Core keeps the
 * open calls of each thread across periods (carried into the next finalize);
 * what a frame means and how frames close is the model's fold (fold.c). */
#include "core/core.h"

#include <stdlib.h>

/* sps__stack_push's slow path (core.h): grows s, then appends f. */
int sps__stack_grow(sps__stack_t *s) {
    if (s->n < s->cap) return 0;
    size_t cap = s->cap ? s->cap * 2 : 64;
    sps__frame_t *p = realloc(s->f, cap * sizeof *p);
    if (!p) return SPS_ENOMEM;
    s->f = p;
    s->cap = cap;
    return 0;
}

void sps__stack_free(sps__stack_t *s) {
    free(s->f);
    s->f = NULL;
    s->n = s->cap = 0;
}

int sps__stack_copy(sps__stack_t *dst, const sps__stack_t *src) {
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        if (sps__stack_push(dst, src->f[i])) return SPS_ENOMEM;
    return 0;
}
