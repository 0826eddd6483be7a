/*
 * caf_unsupported.c — the entry points of GCC 12's libcaf ABI that libcaf_rmx does not serve.
 * They exist so a program using them links, and then fails loudly at the call, naming it: a
 * nonzero STAT= when the program gave one, error termination otherwise.  Never a silent no-op.
 *
 * SENDGET_BY_REF and IS_PRESENT are what gfortran emits for coindexed references through
 * derived-type components that are allocatable or pointers (x[i]%comp(:)); get_by_ref and
 * send_by_ref serve the plain allocatable-coarray cases in caf_rma.c and refuse the others.
 */
#include "caf_internal.h"

void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, void *dst_refs,
                                  caf_token_t *src_token, int src_image_index, void *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type);
int _gfortran_caf_is_present(caf_token_t *token, int image_index, void *refs);

static const char by_ref[] = "coindexed references through allocatable or pointer components "
                             "of derived types";

void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, void *dst_refs,
                                  caf_token_t *src_token, int src_image_index, void *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type)
{
    (void)dst_token, (void)dst_image_index, (void)dst_refs, (void)src_token;
    (void)src_image_index, (void)src_refs, (void)dst_kind, (void)src_kind;
    (void)may_require_tmp, (void)dst_type, (void)src_type;
    if (src_stat != NULL)
        *src_stat = CAF_STAT_UNSUPPORTED;
    caf_unsupported("_gfortran_caf_sendget_by_ref", dst_stat, NULL, 0, by_ref);
}

int _gfortran_caf_is_present(caf_token_t *token, int image_index, void *refs)
{
    (void)token, (void)image_index, (void)refs;
    caf_unsupported("_gfortran_caf_is_present", NULL, NULL, 0, by_ref);
    return 0; /* not reached: without STAT= caf_unsupported terminates */
}
