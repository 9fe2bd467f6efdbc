/* outfile.c - replace a file whole or not at all (see outfile.h). */
#include "gpuplan/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH with a symbolic link at its end resolved (the link itself is kept). */
static char *resolve_link(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *real = realpath(path, NULL);
		if (real) {
			char *copy = gp_xstrdup(real);
			free(real);
			return copy;
		}
	}
	return gp_xstrdup(path);
}

int outfile_refuse_same(const char *path, const char *input, struct gp_err *err)
{
	struct stat out, in;
	if (input && stat(path, &out) == 0 && stat(input, &in) == 0 && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino)
		return gp_errorf(err, GP_EINPUT,
				 "%s: is the input %s; expected another path for the "
				 "output",
				 path, input);
	return GP_OK;
}

static int check_target(const char *path, const char *input, struct gp_err *err)
{
	struct stat out;
	if (stat(path, &out) != 0)
		return GP_OK; /* a new file */
	if (!S_ISREG(out.st_mode))
		return gp_errorf(err, GP_EINPUT,
				 "%s: not a regular file; expected a path to "
				 "write a new file or replace one",
				 path);
	int rc = outfile_refuse_same(path, input, err);
	if (rc)
		return rc;
	/* An SQLite database (results above all) is never replaced by a
	 * report, a scenario or a page: its file header (sqlite.org/fileformat.html). */
	char head[16] = {0};
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* ... nor is its write-ahead log or rollback journal, which hold
	 * committed runs not yet in the database file (sqlite.org/walformat.html:
	 * magic 0x377f0682 or 0x377f0683; fileformat.html: the journal's
	 * d9d505f920a163d7). */
	static const unsigned char wal[2][4] = {{0x37, 0x7f, 0x06, 0x82}, {0x37, 0x7f, 0x06, 0x83}};
	static const unsigned char journal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
	bool got = fd >= 0 && read(fd, head, sizeof head) == (ssize_t)sizeof head;
	bool database = got && !memcmp(head, "SQLite format 3", sizeof head);
	bool log = got && (!memcmp(head, wal[0], 4) || !memcmp(head, wal[1], 4) ||
			   !memcmp(head, journal, 8));
	if (fd >= 0)
		close(fd);
	if (database || log)
		return gp_errorf(err, GP_EINPUT,
				 "%s: is an SQLite %s; expected another path for the output "
				 "(a database is never replaced by it)",
				 path, database ? "database" : "database's log or journal");
	return GP_OK;
}

int outfile_open(struct outfile *of, const char *path, const char *input, struct gp_err *err)
{
	*of = (struct outfile){0};
	if (!path[0])
		return gp_errorf(err, GP_EINPUT, "an empty output path; expected a file name");
	int rc = check_target(path, input, err);
	if (rc)
		return rc;
	of->path = resolve_link(path);
	size_t n = strlen(of->path) + sizeof ".tmp-XXXXXX";
	of->tmp = gp_xmalloc(n);
	snprintf(of->tmp, n, "%s.tmp-XXXXXX", of->path);
	int fd = mkstemp(of->tmp);
	if (fd < 0 || !(of->f = fdopen(fd, "w"))) {
		rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(of->tmp);
		}
		free(of->tmp);
		free(of->path);
		*of = (struct outfile){0};
		return rc;
	}
	/* mkstemp makes the file 0600; an output is as readable as any other file. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return GP_OK;
}

int outfile_commit(struct outfile *of, struct gp_err *err)
{
	int rc = GP_OK;
	if (fflush(of->f) != 0 || ferror(of->f) || fsync(fileno(of->f)) != 0)
		rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot write: %s", of->path, strerror(errno));
	if (fclose(of->f) != 0 && !rc)
		rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot write: %s", of->path, strerror(errno));
	of->f = NULL;
	if (!rc && rename(of->tmp, of->path) != 0)
		rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot replace: %s", of->path,
			       strerror(errno));
	if (rc)
		unlink(of->tmp);
	free(of->tmp);
	free(of->path);
	*of = (struct outfile){0};
	return rc;
}

void outfile_abort(struct outfile *of)
{
	if (of->f) {
		fclose(of->f);
		unlink(of->tmp);
	}
	free(of->tmp);
	free(of->path);
	*of = (struct outfile){0};
}
