/*
 * home.c - where the installed data lives (home.h): the one lookup of
 * OPTIPIPE_HOME, else the share/optipipe next to (or above) the binary.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home.h"

const char *op_home(void)
{
    static char home[PATH_MAX + 64];
    char exe[PATH_MAX], try[PATH_MAX + 64];
    const char *env = getenv("OPTIPIPE_HOME");
    struct stat st;
    ssize_t n;
    char *slash;

    if (env && *env)
        return env;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "share/optipipe";
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(try, sizeof try, "%s/share/optipipe/rules", exe);
    if (stat(try, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(home, sizeof home, "%s/share/optipipe", exe);
        return home;
    }
    snprintf(try, sizeof try, "%s/../share/optipipe", exe);
    /* an installed prefix/bin/optipipe: name prefix/share/optipipe plainly */
    if (!realpath(try, home))
        snprintf(home, sizeof home, "%s", try);
    return home;
}
