/*
 * home.h - the directory holding the bundled rule packs (rules/), the SDK
 * Lua modules (lua/) and the rule docs (docs/rules/): OPTIPIPE_HOME, else
 * share/optipipe next to the binary (the build tree), else
 * ../share/optipipe from it (an installed prefix).
 */
#ifndef OP_CORE_HOME_H
#define OP_CORE_HOME_H

/* The home directory. Returns OPTIPIPE_HOME itself or a static buffer
 * (process-global: the answer is the same for every caller, but two
 * threads calling at once write the buffer at the same time; compute it
 * once up front in a threaded program). */
const char *op_home(void);

#endif
