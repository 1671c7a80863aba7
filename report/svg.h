/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SVG_H
#define KSMSCAN_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The --svg picture (svg.c) draws each input's histogram and address map;
 * other reports add to it what they alone know: bars (a size for one input)
 * and drawings (their own SVG elements, below the inputs' pictures).
 */

/* A bar another report adds to the --svg picture: a size for one input. */
struct svg_bar {
	const char *input;		/* the input's name, as its scope had it */
	char label[40];			/* what the size is */
	uint64_t bytes;
};

/*
 * A drawing another report adds to the --svg picture, below the inputs'
 * pictures: the report writes it (its own SVG elements) when svg.c asks.
 */
struct svg_drawing {
	int height;			/* the height it takes */
	/**
	 * draw() - write the drawing's SVG elements from @y down, within
	 * @width; @arg is the report's.
	 */
	void (*draw)(FILE *f, int y, int width, const void *arg);
	const void *arg;		/* valid until the reports are freed */
};

/* The bars other reports added, drawn after the input's own pictures, and
 * their drawings, after every input. */
struct svg_bars {
	struct svg_bar *v;
	size_t n;
	struct svg_drawing *drawings;
	size_t ndrawings;
};

/**
 * svg_text() - write text for an SVG element or attribute value: & < > " '
 * escaped, controls and what would drive a terminal as '?' (text_clean()).
 * @f: the picture
 * @s: the text
 */
void svg_text(FILE *f, const char *s);

/**
 * svg_drawing_add() - add a drawing to the --svg picture (from a report's
 * scope(), before the picture is printed).
 * @bars: the list
 * @d: the drawing
 */
void svg_drawing_add(struct svg_bars *bars, const struct svg_drawing *d);

/**
 * svg_bar_add() - add a bar to the --svg picture (reports printed before it).
 * @bars: the list
 * @input: the input's name ("*" is not drawn)
 * @label: what the size is
 * @bytes: the size
 */
void svg_bar_add(struct svg_bars *bars, const char *input, const char *label,
		 uint64_t bytes);

#endif
