/*
 * Regression tests for library bugs found while writing the ABI harness, kept
 * as separate programs because they need unusual set-ups (pthread key
 * destructors). Run by `make -C tests/c regressions` (part of `all`), under
 * ASan/UBSan. Each case prints "fixed" or REPRODUCED; the last line is
 * "regressions: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L

#include "turnfit.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STR(s) (s), strlen(s)

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
 * 1. Calling turnfit from a pthread TLS destructor, on a thread that has
 *    already used a tokenizer, fails with TURNFIT_STATUS_PANIC ("cannot access
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
static const turnfit_tokenizer *g_tok;
static pthread_key_t g_key;
static turnfit_status g_dtor_status[4];
static char g_dtor_message[256];

static void key_destructor(void *unused)
{
    (void)unused;
    size_t n = 0;
    bool exceeded = false;
    turnfit_tokens ids = {NULL, 0};
    turnfit_string out = {NULL, 0};
    size_t toks = 0, removed = 0;
    turnfit_error *err = NULL;
    g_dtor_status[0] = turnfit_tokenizer_count(g_tok, STR("hello world"), &n, &err);
    if (err) {
        snprintf(g_dtor_message, sizeof g_dtor_message, "%s", turnfit_error_message(err, NULL));
        turnfit_error_free(err);
    }
    g_dtor_status[1] = turnfit_tokenizer_count_until_limit(g_tok, STR("hello world"), 10, &n, &exceeded, NULL);
    g_dtor_status[2] = turnfit_tokenizer_encode(g_tok, STR("hello world"), &ids, NULL);
    turnfit_tokens_free(&ids);
    g_dtor_status[3] = turnfit_tokenizer_truncate(g_tok, STR("hello world"), 1, TURNFIT_TRUNCATE_SIDE_HEAD, NULL, 0, &out,
                                                 &toks, &removed, NULL);
    turnfit_string_free(&out);
}

static void *thread_main(void *unused)
{
    (void)unused;
    size_t n = 0;
    turnfit_tokenizer_count(g_tok, STR("warm up this thread's scratch space"), &n, NULL);
    pthread_setspecific(g_key, (void *)1);
    return NULL;
}

static void tls_destructor_case(void)
{
    turnfit_tokenizer *t = NULL;
    if (turnfit_tokenizer_new(STR("cl100k_base"), 0, &t, NULL) != TURNFIT_STATUS_OK) {
        report("turnfit call from a pthread key destructor", true, "could not create a tokenizer");
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
             turnfit_status_name(g_dtor_status[0]), turnfit_status_name(g_dtor_status[1]),
             turnfit_status_name(g_dtor_status[2]), turnfit_status_name(g_dtor_status[3]), g_dtor_message);
    for (int i = 0; i < 4; i++)
        bug = bug || g_dtor_status[i] != TURNFIT_STATUS_OK;
    report("turnfit call from a pthread key destructor", bug, bug ? detail : NULL);
    turnfit_tokenizer_free(t);
}

/*
 * 2. turnfit_registry_register with a JSON *array* whose element is invalid
 *    returns the right status (INVALID_JSON) but a misleading message:
 *    "invalid type: map, expected a string at line 1 column 1", which names
 *    neither the bad field nor the bad encoding. register_json
 *    (core/src/models.rs) re-parses the whole document as a single
 *    ModelProfile to get a better message, which only helps for objects.
 */
static void array_message_case(void)
{
    turnfit_registry *reg = NULL;
    turnfit_registry_new(&reg, NULL);
    size_t n = 0;
    turnfit_error *err = NULL;
    turnfit_status st =
        turnfit_registry_register(reg, STR("[{\"name\":\"x\",\"encoding\":\"cl100k\",\"exact\":true}]"), &n, &err);
    const char *msg = err ? turnfit_error_message(err, NULL) : "";
    bool bug = st != TURNFIT_STATUS_INVALID_JSON || strstr(msg, "cl100k") == NULL;
    report("register([bad profile]) message names the problem", bug, bug ? msg : NULL);
    turnfit_error_free(err);
    turnfit_registry_free(reg);
}

/*
 * Issue 14: bugs an independent abuse run of the C ABI reached in core.
 * Each case fails (REPRODUCED) on the library before the fix.
 */
static turnfit_status call_status(turnfit_status st, turnfit_error **err, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (*err) {
        snprintf(msg, cap, "%s", turnfit_error_message(*err, NULL));
        turnfit_error_free(*err);
        *err = NULL;
    }
    return st;
}

/* 1. A u64::MAX budget was accepted; preflight then panicked or said "fits"
 *    with a negative remaining. Refused now; at the limit, figures agree. */
static void budget_case(void)
{
    turnfit_error *err = NULL;
    turnfit_window *w = NULL;
    char msg[512];
    const char *huge[] = {
        "{\"context_window\":18446744073709551615,\"reserved_output\":18446744073709551614}",
        "{\"context_window\":18446744073709551615}",
        "{\"context_window\":4294967296}",
    };
    bool bug = false;
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        turnfit_status st = call_status(turnfit_window_new(NULL, STR("gpt-4o"), STR(huge[i]), &w, &err), &err, msg, sizeof msg);
        if (st != TURNFIT_STATUS_INVALID_ARGUMENT || !strstr(msg, "MAX_BUDGET_TOKENS")) {
            bug = true;
            turnfit_window_free(w);
            w = NULL;
        }
    }
    turnfit_string conv = {NULL, 0}, fit_report = {NULL, 0};
    turnfit_status st = call_status(turnfit_fit(NULL, STR("[{\"role\":\"user\",\"content\":\"hi\"}]"),
                                              STR("{\"model\":\"gpt-4o\",\"max_tokens\":18446744073709551615}"), &conv,
                                              &fit_report, &err),
                                   &err, msg, sizeof msg);
    bug |= st != TURNFIT_STATUS_INVALID_ARGUMENT;
    turnfit_string_free(&conv);
    turnfit_string_free(&fit_report);
    st = turnfit_window_new(NULL, STR("gpt-4o"), STR("{\"context_window\":4294967295}"), &w, &err);
    turnfit_string pre = {NULL, 0};
    if (st == TURNFIT_STATUS_OK && turnfit_window_preflight(w, NULL, 0, &pre, &err) == TURNFIT_STATUS_OK)
        bug |= strstr((const char *)pre.ptr, "\"remaining\":-") != NULL || strstr((const char *)pre.ptr, "\"verdict\":\"fits\"") == NULL;
    else
        bug = true;
    turnfit_string_free(&pre);
    turnfit_window_free(w);
    turnfit_error_free(err);
    report("issue 14.1 budget arithmetic bounded", bug, bug ? msg : NULL);
}

/* 4. decode returned 128 MiB for a million copies of a 128-byte token. */
static void decode_bound_case(void)
{
    turnfit_tokenizer *t = NULL;
    turnfit_error *err = NULL;
    char msg[512] = "";
    turnfit_tokenizer_new(STR("o200k_base"), 0, &t, &err);
    /* The longest o200k token: search the vocabulary once. */
    uint32_t best = 0;
    size_t best_len = 0;
    for (uint32_t id = 0; id < 200000; id++) {
        turnfit_string s = {NULL, 0};
        if (turnfit_tokenizer_decode(t, &id, 1, TURNFIT_DECODE_MODE_REPLACE, &s, NULL) == TURNFIT_STATUS_OK && s.len > best_len) {
            best = id;
            best_len = s.len;
        }
        turnfit_string_free(&s);
    }
    size_t n = (64u << 20) / best_len + 1;
    uint32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = best;
    turnfit_string out = {NULL, 0};
    turnfit_status st = call_status(turnfit_tokenizer_decode(t, ids, n, TURNFIT_DECODE_MODE_REPLACE, &out, &err), &err, msg, sizeof msg);
    bool bug = st != TURNFIT_STATUS_LIMIT_EXCEEDED || out.ptr != NULL;
    turnfit_string_free(&out);
    st = turnfit_tokenizer_decode(t, ids, n - 1, TURNFIT_DECODE_MODE_REPLACE, &out, NULL);
    bug |= st != TURNFIT_STATUS_OK || out.len != (n - 1) * best_len;
    turnfit_string_free(&out);
    free(ids);
    turnfit_tokenizer_free(t);
    report("issue 14.4 decode output bounded", bug, bug ? msg : NULL);
}

/* 5. repair with a 1 MiB synthetic text amplified 70 calls into 73 MB. */
static void repair_bound_case(void)
{
    turnfit_window *w = NULL;
    turnfit_error *err = NULL;
    char msg[512] = "";
    turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL);
    char conv[8192];
    size_t k = (size_t)snprintf(conv, sizeof conv, "[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[");
    for (int i = 0; i < 70; i++)
        k += (size_t)snprintf(conv + k, sizeof conv - k,
                              "%s{\"id\":\"c%d\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}",
                              i ? "," : "", i);
    snprintf(conv + k, sizeof conv - k, "]}]");
    bool bug = turnfit_window_load(w, STR(conv), NULL) != TURNFIT_STATUS_OK;
    size_t big = 1u << 20;
    char *text = malloc(big);
    memset(text, 'x', big);
    turnfit_string out = {NULL, 0};
    turnfit_status st = call_status(turnfit_window_repair(w, text, big, &out, &err), &err, msg, sizeof msg);
    bug |= st != TURNFIT_STATUS_LIMIT_EXCEEDED || out.ptr != NULL;
    st = turnfit_window_repair(w, text, 200u * 1024, &out, &err); /* 70 x 200 KiB: over the 64 KiB text bound */
    bug |= st != TURNFIT_STATUS_LIMIT_EXCEEDED;
    turnfit_error_free(err);
    err = NULL;
    st = turnfit_window_repair(w, text, 1000, &out, NULL);
    bug |= st != TURNFIT_STATUS_OK;
    turnfit_string_free(&out);
    free(text);
    turnfit_window_free(w);
    report("issue 14.5 repair cannot amplify", bug, bug ? msg : NULL);
}

/* 3. Untouched numbers came back re-formatted. */
static void number_round_trip_case(void)
{
    const char *doc = "[{\"role\":\"user\",\"content\":\"hi\",\"a\":123456789012345678901234567890,\"b\":-0,\"c\":0.10,"
                      "\"d\":1e-400,\"e\":1E5}]";
    const char *want = "[{\"role\":\"user\",\"content\":\"hi\",\"a\":123456789012345678901234567890,\"b\":-0,\"c\":0.10,"
                       "\"d\":1e-400,\"e\":1e+5}]";
    turnfit_window *w = NULL;
    turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL);
    turnfit_string out = {NULL, 0};
    bool bug = turnfit_window_load(w, STR(doc), NULL) != TURNFIT_STATUS_OK ||
               turnfit_window_conversation(w, &out, NULL) != TURNFIT_STATUS_OK || strcmp((const char *)out.ptr, want) != 0;
    report("issue 14.3 numbers round-trip exactly", bug, bug && out.ptr ? (const char *)out.ptr : NULL);
    turnfit_string_free(&out);
    turnfit_window_free(w);
}

/* 2. skills_body hung forever when a skill file became a FIFO. */
static void skills_fifo_case(void)
{
    char root[] = "/tmp/turnfit-fifo-XXXXXX";
    char dir[128], file[160];
    bool bug = mkdtemp(root) == NULL;
    snprintf(dir, sizeof dir, "%s/victim", root);
    snprintf(file, sizeof file, "%s/SKILL.md", dir);
    mkdir(dir, 0700);
    FILE *f = fopen(file, "w");
    if (f) {
        fputs("---\nname: victim\ndescription: V.\n---\nbody\n", f);
        fclose(f);
    }
    turnfit_skills *sk = NULL;
    bug |= turnfit_skills_open(root, strlen(root), NULL, 0, &sk, NULL) != TURNFIT_STATUS_OK;
    unlink(file);
    bug |= mkfifo(file, 0600) != 0;
    turnfit_string out = {NULL, 0};
    turnfit_status st = turnfit_skills_body(sk, STR("victim"), &out, NULL);
    bug |= st != TURNFIT_STATUS_IO || out.ptr != NULL;
    turnfit_skills_free(sk);
    unlink(file);
    rmdir(dir);
    rmdir(root);
    report("issue 14.2 skills body refuses a FIFO", bug, NULL);
}

/* 7. A thread whose *first* turnfit call ran in a pthread key destructor
 *    leaked its scratch buffers (~1 MiB): the thread-local registered its
 *    destructor after glibc had run them. LeakSanitizer reports the leak at
 *    exit if it comes back; the status checks run here. */
static pthread_key_t g_cold_key;
static turnfit_status g_cold_status = TURNFIT_STATUS_PANIC;

static void cold_destructor(void *unused)
{
    (void)unused;
    size_t n = 0;
    char text[4096];
    memset(text, 'a', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    g_cold_status = turnfit_tokenizer_count(g_tok, STR(text), &n, NULL);
}

static void *cold_thread(void *unused)
{
    (void)unused;
    pthread_setspecific(g_cold_key, (void *)1);
    return NULL;
}

static void first_call_in_key_destructor_case(void)
{
    turnfit_tokenizer *t = NULL;
    turnfit_tokenizer_new(STR("o200k_base"), 0, &t, NULL);
    g_tok = t;
    pthread_key_create(&g_cold_key, cold_destructor);
    bool bug = false;
    for (int i = 0; i < 8; i++) {
        pthread_t th;
        g_cold_status = TURNFIT_STATUS_PANIC;
        pthread_create(&th, NULL, cold_thread, NULL);
        pthread_join(th, NULL);
        bug |= g_cold_status != TURNFIT_STATUS_OK;
    }
    pthread_key_delete(g_cold_key);
    turnfit_tokenizer_free(t);
    report("issue 14.7 first call in a key destructor", bug, NULL);
}

/* 8. Tracer percentiles saturated above 2^43 us. */
static void tracer_range_case(void)
{
    turnfit_tracer *tr = NULL;
    turnfit_tracer_new(NULL, 0, &tr, NULL);
    uint64_t id = 0;
    bool bug = false;
    for (int i = 0; i < 10; i++) {
        bug |= turnfit_tracer_start(tr, STR("slow"), NULL, 0, 0, 0, &id, NULL) != TURNFIT_STATUS_OK;
        bug |= turnfit_tracer_end(tr, id, 0, 0, NULL, 0, 2000000000000000ull, NULL) != TURNFIT_STATUS_OK;
    }
    turnfit_string out = {NULL, 0};
    bug |= turnfit_tracer_export(tr, 2000000000000000ull, &out, NULL) != TURNFIT_STATUS_OK;
    /* Within 1/16 of 2e15; it used to be clamped to about 1e15. */
    const char *p = out.ptr ? strstr((const char *)out.ptr, "\"p95\":") : NULL;
    unsigned long long p95 = p ? strtoull(p + 6, NULL, 10) : 0;
    bug |= p95 < 2000000000000000ull - 2000000000000000ull / 16 || p95 > 2000000000000000ull + 2000000000000000ull / 16;
    report("issue 14.8 percentiles over the u64 range", bug, bug && p ? p : NULL);
    turnfit_string_free(&out);
    turnfit_tracer_free(tr);
}

/* 9. A 4 MiB model name was looked up for seconds and echoed whole; the
 *    registry and handoffs accepted repeated keys. */
static void names_and_keys_case(void)
{
    size_t big = 4u << 20;
    char *name = malloc(big);
    memset(name, 'g', big);
    turnfit_tokenizer *t = NULL;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_new_for_model(NULL, name, big, NULL, 0, 0, &t, &err);
    size_t mlen = 0;
    if (err)
        turnfit_error_message(err, &mlen);
    bool bug = st != TURNFIT_STATUS_INVALID_ARGUMENT || mlen > 600;
    turnfit_error_free(err);
    err = NULL;
    free(name);
    turnfit_registry *reg = NULL;
    turnfit_registry_new(&reg, NULL);
    size_t n = 0;
    st = turnfit_registry_register(reg, STR("{\"name\":\"m\",\"encoding\":\"o200k_base\",\"name\":\"n\"}"), &n, &err);
    const char *msg = err ? turnfit_error_message(err, NULL) : "";
    bug |= st != TURNFIT_STATUS_INVALID_JSON || !strstr(msg, "duplicate key");
    turnfit_error_free(err);
    err = NULL;
    turnfit_string out = {NULL, 0};
    st = turnfit_handoff_validate(STR("{\"version\":\"1.0\",\"version\":\"1.0\",\"task_summary\":\"t\",\"key_outputs\":[],"
                                     "\"metadata\":{\"from_agent\":\"a\",\"to_agent\":\"b\",\"created_at\":\"2026-03-01T12:00:00Z\"}}"),
                                 &out, &err);
    bug |= st != TURNFIT_STATUS_INVALID_JSON;
    turnfit_string_free(&out);
    turnfit_error_free(err);
    turnfit_registry_free(reg);
    report("issue 14.9 names capped, repeated keys refused", bug, NULL);
}

int main(void)
{
    tls_destructor_case();
    array_message_case();
    budget_case();
    number_round_trip_case();
    decode_bound_case();
    repair_bound_case();
    tracer_range_case();
    names_and_keys_case();
    skills_fifo_case();
    first_call_in_key_destructor_case();
    printf("regressions: %d passed, %d failed\n", g_fixed, g_reproduced);
    return g_reproduced != 0;
}
