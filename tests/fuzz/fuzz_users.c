/*
 * fuzz_users.c - libFuzzer target for what `optipipe serve` reads of its
 * operator's access options (serve/serve_users.c): the bytes are a
 * --users file (written to one private temporary file, as the loader
 * reads a path), and each of their lines is also tried as a
 * --trusted-proxy CIDR and a user name. Nothing may crash or read out of
 * bounds; a loaded user's fields are checked for their shape.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"

#include "serve_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static srv_users users; /* large: not on the stack */

static void lines(const uint8_t *data, size_t size)
{
    char line[256];
    size_t i = 0;
    srv_cidr c;
    op_error err;

    while (i < size) {
        size_t n = 0;
        while (i < size && data[i] != '\n' && n + 1 < sizeof line)
            line[n++] = (char)data[i++];
        line[n] = '\0';
        i++;
        if (srv_cidr_parse(line, &c, &err) == 0 &&
            c.bits > (c.v6 ? 128u : 32u))
            abort();
        (void)srv_user_name_ok(line);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    op_error err;
    size_t i;
    const char *path = fuzz_file(data, size);

    op_error_clear(&err);
    if (srv_users_load(path, &users, &err) == 0)
        for (i = 0; i < users.n; i++)
            if (!srv_user_name_ok(users.u[i].name) ||
                users.u[i].role <= SRV_ROLE_NONE ||
                strlen(users.u[i].hash) != SHA256_HEX_LEN)
                abort();
    lines(data, size);
    return 0;
}
