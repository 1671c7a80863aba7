/* SPDX-License-Identifier: MIT */
/* XXH3 built for AVX-512: this file is compiled with -mavx512f (see xxh3_vec.h). */
#define XXH_VECTOR XXH_AVX512
#define XXH3_SUFFIX avx512
#include "xxh3_vec.h"
