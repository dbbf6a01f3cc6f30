/* SPDX-License-Identifier: MIT */
/*
 * Inline SVG for the HTML pages: the picture's frame, lines, text and an
 * axis's step. The HTML report and the forest plot draw with them; they
 * call nothing of either.
 */
#include <math.h>
#include <stdio.h>
#include "../util/xml.h"
#include "report.h"
#include "../util/banned.h"

double report_nice_step(double x)
{
	double p = pow(10, floor(log10(x))), m = x / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void report_svg_open(struct xml *x, double width, double height)
{
	xml_open(x, "svg");
	xml_attr(x, "xmlns", "http://www.w3.org/2000/svg");
	xml_attrf(x, "width", "%.0f", width);
	xml_attrf(x, "height", "%.0f", height);
	xml_attrf(x, "viewBox", "0 0 %.0f %.0f", width, height);
	xml_attr(x, "font-family", "sans-serif");
	xml_attr(x, "role", "img");
	xml_empty(x, "rect", "x", "0", "y", "0", "width", "100%", "height", "100%", "fill", "#fff", NULL);
}

void report_svg_line(struct xml *x, double x1, double y1, double x2, double y2, const char *stroke,
		     const char *width, const char *dash)
{
	xml_open(x, "line");
	xml_attrf(x, "x1", "%.1f", x1);
	xml_attrf(x, "y1", "%.1f", y1);
	xml_attrf(x, "x2", "%.1f", x2);
	xml_attrf(x, "y2", "%.1f", y2);
	xml_attr(x, "stroke", stroke);
	if (width)
		xml_attr(x, "stroke-width", width);
	if (dash)
		xml_attr(x, "stroke-dasharray", dash);
	xml_close(x);
}

void report_svg_text(struct xml *x, double tx, double ty, const char *anchor, const char *size, const char *text)
{
	xml_open(x, "text");
	xml_attrf(x, "x", "%.1f", tx);
	xml_attrf(x, "y", "%.1f", ty);
	if (anchor)
		xml_attr(x, "text-anchor", anchor);
	xml_attr(x, "font-size", size);
	xml_text(x, text);
	xml_close(x);
}
