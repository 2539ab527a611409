/* The finalizer of a ByteString that adopted a turnfit_string's buffer
 * without a copy (Turnfit.hs, takeOwnedString). GHC calls an environment
 * finalizer as f(env, ptr), with ptr the ForeignPtr's address (the data
 * pointer), while turnfit_string_free_parts takes (ptr, len); the length
 * rides in env as an integer, so no struct is allocated per string. A C
 * finalizer runs in the garbage collector, with no Haskell thread. */
#include <stddef.h>
#include <stdint.h>

void turnfit_string_free_parts(char *ptr, size_t len);

void turnfit_hs_free_string(void *len, void *ptr)
{
    turnfit_string_free_parts((char *)ptr, (size_t)(uintptr_t)len);
}
