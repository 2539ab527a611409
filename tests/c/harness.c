/*
 * C ABI test harness for libturnfit (include/turnfit.h).
 *
 * Calls every function the header declares, with real assertions on results,
 * then walks the contract: NULL for every pointer parameter, out-parameters
 * untouched on failure, invalid UTF-8 in every text parameter, lengths shorter
 * than the buffer and NULs inside the length, unknown flag
 * bits and enum values, ownership and double frees, version macros, and a
 * threads section sharing one tokenizer and one registry.
 *
 * Built with -std=c11 -Wall -Wextra -Wpedantic -Werror (see Makefile) and run
 * under ASan+UBSan (dynamic and static linking) and valgrind. The last line
 * printed is always "c-abi: N passed, M failed"; the exit status is non-zero
 * when M > 0. Each failure prints harness.c:LINE and what differed.
 *
 * Environment: TURNFIT_HARNESS_THREAD_ITERS overrides the iterations per
 * thread in the threads section (default 800; each iteration makes 3 calls,
 * plus a registry lookup every 8th and 3 more calls every 32nd, so about
 * 2,600 calls per thread; about 6 s of the ~18 s valgrind run).
 */
#define _POSIX_C_SOURCE 200809L

#include "turnfit.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Compile-time checks of the header's layout.                               */

_Static_assert(sizeof(turnfit_status) == 4, "turnfit_status is 32 bits");
_Static_assert(sizeof(turnfit_decode_mode) == 4, "turnfit_decode_mode is 32 bits");
_Static_assert(sizeof(turnfit_truncate_side) == 4, "turnfit_truncate_side is 32 bits");
_Static_assert(offsetof(turnfit_string, ptr) == 0, "turnfit_string.ptr first");
_Static_assert(offsetof(turnfit_string, len) == sizeof(void *), "turnfit_string.len second");
_Static_assert(sizeof(turnfit_string) == 2 * sizeof(void *), "turnfit_string is two words");
_Static_assert(offsetof(turnfit_tokens, ptr) == 0, "turnfit_tokens.ptr first");
_Static_assert(offsetof(turnfit_tokens, len) == sizeof(void *), "turnfit_tokens.len second");
_Static_assert(sizeof(turnfit_tokens) == 2 * sizeof(void *), "turnfit_tokens is two words");
_Static_assert(TURNFIT_STATUS_OK == 0 && TURNFIT_STATUS_NULL_ARGUMENT == 1 &&
                   TURNFIT_STATUS_INVALID_UTF8 == 2 && TURNFIT_STATUS_INVALID_ARGUMENT == 3 &&
                   TURNFIT_STATUS_INVALID_JSON == 4 && TURNFIT_STATUS_LIMIT_EXCEEDED == 5 &&
                   TURNFIT_STATUS_UNKNOWN_ENCODING == 6 && TURNFIT_STATUS_UNKNOWN_MODEL == 7 &&
                   TURNFIT_STATUS_UNKNOWN_TOKEN == 8 && TURNFIT_STATUS_PANIC == 9 &&
                   TURNFIT_STATUS_INTERNAL == 10 && TURNFIT_STATUS_DOES_NOT_FIT == 11 &&
                   TURNFIT_STATUS_IO == 12 && TURNFIT_STATUS_UNSAFE_PATH == 13 &&
                   TURNFIT_STATUS_CYCLE_DETECTED == 14 && TURNFIT_STATUS_DEPTH_EXCEEDED == 15,
               "status numbers are part of the ABI");
_Static_assert(TURNFIT_DECODE_MODE_REPLACE == 0 && TURNFIT_DECODE_MODE_STRICT == 1 && TURNFIT_DECODE_MODE_IGNORE == 2,
               "decode modes");
_Static_assert(TURNFIT_TRUNCATE_SIDE_HEAD == 0 && TURNFIT_TRUNCATE_SIDE_TAIL == 1 &&
                   TURNFIT_TRUNCATE_SIDE_BOTH == 2,
               "truncate sides");
_Static_assert(TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL == 1, "flag bit");

/* ------------------------------------------------------------------------ */
/* Check bookkeeping. Only the main thread calls these.                      */

static int g_passed;
static int g_failed;

static void fail_at(int line, const char *fmt, ...)
{
    va_list ap;
    g_failed++;
    fprintf(stdout, "FAIL harness.c:%d: ", line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

static bool check_true_at(int line, bool ok, const char *what)
{
    if (ok)
        g_passed++;
    else
        fail_at(line, "expected true: %s", what);
    return ok;
}

static const char *sname(uint32_t s)
{
    const char *n = turnfit_status_name(s);
    return n ? n : "(null)";
}

static bool check_status_at(int line, const char *what, turnfit_status got, turnfit_status want)
{
    if ((uint32_t)got == (uint32_t)want) {
        g_passed++;
        return true;
    }
    fail_at(line, "%s: status %s (%u), expected %s (%u)", what, sname((uint32_t)got), (unsigned)got,
            sname((uint32_t)want), (unsigned)want);
    return false;
}

static bool check_size_at(int line, const char *what, size_t got, size_t want)
{
    if (got == want) {
        g_passed++;
        return true;
    }
    fail_at(line, "%s: got %zu, expected %zu", what, got, want);
    return false;
}

static bool mem_contains(const void *hay, size_t hay_len, const char *needle)
{
    size_t n = strlen(needle);
    const unsigned char *h = hay;
    if (n == 0)
        return true;
    if (hay == NULL || hay_len < n)
        return false;
    for (size_t i = 0; i + n <= hay_len; i++)
        if (memcmp(h + i, needle, n) == 0)
            return true;
    return false;
}

static bool check_bytes_at(int line, const char *what, const void *got, size_t got_len, const void *want,
                           size_t want_len)
{
    if (got_len == want_len && (want_len == 0 || (got != NULL && memcmp(got, want, want_len) == 0))) {
        g_passed++;
        return true;
    }
    fail_at(line, "%s: got %zu bytes \"%.*s\", expected %zu bytes \"%.*s\"", what, got_len,
            (int)(got_len > 300 ? 300 : got_len), got ? (const char *)got : "", want_len,
            (int)(want_len > 300 ? 300 : want_len), (const char *)want);
    return false;
}

static bool check_contains_at(int line, const char *what, const void *hay, size_t hay_len, const char *needle)
{
    if (mem_contains(hay, hay_len, needle)) {
        g_passed++;
        return true;
    }
    fail_at(line, "%s: \"%.*s\" does not contain \"%s\"", what, (int)(hay_len > 400 ? 400 : hay_len),
            hay ? (const char *)hay : "", needle);
    return false;
}

static bool check_not_contains_at(int line, const char *what, const void *hay, size_t hay_len,
                                  const char *needle)
{
    if (!mem_contains(hay, hay_len, needle)) {
        g_passed++;
        return true;
    }
    fail_at(line, "%s: \"%.*s\" unexpectedly contains \"%s\"", what, (int)(hay_len > 400 ? 400 : hay_len),
            (const char *)hay, needle);
    return false;
}

#define CHECK(cond) check_true_at(__LINE__, (cond), #cond)
#define CHECK_STATUS(got, want) check_status_at(__LINE__, #got, (got), (want))
#define CHECK_SIZE(got, want) check_size_at(__LINE__, #got, (size_t)(got), (size_t)(want))
#define CHECK_BYTES(got, got_len, want, want_len) \
    check_bytes_at(__LINE__, #got, (got), (got_len), (want), (want_len))
#define CHECK_CONTAINS(hay, hay_len, needle) check_contains_at(__LINE__, #hay, (hay), (hay_len), (needle))
#define CHECK_NOT_CONTAINS(hay, hay_len, needle) \
    check_not_contains_at(__LINE__, #hay, (hay), (hay_len), (needle))
#define CHECK_STR_CONTAINS(s, needle) CHECK_CONTAINS((s).ptr, (s).len, (needle))

/* Text arguments: a literal (length from sizeof, so interior NULs count) or
 * a NUL-terminated string. */
#define LIT(s) (s), (sizeof(s) - 1)
#define STR(s) (s), strlen(s)

/* Sentinels for "out-parameters are not written on failure". */
static max_align_t g_sentinel_object;
#define SENT_PTR ((void *)&g_sentinel_object)
#define SENT_SIZE ((size_t)0x5E5E5E5Eu)
#define SENT_STRING {(char *)SENT_PTR, SENT_SIZE}
#define SENT_TOKENS {(uint32_t *)SENT_PTR, SENT_SIZE}
#define SENT_BOOL_BYTE 0x5A

static void check_string_untouched_at(int line, const char *what, turnfit_string s)
{
    if (s.ptr == (char *)SENT_PTR && s.len == SENT_SIZE)
        g_passed++;
    else
        fail_at(line, "%s: out-parameter written on failure ({%p, %zu})", what, (void *)s.ptr, s.len);
}

static void check_tokens_untouched_at(int line, const char *what, turnfit_tokens t)
{
    if (t.ptr == (uint32_t *)SENT_PTR && t.len == SENT_SIZE)
        g_passed++;
    else
        fail_at(line, "%s: out-parameter written on failure ({%p, %zu})", what, (void *)t.ptr, t.len);
}

static void check_ptr_untouched_at(int line, const char *what, const void *p)
{
    if (p == SENT_PTR)
        g_passed++;
    else
        fail_at(line, "%s: out-parameter written on failure (%p)", what, p);
}

static void check_bool_untouched_at(int line, const char *what, const bool *b)
{
    unsigned char bytes[sizeof(bool)];
    memcpy(bytes, b, sizeof bytes);
    bool same = true;
    for (size_t i = 0; i < sizeof bytes; i++)
        same = same && bytes[i] == SENT_BOOL_BYTE;
    if (same)
        g_passed++;
    else
        fail_at(line, "%s: bool out-parameter written on failure (0x%02x)", what, bytes[0]);
}

/*
 * Checks an error object: non-NULL, carrying `want`, with a NUL-terminated
 * message whose length matches out_len, that starts with "fn: " and contains
 * `needle` (when not NULL). Frees it and resets *errp.
 */
static void check_error_at(int line, turnfit_error **errp, turnfit_status want, const char *fn, const char *needle)
{
    turnfit_error *err = *errp;
    if (err == NULL) {
        fail_at(line, "%s: expected an error object for %s, got NULL", fn, sname((uint32_t)want));
        return;
    }
    g_passed++;
    check_status_at(line, "turnfit_error_code(err)", turnfit_error_code(err), want);
    size_t len = SENT_SIZE;
    const char *msg = turnfit_error_message(err, &len);
    if (msg == NULL) {
        fail_at(line, "%s: turnfit_error_message returned NULL", fn);
    } else {
        g_passed++;
        check_size_at(line, "strlen(message) == out_len", strlen(msg), len);
        /* The pointer is stable and out_len is optional. */
        check_true_at(line, turnfit_error_message(err, NULL) == msg, "message pointer stable, out_len optional");
        char prefix[128];
        snprintf(prefix, sizeof prefix, "%s: ", fn);
        if (strncmp(msg, prefix, strlen(prefix)) == 0)
            g_passed++;
        else
            fail_at(line, "message \"%s\" does not start with \"%s\"", msg, prefix);
        if (needle != NULL)
            check_contains_at(line, "error message", msg, len, needle);
    }
    turnfit_error_free(err);
    *errp = NULL;
}

#define CHECK_ERR(errp, want, fn, needle) check_error_at(__LINE__, (errp), (want), (fn), (needle))
#define CHECK_NO_ERR(err) check_true_at(__LINE__, (err) == NULL, "no error object on success")

/* ------------------------------------------------------------------------ */
/* Per-function "expect failure" helpers. Each runs the call twice, once with
 * an err out-pointer (the error object is checked) and once with err == NULL
 * (the status must be the same), and checks every provided out-parameter is
 * untouched. `null_*` selects NULL for that out-parameter. */

static void tokenizer_new_fails(int line, const char *enc, size_t len, uint32_t flags, bool null_out,
                                turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_tokenizer *out = SENT_PTR;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_new(enc, len, flags, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_new", st, want);
        check_ptr_untouched_at(line, "turnfit_tokenizer_new out_tokenizer", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_new", needle);
        if ((uint32_t)st == TURNFIT_STATUS_OK && out != SENT_PTR)
            turnfit_tokenizer_free(out);
    }
}
#define TOKENIZER_NEW_FAILS(...) tokenizer_new_fails(__LINE__, __VA_ARGS__)

static void new_for_model_fails(int line, const turnfit_registry *reg, const char *model, size_t model_len,
                                const char *fb, size_t fb_len, uint32_t flags, bool null_out,
                                turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_tokenizer *out = SENT_PTR;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_new_for_model(reg, model, model_len, fb, fb_len, flags,
                                                          null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_new_for_model", st, want);
        check_ptr_untouched_at(line, "turnfit_tokenizer_new_for_model out_tokenizer", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_new_for_model", needle);
        if ((uint32_t)st == TURNFIT_STATUS_OK && out != SENT_PTR)
            turnfit_tokenizer_free(out);
    }
}
#define NEW_FOR_MODEL_FAILS(...) new_for_model_fails(__LINE__, __VA_ARGS__)

static void info_fails(int line, const turnfit_tokenizer *t, bool null_out, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_string out = SENT_STRING;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_info(t, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_info", st, want);
        check_string_untouched_at(line, "turnfit_tokenizer_info out_json", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_info", needle);
    }
}
#define INFO_FAILS(...) info_fails(__LINE__, __VA_ARGS__)

static void count_fails(int line, const turnfit_tokenizer *t, const char *text, size_t len, bool null_out,
                        turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        size_t out = SENT_SIZE;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_count(t, text, len, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_count", st, want);
        check_size_at(line, "turnfit_tokenizer_count out_count untouched", out, SENT_SIZE);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_count", needle);
    }
}
#define COUNT_FAILS(...) count_fails(__LINE__, __VA_ARGS__)

static void count_limit_fails(int line, const turnfit_tokenizer *t, const char *text, size_t len, size_t limit,
                              bool null_count, bool null_exceeded, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        size_t count = SENT_SIZE;
        bool exceeded;
        memset(&exceeded, SENT_BOOL_BYTE, sizeof exceeded);
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_count_until_limit(t, text, len, limit, null_count ? NULL : &count,
                                                              null_exceeded ? NULL : &exceeded,
                                                              with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_count_until_limit", st, want);
        check_size_at(line, "turnfit_tokenizer_count_until_limit out_count untouched", count, SENT_SIZE);
        check_bool_untouched_at(line, "turnfit_tokenizer_count_until_limit out_exceeded", &exceeded);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_count_until_limit", needle);
    }
}
#define COUNT_LIMIT_FAILS(...) count_limit_fails(__LINE__, __VA_ARGS__)

static void encode_fails(int line, const turnfit_tokenizer *t, const char *text, size_t len, bool null_out,
                         turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_tokens out = SENT_TOKENS;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_encode(t, text, len, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_encode", st, want);
        check_tokens_untouched_at(line, "turnfit_tokenizer_encode out_tokens", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_encode", needle);
    }
}
#define ENCODE_FAILS(...) encode_fails(__LINE__, __VA_ARGS__)

static void decode_fails(int line, const turnfit_tokenizer *t, const uint32_t *ids, size_t n, uint32_t mode,
                         bool null_out, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_string out = SENT_STRING;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_decode(t, ids, n, mode, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_decode", st, want);
        check_string_untouched_at(line, "turnfit_tokenizer_decode out_text", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_decode", needle);
    }
}
#define DECODE_FAILS(...) decode_fails(__LINE__, __VA_ARGS__)

/* null_mask: 1 = out_text NULL, 2 = out_tokens NULL, 4 = out_removed NULL. */
static void truncate_fails(int line, const turnfit_tokenizer *t, const char *text, size_t len, size_t max,
                           uint32_t side, const char *marker, size_t marker_len, unsigned null_mask,
                           turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_string out = SENT_STRING;
        size_t toks = SENT_SIZE, removed = SENT_SIZE;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_tokenizer_truncate(t, text, len, max, side, marker, marker_len,
                                                     (null_mask & 1) ? NULL : &out, (null_mask & 2) ? NULL : &toks,
                                                     (null_mask & 4) ? NULL : &removed, with_err ? &err : NULL);
        check_status_at(line, "turnfit_tokenizer_truncate", st, want);
        check_string_untouched_at(line, "turnfit_tokenizer_truncate out_text", out);
        check_size_at(line, "turnfit_tokenizer_truncate out_tokens untouched", toks, SENT_SIZE);
        check_size_at(line, "turnfit_tokenizer_truncate out_removed untouched", removed, SENT_SIZE);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_tokenizer_truncate", needle);
    }
}
#define TRUNCATE_FAILS(...) truncate_fails(__LINE__, __VA_ARGS__)

static void registry_new_fails(int line, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_registry_new(NULL, with_err ? &err : NULL);
        check_status_at(line, "turnfit_registry_new", st, want);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_registry_new", needle);
    }
}

static void register_fails(int line, turnfit_registry *reg, const char *json, size_t len, bool null_out,
                           turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        size_t out = SENT_SIZE;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_registry_register(reg, json, len, null_out ? NULL : &out, with_err ? &err : NULL);
        check_status_at(line, "turnfit_registry_register", st, want);
        check_size_at(line, "turnfit_registry_register out_registered untouched", out, SENT_SIZE);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_registry_register", needle);
    }
}
#define REGISTER_FAILS(...) register_fails(__LINE__, __VA_ARGS__)

static void lookup_fails(int line, const turnfit_registry *reg, const char *model, size_t model_len,
                         const char *fb, size_t fb_len, bool null_out, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_string out = SENT_STRING;
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_registry_lookup(reg, model, model_len, fb, fb_len, null_out ? NULL : &out,
                                                  with_err ? &err : NULL);
        check_status_at(line, "turnfit_registry_lookup", st, want);
        check_string_untouched_at(line, "turnfit_registry_lookup out_json", out);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_registry_lookup", needle);
    }
}
#define LOOKUP_FAILS(...) lookup_fails(__LINE__, __VA_ARGS__)

static void list_fails(int line, const turnfit_registry *reg, turnfit_status want, const char *needle)
{
    for (int with_err = 1; with_err >= 0; with_err--) {
        turnfit_error *err = NULL;
        turnfit_status st = turnfit_registry_list(reg, NULL, with_err ? &err : NULL);
        check_status_at(line, "turnfit_registry_list", st, want);
        if (with_err)
            check_error_at(line, &err, want, "turnfit_registry_list", needle);
    }
}

/* ------------------------------------------------------------------------ */
/* Success helpers (check OK, no error object, well-formed outputs).         */

static void check_owned_string_at(int line, const char *what, turnfit_string s)
{
    if (s.ptr == NULL) {
        fail_at(line, "%s: returned string has a NULL ptr", what);
        return;
    }
    g_passed++;
    if (s.ptr[s.len] == 0)
        g_passed++;
    else
        fail_at(line, "%s: returned string is not NUL-terminated at len %zu", what, s.len);
}

static turnfit_tokenizer *tokenizer_new_ok(int line, const char *enc, uint32_t flags)
{
    turnfit_tokenizer *t = NULL;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_new(STR(enc), flags, &t, &err);
    if (!check_status_at(line, enc, st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        return NULL;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_true_at(line, t != NULL, "tokenizer handle is not NULL");
    return t;
}

static size_t count_ok(int line, const turnfit_tokenizer *t, const char *text, size_t len)
{
    size_t n = SENT_SIZE;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_count(t, text, len, &n, &err);
    if (!check_status_at(line, "turnfit_tokenizer_count", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        return SENT_SIZE;
    }
    check_true_at(line, err == NULL, "no error object on success");
    return n;
}
#define COUNT_OK(t, ...) count_ok(__LINE__, (t), __VA_ARGS__)

static turnfit_tokens encode_ok(int line, const turnfit_tokenizer *t, const char *text, size_t len)
{
    turnfit_tokens out = SENT_TOKENS;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_encode(t, text, len, &out, &err);
    if (!check_status_at(line, "turnfit_tokenizer_encode", st, TURNFIT_STATUS_OK)) {
        turnfit_error_free(err);
        turnfit_tokens empty = {NULL, 0};
        return empty;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_true_at(line, out.ptr != NULL, "tokens ptr is never NULL (ABI 2)");
    return out;
}
#define ENCODE_OK(t, ...) encode_ok(__LINE__, (t), __VA_ARGS__)

static turnfit_string decode_ok(int line, const turnfit_tokenizer *t, const uint32_t *ids, size_t n, uint32_t mode)
{
    turnfit_string out = SENT_STRING;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_decode(t, ids, n, mode, &out, &err);
    if (!check_status_at(line, "turnfit_tokenizer_decode", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        turnfit_string empty = {NULL, 0};
        return empty;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_owned_string_at(line, "turnfit_tokenizer_decode", out);
    return out;
}
#define DECODE_OK(t, ...) decode_ok(__LINE__, (t), __VA_ARGS__)

typedef struct {
    turnfit_string text;
    size_t tokens;
    size_t removed;
    bool ok;
} truncation;

static truncation truncate_ok(int line, const turnfit_tokenizer *t, const char *text, size_t len, size_t max,
                              uint32_t side, const char *marker, size_t marker_len)
{
    truncation r = {SENT_STRING, SENT_SIZE, SENT_SIZE, false};
    turnfit_error *err = NULL;
    turnfit_status st =
        turnfit_tokenizer_truncate(t, text, len, max, side, marker, marker_len, &r.text, &r.tokens, &r.removed, &err);
    if (!check_status_at(line, "turnfit_tokenizer_truncate", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        r.text.ptr = NULL;
        r.text.len = 0;
        return r;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_owned_string_at(line, "turnfit_tokenizer_truncate", r.text);
    r.ok = true;
    return r;
}
#define TRUNCATE_OK(t, ...) truncate_ok(__LINE__, (t), __VA_ARGS__)

static turnfit_string lookup_ok(int line, const turnfit_registry *reg, const char *model, size_t model_len,
                               const char *fb, size_t fb_len)
{
    turnfit_string out = SENT_STRING;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_registry_lookup(reg, model, model_len, fb, fb_len, &out, &err);
    if (!check_status_at(line, "turnfit_registry_lookup", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        turnfit_string empty = {NULL, 0};
        return empty;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_owned_string_at(line, "turnfit_registry_lookup", out);
    return out;
}
#define LOOKUP_OK(reg, ...) lookup_ok(__LINE__, (reg), __VA_ARGS__)

static turnfit_string list_ok(int line, const turnfit_registry *reg)
{
    turnfit_string out = SENT_STRING;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_registry_list(reg, &out, &err);
    if (!check_status_at(line, "turnfit_registry_list", st, TURNFIT_STATUS_OK)) {
        turnfit_error_free(err);
        turnfit_string empty = {NULL, 0};
        return empty;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_owned_string_at(line, "turnfit_registry_list", out);
    return out;
}

static size_t register_ok(int line, turnfit_registry *reg, const char *json, size_t len)
{
    size_t n = SENT_SIZE;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_registry_register(reg, json, len, &n, &err);
    if (!check_status_at(line, "turnfit_registry_register", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  message: %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        return SENT_SIZE;
    }
    check_true_at(line, err == NULL, "no error object on success");
    return n;
}
#define REGISTER_OK(reg, ...) register_ok(__LINE__, (reg), __VA_ARGS__)

static turnfit_string info_ok(int line, const turnfit_tokenizer *t)
{
    turnfit_string out = SENT_STRING;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_info(t, &out, &err);
    if (!check_status_at(line, "turnfit_tokenizer_info", st, TURNFIT_STATUS_OK)) {
        turnfit_error_free(err);
        turnfit_string empty = {NULL, 0};
        return empty;
    }
    check_true_at(line, err == NULL, "no error object on success");
    check_owned_string_at(line, "turnfit_tokenizer_info", out);
    return out;
}

/* ------------------------------------------------------------------------ */
/* Shared fixtures.                                                          */

static const char kMultilingual[] =
    "Hello, world! Grüße aus Köln. Привет, мир. 日本語のテキスト。 中文文本。 "
    "한국어 텍스트. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया. Ελληνικά. "
    "emoji: 🎉🚀 family: 👩\u200d👩\u200d👧\u200d👦 flag: 🇯🇵 combining: e\u0301 "
    "math: ∑∫√ tabs\tand\r\nnewlines\n  spaces   end";

static const char kLongText[] =
    "The quick brown fox jumps over the lazy dog. 日本語の文章も少し入れておきます。 "
    "Numbers 1234567890 and symbols <>[]{}!? keep the tokenizer busy. "
    "The quick brown fox jumps over the lazy dog. 日本語の文章も少し入れておきます。 "
    "Numbers 1234567890 and symbols <>[]{}!? keep the tokenizer busy. "
    "The quick brown fox jumps over the lazy dog. 日本語の文章も少し入れておきます。 "
    "Numbers 1234567890 and symbols <>[]{}!? keep the tokenizer busy. "
    "Emoji at the end: 🎉🎉🎉 done.";

/* p50k_base is left out on purpose: each encoding's first use parses its
 * vocabulary, which takes seconds under valgrind, and p50k_base shares its
 * byte-level BPE and code paths with r50k_base (harness.cpp covers it). */
static const char *const kEncodings[] = {"cl100k_base", "o200k_base", "r50k_base"};
#define N_ENCODINGS (sizeof kEncodings / sizeof kEncodings[0])

typedef struct {
    const char *bytes;
    size_t len;
    size_t offset; /* first invalid byte */
} bad_utf8;

#define BAD_UTF8(s, offset) {(s), sizeof(s) - 1, (offset)}
static const bad_utf8 kBadUtf8[] = {
    BAD_UTF8("ab\xff", 2),                 /* invalid byte */
    BAD_UTF8("\xc0\xaf", 0),               /* overlong '/' */
    BAD_UTF8("\xed\xa0\x80", 0),           /* UTF-8-encoded lone surrogate U+D800 */
    BAD_UTF8("\xe6\x97", 0),               /* truncated 3-byte sequence */
    BAD_UTF8("ok \xe6\x97\xa5\xe6", 6),    /* valid CJK then a truncated sequence */
    BAD_UTF8("\x80 continuation", 0),      /* stray continuation byte */
    BAD_UTF8("\xf4\x90\x80\x80", 0),       /* above U+10FFFF */
};
#define N_BAD_UTF8 (sizeof kBadUtf8 / sizeof kBadUtf8[0])

static const char kAcmeProfile[] = "{\"name\": \"acme-*\", \"encoding\": \"o200k_base\", \"context_window\": 32000, "
                                   "\"max_output_tokens\": 4096, \"exact\": false, \"family\": \"acme\"}";

/* ------------------------------------------------------------------------ */
/* Sections.                                                                 */

static void test_version(void)
{
    const char *v = turnfit_version();
    if (!CHECK(v != NULL))
        return;
    unsigned major = 999, minor = 999, patch = 999;
    char tail = 0;
    int n = sscanf(v, "%u.%u.%u%c", &major, &minor, &patch, &tail);
    CHECK(n == 3); /* exactly MAJOR.MINOR.PATCH, nothing after */
    CHECK_SIZE(major, TURNFIT_VERSION_MAJOR);
    CHECK_SIZE(minor, TURNFIT_VERSION_MINOR);
    CHECK_SIZE(patch, TURNFIT_VERSION_PATCH);
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", TURNFIT_VERSION_MAJOR, TURNFIT_VERSION_MINOR, TURNFIT_VERSION_PATCH);
    CHECK_BYTES(v, strlen(v), expect, strlen(expect));
    CHECK(turnfit_version() == v); /* static */
    CHECK_SIZE(turnfit_abi_version(), TURNFIT_ABI_VERSION);
}

static void test_status_names(void)
{
    static const char *const names[] = {
        "TURNFIT_STATUS_OK",           "TURNFIT_STATUS_NULL_ARGUMENT",    "TURNFIT_STATUS_INVALID_UTF8",
        "TURNFIT_STATUS_INVALID_ARGUMENT", "TURNFIT_STATUS_INVALID_JSON", "TURNFIT_STATUS_LIMIT_EXCEEDED",
        "TURNFIT_STATUS_UNKNOWN_ENCODING", "TURNFIT_STATUS_UNKNOWN_MODEL", "TURNFIT_STATUS_UNKNOWN_TOKEN",
        "TURNFIT_STATUS_PANIC",        "TURNFIT_STATUS_INTERNAL",         "TURNFIT_STATUS_DOES_NOT_FIT",
        "TURNFIT_STATUS_IO",           "TURNFIT_STATUS_UNSAFE_PATH",      "TURNFIT_STATUS_CYCLE_DETECTED",
        "TURNFIT_STATUS_DEPTH_EXCEEDED", "TURNFIT_STATUS_INVALID_YAML",
    };
    static const char *const kinds[] = {
        "ok", "null_argument", "invalid_utf8", "invalid_argument", "invalid_json", "limit_exceeded",
        "unknown_encoding", "unknown_model", "unknown_token", "panic", "internal", "does_not_fit",
        "io", "unsafe_path", "cycle_detected", "depth_exceeded", "invalid_yaml",
    };
    for (uint32_t s = 0; s <= 16; s++) {
        const char *k = turnfit_status_kind_name(s);
        if (CHECK(k != NULL))
            CHECK_BYTES(k, strlen(k), kinds[s], strlen(kinds[s]));
        CHECK(turnfit_status_kind_name(s) == k); /* static storage */
    }
    {
        const char *k = turnfit_status_kind_name(17);
        if (CHECK(k != NULL))
            CHECK_BYTES(k, strlen(k), "unrecognized", strlen("unrecognized"));
    }
    for (uint32_t s = 0; s <= 16; s++) {
        const char *n = turnfit_status_name(s);
        if (!CHECK(n != NULL))
            continue;
        CHECK_BYTES(n, strlen(n), names[s], strlen(names[s]));
        CHECK(turnfit_status_name(s) == n); /* static storage */
    }
    const uint32_t unknown[] = {17, 999, 0x7fffffffu, UINT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *n = turnfit_status_name(unknown[i]);
        if (CHECK(n != NULL))
            CHECK_BYTES(n, strlen(n), "TURNFIT_STATUS_UNRECOGNIZED", strlen("TURNFIT_STATUS_UNRECOGNIZED"));
    }
}

static void test_errors_and_frees(void)
{
    /* NULL error object. */
    CHECK_STATUS(turnfit_error_code(NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    size_t len = 77;
    CHECK(turnfit_error_message(NULL, &len) == NULL);
    CHECK_SIZE(len, 0);
    CHECK(turnfit_error_message(NULL, NULL) == NULL);

    /* Every _free accepts NULL; string/tokens free accept {NULL, 0}. */
    turnfit_error_free(NULL);
    turnfit_registry_free(NULL);
    turnfit_tokenizer_free(NULL);
    turnfit_string_free(NULL);
    turnfit_tokens_free(NULL);
    turnfit_string empty_s = {NULL, 0};
    turnfit_string_free(&empty_s);
    CHECK(empty_s.ptr == NULL && empty_s.len == 0);
    turnfit_tokens empty_t = {NULL, 0};
    turnfit_tokens_free(&empty_t);
    CHECK(empty_t.ptr == NULL && empty_t.len == 0);
    g_passed++; /* survived the NULL frees */

    /* A real error object: code and message, readable repeatedly. */
    turnfit_tokenizer *t = SENT_PTR;
    turnfit_error *err = NULL;
    CHECK_STATUS(turnfit_tokenizer_new(LIT("cl100k"), 0, &t, &err), TURNFIT_STATUS_UNKNOWN_ENCODING);
    check_ptr_untouched_at(__LINE__, "out_tokenizer", t);
    if (CHECK(err != NULL)) {
        CHECK_STATUS(turnfit_error_code(err), TURNFIT_STATUS_UNKNOWN_ENCODING);
        CHECK_STATUS(turnfit_error_code(err), TURNFIT_STATUS_UNKNOWN_ENCODING);
        size_t mlen = 0;
        const char *msg = turnfit_error_message(err, &mlen);
        if (CHECK(msg != NULL)) {
            CHECK_SIZE(strlen(msg), mlen);
            CHECK_CONTAINS(msg, mlen, "turnfit_tokenizer_new: ");
            CHECK_CONTAINS(msg, mlen, "cl100k");
            CHECK_CONTAINS(msg, mlen, "cl100k_base"); /* names the close match */
        }
        turnfit_error_free(err);
    }

    /* An error message built from input with a NUL byte stays a C string. */
    err = NULL;
    CHECK_STATUS(turnfit_tokenizer_new(LIT("cl\0x"), 0, &t, &err), TURNFIT_STATUS_UNKNOWN_ENCODING);
    if (CHECK(err != NULL)) {
        size_t mlen = 0;
        const char *msg = turnfit_error_message(err, &mlen);
        if (CHECK(msg != NULL))
            CHECK_SIZE(strlen(msg), mlen);
        turnfit_error_free(err);
    }

    /* turnfit_string_free_parts: a finalizer holding (ptr, len) frees it. */
    {
        turnfit_string adopted = list_ok(__LINE__, NULL);
        char *p = adopted.ptr;
        size_t n = adopted.len;
        turnfit_string_free_parts(p, n);
        turnfit_string_free_parts(NULL, 0);
    }
    /* turnfit_string_free twice on the same struct is harmless. */
    turnfit_string s = list_ok(__LINE__, NULL);
    turnfit_string_free(&s);
    CHECK(s.ptr == NULL && s.len == 0);
    turnfit_string_free(&s);
    CHECK(s.ptr == NULL && s.len == 0);

    /* Same for turnfit_tokens_free. */
    turnfit_tokenizer *tok = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    if (tok) {
        turnfit_tokens ids = ENCODE_OK(tok, LIT("hello world"));
        CHECK_SIZE(ids.len, 2);
        turnfit_tokens_free(&ids);
        CHECK(ids.ptr == NULL && ids.len == 0);
        turnfit_tokens_free(&ids);
        CHECK(ids.ptr == NULL && ids.len == 0);
    }
    turnfit_tokenizer_free(tok);
}

static void test_tokenizer_basics(void)
{
    /* "hello world" is 2 tokens in both current encodings; each encoding
     * round-trips multilingual text and emoji exactly. */
    for (size_t e = 0; e < N_ENCODINGS; e++) {
        turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, kEncodings[e], 0);
        if (!t)
            continue;
        CHECK_SIZE(COUNT_OK(t, LIT("hello world")), 2);

        turnfit_string info = info_ok(__LINE__, t);
        char want[64];
        snprintf(want, sizeof want, "\"encoding\":\"%s\"", kEncodings[e]);
        CHECK_STR_CONTAINS(info, want);
        CHECK_STR_CONTAINS(info, "\"special_tokens\":\"ordinary\"");
        CHECK_STR_CONTAINS(info, "\"model\":null");
        CHECK_STR_CONTAINS(info, "\"vocab_size\":");
        CHECK_STR_CONTAINS(info, "\"memory_bytes\":");
        turnfit_string_free(&info);

        turnfit_tokens ids = ENCODE_OK(t, LIT(kMultilingual));
        CHECK(ids.len > 0);
        CHECK_SIZE(COUNT_OK(t, LIT(kMultilingual)), ids.len);
        turnfit_string back = DECODE_OK(t, ids.ptr, ids.len, TURNFIT_DECODE_MODE_STRICT);
        CHECK_BYTES(back.ptr, back.len, kMultilingual, sizeof kMultilingual - 1);
        turnfit_string_free(&back);
        back = DECODE_OK(t, ids.ptr, ids.len, TURNFIT_DECODE_MODE_REPLACE);
        CHECK_BYTES(back.ptr, back.len, kMultilingual, sizeof kMultilingual - 1);
        turnfit_string_free(&back);
        turnfit_tokens_free(&ids);
        turnfit_tokenizer_free(t);
    }

    turnfit_tokenizer *cl = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    turnfit_tokenizer *o200 = tokenizer_new_ok(__LINE__, "o200k_base", 0);
    turnfit_tokenizer *sp = tokenizer_new_ok(__LINE__, "cl100k_base", TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL);
    turnfit_tokenizer *gpt2 = tokenizer_new_ok(__LINE__, "gpt2", 0); /* r50k_base's ranks, tiktoken's name */
    if (!cl || !o200 || !sp || !gpt2)
        goto out;

    /* Known ids: tiktoken cl100k_base "hello world" = [15339, 1917]. */
    turnfit_tokens hw = ENCODE_OK(cl, LIT("hello world"));
    if (CHECK_SIZE(hw.len, 2)) {
        CHECK_SIZE(hw.ptr[0], 15339);
        CHECK_SIZE(hw.ptr[1], 1917);
    }
    turnfit_tokens_free(&hw);
    CHECK_SIZE(COUNT_OK(o200, LIT("hello world")), 2);

    turnfit_string info = info_ok(__LINE__, gpt2);
    CHECK_STR_CONTAINS(info, "\"encoding\":\"gpt2\"");
    CHECK_STR_CONTAINS(info, "\"vocab_size\":50257");
    turnfit_string_free(&info);
    {
        turnfit_tokenizer *harmony = tokenizer_new_ok(__LINE__, "o200k_harmony", TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL);
        if (harmony) {
            turnfit_tokens ids = ENCODE_OK(harmony, LIT("<|start|>user<|message|>hi<|end|>"));
            if (CHECK_SIZE(ids.len, 5)) { /* <|start|> user <|message|> hi <|end|> */
                CHECK_SIZE(ids.ptr[0], 200006);
                CHECK_SIZE(ids.ptr[2], 200008);
                CHECK_SIZE(ids.ptr[4], 200007);
            }
            turnfit_tokens_free(&ids);
            turnfit_string hi = info_ok(__LINE__, harmony);
            CHECK_STR_CONTAINS(hi, "\"vocab_size\":201088");
            turnfit_string_free(&hi);
        }
        turnfit_tokenizer_free(harmony);
    }

    /* Special tokens: one id only when recognized. */
    CHECK_SIZE(COUNT_OK(sp, LIT("<|endoftext|>")), 1);
    CHECK(COUNT_OK(cl, LIT("<|endoftext|>")) > 1);
    turnfit_tokens eot = ENCODE_OK(sp, LIT("<|endoftext|>"));
    if (CHECK_SIZE(eot.len, 1)) {
        CHECK_SIZE(eot.ptr[0], 100257);
        /* Decoding a special id works with either tokenizer. */
        turnfit_string s = DECODE_OK(cl, eot.ptr, eot.len, TURNFIT_DECODE_MODE_STRICT);
        CHECK_BYTES(s.ptr, s.len, "<|endoftext|>", 13);
        turnfit_string_free(&s);
    }
    turnfit_tokens_free(&eot);
    info = info_ok(__LINE__, sp);
    CHECK_STR_CONTAINS(info, "\"special_tokens\":\"recognize\"");
    turnfit_string_free(&info);
    CHECK_SIZE(COUNT_OK(sp, LIT("a<|endoftext|>b")), 3);

    /* Zero-length input, with and without a pointer. */
    CHECK_SIZE(COUNT_OK(cl, LIT("")), 0);
    CHECK_SIZE(COUNT_OK(cl, NULL, 0), 0);
    CHECK_SIZE(COUNT_OK(cl, "not counted", 0), 0);
    turnfit_tokens none = ENCODE_OK(cl, LIT(""));
    CHECK(none.ptr != NULL && none.len == 0);
    turnfit_tokens_free(&none);
    CHECK(none.ptr == NULL && none.len == 0);
    none = ENCODE_OK(cl, NULL, 0);
    CHECK(none.ptr != NULL && none.len == 0);
    turnfit_tokens_free(&none);
    turnfit_string es = DECODE_OK(cl, NULL, 0, TURNFIT_DECODE_MODE_STRICT);
    CHECK_SIZE(es.len, 0);
    turnfit_string_free(&es);
    {
        const uint32_t dummy = 15339;
        es = DECODE_OK(cl, &dummy, 0, TURNFIT_DECODE_MODE_REPLACE);
        CHECK_SIZE(es.len, 0);
        turnfit_string_free(&es);
    }

    /* Interior NUL bytes are text. */
    CHECK(COUNT_OK(cl, LIT("a\0b")) >= 2);
    turnfit_tokens nul = ENCODE_OK(cl, LIT("a\0b"));
    CHECK(nul.len >= 2);
    turnfit_string nul_back = DECODE_OK(cl, nul.ptr, nul.len, TURNFIT_DECODE_MODE_STRICT);
    CHECK_BYTES(nul_back.ptr, nul_back.len, "a\0b", 3);
    turnfit_string_free(&nul_back);
    turnfit_tokens_free(&nul);
    CHECK_SIZE(COUNT_OK(cl, LIT("\0")), 1);

    /* A length shorter than the buffer counts only the prefix. */
    CHECK_SIZE(COUNT_OK(cl, "hello world", 5), COUNT_OK(cl, LIT("hello")));
    CHECK_SIZE(COUNT_OK(cl, "hello world", 5), 1);
    /* ... and a prefix that cuts a character is invalid UTF-8 at offset 0. */
    COUNT_FAILS(cl, "日本", 1, false, TURNFIT_STATUS_INVALID_UTF8, "byte offset 0");
    COUNT_FAILS(cl, "a日本", 3, false, TURNFIT_STATUS_INVALID_UTF8, "byte offset 1");

    /* Unknown ids. */
    {
        const uint32_t big[] = {10000000};
        DECODE_FAILS(cl, big, 1, TURNFIT_DECODE_MODE_REPLACE, false, TURNFIT_STATUS_UNKNOWN_TOKEN, "10000000");
        DECODE_FAILS(cl, big, 1, TURNFIT_DECODE_MODE_STRICT, false, TURNFIT_STATUS_UNKNOWN_TOKEN, "index 0");
        const uint32_t mixed[] = {15339, UINT32_MAX};
        DECODE_FAILS(cl, mixed, 2, TURNFIT_DECODE_MODE_REPLACE, false, TURNFIT_STATUS_UNKNOWN_TOKEN, "index 1");
        const uint32_t gap[] = {100261}; /* inside cl100k's id range, but unassigned */
        DECODE_FAILS(cl, gap, 1, TURNFIT_DECODE_MODE_REPLACE, false, TURNFIT_STATUS_UNKNOWN_TOKEN, "100261");
    }

    /* Decoding a prefix of the ids of "日本" that ends inside a character.
     * cl100k_base has one token per character and o200k_base one for both,
     * so no prefix of theirs cuts a character; the GPT-2 byte-level
     * encodings (r50k_base, p50k_base) split each character across tokens. */
    size_t encodings_with_cut = 0;
    for (size_t e = 0; e < N_ENCODINGS; e++) {
        static const char nihon[] = "日本";
        turnfit_tokenizer *et = tokenizer_new_ok(__LINE__, kEncodings[e], 0);
        if (!et)
            continue;
        turnfit_tokens ids = ENCODE_OK(et, LIT(nihon));
        CHECK(ids.len >= 1);
        size_t cut = 0;
        for (size_t k = 1; k < ids.len && cut == 0; k++) {
            turnfit_string s = DECODE_OK(et, ids.ptr, k, TURNFIT_DECODE_MODE_REPLACE);
            if (mem_contains(s.ptr, s.len, "\xef\xbf\xbd"))
                cut = k;
            turnfit_string_free(&s);
        }
        const bool byte_level = strcmp(kEncodings[e], "r50k_base") == 0;
        if (byte_level)
            CHECK(cut > 0);
        if (cut > 0) {
            encodings_with_cut++;
            turnfit_string s = DECODE_OK(et, ids.ptr, cut, TURNFIT_DECODE_MODE_REPLACE);
            CHECK_CONTAINS(s.ptr, s.len, "\xef\xbf\xbd"); /* U+FFFD */
            turnfit_string_free(&s);
            DECODE_FAILS(et, ids.ptr, cut, TURNFIT_DECODE_MODE_STRICT, false, TURNFIT_STATUS_INVALID_UTF8,
                         "byte offset");
            DECODE_FAILS(et, ids.ptr, cut, TURNFIT_DECODE_MODE_STRICT, false, TURNFIT_STATUS_INVALID_UTF8,
                         "token index");
            /* The ids after the cut start inside a character: replaced too. */
            s = DECODE_OK(et, ids.ptr + cut, ids.len - cut, TURNFIT_DECODE_MODE_REPLACE);
            CHECK_CONTAINS(s.ptr, s.len, "\xef\xbf\xbd");
            turnfit_string_free(&s);
            DECODE_FAILS(et, ids.ptr + cut, ids.len - cut, TURNFIT_DECODE_MODE_STRICT, false,
                         TURNFIT_STATUS_INVALID_UTF8, "byte offset 0");
        }
        /* The whole sequence is fine in strict mode. */
        turnfit_string whole = DECODE_OK(et, ids.ptr, ids.len, TURNFIT_DECODE_MODE_STRICT);
        CHECK_BYTES(whole.ptr, whole.len, nihon, sizeof nihon - 1);
        turnfit_string_free(&whole);
        turnfit_tokens_free(&ids);
        turnfit_tokenizer_free(et);
    }
    CHECK(encodings_with_cut >= 1);

    /* Out-of-range enum values and flag bits. */
    {
        const uint32_t ids[] = {15339};
        DECODE_FAILS(cl, ids, 1, 7, false, TURNFIT_STATUS_INVALID_ARGUMENT, "mode 7");
        DECODE_FAILS(cl, ids, 1, 3, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
        DECODE_FAILS(cl, ids, 1, UINT32_MAX, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    }
    TRUNCATE_FAILS(cl, LIT(kLongText), 10, 9, NULL, 0, 0, TURNFIT_STATUS_INVALID_ARGUMENT, "side 9");
    TRUNCATE_FAILS(cl, LIT(kLongText), 10, 3, NULL, 0, 0, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    TOKENIZER_NEW_FAILS(LIT("cl100k_base"), 2, false, TURNFIT_STATUS_INVALID_ARGUMENT, "flag");
    TOKENIZER_NEW_FAILS(LIT("cl100k_base"), 3, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    TOKENIZER_NEW_FAILS(LIT("cl100k_base"), 0x80000000u, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    NEW_FOR_MODEL_FAILS(NULL, LIT("gpt-4o"), NULL, 0, 2, false, TURNFIT_STATUS_INVALID_ARGUMENT, "flag");

    /* Unknown encoding names; the message names the close match. */
    TOKENIZER_NEW_FAILS(LIT("cl100k"), 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, "cl100k_base");
    TOKENIZER_NEW_FAILS(LIT("o200k"), 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, "o200k_base");
    TOKENIZER_NEW_FAILS(LIT("definitely-not-an-encoding"), 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, NULL);

    /* Text over the documented 64 MiB limit is LIMIT_EXCEEDED, rejected before
     * it is read (the buffer is left uninitialized on purpose: valgrind would
     * flag any read of it). */
    {
        const size_t big_len = (size_t)64 * 1024 * 1024 + 1;
        char *big = malloc(big_len);
        if (CHECK(big != NULL)) {
            COUNT_FAILS(cl, big, big_len, false, TURNFIT_STATUS_LIMIT_EXCEEDED, "limit");
            COUNT_LIMIT_FAILS(cl, big, big_len, 10, false, false, TURNFIT_STATUS_LIMIT_EXCEEDED, "limit");
            ENCODE_FAILS(cl, big, big_len, false, TURNFIT_STATUS_LIMIT_EXCEEDED, "limit");
            TRUNCATE_FAILS(cl, big, big_len, 10, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0, 0,
                           TURNFIT_STATUS_LIMIT_EXCEEDED, "limit");
        }
        free(big);
        /* A length no buffer can have is rejected without reading. */
        COUNT_FAILS(cl, "x", SIZE_MAX, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
        const uint32_t one = 15339;
        DECODE_FAILS(cl, &one, SIZE_MAX / 2, 0, false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    }

out:
    turnfit_tokenizer_free(cl);
    turnfit_tokenizer_free(o200);
    turnfit_tokenizer_free(sp);
    turnfit_tokenizer_free(gpt2);
}

static void test_count_until_limit(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    if (!t)
        return;
    const size_t n = COUNT_OK(t, LIT(kLongText));
    CHECK(n > 40);
    const size_t limits[] = {0, 1, 5, n / 2, n - 1, n, n + 1, n + 100, SIZE_MAX};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        size_t count = SENT_SIZE;
        bool exceeded = false;
        turnfit_error *err = NULL;
        if (!CHECK_STATUS(turnfit_tokenizer_count_until_limit(t, LIT(kLongText), limits[i], &count, &exceeded, &err),
                          TURNFIT_STATUS_OK)) {
            turnfit_error_free(err);
            continue;
        }
        CHECK_NO_ERR(err);
        if (limits[i] < n) {
            CHECK(exceeded);
            CHECK(count > limits[i]);
            CHECK(count <= n);
        } else {
            CHECK(!exceeded);
            CHECK_SIZE(count, n);
        }
    }
    /* Empty text never exceeds, even with limit 0; err may be NULL. */
    size_t count = SENT_SIZE;
    bool exceeded = true;
    CHECK_STATUS(turnfit_tokenizer_count_until_limit(t, NULL, 0, 0, &count, &exceeded, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(count, 0);
    CHECK(!exceeded);
    turnfit_tokenizer_free(t);
}

static void check_truncation_fits(int line, const turnfit_tokenizer *t, const truncation *r, size_t max)
{
    if (!r->ok)
        return;
    check_true_at(line, r->tokens <= max, "reported tokens <= max_tokens");
    size_t recount = count_ok(line, t, r->text.ptr, r->text.len);
    check_size_at(line, "re-count equals reported tokens", recount, r->tokens);
    check_true_at(line, recount <= max, "re-count <= max_tokens");
}

static void test_truncate(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    if (!t)
        return;
    const char *text = kLongText;
    const size_t text_len = sizeof kLongText - 1;
    const size_t n = COUNT_OK(t, LIT(kLongText));
    const size_t budgets[] = {0, 1, 3, 7, 10, 25, n - 1};

    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        const size_t max = budgets[b];
        /* HEAD keeps a prefix. */
        truncation h = TRUNCATE_OK(t, LIT(kLongText), max, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0);
        check_truncation_fits(__LINE__, t, &h, max);
        if (h.ok) {
            CHECK(h.text.len < text_len);
            CHECK(memcmp(h.text.ptr, text, h.text.len) == 0);
            CHECK(h.removed > 0 && h.removed <= n);
            CHECK(h.removed >= n - max);
        }
        turnfit_string_free(&h.text);

        /* TAIL keeps a suffix. */
        truncation tl = TRUNCATE_OK(t, LIT(kLongText), max, TURNFIT_TRUNCATE_SIDE_TAIL, NULL, 0);
        check_truncation_fits(__LINE__, t, &tl, max);
        if (tl.ok) {
            CHECK(tl.text.len < text_len);
            CHECK(memcmp(tl.text.ptr, text + text_len - tl.text.len, tl.text.len) == 0);
            CHECK(tl.removed >= n - max);
        }
        turnfit_string_free(&tl.text);
    }

    /* BOTH with a custom marker. */
    static const char marker[] = "<<{removed} cut>>";
    const size_t both_budgets[] = {12, 20, 30, n - 1};
    for (size_t b = 0; b < sizeof both_budgets / sizeof both_budgets[0]; b++) {
        const size_t max = both_budgets[b];
        truncation r = TRUNCATE_OK(t, LIT(kLongText), max, TURNFIT_TRUNCATE_SIDE_BOTH, LIT(marker));
        check_truncation_fits(__LINE__, t, &r, max);
        if (r.ok) {
            char rendered[64];
            snprintf(rendered, sizeof rendered, "<<%zu cut>>", r.removed);
            CHECK(r.removed > 0);
            CHECK_CONTAINS(r.text.ptr, r.text.len, rendered);
            CHECK_NOT_CONTAINS(r.text.ptr, r.text.len, "{removed}");
            /* The text before the marker is a prefix of the input and the text
             * after it a suffix. */
            const char *m = r.text.ptr;
            size_t at = 0;
            while (at + 2 <= r.text.len && memcmp(m + at, "<<", 2) != 0)
                at++;
            size_t after = at + strlen(rendered);
            if (CHECK(after <= r.text.len)) {
                CHECK(memcmp(r.text.ptr, text, at) == 0);
                size_t tail = r.text.len - after;
                CHECK(memcmp(r.text.ptr + after, text + text_len - tail, tail) == 0);
            }
        }
        turnfit_string_free(&r.text);
    }

    /* BOTH with the default marker: NULL/0 and ""/0 both select it. */
    truncation d = TRUNCATE_OK(t, LIT(kLongText), 30, TURNFIT_TRUNCATE_SIDE_BOTH, NULL, 0);
    check_truncation_fits(__LINE__, t, &d, 30);
    if (d.ok)
        CHECK_CONTAINS(d.text.ptr, d.text.len, "tokens truncated");
    turnfit_string_free(&d.text);
    d = TRUNCATE_OK(t, LIT(kLongText), 30, TURNFIT_TRUNCATE_SIDE_BOTH, LIT(""));
    if (d.ok)
        CHECK_CONTAINS(d.text.ptr, d.text.len, "tokens truncated");
    turnfit_string_free(&d.text);

    /* A budget too small for the marker is INVALID_ARGUMENT. */
    TRUNCATE_FAILS(t, LIT(kLongText), 1, TURNFIT_TRUNCATE_SIDE_BOTH, LIT(marker), 0, TURNFIT_STATUS_INVALID_ARGUMENT,
                   "marker");
    TRUNCATE_FAILS(t, LIT(kLongText), 0, TURNFIT_TRUNCATE_SIDE_BOTH, LIT(marker), 0, TURNFIT_STATUS_INVALID_ARGUMENT,
                   NULL);
    TRUNCATE_FAILS(t, LIT(kLongText), 3, TURNFIT_TRUNCATE_SIDE_BOTH, NULL, 0, 0, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);

    /* Text that fits is returned unchanged, for every side. */
    for (uint32_t side = 0; side <= 2; side++) {
        truncation f = TRUNCATE_OK(t, LIT(kLongText), n, side, LIT(marker));
        if (f.ok) {
            CHECK_BYTES(f.text.ptr, f.text.len, text, text_len);
            CHECK_SIZE(f.tokens, n);
            CHECK_SIZE(f.removed, 0);
        }
        turnfit_string_free(&f.text);
    }
    /* Empty text. */
    truncation e = TRUNCATE_OK(t, NULL, 0, 0, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0);
    if (e.ok) {
        CHECK_SIZE(e.text.len, 0);
        CHECK_SIZE(e.tokens, 0);
        CHECK_SIZE(e.removed, 0);
    }
    turnfit_string_free(&e.text);
    /* Multi-byte text never cut inside a character (the result is valid
     * UTF-8, so the strict count accepts it). */
    for (size_t max = 1; max < 12; max++) {
        truncation u = TRUNCATE_OK(t, LIT("日本語のテキスト🎉🎉🎉日本語"), max, TURNFIT_TRUNCATE_SIDE_TAIL, NULL, 0);
        check_truncation_fits(__LINE__, t, &u, max);
        turnfit_string_free(&u.text);
        u = TRUNCATE_OK(t, LIT("日本語のテキスト🎉🎉🎉日本語"), max, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0);
        check_truncation_fits(__LINE__, t, &u, max);
        turnfit_string_free(&u.text);
    }
    turnfit_tokenizer_free(t);
}

/* The byte-level and special-token functions (issue 19): expectations from
 * tiktoken 0.14.0 (tiktoken's own tests; tests/fixtures/tiktoken has more). */
static void test_token_bytes(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    if (!t)
        return;
    turnfit_error *err = NULL;

    /* turnfit_tokenizer_token_bytes: ordinary, special, unknown. */
    turnfit_string b = {NULL, 0};
    CHECK_STATUS(turnfit_tokenizer_token_bytes(t, 15339, &b, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "hello", 5);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_token_bytes(t, 100257, &b, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "<|endoftext|>", 13);
    turnfit_string_free(&b);
    /* 9468 is the first of the three tokens of U+1F44D: not UTF-8 alone. */
    CHECK_STATUS(turnfit_tokenizer_token_bytes(t, 9468, &b, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "\xf0\x9f", 2);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_token_bytes(t, 100256, &b, &err), TURNFIT_STATUS_UNKNOWN_TOKEN);
    check_error_at(__LINE__, &err, TURNFIT_STATUS_UNKNOWN_TOKEN, "turnfit_tokenizer_token_bytes", "100256");
    CHECK(b.ptr == NULL);
    CHECK_STATUS(turnfit_tokenizer_token_bytes(t, 1, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tokenizer_token_bytes(NULL, 1, &b, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* turnfit_tokenizer_decode_bytes: raw, concatenated. */
    const uint32_t thumbs[] = {9468, 239, 235};
    CHECK_STATUS(turnfit_tokenizer_decode_bytes(t, thumbs, 2, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "\xf0\x9f\x91", 3);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_decode_bytes(t, thumbs, 3, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "\xf0\x9f\x91\x8d", 4);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_decode_bytes(t, NULL, 0, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(b.len, 0);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_decode_bytes(t, NULL, 2, &b, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* decode with TURNFIT_DECODE_MODE_IGNORE drops the partial character. */
    const uint32_t a_thumb_b[] = {64, 9468, 65};
    CHECK_STATUS(turnfit_tokenizer_decode(t, a_thumb_b, 3, TURNFIT_DECODE_MODE_IGNORE, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, "ab", 2);
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_decode(t, a_thumb_b, 3, 3, &b, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);

    /* turnfit_tokenizer_token_id: any bytes; special text; no such token. */
    uint32_t id = 7;
    CHECK_STATUS(turnfit_tokenizer_token_id(t, (const uint8_t *)"\xf0\x9f", 2, &id, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(id, 9468);
    CHECK_STATUS(turnfit_tokenizer_token_id(t, (const uint8_t *)"<|fim_prefix|>", 14, &id, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(id, 100258);
    id = 7;
    CHECK_STATUS(turnfit_tokenizer_token_id(t, (const uint8_t *)"hello world", 11, &id, &err),
                 TURNFIT_STATUS_UNKNOWN_TOKEN);
    check_error_at(__LINE__, &err, TURNFIT_STATUS_UNKNOWN_TOKEN, "turnfit_tokenizer_token_id", "no single token");
    CHECK_SIZE(id, 7);
    CHECK_STATUS(turnfit_tokenizer_token_id(t, NULL, 0, &id, NULL), TURNFIT_STATUS_UNKNOWN_TOKEN);
    CHECK_STATUS(turnfit_tokenizer_token_id(t, NULL, 1, &id, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* turnfit_tokenizer_encode_bytes: tiktoken's test_encode_bytes. */
    turnfit_tokens ids = {NULL, 0};
    CHECK_STATUS(turnfit_tokenizer_encode_bytes(t, (const uint8_t *)" \xec\x8b\xa4\xed", 5, &ids, NULL),
                 TURNFIT_STATUS_OK);
    CHECK_SIZE(ids.len, 1);
    if (ids.len == 1)
        CHECK_SIZE(ids.ptr[0], 62085);
    turnfit_tokens_free(&ids);
    const uint8_t junk[] = {0x80, 0x80, 0xff, 'a', 0xc3};
    CHECK_STATUS(turnfit_tokenizer_encode_bytes(t, junk, sizeof junk, &ids, NULL), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tokenizer_decode_bytes(t, ids.ptr, ids.len, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_BYTES(b.ptr, b.len, junk, sizeof junk);
    turnfit_string_free(&b);
    turnfit_tokens_free(&ids);
    CHECK_STATUS(turnfit_tokenizer_encode_bytes(t, NULL, 0, &ids, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(ids.len, 0);
    turnfit_tokens_free(&ids);
    CHECK_STATUS(turnfit_tokenizer_encode_bytes(t, NULL, 3, &ids, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* turnfit_tokenizer_decode_with_offsets: tiktoken's test_basic_offsets. */
    ids = ENCODE_OK(t, LIT("我非常渴望与人工智能一起工作"));
    turnfit_tokens offs = {NULL, 0};
    CHECK_STATUS(turnfit_tokenizer_decode_with_offsets(t, ids.ptr, ids.len, &b, &offs, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(offs.len, ids.len);
    static const uint32_t want_offs[] = {0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13};
    CHECK_SIZE(offs.len, 17);
    if (offs.len == 17)
        CHECK_BYTES(offs.ptr, sizeof want_offs, want_offs, sizeof want_offs);
    CHECK_BYTES(b.ptr, b.len, "我非常渴望与人工智能一起工作", sizeof "我非常渴望与人工智能一起工作" - 1);
    turnfit_string_free(&b);
    turnfit_tokens_free(&offs);
    turnfit_tokens_free(&ids);
    CHECK_STATUS(turnfit_tokenizer_decode_with_offsets(t, a_thumb_b, 3, &b, &offs, &err), TURNFIT_STATUS_INVALID_UTF8);
    check_error_at(__LINE__, &err, TURNFIT_STATUS_INVALID_UTF8, "turnfit_tokenizer_decode_with_offsets", "token index 1");
    CHECK(b.ptr == NULL && offs.ptr == NULL);
    CHECK_STATUS(turnfit_tokenizer_decode_with_offsets(t, a_thumb_b, 3, &b, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* turnfit_tokenizer_encode_special: tiktoken's allowed / disallowed sets. */
#define SZ(x) (x), strlen(x)
    const char *text = "<|endoftext|> hello <|fim_prefix|>";
    CHECK_STATUS(turnfit_tokenizer_encode_special(t, SZ(text), NULL, 0, &ids, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    check_error_at(__LINE__, &err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tokenizer_encode_special",
                   "'<|endoftext|>' at byte offset 0");
    const char *fim_only = "{\"allowed_special\": [\"<|fim_prefix|>\"], \"disallowed_special\": []}";
    CHECK_STATUS(turnfit_tokenizer_encode_special(t, SZ(text), SZ(fim_only), &ids, NULL), TURNFIT_STATUS_OK);
    CHECK(ids.len > 2 && ids.ptr[ids.len - 1] == 100258 && ids.ptr[0] != 100257);
    turnfit_tokens_free(&ids);
    const char *all = "{\"allowed_special\": \"all\"}";
    CHECK_STATUS(turnfit_tokenizer_encode_special(t, SZ(text), SZ(all), &ids, NULL), TURNFIT_STATUS_OK);
    CHECK(ids.len > 2 && ids.ptr[0] == 100257 && ids.ptr[ids.len - 1] == 100258);
    turnfit_tokens_free(&ids);
    CHECK_STATUS(turnfit_tokenizer_encode_special(t, SZ(text), LIT("{\"allowed_special\": 1}"), &ids, &err),
                 TURNFIT_STATUS_INVALID_JSON);
    check_error_at(__LINE__, &err, TURNFIT_STATUS_INVALID_JSON, "turnfit_tokenizer_encode_special",
                   "expected \"all\" or an array of strings");
    CHECK_STATUS(turnfit_tokenizer_encode_special(t, "\xff", 1, NULL, 0, &ids, NULL),
                 TURNFIT_STATUS_INVALID_UTF8);
    CHECK(ids.ptr == NULL);

    /* turnfit_tokenizer_special_tokens. */
    CHECK_STATUS(turnfit_tokenizer_special_tokens(t, &b, NULL), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(b, "{\"token\":\"<|fim_middle|>\",\"id\":100259}");
    turnfit_string_free(&b);
    CHECK_STATUS(turnfit_tokenizer_special_tokens(t, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

#undef SZ
    turnfit_tokenizer_free(t);
}

static void test_registry(void)
{
    turnfit_registry *reg = SENT_PTR;
    turnfit_error *err = NULL;
    if (!CHECK_STATUS(turnfit_registry_new(&reg, &err), TURNFIT_STATUS_OK)) {
        turnfit_error_free(err);
        return;
    }
    CHECK_NO_ERR(err);
    CHECK(reg != NULL && reg != SENT_PTR);
    turnfit_registry *other = NULL;
    CHECK_STATUS(turnfit_registry_new(&other, NULL), TURNFIT_STATUS_OK);

    /* Built-in entries through a handle and through NULL. */
    turnfit_string l = list_ok(__LINE__, reg);
    CHECK(l.len > 2 && l.ptr[0] == '[' && l.ptr[l.len - 1] == ']');
    CHECK_STR_CONTAINS(l, "\"name\":\"gpt-4o*\"");
    CHECK_STR_CONTAINS(l, "\"source\":\"builtin\"");
    CHECK_NOT_CONTAINS(l.ptr, l.len, "acme");
    turnfit_string lb = list_ok(__LINE__, NULL);
    CHECK_BYTES(lb.ptr, lb.len, l.ptr, l.len);
    turnfit_string_free(&lb);
    turnfit_string_free(&l);

    turnfit_string j = LOOKUP_OK(NULL, LIT("gpt-4o"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"model\":\"gpt-4o\"");
    CHECK_STR_CONTAINS(j, "\"matched\":\"gpt-4o*\"");
    CHECK_STR_CONTAINS(j, "\"source\":\"builtin\"");
    CHECK_STR_CONTAINS(j, "\"encoding\":\"o200k_base\"");
    CHECK_STR_CONTAINS(j, "\"exact\":true");
    turnfit_string_free(&j);
    j = LOOKUP_OK(reg, LIT("gpt-4"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"encoding\":\"cl100k_base\"");
    turnfit_string_free(&j);
    j = LOOKUP_OK(reg, LIT("openai/gpt-4o-mini"), NULL, 0); /* routing prefix stripped */
    CHECK_STR_CONTAINS(j, "\"matched\":\"gpt-4o*\"");
    turnfit_string_free(&j);

    /* Register a host prefix model. */
    CHECK_SIZE(REGISTER_OK(reg, LIT(kAcmeProfile)), 1);
    j = LOOKUP_OK(reg, LIT("acme-large"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"model\":\"acme-large\"");
    CHECK_STR_CONTAINS(j, "\"matched\":\"acme-*\"");
    CHECK_STR_CONTAINS(j, "\"source\":\"host\"");
    CHECK_STR_CONTAINS(j, "\"family\":\"acme\"");
    CHECK_STR_CONTAINS(j, "\"encoding\":\"o200k_base\"");
    CHECK_STR_CONTAINS(j, "\"context_window\":32000");
    CHECK_STR_CONTAINS(j, "\"max_output_tokens\":4096");
    CHECK_STR_CONTAINS(j, "\"exact\":false");
    turnfit_string_free(&j);
    l = list_ok(__LINE__, reg);
    CHECK_STR_CONTAINS(l, "\"name\":\"acme-*\"");
    CHECK_STR_CONTAINS(l, "\"source\":\"host\"");
    turnfit_string_free(&l);

    /* Registration is local to the handle: not visible through NULL (the
     * built-in table) nor through another registry. */
    LOOKUP_FAILS(NULL, LIT("acme-large"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "acme-large");
    LOOKUP_FAILS(other, LIT("acme-large"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, NULL);

    /* An array of profiles, and replacing an entry. */
    CHECK_SIZE(REGISTER_OK(reg, LIT("[{\"name\":\"zeta-1\",\"encoding\":\"cl100k_base\",\"exact\":true},"
                                    "{\"name\":\"zeta-2\",\"encoding\":\"p50k_base\",\"context_window\":2048,"
                                    "\"exact\":false}]")),
               2);
    j = LOOKUP_OK(reg, LIT("zeta-2"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"encoding\":\"p50k_base\"");
    CHECK_STR_CONTAINS(j, "\"context_window\":2048");
    turnfit_string_free(&j);
    CHECK_SIZE(REGISTER_OK(reg, LIT("{\"name\":\"zeta-2\",\"encoding\":\"r50k_base\",\"exact\":true}")), 1);
    j = LOOKUP_OK(reg, LIT("zeta-2"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"encoding\":\"r50k_base\"");
    turnfit_string_free(&j);
    CHECK_SIZE(REGISTER_OK(reg, LIT("[]")), 0);

    /* Rejected registrations. */
    REGISTER_FAILS(reg, LIT("{"), false, TURNFIT_STATUS_INVALID_JSON, NULL);
    REGISTER_FAILS(reg, LIT("42"), false, TURNFIT_STATUS_INVALID_JSON, NULL);
    REGISTER_FAILS(reg, LIT("{\"name\":\"x\",\"encoding\":\"cl100k_base\",\"exact\":true,\"bogus\":1}"), false,
                   TURNFIT_STATUS_INVALID_JSON, "bogus");
    REGISTER_FAILS(reg, LIT("{\"name\":\"x\",\"encoding\":\"cl100k\",\"exact\":true}"), false,
                   TURNFIT_STATUS_INVALID_JSON, "cl100k");
    REGISTER_FAILS(reg, LIT("{\"name\":\"\",\"encoding\":\"cl100k_base\",\"exact\":true}"), false,
                   TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    REGISTER_FAILS(reg, LIT("{\"name\":\"z\",\"encoding\":\"cl100k_base\",\"context_window\":0,\"exact\":true}"),
                   false, TURNFIT_STATUS_INVALID_ARGUMENT, "context_window");
    /* All-or-nothing: a valid profile next to an invalid one is not kept. */
    REGISTER_FAILS(reg,
                   LIT("[{\"name\":\"keep-me-not\",\"encoding\":\"cl100k_base\",\"exact\":true},"
                       "{\"name\":\"\",\"encoding\":\"cl100k_base\",\"exact\":true}]"),
                   false, TURNFIT_STATUS_INVALID_ARGUMENT, NULL);
    LOOKUP_FAILS(reg, LIT("keep-me-not"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, NULL);
    /* JSON nested beyond the documented depth limit. */
    {
        char deep[2 * 600 + 1];
        memset(deep, '[', 600);
        memset(deep + 600, ']', 600);
        deep[1200] = 0;
        REGISTER_FAILS(reg, STR(deep), false, TURNFIT_STATUS_LIMIT_EXCEEDED, NULL);
    }
    /* The empty string is not JSON. */
    REGISTER_FAILS(reg, NULL, 0, false, TURNFIT_STATUS_INVALID_JSON, NULL);

    /* Tokenizer for the host model. */
    turnfit_tokenizer *acme = NULL;
    CHECK_STATUS(turnfit_tokenizer_new_for_model(reg, LIT("acme-large"), NULL, 0, 0, &acme, &err), TURNFIT_STATUS_OK);
    turnfit_error_free(err);
    err = NULL;
    if (CHECK(acme != NULL)) {
        turnfit_string info = info_ok(__LINE__, acme);
        CHECK_STR_CONTAINS(info, "\"encoding\":\"o200k_base\"");
        CHECK_STR_CONTAINS(info, "\"matched\":\"acme-*\"");
        CHECK_STR_CONTAINS(info, "\"source\":\"host\"");
        CHECK_STR_CONTAINS(info, "\"exact\":false");
        turnfit_string_free(&info);
        CHECK_SIZE(COUNT_OK(acme, LIT("hello world")), 2);
    }
    /* Built-in model through NULL and through a handle, with specials. */
    turnfit_tokenizer *g4 = NULL;
    CHECK_STATUS(turnfit_tokenizer_new_for_model(NULL, LIT("gpt-4"), NULL, 0, TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL, &g4,
                                                NULL),
                 TURNFIT_STATUS_OK);
    if (CHECK(g4 != NULL)) {
        CHECK_SIZE(COUNT_OK(g4, LIT("<|endoftext|>")), 1);
        turnfit_string info = info_ok(__LINE__, g4);
        CHECK_STR_CONTAINS(info, "\"encoding\":\"cl100k_base\"");
        CHECK_STR_CONTAINS(info, "\"special_tokens\":\"recognize\"");
        CHECK_STR_CONTAINS(info, "\"exact\":true");
        turnfit_string_free(&info);
    }
    turnfit_tokenizer_free(g4);

    /* Unknown model: the message suggests the close match. */
    NEW_FOR_MODEL_FAILS(NULL, LIT("gpt4o"), NULL, 0, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    NEW_FOR_MODEL_FAILS(reg, LIT("gpt4o"), NULL, 0, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    LOOKUP_FAILS(NULL, LIT("gpt4o"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    /* Prefixes apply on name boundaries only (issue 22): typos are unknown. */
    LOOKUP_FAILS(NULL, LIT("gpt-40"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "did you mean");
    LOOKUP_FAILS(NULL, LIT("gpt-4oo"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    LOOKUP_FAILS(NULL, LIT("o3x"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "o3");
    LOOKUP_FAILS(NULL, LIT("llama-9"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, NULL);
    LOOKUP_FAILS(NULL, LIT("gpt-4o\xff"), NULL, 0, false, TURNFIT_STATUS_INVALID_UTF8, "byte offset 6");
    {
        turnfit_string f = LOOKUP_OK(NULL, LIT("ft:gpt-4o-mini-2024-07-18:acme::abc123"), NULL, 0);
        CHECK_STR_CONTAINS(f, "\"matched\":\"gpt-4o*\"");
        turnfit_string_free(&f);
        f = LOOKUP_OK(NULL, LIT("claude-opus-5"), NULL, 0); /* a newer version: the family estimate */
        CHECK_STR_CONTAINS(f, "\"source\":\"family\"");
        CHECK_STR_CONTAINS(f, "\"exact\":false");
        turnfit_string_free(&f);
        f = LOOKUP_OK(NULL, LIT("gpt-oss-20b"), NULL, 0);
        CHECK_STR_CONTAINS(f, "\"encoding\":\"o200k_harmony\"");
        turnfit_string_free(&f);
    }
    LOOKUP_FAILS(NULL, LIT("gpt4o"), LIT(""), false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o"); /* "" = none */

    /* Unknown model with a fallback encoding. */
    turnfit_tokenizer *fb = NULL;
    CHECK_STATUS(turnfit_tokenizer_new_for_model(NULL, LIT("gpt4o"), LIT("cl100k_base"), 0, &fb, &err),
                 TURNFIT_STATUS_OK);
    turnfit_error_free(err);
    err = NULL;
    if (CHECK(fb != NULL)) {
        turnfit_string info = info_ok(__LINE__, fb);
        CHECK_STR_CONTAINS(info, "\"exact\":false");
        CHECK_STR_CONTAINS(info, "\"source\":\"fallback\"");
        CHECK_STR_CONTAINS(info, "\"encoding\":\"cl100k_base\"");
        turnfit_string_free(&info);
        CHECK_SIZE(COUNT_OK(fb, LIT("hello world")), 2);
    }
    turnfit_tokenizer_free(fb);
    j = LOOKUP_OK(reg, LIT("gpt4o"), LIT("cl100k_base"));
    CHECK_STR_CONTAINS(j, "\"source\":\"fallback\"");
    CHECK_STR_CONTAINS(j, "\"matched\":null");
    CHECK_STR_CONTAINS(j, "\"exact\":false");
    turnfit_string_free(&j);
    /* A known model ignores a valid fallback. */
    j = LOOKUP_OK(reg, LIT("gpt-4o"), LIT("cl100k_base"));
    CHECK_STR_CONTAINS(j, "\"source\":\"builtin\"");
    CHECK_STR_CONTAINS(j, "\"encoding\":\"o200k_base\"");
    turnfit_string_free(&j);

    /* Bad fallback encoding names. */
    NEW_FOR_MODEL_FAILS(NULL, LIT("gpt4o"), LIT("cl100k"), 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, "cl100k_base");
    LOOKUP_FAILS(NULL, LIT("gpt4o"), LIT("cl100k"), false, TURNFIT_STATUS_UNKNOWN_ENCODING, "cl100k_base");

    /* Tokenizers made from a registry outlive it. */
    turnfit_registry_free(reg);
    turnfit_registry_free(other);
    if (acme) {
        CHECK_SIZE(COUNT_OK(acme, LIT("hello world")), 2);
        turnfit_string info = info_ok(__LINE__, acme);
        CHECK_STR_CONTAINS(info, "\"matched\":\"acme-*\"");
        turnfit_string_free(&info);
    }
    turnfit_tokenizer_free(acme);
}

/* NULL for every pointer parameter of every function, one at a time. */
static void test_null_arguments(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    turnfit_registry *reg = NULL;
    CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK);
    if (!t || !reg)
        goto out;
    const uint32_t ids[] = {15339, 1917};

    /* turnfit_error_code / turnfit_error_message / frees: see test_errors_and_frees. */

    /* turnfit_registry_new: out_registry; err NULL is fine on success. */
    registry_new_fails(__LINE__, TURNFIT_STATUS_NULL_ARGUMENT, "out_registry");

    /* turnfit_registry_register: registry is required (no built-in default). */
    REGISTER_FAILS(NULL, LIT(kAcmeProfile), false, TURNFIT_STATUS_NULL_ARGUMENT, "registry");
    REGISTER_FAILS(reg, NULL, 5, false, TURNFIT_STATUS_NULL_ARGUMENT, "json");
    REGISTER_FAILS(reg, LIT(kAcmeProfile), true, TURNFIT_STATUS_NULL_ARGUMENT, "out_registered");
    {
        size_t n = SENT_SIZE;
        CHECK_STATUS(turnfit_registry_register(reg, LIT(kAcmeProfile), &n, NULL), TURNFIT_STATUS_OK);
        CHECK_SIZE(n, 1);
    }

    /* A model registered on `reg` works in handoff and skills options through
     * the _in variants; the built-in table (old functions, NULL) does not know it. */
    {
        static const char handoff[] =
            "{\"version\":\"1.0\",\"task_summary\":\"Fix it.\",\"key_outputs\":[],"
            "\"metadata\":{\"from_agent\":\"planner\",\"to_agent\":\"coder\",\"created_at\":\"2026-03-01T12:00:00Z\"}}";
        static const char acme[] = "{\"model\": \"acme-large\"}";
        turnfit_string out = SENT_STRING;
        turnfit_error *e = NULL;
        CHECK_STATUS(turnfit_handoff_render(LIT(handoff), LIT(acme), &out, &e), TURNFIT_STATUS_UNKNOWN_MODEL);
        CHECK_ERR(&e, TURNFIT_STATUS_UNKNOWN_MODEL, "turnfit_handoff_render", "acme-large");
        CHECK_STATUS(turnfit_handoff_render_in(NULL, LIT(handoff), LIT(acme), &out, &e), TURNFIT_STATUS_UNKNOWN_MODEL);
        CHECK_ERR(&e, TURNFIT_STATUS_UNKNOWN_MODEL, "turnfit_handoff_render_in", "acme-large");
        CHECK(out.ptr == SENT_PTR);
        CHECK_STATUS(turnfit_handoff_render_in(reg, LIT(handoff), LIT(acme), NULL, &e), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_handoff_render_in", "out_json");
        CHECK_STATUS(turnfit_handoff_render_in(reg, LIT(handoff), LIT(acme), &out, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(out, "\"tokens\":");
        turnfit_string_free(&out);

        turnfit_skills *sk = NULL;
        CHECK_STATUS(turnfit_skills_open(LIT("../../examples/data/skills"), LIT(acme), &sk, &e),
                     TURNFIT_STATUS_UNKNOWN_MODEL);
        CHECK_ERR(&e, TURNFIT_STATUS_UNKNOWN_MODEL, "turnfit_skills_open", "acme-large");
        CHECK(sk == NULL);
        CHECK_STATUS(turnfit_skills_open_in(reg, LIT("../../examples/data/skills"), LIT(acme), NULL, &e),
                     TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_skills_open_in", "out_skills");
        CHECK_STATUS(turnfit_skills_open_in(reg, LIT("../../examples/data/skills"), LIT(acme), &sk, NULL),
                     TURNFIT_STATUS_OK);
        CHECK(sk != NULL);
        turnfit_skills_free(sk);
    }

    /* turnfit_registry_lookup: registry NULL = built-in; model; fallback; out. */
    {
        turnfit_string j = LOOKUP_OK(NULL, LIT("gpt-4o"), NULL, 0);
        CHECK_STR_CONTAINS(j, "\"source\":\"builtin\"");
        turnfit_string_free(&j);
    }
    LOOKUP_FAILS(reg, NULL, 3, NULL, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "model");
    LOOKUP_FAILS(reg, NULL, 0, NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, NULL); /* "" is unknown */
    LOOKUP_FAILS(reg, LIT("gpt-4o"), NULL, 4, false, TURNFIT_STATUS_NULL_ARGUMENT, "fallback_encoding");
    LOOKUP_FAILS(reg, LIT("gpt-4o"), NULL, 0, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_json");
    {
        /* model "" with a fallback: the fallback answers. */
        turnfit_string j = LOOKUP_OK(reg, NULL, 0, LIT("o200k_base"));
        CHECK_STR_CONTAINS(j, "\"source\":\"fallback\"");
        turnfit_string_free(&j);
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_registry_lookup(reg, LIT("gpt-4o"), NULL, 0, &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
    }

    /* turnfit_registry_list: registry NULL = built-in; out_json required. */
    list_fails(__LINE__, reg, TURNFIT_STATUS_NULL_ARGUMENT, "out_json");
    list_fails(__LINE__, NULL, TURNFIT_STATUS_NULL_ARGUMENT, "out_json");
    {
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_registry_list(NULL, &out, NULL), TURNFIT_STATUS_OK);
        check_owned_string_at(__LINE__, "turnfit_registry_list(NULL)", out);
        turnfit_string_free(&out);
    }

    /* turnfit_tokenizer_new. */
    TOKENIZER_NEW_FAILS(NULL, 11, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "encoding");
    TOKENIZER_NEW_FAILS(NULL, 0, 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, NULL); /* "" */
    TOKENIZER_NEW_FAILS(LIT("cl100k_base"), 0, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_tokenizer");
    {
        turnfit_tokenizer *x = NULL;
        CHECK_STATUS(turnfit_tokenizer_new(LIT("r50k_base"), 0, &x, NULL), TURNFIT_STATUS_OK);
        CHECK(x != NULL);
        turnfit_tokenizer_free(x);
    }

    /* turnfit_tokenizer_new_for_model: registry NULL = built-in. */
    NEW_FOR_MODEL_FAILS(reg, NULL, 6, NULL, 0, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "model");
    NEW_FOR_MODEL_FAILS(reg, NULL, 0, NULL, 0, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, NULL);
    NEW_FOR_MODEL_FAILS(reg, LIT("gpt-4o"), NULL, 3, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "fallback_encoding");
    NEW_FOR_MODEL_FAILS(reg, LIT("gpt-4o"), NULL, 0, 0, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_tokenizer");
    NEW_FOR_MODEL_FAILS(NULL, LIT("gpt-4o"), NULL, 0, 0, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_tokenizer");
    {
        turnfit_tokenizer *x = NULL;
        CHECK_STATUS(turnfit_tokenizer_new_for_model(NULL, LIT("gpt-4o"), NULL, 0, 0, &x, NULL), TURNFIT_STATUS_OK);
        if (CHECK(x != NULL))
            CHECK_SIZE(COUNT_OK(x, LIT("hello world")), 2);
        turnfit_tokenizer_free(x);
        x = NULL;
        CHECK_STATUS(turnfit_tokenizer_new_for_model(reg, NULL, 0, LIT("r50k_base"), 0, &x, NULL), TURNFIT_STATUS_OK);
        turnfit_tokenizer_free(x);
    }

    /* turnfit_tokenizer_info. */
    INFO_FAILS(NULL, false, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    INFO_FAILS(t, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_json");
    {
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_tokenizer_info(t, &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
    }

    /* turnfit_tokenizer_count. */
    COUNT_FAILS(NULL, LIT("hello"), false, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    COUNT_FAILS(t, NULL, 5, false, TURNFIT_STATUS_NULL_ARGUMENT, "text");
    COUNT_FAILS(t, LIT("hello"), true, TURNFIT_STATUS_NULL_ARGUMENT, "out_count");
    COUNT_FAILS(NULL, NULL, 5, true, TURNFIT_STATUS_NULL_ARGUMENT, NULL);
    {
        size_t n = SENT_SIZE;
        CHECK_STATUS(turnfit_tokenizer_count(t, LIT("hello world"), &n, NULL), TURNFIT_STATUS_OK);
        CHECK_SIZE(n, 2);
        n = SENT_SIZE;
        CHECK_STATUS(turnfit_tokenizer_count(t, NULL, 0, &n, NULL), TURNFIT_STATUS_OK);
        CHECK_SIZE(n, 0);
    }

    /* turnfit_tokenizer_count_until_limit. */
    COUNT_LIMIT_FAILS(NULL, LIT("hello"), 10, false, false, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    COUNT_LIMIT_FAILS(t, NULL, 5, 10, false, false, TURNFIT_STATUS_NULL_ARGUMENT, "text");
    COUNT_LIMIT_FAILS(t, LIT("hello"), 10, true, false, TURNFIT_STATUS_NULL_ARGUMENT, "out_count");
    COUNT_LIMIT_FAILS(t, LIT("hello"), 10, false, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_exceeded");

    /* turnfit_tokenizer_encode. */
    ENCODE_FAILS(NULL, LIT("hello"), false, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    ENCODE_FAILS(t, NULL, 5, false, TURNFIT_STATUS_NULL_ARGUMENT, "text");
    ENCODE_FAILS(t, LIT("hello"), true, TURNFIT_STATUS_NULL_ARGUMENT, "out_tokens");
    {
        turnfit_tokens out = SENT_TOKENS;
        CHECK_STATUS(turnfit_tokenizer_encode(t, NULL, 0, &out, NULL), TURNFIT_STATUS_OK);
        CHECK(out.ptr != NULL && out.len == 0); /* never NULL since ABI 2 */
        turnfit_tokens_free(&out);
    }

    /* turnfit_tokenizer_decode. */
    DECODE_FAILS(NULL, ids, 2, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    DECODE_FAILS(t, NULL, 2, 0, false, TURNFIT_STATUS_NULL_ARGUMENT, "ids");
    DECODE_FAILS(t, ids, 2, 0, true, TURNFIT_STATUS_NULL_ARGUMENT, "out_text");
    {
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_tokenizer_decode(t, ids, 2, TURNFIT_DECODE_MODE_STRICT, &out, NULL), TURNFIT_STATUS_OK);
        CHECK_BYTES(out.ptr, out.len, "hello world", 11);
        turnfit_string_free(&out);
    }
    /* A misaligned ids pointer is rejected rather than read. */
    {
        uint32_t storage[3] = {15339, 1917, 0};
        const uint32_t *misaligned = (const uint32_t *)(const void *)((const unsigned char *)storage + 1);
        DECODE_FAILS(t, misaligned, 2, 0, false, TURNFIT_STATUS_INVALID_ARGUMENT, "aligned");
    }

    /* turnfit_tokenizer_truncate. */
    TRUNCATE_FAILS(NULL, LIT(kLongText), 5, 0, NULL, 0, 0, TURNFIT_STATUS_NULL_ARGUMENT, "tokenizer");
    TRUNCATE_FAILS(t, NULL, 9, 5, 0, NULL, 0, 0, TURNFIT_STATUS_NULL_ARGUMENT, "text");
    TRUNCATE_FAILS(t, LIT(kLongText), 20, TURNFIT_TRUNCATE_SIDE_BOTH, NULL, 4, 0, TURNFIT_STATUS_NULL_ARGUMENT,
                   "marker");
    TRUNCATE_FAILS(t, LIT(kLongText), 5, 0, NULL, 0, 1, TURNFIT_STATUS_NULL_ARGUMENT, "out_text");
    /* Since ABI 2 the counts are optional; NO_MARKER with a marker is refused. */
    {
        turnfit_string cut = {NULL, 0};
        CHECK_STATUS(turnfit_tokenizer_truncate(t, LIT(kLongText), 5, TURNFIT_TRUNCATE_SIDE_BOTH | TURNFIT_TRUNCATE_NO_MARKER,
                                               NULL, 0, &cut, NULL, NULL, NULL),
                     TURNFIT_STATUS_OK);
        size_t n = SENT_SIZE;
        CHECK_STATUS(turnfit_tokenizer_count(t, cut.ptr, cut.len, &n, NULL), TURNFIT_STATUS_OK);
        CHECK(n <= 5 && strstr((const char *)cut.ptr, "truncated") == NULL);
        turnfit_string_free(&cut);
    }
    TRUNCATE_FAILS(t, LIT(kLongText), 5, TURNFIT_TRUNCATE_SIDE_BOTH | TURNFIT_TRUNCATE_NO_MARKER, LIT("[cut]"), 0,
                   TURNFIT_STATUS_INVALID_ARGUMENT, "NO_MARKER");
    TRUNCATE_FAILS(t, LIT(kLongText), 5, 0, NULL, 0, 7, TURNFIT_STATUS_NULL_ARGUMENT, NULL);
    {
        turnfit_string out = SENT_STRING;
        size_t toks = SENT_SIZE, removed = SENT_SIZE;
        CHECK_STATUS(turnfit_tokenizer_truncate(t, LIT(kLongText), 5, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0, &out, &toks,
                                               &removed, NULL),
                     TURNFIT_STATUS_OK);
        CHECK(toks <= 5);
        turnfit_string_free(&out);
    }

out:
    turnfit_tokenizer_free(t);
    turnfit_registry_free(reg);
}

/* Invalid UTF-8 in every text parameter. */
static void test_invalid_utf8(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    turnfit_registry *reg = NULL;
    CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK);
    if (!t || !reg)
        goto out;
    for (size_t i = 0; i < N_BAD_UTF8; i++) {
        const char *b = kBadUtf8[i].bytes;
        const size_t n = kBadUtf8[i].len;
        char needle[64];
        snprintf(needle, sizeof needle, "byte offset %zu", kBadUtf8[i].offset);
        const turnfit_status E = TURNFIT_STATUS_INVALID_UTF8;

        TOKENIZER_NEW_FAILS(b, n, 0, false, E, needle);
        NEW_FOR_MODEL_FAILS(reg, b, n, NULL, 0, 0, false, E, needle);
        NEW_FOR_MODEL_FAILS(reg, LIT("gpt-4o"), b, n, 0, false, E, needle);
        NEW_FOR_MODEL_FAILS(NULL, LIT("gpt4o"), b, n, 0, false, E, needle);
        REGISTER_FAILS(reg, b, n, false, E, needle);
        LOOKUP_FAILS(reg, b, n, NULL, 0, false, E, needle);
        LOOKUP_FAILS(NULL, b, n, LIT("cl100k_base"), false, E, needle);
        LOOKUP_FAILS(reg, LIT("gpt-4o"), b, n, false, E, needle);
        COUNT_FAILS(t, b, n, false, E, needle);
        COUNT_LIMIT_FAILS(t, b, n, 100, false, false, E, needle);
        COUNT_LIMIT_FAILS(t, b, n, 0, false, false, E, needle);
        ENCODE_FAILS(t, b, n, false, E, needle);
        for (uint32_t side = 0; side <= 2; side++) {
            TRUNCATE_FAILS(t, b, n, 100, side, NULL, 0, 0, E, needle);
            /* The marker is checked on every side, and even when the text fits. */
            TRUNCATE_FAILS(t, LIT(kLongText), 30, side, b, n, 0, E, needle);
            TRUNCATE_FAILS(t, LIT("short"), 30, side, b, n, 0, E, needle);
        }
    }
    /* Invalid UTF-8 inside a JSON string value, at a known offset. */
    REGISTER_FAILS(reg, LIT("{\"name\":\"x\xff\",\"encoding\":\"cl100k_base\",\"exact\":true}"), false,
                   TURNFIT_STATUS_INVALID_UTF8, "byte offset 10");
out:
    turnfit_tokenizer_free(t);
    turnfit_registry_free(reg);
}

/* ------------------------------------------------------------------------ */
/* Lengths and NULs. A (ptr, len) argument is exactly len bytes: a len
 * shorter than the buffer reads only the prefix, and a NUL inside len is a
 * byte like any other (text keeps it, names compare it, JSON refuses it
 * outside strings and raw inside them). An error message quoting such input
 * stays one C string (the NUL becomes U+FFFD; check_error_at compares
 * strlen with out_len). */

/* Whether `needle` (n bytes, NULs allowed) occurs in `hay`. */
static bool mem_has(const void *hay, size_t hay_len, const void *needle, size_t n)
{
    if (hay == NULL || n > hay_len)
        return false;
    for (size_t i = 0; i + n <= hay_len; i++)
        if (memcmp((const char *)hay + i, needle, n) == 0)
            return true;
    return false;
}
#define CHECK_HAS(s, lit) check_true_at(__LINE__, mem_has((s).ptr, (s).len, (lit), sizeof(lit) - 1), "output holds " #lit)
#define CHECK_LACKS(s, lit) \
    check_true_at(__LINE__, !mem_has((s).ptr, (s).len, (lit), sizeof(lit) - 1), "output lacks " #lit)

/* Handles the JSON wrappers below use. */
static turnfit_registry *g_len_reg;
static turnfit_tokenizer *g_len_tok;
static turnfit_window *g_len_win;
static turnfit_skills *g_len_skills;
static turnfit_tracer *g_len_tracer;

static const char kLenConv[] =
    "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hi\"}]}";
static const char kLenHandoff[] =
    "{\"version\":\"1.0\",\"task_summary\":\"Fix it.\",\"key_outputs\":[],"
    "\"metadata\":{\"from_agent\":\"planner\",\"to_agent\":\"coder\",\"created_at\":\"2026-03-01T12:00:00Z\"}}";
static const char kLenTools[] =
    "{\"model\":\"gpt-4o\",\"tools\":[{\"name\":\"run_tests\",\"description\":\"Run the tests\","
    "\"input_schema\":{\"type\":\"object\"}}],\"allowlists\":{\"coder\":[\"*\"]}}";

/* One wrapper per JSON parameter: the call with everything else valid, its
 * outputs freed. */
typedef turnfit_status (*json_call)(const char *json, size_t len, turnfit_error **err);

static turnfit_status j_register(const char *j, size_t n, turnfit_error **e)
{
    size_t r = 0;
    return turnfit_registry_register(g_len_reg, j, n, &r, e);
}
static turnfit_status j_callstack(const char *j, size_t n, turnfit_error **e)
{
    turnfit_callstack *s = NULL;
    turnfit_status st = turnfit_callstack_from_json(j, n, &s, e);
    turnfit_callstack_free(s);
    return st;
}
static turnfit_status j_window_new(const char *j, size_t n, turnfit_error **e)
{
    turnfit_window *w = NULL;
    turnfit_status st = turnfit_window_new(NULL, LIT("gpt-4o"), j, n, &w, e);
    turnfit_window_free(w);
    return st;
}
static turnfit_status j_window_load(const char *j, size_t n, turnfit_error **e)
{
    return turnfit_window_load(g_len_win, j, n, e);
}
static turnfit_status j_window_push(const char *j, size_t n, turnfit_error **e)
{
    size_t t = 0;
    return turnfit_window_push(g_len_win, j, n, &t, e);
}
static turnfit_status j_preflight(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_window_preflight(g_len_win, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_compact(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_window_compact(g_len_win, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_fit_conv(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string c = {NULL, 0}, r = {NULL, 0};
    turnfit_status st = turnfit_fit(NULL, j, n, LIT("{\"model\":\"gpt-4o\"}"), &c, &r, e);
    turnfit_string_free(&c);
    turnfit_string_free(&r);
    return st;
}
static turnfit_status j_fit_options(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string c = {NULL, 0}, r = {NULL, 0};
    turnfit_status st = turnfit_fit(NULL, LIT(kLenConv), j, n, &c, &r, e);
    turnfit_string_free(&c);
    turnfit_string_free(&r);
    return st;
}
static turnfit_status j_assemble(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_assemble(g_len_tok, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_skills_open(const char *j, size_t n, turnfit_error **e)
{
    turnfit_skills *s = NULL;
    turnfit_status st = turnfit_skills_open(LIT("../../examples/data/skills"), j, n, &s, e);
    turnfit_skills_free(s);
    return st;
}
static turnfit_status j_render_index(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_skills_render_index(g_len_skills, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_handoff_validate(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_handoff_validate(j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_handoff_render(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_handoff_render(LIT(kLenHandoff), j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_handoff_filter(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_handoff_filter(j, n, NULL, 0, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_classify_headers(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_recovery_classify(LIT("openai"), 429, NULL, 0, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_classify_context(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_recovery_classify_in(LIT("openai"), 429, NULL, 0, NULL, 0, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_backoff(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_recovery_backoff(j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_breaker_new(const char *j, size_t n, turnfit_error **e)
{
    turnfit_breaker *b = NULL;
    turnfit_status st = turnfit_breaker_new(j, n, &b, e);
    turnfit_breaker_free(b);
    return st;
}
static turnfit_status j_tracer_new(const char *j, size_t n, turnfit_error **e)
{
    turnfit_tracer *t = NULL;
    turnfit_status st = turnfit_tracer_new(j, n, &t, e);
    turnfit_tracer_free(t);
    return st;
}
static turnfit_status j_tracer_start(const char *j, size_t n, turnfit_error **e)
{
    uint64_t id = 0;
    turnfit_status st = turnfit_tracer_start(g_len_tracer, LIT("grep"), j, n, 0, 0, &id, e);
    if (st == TURNFIT_STATUS_OK)
        turnfit_tracer_end(g_len_tracer, id, TURNFIT_SPAN_OUTCOME_SUCCESS, 0, NULL, 0, 1, NULL);
    return st;
}
static turnfit_status j_toolset_report(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_toolset_report(NULL, j, n, &s, e);
    turnfit_string_free(&s);
    return st;
}
static turnfit_status j_toolset_select(const char *j, size_t n, turnfit_error **e)
{
    turnfit_string s = {NULL, 0};
    turnfit_status st = turnfit_toolset_select(j, n, LIT("coder"), &s, e);
    turnfit_string_free(&s);
    return st;
}

typedef struct {
    const char *fn; /* the function the error message must name */
    json_call call;
    const char *json; /* valid: the call succeeds with it */
} json_case;

static const json_case kJsonCases[] = {
    {"turnfit_registry_register", j_register,
     "{\"name\":\"len-model\",\"encoding\":\"cl100k_base\",\"context_window\":4000,\"exact\":true}"},
    {"turnfit_callstack_from_json", j_callstack, "{\"agents\":[\"planner\",\"coder\"],\"max_depth\":3}"},
    {"turnfit_window_new", j_window_new, "{\"context_window\":4000,\"reserved_output\":100}"},
    {"turnfit_window_load", j_window_load, kLenConv},
    {"turnfit_window_push", j_window_push, "{\"role\":\"user\",\"content\":\"more\"}"},
    {"turnfit_window_preflight", j_preflight, "{\"role\":\"user\",\"content\":\"next\"}"},
    {"turnfit_window_compact", j_compact, "{\"strategy\":\"recency\"}"},
    {"turnfit_fit", j_fit_conv, kLenConv},
    {"turnfit_fit", j_fit_options, "{\"model\":\"gpt-4o\",\"max_tokens\":1000}"},
    {"turnfit_assemble", j_assemble, "{\"budget\":50,\"sections\":[{\"name\":\"task\",\"text\":\"Fix it\"}]}"},
    {"turnfit_skills_open", j_skills_open, "{\"layout\":\"folder\"}"},
    {"turnfit_skills_render_index", j_render_index, "{\"budget\":500}"},
    {"turnfit_handoff_validate", j_handoff_validate, kLenHandoff},
    {"turnfit_handoff_render", j_handoff_render, "{\"budget\":500}"},
    {"turnfit_handoff_filter", j_handoff_filter, kLenConv},
    {"turnfit_recovery_classify", j_classify_headers, "{\"retry-after\":\"3\"}"},
    {"turnfit_recovery_classify_in", j_classify_context, "{\"agent_id\":\"narrator\"}"},
    {"turnfit_recovery_backoff", j_backoff, "{\"failed_attempts\":1,\"seed\":1}"},
    {"turnfit_breaker_new", j_breaker_new, "{\"failure_threshold\":2}"},
    {"turnfit_tracer_new", j_tracer_new, "{\"ring_size\":8}"},
    {"turnfit_tracer_start", j_tracer_start, "{\"agent_id\":\"coder\"}"},
    {"turnfit_toolset_report", j_toolset_report, kLenTools},
    {"turnfit_toolset_select", j_toolset_select, kLenTools},
};
#define N_JSON_CASES (sizeof kJsonCases / sizeof kJsonCases[0])

static void test_lengths_and_nuls(void)
{
    turnfit_error *err = NULL;
    turnfit_string s = SENT_STRING;
    CHECK_STATUS(turnfit_registry_new(&g_len_reg, NULL), TURNFIT_STATUS_OK);
    g_len_tok = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 0, &g_len_win, NULL), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_skills_open(LIT("../../examples/data/skills"), NULL, 0, &g_len_skills, NULL), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_new(NULL, 0, &g_len_tracer, NULL), TURNFIT_STATUS_OK);
    if (!g_len_reg || !g_len_tok || !g_len_win || !g_len_skills || !g_len_tracer)
        goto out;
    CHECK_STATUS(turnfit_window_load(g_len_win, LIT(kLenConv), NULL), TURNFIT_STATUS_OK);

    /* Every JSON parameter: the whole document is accepted; one byte short,
     * or with a NUL inside len (the literal's terminator, after the document,
     * or in place of a space between tokens) it is INVALID_JSON. */
    for (size_t i = 0; i < N_JSON_CASES; i++) {
        const json_case *c = &kJsonCases[i];
        const char *j = c->json;
        const size_t n = strlen(c->json);
        CHECK_STATUS(c->call(j, n, &err), TURNFIT_STATUS_OK);
        CHECK_NO_ERR(err);
        turnfit_error_free(err);
        err = NULL;
        CHECK_STATUS(c->call(j, n - 1, &err), TURNFIT_STATUS_INVALID_JSON);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, c->fn, "EOF while parsing");
        CHECK_STATUS(c->call(j, n + 1, &err), TURNFIT_STATUS_INVALID_JSON);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, c->fn, "trailing characters");
        char *spaced = malloc(n + 2);
        if (CHECK(spaced != NULL)) {
            spaced[0] = '\0';
            memcpy(spaced + 1, c->json, n + 1);
            CHECK_STATUS(c->call(spaced, n + 1, &err), TURNFIT_STATUS_INVALID_JSON);
            CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, c->fn, "line 1 column 1");
            free(spaced);
        }
    }
    /* A raw NUL inside a JSON string is a control character; escaped, it is
     * a character of the value. */
    CHECK_STATUS(j_register(LIT("{\"name\":\"x\0y\",\"encoding\":\"cl100k_base\",\"exact\":true}"), &err),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_registry_register", "control character");
    CHECK_STATUS(j_tracer_start(LIT("{\"agent_id\":\"a\0\"}"), &err), TURNFIT_STATUS_INVALID_JSON);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_tracer_start", "control character");
    {
        size_t tokens = SENT_SIZE, plain = SENT_SIZE;
        CHECK_STATUS(turnfit_window_push(g_len_win, LIT("{\"role\":\"user\",\"content\":\"a\\u0000b\"}"), &tokens, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_window_push(g_len_win, LIT("{\"role\":\"user\",\"content\":\"ab\"}"), &plain, NULL),
                     TURNFIT_STATUS_OK);
        CHECK(tokens > plain); /* the NUL is counted as text */
        turnfit_string conv = SENT_STRING;
        CHECK_STATUS(turnfit_window_conversation(g_len_win, &conv, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(conv, "\"content\":\"a\\u0000b\"");
        turnfit_string_free(&conv);
    }

    /* Names: a shorter len reads the prefix; a NUL is part of the name. */
    turnfit_tokenizer *t = NULL;
    CHECK_STATUS(turnfit_tokenizer_new("cl100k_base_x", 11, 0, &t, NULL), TURNFIT_STATUS_OK);
    turnfit_tokenizer_free(t);
    t = NULL;
    TOKENIZER_NEW_FAILS(LIT("cl100k_base\0"), 0, false, TURNFIT_STATUS_UNKNOWN_ENCODING, "\xef\xbf\xbd");
    CHECK_STATUS(turnfit_tokenizer_new_for_model(NULL, "gpt-4o-mini", 6, NULL, 0, 0, &t, NULL),
                 TURNFIT_STATUS_OK);
    if (t) {
        s = info_ok(__LINE__, t);
        CHECK_STR_CONTAINS(s, "\"model\":{\"model\":\"gpt-4o\",");
        turnfit_string_free(&s);
        turnfit_tokenizer_free(t);
    }
    s = LOOKUP_OK(g_len_reg, "gpt-4o-mini", 6, NULL, 0);
    CHECK_STR_CONTAINS(s, "{\"model\":\"gpt-4o\",");
    turnfit_string_free(&s);
    /* The whole length is the name, NUL included: a NUL is not a name
     * boundary, so "gpt-4o*" does not take it, and with a fallback encoding
     * the NUL is kept (escaped) in the answer. */
    LOOKUP_FAILS(g_len_reg, LIT("gpt-4o\0mini"), NULL, 0, false, TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    s = LOOKUP_OK(g_len_reg, LIT("gpt-4o\0mini"), LIT("o200k_base"));
    CHECK_STR_CONTAINS(s, "{\"model\":\"gpt-4o\\u0000mini\",\"matched\":null,\"source\":\"fallback\"");
    turnfit_string_free(&s);
    s = LOOKUP_OK(g_len_reg, LIT("gpt-4o:mini"), NULL, 0);
    CHECK_STR_CONTAINS(s, "{\"model\":\"gpt-4o:mini\",\"matched\":\"gpt-4o*\"");
    turnfit_string_free(&s);
    LOOKUP_FAILS(g_len_reg, LIT("no-such-model"), LIT("cl100k_base\0"), false, TURNFIT_STATUS_UNKNOWN_ENCODING,
                 "\xef\xbf\xbd");
    s = LOOKUP_OK(g_len_reg, LIT("no-such-model"), "cl100k_basexx", 11);
    CHECK_STR_CONTAINS(s, "\"encoding\":\"cl100k_base\"");
    turnfit_string_free(&s);

    /* Text: the marker keeps its NULs; a short marker len cuts the marker. */
    {
        static const char text[] =
            "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen";
        truncation r = truncate_ok(__LINE__, g_len_tok, LIT(text), 10, TURNFIT_TRUNCATE_SIDE_BOTH, LIT("<\0{removed}\0>"));
        CHECK(r.tokens <= 10);
        CHECK_HAS(r.text, "<\0");
        CHECK_HAS(r.text, "\0>");
        turnfit_string_free(&r.text);
        r = truncate_ok(__LINE__, g_len_tok, LIT(text), 10, TURNFIT_TRUNCATE_SIDE_BOTH, "<{removed}>XYZ", 11);
        CHECK(r.tokens <= 10);
        CHECK_LACKS(r.text, "XYZ");
        CHECK_HAS(r.text, ">");
        turnfit_string_free(&r.text);
        /* ids_len shorter than the array decodes only the prefix. */
        turnfit_tokens ids = ENCODE_OK(g_len_tok, LIT("hello world"));
        if (CHECK(ids.len == 2)) {
            turnfit_string d = DECODE_OK(g_len_tok, ids.ptr, 1, TURNFIT_DECODE_MODE_STRICT);
            CHECK_BYTES(d.ptr, d.len, "hello", 5);
            turnfit_string_free(&d);
        }
        turnfit_tokens_free(&ids);
    }

    /* Breaker keys and tool names: a NUL makes a different key or tool. */
    {
        turnfit_breaker *b = NULL;
        CHECK_STATUS(turnfit_breaker_new(LIT("{\"failure_threshold\":1}"), &b, NULL), TURNFIT_STATUS_OK);
        bool allowed = false;
        CHECK_STATUS(turnfit_breaker_record_failure(b, LIT("svc\0x"), 1, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_breaker_allow(b, LIT("svc"), 2, &allowed, NULL), TURNFIT_STATUS_OK);
        CHECK(allowed);
        CHECK_STATUS(turnfit_breaker_allow(b, "svc\0xyz", 5, 2, &allowed, NULL), TURNFIT_STATUS_OK);
        CHECK(!allowed);
        s = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_breaker_state(b, LIT("svc\0x"), 2, &s, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(s, "{\"key\":\"svc\\u0000x\",\"state\":\"open\"");
        turnfit_string_free(&s);
        turnfit_breaker_free(b);

        uint64_t id = 0;
        CHECK_STATUS(turnfit_tracer_start(g_len_tracer, LIT("gr\0ep"), NULL, 0, 0, 0, &id, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_end(g_len_tracer, id, TURNFIT_SPAN_OUTCOME_FAILED, 0, LIT("bad\0news"), 5, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_start(g_len_tracer, "grepXX", 4, NULL, 0, 0, 0, &id, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_end(g_len_tracer, id, TURNFIT_SPAN_OUTCOME_SUCCESS, 0, NULL, 0, 5, NULL),
                     TURNFIT_STATUS_OK);
        s = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_tracer_export(g_len_tracer, 10, &s, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(s, "{\"tool\":\"gr\\u0000ep\",\"count\":1,");
        CHECK_STR_CONTAINS(s, "\"error\":\"bad\\u0000news\"");
        /* grep: one span from the JSON loop above, one here. */
        CHECK_STR_CONTAINS(s, "{\"tool\":\"grep\",\"count\":2,");
        turnfit_string_free(&s);
    }

    /* Agent names: a NUL is a control character; a short len is the prefix. */
    {
        turnfit_callstack *root = NULL, *s1 = (turnfit_callstack *)SENT_PTR;
        CHECK_STATUS(turnfit_callstack_new(TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH, &root, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_callstack_enter(root, LIT("plan\0ner"), &s1, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_callstack_enter", "control character");
        check_ptr_untouched_at(__LINE__, "s1", s1);
        s1 = NULL;
        CHECK_STATUS(turnfit_callstack_enter(root, "plannerXX", 7, &s1, NULL), TURNFIT_STATUS_OK);
        s = (turnfit_string)SENT_STRING;
        if (s1 && CHECK_STATUS(turnfit_callstack_to_json(s1, &s, NULL), TURNFIT_STATUS_OK)) {
            CHECK_STR_CONTAINS(s, "{\"agents\":[\"planner\"],");
            turnfit_string_free(&s);
        }
        turnfit_callstack_free(s1);
        turnfit_callstack_free(root);
    }

    /* Paths and skill names. */
    {
        turnfit_skills *sk = (turnfit_skills *)SENT_PTR;
        CHECK_STATUS(turnfit_skills_open(LIT("../../examples/data/skills\0/etc"), NULL, 0, &sk, &err), TURNFIT_STATUS_IO);
        CHECK_ERR(&err, TURNFIT_STATUS_IO, "turnfit_skills_open", "NUL byte");
        check_ptr_untouched_at(__LINE__, "sk", sk);
        sk = NULL;
        CHECK_STATUS(turnfit_skills_open("../../examples/data/skills/../../etc", 26, NULL, 0, &sk, NULL),
                     TURNFIT_STATUS_OK);
        turnfit_skills_free(sk);
        s = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_skills_body(g_len_skills, "pdf-extract/../x", 11, &s, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(s, "{\"name\":\"pdf-extract\",");
        turnfit_string_free(&s);
        s = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_skills_body(g_len_skills, LIT("pdf-extract\0"), &s, &err), TURNFIT_STATUS_UNSAFE_PATH);
        CHECK_ERR(&err, TURNFIT_STATUS_UNSAFE_PATH, "turnfit_skills_body", NULL);
        check_string_untouched_at(__LINE__, "s", s);
        /* A name over MAX_NAME_BYTES (256) is refused before any lookup. */
        char long_name[257];
        memset(long_name, 'n', sizeof long_name);
        CHECK_STATUS(turnfit_skills_body(g_len_skills, long_name, sizeof long_name, &s, &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_skills_body", "MAX_NAME_BYTES");
        check_string_untouched_at(__LINE__, "s", s);
    }

    /* Providers and agents: a NUL makes an unknown name; a short len is the prefix. */
    s = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai\0"), 429, NULL, 0, NULL, 0, &s, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_recovery_classify", "unknown provider 'openai\xef\xbf\xbd'");
    check_string_untouched_at(__LINE__, "s", s);
    CHECK_STATUS(turnfit_recovery_classify("openaix", 6, 429, LIT("slow\0down"), NULL, 0, &s, NULL),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(s, "\"category\":\"rate_limited\"");
    turnfit_string_free(&s);
    s = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_toolset_select(LIT(kLenTools), LIT("coder\0"), &s, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_toolset_select", "has no allowlist");
    check_string_untouched_at(__LINE__, "s", s);
    CHECK_STATUS(turnfit_toolset_select(LIT(kLenTools), "coders", 5, &s, NULL), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(s, "\"name\":\"run_tests\"");
    turnfit_string_free(&s);

out:
    turnfit_tracer_free(g_len_tracer);
    turnfit_skills_free(g_len_skills);
    turnfit_window_free(g_len_win);
    turnfit_tokenizer_free(g_len_tok);
    turnfit_registry_free(g_len_reg);
    g_len_tracer = NULL;
    g_len_skills = NULL;
    g_len_win = NULL;
    g_len_tok = NULL;
    g_len_reg = NULL;
}

/* ------------------------------------------------------------------------ */
/* Threads: one tokenizer and one registry shared by 8 threads.              */

#define N_THREADS 8

/* Short texts keep each call cheap under valgrind (the section must stay a
 * few seconds there) while still covering ASCII, CJK, Cyrillic, emoji, code,
 * digits, special-token text and the empty string. */
static const char *const kThreadTexts[] = {
    "hello world",
    "日本語のテキスト",
    "Привет, мир!",
    "🎉👩\u200d👩\u200d👧 ok",
    "x += f(i);\n\t}",
    "3.14159 2718",
    "<|endoftext|>",
    "",
};
#define N_THREAD_TEXTS (sizeof kThreadTexts / sizeof kThreadTexts[0])

static const char *const kThreadModels[] = {"gpt-4o", "gpt-4", "acme-large", "openai/gpt-4.1-mini",
                                            "claude-sonnet-4-5", "text-davinci-003"};
#define N_THREAD_MODELS (sizeof kThreadModels / sizeof kThreadModels[0])

typedef struct {
    size_t count;
    turnfit_tokens ids;
    turnfit_string decoded;
} text_expect;

static text_expect g_text_expect[N_THREAD_TEXTS];
static turnfit_string g_model_expect[N_THREAD_MODELS];

typedef struct {
    const turnfit_tokenizer *tok;
    turnfit_registry *reg;
    int id;
    long iters;
    long ops;
    long mismatches;
    char first[512];
} worker;

static void worker_mismatch(worker *w, long iter, const char *fmt, ...)
{
    w->mismatches++;
    if (w->first[0] != 0)
        return;
    int n = snprintf(w->first, sizeof w->first, "thread %d iteration %ld: ", w->id, iter);
    if (n < 0 || (size_t)n >= sizeof w->first)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first + n, sizeof w->first - (size_t)n, fmt, ap);
    va_end(ap);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    char json[256];
    char name[64];
    snprintf(name, sizeof name, "thread-%d-model", w->id);
    snprintf(json, sizeof json,
             "{\"name\":\"%s\",\"encoding\":\"cl100k_base\",\"context_window\":%d,\"exact\":true}", name,
             1000 + w->id);
    size_t registered = 0;
    if (turnfit_registry_register(w->reg, STR(json), &registered, NULL) != TURNFIT_STATUS_OK || registered != 1)
        worker_mismatch(w, -1, "registering %s failed", name);
    w->ops++;
    char window[64];
    snprintf(window, sizeof window, "\"context_window\":%d", 1000 + w->id);

    for (long i = 0; i < w->iters; i++) {
        const size_t k = (size_t)(i + w->id) % N_THREAD_TEXTS;
        const char *text = kThreadTexts[k];
        const text_expect *e = &g_text_expect[k];

        size_t n = SENT_SIZE;
        if (turnfit_tokenizer_count(w->tok, STR(text), &n, NULL) != TURNFIT_STATUS_OK || n != e->count)
            worker_mismatch(w, i, "count of text %zu: %zu, expected %zu", k, n, e->count);

        turnfit_tokens ids = {NULL, 0};
        if (turnfit_tokenizer_encode(w->tok, STR(text), &ids, NULL) != TURNFIT_STATUS_OK || ids.len != e->ids.len ||
            (ids.len > 0 && memcmp(ids.ptr, e->ids.ptr, ids.len * sizeof(uint32_t)) != 0))
            worker_mismatch(w, i, "encode of text %zu differs (%zu ids, expected %zu)", k, ids.len, e->ids.len);
        turnfit_tokens_free(&ids);

        turnfit_string s = {NULL, 0};
        if (turnfit_tokenizer_decode(w->tok, e->ids.ptr, e->ids.len, TURNFIT_DECODE_MODE_STRICT, &s, NULL) !=
                TURNFIT_STATUS_OK ||
            s.len != e->decoded.len || memcmp(s.ptr, e->decoded.ptr, s.len) != 0)
            worker_mismatch(w, i, "decode of text %zu differs", k);
        turnfit_string_free(&s);

        w->ops += 3;

        if (i % 8 == 0) {
            const size_t m = (size_t)(i / 8 + w->id) % N_THREAD_MODELS;
            turnfit_string j = {NULL, 0};
            if (turnfit_registry_lookup(w->reg, STR(kThreadModels[m]), NULL, 0, &j, NULL) != TURNFIT_STATUS_OK ||
                j.len != g_model_expect[m].len || memcmp(j.ptr, g_model_expect[m].ptr, j.len) != 0)
                worker_mismatch(w, i, "lookup of %s differs", kThreadModels[m]);
            turnfit_string_free(&j);
            w->ops++;
        }

        if (i % 32 == 0) {
            /* This thread's own registration, visible to it. */
            turnfit_string j = {NULL, 0};
            if (turnfit_registry_lookup(w->reg, STR(name), NULL, 0, &j, NULL) != TURNFIT_STATUS_OK ||
                !mem_contains(j.ptr, j.len, window))
                worker_mismatch(w, i, "lookup of %s lacks %s", name, window);
            turnfit_string_free(&j);

            /* count_until_limit agrees with count. */
            bool exceeded = true;
            n = SENT_SIZE;
            if (turnfit_tokenizer_count_until_limit(w->tok, STR(text), e->count, &n, &exceeded, NULL) !=
                    TURNFIT_STATUS_OK ||
                exceeded || n != e->count)
                worker_mismatch(w, i, "count_until_limit of text %zu", k);

            /* An error path: owned error objects are per call. */
            const uint32_t bad = 10000000;
            turnfit_error *err = NULL;
            turnfit_string out = {NULL, 0};
            turnfit_status st = turnfit_tokenizer_decode(w->tok, &bad, 1, 0, &out, &err);
            size_t len = 0;
            const char *msg = err ? turnfit_error_message(err, &len) : NULL;
            if (st != TURNFIT_STATUS_UNKNOWN_TOKEN || turnfit_error_code(err) != TURNFIT_STATUS_UNKNOWN_TOKEN ||
                msg == NULL || !mem_contains(msg, len, "10000000") || out.ptr != NULL)
                worker_mismatch(w, i, "decode of an unknown id: status %u", (unsigned)st);
            turnfit_error_free(err);
            w->ops += 3;
        }
    }
    return NULL;
}

static void test_threads(void)
{
    turnfit_tokenizer *tok = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
    turnfit_registry *reg = NULL;
    CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK);
    if (!tok || !reg) {
        turnfit_tokenizer_free(tok);
        turnfit_registry_free(reg);
        return;
    }
    CHECK_SIZE(REGISTER_OK(reg, LIT(kAcmeProfile)), 1);

    /* Single-threaded reference results. */
    for (size_t k = 0; k < N_THREAD_TEXTS; k++) {
        text_expect *e = &g_text_expect[k];
        e->count = COUNT_OK(tok, STR(kThreadTexts[k]));
        e->ids = ENCODE_OK(tok, STR(kThreadTexts[k]));
        CHECK_SIZE(e->ids.len, e->count);
        e->decoded = DECODE_OK(tok, e->ids.ptr, e->ids.len, TURNFIT_DECODE_MODE_STRICT);
        CHECK_BYTES(e->decoded.ptr, e->decoded.len, kThreadTexts[k], strlen(kThreadTexts[k]));
    }
    for (size_t m = 0; m < N_THREAD_MODELS; m++)
        g_model_expect[m] = LOOKUP_OK(reg, STR(kThreadModels[m]), NULL, 0);

    long iters = 800;
    const char *env = getenv("TURNFIT_HARNESS_THREAD_ITERS");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == 0 && v > 0)
            iters = v;
    }

    worker workers[N_THREADS];
    pthread_t threads[N_THREADS];
    bool started[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].tok = tok;
        workers[i].reg = reg;
        workers[i].id = i;
        workers[i].iters = iters;
        started[i] = pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0;
        CHECK(started[i]);
    }
    long total_ops = 0;
    for (int i = 0; i < N_THREADS; i++) {
        if (!started[i])
            continue;
        CHECK(pthread_join(threads[i], NULL) == 0);
        total_ops += workers[i].ops;
        if (workers[i].mismatches == 0)
            g_passed++;
        else
            fail_at(__LINE__, "%ld mismatches against single-threaded results; first: %s", workers[i].mismatches,
                    workers[i].first);
    }
    CHECK(total_ops >= (long)N_THREADS * iters * 3);

    /* Every thread's registration landed in the one shared registry. */
    turnfit_string l = list_ok(__LINE__, reg);
    for (int i = 0; i < N_THREADS; i++) {
        char name[64];
        snprintf(name, sizeof name, "\"name\":\"thread-%d-model\"", i);
        CHECK_STR_CONTAINS(l, name);
    }
    turnfit_string_free(&l);

    for (size_t k = 0; k < N_THREAD_TEXTS; k++) {
        turnfit_tokens_free(&g_text_expect[k].ids);
        turnfit_string_free(&g_text_expect[k].decoded);
    }
    for (size_t m = 0; m < N_THREAD_MODELS; m++)
        turnfit_string_free(&g_model_expect[m]);
    turnfit_tokenizer_free(tok);
    turnfit_registry_free(reg);
}

/* ---- context windows and turnfit_fit ------------------------------------- */

static const char kConv[] =
    "{\"model\":\"gpt-4o\",\"messages\":["
    "{\"role\":\"system\",\"content\":\"Be brief.\"},"
    "{\"role\":\"user\",\"content\":\"Deploy build 7\"},"
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"deploy\",\"arguments\":\"{}\"}},"
    "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"smoke\",\"arguments\":\"{}\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"deployed\"},"
    "{\"role\":\"user\",\"content\":\"What happened to the smoke tests?\"}]}";

static void test_window(void)
{
    turnfit_window *w = NULL;
    turnfit_error *err = NULL;

    /* new: NULL registry = built-in; (NULL, 0) budget = defaults. */
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 0, &w, &err), TURNFIT_STATUS_OK);
    if (!CHECK(w != NULL))
        return;
    CHECK_STATUS(turnfit_window_load(w, LIT(kConv), &err), TURNFIT_STATUS_OK);

    turnfit_string pre = SENT_STRING;
    CHECK_STATUS(turnfit_window_preflight(w, NULL, 0, &pre, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(pre, "\"verdict\":\"fits\"");
    CHECK_STR_CONTAINS(pre, "\"limit\":128000");
    turnfit_string_free(&pre);

    turnfit_string issues = SENT_STRING;
    CHECK_STATUS(turnfit_window_validate(w, &issues, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(issues, "\"kind\":\"orphaned_call\"");
    CHECK_STR_CONTAINS(issues, "\"id\":\"c2\"");
    turnfit_string_free(&issues);

    turnfit_string changes = SENT_STRING;
    CHECK_STATUS(turnfit_window_repair(w, LIT("interrupted"), &changes, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(changes, "\"action\":\"synthesized_result\"");
    turnfit_string_free(&changes);
    CHECK_STATUS(turnfit_window_validate(w, &issues, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(issues.ptr, issues.len, "[]", 2);
    turnfit_string_free(&issues);

    turnfit_string conv = SENT_STRING;
    CHECK_STATUS(turnfit_window_conversation(w, &conv, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(conv, "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"interrupted\"}");
    CHECK_STR_CONTAINS(conv, "\"model\":\"gpt-4o\"");
    turnfit_string_free(&conv);

    size_t tokens = SENT_SIZE;
    CHECK_STATUS(turnfit_window_push(w, LIT("{\"role\":\"user\",\"content\":\"hello world\"}"), &tokens, &err),
                 TURNFIT_STATUS_OK);
    CHECK_SIZE(tokens, 3 + 1 + 2); /* framing + role + "hello world" */

    /* calibrate: the factor is reported / counted (an exact model keeps its
       counts; the factor is the discrepancy). Twice the count is 2.0. */
    CHECK_STATUS(turnfit_window_preflight(w, NULL, 0, &pre, &err), TURNFIT_STATUS_OK);
    {
        const char *at = pre.ptr ? strstr((const char *)pre.ptr, "\"prompt_tokens\":") : NULL;
        unsigned long counted = at ? strtoul(at + strlen("\"prompt_tokens\":"), NULL, 10) : 0;
        double factor = -1.0;
        CHECK(counted > 0);
        CHECK_STATUS(turnfit_window_calibrate(w, (uint64_t)counted * 2, &factor, &err), TURNFIT_STATUS_OK);
        CHECK(factor == 2.0);
        factor = -1.0;
        CHECK_STATUS(turnfit_window_calibrate(w, 0, &factor, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(turnfit_window_calibrate(w, (uint64_t)counted * 100, &factor, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        if (CHECK(err != NULL)) {
            CHECK(strstr(turnfit_error_message(err, NULL), "implausible") != NULL);
            turnfit_error_free(err);
            err = NULL;
        }
        CHECK(factor == -1.0);
        CHECK_STATUS(turnfit_window_calibrate(NULL, 10, &factor, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_calibrate(w, 10, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    }
    turnfit_string_free(&pre);

    /* Failures: status, message, and outputs untouched. */
    tokens = SENT_SIZE;
    CHECK_STATUS(turnfit_window_push(w, LIT("{\"role\":\"wizard\"}"), &tokens, &err), TURNFIT_STATUS_INVALID_JSON);
    CHECK_SIZE(tokens, SENT_SIZE);
    if (CHECK(err != NULL)) {
        const char *m = turnfit_error_message(err, NULL);
        CHECK(strstr(m, "unknown role 'wizard'") != NULL);
        turnfit_error_free(err);
        err = NULL;
    }
    CHECK_STATUS(turnfit_window_load(w, LIT("{\"messages\": 5}"), NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_window_load(w, LIT("[\"\xff\"]"), NULL), TURNFIT_STATUS_INVALID_UTF8);
    pre = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_window_preflight(w, LIT("{\"content\":\"x\"}"), &pre, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK(pre.ptr == SENT_PTR && pre.len == SENT_SIZE);

    /* NULL for every pointer parameter. */
    turnfit_window *w2 = (turnfit_window *)SENT_PTR;
    CHECK_STATUS(turnfit_window_new(NULL, NULL, 3, NULL, 0, &w2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 2, &w2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK(w2 == (turnfit_window *)SENT_PTR);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt4o"), NULL, 0, &w2, NULL), TURNFIT_STATUS_UNKNOWN_MODEL);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"trigger_ratio\":2}"), &w2, NULL),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"typo\":1}"), &w2, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_window_load(NULL, LIT(kConv), NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_load(w, NULL, 4, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_push(NULL, LIT("{}"), &tokens, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_push(w, NULL, 2, &tokens, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_push(w, LIT("{}"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_preflight(NULL, NULL, 0, &pre, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_preflight(w, NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_preflight(w, NULL, 3, &pre, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_validate(NULL, &issues, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_validate(w, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_repair(NULL, NULL, 0, &changes, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_repair(w, NULL, 1, &changes, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_repair(w, NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_conversation(NULL, &conv, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_window_conversation(w, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    /* compact: recency in place, then the two-phase summary protocol. */
    {
        turnfit_window *cw = NULL;
        CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"context_window\":120,\"reserved_output\":10}"), &cw, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_window_load(cw, LIT(kConv), NULL), TURNFIT_STATUS_OK);
        turnfit_string res = SENT_STRING;
        CHECK_STATUS(turnfit_window_compact(cw, NULL, 0, &res, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(res, "\"status\":\"done\"");
        CHECK_STR_CONTAINS(res, "\"action\":\"dropped_message\"");
        turnfit_string_free(&res);
        CHECK_STATUS(turnfit_window_load(cw, LIT(kConv), NULL), TURNFIT_STATUS_OK);
        /* keep_first 0: the task is eligible too, so this tiny window has room
           for a summary (with the task protected, 15 tokens are left: none). */
        CHECK_STATUS(turnfit_window_compact(cw, LIT("{\"strategy\":\"summarize\",\"summary_max_tokens\":20,\"keep_first\":0}"),
                                           &res, &err),
                     TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(res, "\"status\":\"needs_summary\"");
        /* Pull the id out of {"status":"needs_summary","request":{"id":"sum-...",...}}. */
        char id[64] = {0};
        const char *at = res.ptr ? strstr((const char *)res.ptr, "\"id\":\"") : NULL;
        if (CHECK(at != NULL)) {
            at += 6;
            size_t n = 0;
            while (at[n] && at[n] != '"' && n < sizeof id - 1) {
                id[n] = at[n];
                n++;
            }
        }
        turnfit_string_free(&res);
        res = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_window_apply_summary(cw, LIT("sum-wrong"), LIT("x"), &res, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK(res.ptr == SENT_PTR);
        /* An id over MAX_NAME_BYTES is refused, and the summary stays pending. */
        char long_id[257];
        memset(long_id, 'i', sizeof long_id);
        CHECK_STATUS(turnfit_window_apply_summary(cw, long_id, sizeof long_id, LIT("x"), &res, &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_window_apply_summary", "MAX_NAME_BYTES");
        CHECK(res.ptr == SENT_PTR);
        CHECK_STATUS(turnfit_window_apply_summary(cw, STR(id), LIT("Deployed build 7."), &res, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(res, "\"action\":\"inserted_summary\"");
        turnfit_string_free(&res);
        CHECK_STATUS(turnfit_window_conversation(cw, &res, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(res, "[Summary of earlier conversation]\\nDeployed build 7.");
        turnfit_string_free(&res);
        res = (turnfit_string)SENT_STRING; /* every call below fails: res must stay untouched */
        CHECK_STATUS(turnfit_window_apply_summary(cw, STR(id), LIT("again"), &res, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(turnfit_window_compact(cw, LIT("{\"strategy\":7}"), &res, NULL), TURNFIT_STATUS_INVALID_JSON);
        CHECK_STATUS(turnfit_window_compact(NULL, NULL, 0, &res, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_compact(cw, NULL, 1, &res, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_compact(cw, NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_apply_summary(NULL, LIT("a"), LIT("b"), &res, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_apply_summary(cw, NULL, 1, LIT("b"), &res, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_apply_summary(cw, LIT("a"), NULL, 1, &res, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_apply_summary(cw, LIT("a"), LIT("b"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_window_apply_summary(cw, LIT("a"), LIT("\xe6\x97"), &res, NULL), TURNFIT_STATUS_INVALID_UTF8);
        CHECK(res.ptr == SENT_PTR);
        turnfit_window_free(cw);
    }

    turnfit_window_free(NULL);
    turnfit_window_free(w);

    /* turnfit_fit: stateless; both outputs written only on success. */
    turnfit_string out_c = SENT_STRING, out_r = SENT_STRING;
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{\"model\":\"gpt-4o\",\"max_tokens\":1000,\"reserve_output\":100}"),
                            &out_c, &out_r, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out_c, "\"tool_call_id\":\"c2\"");
    CHECK_STR_CONTAINS(out_r, "\"limit_tokens\":900");
    CHECK_STR_CONTAINS(out_r, "\"synthesized_result\"");
    turnfit_string_free(&out_c);
    turnfit_string_free(&out_r);
    out_c = (turnfit_string)SENT_STRING;
    out_r = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{\"model\":\"gpt-4o\",\"max_tokens\":20,\"reserve_output\":5}"),
                            &out_c, &out_r, &err),
                 TURNFIT_STATUS_DOES_NOT_FIT);
    CHECK(out_c.ptr == SENT_PTR && out_r.ptr == SENT_PTR);
    if (CHECK(err != NULL)) {
        CHECK(strstr(turnfit_error_message(err, NULL), "cannot fit") != NULL);
        turnfit_error_free(err);
        err = NULL;
    }
    /* Issue 31 item 5: a custom model in fit options and a window budget;
       an unknown name alone is UNKNOWN_MODEL, a zero window INVALID_ARGUMENT. */
    out_c = (turnfit_string)SENT_STRING;
    out_r = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv),
                             LIT("{\"model\":\"my-azure-gpt4o\",\"encoding\":\"o200k_base\",\"context_window\":3000,"
                                 "\"max_output_tokens\":500}"),
                             &out_c, &out_r, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out_r, "\"limit_tokens\":2500");
    turnfit_string_free(&out_c);
    turnfit_string_free(&out_r);
    out_c = (turnfit_string)SENT_STRING;
    out_r = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{\"model\":\"my-azure-gpt4o\"}"), &out_c, &out_r, NULL),
                 TURNFIT_STATUS_UNKNOWN_MODEL);
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv),
                             LIT("{\"model\":\"my-azure-gpt4o\",\"encoding\":\"o200k_base\",\"context_window\":0}"),
                             &out_c, &out_r, NULL),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK(out_c.ptr == SENT_PTR && out_r.ptr == SENT_PTR);
    {
        turnfit_window *cw = NULL;
        CHECK_STATUS(turnfit_window_new(NULL, LIT("my-azure-gpt4o"),
                                        LIT("{\"encoding\":\"cl100k_base\",\"context_window\":8000,\"max_output_tokens\":1000}"),
                                        &cw, NULL),
                     TURNFIT_STATUS_OK);
        turnfit_string pre = SENT_STRING;
        CHECK_STATUS(turnfit_window_preflight(cw, NULL, 0, &pre, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(pre, "\"limit\":8000");
        CHECK_STR_CONTAINS(pre, "\"reserved_output\":1000");
        turnfit_string_free(&pre);
        turnfit_window_free(cw);
        cw = NULL;
        CHECK_STATUS(turnfit_window_new(NULL, LIT("my-azure-gpt4o"), LIT("{\"context_window\":8000}"), &cw, NULL),
                     TURNFIT_STATUS_UNKNOWN_MODEL);
        CHECK(cw == NULL);
    }
    /* Issue 23: summarize never silently deletes; issue 47: a target is a
       goal, the limit the wall. No room for the smallest summary within the
       limit drops rounds as recency does and the report says so, naming its
       size; a little room gives a summary. */
    {
        static const char kSumConv[] = "[{\"role\":\"system\",\"content\":\"You are a coding agent.\"},{\"role\":\"user\",\"content\":\"Fix the failing test.\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c0\",\"type\":\"function\",\"function\":{\"name\":\"run\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c0\",\"content\":\"log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log \"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"run\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log \"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"run\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log log \"}]";
        CHECK_STATUS(turnfit_fit(NULL, LIT(kSumConv),
                                LIT("{\"model\":\"gpt-4o\",\"max_tokens\":40,\"reserve_output\":0,"
                                    "\"policy\":{\"strategy\":\"summarize\",\"keep_last_rounds\":0}}"),
                                &out_c, &out_r, &err),
                     TURNFIT_STATUS_OK);
        CHECK(err == NULL);
        CHECK_STR_CONTAINS(out_r, "\"no_room_for_summary\"");
        CHECK_STR_CONTAINS(out_r, "the smallest summary (26 tokens");
        CHECK_STR_CONTAINS(out_r, "\"dropped_message\"");
        turnfit_string_free(&out_c);
        turnfit_string_free(&out_r);
        out_c = (turnfit_string)SENT_STRING;
        out_r = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_fit(NULL, LIT(kSumConv),
                                LIT("{\"model\":\"gpt-4o\",\"max_tokens\":60,\"reserve_output\":0,"
                                    "\"policy\":{\"strategy\":\"summarize\",\"keep_last_rounds\":0}}"),
                                &out_c, &out_r, &err),
                     TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(out_r, "\"inserted_summary\"");
        CHECK_STR_CONTAINS(out_c, "[Summary of earlier conversation]");
        turnfit_string_free(&out_c);
        turnfit_string_free(&out_r);
        out_c = (turnfit_string)SENT_STRING;
        out_r = (turnfit_string)SENT_STRING;
    }
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{}"), &out_c, &out_r, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{\"model\":\"gpt-4o\",\"policy\":{\"strategy\":\"magic\"}}"), &out_c, &out_r, NULL),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_fit(NULL, LIT("not json"), LIT("{\"model\":\"gpt-4o\"}"), &out_c, &out_r, NULL),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_fit(NULL, NULL, 3, LIT("{}"), &out_c, &out_r, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), NULL, 2, &out_c, &out_r, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{}"), NULL, &out_r, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{}"), &out_c, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_fit(NULL, LIT("[\"\xc0\xaf\"]"), LIT("{}"), &out_c, &out_r, NULL), TURNFIT_STATUS_INVALID_UTF8);
    /* ABI 2: fit takes the registry, so a host-registered model works as in a window. */
    {
        turnfit_registry *reg = NULL;
        size_t nreg = 0;
        CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_registry_register(
                         reg, LIT("{\"name\":\"house-model\",\"encoding\":\"o200k_base\",\"context_window\":5000,\"exact\":true}"),
                         &nreg, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_fit(NULL, LIT(kConv), LIT("{\"model\":\"house-model\"}"), &out_c, &out_r, NULL),
                     TURNFIT_STATUS_UNKNOWN_MODEL);
        CHECK_STATUS(turnfit_fit(reg, LIT(kConv), LIT("{\"model\":\"house-model\"}"), &out_c, &out_r, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(out_r, "\"max_tokens\":5000");
        turnfit_string_free(&out_c);
        turnfit_string_free(&out_r);
        turnfit_registry_free(reg);
        out_c = (turnfit_string)SENT_STRING;
        out_r = (turnfit_string)SENT_STRING;
    }
    CHECK(out_c.ptr == SENT_PTR && out_r.ptr == SENT_PTR);
}

static void test_assemble(void)
{
    turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "o200k_base", 0);
    if (!t)
        return;
    turnfit_string out = SENT_STRING;
    turnfit_error *err = NULL;
    static const char kReq[] =
        "{\"template\":\"problem_solving\",\"budget\":25,\"sections\":["
        "{\"name\":\"task\",\"text\":\"Fix the failing parser test\",\"priority\":9},"
        "{\"name\":\"context\",\"text\":\"The parser lives in src/parser.rs. It was refactored yesterday and "
        "since then nested braces are cut short. Tests in parser::tests fail with a None result.\",\"priority\":5},"
        "{\"name\":\"output_format\",\"text\":\"A unified diff\",\"priority\":1}]}";
    CHECK_STATUS(turnfit_assemble(t, LIT(kReq), &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"text\":\"## task\\nFix the failing parser test");
    CHECK_STR_CONTAINS(out, "\"status\":\"truncated\"");
    CHECK_STR_CONTAINS(out, "\"status\":\"omitted\"");
    turnfit_string_free(&out);
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_assemble(t, LIT("{\"template\":\"analysis\",\"budget\":50,\"sections\":[]}"), &out, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    if (CHECK(err != NULL)) {
        CHECK(strstr(turnfit_error_message(err, NULL), "requires a 'task' section") != NULL);
        turnfit_error_free(err);
        err = NULL;
    }
    CHECK(out.ptr == SENT_PTR);
    /* The ContextEngine preset: auto picks problem_solving; JSON context rendered. */
    CHECK_STATUS(turnfit_assemble(t, LIT("{\"preset\":\"context_engine\",\"budget\":100,\"context\":{"
                                        "\"problem_statement\":\"Export times out\",\"objective\":\"solve\","
                                        "\"constraints\":[\"no schema changes\"]}}"), &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"template\":\"problem_solving\"");
    CHECK_STR_CONTAINS(out, "## constraints\\n- no schema changes");
    turnfit_string_free(&out);
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_assemble(t, LIT("{\"budget\":5,\"depth\":\"deep\"}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_assemble(t, LIT("{\"budget\":\"ten\"}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_assemble(t, LIT("{\"budget\":1,\"sections\":[\"\xff\"]}"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_assemble(NULL, LIT(kReq), &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_assemble(t, NULL, 3, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_assemble(t, LIT(kReq), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK(out.ptr == SENT_PTR);
    turnfit_tokenizer_free(t);
}

/* ------------------------------------------------------------------------ */
/* Skills: the shipped example folder (tests run from tests/c). */
#define SKILLS_DIR "../../examples/data/skills"

typedef struct {
    turnfit_skills *skills;
    const char *name;
    turnfit_status status;
    size_t len;
    int has_heading;
} skills_job;

static void *skills_thread(void *arg)
{
    skills_job *job = (skills_job *)arg;
    for (int i = 0; i < 50; i++) {
        turnfit_string body = {NULL, 0};
        job->status = turnfit_skills_body(job->skills, STR(job->name), &body, NULL);
        if (job->status != TURNFIT_STATUS_OK)
            return NULL;
        job->len = body.len;
        job->has_heading = body.ptr && strstr((const char *)body.ptr, "\"text\":\"# ") != NULL;
        turnfit_string_free(&body);
    }
    return NULL;
}

static void test_skills(void)
{
    turnfit_skills *sk = NULL;
    turnfit_error *err = NULL;
    CHECK_STATUS(turnfit_skills_open(LIT(SKILLS_DIR), NULL, 0, &sk, &err), TURNFIT_STATUS_OK);
    CHECK_NO_ERR(err);
    if (!CHECK(sk != NULL))
        return;

    turnfit_string list = SENT_STRING;
    CHECK_STATUS(turnfit_skills_list(sk, &list, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(list, "\"name\":\"pdf-extract\"");
    CHECK_STR_CONTAINS(list, "\"valid\":4,\"invalid\":0");
    CHECK_STR_CONTAINS(list, "\"body_tokens\":null");
    CHECK_STR_CONTAINS(list, "\"encoding\":\"cl100k_base\"");
    turnfit_string_free(&list);

    turnfit_string body = SENT_STRING;
    CHECK_STATUS(turnfit_skills_body(sk, LIT("pdf-extract"), &body, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(body, "\"text\":\"# PDF extraction\\n");
    CHECK_STR_CONTAINS(body, "\"tokens\":");
    turnfit_string_free(&body);
    /* The listing now reports the loaded body's tokens. */
    CHECK_STATUS(turnfit_skills_list(sk, &list, NULL), TURNFIT_STATUS_OK);
    {
        size_t nulls = 0;
        const char *at = list.ptr ? (const char *)list.ptr : "";
        while ((at = strstr(at, "\"body_tokens\":null")) != NULL) {
            nulls++;
            at++;
        }
        CHECK_SIZE(nulls, 3);
    }
    turnfit_string_free(&list);

    turnfit_string idx = SENT_STRING;
    CHECK_STATUS(turnfit_skills_render_index(sk, NULL, 0, &idx, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(idx, "\"text\":\"- pdf-extract [documents]: Extract text");
    CHECK_STR_CONTAINS(idx, "\"omitted\":[]");
    turnfit_string_free(&idx);
    CHECK_STATUS(turnfit_skills_render_index(sk, LIT("{\"budget\":60,\"categories\":[\"writing\"]}"), &idx, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(idx, "\"text\":\"- release-notes [writing]:");
    CHECK_STR_CONTAINS(idx, "\"reason\":\"budget\"");
    turnfit_string_free(&idx);

    /* Failures: specific statuses, outputs untouched. */
    body = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_skills_body(sk, LIT("../skills-flat/triage"), &body, &err), TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_ERR(&err, TURNFIT_STATUS_UNSAFE_PATH, "turnfit_skills_body", "contains '..'");
    CHECK_STATUS(turnfit_skills_body(sk, LIT("/etc/passwd"), &body, NULL), TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_STATUS(turnfit_skills_body(sk, LIT("a\\b"), &body, NULL), TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_STATUS(turnfit_skills_body(sk, LIT("C:x"), &body, NULL), TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_STATUS(turnfit_skills_body(sk, LIT("a\0b"), &body, NULL), TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_STATUS(turnfit_skills_body(sk, LIT("pdf-extrakt"), &body, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_skills_body", "did you mean pdf-extract?");
    CHECK_STATUS(turnfit_skills_body(sk, LIT("pdf\xff"), &body, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK(body.ptr == SENT_PTR && body.len == SENT_SIZE);
    idx = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_skills_render_index(sk, LIT("{\"budget\":"), &idx, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_skills_render_index(sk, LIT("{\"budgte\":5}"), &idx, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_skills_render_index(sk, LIT("{\"budget\":1,\"preamble\":\"a long preamble\"}"), &idx, NULL),
                 TURNFIT_STATUS_DOES_NOT_FIT);
    CHECK(idx.ptr == SENT_PTR);

    turnfit_skills *sk2 = (turnfit_skills *)SENT_PTR;
    CHECK_STATUS(turnfit_skills_open(LIT("/nonexistent/turnfit"), NULL, 0, &sk2, &err), TURNFIT_STATUS_IO);
    CHECK_ERR(&err, TURNFIT_STATUS_IO, "turnfit_skills_open", "No such file or directory");
    CHECK_STATUS(turnfit_skills_open(LIT(SKILLS_DIR), LIT("{\"layout\":\"tree\"}"), &sk2, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_skills_open(LIT(SKILLS_DIR), LIT("{\"model\":\"gpt4o\"}"), &sk2, NULL), TURNFIT_STATUS_UNKNOWN_MODEL);
    CHECK_STATUS(turnfit_skills_open(LIT("\xff"), NULL, 0, &sk2, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_skills_open(NULL, 0, NULL, 0, &sk2, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_skills_open(NULL, 3, NULL, 0, &sk2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_open(LIT(SKILLS_DIR), NULL, 2, &sk2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_open(LIT(SKILLS_DIR), NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK(sk2 == (turnfit_skills *)SENT_PTR);
    CHECK_STATUS(turnfit_skills_list(NULL, &list, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_list(sk, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_body(NULL, LIT("pdf-extract"), &body, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_body(sk, NULL, 4, &body, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_body(sk, LIT("pdf-extract"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_render_index(NULL, NULL, 0, &idx, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_render_index(sk, NULL, 1, &idx, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_skills_render_index(sk, NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);

    /* One handle shared by threads: bodies load once and agree. */
    static const char *const names[] = {"code-review", "pdf-extract", "release-notes", "sql-migrations"};
    pthread_t th[8];
    skills_job jobs[8];
    int started[8] = {0};
    for (int i = 0; i < 8; i++) {
        jobs[i] = (skills_job){sk, names[i % 4], TURNFIT_STATUS_PANIC, 0, 0};
        started[i] = pthread_create(&th[i], NULL, skills_thread, &jobs[i]) == 0;
        CHECK(started[i]);
    }
    for (int i = 0; i < 8; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    for (int i = 0; i < 8; i++) {
        CHECK_STATUS(jobs[i].status, TURNFIT_STATUS_OK);
        CHECK(jobs[i].has_heading);
        CHECK_SIZE(jobs[i].len, jobs[(i + 4) % 8].len);
    }

    turnfit_skills_free(sk);
    turnfit_skills_free(NULL);
}

/* ------------------------------------------------------------------------ */
static const char kHandoff[] =
    "{\"version\":\"1.0\",\"task_summary\":\"Fix the flaky parser test.\","
    "\"key_outputs\":[\"Root cause: a shared buffer.\",{\"label\":\"log\",\"content\":\"test parser::threads FAILED\"}],"
    "\"metadata\":{\"from_agent\":\"planner\",\"to_agent\":\"coder\",\"created_at\":\"2026-03-01T12:00:00Z\",\"run\":4},"
    "\"custom_fields\":{\"ticket\":\"BUG-1\",\"n\":[1,{\"x\":null}]}}";

static void test_handoff(void)
{
    turnfit_error *err = NULL;
    turnfit_string out = SENT_STRING;
    CHECK_STATUS(turnfit_handoff_validate(LIT(kHandoff), &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"metadata\":{\"from_agent\":\"planner\",\"to_agent\":\"coder\",\"created_at\":\"2026-03-01T12:00:00Z\",\"run\":4}");
    CHECK_STR_CONTAINS(out, "\"custom_fields\":{\"ticket\":\"BUG-1\",\"n\":[1,{\"x\":null}]}");
    turnfit_string_free(&out);

    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"text\":\"<handoff version=\\\"1.0\\\" from=\\\"planner\\\" to=\\\"coder\\\"");
    CHECK_STR_CONTAINS(out, "- [log] test parser::threads FAILED\\n");
    CHECK_STR_CONTAINS(out, "\"shortened\":[],\"omitted\":[]");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), LIT("{\"budget\":5}"), &out, &err), TURNFIT_STATUS_DOES_NOT_FIT);
    CHECK_ERR(&err, TURNFIT_STATUS_DOES_NOT_FIT, "turnfit_handoff_render", "alone take");

    static const char kConv[] =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
        "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
        "\"function\":{\"name\":\"run\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"},"
        "{\"role\":\"assistant\",\"content\":\"done\"}]}";
    CHECK_STATUS(turnfit_handoff_filter(LIT(kConv), NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"conversation\":{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":\"done\"}]}");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_handoff_filter(LIT(kConv), LIT("{\"mode\":\"nest\"}"), &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "<previous_conversation>\\n[user] go\\n[assistant called run({}) id=c1]\\n");
    turnfit_string_free(&out);

    /* Failures. */
    out = (turnfit_string)SENT_STRING;
    /* The design's camelCase JSON without a version is valid; both spellings are not. */
    {
        turnfit_string camel = SENT_STRING;
        CHECK_STATUS(turnfit_handoff_validate(LIT("{\"taskSummary\":\"t\",\"keyOutputs\":[],\"metadata\":{"
                                                 "\"fromAgent\":\"a\",\"toAgent\":\"b\",\"createdAt\":\"2026-03-01T12:00:00Z\"}}"),
                                             &camel, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(camel, "\"version\":\"1.0\",\"task_summary\":\"t\"");
        turnfit_string_free(&camel);
        CHECK_STATUS(turnfit_handoff_validate(LIT("{\"taskSummary\":\"t\",\"task_summary\":\"t\"}"), &camel, NULL),
                     TURNFIT_STATUS_INVALID_JSON);
    }
    CHECK_STATUS(turnfit_handoff_validate(LIT("{\"version\":\"2.0\"}"), &out, &err), TURNFIT_STATUS_INVALID_JSON);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_handoff_validate", "unsupported version '2.0'");
    CHECK_STATUS(turnfit_handoff_validate(LIT("{\"version\":"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_handoff_validate(LIT("[\"\xff\"]"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_handoff_validate(NULL, 0, &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_handoff_validate(NULL, 2, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_validate(LIT(kHandoff), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), LIT("{\"budgte\":1}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), LIT("{\"model\":\"gpt4o\"}"), &out, NULL), TURNFIT_STATUS_UNKNOWN_MODEL);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), LIT("\xff"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_handoff_render(NULL, 1, NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), NULL, 1, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_render(LIT(kHandoff), NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_filter(LIT(kConv), LIT("{\"mode\":\"squash\"}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_handoff_filter(LIT("{\"messages\":5}"), NULL, 0, &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_handoff_filter(LIT("[\"\xff\"]"), NULL, 0, &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_handoff_filter(NULL, 1, NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_filter(LIT(kConv), NULL, 1, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_handoff_filter(LIT(kConv), NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK(out.ptr == SENT_PTR && out.len == SENT_SIZE);
}

/* ---- agent primitives: call stacks, recovery, tracer, tool sets --------- */

static void test_callstack(void)
{
    turnfit_error *err = NULL;
    turnfit_callstack *root = NULL, *s1 = NULL, *s2 = NULL, *s3 = NULL, *branch = NULL;
    CHECK_STATUS(turnfit_callstack_new(0, &root, &err), TURNFIT_STATUS_INVALID_ARGUMENT); /* ABI 2: 0 is an error */
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_callstack_new", "at least 1");
    CHECK_STATUS(turnfit_callstack_new(TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH, &root, &err), TURNFIT_STATUS_OK);
    if (!CHECK(root != NULL))
        return;
    CHECK_STATUS(turnfit_callstack_enter(root, LIT("planner"), &s1, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_callstack_enter(s1, LIT("coder"), &s2, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_callstack_enter(s2, LIT("reviewer"), &s3, &err), TURNFIT_STATUS_OK);
    CHECK_NO_ERR(err);

    /* A cycle: the error carries the whole chain; the output is untouched. */
    turnfit_callstack *again = (turnfit_callstack *)SENT_PTR;
    CHECK_STATUS(turnfit_callstack_enter(s3, LIT("planner"), &again, &err), TURNFIT_STATUS_CYCLE_DETECTED);
    CHECK_ERR(&err, TURNFIT_STATUS_CYCLE_DETECTED, "turnfit_callstack_enter", "planner -> coder -> reviewer -> planner");
    check_ptr_untouched_at(__LINE__, "again", again);
    /* A self-handoff is a cycle too. */
    CHECK_STATUS(turnfit_callstack_enter(s3, LIT("reviewer"), &again, &err), TURNFIT_STATUS_CYCLE_DETECTED);
    CHECK_ERR(&err, TURNFIT_STATUS_CYCLE_DETECTED, "turnfit_callstack_enter", "reviewer -> reviewer");

    /* Branches are independent; the stack entered from is unchanged. */
    CHECK_STATUS(turnfit_callstack_enter(s1, LIT("reviewer"), &branch, &err), TURNFIT_STATUS_OK);
    turnfit_string j = SENT_STRING;
    CHECK_STATUS(turnfit_callstack_to_json(branch, &j, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(j.ptr, j.len, "{\"agents\":[\"planner\",\"reviewer\"],\"depth\":2,\"max_depth\":5}",
                strlen("{\"agents\":[\"planner\",\"reviewer\"],\"depth\":2,\"max_depth\":5}"));
    turnfit_string_free(&j);
    CHECK_STATUS(turnfit_callstack_to_json(s1, &j, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(j, "\"agents\":[\"planner\"],\"depth\":1");
    turnfit_string_free(&j);

    /* Freeing the parents first leaves the deeper stack valid (shared frames). */
    turnfit_callstack_free(root);
    turnfit_callstack_free(s1);
    turnfit_callstack_free(s2);
    CHECK_STATUS(turnfit_callstack_to_json(s3, &j, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(j, "[\"planner\",\"coder\",\"reviewer\"]");

    /* Round trip through JSON. */
    turnfit_callstack *back = NULL;
    CHECK_STATUS(turnfit_callstack_from_json(j.ptr, j.len, &back, &err), TURNFIT_STATUS_OK);
    turnfit_string_free(&j);
    CHECK_STATUS(turnfit_callstack_enter(back, LIT("coder"), &again, &err), TURNFIT_STATUS_CYCLE_DETECTED);
    CHECK_ERR(&err, TURNFIT_STATUS_CYCLE_DETECTED, "turnfit_callstack_enter", "coder -> reviewer -> coder");
    turnfit_callstack_free(back);

    /* Depth. */
    turnfit_callstack *d1 = NULL, *d2 = NULL;
    CHECK_STATUS(turnfit_callstack_new(1, &d1, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_callstack_enter(d1, LIT("a"), &d2, &err), TURNFIT_STATUS_OK);
    again = (turnfit_callstack *)SENT_PTR;
    CHECK_STATUS(turnfit_callstack_enter(d2, LIT("b"), &again, &err), TURNFIT_STATUS_DEPTH_EXCEEDED);
    CHECK_ERR(&err, TURNFIT_STATUS_DEPTH_EXCEEDED, "turnfit_callstack_enter", "a -> b");
    check_ptr_untouched_at(__LINE__, "again", again);
    turnfit_callstack_free(d1);
    turnfit_callstack_free(d2);

    /* Errors: limits, JSON, UTF-8, names, NULLs. */
    CHECK_STATUS(turnfit_callstack_new(2000000, &again, &err), TURNFIT_STATUS_LIMIT_EXCEEDED);
    CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_callstack_new", "1000000");
    CHECK_STATUS(turnfit_callstack_from_json(LIT("{\"agents\":[\"a\",\"a\"]}"), &again, NULL), TURNFIT_STATUS_CYCLE_DETECTED);
    CHECK_STATUS(turnfit_callstack_from_json(LIT("{\"agents\":"), &again, &err), TURNFIT_STATUS_INVALID_JSON);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_callstack_from_json", "line 1");
    CHECK_STATUS(turnfit_callstack_from_json(LIT("{\"agents\":[\"\xc3\"]}"), &again, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_callstack_enter(s3, LIT("\xe2\x82"), &again, &err), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_UTF8, "turnfit_callstack_enter", "byte offset 0");
    CHECK_STATUS(turnfit_callstack_enter(s3, NULL, 0, &again, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_enter(s3, LIT("tab\there"), &again, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_enter(s3, NULL, 3, &again, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_enter(NULL, LIT("x"), &again, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_enter(s3, LIT("x"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_new(3, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_from_json(NULL, 2, &again, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_from_json(LIT("{\"agents\":[]}"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_to_json(NULL, &j, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_callstack_to_json(s3, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_ptr_untouched_at(__LINE__, "again", again);
    turnfit_callstack_free(NULL);
    turnfit_callstack_free(s3);
    turnfit_callstack_free(branch);
}

static void test_recovery(void)
{
    turnfit_error *err = NULL;
    turnfit_string out = SENT_STRING;
    static const char kOverloaded[] = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
    CHECK_STATUS(turnfit_recovery_classify(LIT("anthropic"), 529, LIT(kOverloaded), NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"category\":\"overloaded\"");
    CHECK_STR_CONTAINS(out, "\"action\":\"retry\"");
    CHECK_STR_CONTAINS(out, "\"retryable\":true");
    turnfit_string_free(&out);

    static const char kContext[] =
        "{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130532 tokens.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
        "\"code\":\"context_length_exceeded\"}}";
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 400, LIT(kContext), NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"category\":\"context_overflow\"");
    CHECK_STR_CONTAINS(out, "\"action\":\"compact\"");
    CHECK_STR_CONTAINS(out, "\"retry_after_ms\":null");
    turnfit_string_free(&out);

    static const char kToolUse[] =
        "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.2: `tool_use` ids "
        "were found without `tool_result` blocks immediately after: toolu_01A. Each `tool_use` block must have a "
        "corresponding `tool_result` block in the next message.\"}}";
    CHECK_STATUS(turnfit_recovery_classify(LIT("anthropic"), 400, LIT(kToolUse), NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"action\":\"repair_history\"");
    CHECK_STR_CONTAINS(out, "\"tool_call_ids\":[\"toolu_01A\"]");
    turnfit_string_free(&out);

    /* Headers: Retry-After in seconds, names case-insensitive; no body at all. */
    CHECK_STATUS(turnfit_recovery_classify(LIT("anthropic"), 429, NULL, 0, LIT("{\"Retry-After\":\"3\"}"), &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"retry_after_ms\":3000");
    CHECK_STR_CONTAINS(out, "\"delay_source\":\"retry_after_header\"");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_recovery_classify(LIT("bedrock"), 400, LIT("{\"message\":\"Input is too long for requested model.\"}"),
                                          LIT("{\"x-amzn-ErrorType\":\"ValidationException:http://internal.amazon.com/\"}"),
                                          &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"category\":\"context_overflow\"");
    CHECK_STR_CONTAINS(out, "\"code\":\"ValidationException\"");
    turnfit_string_free(&out);
    CHECK_NO_ERR(err);

    /* The error's context (document 000's ErrorContext) is echoed beside the verdict. */
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("other"), 0, LIT("Rate limit exceeded"), NULL, 0,
                                              LIT("{\"agent_id\":\"narrator\",\"workflow_id\":\"wf-7\",\"metadata\":{\"turn\":3}}"),
                                              &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"category\":\"rate_limited\"");
    CHECK_STR_CONTAINS(out, "\"agent_id\":\"narrator\",\"workflow_id\":\"wf-7\",\"metadata\":{\"turn\":3}");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, NULL, 0, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"agent_id\":null,\"workflow_id\":null,\"metadata\":null");
    turnfit_string_free(&out);
    CHECK_NO_ERR(err);
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, LIT("{\"workflow_id\":\"\"}"), &out, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_recovery_classify_in", "workflow_id is empty");
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, LIT("{\"metadata\":[1]}"), &out, NULL),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, LIT("{\"agent_id\":\"\xff\"}"), &out, NULL),
                 TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("acme"), 500, NULL, 0, NULL, 0, NULL, 0, &out, NULL),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, NULL, 1, &out, NULL),
                 TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_classify_in(LIT("openai"), 500, NULL, 0, NULL, 0, NULL, 0, NULL, NULL),
                 TURNFIT_STATUS_NULL_ARGUMENT);
    check_string_untouched_at(__LINE__, "out", out);

    /* Failures leave the output untouched. */
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_recovery_classify(LIT("acme"), 500, NULL, 0, NULL, 0, &out, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_recovery_classify", "unknown provider 'acme'");
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 70000, NULL, 0, NULL, 0, &out, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_recovery_classify", "70000");
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 429, NULL, 0, LIT("{\"retry-after\":3}"), &out, NULL),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 429, NULL, 0, LIT("[1"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 500, LIT("oops \xff"), NULL, 0, &out, &err), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_UTF8, "turnfit_recovery_classify", "byte offset 5");
    CHECK_STATUS(turnfit_recovery_classify(LIT("open\xc0i"), 500, NULL, 0, NULL, 0, &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 500, NULL, 0, LIT("{\"a\":\"\xed\xa0\x80\"}"), &out, NULL),
                 TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_recovery_classify(NULL, 1, 500, NULL, 0, NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 500, NULL, 1, NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 500, NULL, 0, NULL, 1, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_classify(LIT("openai"), 500, NULL, 0, NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_string_untouched_at(__LINE__, "out", out);

    /* Backoff: the figure is the Python reference's (tests/vectors/recovery.json). */
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"failed_attempts\":1,\"seed\":1}"), &out, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(out.ptr, out.len, "{\"decision\":\"retry\",\"delay_ms\":141}", strlen("{\"decision\":\"retry\",\"delay_ms\":141}"));
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"failed_attempts\":2,\"seed\":9,\"retry_after_ms\":45000}"), &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"delay_ms\":45000");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"policy\":{\"max_attempts\":2},\"failed_attempts\":2}"), &out, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"decision\":\"give_up\"");
    turnfit_string_free(&out);
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"policy\":{\"base_ms\":10,\"cap_ms\":5},\"failed_attempts\":1}"), &out, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_recovery_backoff", "cap_ms 5 is below base_ms 10");
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"seed\":1}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{\"failed_attempts\":1,\"x\":\"\xf0\x9f\"}"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_recovery_backoff(NULL, 4, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_recovery_backoff(LIT("{}"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_string_untouched_at(__LINE__, "out", out);

    /* Circuit breaker: closed -> open -> half-open -> closed, per key. */
    turnfit_breaker *b = NULL;
    CHECK_STATUS(turnfit_breaker_new(LIT("{\"failure_threshold\":2,\"cool_down_ms\":100}"), &b, &err), TURNFIT_STATUS_OK);
    if (!CHECK(b != NULL))
        return;
    bool allowed = false;
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("openai"), 0, &allowed, &err), TURNFIT_STATUS_OK);
    CHECK(allowed);
    CHECK_STATUS(turnfit_breaker_record_failure(b, LIT("openai"), 1, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_breaker_record_failure(b, LIT("openai"), 2, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("openai"), 50, &allowed, &err), TURNFIT_STATUS_OK);
    CHECK(!allowed);
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("anthropic"), 50, &allowed, &err), TURNFIT_STATUS_OK);
    CHECK(allowed);
    CHECK_STATUS(turnfit_breaker_state(b, LIT("openai"), 52, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"state\":\"open\"");
    CHECK_STR_CONTAINS(out, "\"retry_in_ms\":50");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("openai"), 102, &allowed, &err), TURNFIT_STATUS_OK);
    CHECK(allowed); /* the probe */
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("openai"), 103, &allowed, &err), TURNFIT_STATUS_OK);
    CHECK(!allowed); /* one probe at a time */
    CHECK_STATUS(turnfit_breaker_record_success(b, LIT("openai"), 110, &err), TURNFIT_STATUS_OK);
    /* ABI 2: the _state variants report the state after the call. */
    {
        uint32_t phase = 99;
        CHECK_STATUS(turnfit_breaker_record_success_state(b, LIT("openai"), 110, &phase, &err), TURNFIT_STATUS_OK);
        CHECK_SIZE(phase, TURNFIT_BREAKER_PHASE_CLOSED);
        CHECK_STATUS(turnfit_breaker_record_failure_state(b, LIT("fresh"), 110, &phase, &err), TURNFIT_STATUS_OK);
        CHECK_SIZE(phase, TURNFIT_BREAKER_PHASE_CLOSED);
        CHECK_STATUS(turnfit_breaker_record_failure_state(b, LIT("fresh"), 111, &phase, &err), TURNFIT_STATUS_OK);
        CHECK_SIZE(phase, TURNFIT_BREAKER_PHASE_OPEN);
        phase = 99;
        CHECK_STATUS(turnfit_breaker_record_success_state(b, LIT("fresh"), 112, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_record_failure_state(NULL, LIT("fresh"), 112, &phase, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_SIZE(phase, 99);
    }
    CHECK_STATUS(turnfit_breaker_state(b, LIT("openai"), 110, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"state\":\"closed\"");
    turnfit_string_free(&out);
    CHECK_NO_ERR(err);

    bool sent;
    memset(&sent, SENT_BOOL_BYTE, sizeof sent);
    CHECK_STATUS(turnfit_breaker_allow(b, NULL, 0, 0, &sent, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_breaker_allow", "key is empty");
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("k\xff"), 0, &sent, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_breaker_allow(b, NULL, 1, 0, &sent, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_allow(NULL, LIT("k"), 0, &sent, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_bool_untouched_at(__LINE__, "sent", &sent);
    CHECK_STATUS(turnfit_breaker_allow(b, LIT("k"), 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_record_success(NULL, LIT("k"), 0, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_record_success(b, LIT("\xc3\x28"), 0, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_breaker_record_failure(NULL, LIT("k"), 0, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_record_failure(b, NULL, 0, 0, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_breaker_record_failure", "key is empty");
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_breaker_state(NULL, LIT("k"), 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_state(b, LIT("k"), 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_state(b, LIT("\xff"), 0, &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    check_string_untouched_at(__LINE__, "out", out);

    /* Error context: failures counted per agent and workflow; a bad context records nothing. */
    {
        uint32_t phase = 99;
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx"), LIT("{\"agent_id\":\"narrator\",\"workflow_id\":\"wf-7\"}"),
                                                       200, &phase, &err),
                     TURNFIT_STATUS_OK);
        CHECK_SIZE(phase, TURNFIT_BREAKER_PHASE_CLOSED);
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx"), NULL, 0, 201, &phase, &err), TURNFIT_STATUS_OK);
        CHECK_SIZE(phase, TURNFIT_BREAKER_PHASE_OPEN);
        CHECK_STATUS(turnfit_breaker_failure_counts(b, &out, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(out, "{\"by_agent\":{\"narrator\":1},\"by_workflow\":{\"wf-7\":1},\"unattributed\":0}");
        turnfit_string_free(&out);
        phase = 99;
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx2"), LIT("{\"agent_id\":\"\"}"), 202, &phase, &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_breaker_record_failure_in", "agent_id is empty");
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx2"), LIT("{\"agent\":1}"), 202, &phase, NULL),
                     TURNFIT_STATUS_INVALID_JSON);
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx2"), NULL, 1, 202, &phase, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("ctx2"), NULL, 0, 202, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_record_failure_in(NULL, LIT("ctx2"), NULL, 0, 202, &phase, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, NULL, 0, NULL, 0, 202, &phase, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_record_failure_in(b, LIT("\xff"), NULL, 0, 202, &phase, NULL), TURNFIT_STATUS_INVALID_UTF8);
        CHECK_SIZE(phase, 99);
        CHECK_STATUS(turnfit_breaker_state(b, LIT("ctx2"), 203, &out, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(out, "\"consecutive_failures\":0");
        turnfit_string_free(&out);
        out = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_breaker_failure_counts(NULL, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_breaker_failure_counts(b, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        check_string_untouched_at(__LINE__, "out", out);
    }
    turnfit_breaker_free(b);

    turnfit_breaker *b2 = (turnfit_breaker *)SENT_PTR;
    CHECK_STATUS(turnfit_breaker_new(LIT("{\"failure_threshold\":0}"), &b2, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_breaker_new", "failure_threshold");
    CHECK_STATUS(turnfit_breaker_new(LIT("{\"cooldown\":1}"), &b2, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_breaker_new(LIT("{\"\xff\":1}"), &b2, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_breaker_new(NULL, 1, &b2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_breaker_new(NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_ptr_untouched_at(__LINE__, "b2", b2);
    CHECK_STATUS(turnfit_breaker_new(NULL, 0, &b2, NULL), TURNFIT_STATUS_OK); /* defaults */
    turnfit_breaker_free(b2);
    turnfit_breaker_free(NULL);
}

#define TRACE_THREADS 8
#define TRACE_ITERS 400

typedef struct {
    turnfit_tracer *tracer;
    int id;
    long failures;
} trace_worker;

static void *trace_worker_main(void *arg)
{
    trace_worker *w = arg;
    char info[128];
    for (long i = 0; i < TRACE_ITERS; i++) {
        snprintf(info, sizeof info, "{\"agent_id\":\"agent-%d\",\"tool_call_id\":\"call-%d-%ld\"}", w->id, w->id, i);
        const char *tool = (i % 2 == 0) ? "shared_tool" : "read_file";
        uint64_t span = 0;
        if (turnfit_tracer_start(w->tracer, STR(tool), STR(info), 10, (uint64_t)i * 100, &span, NULL) != TURNFIT_STATUS_OK) {
            w->failures++;
            continue;
        }
        const uint32_t outcome = (i % 10 == 0) ? TURNFIT_SPAN_OUTCOME_FAILED : TURNFIT_SPAN_OUTCOME_SUCCESS;
        if (turnfit_tracer_end(w->tracer, span, outcome, 20, NULL, 0, (uint64_t)i * 100 + 50, NULL) != TURNFIT_STATUS_OK)
            w->failures++;
        /* Ending twice is an error on every thread, never a crash. */
        if (i % 50 == 0 && turnfit_tracer_end(w->tracer, span, 0, 0, NULL, 0, 0, NULL) != TURNFIT_STATUS_INVALID_ARGUMENT)
            w->failures++;
    }
    return NULL;
}

static void test_tracer(void)
{
    turnfit_error *err = NULL;
    CHECK(turnfit_clock_now_us() > UINT64_C(1577836800000000)); /* after 2020 */
    turnfit_tracer *t = NULL;
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"ring_size\":16,\"timeouts\":{\"slow\":5}}"), &t, &err), TURNFIT_STATUS_OK);
    if (!CHECK(t != NULL))
        return;
    uint64_t id = 0, slow = 0, plain = 0;
    CHECK_STATUS(turnfit_tracer_start(t, LIT("grep"), LIT("{\"agent_id\":\"coder\",\"tool_call_id\":\"call_1\"}"), 10, 1000,
                                     &id, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_end(t, id, TURNFIT_SPAN_OUTCOME_SUCCESS, 20, NULL, 0, 3500, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("slow"), LIT("{\"tool_call_id\":\"call_9\"}"), 0, 0, &slow, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("slow"), NULL, 0, 0, 0, &plain, &err), TURNFIT_STATUS_OK);
    CHECK(slow != plain && slow != id);
    CHECK_NO_ERR(err);

    turnfit_string out = SENT_STRING;
    CHECK_STATUS(turnfit_tracer_overdue(t, 5000, &out, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(out.ptr, out.len, "{\"overdue\":[],\"interrupted_results\":[]}",
                strlen("{\"overdue\":[],\"interrupted_results\":[]}"));
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_tracer_overdue(t, 5001, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"tool_call_id\":\"call_9\"");
    CHECK_STR_CONTAINS(out, "\"content\":\"Tool call was interrupted before it returned.\"");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_tracer_expire(t, 6000, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"reason\":\"deadline of 5 ms exceeded\"");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_tracer_end(t, slow, TURNFIT_SPAN_OUTCOME_SUCCESS, 0, NULL, 0, 7000, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_end", "is not open");

    CHECK_STATUS(turnfit_tracer_export(t, 7000, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"spans_started\":3,\"spans_ended\":3");
    CHECK_STR_CONTAINS(out, "\"tool\":\"grep\",\"count\":1,\"successes\":1");
    CHECK_STR_CONTAINS(out, "\"p50\":2500");
    CHECK_STR_CONTAINS(out, "\"tool\":\"slow\",\"count\":2,\"successes\":0,\"errors\":0,\"timeouts\":2");
    turnfit_string_free(&out);

    /* Failures. */
    uint64_t sid = SENT_SIZE;
    CHECK_STATUS(turnfit_tracer_start(t, NULL, 0, NULL, 0, 0, 0, &sid, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_start", "tool name is empty");
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x"), LIT("{\"agent\":\"a\"}"), 0, 0, &sid, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x"), LIT("{\"timeout_ms\":0}"), 0, 0, &sid, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x\xfe"), NULL, 0, 0, 0, &sid, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x"), LIT("{\"agent_id\":\"\xc3\"}"), 0, 0, &sid, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_tracer_start(NULL, LIT("x"), NULL, 0, 0, 0, &sid, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_start(t, NULL, 1, NULL, 0, 0, 0, &sid, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x"), NULL, 1, 0, 0, &sid, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("x"), NULL, 0, 0, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_SIZE(sid, SENT_SIZE);
    CHECK_STATUS(turnfit_tracer_start(t, LIT("grep"), NULL, 0, 0, 0, &id, NULL), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_end(t, id, 4, 0, NULL, 0, 1, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_end", "outcome 4 is not a turnfit_span_outcome");
    CHECK_STATUS(turnfit_tracer_end(t, id, TURNFIT_SPAN_OUTCOME_FAILED, 0, LIT("bad \xff"), 1, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_tracer_end(t, id, TURNFIT_SPAN_OUTCOME_FAILED, 0, NULL, 3, 1, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_end(NULL, id, TURNFIT_SPAN_OUTCOME_FAILED, 0, NULL, 0, 1, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    /* The failed calls above left the span open; it still ends normally. */
    CHECK_STATUS(turnfit_tracer_end(t, id, TURNFIT_SPAN_OUTCOME_CANCELLED, 0, LIT("stopped by user"), 2, &err), TURNFIT_STATUS_OK);
    /* end_with: token usage and error categories summed per tool, metadata on the record. */
    CHECK_STATUS(turnfit_tracer_start(t, LIT("llm_tool"), LIT("{\"tool_call_id\":\"u1\"}"), 0, 0, &id, &err), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, TURNFIT_SPAN_OUTCOME_FAILED, LIT("{\"metadata\":{\"k\":[1]}}"), 1, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_end_with", "string, number, bool or null");
    CHECK_STATUS(turnfit_tracer_end_with(t, id, TURNFIT_SPAN_OUTCOME_FAILED, LIT("{\"tokens\":1}"), 1, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, 9, NULL, 0, 1, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, 1, LIT("{\"error\":\"\xff\"}"), 1, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_tracer_end_with(NULL, id, 1, NULL, 0, 1, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, 1, NULL, 4, 1, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, TURNFIT_SPAN_OUTCOME_FAILED,
                                        LIT("{\"error\":\"429\",\"error_category\":\"rate_limited\",\"input_tokens\":1200,"
                                            "\"output_tokens\":30,\"metadata\":{\"model\":\"gpt-4o-mini\"}}"),
                                        50, &err),
                 TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_tracer_end_with(t, id, TURNFIT_SPAN_OUTCOME_SUCCESS, NULL, 0, 60, NULL), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_export(t, 100, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"input_tokens\":1200,\"output_tokens\":30,\"error_categories\":{\"rate_limited\":1}");
    CHECK_STR_CONTAINS(out, "\"metadata\":{\"model\":\"gpt-4o-mini\"}");
    turnfit_string_free(&out);
    /* A finished span by id (issue 34); an unknown id is null. */
    CHECK_STATUS(turnfit_tracer_span(t, id, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"error_category\":\"rate_limited\"");
    turnfit_string_free(&out);
    CHECK_STATUS(turnfit_tracer_span(t, 999999, &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "null");
    turnfit_string_free(&out);
    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_tracer_overdue(NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_overdue(t, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_expire(NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_expire(t, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_export(NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_export(t, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_span(NULL, 0, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_span(t, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_string_untouched_at(__LINE__, "out", out);
    turnfit_tracer *t2 = (turnfit_tracer *)SENT_PTR;
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"ring_size\":0}"), &t2, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_new", "ring_size");
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"ring_size\":1000001}"), &t2, NULL), TURNFIT_STATUS_LIMIT_EXCEEDED);
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"ring_size\":"), &t2, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"timeouts\":{\"\xff\":1}}"), &t2, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_tracer_new(NULL, 5, &t2, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_tracer_new(NULL, 0, NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_ptr_untouched_at(__LINE__, "t2", t2);
    turnfit_tracer_free(NULL);
    turnfit_tracer_free(t);

    /* Threads: one tracer shared by TRACE_THREADS threads. */
    turnfit_tracer *shared = NULL;
    CHECK_STATUS(turnfit_tracer_new(LIT("{\"ring_size\":32}"), &shared, NULL), TURNFIT_STATUS_OK);
    if (!CHECK(shared != NULL))
        return;
    trace_worker workers[TRACE_THREADS];
    pthread_t threads[TRACE_THREADS];
    bool started[TRACE_THREADS];
    for (int i = 0; i < TRACE_THREADS; i++) {
        workers[i] = (trace_worker){shared, i, 0};
        started[i] = pthread_create(&threads[i], NULL, trace_worker_main, &workers[i]) == 0;
        CHECK(started[i]);
    }
    for (int i = 0; i < TRACE_THREADS; i++) {
        if (!started[i])
            continue;
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(workers[i].failures == 0);
    }
    CHECK_STATUS(turnfit_tracer_export(shared, 0, &out, NULL), TURNFIT_STATUS_OK);
    char expect[128];
    snprintf(expect, sizeof expect, "\"spans_started\":%d,\"spans_ended\":%d", TRACE_THREADS * TRACE_ITERS,
             TRACE_THREADS * TRACE_ITERS);
    CHECK_STR_CONTAINS(out, expect);
    snprintf(expect, sizeof expect, "\"tool\":\"shared_tool\",\"count\":%d,\"successes\":%d,\"errors\":%d",
             TRACE_THREADS * TRACE_ITERS / 2, TRACE_THREADS * TRACE_ITERS / 2 - TRACE_THREADS * TRACE_ITERS / 10,
             TRACE_THREADS * TRACE_ITERS / 10);
    CHECK_STR_CONTAINS(out, expect);
    CHECK_STR_CONTAINS(out, "\"open\":[]");
    turnfit_string_free(&out);
    turnfit_tracer_free(shared);
}

static void test_toolset(void)
{
    turnfit_error *err = NULL;
    turnfit_string out = SENT_STRING;
    static const char kReq[] =
        "{\"model\":\"gpt-4o\",\"tools\":["
        "{\"type\":\"function\",\"function\":{\"name\":\"fs_read\",\"description\":\"Read a file\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}}},"
        "{\"name\":\"run_tests\",\"description\":\"Run the tests\",\"input_schema\":{\"type\":\"object\"}}],"
        "\"allowlists\":{\"reviewer\":[\"fs_read\"],\"coder\":[\"*\"]}}";
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT(kReq), &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"tool_count\":2");
    CHECK_STR_CONTAINS(out, "\"agent\":\"reviewer\",\"tools\":[\"fs_read\"]");
    CHECK_STR_CONTAINS(out, "\"agent\":\"coder\",\"tools\":[\"fs_read\",\"run_tests\"]");
    CHECK_STR_CONTAINS(out, "\"saved_tokens\":0,\"percent_of_full\":100.0");
    turnfit_string_free(&out);
    turnfit_registry *reg = NULL;
    CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_toolset_report(reg, LIT(kReq), &out, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(out, "\"exact\":true");
    turnfit_string_free(&out);

    static const char kPicked[] =
        "[{\"type\":\"function\",\"function\":{\"name\":\"fs_read\",\"description\":\"Read a file\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}}}]";
    CHECK_STATUS(turnfit_toolset_select(LIT(kReq), LIT("reviewer"), &out, &err), TURNFIT_STATUS_OK);
    CHECK_BYTES(out.ptr, out.len, kPicked, sizeof kPicked - 1);
    turnfit_string_free(&out);
    CHECK_NO_ERR(err);

    out = (turnfit_string)SENT_STRING;
    CHECK_STATUS(turnfit_toolset_select(LIT(kReq), LIT("tester"), &out, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_toolset_select", "agent 'tester' has no allowlist");
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT("{\"tools\":[{\"name\":\"fs_read\"}],\"allowlists\":{\"a\":[\"fs_raed\"]}}"),
                                       &out, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_toolset_report", "did you mean 'fs_read'?");
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT("{\"model\":\"no-such-model\",\"tools\":[]}"), &out, NULL),
                 TURNFIT_STATUS_UNKNOWN_MODEL);
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT("{\"tools\":5}"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT("{\"tools\":[{\"name\":\"\xff\"}]}"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_toolset_report(NULL, NULL, 2, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_toolset_report(NULL, LIT(kReq), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_toolset_select(LIT(kReq), LIT("rev\xe0"), &out, NULL), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_STATUS(turnfit_toolset_select(LIT("{\"tools\":[}"), LIT("a"), &out, NULL), TURNFIT_STATUS_INVALID_JSON);
    CHECK_STATUS(turnfit_toolset_select(NULL, 1, LIT("a"), &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_toolset_select(LIT(kReq), NULL, 1, &out, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(turnfit_toolset_select(LIT(kReq), LIT("reviewer"), NULL, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
    check_string_untouched_at(__LINE__, "out", out);
    turnfit_registry_free(reg);
}

/*
 * Documented limits (core/src/limits.rs) at the limit and one past, through
 * the ABI: JSON size (64 MiB), JSON nesting (127 levels), text size (64 MiB)
 * and message count (100,000 per conversation and per window). Inputs are
 * built in memory; each one-past case is refused before the expensive work
 * (the size checks before reading, the message count while parsing).
 */
static char *limits_buffer(size_t n)
{
    char *b = (char *)malloc(n);
    if (!CHECK(b != NULL))
        exit(1);
    return b;
}

/* n copies of {"role":"user","content":"x"} as a JSON array. */
static char *limits_messages(size_t n, size_t *out_len)
{
    static const char one[] = "{\"role\":\"user\",\"content\":\"x\"}";
    const size_t m = sizeof one - 1;
    char *doc = limits_buffer(2 + n * (m + 1));
    char *p = doc;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        memcpy(p, one, m);
        p += m;
    }
    *p++ = ']';
    *out_len = (size_t)(p - doc);
    return doc;
}

static void test_limits(void)
{
    turnfit_error *err = NULL;
    turnfit_window *w = NULL;
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"context_window\":10000000}"), &w, &err),
                 TURNFIT_STATUS_OK);
    if (!CHECK(w != NULL))
        return;

    /* JSON size: an empty conversation padded with spaces to exactly 64 MiB
     * loads; one byte more is refused before it is read. */
    {
        const size_t max = (size_t)64 * 1024 * 1024;
        char *doc = limits_buffer(max + 1);
        memset(doc, ' ', max + 1);
        doc[0] = '[';
        doc[max - 1] = ']';
        CHECK_STATUS(turnfit_window_load(w, doc, max, &err), TURNFIT_STATUS_OK);
        CHECK_NO_ERR(err);
        doc[max - 1] = ' ';
        doc[max] = ']';
        CHECK_STATUS(turnfit_window_load(w, doc, max + 1, &err), TURNFIT_STATUS_LIMIT_EXCEEDED);
        CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_window_load", "is 67108865 bytes; the limit is 67108864");
        free(doc);
    }

    /* JSON nesting: a message's unknown field nested so that the document is
     * 127 levels deep loads; 128 levels are refused. */
    {
        static const char head[] = "[{\"role\":\"user\",\"content\":\"x\",\"extra\":";
        static const char tail[] = "}]";
        for (size_t extra = 125; extra <= 126; extra++) {
            char doc[sizeof head + 2 * 126 + sizeof tail];
            size_t n = 0;
            memcpy(doc, head, sizeof head - 1);
            n += sizeof head - 1;
            memset(doc + n, '[', extra);
            n += extra;
            memset(doc + n, ']', extra);
            n += extra;
            memcpy(doc + n, tail, sizeof tail - 1);
            n += sizeof tail - 1;
            if (extra == 125) {
                CHECK_STATUS(turnfit_window_load(w, doc, n, &err), TURNFIT_STATUS_OK);
            } else {
                CHECK_STATUS(turnfit_window_load(w, doc, n, &err), TURNFIT_STATUS_LIMIT_EXCEEDED);
                CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_window_load", "recursion limit exceeded");
            }
        }
    }

    /* Text size: exactly 64 MiB is accepted (counting stops past 10 tokens);
     * one byte more is refused (test_tokenizer_basics checks that for every
     * text-taking tokenizer function). */
    {
        const size_t max = (size_t)64 * 1024 * 1024;
        turnfit_tokenizer *t = tokenizer_new_ok(__LINE__, "cl100k_base", 0);
        char *text = limits_buffer(max + 1);
        memset(text, 'a', max + 1);
        for (size_t i = 7; i < max + 1; i += 8)
            text[i] = ' ';
        size_t count = SENT_SIZE;
        bool exceeded = false;
        if (t) {
            CHECK_STATUS(turnfit_tokenizer_count_until_limit(t, text, max, 10, &count, &exceeded, &err),
                         TURNFIT_STATUS_OK);
            CHECK(exceeded);
            CHECK_STATUS(turnfit_tokenizer_count_until_limit(t, text, max + 1, 10, &count, &exceeded, &err),
                         TURNFIT_STATUS_LIMIT_EXCEEDED);
            CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_tokenizer_count_until_limit", "the limit is 67108864");
        }
        free(text);
        turnfit_tokenizer_free(t);
    }

    /* Message count: 100,000 messages load; the window then refuses a push;
     * 100,001 are refused by load and by fit while parsing. */
    {
        size_t len = 0;
        char *doc = limits_messages(100000, &len);
        CHECK_STATUS(turnfit_window_load(w, doc, len, &err), TURNFIT_STATUS_OK);
        size_t tokens = SENT_SIZE;
        CHECK_STATUS(turnfit_window_push(w, LIT("{\"role\":\"user\",\"content\":\"x\"}"), &tokens, &err),
                     TURNFIT_STATUS_LIMIT_EXCEEDED);
        CHECK_SIZE(tokens, SENT_SIZE);
        CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_window_push",
                  "the window would hold 100001 messages; the limit is 100000 (MAX_MESSAGES)");
        free(doc);
        doc = limits_messages(100001, &len);
        CHECK_STATUS(turnfit_window_load(w, doc, len, &err), TURNFIT_STATUS_LIMIT_EXCEEDED);
        CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_window_load", "the limit is 100000 (MAX_MESSAGES)");
        turnfit_string out_c = SENT_STRING, out_r = SENT_STRING;
        CHECK_STATUS(turnfit_fit(NULL, doc, len, LIT("{\"model\":\"gpt-4o\"}"), &out_c, &out_r, &err),
                     TURNFIT_STATUS_LIMIT_EXCEEDED);
        CHECK(out_c.ptr == SENT_PTR && out_r.ptr == SENT_PTR);
        CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_fit", "has more than 100000 messages");
        free(doc);
    }
    turnfit_window_free(w);
}

/* Events: one callback per handle; each kind arrives with its number and a
 * NUL-terminated JSON payload, on this thread, before the call returns. The
 * window callback calls back into its own window (no lock is held), which
 * must neither deadlock nor fail. */
typedef struct {
    int count;
    uint32_t kinds[64];
    char payloads[64][512];
    turnfit_window *reenter;
    int nested_ok;
    int bad_payload;
} event_log;

static void on_event(void *user, uint32_t kind, const char *payload, size_t len)
{
    event_log *log = (event_log *)user;
    if (payload == NULL || payload[len] != '\0' || len == 0 || payload[0] != '{')
        log->bad_payload++;
    if (log->count < 64) {
        size_t n = len < 511 ? len : 511;
        memcpy(log->payloads[log->count], payload, n);
        log->payloads[log->count][n] = '\0';
        log->kinds[log->count] = kind;
    }
    log->count++;
    if (log->reenter != NULL) {
        turnfit_string pre = {NULL, 0};
        if (turnfit_window_preflight(log->reenter, NULL, 0, &pre, NULL) == TURNFIT_STATUS_OK)
            log->nested_ok++;
        turnfit_string_free(&pre);
    }
}

/* The index of the first event of `kind` at or after `from`, or -1. */
static int find_event(const event_log *log, int from, uint32_t kind)
{
    for (int i = from; i < log->count && i < 64; i++)
        if (log->kinds[i] == kind)
            return i;
    return -1;
}

static void push_words(turnfit_window *w, size_t words)
{
    static char buf[8192];
    size_t at = (size_t)snprintf(buf, sizeof buf, "{\"role\":\"user\",\"content\":\"");
    for (size_t i = 0; i < words && at + 8 < sizeof buf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "word ");
    at += (size_t)snprintf(buf + at, sizeof buf - at, "\"}");
    size_t tokens = 0;
    CHECK_STATUS(turnfit_window_push(w, buf, at, &tokens, NULL), TURNFIT_STATUS_OK);
}

static void test_events(void)
{
    CHECK(strcmp(turnfit_event_kind_name(TURNFIT_EVENT_COMPACTED), "compacted") == 0);
    CHECK(strcmp(turnfit_event_kind_name(TURNFIT_EVENT_SKILL_SKIPPED), "skill_skipped") == 0);
    CHECK(strcmp(turnfit_event_kind_name(TURNFIT_EVENT_SPAN_FINISHED), "span_finished") == 0);
    CHECK(strcmp(turnfit_event_kind_name(0), "unrecognized") == 0);
    CHECK(strcmp(turnfit_event_kind_name(4096), "unrecognized") == 0);

    /* budget_crossed, with a callback that calls back into the window. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_window *w = NULL;
        turnfit_error *err = NULL;
        CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"context_window\":1000,\"reserved_output\":100}"), &w, NULL),
                     TURNFIT_STATUS_OK);
        log.reenter = w;
        CHECK_STATUS(turnfit_window_set_event_callback(w, on_event, &log, &err), TURNFIT_STATUS_OK);
        CHECK_NO_ERR(err);
        push_words(w, 100);
        CHECK_SIZE(log.count, 0);
        push_words(w, 650);
        CHECK_SIZE(log.count, 1);
        CHECK_SIZE(log.kinds[0], TURNFIT_EVENT_BUDGET_CROSSED);
        CHECK(strstr(log.payloads[0], "\"kind\":\"budget_crossed\",\"operation\":\"push\",\"from\":\"fits\",\"to\":\"should_compact\"") != NULL);
        CHECK_SIZE(log.nested_ok, 1);
        push_words(w, 300);
        CHECK_SIZE(log.count, 2);
        CHECK(strstr(log.payloads[1], "\"to\":\"overflow\"") != NULL);
        /* Cleared: nothing more. */
        CHECK_STATUS(turnfit_window_set_event_callback(w, NULL, NULL, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_window_load(w, LIT("[]"), NULL), TURNFIT_STATUS_OK);
        push_words(w, 900);
        CHECK_SIZE(log.count, 2);
        CHECK_SIZE(log.bad_payload, 0);
        CHECK_STATUS(turnfit_window_set_event_callback(NULL, on_event, &log, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_window_set_event_callback", "window");
        turnfit_window_free(w);
    }

    /* repaired and compacted. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_window *w = NULL;
        CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"context_window\":120,\"reserved_output\":10}"), &w, NULL),
                     TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_window_set_event_callback(w, on_event, &log, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_window_load(w, LIT(kConv), NULL), TURNFIT_STATUS_OK);
        int mark = log.count;
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_window_repair(w, LIT("interrupted"), &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
        int i = find_event(&log, mark, TURNFIT_EVENT_REPAIRED);
        if (CHECK(i >= 0))
            CHECK(strstr(log.payloads[i], "{\"kind\":\"repaired\",\"results_added\":1,") != NULL);
        mark = log.count;
        CHECK_STATUS(turnfit_window_compact(w, NULL, 0, &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
        CHECK_SIZE(log.count - mark, 1);
        i = find_event(&log, mark, TURNFIT_EVENT_COMPACTED);
        if (CHECK(i >= 0)) {
            CHECK(strstr(log.payloads[i], "{\"kind\":\"compacted\",\"strategy\":\"recency\",") != NULL);
            CHECK(strstr(log.payloads[i], "\"messages_dropped\":0,") == NULL);
        }
        CHECK_SIZE(log.bad_payload, 0);
        turnfit_window_free(w);
        /* Freed: the callback is never called again (the log is static and
           would show it; there is nothing left to raise one). */
        CHECK_SIZE(log.count, mark + 1);
    }

    /* breaker_state_changed. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_breaker *b = NULL;
        turnfit_error *err = NULL;
        CHECK_STATUS(turnfit_breaker_new(LIT("{\"failure_threshold\":1,\"cool_down_ms\":10}"), &b, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_breaker_set_event_callback(b, on_event, &log, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_breaker_record_failure(b, LIT("api"), 5, NULL), TURNFIT_STATUS_OK);
        bool allowed = false;
        CHECK_STATUS(turnfit_breaker_allow(b, LIT("api"), 20, &allowed, NULL), TURNFIT_STATUS_OK);
        CHECK_SIZE(log.count, 2);
        CHECK(strcmp(log.payloads[0], "{\"kind\":\"breaker_state_changed\",\"key\":\"api\",\"from\":\"closed\",\"to\":\"open\",\"at_ms\":5}") == 0);
        CHECK(strstr(log.payloads[1], "\"from\":\"open\",\"to\":\"half_open\"") != NULL);
        CHECK_SIZE(log.kinds[1], TURNFIT_EVENT_BREAKER_STATE_CHANGED);
        CHECK_STATUS(turnfit_breaker_set_event_callback(NULL, NULL, NULL, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_breaker_set_event_callback", "breaker");
        turnfit_breaker_free(b);
    }

    /* span_repeated and span_overdue. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_tracer *t = NULL;
        turnfit_error *err = NULL;
        CHECK_STATUS(turnfit_tracer_new(NULL, 0, &t, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_set_event_callback(t, on_event, &log, NULL), TURNFIT_STATUS_OK);
        for (uint64_t at = 0; at < 20; at += 10) {
            uint64_t id = 0;
            CHECK_STATUS(turnfit_tracer_start(t, LIT("grep"), LIT("{\"input\":\"same\"}"), 0, at, &id, NULL), TURNFIT_STATUS_OK);
            CHECK_STATUS(turnfit_tracer_end(t, id, 0, 0, NULL, 0, at + 1, NULL), TURNFIT_STATUS_OK);
        }
        CHECK_SIZE(log.count, 1);
        CHECK(strcmp(log.payloads[0], "{\"kind\":\"span_repeated\",\"span_id\":2,\"first_span_id\":1,\"tool\":\"grep\",\"count\":2}") == 0);
        uint64_t slow = 0;
        CHECK_STATUS(turnfit_tracer_start(t, LIT("slow"), LIT("{\"timeout_ms\":1}"), 0, 100, &slow, NULL), TURNFIT_STATUS_OK);
        turnfit_string out = SENT_STRING;
        CHECK_STATUS(turnfit_tracer_overdue(t, 5100, &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
        CHECK_STATUS(turnfit_tracer_overdue(t, 6100, &out, NULL), TURNFIT_STATUS_OK);
        turnfit_string_free(&out);
        CHECK_SIZE(log.count, 2);
        CHECK_SIZE(log.kinds[1], TURNFIT_EVENT_SPAN_OVERDUE);
        CHECK(strstr(log.payloads[1], "{\"kind\":\"span_overdue\",\"span_id\":3,\"tool\":\"slow\",") != NULL);
        CHECK(strstr(log.payloads[1], "\"elapsed_us\":5000,\"timeout_ms\":1}") != NULL);
        CHECK_STATUS(turnfit_tracer_set_event_callback(NULL, on_event, &log, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_tracer_set_event_callback", "tracer");
        turnfit_tracer_free(t);
    }

    /* span_finished (issue 34): every ended span, when the config asks. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_tracer *t = NULL;
        CHECK_STATUS(turnfit_tracer_new(LIT("{\"span_finished_events\":true}"), &t, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_set_event_callback(t, on_event, &log, NULL), TURNFIT_STATUS_OK);
        uint64_t id = 0;
        CHECK_STATUS(turnfit_tracer_start(t, LIT("shell"), LIT("{\"agent_id\":\"fixer\"}"), 0, 0, &id, NULL), TURNFIT_STATUS_OK);
        CHECK_STATUS(turnfit_tracer_end(t, id, TURNFIT_SPAN_OUTCOME_FAILED, 0, LIT("exit status 2"), 50, NULL), TURNFIT_STATUS_OK);
        CHECK_SIZE(log.count, 1);
        CHECK_SIZE(log.kinds[0], TURNFIT_EVENT_SPAN_FINISHED);
        CHECK(strstr(log.payloads[0], "{\"kind\":\"span_finished\",\"span_id\":1,\"tool\":\"shell\",\"agent_id\":\"fixer\",") != NULL);
        CHECK(strstr(log.payloads[0], "\"outcome\":\"failed\",\"error\":\"exit status 2\"") != NULL);
        turnfit_tracer_free(t);
    }

    /* skill_skipped: examples/data holds folders and files that are not skills. */
    {
        static event_log log;
        memset(&log, 0, sizeof log);
        turnfit_skills *sk = NULL;
        turnfit_error *err = NULL;
        CHECK_STATUS(turnfit_skills_open_with_events(LIT("../../examples/data"), NULL, 0, on_event, &log, &sk, &err),
                     TURNFIT_STATUS_OK);
        CHECK_NO_ERR(err);
        CHECK(log.count >= 3);
        int i = find_event(&log, 0, TURNFIT_EVENT_SKILL_SKIPPED);
        CHECK(i == 0);
        int found = 0;
        for (int k = 0; k < log.count && k < 64; k++)
            if (strcmp(log.payloads[k], "{\"kind\":\"skill_skipped\",\"path\":\"errors\",\"reason\":\"a folder without SKILL.md\"}") == 0)
                found++;
        CHECK_SIZE(found, 1);
        turnfit_string list = SENT_STRING;
        CHECK_STATUS(turnfit_skills_list(sk, &list, NULL), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(list, "{\"path\":\"errors\",\"reason\":\"a folder without SKILL.md\"}");
        turnfit_string_free(&list);
        turnfit_skills_free(sk);
        /* NULL callback: the plain open. Failures deliver nothing. */
        sk = NULL;
        CHECK_STATUS(turnfit_skills_open_with_events(LIT(SKILLS_DIR), NULL, 0, NULL, NULL, &sk, NULL), TURNFIT_STATUS_OK);
        turnfit_skills_free(sk);
        int before = log.count;
        sk = (turnfit_skills *)SENT_PTR;
        CHECK_STATUS(turnfit_skills_open_with_events(LIT("../../no/such/dir"), NULL, 0, on_event, &log, &sk, &err),
                     TURNFIT_STATUS_IO);
        CHECK_ERR(&err, TURNFIT_STATUS_IO, "turnfit_skills_open_with_events", "skills root");
        CHECK(sk == (turnfit_skills *)SENT_PTR);
        CHECK_STATUS(turnfit_skills_open_with_events(NULL, 1, NULL, 0, on_event, &log, &sk, NULL), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(turnfit_skills_open_with_events(LIT("x\xff"), NULL, 0, on_event, &log, &sk, NULL), TURNFIT_STATUS_INVALID_UTF8);
        CHECK_STATUS(turnfit_skills_open_with_events(LIT(SKILLS_DIR), NULL, 0, on_event, &log, NULL, NULL),
                     TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_SIZE(log.count, before);
        CHECK_SIZE(log.bad_payload, 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Turns: the handle loop, turnfit_turn_run with every kind of callback,    */
/* NULL arguments, resume with nothing waiting, calls after finish.         */

/* An agent loop that must be summarized at 3000 tokens: system, task, then
   twelve rounds of a call and a ~300-token result, then a user message. */
static char *turn_history(void)
{
    size_t cap = 64 * 1024, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"messages\":[{\"role\":\"system\",\"content\":\"You are a coding agent.\"},"
                          "{\"role\":\"user\",\"content\":\"Fix the failing build.\"}");
    for (int r = 0; r < 12; r++) {
        n += (size_t)snprintf(s + n, cap - n,
                              ",{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c%d\",\"type\":"
                              "\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":"
                              "\\\"src/f%d.rs\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c%d\",\"content\":\"",
                              r, r, r);
        for (int i = 0; i < 60; i++)
            n += (size_t)snprintf(s + n, cap - n, "line %d of file %d: let x%d = %d; ", i, r, i, i * r);
        n += (size_t)snprintf(s + n, cap - n, "\"}");
    }
    snprintf(s + n, cap - n, ",{\"role\":\"user\",\"content\":\"Now run the tests.\"}]}");
    return s;
}

static const char kTurnOptions[] = "{\"model\":\"gpt-4o\",\"max_tokens\":3000,\"policy\":{\"strategy\":\"summarize\","
                                   "\"mask\":{\"enabled\":false}}}";

typedef struct {
    int calls;
    uint32_t code;       /* what the callback returns */
    const char *text;    /* what it sets *out_text to */
    size_t len;          /* and *out_len */
    bool reenter;        /* calls turnfit from inside */
    turnfit_status inner_run, inner_count;
    size_t inner_tokens;
} turn_cb;

static uint32_t turn_summarize(void *user, const char *call_json, size_t call_len, const char **out_text,
                               size_t *out_len)
{
    turn_cb *cb = user;
    cb->calls++;
    if (!call_json || !mem_contains(call_json, call_len, "\"prompt\":"))
        cb->code = 99; /* noticed below: the report would say error */
    if (cb->reenter) {
        turnfit_string c = {NULL, 0}, r = {NULL, 0};
        cb->inner_run = turnfit_turn_run(NULL, LIT("[{\"role\":\"user\",\"content\":\"hi\"}]"),
                                         LIT("{\"model\":\"gpt-4o\",\"max_tokens\":100}"), turn_summarize, NULL, &c, &r,
                                         NULL);
        turnfit_string_free(&c);
        turnfit_string_free(&r);
        turnfit_tokenizer *t = NULL;
        cb->inner_count = turnfit_tokenizer_new_for_model(NULL, LIT("gpt-4o"), NULL, 0, 0, &t, NULL);
        if (t) {
            cb->inner_count = turnfit_tokenizer_count(t, call_json, call_len, &cb->inner_tokens, NULL);
            turnfit_tokenizer_free(t);
        }
    }
    *out_text = cb->text;
    *out_len = cb->len;
    return cb->code;
}

/* turnfit_turn_run with `cb`; the report is checked to hold `want`. */
static void turn_run_case(int line, turn_cb *cb, const char *history, const char *want)
{
    turnfit_string conv = SENT_STRING, report = SENT_STRING;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_turn_run(NULL, STR(history), LIT(kTurnOptions), turn_summarize, cb, &conv, &report,
                                         &err);
    if (!check_status_at(line, "turnfit_turn_run", st, TURNFIT_STATUS_OK)) {
        if (err)
            fprintf(stdout, "  %s\n", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        return;
    }
    check_true_at(line, cb->calls >= 1, "the summarizer was called");
    check_contains_at(line, "report", report.ptr, report.len, "\"fired\":true");
    check_contains_at(line, "report", report.ptr, report.len, want);
    check_contains_at(line, "conversation", conv.ptr, conv.len, "Now run the tests.");
    turnfit_string_free(&conv);
    turnfit_string_free(&report);
}

static void test_turn(void)
{
    char *history = turn_history();
    if (!CHECK(history != NULL))
        return;
    turnfit_error *err = NULL;

    /* The handle loop: answer every request with text; the host wrote it. */
    turnfit_turn *t = NULL;
    CHECK_STATUS(turnfit_turn_start(NULL, STR(history), LIT(kTurnOptions), &t, &err), TURNFIT_STATUS_OK);
    if (!CHECK(t != NULL)) {
        free(history);
        return;
    }
    int requests = 0;
    for (;;) {
        bool waiting = false;
        turnfit_string call = SENT_STRING;
        if (!CHECK_STATUS(turnfit_turn_call(t, &waiting, &call, &err), TURNFIT_STATUS_OK))
            break;
        if (!waiting) {
            CHECK_SIZE(call.len, 0);
            turnfit_string_free(&call);
            break;
        }
        requests++;
        CHECK_STR_CONTAINS(call, "\"max_summary_tokens\":");
        CHECK_STR_CONTAINS(call, "\"timeout_ms\":");
        turnfit_string_free(&call);
        CHECK_STATUS(turnfit_turn_resume(t, TURNFIT_SUMMARY_OK, LIT("The agent read twelve files."), NULL, 0, &err),
                     TURNFIT_STATUS_OK);
        if (requests > 300)
            break;
    }
    CHECK(requests >= 1);
    /* Nothing waits now: resume is INVALID_ARGUMENT. */
    CHECK_STATUS(turnfit_turn_resume(t, TURNFIT_SUMMARY_OK, LIT("late"), NULL, 0, &err),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_resume", "no summarizer request is waiting");
    turnfit_string conv = SENT_STRING, report = SENT_STRING;
    CHECK_STATUS(turnfit_turn_finish(t, &conv, &report, &err), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(report, "\"source\":\"host\"");
    CHECK_STR_CONTAINS(conv, "The agent read twelve files.");
    turnfit_string_free(&conv);
    turnfit_string_free(&report);
    /* After finish: every call but free is INVALID_ARGUMENT, outputs untouched. */
    {
        bool waiting = true;
        turnfit_string call = SENT_STRING;
        CHECK_STATUS(turnfit_turn_call(t, &waiting, &call, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_call", "finished");
        check_string_untouched_at(__LINE__, "call", call);
        CHECK_STATUS(turnfit_turn_resume(t, TURNFIT_SUMMARY_OK, LIT("x"), NULL, 0, &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_resume", "finished");
        conv = (turnfit_string)SENT_STRING;
        report = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_turn_finish(t, &conv, &report, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_finish", "finished");
        check_string_untouched_at(__LINE__, "conv", conv);
        check_string_untouched_at(__LINE__, "report", report);
    }
    turnfit_turn_free(t);
    turnfit_turn_free(NULL);

    /* A failure code, an unknown one, invalid UTF-8 and not-text by resume;
       finishing with a request still waiting is no_summarizer. */
    {
        struct {
            uint32_t code;
            const char *text;
            turnfit_status want_status;
            const char *want;
        } cases[] = {
            {TURNFIT_SUMMARY_ERROR, "rate limited", TURNFIT_STATUS_OK, "\"reason\":\"error\""},
            {TURNFIT_SUMMARY_TIMEOUT, "", TURNFIT_STATUS_OK, "\"reason\":\"timeout\""},
            {TURNFIT_SUMMARY_NOT_TEXT, "", TURNFIT_STATUS_OK, "\"reason\":\"not_text\""},
            {TURNFIT_SUMMARY_OK, "\xff\xfe summary", TURNFIT_STATUS_OK, "\"reason\":\"invalid_utf8\""},
            {TURNFIT_SUMMARY_OK, "   ", TURNFIT_STATUS_OK, "\"reason\":\"empty\""},
            {7, "", TURNFIT_STATUS_INVALID_ARGUMENT, "\"reason\":\"no_summarizer\""},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            t = NULL;
            CHECK_STATUS(turnfit_turn_start(NULL, STR(history), LIT(kTurnOptions), &t, &err), TURNFIT_STATUS_OK);
            if (!t)
                continue;
            bool is_text = cases[i].code == TURNFIT_SUMMARY_OK;
            turnfit_status st = turnfit_turn_resume(t, cases[i].code, is_text ? cases[i].text : NULL,
                                                    is_text ? strlen(cases[i].text) : 0,
                                                    is_text ? NULL : cases[i].text,
                                                    is_text ? 0 : strlen(cases[i].text), &err);
            CHECK_STATUS(st, cases[i].want_status);
            if (st != TURNFIT_STATUS_OK)
                CHECK_ERR(&err, cases[i].want_status, "turnfit_turn_resume", "TURNFIT_SUMMARY_");
            CHECK_STATUS(turnfit_turn_finish(t, &conv, &report, &err), TURNFIT_STATUS_OK);
            CHECK_STR_CONTAINS(report, "\"source\":\"digest\"");
            CHECK_STR_CONTAINS(report, cases[i].want);
            turnfit_string_free(&conv);
            turnfit_string_free(&report);
            turnfit_turn_free(t);
        }
    }

    /* turnfit_turn_run: success, a failure code, invalid UTF-8, NULL with a
       length, an unknown code, re-entry, and no summarizer at all. */
    {
        static const char bad_utf8[] = "summary \xc3\x28 here";
        turn_cb ok = {0, TURNFIT_SUMMARY_OK, "The agent read twelve files.", 28, false, 0, 0, 0};
        turn_run_case(__LINE__, &ok, history, "\"source\":\"host\"");
        turn_cb fail = {0, TURNFIT_SUMMARY_ERROR, "model down", 10, false, 0, 0, 0};
        turn_run_case(__LINE__, &fail, history, "the summarizer failed: model down");
        CHECK(fail.calls == 1);
        turn_cb utf8 = {0, TURNFIT_SUMMARY_OK, bad_utf8, sizeof bad_utf8 - 1, false, 0, 0, 0};
        turn_run_case(__LINE__, &utf8, history, "\"reason\":\"invalid_utf8\"");
        turn_cb nul = {0, TURNFIT_SUMMARY_OK, NULL, 5, false, 0, 0, 0};
        turn_run_case(__LINE__, &nul, history, "\"reason\":\"error\"");
        turn_cb unknown = {0, 42, "what", 4, false, 0, 0, 0};
        turn_run_case(__LINE__, &unknown, history, "not a TURNFIT_SUMMARY_* code");
        turn_cb re = {0, TURNFIT_SUMMARY_OK, "Summary written while re-entering.", 34, true, 99, 99, 0};
        turn_run_case(__LINE__, &re, history, "\"source\":\"host\"");
        CHECK_STATUS(re.inner_run, TURNFIT_STATUS_OK);
        CHECK_STATUS(re.inner_count, TURNFIT_STATUS_OK);
        CHECK(re.inner_tokens > 0);

        conv = (turnfit_string)SENT_STRING;
        report = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_turn_run(NULL, STR(history), LIT(kTurnOptions), NULL, NULL, &conv, &report, &err),
                     TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(report, "\"reason\":\"no_summarizer\"");
        turnfit_string_free(&conv);
        turnfit_string_free(&report);
    }

    /* NULL arguments and a history that cannot fit. */
    {
        bool waiting = false;
        turnfit_string s1 = SENT_STRING, s2 = SENT_STRING;
        CHECK_STATUS(turnfit_turn_start(NULL, STR(history), LIT(kTurnOptions), NULL, &err),
                     TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_start", "out_turn");
        t = NULL;
        CHECK_STATUS(turnfit_turn_start(NULL, NULL, 5, LIT(kTurnOptions), &t, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_start", "conversation_json");
        CHECK(t == NULL);
        CHECK_STATUS(turnfit_turn_call(NULL, &waiting, &s1, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_call", "turn");
        check_string_untouched_at(__LINE__, "s1", s1);
        CHECK_STATUS(turnfit_turn_resume(NULL, TURNFIT_SUMMARY_OK, LIT("x"), NULL, 0, &err),
                     TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_resume", "turn");
        CHECK_STATUS(turnfit_turn_finish(NULL, &s1, &s2, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_finish", "turn");
        CHECK_STATUS(turnfit_turn_run(NULL, STR(history), LIT(kTurnOptions), NULL, NULL, NULL, &s2, &err),
                     TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_turn_run", "out_conversation");
        check_string_untouched_at(__LINE__, "s2", s2);

        /* A resume on a turn with nothing to summarize. */
        t = NULL;
        CHECK_STATUS(turnfit_turn_start(NULL, LIT("[{\"role\":\"user\",\"content\":\"hi\"}]"),
                                        LIT("{\"model\":\"gpt-4o\",\"max_tokens\":100}"), &t, &err),
                     TURNFIT_STATUS_OK);
        if (t) {
            CHECK_STATUS(turnfit_turn_call(t, &waiting, &s1, &err), TURNFIT_STATUS_OK);
            CHECK(!waiting);
            turnfit_string_free(&s1);
            CHECK_STATUS(turnfit_turn_resume(t, TURNFIT_SUMMARY_ERROR, NULL, 0, LIT("boom"), &err),
                         TURNFIT_STATUS_INVALID_ARGUMENT);
            CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_resume", "no summarizer request");
            turnfit_turn_free(t);
        }
        t = NULL;
        CHECK_STATUS(turnfit_turn_start(NULL, STR(history), LIT("{\"model\":\"gpt-4o\",\"max_tokens\":20}"), &t, &err),
                     TURNFIT_STATUS_DOES_NOT_FIT);
        CHECK_ERR(&err, TURNFIT_STATUS_DOES_NOT_FIT, "turnfit_turn_start", NULL);
        CHECK(t == NULL);
    }
    free(history);
}

/* A summarizer for a window's turn that pushes one message to the window
   (`user`) on its first call: the window is not locked while it runs. */
static uint32_t window_turn_push(void *user, const char *call_json, size_t call_len, const char **out_text,
                                 size_t *out_len)
{
    (void)call_json;
    (void)call_len;
    turnfit_window **w = user;
    if (*w) {
        size_t tokens = 0;
        turnfit_window_push(*w, LIT("{\"role\":\"user\",\"content\":\"one more thing\"}"), &tokens, NULL);
        *w = NULL; /* once */
    }
    *out_text = "summary";
    *out_len = 7;
    return TURNFIT_SUMMARY_OK;
}

static const char kWindowTurnOptions[] = "{\"policy\":{\"strategy\":\"summarize\",\"mask\":{\"enabled\":false}}}";

/* The stateful turn on a window: the handle form, the callback form, a
   summarizer that pushes to the window, options the window holds, the two
   turn kinds' finishes, NULL arguments. */
static void test_window_turn(void)
{
    char *history = turn_history();
    if (!CHECK(history != NULL))
        return;
    turnfit_error *err = NULL;
    turnfit_window *w = NULL;
    CHECK_STATUS(turnfit_window_new(NULL, LIT("gpt-4o"), LIT("{\"context_window\":3500,\"reserved_output\":500}"), &w,
                                    &err),
                 TURNFIT_STATUS_OK);
    if (!CHECK(w != NULL)) {
        free(history);
        return;
    }
    CHECK_STATUS(turnfit_window_load(w, STR(history), &err), TURNFIT_STATUS_OK);

    /* Handle form: a stateless finish is refused, then call/resume/finish. */
    turnfit_turn *t = NULL;
    CHECK_STATUS(turnfit_window_turn_start(NULL, w, LIT(kWindowTurnOptions), &t, &err), TURNFIT_STATUS_OK);
    if (t) {
        turnfit_string conv = SENT_STRING, report = SENT_STRING;
        CHECK_STATUS(turnfit_turn_finish(t, &conv, &report, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_turn_finish", "turnfit_window_turn_finish");
        check_string_untouched_at(__LINE__, "conv", conv);
        int requests = 0;
        for (;;) {
            bool waiting = false;
            turnfit_string call = SENT_STRING;
            if (!CHECK_STATUS(turnfit_turn_call(t, &waiting, &call, &err), TURNFIT_STATUS_OK))
                break;
            turnfit_string_free(&call);
            if (!waiting || ++requests > 300)
                break;
            CHECK_STATUS(turnfit_turn_resume(t, TURNFIT_SUMMARY_OK, LIT("The agent read twelve files."), NULL, 0, &err),
                         TURNFIT_STATUS_OK);
        }
        CHECK(requests >= 1);
        CHECK_STATUS(turnfit_window_turn_finish(w, t, &report, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(report, "\"source\":\"host\"");
        CHECK_STR_CONTAINS(report, "\"changed\":true");
        turnfit_string_free(&report);
        CHECK_STATUS(turnfit_window_conversation(w, &conv, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(conv, "The agent read twelve files.");
        CHECK_STR_CONTAINS(conv, "Now run the tests.");
        turnfit_string_free(&conv);
        report = (turnfit_string)SENT_STRING;
        CHECK_STATUS(turnfit_window_turn_finish(w, t, &report, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_window_turn_finish", "finished");
        check_string_untouched_at(__LINE__, "report", report);
        turnfit_turn_free(t);
    }

    /* Now below the trigger: the callback form calls nothing. */
    {
        turn_cb never = {0, TURNFIT_SUMMARY_OK, "x", 1, false, 0, 0, 0};
        turnfit_string report = SENT_STRING;
        CHECK_STATUS(turnfit_window_turn_run(NULL, w, LIT(kWindowTurnOptions), turn_summarize, &never, &report, &err),
                     TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(report, "\"fired\":false");
        CHECK(never.calls == 0);
        turnfit_string_free(&report);
    }

    /* Over the trigger again (the history reloaded): a summarizer that pushes
       to the window gets nothing applied, and the pushed message is kept. */
    CHECK_STATUS(turnfit_window_load(w, STR(history), &err), TURNFIT_STATUS_OK);
    {
        turnfit_window *target = w;
        turnfit_string report = SENT_STRING, conv = SENT_STRING;
        CHECK_STATUS(turnfit_window_turn_run(NULL, w, LIT(kWindowTurnOptions), window_turn_push, &target, &report,
                                             &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_window_turn_run", "the window changed during the turn");
        check_string_untouched_at(__LINE__, "report", report);
        CHECK(target == NULL);
        CHECK_STATUS(turnfit_window_conversation(w, &conv, &err), TURNFIT_STATUS_OK);
        CHECK_STR_CONTAINS(conv, "one more thing");
        CHECK_STR_CONTAINS(conv, "src/f0.rs");
        turnfit_string_free(&conv);
    }

    /* Options the window holds; a stateless turn finished on a window; NULLs. */
    {
        t = NULL;
        CHECK_STATUS(turnfit_window_turn_start(NULL, w, LIT("{\"max_tokens\":100}"), &t, &err),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_window_turn_start", "belongs to the window");
        CHECK(t == NULL);
        CHECK_STATUS(turnfit_turn_start(NULL, STR(history), LIT(kTurnOptions), &t, &err), TURNFIT_STATUS_OK);
        turnfit_string report = SENT_STRING;
        CHECK_STATUS(turnfit_window_turn_finish(w, t, &report, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_window_turn_finish", "turnfit_turn_finish");
        turnfit_turn_free(t);
        t = NULL;
        CHECK_STATUS(turnfit_window_turn_start(NULL, NULL, NULL, 0, &t, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_window_turn_start", "window");
        CHECK_STATUS(turnfit_window_turn_finish(w, NULL, &report, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_window_turn_finish", "turn");
        CHECK_STATUS(turnfit_window_turn_run(NULL, w, NULL, 0, NULL, NULL, NULL, &err), TURNFIT_STATUS_NULL_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_window_turn_run", "out_report");
    }
    turnfit_window_free(w);
    free(history);
}

/*
 * Issue 34 through the C ABI: a host counter registered with a model
 * (turnfit_registry_register_counter) counts every text of a fit for that
 * model; its failures, absurd counts and calls back into turnfit are
 * errors naming the model; free_user_data runs once, when the last holder
 * (registry entry, window) lets go, and never when registration fails.
 */
enum { COUNT_QUARTER, COUNT_FAIL, COUNT_FAIL_SILENT, COUNT_OVER, COUNT_REENTER };

typedef struct {
    int mode;
    int calls;
    int frees;
    turnfit_registry *reg;     /* for COUNT_REENTER */
    turnfit_status reentered;  /* what the call back into turnfit returned */
    bool reentry_named;        /* its message said why */
} host_counter_state;

static int32_t host_count(void *user_data, const char *text, size_t text_len, size_t *out_tokens, char *message,
                          size_t message_capacity)
{
    host_counter_state *s = user_data;
    (void)text;
    __atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED); /* counted on several threads at once */
    switch (s->mode) {
    case COUNT_QUARTER:
        *out_tokens = (text_len + 3) / 4; /* 1 token per 4 bytes, rounded up */
        return 0;
    case COUNT_FAIL:
        snprintf(message, message_capacity, "no tokenizer loaded (%zu bytes)", text_len);
        return 7;
    case COUNT_FAIL_SILENT:
        return -1;
    case COUNT_OVER:
        *out_tokens = text_len + 65; /* one above the slack */
        return 0;
    case COUNT_REENTER: {
        turnfit_string l = SENT_STRING;
        turnfit_error *e = NULL;
        s->reentered = turnfit_registry_list(s->reg, &l, &e);
        s->reentry_named = e != NULL && strstr(turnfit_error_message(e, NULL), "inside a host counter") != NULL;
        turnfit_error_free(e); /* allowed from inside a counter */
        if (s->reentered == TURNFIT_STATUS_OK)
            turnfit_string_free(&l);
        snprintf(message, message_capacity, "could not call turnfit");
        return 1;
    }
    }
    return 2;
}

static void host_count_free(void *user_data)
{
    ((host_counter_state *)user_data)->frees++;
}

static size_t report_number(turnfit_string report, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\":", key);
    const char *at = report.ptr ? strstr(report.ptr, needle) : NULL;
    return at ? (size_t)strtoull(at + strlen(needle), NULL, 10) : (size_t)-1;
}

static const char kHouseProfile[] =
    "{\"name\":\"house-llm\",\"encoding\":\"o200k_base\",\"context_window\":8000,\"exact\":false}";
static const char kHouseConv[] =
    "[{\"role\":\"system\",\"content\":\"Be brief and answer in one sentence.\"},"
    "{\"role\":\"user\",\"content\":\"How many tokens does this question take in the house tokenizer?\"}]";

/* turnfit_fit for house-llm on `reg`: the status, and the report's tokens_before on success. */
static turnfit_status house_fit(turnfit_registry *reg, size_t *tokens_before, turnfit_error **err)
{
    turnfit_string c = SENT_STRING, r = SENT_STRING;
    turnfit_status st = turnfit_fit(reg, LIT(kHouseConv), LIT("{\"model\":\"house-llm\"}"), &c, &r, err);
    if (st == TURNFIT_STATUS_OK) {
        *tokens_before = report_number(r, "tokens_before");
        CHECK_STR_CONTAINS(r, "\"exact\":false");
        turnfit_string_free(&c);
        turnfit_string_free(&r);
    } else {
        CHECK(c.ptr == SENT_PTR && r.ptr == SENT_PTR);
    }
    return st;
}

typedef struct {
    turnfit_registry *reg;
    size_t want;
    int failures;
    int mismatches;
} host_count_worker;

/* Fits on a shared registry whose counter is called from every thread. */
static void *host_count_thread(void *arg)
{
    host_count_worker *w = arg;
    for (int i = 0; i < 25; i++) {
        turnfit_string c = {NULL, 0}, r = {NULL, 0};
        if (turnfit_fit(w->reg, LIT(kHouseConv), LIT("{\"model\":\"house-llm\"}"), &c, &r, NULL) != TURNFIT_STATUS_OK) {
            w->failures++;
            continue;
        }
        if (report_number(r, "tokens_before") != w->want)
            w->mismatches++;
        turnfit_string_free(&c);
        turnfit_string_free(&r);
    }
    return NULL;
}

static void test_host_counter(void)
{
    turnfit_registry *reg = NULL;
    turnfit_error *err = NULL;
    if (!CHECK_STATUS(turnfit_registry_new(&reg, NULL), TURNFIT_STATUS_OK))
        return;
    /* The encoding's count first, for comparison. */
    size_t plain = 0, counted = 0;
    CHECK_SIZE(REGISTER_OK(reg, LIT(kHouseProfile)), 1);
    CHECK_STATUS(house_fit(reg, &plain, &err), TURNFIT_STATUS_OK);

    /* Success: the counter counts the text, framing stays the model's. */
    host_counter_state quarter = {.mode = COUNT_QUARTER};
    CHECK_STATUS(turnfit_registry_register_counter(reg, LIT(kHouseProfile), host_count, &quarter, host_count_free, &err),
                 TURNFIT_STATUS_OK);
    CHECK_NO_ERR(err);
    CHECK_STATUS(house_fit(reg, &counted, &err), TURNFIT_STATUS_OK);
    CHECK(quarter.calls > 0);
    CHECK(counted != plain && counted != (size_t)-1);
    /* Deterministic: the same fit again gives the same count. */
    size_t again = 0;
    CHECK_STATUS(house_fit(reg, &again, &err), TURNFIT_STATUS_OK);
    CHECK_SIZE(again, counted);
    /* From several threads at once, each result the single-threaded one. */
    {
        enum { N = 4 };
        host_count_worker workers[N];
        pthread_t th[N];
        bool started[N];
        for (int i = 0; i < N; i++) {
            workers[i] = (host_count_worker){.reg = reg, .want = counted};
            started[i] = pthread_create(&th[i], NULL, host_count_thread, &workers[i]) == 0;
            CHECK(started[i]);
        }
        for (int i = 0; i < N; i++) {
            if (!started[i])
                continue;
            pthread_join(th[i], NULL);
            CHECK_SIZE(workers[i].failures, 0);
            CHECK_SIZE(workers[i].mismatches, 0);
        }
    }
    turnfit_string j = LOOKUP_OK(reg, LIT("house-llm"), NULL, 0);
    CHECK_STR_CONTAINS(j, "\"source\":\"host\"");
    turnfit_string_free(&j);
    /* Another model on the same registry is not counted by it. */
    int before = quarter.calls;
    turnfit_string c = SENT_STRING, r = SENT_STRING;
    CHECK_STATUS(turnfit_fit(reg, LIT(kHouseConv), LIT("{\"model\":\"gpt-4o\"}"), &c, &r, NULL), TURNFIT_STATUS_OK);
    turnfit_string_free(&c);
    turnfit_string_free(&r);
    CHECK_SIZE(quarter.calls, before);

    /* A window made for the model holds the counter: replacing the entry
       does not release the user data while the window lives. */
    turnfit_window *w = NULL;
    CHECK_STATUS(turnfit_window_new(reg, LIT("house-llm"), NULL, 0, &w, NULL), TURNFIT_STATUS_OK);
    CHECK_SIZE(REGISTER_OK(reg, LIT(kHouseProfile)), 1); /* replaced without a counter */
    CHECK_SIZE(quarter.frees, 0);
    size_t after = 0;
    CHECK_STATUS(house_fit(reg, &after, &err), TURNFIT_STATUS_OK);
    CHECK_SIZE(after, plain);
    turnfit_window_free(w);
    CHECK_SIZE(quarter.frees, 1); /* the last holder let go: exactly once */

    /* Failures of the counter fail the counting call, naming the model. */
    struct {
        int mode;
        const char *needle;
    } bad[] = {
        {COUNT_FAIL, "the host counter for 'house-llm' failed: it returned 7: no tokenizer loaded"},
        {COUNT_FAIL_SILENT, "the host counter for 'house-llm' failed: it returned -1"},
        {COUNT_OVER, "a count is at most the bytes plus 64"},
        {COUNT_REENTER, "failed: it returned 1: could not call turnfit"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        host_counter_state s = {.mode = bad[i].mode, .reg = reg, .reentered = TURNFIT_STATUS_OK};
        CHECK_STATUS(turnfit_registry_register_counter(reg, LIT(kHouseProfile), host_count, &s, host_count_free, NULL),
                     TURNFIT_STATUS_OK);
        size_t n = 0;
        CHECK_STATUS(house_fit(reg, &n, &err), TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_fit", bad[i].needle);
        CHECK(s.calls > 0);
        if (bad[i].mode == COUNT_REENTER) {
            /* The call back into turnfit was refused, not run (no deadlock). */
            CHECK_STATUS(s.reentered, TURNFIT_STATUS_INVALID_ARGUMENT);
            CHECK(s.reentry_named);
        }
        CHECK_SIZE(REGISTER_OK(reg, LIT(kHouseProfile)), 1); /* releases s */
        CHECK_SIZE(s.frees, 1);
    }

    /* Bad arguments: a specific status; the user data stays the caller's. */
    host_counter_state unused = {.mode = COUNT_QUARTER};
    turnfit_registry_register_counter(NULL, LIT(kHouseProfile), host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_counter", "registry is NULL");
    turnfit_registry_register_counter(reg, LIT(kHouseProfile), NULL, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_counter", "count is NULL");
    turnfit_registry_register_counter(reg, NULL, 5, host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_counter", "profile_json");
    turnfit_registry_register_counter(reg, NULL, 0, host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_registry_register_counter", NULL);
    turnfit_registry_register_counter(reg, LIT("{\"name\":\"h\xff\",\"encoding\":\"o200k_base\",\"exact\":false}"),
                                      host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_UTF8, "turnfit_registry_register_counter", NULL);
    turnfit_registry_register_counter(reg, LIT("[{\"name\":\"h\",\"encoding\":\"o200k_base\",\"exact\":false}]"),
                                      host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_JSON, "turnfit_registry_register_counter", "one profile object");
    turnfit_registry_register_counter(reg, LIT("{\"name\":\"\",\"encoding\":\"o200k_base\",\"exact\":false}"),
                                      host_count, &unused, host_count_free, &err);
    CHECK_ERR(&err, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_registry_register_counter", NULL);
    turnfit_registry_register_counter(reg, LIT("{\"name\":\"h\",\"encoding\":\"nope\",\"exact\":false}"), host_count,
                                      &unused, host_count_free, &err);
    CHECK(err != NULL && turnfit_error_code(err) != TURNFIT_STATUS_OK);
    turnfit_error_free(err);
    err = NULL;
    {
        char deep[2 * 600 + 1];
        memset(deep, '[', 600);
        memset(deep + 600, ']', 600);
        deep[1200] = 0;
        turnfit_registry_register_counter(reg, STR(deep), host_count, &unused, host_count_free, &err);
        CHECK_ERR(&err, TURNFIT_STATUS_LIMIT_EXCEEDED, "turnfit_registry_register_counter", NULL);
    }
    CHECK_SIZE(unused.calls, 0);
    CHECK_SIZE(unused.frees, 0);

    /* Freeing the registry releases a counter it still holds; a NULL
       free_user_data is never called. */
    host_counter_state held = {.mode = COUNT_QUARTER};
    CHECK_STATUS(turnfit_registry_register_counter(reg, LIT(kHouseProfile), host_count, &held, host_count_free, NULL),
                 TURNFIT_STATUS_OK);
    host_counter_state unfreed = {.mode = COUNT_QUARTER};
    CHECK_STATUS(turnfit_registry_register_counter(
                     reg, LIT("{\"name\":\"house-small\",\"encoding\":\"o200k_base\",\"exact\":false}"), host_count,
                     &unfreed, NULL, NULL),
                 TURNFIT_STATUS_OK);
    turnfit_registry_free(reg);
    CHECK_SIZE(held.frees, 1);
    CHECK_SIZE(unfreed.frees, 0);
}

/* Tokenizers loaded from a model's file (issue 49): the two small files of
 * tests/vectors/files/, whose ids HF `tokenizers` gave
 * (tests/vectors/file_tokenizer.json). The harness runs in tests/c. */
#ifndef TURNFIT_VECTOR_FILES
#define TURNFIT_VECTOR_FILES "../vectors/files/"
#endif
static const char kByteLevelFile[] = TURNFIT_VECTOR_FILES "tiny-byte-level.tokenizer.json";
static const char kSentencePieceFile[] = TURNFIT_VECTOR_FILES "tiny-sentencepiece.tokenizer.json";

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    return buf;
}

static void test_file_tokenizer(void)
{
    turnfit_error *e = NULL;
    turnfit_file_tokenizer *bl = NULL, *sp = NULL, *rec = NULL;
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kByteLevelFile), NULL, 0, 0, &bl, &e), TURNFIT_STATUS_OK);
    CHECK_NO_ERR(e);
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kSentencePieceFile), NULL, 0, 0, &sp, &e), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kByteLevelFile), NULL, 0, TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL, &rec,
                                             &e),
                 TURNFIT_STATUS_OK);
    if (!CHECK(bl && sp && rec))
        goto out;

    /* "Hello, world!": HF's ids, with and without the file's BOS. */
    static const uint32_t hello_bl[] = {525, 401, 80, 13, 422, 473, 306, 2};
    static const uint32_t hello_sp[] = {489, 299, 326, 333, 333, 336, 273, 489, 344, 336, 339, 635, 264};
    size_t n = 0;
    CHECK_STATUS(turnfit_file_tokenizer_count(bl, LIT("Hello, world!"), &n, &e), TURNFIT_STATUS_OK);
    CHECK_SIZE(n, 8);
    turnfit_tokens ids = {0};
    CHECK_STATUS(turnfit_file_tokenizer_encode(sp, LIT("Hello, world!"), 0, &ids, &e), TURNFIT_STATUS_OK);
    CHECK_BYTES(ids.ptr, ids.len * 4, hello_sp, sizeof hello_sp);
    turnfit_tokens_free(&ids);
    CHECK_STATUS(turnfit_file_tokenizer_encode(bl, LIT("Hello, world!"), TURNFIT_FILE_TOKENIZER_ADD_SPECIAL, &ids, &e),
                 TURNFIT_STATUS_OK);
    if (CHECK_SIZE(ids.len, 9)) {
        CHECK_SIZE(ids.ptr[0], 0); /* <|begin_of_text|> */
        CHECK_BYTES(ids.ptr + 1, 8 * 4, hello_bl, sizeof hello_bl);
    }
    turnfit_tokens_free(&ids);
    turnfit_string text = {0};
    CHECK_STATUS(turnfit_file_tokenizer_decode(bl, hello_bl, 8, &text, &e), TURNFIT_STATUS_OK);
    CHECK_BYTES(text.ptr, text.len, "Hello, world!", 13);
    turnfit_string_free(&text);

    /* Special-token text: ordinary text by default, the token when asked. */
    size_t as_text = 0, as_token = 0;
    CHECK_STATUS(turnfit_file_tokenizer_count(bl, LIT("a <|end|> b"), &as_text, &e), TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_file_tokenizer_count(rec, LIT("a <|end|> b"), &as_token, &e), TURNFIT_STATUS_OK);
    CHECK(as_token < as_text);

    turnfit_string info = {0};
    CHECK_STATUS(turnfit_file_tokenizer_info(bl, &info, &e), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(info, "\"vocab_size\":600");
    CHECK_STR_CONTAINS(info, "\"special_tokens\":\"ordinary\"");
    CHECK_STR_CONTAINS(info, "\"add_special\":true");
    CHECK_STR_CONTAINS(info, "\"has_chat_template\":false");
    CHECK_STR_CONTAINS(info, "tiny-byte-level.tokenizer.json");
    turnfit_string_free(&info);

    /* The same file from its bytes; a truncated copy is refused, naming it. */
    size_t len = 0;
    char *bytes = read_whole(kByteLevelFile, &len);
    if (CHECK(bytes && len > 1000)) {
        turnfit_file_tokenizer *mem = NULL;
        CHECK_STATUS(turnfit_file_tokenizer_from_bytes((const uint8_t *)bytes, len, LIT("tiny.json"), NULL, 0, 0, &mem,
                                                       &e),
                     TURNFIT_STATUS_OK);
        n = 0;
        CHECK_STATUS(turnfit_file_tokenizer_count(mem, LIT("Hello, world!"), &n, &e), TURNFIT_STATUS_OK);
        CHECK_SIZE(n, 8);
        turnfit_file_tokenizer_free(mem);
        mem = NULL;
        CHECK_STATUS(turnfit_file_tokenizer_from_bytes((const uint8_t *)bytes, len / 2, LIT("tiny.json"), NULL, 0, 0,
                                                       &mem, &e),
                     TURNFIT_STATUS_INVALID_JSON);
        CHECK_ERR(&e, TURNFIT_STATUS_INVALID_JSON, "turnfit_file_tokenizer_from_bytes", "tiny.json");
        CHECK(mem == NULL);
        /* A JSON file declares its own split: no pattern can be given. */
        CHECK_STATUS(turnfit_file_tokenizer_from_bytes((const uint8_t *)bytes, len, LIT("tiny.json"), LIT("llama3"), 0,
                                                       &mem, &e),
                     TURNFIT_STATUS_INVALID_ARGUMENT);
        CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_from_bytes", "no pattern");
    }
    free(bytes);

    /* Bad input: each a specific status, the message naming what. */
    turnfit_file_tokenizer *bad = NULL;
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT("/nonexistent/tokenizer.json"), NULL, 0, 0, &bad, &e),
                 TURNFIT_STATUS_IO);
    CHECK_ERR(&e, TURNFIT_STATUS_IO, "turnfit_file_tokenizer_open", "/nonexistent/tokenizer.json");
    CHECK_STATUS(turnfit_file_tokenizer_open("", 0, NULL, 0, 0, &bad, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_open", "path is empty");
    CHECK_STATUS(turnfit_file_tokenizer_open("a\0b", 3, NULL, 0, 0, &bad, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_open", "NUL");
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kByteLevelFile), NULL, 0, 0x80, &bad, &e),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_open", "flag");
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kByteLevelFile), NULL, 0, 0, NULL, &e), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_file_tokenizer_open", "out_tokenizer");
    CHECK_STATUS(turnfit_file_tokenizer_from_bytes((const uint8_t *)"GGUF\3\0\0\0", 8, LIT("m.gguf"), NULL, 0, 0, &bad,
                                                   &e),
                 TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_from_bytes", "m.gguf");
    CHECK(bad == NULL);
    static const uint32_t unknown[] = {4000000};
    CHECK_STATUS(turnfit_file_tokenizer_decode(bl, unknown, 1, &text, &e), TURNFIT_STATUS_UNKNOWN_TOKEN);
    CHECK_ERR(&e, TURNFIT_STATUS_UNKNOWN_TOKEN, "turnfit_file_tokenizer_decode", "4000000");
    CHECK_STATUS(turnfit_file_tokenizer_encode(bl, LIT("x"), 0x10, &ids, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_file_tokenizer_encode", "flag");
    CHECK_STATUS(turnfit_file_tokenizer_count(bl, "\xff", 1, &n, &e), TURNFIT_STATUS_INVALID_UTF8);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_UTF8, "turnfit_file_tokenizer_count", NULL);
    CHECK_STATUS(turnfit_file_tokenizer_count(NULL, LIT("x"), &n, &e), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_file_tokenizer_count", "tokenizer");
out:
    turnfit_file_tokenizer_free(bl);
    turnfit_file_tokenizer_free(sp);
    turnfit_file_tokenizer_free(rec);
    turnfit_file_tokenizer_free(NULL);
}

/* A model by its files (issue 50): registered from the tiny byte-level
 * tokenizer and a template given as text, a fit for its name reports the
 * template's count (exact), equal to the rendered prompt counted with the
 * file's special tokens recognised. Bad input: each a specific status. */
static void test_model_files(void)
{
    turnfit_error *e = NULL;
    turnfit_registry *reg = NULL;
    turnfit_file_tokenizer *rec = NULL;
    turnfit_string info = {0}, conv = {0}, report = {0};
    char spec[1024];
    if (!CHECK_STATUS(turnfit_registry_new(&reg, &e), TURNFIT_STATUS_OK))
        goto out;
    snprintf(spec, sizeof spec,
             "{\"name\":\"Tiny-Local\",\"tokenizer\":\"%s\",\"context_window\":4000,\"chat_template\":"
             "\"{%% for m in messages %%}{{ m.role }}:{{ m.content }}<|end|>{%% endfor %%}"
             "{%% if add_generation_prompt %%}assistant:{%% endif %%}\"}",
             kByteLevelFile);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), &info, &e), TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(info, "\"matched\":\"tiny-local\"");
    CHECK_STR_CONTAINS(info, "\"context_window\":4000");
    CHECK_STR_CONTAINS(info, "\"exact\":true");
    CHECK_STATUS(turnfit_fit(reg, LIT("[{\"role\":\"user\",\"content\":\"hi\"}]"), LIT("{\"model\":\"tiny-local\"}"),
                             &conv, &report, &e),
                 TURNFIT_STATUS_OK);
    CHECK_STR_CONTAINS(report, "\"exact\":true");
    size_t want = 0;
    CHECK_STATUS(turnfit_file_tokenizer_open(LIT(kByteLevelFile), NULL, 0, TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL, &rec,
                                             &e),
                 TURNFIT_STATUS_OK);
    CHECK_STATUS(turnfit_file_tokenizer_count(rec, LIT("user:hi<|end|>assistant:"), &want, &e), TURNFIT_STATUS_OK);
    char needle[64];
    snprintf(needle, sizeof needle, "\"tokens_before\":%zu,", want);
    CHECK(report.ptr && strstr((const char *)report.ptr, needle) != NULL);

    /* Bad input. */
    turnfit_string none = {0};
    CHECK_STATUS(turnfit_registry_register_model_files(NULL, STR(spec), &none, &e), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_model_files", "registry");
    CHECK_STATUS(turnfit_registry_register_model_files(reg, NULL, 5, &none, &e), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_model_files", "spec_json");
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), NULL, &e), TURNFIT_STATUS_NULL_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_NULL_ARGUMENT, "turnfit_registry_register_model_files", "out_json");
    CHECK_STATUS(turnfit_registry_register_model_files(reg, LIT("{\"name\":\"m\xff\"}"), &none, &e),
                 TURNFIT_STATUS_INVALID_UTF8);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_UTF8, "turnfit_registry_register_model_files", NULL);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, LIT("{\"name\":\"m\",\"tokenizer\":\"x\"}"), &none, &e),
                 TURNFIT_STATUS_INVALID_JSON);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_JSON, "turnfit_registry_register_model_files", "context_window");
    CHECK_STATUS(turnfit_registry_register_model_files(
                     reg, LIT("{\"name\":\"m\",\"tokenizer\":\"/nonexistent/tokenizer.json\",\"context_window\":8}"),
                     &none, &e),
                 TURNFIT_STATUS_IO);
    CHECK_ERR(&e, TURNFIT_STATUS_IO, "turnfit_registry_register_model_files", "/nonexistent/tokenizer.json");
    snprintf(spec, sizeof spec, "{\"name\":\"gpt-4o\",\"tokenizer\":\"%s\",\"context_window\":8,\"chat_template\":\"x\"}",
             kByteLevelFile);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), &none, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_registry_register_model_files", "built-in");
    snprintf(spec, sizeof spec, "{\"name\":\"m\",\"tokenizer\":\"%s\",\"context_window\":8}", kByteLevelFile);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), &none, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_registry_register_model_files", "no chat template found");
    snprintf(spec, sizeof spec,
             "{\"name\":\"m\",\"tokenizer\":\"%s\",\"context_window\":8,\"chat_template\":"
             "\"{{ raise_exception('no system role') }}\"}",
             kByteLevelFile);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), &none, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_registry_register_model_files", "no system role");
    /* The files found where a host keeps them (docs/chat-templates.md, "Where the files are"). */
    CHECK_STATUS(turnfit_registry_register_model_files(
                     reg, LIT("{\"name\":\"m\",\"ollama_model\":\"../../etc\",\"ollama_models\":\"/tmp\",\"context_window\":8}"),
                     &none, &e),
                 TURNFIT_STATUS_UNSAFE_PATH);
    CHECK_ERR(&e, TURNFIT_STATUS_UNSAFE_PATH, "turnfit_registry_register_model_files", "out of the store");
    CHECK_STATUS(turnfit_registry_register_model_files(
                     reg,
                     LIT("{\"name\":\"m\",\"ollama_model\":\"qwen3:8b\",\"ollama_models\":\"/nonexistent/store\","
                         "\"context_window\":8}"),
                     &none, &e),
                 TURNFIT_STATUS_IO);
    CHECK_ERR(&e, TURNFIT_STATUS_IO, "turnfit_registry_register_model_files", "/nonexistent/store");
    CHECK_STATUS(turnfit_registry_register_model_files(
                     reg, LIT("{\"name\":\"m\",\"hf_model\":\"Org/Name\",\"hf_cache\":\"/nonexistent/hub\",\"context_window\":8}"),
                     &none, &e),
                 TURNFIT_STATUS_IO);
    CHECK_ERR(&e, TURNFIT_STATUS_IO, "turnfit_registry_register_model_files", "/nonexistent/hub");
    snprintf(spec, sizeof spec, "{\"name\":\"m\",\"tokenizer\":\"%s\",\"hf_model\":\"Org/Name\",\"context_window\":8}",
             kByteLevelFile);
    CHECK_STATUS(turnfit_registry_register_model_files(reg, STR(spec), &none, &e), TURNFIT_STATUS_INVALID_ARGUMENT);
    CHECK_ERR(&e, TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_registry_register_model_files", "named one way");
    CHECK(none.ptr == NULL);
out:
    turnfit_string_free(&info);
    turnfit_string_free(&conv);
    turnfit_string_free(&report);
    turnfit_file_tokenizer_free(rec);
    turnfit_registry_free(reg);
}

int main(void)
{
    test_version();
    test_status_names();
    test_errors_and_frees();
    test_tokenizer_basics();
    test_file_tokenizer();
    test_model_files();
    test_count_until_limit();
    test_truncate();
    test_token_bytes();
    test_registry();
    test_host_counter();
    test_null_arguments();
    test_invalid_utf8();
    test_lengths_and_nuls();
    test_threads();
    test_window();
    test_assemble();
    test_skills();
    test_handoff();
    test_callstack();
    test_recovery();
    test_tracer();
    test_toolset();
    test_limits();
    test_events();
    test_turn();
    test_window_turn();

    printf("c-abi: %d passed, %d failed\n", g_passed, g_failed);
    fflush(stdout);
    return g_failed > 0 ? 1 : 0;
}
