/*
 * wfile.c - writing a user-named file without following a planted link
 * (wfile.h): mkstemp in the target's folder and rename, or a device or
 * fifo in place with O_NOFOLLOW.
 */
#include "wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process' umask without changing it (Linux 4.7+ says it in
 * /proc/self/status; elsewhere the classic set-and-restore). */
static mode_t current_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    mode_t m;

    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "Umask:", 6) == 0) {
                fclose(f);
                return (mode_t)strtoul(line + 6, NULL, 8) & 0777;
            }
        fclose(f);
    }
    m = umask(022);
    umask(m);
    return m;
}

static int refuse(const char *path, const struct stat *st, op_error *err)
{
    const char *what = S_ISLNK(st->st_mode)  ? "a symbolic link"
                       : S_ISDIR(st->st_mode) ? "a folder"
                                              : "not a regular file";

    return op_error_set(err, OP_EUSAGE, "%s: %s; refusing to write %s it "
                        "(nothing written: remove it, or name another file)",
                        path, what, S_ISLNK(st->st_mode) ? "through" : "over");
}

/* A device or fifo that exists: opened as it is, if it still is what
 * lstat saw (not swapped for a link in between). */
static int open_in_place(wfile *w, const struct stat *seen, int follow,
                         op_error *err)
{
    struct stat st;
    int fd = open(w->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

    if (fd < 0)
        return op_error_set(err, OP_EIO, "%s: cannot write: %s", w->path,
                            strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_dev != seen->st_dev ||
        st.st_ino != seen->st_ino) {
        close(fd);
        return op_error_set(err, OP_EIO, "%s: changed while it was opened; "
                            "nothing written", w->path);
    }
    if (!(w->f = fdopen(fd, "w"))) {
        close(fd);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    return 0;
}

int wfile_open(wfile *w, const char *path, op_error *err)
{
    struct stat st;
    int fd, exists, follow;
    mode_t mode;

    memset(w, 0, sizeof *w);
    if (snprintf(w->path, sizeof w->path, "%s", path) >= (int)sizeof w->path ||
        snprintf(w->tmp, sizeof w->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof w->tmp)
        return op_error_set(err, OP_EIO, "%s: path too long", path);
    /* /dev/stdout and the like are links only root can plant: followed */
    follow = strncmp(path, "/dev/", 5) == 0;
    exists = (follow ? stat(path, &st) : lstat(path, &st)) == 0;
    if (!exists && errno != ENOENT)
        return op_error_set(err, OP_EIO, "%s: cannot write: %s", path,
                            strerror(errno));
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        w->tmp[0] = '\0';
        return open_in_place(w, &st, follow, err);
    }
    if (exists && !S_ISREG(st.st_mode))
        return refuse(path, &st, err);
    mode = exists ? st.st_mode & 07777 : 0666 & ~current_umask();
    if ((fd = mkstemp(w->tmp)) < 0) {
        int e = errno;
        w->tmp[0] = '\0';
        return op_error_set(err, OP_EIO, "%s: cannot write (a temporary file "
                            "beside it): %s", path, strerror(e));
    }
    if (fchmod(fd, mode) != 0 || !(w->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(w->tmp);
        w->tmp[0] = '\0';
        return op_error_set(err, OP_EIO, "%s: cannot write: %s", path,
                            strerror(e));
    }
    return 0;
}

int wfile_check(const char *path, op_error *err)
{
    struct stat st;

    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    return refuse(path, &st, err);
}

int wfile_commit(wfile *w, op_error *err)
{
    int bad, e = 0;

    if (!w->f)
        return op_error_set(err, OP_EIO, "%s: not open", w->path);
    bad = ferror(w->f);
    bad |= fclose(w->f) != 0;
    w->f = NULL;
    if (!bad && w->tmp[0] && rename(w->tmp, w->path) != 0)
        e = errno;
    if ((bad || e) && w->tmp[0])
        unlink(w->tmp);
    w->tmp[0] = '\0';
    if (bad || e)
        return op_error_set(err, OP_EIO, "%s: cannot write: %s", w->path,
                            e ? strerror(e) : "write failed");
    return 0;
}

void wfile_abort(wfile *w)
{
    if (w->f)
        fclose(w->f);
    w->f = NULL;
    if (w->tmp[0])
        unlink(w->tmp);
    w->tmp[0] = '\0';
}
