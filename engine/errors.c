/* errors.c — rmx_strerror: one sentence per status code. */
#include "../api/rmx.h"

const char *rmx_strerror(int err)
{
    switch (err) {
    case RMX_OK:              return "success";
    case RMX_ERR_ARG:         return "invalid argument (NULL buffer, bad length or descriptor)";
    case RMX_ERR_RANK:        return "rank out of range";
    case RMX_ERR_RANGE:       return "access beyond the end of the target's window";
    case RMX_ERR_ALIGN:
        return "atomic target is not naturally aligned (disp, or the window's base + disp)";
    case RMX_ERR_DATATYPE:    return "unknown datatype, or operation not defined for it";
    case RMX_ERR_OP:          return "unknown operation";
    case RMX_ERR_EPOCH:       return "access epoch misuse (nested epoch or unlock without lock)";
    case RMX_ERR_WIN:         return "invalid or freed window";
    case RMX_ERR_CTX:         return "invalid or finalized context";
    case RMX_ERR_NOMEM:       return "out of memory";
    case RMX_ERR_PEER:        return "peer process failed or is unreachable";
    case RMX_ERR_TIMEOUT:     return "operation timed out";
    case RMX_ERR_BOOTSTRAP:   return "bootstrap (PMIx or out-of-band exchange) failed";
    case RMX_ERR_TRANSPORT:   return "UCX transport error";
    case RMX_ERR_UNSUPPORTED: return "operation not supported by this build";
    case RMX_ERR_THREAD:      return "called from a thread the context's thread level does not "
                                     "let in (not its owner, or a second collective at once)";
    case RMX_ERR_STOPPED:     return "a rank this synchronization needs has stopped (finalized)";
    case RMX_ERR_COLLECTIVE:  return "another rank failed its part of this collective call";
    default:                  return "unknown rmx error code";
    }
}
