/* Releases the Haskell function pointer an event callback was made from,
 * as a C finalizer of the handle it was set on (GHC runs it before the
 * handle's own _free). The Haskell 2010 report allows hs_free_fun_ptr in
 * foreign finalizers; a C finalizer cannot be a Haskell one (GHC refuses to
 * mix the two on one ForeignPtr). */
#include "HsFFI.h"

void turnfit_hs_free_event_callback(void *fun, void *handle)
{
    (void)handle;
    hs_free_fun_ptr((HsFunPtr)fun);
}

/* A host counter's free_user_data (Turnfit.hs, registryRegisterCounter):
 * user_data is the counter's own Haskell function pointer, released when
 * the library lets the counter go (an entry replaced, or the last of the
 * registry and the windows made for the model freed, possibly in a
 * finalizer). */
void turnfit_hs_free_counter(void *fun)
{
    hs_free_fun_ptr((HsFunPtr)fun);
}
