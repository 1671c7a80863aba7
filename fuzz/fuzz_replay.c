/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the ksmd replay (model/replay.c): small series built
 * from the input (up to 64 addresses, 6 snapshots, 8 contents, pages that
 * come, change and go) with any ksmd settings. The counters must stay what
 * the kernel's can be: none above the pages there are, and the rmap_items
 * (read back from general_profit) holding every page in a tree; an unsigned
 * underflow shows as a huge count. And the shortcuts must change nothing:
 * the replay that skips full scans that repeat gives the rows of the plain
 * one (KSMSCAN_SLOW_REPLAY), and on one snapshot the settings search's
 * shared replay (model/pace.c) gives them too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/advisor.h"
#include "../model/ksmtuned.h"
#include "../model/kubevirt.h"
#include "../model/pace.h"
#include "../model/replay.h"
#include "../util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONTENTS 8

static unsigned char pages[CONTENTS][4096];

/* Content k: its byte k repeated, except the zero page; 6 and 7 differ from
 * 5 only in their last byte (long comparisons). */
static int compare(const void *ctx, uint32_t a, uint32_t b, size_t *common)
{
	(void)ctx;
	return page_common(pages[a], pages[b], common);
}

static void check_row(const struct timeline_row *t, size_t naddr)
{
	int64_t rmap = ((int64_t)(t->pages_sharing + t->ksm_zero_pages) * 4096 -
			t->general_profit) / 64;

	if (t->pages_shared > naddr || t->pages_sharing > naddr ||
	    t->pages_unshared > naddr || t->ksm_zero_pages > naddr ||
	    rmap < 0 || (uint64_t)rmap > naddr ||
	    t->pages_shared + t->pages_sharing + t->pages_unshared > (uint64_t)rmap ||
	    t->pages_sharing < t->zero_sharing)
		abort();
}

/* The same replay without shortcuts, and from the shared replay. */
static void against_plain(const struct series *sr, const struct replay_params *p,
			  const struct timeline_row *rows, size_t n)
{
	struct timeline_row *plain, *paced;
	struct pace_log *log;
	int cut;
	size_t m;

	setenv("KSMSCAN_SLOW_REPLAY", "1", 1);
	m = replay_run(sr, p, &plain, &cut);
	unsetenv("KSMSCAN_SLOW_REPLAY");
	if (!timeline_rows_equal(rows, n, plain, m))
		abort();
	free(plain);
	if (!(log = pace_open(sr, p)))
		return;
	if ((m = pace_replay(log, p, &paced, &cut))) {
		if (!timeline_rows_equal(rows, n, paced, m))
			abort();
		free(paced);
	}
	pace_close(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t sum[CONTENTS];
	uint64_t head[CONTENTS], addr[64];
	struct snapshot snaps[6];
	struct timeline_row *rows;
	static const double late[2] = { 0.001, 0.009 };

	if (size < 8)
		return 0;
	for (int k = 1; k < CONTENTS; k++)
		memset(pages[k], k < 6 ? k : 5, 4096), pages[k][4095] = (unsigned char)k;
	for (int k = 0; k < CONTENTS; k++) {
		/* contents 3 and 4 share a checksum: the gate is not equality */
		sum[k] = k == 4 ? 3 * 2654435761u : (uint32_t)k * 2654435761u;
		head[k] = 0;
		for (int i = 0; i < 8; i++)
			head[k] = head[k] << 8 | pages[k][i];
	}
	size_t naddr = 1 + data[0] % 64, nsnaps = 1 + data[1] % 6, used = 8;
	struct replay_params p = {
		.ksm = { .pages_to_scan = 1 + data[2] % 70,
			 .sleep_ms = 1 + data[3] % 50, .smart_scan = data[4] & 1,
			 .use_zero_pages = (data[4] >> 1) & 1,
			 .max_page_sharing = 2 + data[5] % 5 },
		/* 0: until the counters settle (the shortcuts' ground) */
		.scans = data[6] % 41 == 40 ? 0 : 1 + data[6] % 40,
		.interval = 0.001 * (1 + data[7] % 200), .ns_per_page = 1,
		.ns_per_byte = 0.1,
		/* ksmd's pace on jiffies, its batches' cost, unseen writes */
		.hz = data[6] & 0x80 ? 250 : 0, .page_seconds = 1e-4 * (data[6] >> 6 & 1),
		.late = late, .nlate = data[3] & 0x80 ? 2 : 0,
		.policy = policy_at(data[5] % 4),
		/* the tuners' host: 0 to 1 MiB */
		.host = { (uint64_t)data[6] * 4, (uint64_t)data[7] * 2 },
		.write_rate = 0.01 * (data[5] >> 5),
	};
	/* ksmtuned's look every 0 to 3 s, KubeVirt's handler's every 1 to 4 s */
	const struct ksmtuned_params tuned = { data[4] % 4, 300, -50, 64, 1250,
					       10, 20, 64 };
	const struct advisor_params adv = { 1 + data[2] % 3, 70,
					    1 + data[5] % 40, 200 };
	const struct kubevirt_params kv = { 1 + data[4] % 4, 300, -50, 64, 1250,
					    100, 100, 0.2f };

	if (p.policy == &advisor_policy)
		advisor_set_knobs(&p.tuning, &adv);
	else if (p.policy == &ksmtuned_policy)
		memcpy(p.tuning.bytes, &tuned, sizeof(tuned));
	else if (p.policy == &kubevirt_policy)
		memcpy(p.tuning.bytes, &kv, sizeof(kv));

	for (size_t i = 0; i < naddr; i++)
		addr[i] = i * 4096;
	for (size_t s = 0; s < nsnaps; s++) {
		snaps[s] = (struct snapshot){ 0, xcalloc(naddr, 4), xcalloc(naddr, 4) };
		for (size_t i = 0; i < naddr; i++) {
			uint8_t b = used < size ? data[used++] : 0;

			if (b % 9 == 8)
				continue;	/* no page here */
			snaps[s].addr_no[snaps[s].n] = (uint32_t)i;
			snaps[s].id[snaps[s].n++] = b % 9 % CONTENTS;
		}
	}
	struct series sr = { .naddr = naddr, .addr = addr, .nsnaps = nsnaps,
			     .snaps = snaps, .sum = sum, .head = head,
			     .zero_id = 0, .zero_sum = sum[0], .compare = compare };
	int cut;
	size_t n = replay_run(&sr, &p, &rows, &cut);

	/* ksmtuned may stop KSM for good: the replay ends early, and says so */
	if (!n || (p.scans && n != p.scans && !rows[n - 1].ended) || cut)
		abort();
	for (size_t i = 0; i < n; i++)
		check_row(&rows[i], naddr);
	against_plain(&sr, &p, rows, n);
	free(rows);
	for (size_t s = 0; s < nsnaps; s++) {
		free(snaps[s].addr_no);
		free(snaps[s].id);
	}
	return 0;
}
