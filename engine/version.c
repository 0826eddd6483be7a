/*
 * version.c — the version of the library itself (rmx_version), as opposed to the header's
 * RMX_VERSION a program was compiled with: with shared libraries the two may differ.
 */
#include "../api/rmx.h"

/* RMX_VERSION packs MINOR and PATCH in two decimal digits each. */
_Static_assert(RMX_VERSION_MINOR < 100 && RMX_VERSION_PATCH < 100,
               "RMX_VERSION_NUM needs MINOR and PATCH below 100");

unsigned rmx_version(void)
{
    return RMX_VERSION;
}

const char *rmx_version_string(void)
{
    return RMX_VERSION_STRING;
}
