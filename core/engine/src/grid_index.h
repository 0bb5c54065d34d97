/* grid_index.h — model index <-> node indices of a library's grid, the
 * row-major order of rvfit_library (last axis fastest).  Internal to the
 * engine; the one copy of this arithmetic. */
#ifndef RVFIT_GRID_INDEX_H
#define RVFIT_GRID_INDEX_H

#include <stddef.h>

#include "rvfit/library.h"

/* Model index of node indices n[nparam] (each within its axis). */
static inline size_t grid_ravel(const rvfit_library *L, const int *n)
{
    size_t m = 0;
    for (int p = 0; p < L->nparam; p++)
        m = m * (size_t)L->axis[p].nnode + (size_t)n[p];
    return m;
}

/* Node indices n[nparam] of model m. */
static inline void grid_unravel(const rvfit_library *L, size_t m, int *n)
{
    for (int p = L->nparam - 1; p >= 0; p--) {
        n[p] = (int)(m % (size_t)L->axis[p].nnode);
        m /= (size_t)L->axis[p].nnode;
    }
}

#endif
