/*
 * Regression tests for library bugs found while writing the ABI harness, kept
 * as separate programs because they need unusual set-ups (pthread key
 * destructors). Run by `make -C tests/c regressions` (part of `all`), under
 * ASan/UBSan. Each case prints "fixed" or REPRODUCED; the last line is
 * "regressions: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include "turnfit.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/*
 * Issue 33 (causes A, B, E, F): what a second abuse run of the C ABI found.
 * Each case fails (REPRODUCED) on the library before the fix.
 */

/* A JSON object parameter given by position or with a repeated key, and
 * what the call answered. */
struct object_case {
    const char *what;
    turnfit_status st;
    char msg[512];
};

static void expect_json_error(struct object_case *c, const char *needle, bool *bug, char *detail, size_t cap)
{
    if (c->st != TURNFIT_STATUS_INVALID_JSON || !strstr(c->msg, needle)) {
        *bug = true;
        size_t used = strlen(detail);
        snprintf(detail + used, cap - used, "%s%s: %s %s", used ? "; " : "", c->what, turnfit_status_name(c->st), c->msg);
    }
}

/* A. Every options object accepted a JSON array (serde's positional form of
 *    a struct), skipping field names and the unknown-field check:
 *    tracer_new("[5]") made a ring of 5, a budget [1000] a 1,000-token
 *    window, a policy ["all"] allowed every special token. */
static void options_by_position_case(void)
{
    char root[] = "/tmp/turnfit-opts-XXXXXX";
    bool setup = mkdtemp(root) != NULL;
    const char *handoff = "{\"version\":\"1.0\",\"task_summary\":\"t\",\"key_outputs\":[],"
                          "\"metadata\":{\"from_agent\":\"a\",\"to_agent\":\"b\",\"created_at\":\"2026-03-01T12:00:00Z\"}}";
    const char *conv = "[{\"role\":\"user\",\"content\":\"hi\"}]";
    turnfit_error *err = NULL;
    turnfit_tracer *tr = NULL;
    turnfit_breaker *br = NULL;
    turnfit_window *w = NULL;
    turnfit_skills *sk = NULL;
    turnfit_callstack *cs = NULL;
    turnfit_tokenizer *tok = NULL;
    turnfit_string a = {NULL, 0}, b = {NULL, 0};
    turnfit_tokens ids = {NULL, 0};
    uint64_t span = 0;
    struct object_case c[17];
    size_t n = 0;
#define CASE(name, call)                                                                                                \
    do {                                                                                                               \
        c[n].what = name;                                                                                              \
        c[n].st = call_status(call, &err, c[n].msg, sizeof c[n].msg);                                                   \
        n++;                                                                                                           \
    } while (0)
    CASE("tracer_new [5]", turnfit_tracer_new(STR("[5]"), &tr, &err));
    turnfit_tracer_free(tr);
    tr = NULL;
    CASE("breaker_new [3]", turnfit_breaker_new(STR("[3]"), &br, &err));
    turnfit_breaker_free(br);
    CASE("window_new [1000]", turnfit_window_new(NULL, STR("gpt-4o"), STR("[1000]"), &w, &err));
    turnfit_window_free(w);
    w = NULL;
    CASE("fit [\"gpt-4o\"]", turnfit_fit(NULL, STR(conv), STR("[\"gpt-4o\"]"), &a, &b, &err));
    turnfit_string_free(&a);
    turnfit_string_free(&b);
    setup &= turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL) == TURNFIT_STATUS_OK &&
             turnfit_window_load(w, STR(conv), NULL) == TURNFIT_STATUS_OK;
    CASE("window_compact []", turnfit_window_compact(w, STR("[]"), &a, &err));
    turnfit_string_free(&a);
    turnfit_window_free(w);
    CASE("skills_open []", turnfit_skills_open(root, strlen(root), STR("[]"), &sk, &err));
    turnfit_skills_free(sk);
    sk = NULL;
    CASE("skills_open_in []", turnfit_skills_open_in(NULL, root, strlen(root), STR("[]"), &sk, &err));
    turnfit_skills_free(sk);
    sk = NULL;
    setup &= turnfit_skills_open(root, strlen(root), NULL, 0, &sk, NULL) == TURNFIT_STATUS_OK;
    CASE("skills_render_index [1000]", turnfit_skills_render_index(sk, STR("[1000]"), &a, &err));
    turnfit_string_free(&a);
    turnfit_skills_free(sk);
    CASE("handoff_render []", turnfit_handoff_render(STR(handoff), STR("[]"), &a, &err));
    turnfit_string_free(&a);
    CASE("handoff_render_in []", turnfit_handoff_render_in(NULL, STR(handoff), STR("[]"), &a, &err));
    turnfit_string_free(&a);
    CASE("handoff_filter []", turnfit_handoff_filter(STR(conv), STR("[]"), &a, &err));
    turnfit_string_free(&a);
    CASE("recovery_backoff [{},1,7,null]", turnfit_recovery_backoff(STR("[{},1,7,null]"), &a, &err));
    turnfit_string_free(&a);
    setup &= turnfit_tracer_new(NULL, 0, &tr, NULL) == TURNFIT_STATUS_OK;
    CASE("tracer_start []", turnfit_tracer_start(tr, STR("tool"), STR("[]"), 0, 0, &span, &err));
    setup &= turnfit_tracer_start(tr, STR("tool"), NULL, 0, 0, 0, &span, NULL) == TURNFIT_STATUS_OK;
    CASE("tracer_end_with []", turnfit_tracer_end_with(tr, span, 0, STR("[]"), 1, &err));
    turnfit_tracer_free(tr);
    CASE("callstack_from_json [[\"a\"],1,5]", turnfit_callstack_from_json(STR("[[\"a\"],1,5]"), &cs, &err));
    turnfit_callstack_free(cs);
    CASE("toolset_report [\"gpt-4o\",[]]", turnfit_toolset_report(NULL, STR("[\"gpt-4o\",[]]"), &a, &err));
    turnfit_string_free(&a);
    setup &= turnfit_tokenizer_new(STR("cl100k_base"), 0, &tok, NULL) == TURNFIT_STATUS_OK;
    CASE("encode_special [\"all\"]", turnfit_tokenizer_encode_special(tok, STR("<|endoftext|>"), STR("[\"all\"]"), &ids, &err));
    turnfit_tokens_free(&ids);
    turnfit_tokenizer_free(tok);
#undef CASE
    rmdir(root);
    bool bug = !setup;
    char detail[4096] = "";
    for (size_t i = 0; i < n; i++)
        expect_json_error(&c[i], "expected an object", &bug, detail, sizeof detail);
    report("issue 33.A options by position refused", bug, bug ? detail : NULL);
}

/* E. Two objects still kept the last of a repeated key: tracer_end_with's
 *    metadata and recovery_classify's headers (retry_after_ms 99000). */
static void repeated_keys_case(void)
{
    turnfit_error *err = NULL;
    turnfit_tracer *tr = NULL;
    uint64_t span = 0;
    turnfit_string out = {NULL, 0};
    struct object_case c[2];
    bool setup = turnfit_tracer_new(NULL, 0, &tr, NULL) == TURNFIT_STATUS_OK &&
                 turnfit_tracer_start(tr, STR("tool"), NULL, 0, 0, 0, &span, NULL) == TURNFIT_STATUS_OK;
    c[0].what = "tracer_end_with metadata";
    c[0].st = call_status(turnfit_tracer_end_with(tr, span, 0, STR("{\"metadata\":{\"k\":1,\"k\":2}}"), 1, &err), &err,
                          c[0].msg, sizeof c[0].msg);
    turnfit_tracer_free(tr);
    c[1].what = "recovery_classify headers";
    c[1].st = call_status(turnfit_recovery_classify(STR("openai"), 429, STR("{}"),
                                                    STR("{\"retry-after\":\"1\",\"retry-after\":\"99\"}"), &out, &err),
                          &err, c[1].msg, sizeof c[1].msg);
    turnfit_string_free(&out);
    bool bug = !setup;
    char detail[2048] = "";
    for (size_t i = 0; i < 2; i++)
        expect_json_error(&c[i], "duplicate key", &bug, detail, sizeof detail);
    report("issue 33.E repeated keys refused everywhere", bug, bug ? detail : NULL);
}

/* The comment of `function` in ../../include/turnfit.h (the last one before
 * its prototype), or NULL. Freed by the caller. */
static char *header_comment(const char *function)
{
    static char text[1 << 20];
    static size_t len;
    if (!len) {
        FILE *f = fopen("../../include/turnfit.h", "r");
        if (!f)
            return NULL;
        len = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[len] = '\0';
    }
    char proto[128];
    snprintf(proto, sizeof proto, "\nturnfit_status %s(", function);
    char *at = strstr(text, proto);
    if (!at)
        return NULL;
    char *open = at;
    while (open > text && !(open[0] == '/' && open[1] == '*' && open[2] == '*'))
        open--;
    /* One line of text: each line's " * " margin becomes a space. */
    char *out = malloc((size_t)(at - open) + 1), *w = out;
    for (const char *p = open; p < at; p++) {
        if (*p == '\n') {
            while (p + 1 < at && (p[1] == ' ' || p[1] == '*'))
                p++;
            *w++ = ' ';
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    return out;
}

/* Whether the `Errors:` part of `function`'s comment names `status`. */
static bool documents(const char *function, turnfit_status status)
{
    char *c = header_comment(function);
    const char *errors = c ? strstr(c, "Errors:") : NULL;
    char word[64];
    const char *name = turnfit_status_name(status);
    const char *prefix = "TURNFIT_STATUS_";
    if (strncmp(name, prefix, strlen(prefix)) == 0)
        name += strlen(prefix);
    snprintf(word, sizeof word, "`%s`", name); /* the lists say `LIMIT_EXCEEDED` */
    bool ok = errors && strstr(errors, word);
    /* "as for `turnfit_x`" / "as `turnfit_x`": the list is x's. */
    const char *as = errors ? strstr(errors, "as for `turnfit_") : NULL;
    if (!as && errors)
        as = strstr(errors, "as `turnfit_");
    if (!ok && as) {
        char other[96];
        const char *name = strchr(as, '`') + 1;
        size_t k = strcspn(name, "`");
        if (k < sizeof other) {
            memcpy(other, name, k);
            other[k] = '\0';
            ok = strcmp(other, function) != 0 && documents(other, status);
        }
    }
    free(c);
    return ok;
}

/* B. The header's Errors: lists missed statuses the functions return:
 *    LIMIT_EXCEEDED for an argument over 64 MiB, UNKNOWN_ENCODING for
 *    registry_lookup's bad fallback. */
static void errors_lists_case(void)
{
    size_t big = (64u << 20) + 1;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    turnfit_tokenizer *t = NULL;
    turnfit_window *w = NULL;
    turnfit_breaker *br = NULL;
    turnfit_tracer *tr = NULL;
    turnfit_skills *sk = NULL;
    turnfit_string out = {NULL, 0};
    char root[] = "/tmp/turnfit-errs-XXXXXX";
    bool setup = mkdtemp(root) != NULL && turnfit_tokenizer_new(STR("cl100k_base"), 0, &t, NULL) == TURNFIT_STATUS_OK &&
                 turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL) == TURNFIT_STATUS_OK &&
                 turnfit_tracer_new(NULL, 0, &tr, NULL) == TURNFIT_STATUS_OK &&
                 turnfit_skills_open(root, strlen(root), NULL, 0, &sk, NULL) == TURNFIT_STATUS_OK;
    struct {
        const char *function;
        turnfit_status st;
    } seen[] = {
        {"turnfit_tokenizer_new", turnfit_tokenizer_new(huge, big, 0, &t, NULL)},
        {"turnfit_tokenizer_new_for_model", turnfit_tokenizer_new_for_model(NULL, STR("gpt-4o"), huge, big, 0, &t, NULL)},
        {"turnfit_registry_lookup", turnfit_registry_lookup(NULL, huge, big, NULL, 0, &out, NULL)},
        {"turnfit_registry_lookup", turnfit_registry_lookup(NULL, STR("no-such-model"), STR("no_such_encoding"), &out, NULL)},
        {"turnfit_window_new", turnfit_window_new(NULL, STR("gpt-4o"), huge, big, &w, NULL)},
        {"turnfit_window_compact", turnfit_window_compact(w, huge, big, &out, NULL)},
        {"turnfit_assemble", turnfit_assemble(t, huge, big, &out, NULL)},
        {"turnfit_skills_render_index", turnfit_skills_render_index(sk, huge, big, &out, NULL)},
        {"turnfit_recovery_backoff", turnfit_recovery_backoff(huge, big, &out, NULL)},
        {"turnfit_breaker_new", turnfit_breaker_new(huge, big, &br, NULL)},
        {"turnfit_tracer_end", turnfit_tracer_end(tr, 1, 0, 0, huge, big, 0, NULL)},
    };
    free(huge);
    turnfit_skills_free(sk);
    turnfit_tracer_free(tr);
    turnfit_window_free(w);
    turnfit_tokenizer_free(t);
    rmdir(root);
    bool bug = !setup;
    char detail[2048] = "";
    for (size_t i = 0; i < sizeof seen / sizeof *seen; i++) {
        if (seen[i].st != TURNFIT_STATUS_OK && !documents(seen[i].function, seen[i].st)) {
            bug = true;
            size_t used = strlen(detail);
            snprintf(detail + used, sizeof detail - used, "%s%s returns %s unlisted", used ? "; " : "", seen[i].function,
                     turnfit_status_name(seen[i].st));
        }
        if (seen[i].st == TURNFIT_STATUS_OK)
            bug = true;
    }
    report("issue 33.B Errors: lists name what is returned", bug, bug ? detail : NULL);
}

/* F. docs/formats.md promised messages back "exactly as read", and `1E5`
 *    comes back `1e+5`. What the document says about numbers is what the
 *    library does: every spelling it gives is checked here. */
static void number_spelling_case(void)
{
    FILE *f = fopen("../../docs/formats.md", "r");
    static char text[1 << 20];
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
    /* The promise, and the spellings it lists as "`in` is written `out`". */
    const char *rule = strstr(text, "Numbers keep their digits");
    bool bug = rule == NULL;
    char detail[512] = "docs/formats.md has no \"Numbers keep their digits\" rule";
    int checked = 0;
    const char *p = rule;
    while (p && (p = strstr(p, "is written `")) != NULL && p - rule < 2000) {
        const char *in_end = p - 2, *in = in_end;
        while (in > rule && in[-1] != '`')
            in--;
        const char *out = p + strlen("is written `");
        size_t out_len = strcspn(out, "`");
        char doc[256], want[256];
        snprintf(doc, sizeof doc, "[{\"role\":\"user\",\"content\":\"hi\",\"n\":%.*s}]", (int)(in_end - in), in);
        snprintf(want, sizeof want, "[{\"role\":\"user\",\"content\":\"hi\",\"n\":%.*s}]", (int)out_len, out);
        turnfit_window *w = NULL;
        turnfit_string got = {NULL, 0};
        turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL);
        if (turnfit_window_load(w, STR(doc), NULL) != TURNFIT_STATUS_OK ||
            turnfit_window_conversation(w, &got, NULL) != TURNFIT_STATUS_OK || strcmp((const char *)got.ptr, want) != 0) {
            bug = true;
            snprintf(detail, sizeof detail, "%s gave %s", doc, got.ptr ? (const char *)got.ptr : "an error");
        }
        turnfit_string_free(&got);
        turnfit_window_free(w);
        checked++;
        p = out + out_len;
    }
    bug |= checked < 3;
    report("issue 33.F number spelling as documented", bug, bug ? detail : NULL);
}

/*
 * Issue 33: causes C, D, G and H of the second abuse run, each checked at
 * its class. Each case fails (REPRODUCED) on the library before the fix.
 */

/* One request of each format, with the marks that make it that format. */
static const char *const g33_formats[6] = {"openai", "responses", "anthropic", "gemini", "bedrock", "ai_sdk"};
static const char *const g33_docs[6] = {
    "{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"hi\"},"
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
    "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}]}",
    "{\"instructions\":\"s\",\"input\":[{\"role\":\"user\",\"content\":\"hi\"},{\"type\":\"function_call\",\"call_id\":\"c1\","
    "\"name\":\"f\",\"arguments\":\"{}\"},{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"ok\"}]}",
    "{\"system\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
    "\"tool_use\",\"id\":\"c1\",\"name\":\"f\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
    "\"tool_use_id\":\"c1\",\"content\":\"ok\"}]}]}",
    "{\"systemInstruction\":{\"parts\":[{\"text\":\"s\"}]},\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},"
    "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":"
    "[{\"functionResponse\":{\"name\":\"f\",\"response\":{\"r\":\"ok\"}}}]}]}",
    "{\"system\":[{\"text\":\"s\"}],\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]},{\"role\":\"assistant\","
    "\"content\":[{\"toolUse\":{\"toolUseId\":\"c1\",\"name\":\"f\",\"input\":{}}}]},{\"role\":\"user\",\"content\":"
    "[{\"toolResult\":{\"toolUseId\":\"c1\",\"content\":[{\"text\":\"ok\"}]}}]}],\"inferenceConfig\":{\"maxTokens\":10}}",
    "{\"system\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":"
    "[{\"type\":\"tool-call\",\"toolCallId\":\"c1\",\"toolName\":\"f\",\"input\":{}}]},{\"role\":\"tool\",\"content\":"
    "[{\"type\":\"tool-result\",\"toolCallId\":\"c1\",\"toolName\":\"f\",\"output\":{\"type\":\"text\",\"value\":\"ok\"}}]}]}",
};

/* C. A forced format on a document of another shape read an empty (or
 *    half-read) conversation and said it fits. Every ordered pair of the
 *    six formats: the forced format's own document fits, any other is
 *    refused with INVALID_ARGUMENT naming the forced format. */
static void forced_format_case(void)
{
    bool bug = false;
    char detail[512] = "";
    for (int f = 0; f < 6; f++) {
        for (int d = 0; d < 6; d++) {
            char opts[128];
            snprintf(opts, sizeof opts, "{\"model\":\"gpt-4o\",\"format\":\"%s\"}", g33_formats[f]);
            turnfit_string conv = {NULL, 0}, rep = {NULL, 0};
            turnfit_error *err = NULL;
            char msg[512];
            turnfit_status st = call_status(turnfit_fit(NULL, STR(g33_docs[d]), STR(opts), &conv, &rep, &err), &err, msg, sizeof msg);
            bool ok = f == d ? st == TURNFIT_STATUS_OK
                             : st == TURNFIT_STATUS_INVALID_ARGUMENT && strstr(msg, g33_formats[f]) && strstr(msg, "format");
            if (!ok && !bug) {
                bug = true;
                snprintf(detail, sizeof detail, "format %s on a %s document: status %d %.300s", g33_formats[f], g33_formats[d],
                         (int)st, f == d ? msg : (rep.ptr ? (const char *)rep.ptr : msg));
            }
            turnfit_string_free(&conv);
            turnfit_string_free(&rep);
        }
    }
    /* The issue's own call: a plain Chat Completions request forced to gemini. */
    turnfit_string conv = {NULL, 0}, rep = {NULL, 0};
    turnfit_status st = turnfit_fit(NULL, STR("{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"),
                                   STR("{\"model\":\"gpt-4o\",\"format\":\"gemini\"}"), &conv, &rep, NULL);
    bug |= st != TURNFIT_STATUS_INVALID_ARGUMENT;
    turnfit_string_free(&conv);
    turnfit_string_free(&rep);
    report("issue 33.C forced format must match the document", bug, bug ? detail : NULL);
}

/* D. policy.keep_last_turns = u64::MAX panicked (core/src/window/rounds.rs,
 *    keep_last_turns + 1). Every count of the compaction policy, through
 *    fit and window_compact, with hostile values: a result or a specific
 *    error, never PANIC. */
static void policy_counts_case(void)
{
    static const char *const fields[] = {"target_tokens", "limit_tokens", "tool_output_max", "tool_output_max_bytes",
                                         "keep_first", "keep_last_rounds", "keep_last_turns", "keep_last_messages",
                                         "min_reclaim", "summary_max_tokens", "summarizer_budget"};
    static const char *const values[] = {"0", "1", "4294967295", "9007199254740993", "18446744073709551615"};
    const char *doc = "[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"one\"},"
                      "{\"role\":\"assistant\",\"content\":\"two\"},{\"role\":\"user\",\"content\":\"three\"}]";
    turnfit_window *w = NULL;
    turnfit_window_new(NULL, STR("gpt-4o"), STR("{\"context_window\":1000}"), &w, NULL);
    turnfit_window_load(w, STR(doc), NULL);
    bool bug = false;
    char detail[512] = "";
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
            char policy[256], opts[320];
            snprintf(policy, sizeof policy, "{\"strategy\":\"recency\",\"%s\":%s}", fields[i], values[v]);
            snprintf(opts, sizeof opts, "{\"model\":\"gpt-4o\",\"max_tokens\":1000,\"policy\":%s}", policy);
            turnfit_string conv = {NULL, 0}, rep = {NULL, 0}, out = {NULL, 0};
            turnfit_error *err = NULL;
            char msg[512];
            turnfit_status a = call_status(turnfit_fit(NULL, STR(doc), STR(opts), &conv, &rep, &err), &err, msg, sizeof msg);
            turnfit_status b = call_status(turnfit_window_compact(w, STR(policy), &out, &err), &err, msg, sizeof msg);
            if ((a == TURNFIT_STATUS_PANIC || b == TURNFIT_STATUS_PANIC) && !bug) {
                bug = true;
                snprintf(detail, sizeof detail, "%s = %s: fit %d, compact %d: %.300s", fields[i], values[v], (int)a, (int)b, msg);
            }
            turnfit_string_free(&conv);
            turnfit_string_free(&rep);
            turnfit_string_free(&out);
        }
    }
    turnfit_window_free(w);
    report("issue 33.D policy counts never panic", bug, bug ? detail : NULL);
}

/* G. encode_special scanned the text once per disallowed name (4,096 names
 *    of 256 bytes over 1 MiB took ~7 s). The documented maximum set over
 *    4 MiB, with the leftmost (and, at one offset, longest) name reported:
 *    the time is measured by bench (docs/benchmarks.md), not asserted; the
 *    case checks the answer at the maximum set. */
static void special_scan_case(void)
{
    enum { NAMES = 4096, LEN = 256 };
    size_t text_len = 4u << 20;
    /* Names: "<n>" then 'a' fill to 256 bytes; name 4095 is a prefix-extension
     * test: name 4094 is name 4095 cut short, so at one offset the longer wins. */
    char *json = malloc((size_t)NAMES * (LEN + 4) + 64);
    size_t k = (size_t)sprintf(json, "{\"allowed_special\":[],\"disallowed_special\":[");
    static char names[NAMES][LEN + 1];
    for (int i = 0; i < NAMES; i++) {
        int n = snprintf(names[i], sizeof names[i], "<%04d>", i);
        memset(names[i] + n, 'a' + (i % 26), (size_t)(LEN - n));
        names[i][LEN] = '\0';
    }
    names[NAMES - 2][LEN - 1] = '\0'; /* now a 255-byte prefix of... */
    memcpy(names[NAMES - 2], names[NAMES - 1], LEN - 1); /* ...name 4095 */
    for (int i = 0; i < NAMES; i++)
        k += (size_t)sprintf(json + k, "%s\"%s\"", i ? "," : "", names[i]);
    k += (size_t)sprintf(json + k, "]}");
    char *text = malloc(text_len);
    for (size_t i = 0; i < text_len; i++)
        text[i] = "abcdefgh <>0123"[i % 15];
    size_t at = text_len - 3 * LEN;
    memcpy(text + at, names[NAMES - 1], LEN); /* both 4094 and 4095 start here */
    turnfit_tokenizer *t = NULL;
    turnfit_tokenizer_new(STR("cl100k_base"), 0, &t, NULL);
    turnfit_tokens ids = {NULL, 0};
    turnfit_error *err = NULL;
    char msg[1024];
    turnfit_status st = call_status(turnfit_tokenizer_encode_special(t, text, text_len, json, k, &ids, &err), &err, msg, sizeof msg);
    char want[64];
    snprintf(want, sizeof want, "at byte offset %zu", at);
    bool bug = st != TURNFIT_STATUS_INVALID_ARGUMENT || !strstr(msg, want) || !strstr(msg, "<4095>");
    turnfit_tokens_free(&ids);
    text[at] = 'x'; /* no name left: the whole text encodes */
    st = turnfit_tokenizer_encode_special(t, text, text_len, json, k, &ids, NULL);
    bug |= st != TURNFIT_STATUS_OK || ids.len == 0;
    turnfit_tokens_free(&ids);
    turnfit_tokenizer_free(t);
    free(text);
    free(json);
    report("issue 33.G special scan at the maximum set", bug, bug ? msg : NULL);
}

/* H. Repair's caps counted raw text while the JSON limit counts escaped
 *    bytes: 250 unanswered calls answered with 64 KiB of U+0001 each made
 *    98 MB of conversation JSON that window_load refused. A repair either
 *    refuses (LIMIT_EXCEEDED) or produces a conversation the window loads. */
static void repair_escaped_case(void)
{
    turnfit_window *w = NULL;
    turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL);
    size_t cap = 64u * 1024;
    char *conv = malloc(cap);
    size_t k = (size_t)snprintf(conv, cap, "[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[");
    for (int i = 0; i < 250; i++)
        k += (size_t)snprintf(conv + k, cap - k,
                              "%s{\"id\":\"c%d\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}",
                              i ? "," : "", i);
    snprintf(conv + k, cap - k, "]}]");
    bool bug = turnfit_window_load(w, STR(conv), NULL) != TURNFIT_STATUS_OK;
    size_t n = 64u * 1024;
    char *text = malloc(n);
    memset(text, 1, n);
    turnfit_string out = {NULL, 0}, doc = {NULL, 0};
    turnfit_error *err = NULL;
    char msg[512] = "";
    turnfit_status st = call_status(turnfit_window_repair(w, text, n, &out, &err), &err, msg, sizeof msg);
    if (st == TURNFIT_STATUS_OK) {
        turnfit_window_conversation(w, &doc, NULL);
        turnfit_window *back = NULL;
        turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &back, NULL);
        st = call_status(turnfit_window_load(back, (const char *)doc.ptr, doc.len, &err), &err, msg, sizeof msg);
        bug |= st != TURNFIT_STATUS_OK;
        turnfit_window_free(back);
    } else {
        bug |= st != TURNFIT_STATUS_LIMIT_EXCEEDED || !strstr(msg, "escaped");
    }
    turnfit_string_free(&out);
    turnfit_string_free(&doc);
    free(text);
    free(conv);
    turnfit_window_free(w);
    report("issue 33.H repair counts escaped bytes", bug, bug ? msg : NULL);
}

/* Also noted: a name over 256 bytes, or a synthetic result over 64 KiB, is
 *    refused from its length alone, before the bytes are read. The
 *    arguments sit on one readable page followed by a PROT_NONE page and
 *    claim 16 MiB: reading them (UTF-8 validation) faults. Run in a child
 *    process so a fault is reported, not fatal. */
static void lengths_before_reading_case(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(mem, 'g', (size_t)page);
    mprotect(mem + page, (size_t)page, PROT_NONE);
    size_t stated = 16u << 20;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        turnfit_tokenizer *t = NULL;
        turnfit_window *w = NULL;
        turnfit_string out = {NULL, 0};
        int wrong = 0;
        wrong |= turnfit_tokenizer_new_for_model(NULL, mem, stated, NULL, 0, 0, &t, NULL) != TURNFIT_STATUS_INVALID_ARGUMENT;
        wrong |= turnfit_tokenizer_new_for_model(NULL, STR("gpt-4o"), mem, stated, 0, &t, NULL) != TURNFIT_STATUS_INVALID_ARGUMENT;
        wrong |= turnfit_tokenizer_new(mem, stated, 0, &t, NULL) != TURNFIT_STATUS_INVALID_ARGUMENT;
        wrong |= turnfit_window_new(NULL, mem, stated, NULL, 0, &w, NULL) != TURNFIT_STATUS_INVALID_ARGUMENT;
        turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &w, NULL);
        wrong |= turnfit_window_repair(w, mem, stated, &out, NULL) != TURNFIT_STATUS_LIMIT_EXCEEDED;
        turnfit_window_free(w);
        _exit(wrong);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool bug = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    char detail[64];
    snprintf(detail, sizeof detail, "%s %d", WIFSIGNALED(status) ? "signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    munmap(mem, (size_t)page * 2);
    report("issue 33 name and result lengths before reading", bug, bug ? detail : NULL);
}

/* Issue 48 (noticed too): turnfit_window_turn_finish handed a window other
 *    than the turn's refused it, but the turn was spent: finishing it on its
 *    own window then said "the turn was finished". A refused call must not
 *    advance the turn. */
static void window_turn_wrong_window_case(void)
{
    static const char conv[] = "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                                "{\"role\":\"user\",\"content\":\"Hi\"}]";
    turnfit_window *mine = NULL, *other = NULL;
    turnfit_turn *t = NULL;
    turnfit_string out = {NULL, 0};
    turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &mine, NULL);
    turnfit_window_new(NULL, STR("gpt-4o"), NULL, 0, &other, NULL);
    turnfit_window_load(mine, STR(conv), NULL);
    turnfit_window_load(other, STR(conv), NULL);
    turnfit_status started = turnfit_window_turn_start(NULL, mine, NULL, 0, &t, NULL);
    turnfit_status wrong = turnfit_window_turn_finish(other, t, &out, NULL);
    turnfit_status right = turnfit_window_turn_finish(mine, t, &out, NULL);
    bool bug = started != TURNFIT_STATUS_OK || wrong != TURNFIT_STATUS_INVALID_ARGUMENT || right != TURNFIT_STATUS_OK;
    char detail[96];
    snprintf(detail, sizeof detail, "start %d, wrong window %d, own window %d", (int)started, (int)wrong, (int)right);
    turnfit_string_free(&out);
    turnfit_turn_free(t);
    turnfit_window_free(other);
    turnfit_window_free(mine);
    report("issue 48 window turn finished on another window", bug, bug ? detail : NULL);
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
    options_by_position_case();
    repeated_keys_case();
    errors_lists_case();
    number_spelling_case();
    forced_format_case();
    policy_counts_case();
    special_scan_case();
    repair_escaped_case();
    lengths_before_reading_case();
    window_turn_wrong_window_case();
    printf("regressions: %d passed, %d failed\n", g_fixed, g_reproduced);
    return g_reproduced != 0;
}
