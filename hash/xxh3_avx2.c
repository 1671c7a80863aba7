/* SPDX-License-Identifier: MIT */
/* XXH3 built for AVX2: this file is compiled with -mavx2 (see xxh3_vec.h). */
#define XXH_VECTOR XXH_AVX2
#define XXH3_SUFFIX avx2
#include "xxh3_vec.h"
