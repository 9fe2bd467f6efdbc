/* common.c - error formatting and the allocation wrappers (see common.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "gpuplan/common.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static enum gp_err_kind kind_of(int status)
{
	return status == GP_EINPUT ? GP_ERR_INPUT : GP_ERR_IO;
}

/* head followed by fmt's text, malloc'd and sized to fit.  Formatted
 * before err's old text is freed: an argument may be that text
 * (gp_wrapf(err, err, ...)). */
static char *format(const char *head, const char *fmt, va_list ap)
{
	struct gp_sbuf b = {0};
	gp_sb_printf(&b, "%s", head);
	gp_sb_vprintf(&b, fmt, ap);
	return gp_sb_take(&b);
}

static int vset(struct gp_err *err, enum gp_err_kind kind, int status, const char *fmt, va_list ap)
{
	char *text = format("", fmt, ap);
	free(err->msg);
	err->msg = text;
	err->kind = kind;
	err->place_len = 0;
	return status;
}

void gp_err_free(struct gp_err *err)
{
	free(err->msg);
	*err = (struct gp_err){0};
}

void gp_err_move(struct gp_err *dst, struct gp_err *src)
{
	if (dst == src)
		return;
	free(dst->msg);
	*dst = *src;
	*src = (struct gp_err){0};
}

void gp_err_copy(struct gp_err *dst, const struct gp_err *src)
{
	if (dst == src)
		return;
	char *text = src->msg ? gp_xstrdup(src->msg) : NULL;
	free(dst->msg);
	*dst = *src;
	dst->msg = text;
}

int gp_errorf(struct gp_err *err, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, kind_of(status), status, fmt, ap);
	va_end(ap);
	return status;
}

int gp_errkindf(struct gp_err *err, enum gp_err_kind kind, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, kind, status, fmt, ap);
	va_end(ap);
	return status;
}

int gp_wrapf(struct gp_err *err, const struct gp_err *inner, int status, const char *fmt, ...)
{
	/* The kind read first: inner may be err itself. */
	enum gp_err_kind kind = inner->kind != GP_ERR_NONE ? inner->kind : kind_of(status);
	va_list ap;
	va_start(ap, fmt);
	vset(err, kind, status, fmt, ap);
	va_end(ap);
	return status;
}

const char *gp_err_prefix(int status, const struct gp_err *err)
{
	return status == GP_EINPUT && err->kind == GP_ERR_LOCATED ? "" : "gpuplan: error: ";
}

int gp_vlocated(struct gp_err *err, struct srcloc loc, const char *fmt, va_list ap)
{
	const char *file = loc.file ? loc.file : "(input)";
	int n = loc.line <= 0  ? snprintf(NULL, 0, "%s", file)
		: loc.col <= 0 ? snprintf(NULL, 0, "%s:%d", file, loc.line)
			       : snprintf(NULL, 0, "%s:%d:%d", file, loc.line, loc.col);
	size_t place = n > 0 ? (size_t)n : 0;
	char *head = gp_xmalloc(place + sizeof ": error: ");
	if (loc.line <= 0)
		snprintf(head, place + 1, "%s", file);
	else if (loc.col <= 0)
		snprintf(head, place + 1, "%s:%d", file, loc.line);
	else
		snprintf(head, place + 1, "%s:%d:%d", file, loc.line, loc.col);
	memcpy(head + place, ": error: ", sizeof ": error: ");
	char *text = format(head, fmt, ap);
	free(head);
	free(err->msg);
	err->msg = text;
	err->kind = GP_ERR_LOCATED;
	err->place_len = (unsigned)place;
	return GP_EINPUT;
}

int gp_located(struct gp_err *err, struct srcloc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gp_vlocated(err, loc, fmt, ap);
	va_end(ap);
	return GP_EINPUT;
}

static void *check(void *p)
{
	if (!p) {
		/* Exit 1 (a runtime error) with the documented message: an open run
		 * transaction is rolled back, and no core is dumped. */
		fputs("gpuplan: error: out of memory\n", stderr);
		exit(GP_ERUNTIME);
	}
	return p;
}

/*
 * A 4 KiB page costs a fault at its first touch: 10 to 14 us in the
 * paravirtualized VM of docs/benchmarks.md, where a million jobs' rows, queue
 * times and their sort touched 30,000 of them.  So blocks of GP_HUGE_PAGE or
 * more ask for transparent huge pages, where the system gives them on request
 * (/sys/kernel/mm/transparent_hugepage/enabled: madvise).  A block that
 * gp_xmalloc or gp_grow hands out starts on a huge-page boundary and is
 * advised whole before anything touches it; gp_xcalloc and gp_xrealloc advise
 * the whole huge pages inside theirs (calloc leaves a fresh mapping untouched,
 * and realloc may move a block without copying it).  The advice is a hint, so
 * a failure changes nothing.
 */
static void *advise_huge_pages(void *p, size_t bytes)
{
	if (bytes < GP_HUGE_PAGE)
		return p;
	uintptr_t from = ((uintptr_t)p + GP_HUGE_PAGE - 1) & ~(uintptr_t)(GP_HUGE_PAGE - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)(GP_HUGE_PAGE - 1);
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
	return p;
}

/* n >= GP_HUGE_PAGE bytes (rounded up) on whole, advised huge pages. */
static void *huge_block(size_t n)
{
	size_t bytes = (n + GP_HUGE_PAGE - 1) & ~(GP_HUGE_PAGE - 1);
	return advise_huge_pages(check(aligned_alloc(GP_HUGE_PAGE, bytes)), bytes);
}

void *gp_xmalloc(size_t n) { return n >= GP_HUGE_PAGE ? huge_block(n) : check(malloc(n ? n : 1)); }
void *gp_xrealloc(void *p, size_t n) { return advise_huge_pages(check(realloc(p, n ? n : 1)), n); }

void *gp_xcalloc(size_t n, size_t size)
{
	return advise_huge_pages(check(calloc(n ? n : 1, size ? size : 1)), n * size);
}

void *gp_xcalloc_lines(size_t n, size_t size)
{
	size_t bytes = (n * size + 63) / 64 * 64; /* aligned_alloc wants a multiple */
	return memset(check(aligned_alloc(64, bytes ? bytes : 64)), 0, bytes);
}

char *gp_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(gp_xmalloc(n), s, n);
}

void *gp_grow_zeroed_to(void *p, size_t *cap, size_t need, size_t size)
{
	size_t had = *cap, want = had ? had : 16;
	while (want < need)
		want *= 2;
	p = gp_xrealloc(p, want * size);
	memset((char *)p + had * size, 0, (want - had) * size);
	*cap = want;
	return p;
}

void gp_swap(void *a, void *b, size_t n)
{
	unsigned char *x = a, *y = b;
	for (size_t i = 0; i < n; i++) {
		unsigned char t = x[i];
		x[i] = y[i];
		y[i] = t;
	}
}

void gp_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	if (c * elem < GP_HUGE_PAGE) {
		*p = gp_xrealloc(*p, c * elem);
	} else { /* onto whole huge pages; doubling keeps the copies linear */
		void *q = huge_block(c * elem);
		if (*cap)
			memcpy(q, *p, *cap * elem);
		free(*p);
		*p = q;
	}
	*cap = c;
}

FILE *gp_open_input(const char *path, const char **why)
{
	/* O_NONBLOCK: opening a FIFO with no writer must not wait for one. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		*why = strerror(errno);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*why = S_ISDIR(st.st_mode) ? "a folder, not a file"
					   : "not a regular file (a device, FIFO or socket)";
		return NULL;
	}
	int flags = fcntl(fd, F_GETFL);
	FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}

size_t gp_utf8_check(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = u[i] >= 0xC2 && u[i] <= 0xDF   ? 2
			   : u[i] >= 0xE0 && u[i] <= 0xEF ? 3
			   : u[i] >= 0xF0 && u[i] <= 0xF4 ? 4
							  : 0;
		if (!k || i + k > n)
			return i;
		for (size_t j = 1; j < k; j++)
			if ((u[i + j] & 0xC0) != 0x80)
				return i;
		if ((k == 3 && u[i] == 0xE0 && u[i + 1] < 0xA0) ||
		    (k == 3 && u[i] == 0xED && u[i + 1] >= 0xA0) ||
		    (k == 4 && u[i] == 0xF0 && u[i + 1] < 0x90) ||
		    (k == 4 && u[i] == 0xF4 && u[i + 1] >= 0x90))
			return i;
		i += k;
	}
	return n;
}

int gp_read_input(const char *path, char **text, size_t *len, const char **why)
{
	FILE *f = gp_open_input(path, why);
	if (!f)
		return GP_EINPUT;
	size_t cap = 1 << 16, n = 0;
	char *buf = gp_xmalloc(cap + 1);
	while ((n += fread(buf + n, 1, cap - n, f)) == cap)
		buf = gp_xrealloc(buf, (cap *= 2) + 1);
	int failed = ferror(f), saved = errno;
	fclose(f);
	if (failed) {
		free(buf);
		*why = strerror(saved);
		return GP_EINPUT;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return GP_OK;
}

/* Formats into the room left first: a reused scratch string that has grown
 * formats once, and only a string that must grow formats again. */
void gp_sb_vprintf(struct gp_sbuf *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	size_t room = b->s ? b->cap - b->n : 0;
	int need = vsnprintf(b->s ? b->s + b->n : NULL, room, fmt, ap);
	if (need > 0 && (size_t)need >= room) {
		GP_GROW(b->s, b->cap, b->n + (size_t)need + 1);
		vsnprintf(b->s + b->n, b->cap - b->n, fmt, again);
	}
	if (need > 0)
		b->n += (size_t)need;
	va_end(again);
}

void gp_sb_putc(struct gp_sbuf *b, char c)
{
	GP_GROW(b->s, b->cap, b->n + 2);
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

void gp_sb_printf(struct gp_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gp_sb_vprintf(b, fmt, ap);
	va_end(ap);
}

void gp_sb_clear(struct gp_sbuf *b)
{
	b->n = 0;
	if (b->s)
		b->s[0] = '\0';
}

const char *gp_sb_str(const struct gp_sbuf *b) { return b->s ? b->s : ""; }

char *gp_sb_take(struct gp_sbuf *b)
{
	char *s = b->s ? b->s : gp_xstrdup("");
	*b = (struct gp_sbuf){0};
	return s;
}

char *gp_vstrf(const char *fmt, va_list ap)
{
	struct gp_sbuf b = {0};
	gp_sb_vprintf(&b, fmt, ap);
	return gp_sb_take(&b);
}

char *gp_strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = gp_vstrf(fmt, ap);
	va_end(ap);
	return s;
}

/* The processors this process may run on: under taskset or a cgroup's
 * cpuset, fewer than the machine has online. */
static long processors(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int gp_check_environment(struct gp_err *err)
{
	static const struct {
		const char *name;
		long long max;
	} vars[] = {{"GPUPLAN_THREADS", GP_MAX_JOBS}, {"GPUPLAN_WRITER_ROWS", 1 << 20}};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *s = getenv(vars[i].name);
		char *end = NULL;
		errno = 0;
		long long v = s && *s ? strtoll(s, &end, 10) : 1;
		if (s && *s && (errno || *end || v < 1 || v > vars[i].max))
			return gp_errorf(err, GP_EINPUT,
					 "%s='%s' in the environment; expected a whole number "
					 "from 1 to %lld",
					 vars[i].name, s, vars[i].max);
	}
	return GP_OK;
}

unsigned gp_default_jobs(unsigned max)
{
	const char *env = getenv("GPUPLAN_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : processors();
	return n < 1 ? 1 : n > (long)max ? max : (unsigned)n;
}
