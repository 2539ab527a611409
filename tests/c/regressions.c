/*
 * Regression tests for library bugs found while writing the ABI harness, kept
 * as separate programs because they need unusual set-ups (pthread key
 * destructors). Run by `make -C tests/c regressions` (part of `all`), under
 * ASan/UBSan. Each case prints "fixed" or REPRODUCED; the last line is
 * "regressions: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L

#include "ctxkit.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define STR(s) (const uint8_t *)(s), strlen(s)

static int g_reproduced;
static int g_fixed;

static void report(const char *name, bool bug, const char *detail)
{
    printf("%-44s %s%s%s\n", name, bug ? "REPRODUCED" : "fixed", detail ? ": " : "", detail ? detail : "");
    if (bug)
        g_reproduced++;
    else
        g_fixed++;
}

/*
 * 1. Calling ctxkit from a pthread TLS destructor, on a thread that has
 *    already used a tokenizer, fails with CTXKIT_STATUS_PANIC ("cannot access
 *    a Thread Local Storage value during or after destruction") and prints a
 *    Rust panic message to the host's stderr. glibc runs Rust's thread-local
 *    destructors (__call_tls_dtors) before pthread key destructors
 *    (__nptl_deallocate_tsd), so the engine's `thread_local! SCRATCH`
 *    (core/src/tokens/engine.rs) is already gone. count, count_until_limit,
 *    encode and truncate are affected; decode and the registry are not.
 *    Hosts that clean up per-thread state in key destructors (language
 *    runtimes, thread pools) hit this. A fix: `SCRATCH.try_with(..)` with a
 *    fresh local Scratch as the fallback.
 */
static const ctxkit_tokenizer *g_tok;
static pthread_key_t g_key;
static ctxkit_status g_dtor_status[4];
static char g_dtor_message[256];

static void key_destructor(void *unused)
{
    (void)unused;
    size_t n = 0;
    bool exceeded = false;
    ctxkit_tokens ids = {NULL, 0};
    ctxkit_string out = {NULL, 0};
    size_t toks = 0, removed = 0;
    ctxkit_error *err = NULL;
    g_dtor_status[0] = ctxkit_tokenizer_count(g_tok, STR("hello world"), &n, &err);
    if (err) {
        snprintf(g_dtor_message, sizeof g_dtor_message, "%s", ctxkit_error_message(err, NULL));
        ctxkit_error_free(err);
    }
    g_dtor_status[1] = ctxkit_tokenizer_count_until_limit(g_tok, STR("hello world"), 10, &n, &exceeded, NULL);
    g_dtor_status[2] = ctxkit_tokenizer_encode(g_tok, STR("hello world"), &ids, NULL);
    ctxkit_tokens_free(&ids);
    g_dtor_status[3] = ctxkit_tokenizer_truncate(g_tok, STR("hello world"), 1, CTXKIT_TRUNCATE_SIDE_HEAD, NULL, 0, &out,
                                                 &toks, &removed, NULL);
    ctxkit_string_free(&out);
}

static void *thread_main(void *unused)
{
    (void)unused;
    size_t n = 0;
    ctxkit_tokenizer_count(g_tok, STR("warm up this thread's scratch space"), &n, NULL);
    pthread_setspecific(g_key, (void *)1);
    return NULL;
}

static void tls_destructor_case(void)
{
    ctxkit_tokenizer *t = NULL;
    if (ctxkit_tokenizer_new(STR("cl100k_base"), 0, &t, NULL) != CTXKIT_STATUS_OK) {
        report("ctxkit call from a pthread key destructor", true, "could not create a tokenizer");
        return;
    }
    g_tok = t;
    pthread_key_create(&g_key, key_destructor);
    pthread_t th;
    pthread_create(&th, NULL, thread_main, NULL);
    pthread_join(th, NULL);
    pthread_key_delete(g_key);
    bool bug = false;
    char detail[512];
    snprintf(detail, sizeof detail, "count %s, count_until_limit %s, encode %s, truncate %s; %s",
             ctxkit_status_name(g_dtor_status[0]), ctxkit_status_name(g_dtor_status[1]),
             ctxkit_status_name(g_dtor_status[2]), ctxkit_status_name(g_dtor_status[3]), g_dtor_message);
    for (int i = 0; i < 4; i++)
        bug = bug || g_dtor_status[i] != CTXKIT_STATUS_OK;
    report("ctxkit call from a pthread key destructor", bug, bug ? detail : NULL);
    ctxkit_tokenizer_free(t);
}

/*
 * 2. ctxkit_registry_register with a JSON *array* whose element is invalid
 *    returns the right status (INVALID_JSON) but a misleading message:
 *    "invalid type: map, expected a string at line 1 column 1", which names
 *    neither the bad field nor the bad encoding. register_json
 *    (core/src/models.rs) re-parses the whole document as a single
 *    ModelProfile to get a better message, which only helps for objects.
 */
static void array_message_case(void)
{
    ctxkit_registry *reg = NULL;
    ctxkit_registry_new(&reg, NULL);
    size_t n = 0;
    ctxkit_error *err = NULL;
    ctxkit_status st =
        ctxkit_registry_register(reg, STR("[{\"name\":\"x\",\"encoding\":\"cl100k\",\"exact\":true}]"), &n, &err);
    const char *msg = err ? ctxkit_error_message(err, NULL) : "";
    bool bug = st != CTXKIT_STATUS_INVALID_JSON || strstr(msg, "cl100k") == NULL;
    report("register([bad profile]) message names the problem", bug, bug ? msg : NULL);
    ctxkit_error_free(err);
    ctxkit_registry_free(reg);
}

int main(void)
{
    tls_destructor_case();
    array_message_case();
    printf("regressions: %d passed, %d failed\n", g_fixed, g_reproduced);
    return g_reproduced != 0;
}
