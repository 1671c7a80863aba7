/* SPDX-License-Identifier: MIT */
/*
 * What the reports of -r share: their state's first member, the scope and
 * recs sinks, the trust domains, and whether a report is read by people.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/kernel.h"
#include "../scan/domains.h"
#include "../scan/series.h"
#include "../util/shell.h"
#include "../util/util.h"
#include "report_sink.h"
#include "write/writer.h"

void *report_sink_new(size_t size, const struct sink_ops *ops,
		      const struct report_setup *rs)
{
	struct report_sink *r = xcalloc(1, size);

	r->sink.ops = ops;
	r->rs = rs;
	return r;
}

struct sink *scope_sink_new(const struct report_setup *rs,
			    const struct sink_ops *ops)
{
	return report_sink_new(sizeof(struct scope_sink), ops, rs);
}

void scope_sink_scope(struct sink *sk, const struct scope *sc)
{
	struct scope_sink *s = (struct scope_sink *)sk;

	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof(*s->rows));
	s->rows[s->nrows++] = (struct scope_copy){
		.name = sc->name, .format = sc->format, .all = sc->all,
		.input_no = sc->input_no,
		.status = sc->status, .why = sc->why ? xstrdup(sc->why) : NULL,
		.f = *sc->f, .group = sc->group, .shared_bytes = sc->shared_bytes,
	};
	if (sc->proc)
		s->rows[s->nrows - 1].proc = *sc->proc;
}

void scope_sink_series(struct sink *sk, const struct series_result *r)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	struct scope_copy *row;
	struct ksmd_cpu cpu = { .wake_seconds = r->params->wake_seconds };

	scope_sink_scope(sk, r->last);
	row = &s->rows[s->nrows - 1];
	row->seconds_to_90 = r->seconds_to_90;
	row->nsnaps = r->nsnaps;
	row->scans = r->nrows;
	row->seconds = r->rows[r->nrows - 1].seconds;
	for (size_t i = 0; i < r->nrows; i++)
		ksmd_cpu_add(&cpu, &r->rows[i]);
	row->cpu_mean = ksmd_cpu_mean(&cpu);
	row->cpu_peak = ksmd_cpu_peak(&cpu);
}

void recs_sink_page(struct sink *sk, const struct page_event *pg)
{
	struct recs_sink *s = (struct recs_sink *)sk;

	if (!s->r.rs->scan->inputs[pg->input_no].path)
		page_recs_add(&s->recs, pg);
}

void report_domains(struct domains *d, const struct report_setup *rs)
{
	d->groups = rs->domains;
	d->n = rs->ndomains;
	d->known = rs->known;
	d->nknown = rs->nknown;
	d->failed = rs->failed;
	domains_init(d, rs->scan);
}

int for_people(const struct report_setup *rs)
{
	return !rs->long_table && (rs->out->flags & WRITER_PEOPLE);
}

void hz_note(const struct report_setup *rs)
{
	char text[200];
	unsigned hz, kernel;

	if (!rs->series || !(rs->out->flags & WRITER_PEOPLE))
		return;
	hz = rs->series->hz;
	kernel = kernel_hz();
	if (!hz)
		snprintf(text, sizeof(text), "ksmd's wake-ups every sleep_millisecs "
			 "exactly (--hz=0, no jiffies).");
	else if (hz == kernel)
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (this "
			 "kernel's; --hz to change).", hz);
	else if (kernel)
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (--hz; this "
			 "kernel's is %u).", hz, kernel);
	else
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (this "
			 "kernel's HZ could not be read; --hz to set it).", hz);
	rs->out->note(rs->out, text);
}

void scope_sink_free(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;

	for (size_t i = 0; i < s->nrows; i++)
		free(s->rows[i].why);
	free(s->rows);
	free(s);
}

int any_process(const struct scan_config *cfg)
{
	for (size_t i = 0; i < cfg->ninputs; i++)
		if (!cfg->inputs[i].path)
			return 1;
	return 0;
}


/* Append @word to @cmd (grown with xreallocarray), quoted for sh, after a
 * space unless it is the first. */
static void put_word(char **cmd, size_t *len, const char *word)
{
	size_t q = shell_quote(word, NULL, 0), at = *len;

	*cmd = xreallocarray(*cmd, at + q + 2, 1);
	if (at)
		(*cmd)[at++] = ' ';
	shell_quote(word, *cmd + at, q + 1);
	*len = at + q;
}

/* The command that sets MemoryKSM=yes on @unit: the system manager's, or
 * with @uid the user manager of that uid (systemctl --user -M UID@). Every
 * word quoted, "--" before the name, so that no name reads as an option. */
static char *set_property(const char *uid, const char *unit)
{
	char *cmd = xstrdup("systemctl");
	size_t len = strlen(cmd);
	char at[32];

	if (uid) {
		snprintf(at, sizeof(at), "%s@", uid);
		put_word(&cmd, &len, "--user");
		put_word(&cmd, &len, "-M");
		put_word(&cmd, &len, at);
	}
	put_word(&cmd, &len, "set-property");
	put_word(&cmd, &len, "--");
	put_word(&cmd, &len, unit);
	put_word(&cmd, &len, "MemoryKSM=yes");
	return cmd;
}

char *enable_marking(const char *part, char *hint, size_t len)
{
	char kind[16], uid[16] = "";
	const char *v = strchr(part, ':'), *name;
	char *cmd = NULL;

	/* the kind holds no ':'; a user's "UID:NAME" no ':' before its name */
	snprintf(kind, sizeof(kind), "%.*s", v ? (int)(v - part) : 0, part);
	v = v ? v + 1 : part;
	name = v;
	if ((strcmp(kind, "user-unit") == 0 || strcmp(kind, "user-vm") == 0) &&
	    strchr(v, ':')) {
		snprintf(uid, sizeof(uid), "%.*s", (int)(strchr(v, ':') - v), v);
		name = strchr(v, ':') + 1;
	}
	if (strcmp(kind, "unit") == 0 || strcmp(kind, "user-unit") == 0) {
		cmd = set_property(*uid ? uid : NULL, name);
		if (*uid)
			snprintf(hint, len, "  (or a drop-in of that user's, "
				 "~/.config/systemd/user/%s.d/ksm.conf: [Service] or "
				 "[Scope] MemoryKSM=yes; a unit of uid %s's own manager, "
				 "not the system's)", name, uid);
		else
			snprintf(hint, len, "  (or a drop-in, /etc/systemd/system/"
				 "%s.d/ksm.conf: [Service] or [Scope] MemoryKSM=yes; "
				 "systemd >= 254, for services >= 256)", name);
	} else if (strcmp(kind, "vm") == 0) {
		snprintf(hint, len, "  vm %s: QEMU marks guest RAM mergeable "
			 "unless -machine mem-merge=off; in libvirt remove "
			 "<memoryBacking><nosharepages/> from the domain; guest RAM "
			 "must be private (no memory-backend share=on, no memfd)", v);
	} else if (strcmp(kind, "user-vm") == 0) {
		snprintf(hint, len, "  user-vm %s: a VM of uid %s's, not "
			 "started by the system's manager (libvirt, a system unit): "
			 "its owner starts it without -machine mem-merge=off, with "
			 "private guest RAM", name, uid);
	} else {
		snprintf(hint, len, "  %s: start its processes under "
			 "prctl(PR_SET_MEMORY_MERGE, 1) (systemd-run -p MemoryKSM=yes, "
			 "or its unit's MemoryKSM=yes): children inherit it", part);
	}
	return cmd;
}
