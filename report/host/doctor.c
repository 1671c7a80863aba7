/* SPDX-License-Identifier: MIT */
/*
 * The doctor report (-r doctor): for live processes, the memory that looks
 * mergeable but will not merge, in pages and bytes per reason, each with
 * its fix; per process, then all of them ("*") and each --by or --group row
 * (its processes' sums). Files have no such reasons: they get no row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/doctor.h"
#include "../../host/ksm.h"
#include "../../host/units.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* The reasons' fixed words, by enum doctor_reason. */
static const char *const reason_names[DOCTOR_REASONS] = {
	[DOCTOR_IO_MAPPING] = "io_mapping", [DOCTOR_HUGETLB] = "hugetlb",
	[DOCTOR_SHARED_MAPPING] = "shared_mapping",
	[DOCTOR_NOT_MERGEABLE] = "not_mergeable", [DOCTOR_THP] = "thp",
	[DOCTOR_KSM_NOT_RUNNING] = "ksm_not_running",
};

/* What to do about each reason. */
static const char *const fixes[DOCTOR_REASONS] = {
	[DOCTOR_IO_MAPPING] = "device memory (VM_IO/VM_PFNMAP): KSM cannot merge "
		"it; nothing to do",
	[DOCTOR_HUGETLB] = "hugetlbfs pages are never merged: back the memory "
		"with normal pages (no MAP_HUGETLB or hugepages= backend) to merge it",
	[DOCTOR_SHARED_MAPPING] = "KSM never merges MAP_SHARED, shmem or memfd "
		"memory: map it MAP_PRIVATE if it need not be shared",
	[DOCTOR_NOT_MERGEABLE] = "not marked mergeable: MemoryKSM=yes on its "
		"unit (systemd >= 254), prctl(PR_SET_MEMORY_MERGE) (Linux >= 6.4) or "
		"madvise(MADV_MERGEABLE)",
	[DOCTOR_THP] = "in transparent huge pages: a merge splits each one; "
		"MADV_NOHUGEPAGE on regions to merge, or leave them (see -r thp)",
	[DOCTOR_KSM_NOT_RUNNING] = "ksmd is not running: echo 1 > "
		KSM_SYSFS_DIR "/run (or the tuner that stopped it: ksmtuned's "
		"thresholds)",
};

/* The shared-memory fix of a virtual machine monitor: its guest options. */
static const char vmm_shared_fix[] =
	"guest RAM is MAP_SHARED: QEMU memory-backend-* share=on or "
	"memory-backend-memfd (vhost-user, virtiofs need it), cloud-hypervisor "
	"shared=on; KSM never merges it: use share=off where nothing needs it";

static const struct column doctor_cols[] = {
	{ "input", 0, 0, { .cut = NAME_COLS } }, COL("reason"), COL("pages"),
	/* people read the fixes in notes under the table */
	COL("bytes"), COL_F("fix", COL_NOT_PEOPLE),
};

#define NCOLS (sizeof(doctor_cols) / sizeof(doctor_cols[0]))

/* One row of the report: a scope's pages per reason. */
struct doctor_row {
	const char *name;		/* the scope's (engine-owned) name */
	struct proc_doctor d;
	int vmm;			/* a process of it is a VMM */
};

struct doctor {
	struct report_sink r;
	struct doctor_row *per_input;	/* by input number */
	int *have;			/* per input: read */
	struct doctor_row *rows;	/* in scope order */
	size_t nrows;
	int run;			/* ksm_run_value() at the start */
	size_t nread;			/* processes whose smaps were read */
	size_t unread, first_unread;	/* those whose smaps could not be
					 * read, and the first's pid */
};

/* Add @from's pages to @to. */
static void add(struct doctor_row *to, const struct doctor_row *from)
{
	for (int k = 0; k < DOCTOR_REASONS; k++)
		to->d.pages[k] += from->d.pages[k];
	to->d.shared_memfd |= from->d.shared_memfd;
	to->vmm |= from->vmm;
}

static void doctor_scope(struct sink *sk, const struct scope *sc)
{
	struct doctor *s = (struct doctor *)sk;
	const struct scan_config *cfg = s->r.rs->scan;
	struct doctor_row row = { .name = sc->name };
	const struct group *g = scope_group(cfg, sc);
	int any = 0;

	if (!sc->all) {
		const struct input *in = &cfg->inputs[sc->input_no];
		struct proc_unit u;

		if (in->path)
			return;
		if (proc_doctor_read(in->pid, s->run == 1, &row.d) < 0) {
			if (!s->unread++)
				s->first_unread = (size_t)in->pid;
			return;
		}
		row.vmm = unit_read(in->pid, &u) == 0 && u.vmm;
		s->nread++;
		s->per_input[sc->input_no] = row;
		s->have[sc->input_no] = 1;
		any = 1;
	} else {
		for (size_t k = 0; k < cfg->ninputs; k++)
			if (s->have[k] && (!g || group_has(g, k))) {
				add(&row, &s->per_input[k]);
				any = 1;
			}
	}
	if (!any)
		return;
	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof(*s->rows));
	s->rows[s->nrows++] = row;
}

/* The fix of a reason for a row. */
static const char *fix_of(const struct doctor_row *row, int k)
{
	if (k == DOCTOR_SHARED_MAPPING && row->vmm)
		return vmm_shared_fix;
	return fixes[k];
}

/* What the doctor can say of the processes when @shown rows had reasons:
 * those it could not read have none, which is not "nothing". */
static void unread_note(const struct doctor *s, const struct writer *w,
			size_t shown)
{
	char t[256];

	if (s->unread)
		snprintf(t, sizeof(t), "doctor: %zu %s could not be read (pid:%zu%s): "
			 "no reasons for %s.", s->unread,
			 s->unread == 1 ? "process" : "processes", s->first_unread,
			 s->unread > 1 ? " and others" : "",
			 s->unread == 1 ? "it" : "them");
	if (s->unread)
		w->note(w, t);
	if (!shown && s->nread)
		w->note(w, s->unread ? "doctor: nothing keeps the others' memory from "
			"merging." : "doctor: nothing keeps these processes' memory "
			"from merging.");
}

static void doctor_print(struct sink *sk)
{
	struct doctor *s = (struct doctor *)sk;
	const struct writer *w = s->r.rs->out;
	int people = for_people(s->r.rs), used[DOCTOR_REASONS] = { 0 }, vmm = 0;
	size_t shown = 0;

	w->begin(w, "doctor", doctor_cols, NCOLS, 0);
	for (size_t i = 0; i < s->nrows; i++)
		for (int k = 0; k < DOCTOR_REASONS; k++) {
			const struct doctor_row *row = &s->rows[i];
			struct cell c[NCOLS] = {
				cell_str(row->name),
				cell_str(reason_names[k]),
				cell_uint(row->d.pages[k]),
				cell_bytes(row->d.pages[k] * PAGE_BYTES),
				cell_str(fix_of(row, k)),
			};

			if (!row->d.pages[k])
				continue;
			used[k] = 1;
			vmm |= k == DOCTOR_SHARED_MAPPING && row->vmm;
			shown++;
			w->row(w, c);
		}
	for (int k = 0; people && k < DOCTOR_REASONS; k++) {
		char t[512];

		if (!used[k])
			continue;
		snprintf(t, sizeof(t), "%s: %s.", reason_names[k], fixes[k]);
		w->note(w, t);
		if (k == DOCTOR_SHARED_MAPPING && vmm) {
			snprintf(t, sizeof(t), "%s of a VMM: %s.", reason_names[k],
				 vmm_shared_fix);
			w->note(w, t);
		}
	}
	if (!any_process(s->r.rs->scan))
		w->note(w, "doctor: only live processes (-p, -P, --all-processes) "
			"have reasons; files get no row.");
	else
		unread_note(s, w, shown);
	w->end(w);
}

static void doctor_free(struct sink *sk)
{
	struct doctor *s = (struct doctor *)sk;

	free(s->per_input);
	free(s->have);
	free(s->rows);
	free(s);
}

static const struct sink_ops doctor_ops = {
	.needs = SINK_GROUPS,
	.scope = doctor_scope, .print = doctor_print, .free = doctor_free,
};

struct sink *doctor_create(const struct report_setup *rs)
{
	struct doctor *s = report_sink_new(sizeof(*s), &doctor_ops, rs);
	size_t n = rs->scan->ninputs ? rs->scan->ninputs : 1;

	s->per_input = xcalloc(n, sizeof(*s->per_input));
	s->have = xcalloc(n, sizeof(*s->have));
	s->run = ksm_run_value();
	return &s->r.sink;
}
