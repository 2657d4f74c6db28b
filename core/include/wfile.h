/*
 * wfile.h - writing a file a user named, safely: the one way core/ and
 * cli/ write such a file (a decisions file, a report's -o, config patches
 * of --emit-changes, the files of `rules new`, JUnit of `rules test`).
 *
 * A checkout or a CI workspace may come from a stranger, and a symbolic
 * link planted where optipipe writes would make it write (as the user
 * running it) wherever the link points. So:
 *   - a symbolic link where the file is to be written is refused, said;
 *   - a regular file (or none yet) is written to a temporary file made by
 *     mkstemp(3) in the same folder (O_EXCL: it never follows a link,
 *     never opens a file that exists) and renamed over the target when
 *     complete (rename replaces a name, it does not follow one): the
 *     target is there whole or as it was, also when the writer dies;
 *   - a device or a fifo that exists (`-o /dev/null`, a pipe) is opened
 *     in place with O_NOFOLLOW, without O_CREAT, and must still be the
 *     file lstat saw; under /dev/ links are followed (/dev/stdout: only
 *     root can put a link there).
 * The new file gets the target's mode when it replaces one, else 0666
 * less the umask (what fopen "w" gives).
 */
#ifndef OP_CORE_WFILE_H
#define OP_CORE_WFILE_H

#include <limits.h>
#include <stdio.h>

#include <optipipe/common.h>

typedef struct wfile {
    FILE *f;             /* write here; owned until commit or abort */
    char path[PATH_MAX]; /* the target */
    char tmp[PATH_MAX];  /* the temporary file; "" when writing in place */
} wfile;

/* Opens path for writing as above into *w. Returns 0, or OP_EUSAGE (a
 * symbolic link, a folder, another kind of file: err says which and that
 * nothing was written) or OP_EIO (cannot create the temporary file, the
 * path is too long), err naming path. */
int wfile_open(wfile *w, const char *path, op_error *err);

/* wfile_open's refusal alone, for a writer with a temporary file of its
 * own (fetch -o: its temp files are removed from a signal handler): 0
 * when path is a regular file or absent, else OP_EUSAGE as wfile_open. */
int wfile_check(const char *path, op_error *err);

/* Closes w->f and puts the file in place (rename); on a write error or a
 * failed rename the temporary file is removed and the target left as it
 * was. w is released either way. Returns 0 or OP_EIO with err. */
int wfile_commit(wfile *w, op_error *err);

/* Closes w->f and removes the temporary file: the target stays as it
 * was (a device or fifo written in place keeps what it got). */
void wfile_abort(wfile *w);

#endif
