/*
 * Thread stress for libturnfit's C ABI (docs/reliability.md, "Threads").
 *
 *   usage: stress THREADS OPS [light]
 *
 * THREADS threads share one handle of every kind the header documents as
 * thread-safe: a tokenizer, a registry, a skill set (examples/data/skills),
 * a circuit breaker, a tracer, a call stack and a window. Each thread also
 * owns a window of its own. Every thread makes exactly OPS library calls
 * (frees and error accessors not counted), interleaving the handles by a
 * fixed schedule that starts at a different slot on each thread, and checks
 * every result against a single-threaded reference computed first:
 * tokenizer and registry answers are byte-identical, skill bodies equal the
 * reference and listings only ever show bodies as loaded, the per-thread
 * breaker keys and windows go through the same states as the reference
 * runs, and at the end the shared tracer's counters, the shared window's
 * token total and the registry's entries add up to what the threads did.
 *
 * With `light`, the schedule keeps to the tokenizer, the tracer and the
 * breaker, whose calls are the cheapest (for valgrind; see the Makefile).
 *
 * It prints "stress: T threads x N ops ... = C calls in S s" and, last,
 * "stress: P passed, F failed" (the line tests/c/run_harness.sh reads); the
 * exit status is non-zero when F > 0. The time is printed, never checked.
 * The Makefile runs it under ASan+UBSan and under valgrind (memcheck).
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
#include <time.h>

#define LIT(s) (s), (sizeof(s) - 1)
#define STR(s) (s), strlen(s)

#define MAX_THREADS 256
#define SKILLS_DIR "../../examples/data/skills"

/* ------------------------------------------------------------------------ */
/* Bookkeeping of the main thread.                                           */

static int g_passed;
static int g_failed;

static void fail(const char *fmt, ...)
{
    g_failed++;
    fprintf(stdout, "FAIL: ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static bool check(bool ok, const char *what)
{
    if (ok)
        g_passed++;
    else
        fail("%s", what);
    return ok;
}

static bool mem_contains(const void *hay, size_t hay_len, const char *needle)
{
    const size_t n = strlen(needle);
    if (hay == NULL || n > hay_len)
        return false;
    const char *h = hay;
    for (size_t i = 0; i + n <= hay_len; i++)
        if (memcmp(h + i, needle, n) == 0)
            return true;
    return false;
}

static bool same(turnfit_string a, turnfit_string b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Reference calls in the main thread: any failure is fatal for the run, since
 * the threads would have nothing to compare with. */
static void must(turnfit_status st, turnfit_error **errp, const char *what)
{
    turnfit_error *err = *errp;
    if (st == TURNFIT_STATUS_OK && err == NULL)
        return;
    fprintf(stdout, "FAIL: reference call %s: %s: %s\n", what, turnfit_status_name(st),
            err ? turnfit_error_message(err, NULL) : "(no error object)");
    printf("stress: %d passed, %d failed\n", g_passed, g_failed + 1);
    exit(1);
}

/* A number following `key` in a JSON text, or -1. */
static long json_number_after(const char *json, size_t len, const char *key)
{
    const size_t n = strlen(key);
    for (size_t i = 0; i + n < len; i++)
        if (memcmp(json + i, key, n) == 0) {
            long v = 0;
            size_t j = i + n;
            if (j >= len || json[j] < '0' || json[j] > '9')
                return -1;
            while (j < len && json[j] >= '0' && json[j] <= '9')
                v = v * 10 + (json[j++] - '0');
            return v;
        }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Fixtures.                                                                 */

/* Short texts keep each call cheap under valgrind while covering ASCII, CJK,
 * Cyrillic, emoji, code, digits, special-token text, an interior NUL, the
 * empty string, and one paragraph long enough to truncate. */
static const char *const kTexts[] = {
    "hello world",
    "日本語のテキスト",
    "Привет, мир!",
    "🎉👩\u200d👩\u200d👧 ok",
    "x += f(i);\n\t}",
    "3.14159 2718",
    "<|endoftext|>",
    "",
    "The quick brown fox jumps over the lazy dog; 日本語も少し。 Numbers 1234567890 and symbols <>[]{}!? "
    "keep the tokenizer busy, and the end has emoji 🎉🎉 too.",
};
#define N_TEXTS (sizeof kTexts / sizeof kTexts[0])
/* A tenth text holds NULs, so every text is read through text_ptr/text_len. */
static const char kNulText[] = "a\0b c\0";
static size_t text_len(size_t k) { return k == N_TEXTS ? sizeof kNulText - 1 : strlen(kTexts[k]); }
static const char *text_ptr(size_t k) { return k == N_TEXTS ? kNulText : kTexts[k]; }
#define N_ALL_TEXTS (N_TEXTS + 1)

static const char *const kModels[] = {"gpt-4o", "gpt-4", "acme-large", "openai/gpt-4.1-mini", "claude-sonnet-4-5",
                                      "text-davinci-003", "shared-model"};
#define N_MODELS (sizeof kModels / sizeof kModels[0])

static const char kAcmeProfile[] = "{\"name\": \"acme-*\", \"encoding\": \"o200k_base\", \"context_window\": 32000, "
                                   "\"max_output_tokens\": 4096, \"exact\": false, \"family\": \"acme\"}";
/* Every thread registers this same profile again and again. */
static const char kSharedProfile[] =
    "{\"name\": \"shared-model\", \"encoding\": \"cl100k_base\", \"context_window\": 64000, \"exact\": true}";

static const char *const kSkills[] = {"code-review", "pdf-extract", "release-notes", "sql-migrations"};
#define N_SKILLS 4

static const char *const kTools[] = {"read_file", "run_tests", "web_fetch", "write_file"};
#define N_TOOLS 4

static const char kConv[] =
    "{\"model\":\"gpt-4o\",\"messages\":["
    "{\"role\":\"system\",\"content\":\"Be brief.\"},"
    "{\"role\":\"user\",\"content\":\"Deploy build 7\"},"
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"deploy\",\"arguments\":\"{}\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"deployed to staging; 14 checks passed\"},"
    "{\"role\":\"user\",\"content\":\"What happened to the smoke tests?\"}]}";
static const char kWindowBudget[] = "{\"context_window\":200,\"reserved_output\":40}";
static const char kFitOptions[] = "{\"model\":\"gpt-4o\",\"max_tokens\":40,\"reserve_output\":5}";
static const char *const kPushes[] = {
    "{\"role\":\"assistant\",\"content\":\"The smoke tests were skipped.\"}",
    "{\"role\":\"user\",\"content\":\"Run them now, please.\"}",
    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c2\",\"type\":\"function\","
    "\"function\":{\"name\":\"smoke\",\"arguments\":\"{\\\"build\\\":7}\"}}]}",
    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"12 passed, 1 failed: test_login (timeout)\"}",
};
#define N_PUSHES 4
#define WINDOW_PUSHES 8 /* pushes per window cycle, each followed by a preflight */
static const char kSharedPush[] = "{\"role\":\"user\",\"content\":\"ping from a thread\"}";
static const char kSharedBase[] =
    "{\"messages\":[{\"role\":\"system\",\"content\":\"Shared by every thread.\"}]}";

/* Breaker: threshold 3, cool-down 1000 ms, one probe, one success closes. */
static const char kBreakerConfig[] = "{\"failure_threshold\":3,\"cool_down_ms\":1000}";
#define BREAKER_COOL_DOWN 1000
#define BREAKER_STEPS 12
#define BREAKER_PERIOD 2000 /* ms of caller time per cycle */

/* ------------------------------------------------------------------------ */
/* Single-threaded reference results (read-only while threads run).          */

typedef struct {
    size_t count;
    turnfit_tokens ids;
    turnfit_string decoded;
    size_t limit;
    size_t limited_count;
    bool limited_exceeded;
    turnfit_status trunc_status[3];
    turnfit_string trunc_text[3];
    size_t trunc_tokens[3], trunc_removed[3];
} text_ref;

static text_ref g_text[N_ALL_TEXTS];
static turnfit_string g_lookup[N_MODELS];
static turnfit_string g_body[N_SKILLS];
static long g_body_tokens[N_SKILLS];
static turnfit_string g_list_cold;
static turnfit_string g_index;
static turnfit_string g_callstack_root;
static size_t g_push_tokens[N_PUSHES];
static turnfit_string g_preflight[WINDOW_PUSHES];
static turnfit_string g_fit_conv, g_fit_report;
static size_t g_shared_push_tokens;
static long g_shared_history0, g_shared_history1;

/* Truncation budget per side: BOTH needs room for its marker. */
static size_t trunc_budget(uint32_t side) { return side == TURNFIT_TRUNCATE_SIDE_BOTH ? 24 : 4; }

/* Per-thread references whose JSON names the thread. */
typedef struct {
    char key[16];                /* breaker key and agent name: "w07" */
    bool allow[BREAKER_STEPS];   /* expected `allowed` at allow steps */
    turnfit_string state_two;     /* closed, two failures */
    turnfit_string state_closed;  /* closed again after a probe */
    turnfit_string stack_json;    /* planner -> coder -> w07 */
} thread_ref;

static thread_ref g_thread_ref[MAX_THREADS];
static turnfit_string g_shared_key_state;

/* ------------------------------------------------------------------------ */
/* Shared handles.                                                           */

static const turnfit_tokenizer *g_tok;
static turnfit_registry *g_reg;
static const turnfit_skills *g_skills;
static turnfit_breaker *g_breaker;
static turnfit_tracer *g_tracer;
static const turnfit_callstack *g_stack;
static turnfit_window *g_shared_window;

/* ------------------------------------------------------------------------ */
/* Workers.                                                                  */

enum { SUB_TOKENIZER, SUB_REGISTRY, SUB_SKILLS, SUB_BREAKER, SUB_TRACER, SUB_CALLSTACK, SUB_WINDOW, SUB_SHARED_WINDOW, N_SUB };
static const char *const kSubNames[N_SUB] = {"tokenizer", "registry", "skills", "breaker",
                                             "tracer", "callstack", "window", "shared window"};

/* One slot per call; each letter advances that handle's own sequence by one
 * call. Tokenizer calls dominate, as in a real host. The "light" schedule
 * keeps to the three handles whose calls return no JSON or little (the
 * tokenizer, the tracer, the breaker); it costs about a third of the full one
 * per call, which is what lets valgrind run 100,000 calls per thread. */
static const char kScheduleFull[] = "TXTBTRTWTSTXTBTCTWTXTBTRTWTVTXTB";
static const char kScheduleLight[] = "TXTTBTXTTTXTBTTX";
static const char *g_schedule = kScheduleFull;

typedef struct {
    int id;
    long ops_target;
    pthread_barrier_t *barrier;

    long ops;
    long sub_ops[N_SUB];
    long mismatches;
    char first[640];

    /* per-handle sequence positions */
    long tok_step, reg_step, skills_step, breaker_step, tracer_step, stack_step, window_step, shared_step;

    /* registry: the context window last registered for each own name */
    long own_window[4];

    /* skills: bodies this thread has loaded */
    unsigned loaded_mask;

    /* breaker: caller clock */
    uint64_t breaker_base;

    /* tracer */
    uint64_t span;
    bool span_open;
    long span_n;
    uint64_t span_started;
    long tool_count[N_TOOLS], tool_errors[N_TOOLS], tool_in[N_TOOLS], tool_out[N_TOOLS];

    /* callstack */
    turnfit_callstack *entered;

    /* windows */
    turnfit_window *window;
    long shared_pushes;
} worker;

static void mismatch(worker *w, const char *fmt, ...)
{
    w->mismatches++;
    if (w->first[0] != 0)
        return;
    int n = snprintf(w->first, sizeof w->first, "thread %d op %ld: ", w->id, w->ops);
    if (n < 0 || (size_t)n >= sizeof w->first)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first + n, sizeof w->first - (size_t)n, fmt, ap);
    va_end(ap);
}

/* A call that must succeed: the status is OK and no error object was made. */
static bool ok(worker *w, turnfit_status st, turnfit_error **errp, const char *what)
{
    turnfit_error *err = *errp;
    *errp = NULL;
    if (st == TURNFIT_STATUS_OK && err == NULL)
        return true;
    mismatch(w, "%s: %s: %s", what, turnfit_status_name(st), err ? turnfit_error_message(err, NULL) : "(no error)");
    turnfit_error_free(err);
    return false;
}

/* A call that must fail with `want`, with an error object of that code whose
 * message names `fn` and contains `needle`. */
static void fails(worker *w, turnfit_status st, turnfit_error **errp, turnfit_status want, const char *fn,
                  const char *needle)
{
    turnfit_error *err = *errp;
    *errp = NULL;
    size_t len = 0;
    const char *msg = err ? turnfit_error_message(err, &len) : NULL;
    if (st != want || turnfit_error_code(err) != want || msg == NULL || strncmp(msg, fn, strlen(fn)) != 0 ||
        !mem_contains(msg, len, needle))
        mismatch(w, "%s: got %s (%s), expected %s containing '%s'", fn, turnfit_status_name(st), msg ? msg : "no error",
                 turnfit_status_name(want), needle);
    turnfit_error_free(err);
}

static void expect_same(worker *w, const char *what, turnfit_string got, turnfit_string want)
{
    if (!same(got, want))
        mismatch(w, "%s: got %.*s, expected %.*s", what, (int)(got.len > 200 ? 200 : got.len),
                 got.ptr ? (const char *)got.ptr : "", (int)(want.len > 200 ? 200 : want.len), (const char *)want.ptr);
}

static void tokenizer_op(worker *w)
{
    const long s = w->tok_step++;
    const size_t k = (size_t)(s / 6 + w->id) % N_ALL_TEXTS;
    const text_ref *r = &g_text[k];
    const char *text = text_ptr(k);
    const size_t len = text_len(k);
    turnfit_error *err = NULL;
    switch (s % 6) {
    case 0: {
        size_t n = 0;
        if (ok(w, turnfit_tokenizer_count(g_tok, text, len, &n, &err), &err, "count") && n != r->count)
            mismatch(w, "count of text %zu: %zu, expected %zu", k, n, r->count);
        break;
    }
    case 1: {
        turnfit_tokens ids = {NULL, 0};
        if (ok(w, turnfit_tokenizer_encode(g_tok, text, len, &ids, &err), &err, "encode") &&
            (ids.len != r->ids.len || (ids.len > 0 && memcmp(ids.ptr, r->ids.ptr, ids.len * sizeof(uint32_t)) != 0)))
            mismatch(w, "encode of text %zu: %zu ids, expected %zu", k, ids.len, r->ids.len);
        turnfit_tokens_free(&ids);
        break;
    }
    case 2: {
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_tokenizer_decode(g_tok, r->ids.ptr, r->ids.len, TURNFIT_DECODE_MODE_STRICT, &out, &err), &err,
               "decode"))
            expect_same(w, "decode", out, r->decoded);
        turnfit_string_free(&out);
        break;
    }
    case 3: {
        size_t n = 0;
        bool exceeded = !r->limited_exceeded;
        if (ok(w, turnfit_tokenizer_count_until_limit(g_tok, text, len, r->limit, &n, &exceeded, &err), &err,
               "count_until_limit") &&
            (n != r->limited_count || exceeded != r->limited_exceeded))
            mismatch(w, "count_until_limit of text %zu: %zu/%d, expected %zu/%d", k, n, exceeded, r->limited_count,
                     r->limited_exceeded);
        break;
    }
    case 4: {
        const uint32_t side = (uint32_t)(s / 6) % 3;
        turnfit_string out = {NULL, 0};
        size_t toks = 0, removed = 0;
        turnfit_status st =
            turnfit_tokenizer_truncate(g_tok, text, len, trunc_budget(side), side, NULL, 0, &out, &toks, &removed, &err);
        if (st != r->trunc_status[side])
            mismatch(w, "truncate of text %zu side %u: %s, expected %s", k, side, turnfit_status_name(st),
                     turnfit_status_name(r->trunc_status[side]));
        else if (st == TURNFIT_STATUS_OK) {
            expect_same(w, "truncate", out, r->trunc_text[side]);
            if (toks != r->trunc_tokens[side] || removed != r->trunc_removed[side])
                mismatch(w, "truncate of text %zu: %zu/%zu tokens", k, toks, removed);
        }
        turnfit_error_free(err);
        turnfit_string_free(&out);
        break;
    }
    default:
        /* Error paths: each call makes its own error object. */
        if ((s / 6) % 2 == 0) {
            const uint32_t bad[] = {15339, 10000000u + (uint32_t)w->id};
            char needle[32];
            snprintf(needle, sizeof needle, "%u", bad[1]);
            turnfit_string out = {NULL, 0};
            fails(w, turnfit_tokenizer_decode(g_tok, bad, 2, TURNFIT_DECODE_MODE_REPLACE, &out, &err), &err,
                  TURNFIT_STATUS_UNKNOWN_TOKEN, "turnfit_tokenizer_decode", needle);
            if (out.ptr != NULL)
                mismatch(w, "decode wrote its output on failure");
        } else {
            static const char bad[] = "ok \xe6\x97\xa5\xe6";
            size_t n = 7;
            fails(w, turnfit_tokenizer_count(g_tok, LIT(bad), &n, &err), &err, TURNFIT_STATUS_INVALID_UTF8,
                  "turnfit_tokenizer_count", "byte offset 6");
            if (n != 7)
                mismatch(w, "count wrote its output on failure");
        }
        break;
    }
}

static void registry_op(worker *w)
{
    const long s = w->reg_step++;
    turnfit_error *err = NULL;
    const int own = (int)((s / 4) % 4);
    char name[32];
    snprintf(name, sizeof name, "%.15s-m%d", g_thread_ref[w->id].key, own);
    switch (s % 4) {
    case 0: {
        const size_t m = (size_t)(s / 4 + w->id) % N_MODELS;
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_registry_lookup(g_reg, STR(kModels[m]), NULL, 0, &out, &err), &err, kModels[m]))
            expect_same(w, kModels[m], out, g_lookup[m]);
        turnfit_string_free(&out);
        break;
    }
    case 1: {
        /* This thread's own names: only it writes them, so it always reads
         * back what it wrote last. */
        char json[192];
        const long cw = 1000 + s;
        snprintf(json, sizeof json, "{\"name\":\"%s\",\"encoding\":\"cl100k_base\",\"context_window\":%ld,\"exact\":true}",
                 name, cw);
        size_t n = 0;
        if (ok(w, turnfit_registry_register(g_reg, STR(json), &n, &err), &err, "register") && n != 1)
            mismatch(w, "register %s: %zu registered", name, n);
        w->own_window[own] = cw;
        break;
    }
    case 2: {
        char want[64];
        snprintf(want, sizeof want, "\"context_window\":%ld,", w->own_window[own]);
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_registry_lookup(g_reg, STR(name), NULL, 0, &out, &err), &err, name) &&
            (!mem_contains(out.ptr, out.len, want) || !mem_contains(out.ptr, out.len, "\"source\":\"host\"")))
            mismatch(w, "lookup %s: %.*s lacks %s", name, (int)out.len, (const char *)out.ptr, want);
        turnfit_string_free(&out);
        break;
    }
    default:
        if ((s / 4) % 64 == 63) {
            /* Listing under concurrent registration: this thread's names are there. */
            turnfit_string out = {NULL, 0};
            char want[48];
            snprintf(want, sizeof want, "\"name\":\"%.15s-m0\"", g_thread_ref[w->id].key);
            if (ok(w, turnfit_registry_list(g_reg, &out, &err), &err, "list") && !mem_contains(out.ptr, out.len, want))
                mismatch(w, "registry list lacks %s", want);
            turnfit_string_free(&out);
        } else {
            size_t n = 0;
            if (ok(w, turnfit_registry_register(g_reg, LIT(kSharedProfile), &n, &err), &err, "register shared") && n != 1)
                mismatch(w, "register shared-model: %zu registered", n);
        }
        break;
    }
}

/* Checks a listing taken while bodies load: with every `"body_tokens":N`
 * put back to null it equals the cold listing, each N is that skill's
 * reference count, and every body this thread loaded shows as loaded. */
static void check_listing(worker *w, turnfit_string got, unsigned must_be_loaded)
{
    char *norm = malloc(2 * got.len + 16); /* "N" -> "null" grows by at most 3 per 15 bytes */
    if (norm == NULL) {
        mismatch(w, "out of memory");
        return;
    }
    size_t o = 0, i = 0;
    int skill = 0;
    unsigned loaded = 0;
    static const char key[] = "\"body_tokens\":";
    const size_t kl = sizeof key - 1;
    while (i < got.len) {
        if (i + kl <= got.len && memcmp(got.ptr + i, key, kl) == 0) {
            memcpy(norm + o, key, kl);
            o += kl;
            i += kl;
            if (i < got.len && got.ptr[i] >= '0' && got.ptr[i] <= '9') {
                long v = 0;
                while (i < got.len && got.ptr[i] >= '0' && got.ptr[i] <= '9')
                    v = v * 10 + (got.ptr[i++] - '0');
                if (skill >= N_SKILLS || v != g_body_tokens[skill])
                    mismatch(w, "listing: body_tokens %ld for skill %d", v, skill);
                else
                    loaded |= 1u << skill;
                memcpy(norm + o, "null", 4);
                o += 4;
            }
            skill++;
            continue;
        }
        norm[o++] = (char)got.ptr[i++];
    }
    turnfit_string n = {norm, o};
    if (skill != N_SKILLS)
        mismatch(w, "listing has %d body_tokens fields", skill);
    expect_same(w, "skills list (normalized)", n, g_list_cold);
    if ((loaded & must_be_loaded) != must_be_loaded)
        mismatch(w, "listing shows bodies %#x as loaded, this thread loaded %#x", loaded, must_be_loaded);
    free(norm);
}

static void skills_op(worker *w)
{
    const long s = w->skills_step++;
    turnfit_error *err = NULL;
    turnfit_string out = {NULL, 0};
    /* Ten body loads, then a listing and the index: listings are the
     * costliest call here (about 5 times a body). */
    const long phase = s % 12;
    if (phase < 10) {
        const size_t k = (size_t)(phase + s / 12 + w->id) % N_SKILLS;
        if (ok(w, turnfit_skills_body(g_skills, STR(kSkills[k]), &out, &err), &err, kSkills[k])) {
            expect_same(w, kSkills[k], out, g_body[k]);
            w->loaded_mask |= 1u << k;
        }
    } else if (phase == 10) {
        if (ok(w, turnfit_skills_list(g_skills, &out, &err), &err, "skills list"))
            check_listing(w, out, w->loaded_mask);
    } else {
        if (ok(w, turnfit_skills_render_index(g_skills, NULL, 0, &out, &err), &err, "render_index"))
            expect_same(w, "render_index", out, g_index);
    }
    turnfit_string_free(&out);
}

/* One cycle of a breaker key at caller time `t`. Returns the expected
 * `allowed`, or -1 for steps that are not `allow`. Shared by the reference
 * run and the threads so both make the same calls. */
typedef enum { B_ALLOW, B_FAIL, B_SUCCESS, B_STATE } bstep_kind;
typedef struct {
    bstep_kind kind;
    uint64_t at; /* ms after the cycle's start */
    bool shared; /* the key every thread uses */
} bstep;
static const bstep kBreakerSteps[BREAKER_STEPS] = {
    {B_ALLOW, 0, false},                       /* closed: allowed */
    {B_FAIL, 1, false},   {B_FAIL, 2, false},  /* two failures */
    {B_STATE, 3, false},                       /* closed, consecutive_failures 2 */
    {B_SUCCESS, 4, true},                      /* the shared key only ever succeeds */
    {B_FAIL, 5, false},                        /* the third failure opens */
    {B_ALLOW, 6, false},                       /* open: refused */
    {B_ALLOW, 6 + BREAKER_COOL_DOWN, false},   /* cool-down over: the probe */
    {B_ALLOW, 7 + BREAKER_COOL_DOWN, false},   /* a second probe: refused */
    {B_SUCCESS, 8 + BREAKER_COOL_DOWN, false}, /* the probe succeeded: closed */
    {B_STATE, 9 + BREAKER_COOL_DOWN, false},   /* closed, no failures */
    {B_ALLOW, 10 + BREAKER_COOL_DOWN, true},
};

static turnfit_status breaker_call(turnfit_breaker *b, const char *key, const bstep *st, uint64_t base,
                                  bool *allowed, turnfit_string *state, turnfit_error **err)
{
    const uint64_t now = base + st->at;
    switch (st->kind) {
    case B_ALLOW:
        return turnfit_breaker_allow(b, STR(key), now, allowed, err);
    case B_FAIL:
        return turnfit_breaker_record_failure(b, STR(key), now, err);
    case B_SUCCESS:
        return turnfit_breaker_record_success(b, STR(key), now, err);
    default:
        return turnfit_breaker_state(b, STR(key), now, state, err);
    }
}

static void breaker_op(worker *w)
{
    const long s = w->breaker_step++;
    const int k = (int)(s % BREAKER_STEPS);
    const bstep *st = &kBreakerSteps[k];
    const thread_ref *r = &g_thread_ref[w->id];
    const char *key = st->shared ? "shared" : r->key;
    const uint64_t base = 10000 + (uint64_t)(s / BREAKER_STEPS) * BREAKER_PERIOD;
    bool allowed = false;
    turnfit_string state = {NULL, 0};
    turnfit_error *err = NULL;
    if (!ok(w, breaker_call(g_breaker, key, st, base, &allowed, &state, &err), &err, "breaker"))
        return;
    if (st->kind == B_ALLOW && allowed != r->allow[k])
        mismatch(w, "breaker step %d: allowed %d, expected %d", k, allowed, r->allow[k]);
    if (st->kind == B_STATE) {
        /* The steps with state calls see closed breakers, whose JSON carries
         * no times, so every cycle must match the reference cycle. */
        expect_same(w, "breaker state", state, k == 3 ? r->state_two : r->state_closed);
        turnfit_string_free(&state);
    }
}

static void tracer_op(worker *w)
{
    const long s = w->tracer_step++;
    turnfit_error *err = NULL;
    /* Caller time stays under 2.1 s, so with the 10 s default deadline no
     * span of any thread is ever overdue. */
    const uint64_t now = 1000 + (uint64_t)(w->span_n % 100000) * 20;
    const int tool = (int)(w->span_n % N_TOOLS);
    if (!w->span_open && s % 64 == 63) {
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_tracer_overdue(g_tracer, now, &out, &err), &err, "overdue")) {
            turnfit_string want = {(char *)"{\"overdue\":[],\"interrupted_results\":[]}",
                                  strlen("{\"overdue\":[],\"interrupted_results\":[]}")};
            expect_same(w, "overdue", out, want);
        }
        turnfit_string_free(&out);
    } else if (!w->span_open && s % 64 == 31 && w->span_n > 0) {
        /* Ending the last span again fails on every thread, never crashes. */
        fails(w, turnfit_tracer_end(g_tracer, w->span, TURNFIT_SPAN_OUTCOME_SUCCESS, 0, NULL, 0, now, &err), &err,
              TURNFIT_STATUS_INVALID_ARGUMENT, "turnfit_tracer_end", "is not open");
    } else if (!w->span_open) {
        char info[96];
        snprintf(info, sizeof info, "{\"agent_id\":\"%.15s\",\"tool_call_id\":\"%.15s-%ld\"}", g_thread_ref[w->id].key,
                 g_thread_ref[w->id].key, w->span_n);
        if (ok(w, turnfit_tracer_start(g_tracer, STR(kTools[tool]), STR(info), (uint64_t)(10 + tool), now, &w->span, &err),
               &err, "tracer start")) {
            w->span_open = true;
            w->span_started = now;
        }
    } else {
        const bool failed = w->span_n % 10 == 0;
        const uint32_t outcome = failed ? TURNFIT_SPAN_OUTCOME_FAILED : TURNFIT_SPAN_OUTCOME_SUCCESS;
        const uint64_t latency = 100 * (uint64_t)(tool + 1);
        if (ok(w, turnfit_tracer_end(g_tracer, w->span, outcome, 20, failed ? "boom" : NULL, failed ? 4 : 0,
                                    w->span_started + latency, &err),
               &err, "tracer end")) {
            w->tool_count[tool]++;
            w->tool_errors[tool] += failed;
            w->tool_in[tool] += 10 + tool;
            w->tool_out[tool] += 20;
        }
        w->span_open = false;
        w->span_n++;
    }
}

static void callstack_op(worker *w)
{
    const long s = w->stack_step++;
    turnfit_error *err = NULL;
    const thread_ref *r = &g_thread_ref[w->id];
    switch (s % 4) {
    case 0:
        turnfit_callstack_free(w->entered);
        w->entered = NULL;
        ok(w, turnfit_callstack_enter(g_stack, STR(r->key), &w->entered, &err), &err, "enter");
        break;
    case 1: {
        turnfit_string out = {NULL, 0};
        if (w->entered && ok(w, turnfit_callstack_to_json(w->entered, &out, &err), &err, "to_json"))
            expect_same(w, "callstack", out, r->stack_json);
        turnfit_string_free(&out);
        break;
    }
    case 2: {
        char chain[64];
        snprintf(chain, sizeof chain, "planner -> coder -> %.15s -> coder", r->key);
        turnfit_callstack *again = NULL;
        if (w->entered)
            fails(w, turnfit_callstack_enter(w->entered, LIT("coder"), &again, &err), &err, TURNFIT_STATUS_CYCLE_DETECTED,
                  "turnfit_callstack_enter", chain);
        if (again != NULL)
            mismatch(w, "a failed enter wrote its output");
        break;
    }
    default: {
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_callstack_to_json(g_stack, &out, &err), &err, "to_json root"))
            expect_same(w, "root callstack", out, g_callstack_root);
        turnfit_string_free(&out);
        break;
    }
    }
}

/* The own window's cycle: load, then WINDOW_PUSHES x (push, preflight), then
 * a stateless fit of the same conversation. */
#define WINDOW_CYCLE (2 + 2 * WINDOW_PUSHES)

static void window_op(worker *w)
{
    const long s = w->window_step++;
    const int k = (int)(s % WINDOW_CYCLE);
    turnfit_error *err = NULL;
    if (k == 0) {
        ok(w, turnfit_window_load(w->window, LIT(kConv), &err), &err, "window load");
    } else if (k == WINDOW_CYCLE - 1) {
        turnfit_string conv = {NULL, 0}, report = {NULL, 0};
        if (ok(w, turnfit_fit(NULL, LIT(kConv), LIT(kFitOptions), &conv, &report, &err), &err, "fit")) {
            expect_same(w, "fit conversation", conv, g_fit_conv);
            expect_same(w, "fit report", report, g_fit_report);
        }
        turnfit_string_free(&conv);
        turnfit_string_free(&report);
    } else if (k % 2 == 1) {
        const int p = (k / 2) % N_PUSHES;
        size_t tokens = 0;
        if (ok(w, turnfit_window_push(w->window, STR(kPushes[p]), &tokens, &err), &err, "window push") &&
            tokens != g_push_tokens[p])
            mismatch(w, "push %d: %zu tokens, expected %zu", p, tokens, g_push_tokens[p]);
    } else {
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_window_preflight(w->window, NULL, 0, &out, &err), &err, "preflight"))
            expect_same(w, "preflight", out, g_preflight[k / 2 - 1]);
        turnfit_string_free(&out);
    }
}

static void shared_window_op(worker *w)
{
    const long s = w->shared_step++;
    turnfit_error *err = NULL;
    if (s % 4 == 0) {
        size_t tokens = 0;
        if (ok(w, turnfit_window_push(g_shared_window, LIT(kSharedPush), &tokens, &err), &err, "shared push")) {
            w->shared_pushes++;
            if (tokens != g_shared_push_tokens)
                mismatch(w, "shared push: %zu tokens, expected %zu", tokens, g_shared_push_tokens);
        }
    } else {
        /* Other threads push meanwhile: the total only grows, and is at least
         * what this thread has pushed. */
        turnfit_string out = {NULL, 0};
        if (ok(w, turnfit_window_preflight(g_shared_window, NULL, 0, &out, &err), &err, "shared preflight")) {
            const long h = json_number_after(out.ptr, out.len, "\"history\":");
            const long min = g_shared_history0 + w->shared_pushes * (g_shared_history1 - g_shared_history0);
            if (h < min)
                mismatch(w, "shared preflight: history %ld, expected at least %ld", h, min);
        }
        turnfit_string_free(&out);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    turnfit_error *err = NULL;
    /* Creating the own window is the first call. */
    ok(w, turnfit_window_new(NULL, LIT("gpt-4o"), LIT(kWindowBudget), &w->window, &err), &err, "window_new");
    w->ops = 1;
    w->sub_ops[SUB_WINDOW] = 1;
    pthread_barrier_wait(w->barrier);
    const size_t schedule_len = strlen(g_schedule);
    for (size_t slot = (size_t)w->id % schedule_len; w->ops < w->ops_target; slot = (slot + 1) % schedule_len) {
        int sub;
        switch (g_schedule[slot]) {
        case 'T': sub = SUB_TOKENIZER; tokenizer_op(w); break;
        case 'R': sub = SUB_REGISTRY; registry_op(w); break;
        case 'S': sub = SUB_SKILLS; skills_op(w); break;
        case 'B': sub = SUB_BREAKER; breaker_op(w); break;
        case 'X': sub = SUB_TRACER; tracer_op(w); break;
        case 'C': sub = SUB_CALLSTACK; callstack_op(w); break;
        case 'W': sub = SUB_WINDOW; if (w->window) window_op(w); break;
        default: sub = SUB_SHARED_WINDOW; shared_window_op(w); break;
        }
        w->ops++;
        w->sub_ops[sub]++;
    }
    /* Leave no span open, so the tracer's totals add up. */
    if (w->span_open) {
        const int tool = (int)(w->span_n % N_TOOLS);
        if (ok(w, turnfit_tracer_end(g_tracer, w->span, TURNFIT_SPAN_OUTCOME_SUCCESS, 20, NULL, 0,
                                    w->span_started + 100 * (uint64_t)(tool + 1), &err),
               &err, "last tracer end")) {
            w->tool_count[tool]++;
            w->tool_in[tool] += 10 + tool;
            w->tool_out[tool] += 20;
        }
        w->span_open = false;
    }
    turnfit_callstack_free(w->entered);
    turnfit_window_free(w->window);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Reference phase.                                                          */

static void reference(turnfit_tokenizer *tok, turnfit_registry *reg, int threads)
{
    turnfit_error *err = NULL;
    for (size_t k = 0; k < N_ALL_TEXTS; k++) {
        text_ref *r = &g_text[k];
        must(turnfit_tokenizer_count(tok, text_ptr(k), text_len(k), &r->count, &err), &err, "count");
        must(turnfit_tokenizer_encode(tok, text_ptr(k), text_len(k), &r->ids, &err), &err, "encode");
        check(r->ids.len == r->count, "encode and count agree");
        must(turnfit_tokenizer_decode(tok, r->ids.ptr, r->ids.len, TURNFIT_DECODE_MODE_STRICT, &r->decoded, &err), &err,
             "decode");
        check(r->decoded.len == text_len(k) && memcmp(r->decoded.ptr, text_ptr(k), text_len(k)) == 0,
              "decode round-trips");
        r->limit = r->count / 2;
        must(turnfit_tokenizer_count_until_limit(tok, text_ptr(k), text_len(k), r->limit, &r->limited_count,
                                                &r->limited_exceeded, &err),
             &err, "count_until_limit");
        for (uint32_t side = 0; side < 3; side++) {
            r->trunc_status[side] = turnfit_tokenizer_truncate(tok, text_ptr(k), text_len(k), trunc_budget(side), side,
                                                              NULL, 0, &r->trunc_text[side], &r->trunc_tokens[side],
                                                              &r->trunc_removed[side], &err);
            turnfit_error_free(err);
            err = NULL;
        }
    }
    /* The long text really is cut on every side. */
    const text_ref *lr = &g_text[N_TEXTS - 1];
    check(lr->trunc_status[0] == TURNFIT_STATUS_OK && lr->trunc_status[1] == TURNFIT_STATUS_OK &&
              lr->trunc_status[2] == TURNFIT_STATUS_OK && lr->trunc_removed[0] > 0 && lr->trunc_removed[2] > 0 &&
              lr->limited_exceeded,
          "the long text is truncated on every side and exceeds its limit");

    size_t n = 0;
    must(turnfit_registry_register(reg, LIT(kAcmeProfile), &n, &err), &err, "register acme");
    must(turnfit_registry_register(reg, LIT(kSharedProfile), &n, &err), &err, "register shared");
    for (size_t m = 0; m < N_MODELS; m++)
        must(turnfit_registry_lookup(reg, STR(kModels[m]), NULL, 0, &g_lookup[m], &err), &err, kModels[m]);

    /* Skills: bodies from a handle of their own; the cold listing and the
     * index from the shared handle before any body is loaded through it. */
    turnfit_skills *ref_skills = NULL;
    must(turnfit_skills_open(LIT(SKILLS_DIR), NULL, 0, &ref_skills, &err), &err, "skills_open");
    for (int k = 0; k < N_SKILLS; k++) {
        must(turnfit_skills_body(ref_skills, STR(kSkills[k]), &g_body[k], &err), &err, kSkills[k]);
        g_body_tokens[k] = json_number_after(g_body[k].ptr, g_body[k].len, "\"tokens\":");
        check(g_body_tokens[k] > 0, "a body has tokens");
    }
    must(turnfit_skills_list(g_skills, &g_list_cold, &err), &err, "skills_list");
    check(mem_contains(g_list_cold.ptr, g_list_cold.len, "\"valid\":4,\"invalid\":0"), "four valid skills");
    must(turnfit_skills_render_index(g_skills, NULL, 0, &g_index, &err), &err, "render_index");
    {
        /* The listing check works: the warm listing normalizes to the cold one. */
        worker probe;
        memset(&probe, 0, sizeof probe);
        turnfit_string warm = {NULL, 0};
        must(turnfit_skills_list(ref_skills, &warm, &err), &err, "warm list");
        check_listing(&probe, warm, (1u << N_SKILLS) - 1);
        check(probe.mismatches == 0 && !same(warm, g_list_cold), "the warm listing normalizes to the cold one");
        if (probe.mismatches)
            fail("%s", probe.first);
        turnfit_string_free(&warm);
    }
    turnfit_skills_free(ref_skills);

    /* Breaker: the cycle run once per thread key on a breaker of its own. */
    turnfit_breaker *ref_breaker = NULL;
    must(turnfit_breaker_new(LIT(kBreakerConfig), &ref_breaker, &err), &err, "breaker_new");
    for (int t = 0; t < threads; t++) {
        thread_ref *r = &g_thread_ref[t];
        snprintf(r->key, sizeof r->key, "w%02d", t);
        for (int k = 0; k < BREAKER_STEPS; k++) {
            const bstep *st = &kBreakerSteps[k];
            turnfit_string state = {NULL, 0};
            must(breaker_call(ref_breaker, st->shared ? "shared" : r->key, st, 10000, &r->allow[k], &state, &err), &err,
                 "breaker");
            if (st->kind == B_STATE) {
                check(mem_contains(state.ptr, state.len, "\"state\":\"closed\""), "breaker state steps see closed");
                if (k == 3)
                    r->state_two = state;
                else
                    r->state_closed = state;
            }
        }
        check(r->allow[0] && !r->allow[6] && r->allow[7] && !r->allow[8] && r->allow[11],
              "breaker cycle: allowed, refused while open, one probe");
    }
    must(turnfit_breaker_state(ref_breaker, LIT("shared"), 0, &g_shared_key_state, &err), &err, "shared state");
    turnfit_breaker_free(ref_breaker);

    /* Call stacks. */
    must(turnfit_callstack_to_json(g_stack, &g_callstack_root, &err), &err, "root to_json");
    for (int t = 0; t < threads; t++) {
        turnfit_callstack *s = NULL;
        must(turnfit_callstack_enter(g_stack, STR(g_thread_ref[t].key), &s, &err), &err, "enter");
        must(turnfit_callstack_to_json(s, &g_thread_ref[t].stack_json, &err), &err, "to_json");
        turnfit_callstack_free(s);
    }

    /* Windows: one cycle of the own-window sequence, and the fit. */
    turnfit_window *win = NULL;
    must(turnfit_window_new(NULL, LIT("gpt-4o"), LIT(kWindowBudget), &win, &err), &err, "window_new");
    must(turnfit_window_load(win, LIT(kConv), &err), &err, "load");
    for (int j = 0; j < WINDOW_PUSHES; j++) {
        const int p = j % N_PUSHES;
        must(turnfit_window_push(win, STR(kPushes[p]), &g_push_tokens[p], &err), &err, "push");
        must(turnfit_window_preflight(win, NULL, 0, &g_preflight[j], &err), &err, "preflight");
    }
    check(mem_contains(g_preflight[0].ptr, g_preflight[0].len, "\"verdict\":\"fits\"") &&
              !mem_contains(g_preflight[WINDOW_PUSHES - 1].ptr, g_preflight[WINDOW_PUSHES - 1].len,
                            "\"verdict\":\"fits\""),
          "the own window's verdict changes within a cycle");
    turnfit_window_free(win);
    must(turnfit_fit(NULL, LIT(kConv), LIT(kFitOptions), &g_fit_conv, &g_fit_report, &err), &err, "fit");
    check(mem_contains(g_fit_report.ptr, g_fit_report.len, "\"dropped_message\""), "the fit drops messages");

    /* The shared window: its history before and after one push. */
    turnfit_string pre = {NULL, 0};
    must(turnfit_window_preflight(g_shared_window, NULL, 0, &pre, &err), &err, "shared preflight");
    g_shared_history0 = json_number_after(pre.ptr, pre.len, "\"history\":");
    turnfit_string_free(&pre);
    turnfit_window *probe = NULL;
    must(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 0, &probe, &err), &err, "window_new");
    must(turnfit_window_load(probe, LIT(kSharedBase), &err), &err, "load");
    must(turnfit_window_push(probe, LIT(kSharedPush), &g_shared_push_tokens, &err), &err, "push");
    must(turnfit_window_preflight(probe, NULL, 0, &pre, &err), &err, "preflight");
    g_shared_history1 = json_number_after(pre.ptr, pre.len, "\"history\":");
    turnfit_string_free(&pre);
    turnfit_window_free(probe);
    check(g_shared_history0 >= 0 && g_shared_history1 > g_shared_history0, "a push adds to the history");
}

static void free_reference(int threads)
{
    for (size_t k = 0; k < N_ALL_TEXTS; k++) {
        turnfit_tokens_free(&g_text[k].ids);
        turnfit_string_free(&g_text[k].decoded);
        for (int side = 0; side < 3; side++)
            turnfit_string_free(&g_text[k].trunc_text[side]);
    }
    for (size_t m = 0; m < N_MODELS; m++)
        turnfit_string_free(&g_lookup[m]);
    for (int k = 0; k < N_SKILLS; k++)
        turnfit_string_free(&g_body[k]);
    turnfit_string_free(&g_list_cold);
    turnfit_string_free(&g_index);
    turnfit_string_free(&g_callstack_root);
    for (int j = 0; j < WINDOW_PUSHES; j++)
        turnfit_string_free(&g_preflight[j]);
    turnfit_string_free(&g_fit_conv);
    turnfit_string_free(&g_fit_report);
    turnfit_string_free(&g_shared_key_state);
    for (int t = 0; t < threads; t++) {
        turnfit_string_free(&g_thread_ref[t].state_two);
        turnfit_string_free(&g_thread_ref[t].state_closed);
        turnfit_string_free(&g_thread_ref[t].stack_json);
    }
}

/* ------------------------------------------------------------------------ */
/* Final checks: what the threads did adds up.                               */

static void final_checks(worker *workers, int threads)
{
    turnfit_error *err = NULL;
    turnfit_string out = {NULL, 0};

    /* Tracer: every span started was ended; per tool, the counts and byte
     * totals are the threads' sums and every latency is the tool's own. */
    long started = 0;
    long count[N_TOOLS] = {0}, errors[N_TOOLS] = {0}, in[N_TOOLS] = {0}, outb[N_TOOLS] = {0};
    for (int t = 0; t < threads; t++)
        for (int k = 0; k < N_TOOLS; k++) {
            count[k] += workers[t].tool_count[k];
            errors[k] += workers[t].tool_errors[k];
            in[k] += workers[t].tool_in[k];
            outb[k] += workers[t].tool_out[k];
            started += workers[t].tool_count[k];
        }
    if (check(turnfit_tracer_export(g_tracer, 0, &out, &err) == TURNFIT_STATUS_OK && err == NULL, "tracer export")) {
        char want[512];
        snprintf(want, sizeof want, "\"spans_started\":%ld,\"spans_ended\":%ld,", started, started);
        if (!check(mem_contains(out.ptr, out.len, want), "tracer totals"))
            fail("  export lacks %s: %.300s", want, (const char *)out.ptr);
        for (int k = 0; k < N_TOOLS; k++) {
            /* Every failure is counted by category: "boom", a tool's own
               failure with no provider category, is tool_failed. */
            char cats[64] = "";
            if (errors[k] > 0)
                snprintf(cats, sizeof cats, "\"tool_failed\":%ld", errors[k]);
            snprintf(want, sizeof want,
                     "{\"tool\":\"%s\",\"count\":%ld,\"successes\":%ld,\"errors\":%ld,\"timeouts\":0,\"cancelled\":0,"
                     "\"in_flight\":0,\"input_bytes\":%ld,\"output_bytes\":%ld,\"input_tokens\":0,\"output_tokens\":0,"
                     "\"error_categories\":{%s},\"duration_us\":{\"min\":%d,\"max\":%d,",
                     kTools[k], count[k], count[k] - errors[k], errors[k], in[k], outb[k], cats, 100 * (k + 1),
                     100 * (k + 1));
            if (!check(mem_contains(out.ptr, out.len, want), "tracer per-tool totals"))
                fail("  export lacks %s", want);
        }
        check(mem_contains(out.ptr, out.len, "\"open\":[]"), "no span left open");
    }
    turnfit_string_free(&out);
    turnfit_error_free(err);
    err = NULL;

    /* Shared window: the history is the base plus every push. */
    long pushes = 0;
    for (int t = 0; t < threads; t++)
        pushes += workers[t].shared_pushes;
    if (check(turnfit_window_preflight(g_shared_window, NULL, 0, &out, &err) == TURNFIT_STATUS_OK, "shared preflight")) {
        const long h = json_number_after(out.ptr, out.len, "\"history\":");
        const long want = g_shared_history0 + pushes * (g_shared_history1 - g_shared_history0);
        if (!check(h == want, "shared window history adds up"))
            fail("  history %ld, expected %ld (%ld pushes)", h, want, pushes);
    }
    turnfit_string_free(&out);
    turnfit_error_free(err);
    err = NULL;

    /* Breaker: the shared key only saw successes. */
    if (check(turnfit_breaker_state(g_breaker, LIT("shared"), 0, &out, &err) == TURNFIT_STATUS_OK, "shared key state"))
        check(same(out, g_shared_key_state), "the shared breaker key stayed closed");
    turnfit_string_free(&out);
    turnfit_error_free(err);
    err = NULL;

    /* Registry: each thread's names hold what it registered last, and the
     * shared profile is intact. */
    long bad = 0;
    for (int t = 0; t < threads; t++)
        for (int k = 0; k < 4; k++) {
            if (workers[t].own_window[k] == 0)
                continue;
            char name[32], want[64];
            snprintf(name, sizeof name, "%.15s-m%d", g_thread_ref[t].key, k);
            snprintf(want, sizeof want, "\"context_window\":%ld,", workers[t].own_window[k]);
            if (turnfit_registry_lookup(g_reg, STR(name), NULL, 0, &out, NULL) != TURNFIT_STATUS_OK ||
                !mem_contains(out.ptr, out.len, want))
                bad++;
            turnfit_string_free(&out);
        }
    check(bad == 0, "every thread's last registration is in the registry");
    for (size_t m = 0; m < N_MODELS; m++) {
        if (turnfit_registry_lookup(g_reg, STR(kModels[m]), NULL, 0, &out, NULL) == TURNFIT_STATUS_OK)
            check(same(out, g_lookup[m]), "lookups after the run equal the reference");
        else
            fail("lookup of %s failed after the run", kModels[m]);
        turnfit_string_free(&out);
    }

    /* Skills: the index is unchanged; the listing shows every body loaded
     * that any thread loaded. */
    unsigned loaded = 0;
    for (int t = 0; t < threads; t++)
        loaded |= workers[t].loaded_mask;
    if (check(turnfit_skills_render_index(g_skills, NULL, 0, &out, NULL) == TURNFIT_STATUS_OK, "render_index"))
        check(same(out, g_index), "the skills index is unchanged");
    turnfit_string_free(&out);
    if (check(turnfit_skills_list(g_skills, &out, NULL) == TURNFIT_STATUS_OK, "skills list")) {
        worker probe;
        memset(&probe, 0, sizeof probe);
        check_listing(&probe, out, loaded);
        if (!check(probe.mismatches == 0, "the final listing"))
            fail("  %s", probe.first);
    }
    turnfit_string_free(&out);
}

/* ------------------------------------------------------------------------ */

static long parse_arg(const char *s, long min, long max, const char *what)
{
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || !*s || *end != 0 || v < min || v > max) {
        fprintf(stderr, "stress: %s must be %ld to %ld\nusage: stress THREADS OPS [light]\n", what, min, max);
        exit(2);
    }
    return v;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "light") == 0)) {
        fprintf(stderr, "usage: stress THREADS OPS [light]\n");
        return 2;
    }
    if (argc == 4)
        g_schedule = kScheduleLight;
    const int threads = (int)parse_arg(argv[1], 1, MAX_THREADS, "THREADS");
    const long ops = parse_arg(argv[2], 1, 100000000L, "OPS");

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    turnfit_error *err = NULL;
    turnfit_tokenizer *tok = NULL;
    turnfit_registry *reg = NULL;
    turnfit_skills *skills = NULL;
    turnfit_breaker *breaker = NULL;
    turnfit_tracer *tracer = NULL;
    turnfit_callstack *stack = NULL;
    turnfit_window *shared_window = NULL;
    must(turnfit_tokenizer_new(LIT("cl100k_base"), 0, &tok, &err), &err, "tokenizer_new");
    must(turnfit_registry_new(&reg, &err), &err, "registry_new");
    must(turnfit_skills_open(LIT(SKILLS_DIR), NULL, 0, &skills, &err), &err, "skills_open");
    must(turnfit_breaker_new(LIT(kBreakerConfig), &breaker, &err), &err, "breaker_new");
    must(turnfit_tracer_new(LIT("{\"ring_size\":256}"), &tracer, &err), &err, "tracer_new");
    must(turnfit_callstack_from_json(LIT("{\"agents\":[\"planner\",\"coder\"],\"max_depth\":5}"), &stack, &err), &err,
         "callstack_from_json");
    must(turnfit_window_new(NULL, LIT("gpt-4o"), NULL, 0, &shared_window, &err), &err, "window_new");
    must(turnfit_window_load(shared_window, LIT(kSharedBase), &err), &err, "window_load");
    g_tok = tok;
    g_reg = reg;
    g_skills = skills;
    g_breaker = breaker;
    g_tracer = tracer;
    g_stack = stack;
    g_shared_window = shared_window;

    reference(tok, reg, threads);
    const double ref_s = seconds_since(&t0);

    static worker workers[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    pthread_barrier_t barrier;
    if (pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1) != 0) {
        fail("pthread_barrier_init");
        printf("stress: %d passed, %d failed\n", g_passed, g_failed);
        return 1;
    }
    int created = 0;
    for (int t = 0; t < threads; t++) {
        workers[t].id = t;
        workers[t].ops_target = ops;
        workers[t].barrier = &barrier;
        if (pthread_create(&tids[t], NULL, worker_main, &workers[t]) != 0) {
            fail("pthread_create of thread %d", t);
            break;
        }
        created++;
    }
    if (created < threads) {
        /* Release the barrier's missing parties by joining what started;
         * the run has already failed. */
        printf("stress: %d passed, %d failed\n", g_passed, g_failed);
        fflush(stdout);
        _Exit(1);
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_barrier_wait(&barrier);
    long total = 0;
    long sub[N_SUB] = {0};
    for (int t = 0; t < threads; t++) {
        check(pthread_join(tids[t], NULL) == 0, "pthread_join");
        total += workers[t].ops;
        for (int k = 0; k < N_SUB; k++)
            sub[k] += workers[t].sub_ops[k];
        if (workers[t].mismatches == 0 && workers[t].ops == ops)
            g_passed++;
        else
            fail("thread %d: %ld ops, %ld mismatches against the single-threaded reference; first: %s", t,
                 workers[t].ops, workers[t].mismatches, workers[t].first);
    }
    const double run_s = seconds_since(&t1);
    pthread_barrier_destroy(&barrier);

    final_checks(workers, threads);

    free_reference(threads);
    turnfit_window_free(shared_window);
    turnfit_callstack_free(stack);
    turnfit_tracer_free(tracer);
    turnfit_breaker_free(breaker);
    turnfit_skills_free(skills);
    turnfit_registry_free(reg);
    turnfit_tokenizer_free(tok);

    printf("stress: calls by handle:");
    for (int k = 0; k < N_SUB; k++)
        printf(" %s %ld%s", kSubNames[k], sub[k], k + 1 < N_SUB ? "," : "\n");
    printf("stress: %d threads x %ld ops (%s schedule) = %ld calls in %.2f s (%.0f calls/s; reference phase %.2f s)\n",
           threads, ops, g_schedule == kScheduleLight ? "light" : "full", total, run_s,
           run_s > 0 ? (double)total / run_s : 0.0, ref_s);
    printf("stress: %d passed, %d failed\n", g_passed, g_failed);
    fflush(stdout);
    return g_failed > 0 ? 1 : 0;
}
