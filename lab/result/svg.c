/* SPDX-License-Identifier: MIT */
/*
 * What every HTML page lab writes shares: its head (report_page_begin),
 * and inline SVG: the picture's frame, lines, text and an axis's step.
 * The HTML report, the forest plot, the site and a track's report draw
 * with them; they call nothing of any.
 */
#include <math.h>
#include <stdio.h>
#include "../util/xml.h"
#include "report.h"
#include "../util/banned.h"

void report_page_begin(struct xml *x, struct strbuf *out, const char *title, const char *css)
{
	strbuf_addstr(out, "<!DOCTYPE html>\n");
	xml_init(x, out);
	xml_open(x, "html");
	xml_attr(x, "lang", "en");
	xml_open(x, "head");
	xml_empty(x, "meta", "charset", "utf-8", NULL);
	xml_empty(x, "meta", "name", "viewport", "content", "width=device-width, initial-scale=1", NULL);
	xml_element(x, "title", title);
	xml_element(x, "style", css);
	xml_close(x);
	xml_open(x, "body");
	xml_element(x, "h1", title);
}

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
