/* grid_index.h — model index <-> node indices of a library's grid, the
 * row-major order of rvfit_library (last axis fastest), and the cell of a
 * coordinate on one axis.  Internal to the
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

/* Cell of x on axis ax (nnode >= 2): the largest k <= nnode - 2 with
 * node[k] <= x, 0 below the axis, so that [node[k], node[k+1]] holds x
 * whenever the axis does. */
static inline int grid_cell(const rvfit_axis *ax, double x)
{
    int k = 0;
    while (k < ax->nnode - 2 && ax->node[k + 1] <= x)
        k++;
    return k;
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
