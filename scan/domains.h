/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SCAN_DOMAINS_H
#define KSMSCAN_SCAN_DOMAINS_H

#include <stddef.h>
#include <stdint.h>

#include "../model/exposure.h"
#include "group.h"
#include "scan.h"

/*
 * Trust domains for the exposure and mitigations reports: the --groups,
 * which the front end has checked to hold each input exactly once. While
 * the inputs are counted, each input's contents are kept as (id, pages);
 * at "*" they are regrouped by content: the domains holding each content
 * and its pages in each. A content in two domains or more "crosses": its
 * bytes are read once, from the index, to class it (zero, same-filled,
 * known, low or high entropy; for the mitigations only the first two).
 *
 * Memory: 8 bytes per content of each input while the inputs are read,
 * then as much again to regroup them by content (the inputs of one domain
 * add up in one entry), 8 bytes per distinct content and 2 bytes per
 * content for its kind and entropy band.
 */

/* A content in one domain: its pages there. */
struct domain_pages {
	uint32_t who;		/* the domain (per input: the content id) */
	uint32_t pages;
};

struct domains {
	const struct scan_config *cfg;	/* the run: its inputs */
	const struct group *groups;	/* the domains: the --groups, in order */
	size_t n;			/* ... how many */
	const char *const *known;	/* --known files, whose contents */
	size_t nknown;			/* ... are classed as known */
	int *failed;			/* set when a known file cannot be read */
	struct domain_pages **lists;	/* per input, until "*" */
	size_t *nlist;
	/* From "*" on (built is set): */
	int built;
	size_t size;			/* distinct contents */
	size_t *start;			/* content id's domains: by[start[id] ..
					 * start[id + 1]), domains ascending */
	struct domain_pages *by;
	unsigned char *kind;		/* per content: enum page_kind (for the
					 * contents that cross; the others, and
					 * without a full class any content
					 * neither zero nor same-filled, are
					 * KIND_ZERO or KIND_LOW) */
	unsigned char *band;		/* per content that crosses, of kind LOW or
					 * HIGH: its entropy band */
};

/**
 * domains_init() - domains from the run's groups.
 * @d: zeroed; the caller sets groups, n, known, nknown and failed
 * @cfg: the run (its groups partition the inputs)
 */
void domains_init(struct domains *d, const struct scan_config *cfg);

/**
 * domains_scope() - the scope() hook's work: keep an input's contents; at
 * "*", regroup them by content and class the contents that cross.
 * @d: the domains
 * @sc: the scope
 * @full: whether to class the contents that cross fully (the exposure
 *	report: known files and entropy too) or only as zero, same-filled or
 *	other (the mitigations); a --known file that cannot be read is an
 *	error line and makes the run fail (exit status 1)
 */
void domains_scope(struct domains *d, const struct scope *sc, int full);

/**
 * domain_name() - a domain's name: its group's, without "group:".
 * @d: the domains
 * @k: the domain
 */
const char *domain_name(const struct domains *d, size_t k);

/**
 * domains_free() - free what the domains hold (not @d itself).
 * @d: the domains
 */
void domains_free(struct domains *d);

#endif
