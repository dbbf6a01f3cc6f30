/* SPDX-License-Identifier: MIT */
/*
 * Escaping writers for the YAML lab generates (cloud-init seeds): every
 * value that came from a user or a file goes through one of these, never
 * through a bare "%s".
 */
#pragma once
#include "strbuf.h"

/* A double-quoted YAML scalar: \" \\ and control characters escaped. */
void yaml_quote(struct strbuf *sb, const char *s);
/*
 * A literal block scalar ("|" then each line indented by `indent` spaces)
 * for multi-line text such as keys; falls back to yaml_quote() when the
 * text cannot be written literally (leading blank, CR, control characters).
 */
void yaml_block(struct strbuf *sb, const char *s, unsigned indent);
