/*
 * abi2.c - a test .so built "for ABI 2.0": optipipe must refuse it with a
 * message naming the plugin, the file and both versions.
 */
#include <optipipe/plugin.h>

static int never_detect(const op_probe *p)
{
    (void)p;
    return 100;
}

static int never_parse(op_stream *in, op_builder *b, op_error *err)
{
    (void)in;
    (void)b;
    return op_error_set(err, OP_EUSAGE, "must never run");
}

static const op_plugin future = {
    .magic = OP_ABI_MAGIC,
    .abi_major = OP_ABI_MAJOR + 1,
    .abi_minor = 0,
    .struct_size = sizeof(op_plugin),
    .flags = 0,
    .name = "future",
    .version = "9.9",
    .detect = never_detect,
    .parse = never_parse,
};

OP_EXPORT const op_plugin *op_plugin_entry(void);

OP_EXPORT const op_plugin *op_plugin_entry(void)
{
    return &future;
}
