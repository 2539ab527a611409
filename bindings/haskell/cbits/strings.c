/* The finalizer of a ByteString that adopted a ctxkit_string's buffer
 * without a copy (Ctxkit.hs, takeOwnedString). GHC calls an environment
 * finalizer as f(env, ptr), with ptr the ForeignPtr's address (the data
 * pointer), while ctxkit_string_free_parts takes (ptr, len); the length
 * rides in env as an integer, so no struct is allocated per string. A C
 * finalizer runs in the garbage collector, with no Haskell thread. */
#include <stddef.h>
#include <stdint.h>

void ctxkit_string_free_parts(char *ptr, size_t len);

void ctxkit_hs_free_string(void *len, void *ptr)
{
    ctxkit_string_free_parts((char *)ptr, (size_t)(uintptr_t)len);
}
