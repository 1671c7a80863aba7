/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SAMPLE_H
#define KSMSCAN_SAMPLE_H

#include <stdint.h>

/*
 * A sampled series (--sample=1/N, series.sample in replay.h): what each
 * content is to it and how many pages one of its pages stands for. A
 * header alone, on plain values (the replay's files and the series driver
 * include it): SERIES_CLASS() and SERIES_WEIGHT() take a struct series.
 */

/* What a content is to a sampled series (sample_class()). */
enum { SAMPLE_FULL, SAMPLE_IN, SAMPLE_OUT };

/**
 * sample_class() - the class of content @id in a series.
 * @sample: series.sample (0 or 1: not a sample)
 * @zero_id: series.zero_id
 * @out_id: series.out_id
 * @id: the content, not NO_ID
 *
 * Return: SAMPLE_FULL for the zero page's (always replayed in full) and
 * every content of a series that is not a sample, SAMPLE_OUT for
 * @out_id, else SAMPLE_IN.
 */
static inline int sample_class(uint32_t sample, uint32_t zero_id,
			       uint32_t out_id, uint32_t id)
{
	if (sample <= 1 || id == zero_id)
		return SAMPLE_FULL;
	return id == out_id ? SAMPLE_OUT : SAMPLE_IN;
}

/**
 * sample_weight() - how many pages one of a content's pages stands for.
 * @sample: series.sample
 * @cls: the content's class (sample_class())
 *
 * Return: N for a sampled content of --sample=1/N, 0 for the contents
 * outside the sample (counted by the sampled ones' weight), else 1.
 */
static inline uint64_t sample_weight(uint32_t sample, int cls)
{
	if (sample <= 1 || cls == SAMPLE_FULL)
		return 1;
	return cls == SAMPLE_IN ? sample : 0;
}

/* The same, of a struct series @sr. */
#define SERIES_CLASS(sr, id) \
	sample_class((sr)->sample, (sr)->zero_id, (sr)->out_id, (id))
#define SERIES_WEIGHT(sr, cls) sample_weight((sr)->sample, (cls))

#endif
