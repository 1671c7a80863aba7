/* SPDX-License-Identifier: MIT */
/*
 * Cell constructors, a cell as text, and what a table for people makes of a
 * cell (its column's people view).
 */
#include <math.h>
#include <stdio.h>

#include "../../util/page.h"
#include "../../util/text.h"
#include "cell.h"

struct cell cell_str(const char *s)
{
	return (struct cell){ .kind = CELL_STR, .s = s };
}

struct cell cell_uint(uint64_t u)
{
	return (struct cell){ .kind = CELL_UINT, .u = u };
}

struct cell cell_int(int64_t i)
{
	return (struct cell){ .kind = CELL_INT, .i = i };
}

struct cell cell_real(double r, int prec)
{
	return (struct cell){ .kind = CELL_REAL, .r = r, .prec = prec };
}

struct cell cell_hex(uint64_t u)
{
	return (struct cell){ .kind = CELL_HEX, .u = u };
}

struct cell cell_digest(const char *s)
{
	return (struct cell){ .kind = CELL_DIGEST, .s = s };
}

struct cell cell_bytes(uint64_t u)
{
	return (struct cell){ .kind = CELL_BYTES, .u = u };
}

int cell_format(const struct cell *c, char *buf, size_t len)
{
	switch (c->kind) {
	case CELL_STR:
		return snprintf(buf, len, "%s", c->s);
	case CELL_DIGEST:
		/* 0x: spreadsheets keep "026859e2" as text, not 2685900. */
		return snprintf(buf, len, "0x%s", c->s);
	case CELL_UINT:
	case CELL_BYTES:
		return snprintf(buf, len, "%llu", (unsigned long long)c->u);
	case CELL_INT:
		return snprintf(buf, len, "%lld", (long long)c->i);
	case CELL_REAL:
		if (c->prec < 0)
			return snprintf(buf, len, "%.6g", c->r);
		return snprintf(buf, len, "%.*f", c->prec, c->r);
	case CELL_HEX:
		return snprintf(buf, len, "0x%llx", (unsigned long long)c->u);
	}
	return snprintf(buf, len, "?");
}

int column_shown(const struct column *c, int table, int people)
{
	if (c->flags & COL_TABLE_ONLY)
		return table;
	if (c->flags & COL_PEOPLE_ONLY)
		return table && people;
	return !(people && (c->flags & COL_NOT_PEOPLE));
}

struct cell cell_for_people(const struct column *c, const struct cell *in,
			    char *buf, size_t len)
{
	const struct people_view *v = &c->people;
	struct cell out = *in;

	if (in->kind == CELL_REAL && isnan(in->r) && v->nan)
		return cell_str(v->nan);
	if (in->kind == CELL_REAL && v->decimals)
		out.prec = v->decimals - 1;
	if (in->kind == CELL_UINT && v->yes && in->u <= 1)
		return cell_str(in->u ? v->yes : v->no);
	if (in->kind == CELL_UINT && v->size)
		return cell_bytes(v->size == SIZE_PAGES ? in->u * PAGE_BYTES : in->u);
	if (in->kind == CELL_STR && v->cut)
		return cell_str(text_shorten(in->s, v->cut, buf, len));
	return out;
}
