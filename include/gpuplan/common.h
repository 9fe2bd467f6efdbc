/*
 * common.h - types and helpers every gpuplan module shares.
 *
 * Time is an int64_t count of microseconds since the scenario start (sim_time).
 * Library functions return a status (enum gp_status) and fill a caller-supplied
 * struct gp_err; they never print and never exit.  Memory comes from gp_xmalloc
 * and friends, which exit 1 on exhaustion ("gpuplan: error: out of memory"):
 * a planner cannot do anything useful without memory, and inputs that would
 * need too much are refused up front.
 */
#ifndef GPUPLAN_COMMON_H
#define GPUPLAN_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

typedef int64_t sim_time;

#define SIM_SECOND INT64_C(1000000)
#define SIM_MINUTE (60 * SIM_SECOND)
#define SIM_HOUR   (60 * SIM_MINUTE)
#define SIM_DAY    (24 * SIM_HOUR)
#define SIM_NEVER  INT64_MAX

static inline double sim_seconds(sim_time t) { return (double)t / (double)SIM_SECOND; }

/* llround(x) without the libm call, for finite |x| < 2^63: x minus its
 * truncation is exact (Sterbenz), so the half-way test is exact and the
 * result is llround's, halves away from zero.  Scores round once per node
 * scanned: the call was most of a scoring pass. */
static inline int64_t gp_llround(double x)
{
	int64_t t = (int64_t)x; /* toward zero */
	double f = x - (double)t;
	return t + (f >= 0.5) - (f <= -0.5);
}

/* llround(x) for any x: gp_llround within +-2^62, the C library's beyond
 * (and for NaN), so a time drawn or computed rounds without the libm call
 * and what is out of range rounds as it always did. */
static inline int64_t gp_llround_any(double x)
{
	return x > -0x1p62 && x < 0x1p62 ? gp_llround(x) : __builtin_llround(x);
}

/* fmin and fmax without the libm call (its spills around it cost more than
 * the call): glibc's x86-64 results, zeros of both signs included (minsd
 * and maxsd give the second of two that compare equal), and the other
 * operand for one NaN. */
static inline double gp_fmin(double a, double b)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	return a < b ? a : b;
}

static inline double gp_fmax(double a, double b)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	return a > b ? a : b;
}

/* Seconds as sim_time, to the nearest µs (halves away from zero): the
 * inverse of sim_seconds, for times drawn or computed in seconds. */
static inline sim_time sim_from_seconds(double seconds)
{
	return gp_llround_any(seconds * (double)SIM_SECOND);
}

/* Set bits of x.  Without -mpopcnt, __builtin_popcountll is a libgcc call;
 * counting rooms word by word made it 5% of a large run. */
static inline int gp_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (int)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* Binary sizes: memory in bytes is a double throughout. */
#define GP_MIB (1024.0 * 1024.0)
#define GP_GIB (1024.0 * GP_MIB)

/* The kubelet's CrashLoopBackOff (and a Job's pod-failure backoff): the
 * delay before the restart after the n-th failure (n from 0) is `first`
 * doubled n times, capped at 5 minutes.  A first delay of 0 counts as one
 * tick, so that restarts still space out and a pod that fails at once
 * cannot loop at one instant; batch and inference share this rule. */
#define SIM_BACKOFF_CAP (5 * SIM_MINUTE)
static inline sim_time sim_backoff(sim_time first, int32_t n)
{
	sim_time b = first > 0 ? first : 1;
	for (int32_t k = 0; k < n && b < SIM_BACKOFF_CAP; k++)
		b *= 2;
	return b < SIM_BACKOFF_CAP ? b : SIM_BACKOFF_CAP;
}

enum gp_status {
	GP_OK = 0,
	GP_ERUNTIME = 1, /* I/O, SQLite: exit code 1 */
	GP_EINPUT = 2,   /* invalid usage, scenario or trace: exit code 2 */
};

/*
 * What an error is, set where it is made, so that the command line decides how
 * to report it from the kind and never from the text:
 *   GP_ERR_LOCATED   invalid input at a place of its own: msg begins with
 *                    "PLACE: error: " (FILE:LINE:COL, TRACE:LINE, an override,
 *                    a JSON path), place_len bytes of PLACE; printed as it is;
 *   GP_ERR_INPUT     invalid usage or input with no place of its own (a flag,
 *                    a name, a database that is not gpuplan's);
 *   GP_ERR_IO        the system or SQLite failed: a file, a pipe, a process;
 *   GP_ERR_LIMIT     a size or count past one of gpuplan's own bounds;
 *   GP_ERR_INTERNAL  a broken invariant: gpuplan's fault, not the input's.
 * The status returned beside it still gives the exit code.  A gp_err copied
 * whole keeps its kind; a message that quotes another keeps the inner kind
 * (gp_wrapf).
 */
enum gp_err_kind {
	GP_ERR_NONE = 0, /* nothing recorded yet */
	GP_ERR_LOCATED,
	GP_ERR_INPUT,
	GP_ERR_IO,
	GP_ERR_LIMIT,
	GP_ERR_INTERNAL,
};

/*
 * An error's message is sized to what it carries (a path up to PATH_MAX, names
 * of 253 characters, several in one message): msg is malloc'd and owned by the
 * struct, NULL while nothing is recorded.  Start one empty ({0}); every setter
 * below frees the text it replaces, so one gp_err may be set many times, and
 * gp_err_free releases the last.  A gp_err is never copied whole: gp_err_move
 * hands the text over, gp_err_copy duplicates it.
 */
struct gp_err {
	enum gp_err_kind kind; /* first: {""} no longer compiles */
	unsigned place_len;    /* bytes of PLACE when msg begins "PLACE: error: ", else 0 */
	char *msg;             /* owned; NULL: no message (gp_err_msg gives "") */
};

/* err's message, "" when there is none. */
static inline const char *gp_err_msg(const struct gp_err *err) { return err->msg ? err->msg : ""; }
/* Frees err's message and leaves it empty ({0}); err may be empty already. */
void gp_err_free(struct gp_err *err);
/* dst (freed first) takes src's message and kind; src is left empty. */
void gp_err_move(struct gp_err *dst, struct gp_err *src);
/* dst (freed first) gets a copy of src's message and kind; src may be dst. */
void gp_err_copy(struct gp_err *dst, const struct gp_err *src);
/* A gp_err freed as its scope ends:  struct gp_err err GP_ERR_SCOPE = {0}; */
#define GP_ERR_SCOPE __attribute__((cleanup(gp_err_free)))

/* A place in a user-facing input: FILE:LINE:COL, 1-based.  line 0 = whole file. */
struct srcloc {
	const char *file;
	int line;
	int col;
};

#if defined(__GNUC__)
#define GP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GP_PRINTF(a, b)
#endif

/* Fills err with the message and returns status; the kind is GP_ERR_INPUT for
 * GP_EINPUT, GP_ERR_IO for GP_ERUNTIME. */
int gp_errorf(struct gp_err *err, int status, const char *fmt, ...) GP_PRINTF(3, 4);
/* The same with the kind given (GP_ERR_LIMIT, GP_ERR_INTERNAL). */
int gp_errkindf(struct gp_err *err, enum gp_err_kind kind, int status, const char *fmt, ...)
	GP_PRINTF(4, 5);
/* Fills err with a message that quotes inner's (a %s of inner->msg) and keeps
 * inner's kind: a located inner keeps the message located, its place now
 * inside the text (place_len 0).  inner may be err itself. */
int gp_wrapf(struct gp_err *err, const struct gp_err *inner, int status, const char *fmt, ...)
	GP_PRINTF(4, 5);
/* What the command line prints before err's message: "" for an invalid input
 * that names its own place (GP_EINPUT, GP_ERR_LOCATED), else
 * "gpuplan: error: ". */
const char *gp_err_prefix(int status, const struct gp_err *err);

/* Fills err with "FILE:LINE:COL: error: MESSAGE" ("FILE:LINE: error:" without a
 * column, "FILE: error:" without a line) and returns GP_EINPUT. */
int gp_located(struct gp_err *err, struct srcloc loc, const char *fmt, ...) GP_PRINTF(3, 4);
int gp_vlocated(struct gp_err *err, struct srcloc loc, const char *fmt, va_list ap);

/* Input files.  gp_open_input opens PATH for reading only when it is a regular
 * file: a FIFO would block forever and /dev/zero never ends, so anything else
 * is refused.  On failure it returns NULL and *why says why ("not a regular
 * file ...", or strerror's text).  gp_read_input reads a whole file into a
 * NUL-terminated buffer (*text, malloc'd; *len bytes before the NUL). */
FILE *gp_open_input(const char *path, const char **why);
/* The offset of the first byte of s[0, n) that does not begin a valid UTF-8
 * sequence (overlong forms, surrogates and code points past U+10FFFF
 * included), or n when all of it is UTF-8. */
size_t gp_utf8_check(const char *s, size_t n);
int gp_read_input(const char *path, char **text, size_t *len, const char **why);

/* A block of GP_HUGE_PAGE bytes or more from gp_xmalloc or GP_GROW starts on
 * a huge-page boundary and asks for transparent huge pages (common.c says
 * why). */
#define GP_HUGE_PAGE ((size_t)2 << 20)

/* Threads or processes a command runs at once by default (advise's and
 * sweep's --jobs): GPUPLAN_THREADS when set (1: one at a time, the
 * single-threaded path tests compare with; main refuses a value that is not
 * 1 .. GP_MAX_JOBS), else the processors this process may run on (its CPU
 * affinity, as nproc counts them); from 1 to max. */
#define GP_MAX_JOBS 256
unsigned gp_default_jobs(unsigned max);

/* The environment variables that tune how a command runs are input too:
 * GPUPLAN_THREADS (1 .. GP_MAX_JOBS) and GPUPLAN_WRITER_ROWS (1 .. 2^20)
 * must be whole numbers in range, else GP_EINPUT (GPUPLAN_THREADS=abc ran
 * everything on one thread, 99999 forked 256 sweep workers). */
int gp_check_environment(struct gp_err *err);

void *gp_xmalloc(size_t n);
void *gp_xcalloc(size_t n, size_t size);
/* gp_xcalloc on a 64-byte boundary: elements of a line's size then start
 * lines of their own.  free() releases it. */
void *gp_xcalloc_lines(size_t n, size_t size);
void *gp_xrealloc(void *p, size_t n);
char *gp_xstrdup(const char *s);

/* Grows *p (an array of elem-sized items with capacity *cap) to hold at least
 * need, doubling the capacity.  From GP_HUGE_PAGE on, each growth copies the
 * array into a new block of whole huge pages: the copies add up to less than
 * the final size, and for that moment the old block is held beside the new
 * one. */
void gp_grow(void **p, size_t *cap, size_t need, size_t elem);

/* GP_GROW's test, inline: nearly every push finds room, and the call cost
 * more than the test (an M/M/1 customer pushes three times). */
static inline void gp_grow_if(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need > *cap)
		gp_grow(p, cap, need, elem);
}

#define GP_GROW(arr, cap, need) gp_grow_if((void **)&(arr), &(cap), (need), sizeof *(arr))

/* Swaps the n bytes at a and b (GP_SWAP: two variables of one type, such as a
 * round's tried buffer and its best one). */
void gp_swap(void *a, void *b, size_t n);

#define GP_SWAP(a, b) \
	gp_swap(&(a), &(b), sizeof(a) + 0 * sizeof(char[sizeof(a) == sizeof(b) ? 1 : -1]))

/* Grows p (size-byte cells, capacity *cap) to hold need, doubling from 16,
 * and zeroes the new cells; returns the array.  The test is inline, the
 * growth (gp_grow_zeroed_to) out of line, as for GP_GROW. */
void *gp_grow_zeroed_to(void *p, size_t *cap, size_t need, size_t size);
static inline void *gp_grow_zeroed(void *p, size_t *cap, size_t need, size_t size)
{
	return need <= *cap ? p : gp_grow_zeroed_to(p, cap, need, size);
}

/* A growing string: start from {0}, append with gp_sb_printf, and take the
 * result (malloc'd; "" when nothing was written) with gp_sb_take. */
struct gp_sbuf {
	char *s;
	size_t n, cap;
};

void gp_sb_printf(struct gp_sbuf *b, const char *fmt, ...) GP_PRINTF(2, 3);
void gp_sb_vprintf(struct gp_sbuf *b, const char *fmt, va_list ap);
/* Appends one byte (a NUL too: strings packed one after another). */
void gp_sb_putc(struct gp_sbuf *b, char c);
char *gp_sb_take(struct gp_sbuf *b);
/* fmt's text, malloc'd and sized to fit. */
char *gp_strf(const char *fmt, ...) GP_PRINTF(1, 2);
char *gp_vstrf(const char *fmt, va_list ap);
/* A scratch string reused without allocating once it has grown: gp_sb_clear
 * empties b and keeps its memory, gp_sb_str reads it ("" when empty), and
 * free(b->s) releases it. */
void gp_sb_clear(struct gp_sbuf *b);
const char *gp_sb_str(const struct gp_sbuf *b);

#endif
