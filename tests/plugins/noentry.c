/*
 * noentry.c - a test .so that looks like a plugin but exports no
 * op_plugin_entry (tests/unit/test_plugins.c expects it to be refused).
 */
#include <optipipe/plugin.h>

OP_EXPORT int op_plugin_entry_typo(void);

OP_EXPORT int op_plugin_entry_typo(void)
{
    return 0;
}
