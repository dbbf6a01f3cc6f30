/* SPDX-License-Identifier: MIT */
/*
 * Small macros used everywhere: cleanup attributes, TAKE_PTR, array sizes.
 * Destructors used with _cleanup_ must accept NULL (systemd's alloc-util.h).
 */
#pragma once

#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _warn_unused_ __attribute__((warn_unused_result))

/* Hand ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _p_ = (p);     \
		(p) = NULL;                  \
		_p_;                         \
	})

#define TAKE_FD(fd)                          \
	({                                   \
		int _fd_ = (fd);             \
		(fd) = -1;                   \
		_fd_;                        \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)  \
	static inline void func##p(type *p)      \
	{                                        \
		if (*p)                          \
			func(*p);                \
	}

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
