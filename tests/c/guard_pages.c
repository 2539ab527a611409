/*
 * Guard-page test (issue 48, cause I): nothing reads a caller's buffer past
 * what its length allows. Every pointer+length parameter of turnfit.h is
 * probed with its buffer flush against a PROT_NONE page:
 *
 *   exact  a valid value whose last byte is the last readable one, with its
 *          exact length: the call may succeed or fail, but must not read
 *          past the length (a NUL terminator looked for, a look-ahead);
 *   over   8 readable bytes claiming 2^40 bytes: over every documented
 *          limit, so the call must refuse it from the length alone;
 *   name   for a name (limit 256 bytes), 8 readable bytes claiming 300:
 *          refused from the length, and the message quotes none of it.
 *
 * Each probe runs in a child process, so a fault is reported with the
 * function and parameter it came from, not fatal to the run; the child ends
 * by becoming a shell that exits with its verdict (child_exit). The table
 * below lists every pair; check_ptrlen.sh fails when the header has a pair
 * the table does not probe. The host summarizer's reply (a pointer and a
 * length handed back to turnfit) is probed the same way.
 *
 * Run by `make -C tests/c guard-pages` (ASan/UBSan) and
 * `guard-pages-valgrind`, both part of `all`. The last line is
 * "guard-pages: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, mkdtemp */

#include "turnfit.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define STR(s) (s), strlen(s)

static turnfit_registry *g_reg;
static turnfit_tokenizer *g_tok;
static turnfit_file_tokenizer *g_ftok;
static turnfit_window *g_win;
static turnfit_breaker *g_breaker;
static turnfit_tracer *g_tracer;
static turnfit_skills *g_skills;
static turnfit_callstack *g_stack;
static turnfit_turn *g_turn;
static uint64_t g_span;
static char g_root[64];

/* The message of the last probe's error, for the name probe's check. */
static char g_message[512];

typedef turnfit_status (*probe_fn)(const void *p, size_t n, turnfit_error **e);

enum kind { TEXT, NAME, IDS };

struct param {
    const char *function;
    const char *parameter;
    enum kind kind;
    /* A valid value for the exact probe (for IDS, ignored: one token id). */
    const char *sample;
    probe_fn probe;
};

#define C(p) ((const char *)(p))

/* A small tokenizer file of our own (tests/vectors/files/); the probes run in tests/c. */
#define TINY_FILE "../vectors/files/tiny-byte-level.tokenizer.json"

/* One probe per parameter: the other arguments valid, this one (p, n). */
#define PROBE(name) static turnfit_status name(const void *p, size_t n, turnfit_error **e)

static const char CONV[] = "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]";
static const char FIT[] = "{\"model\":\"gpt-4o\"}";
static const char HANDOFF[] = "{\"task\":\"Fix the parser.\"}";
static const char REQUEST[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
static const char SELECT[] = "{\"tools\":[],\"query\":\"x\"}";

PROBE(assemble_request) { turnfit_string o = {0}; return turnfit_assemble(g_tok, C(p), n, &o, e); }
PROBE(breaker_allow_key) { bool a; return turnfit_breaker_allow(g_breaker, C(p), n, 0, &a, e); }
PROBE(breaker_new_config) { turnfit_breaker *b = NULL; return turnfit_breaker_new(C(p), n, &b, e); }
PROBE(breaker_failure_key) { return turnfit_breaker_record_failure(g_breaker, C(p), n, 0, e); }
PROBE(breaker_failure_state_key) { uint32_t s; return turnfit_breaker_record_failure_state(g_breaker, C(p), n, 0, &s, e); }
PROBE(breaker_success_key) { return turnfit_breaker_record_success(g_breaker, C(p), n, 0, e); }
PROBE(breaker_success_state_key) { uint32_t s; return turnfit_breaker_record_success_state(g_breaker, C(p), n, 0, &s, e); }
PROBE(breaker_state_key) { turnfit_string o = {0}; return turnfit_breaker_state(g_breaker, C(p), n, 0, &o, e); }
PROBE(callstack_enter_agent) { turnfit_callstack *s = NULL; return turnfit_callstack_enter(g_stack, C(p), n, &s, e); }
PROBE(callstack_from_json_json) { turnfit_callstack *s = NULL; return turnfit_callstack_from_json(C(p), n, &s, e); }
PROBE(fit_conversation)
{
    turnfit_string a = {0}, b = {0};
    return turnfit_fit(g_reg, C(p), n, STR(FIT), &a, &b, e);
}
PROBE(fit_options)
{
    turnfit_string a = {0}, b = {0};
    return turnfit_fit(g_reg, STR(CONV), C(p), n, &a, &b, e);
}
PROBE(handoff_filter_conversation) { turnfit_string o = {0}; return turnfit_handoff_filter(C(p), n, NULL, 0, &o, e); }
PROBE(handoff_filter_options) { turnfit_string o = {0}; return turnfit_handoff_filter(STR(CONV), C(p), n, &o, e); }
PROBE(handoff_render_handoff) { turnfit_string o = {0}; return turnfit_handoff_render(C(p), n, NULL, 0, &o, e); }
PROBE(handoff_render_options) { turnfit_string o = {0}; return turnfit_handoff_render(STR(HANDOFF), C(p), n, &o, e); }
PROBE(handoff_render_in_handoff)
{
    turnfit_string o = {0};
    return turnfit_handoff_render_in(g_reg, C(p), n, NULL, 0, &o, e);
}
PROBE(handoff_render_in_options)
{
    turnfit_string o = {0};
    return turnfit_handoff_render_in(g_reg, STR(HANDOFF), C(p), n, &o, e);
}
PROBE(handoff_validate_handoff) { turnfit_string o = {0}; return turnfit_handoff_validate(C(p), n, &o, e); }
PROBE(backoff_request) { turnfit_string o = {0}; return turnfit_recovery_backoff(C(p), n, &o, e); }
PROBE(classify_provider)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify(C(p), n, 429, NULL, 0, NULL, 0, &o, e);
}
PROBE(classify_body)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify(STR("openai"), 429, C(p), n, NULL, 0, &o, e);
}
PROBE(classify_headers)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify(STR("openai"), 429, NULL, 0, C(p), n, &o, e);
}
PROBE(classify_in_provider)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify_in(C(p), n, 429, NULL, 0, NULL, 0, NULL, 0, &o, e);
}
PROBE(classify_in_body)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify_in(STR("openai"), 429, C(p), n, NULL, 0, NULL, 0, &o, e);
}
PROBE(classify_in_headers)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify_in(STR("openai"), 429, NULL, 0, C(p), n, NULL, 0, &o, e);
}
PROBE(classify_in_context)
{
    turnfit_string o = {0};
    return turnfit_recovery_classify_in(STR("openai"), 429, NULL, 0, NULL, 0, C(p), n, &o, e);
}
PROBE(breaker_failure_in_key)
{
    uint32_t s;
    return turnfit_breaker_record_failure_in(g_breaker, C(p), n, NULL, 0, 0, &s, e);
}
PROBE(breaker_failure_in_context)
{
    uint32_t s;
    return turnfit_breaker_record_failure_in(g_breaker, STR("openai"), C(p), n, 0, &s, e);
}
PROBE(lookup_model) { turnfit_string o = {0}; return turnfit_registry_lookup(g_reg, C(p), n, NULL, 0, &o, e); }
PROBE(lookup_fallback)
{
    turnfit_string o = {0};
    return turnfit_registry_lookup(g_reg, STR("my-model"), C(p), n, &o, e);
}
PROBE(register_json)
{
    size_t k;
    turnfit_registry *r = NULL;
    turnfit_registry_new(&r, NULL);
    return turnfit_registry_register(r, C(p), n, &k, e);
}
PROBE(register_model_files_spec)
{
    turnfit_string o = {0};
    turnfit_registry *r = NULL;
    turnfit_registry_new(&r, NULL);
    return turnfit_registry_register_model_files(r, C(p), n, &o, e);
}
static int32_t count_fn(void *user, const char *text, size_t len, size_t *out, char *message, size_t cap)
{
    (void)user, (void)text, (void)message, (void)cap;
    *out = len / 4;
    return 0;
}
PROBE(register_counter_profile)
{
    turnfit_registry *r = NULL;
    turnfit_registry_new(&r, NULL);
    return turnfit_registry_register_counter(r, C(p), n, count_fn, NULL, NULL, e);
}
PROBE(skills_body_name) { turnfit_string o = {0}; return turnfit_skills_body(g_skills, C(p), n, &o, e); }
PROBE(skills_open_root) { turnfit_skills *s = NULL; return turnfit_skills_open(C(p), n, NULL, 0, &s, e); }
PROBE(skills_open_options) { turnfit_skills *s = NULL; return turnfit_skills_open(STR(g_root), C(p), n, &s, e); }
PROBE(skills_open_in_root)
{
    turnfit_skills *s = NULL;
    return turnfit_skills_open_in(g_reg, C(p), n, NULL, 0, &s, e);
}
PROBE(skills_open_in_options)
{
    turnfit_skills *s = NULL;
    return turnfit_skills_open_in(g_reg, STR(g_root), C(p), n, &s, e);
}
static void on_event(void *user, uint32_t kind, const char *payload, size_t len)
{
    (void)user, (void)kind, (void)payload, (void)len;
}
PROBE(skills_events_root)
{
    turnfit_skills *s = NULL;
    return turnfit_skills_open_with_events(C(p), n, NULL, 0, on_event, NULL, &s, e);
}
PROBE(skills_events_options)
{
    turnfit_skills *s = NULL;
    return turnfit_skills_open_with_events(STR(g_root), C(p), n, on_event, NULL, &s, e);
}
PROBE(skills_index_options) { turnfit_string o = {0}; return turnfit_skills_render_index(g_skills, C(p), n, &o, e); }
PROBE(file_open_path) { turnfit_file_tokenizer *t = NULL; return turnfit_file_tokenizer_open(C(p), n, NULL, 0, 0, &t, e); }
PROBE(file_open_pattern)
{
    turnfit_file_tokenizer *t = NULL;
    return turnfit_file_tokenizer_open(STR(TINY_FILE), C(p), n, 0, &t, e);
}
PROBE(file_bytes_bytes)
{
    turnfit_file_tokenizer *t = NULL;
    return turnfit_file_tokenizer_from_bytes((const uint8_t *)p, n, NULL, 0, NULL, 0, 0, &t, e);
}
PROBE(file_bytes_name)
{
    turnfit_file_tokenizer *t = NULL;
    return turnfit_file_tokenizer_from_bytes((const uint8_t *)"{}", 2, C(p), n, NULL, 0, 0, &t, e);
}
PROBE(file_bytes_pattern)
{
    turnfit_file_tokenizer *t = NULL;
    return turnfit_file_tokenizer_from_bytes((const uint8_t *)"x", 1, NULL, 0, C(p), n, 0, &t, e);
}
PROBE(file_count_text) { size_t k; return turnfit_file_tokenizer_count(g_ftok, C(p), n, &k, e); }
PROBE(file_encode_text) { turnfit_tokens t = {0}; return turnfit_file_tokenizer_encode(g_ftok, C(p), n, 0, &t, e); }
PROBE(file_decode_ids)
{
    turnfit_string o = {0};
    return turnfit_file_tokenizer_decode(g_ftok, (const uint32_t *)p, n, &o, e);
}
PROBE(count_text) { size_t k; return turnfit_tokenizer_count(g_tok, C(p), n, &k, e); }
PROBE(count_until_text)
{
    size_t k;
    bool x;
    return turnfit_tokenizer_count_until_limit(g_tok, C(p), n, 5, &k, &x, e);
}
PROBE(decode_ids)
{
    turnfit_string o = {0};
    return turnfit_tokenizer_decode(g_tok, (const uint32_t *)p, n, TURNFIT_DECODE_MODE_REPLACE, &o, e);
}
PROBE(decode_bytes_ids) { turnfit_string o = {0}; return turnfit_tokenizer_decode_bytes(g_tok, (const uint32_t *)p, n, &o, e); }
PROBE(decode_offsets_ids)
{
    turnfit_string o = {0};
    turnfit_tokens t = {0};
    return turnfit_tokenizer_decode_with_offsets(g_tok, (const uint32_t *)p, n, &o, &t, e);
}
PROBE(encode_text) { turnfit_tokens t = {0}; return turnfit_tokenizer_encode(g_tok, C(p), n, &t, e); }
PROBE(encode_bytes_bytes) { turnfit_tokens t = {0}; return turnfit_tokenizer_encode_bytes(g_tok, (const uint8_t *)p, n, &t, e); }
PROBE(encode_special_text)
{
    turnfit_tokens t = {0};
    return turnfit_tokenizer_encode_special(g_tok, C(p), n, NULL, 0, &t, e);
}
PROBE(encode_special_policy)
{
    turnfit_tokens t = {0};
    return turnfit_tokenizer_encode_special(g_tok, STR("hi"), C(p), n, &t, e);
}
PROBE(tokenizer_new_encoding) { turnfit_tokenizer *t = NULL; return turnfit_tokenizer_new(C(p), n, 0, &t, e); }
PROBE(for_model_model)
{
    turnfit_tokenizer *t = NULL;
    return turnfit_tokenizer_new_for_model(g_reg, C(p), n, NULL, 0, 0, &t, e);
}
PROBE(for_model_fallback)
{
    turnfit_tokenizer *t = NULL;
    return turnfit_tokenizer_new_for_model(g_reg, STR("my-model"), C(p), n, 0, &t, e);
}
PROBE(token_id_bytes) { uint32_t id; return turnfit_tokenizer_token_id(g_tok, (const uint8_t *)p, n, &id, e); }
PROBE(truncate_text)
{
    turnfit_string o = {0};
    size_t a, b;
    return turnfit_tokenizer_truncate(g_tok, C(p), n, 2, 0, NULL, 0, &o, &a, &b, e);
}
PROBE(truncate_marker)
{
    turnfit_string o = {0};
    size_t a, b;
    return turnfit_tokenizer_truncate(g_tok, STR("one two three four five six"), 2, 0, C(p), n, &o, &a, &b, e);
}
PROBE(toolset_report_request) { turnfit_string o = {0}; return turnfit_toolset_report(g_reg, C(p), n, &o, e); }
PROBE(toolset_select_request) { turnfit_string o = {0}; return turnfit_toolset_select(C(p), n, NULL, 0, &o, e); }
PROBE(toolset_select_agent) { turnfit_string o = {0}; return turnfit_toolset_select(STR(SELECT), C(p), n, &o, e); }
PROBE(tracer_end_error) { return turnfit_tracer_end(g_tracer, g_span, 1, 0, C(p), n, 0, e); }
PROBE(tracer_end_with_end) { return turnfit_tracer_end_with(g_tracer, g_span, 1, C(p), n, 0, e); }
PROBE(tracer_new_config) { turnfit_tracer *t = NULL; return turnfit_tracer_new(C(p), n, &t, e); }
PROBE(tracer_start_tool)
{
    uint64_t id;
    return turnfit_tracer_start(g_tracer, C(p), n, NULL, 0, 0, 0, &id, e);
}
PROBE(tracer_start_info)
{
    uint64_t id;
    return turnfit_tracer_start(g_tracer, STR("search"), C(p), n, 0, 0, &id, e);
}
PROBE(turn_resume_summary) { return turnfit_turn_resume(g_turn, TURNFIT_SUMMARY_OK, C(p), n, NULL, 0, e); }
PROBE(turn_resume_message) { return turnfit_turn_resume(g_turn, TURNFIT_SUMMARY_ERROR, NULL, 0, C(p), n, e); }
PROBE(turn_run_conversation)
{
    turnfit_string a = {0}, b = {0};
    return turnfit_turn_run(g_reg, C(p), n, STR(FIT), NULL, NULL, &a, &b, e);
}
PROBE(turn_run_options)
{
    turnfit_string a = {0}, b = {0};
    return turnfit_turn_run(g_reg, STR(CONV), C(p), n, NULL, NULL, &a, &b, e);
}
PROBE(turn_start_conversation) { turnfit_turn *t = NULL; return turnfit_turn_start(g_reg, C(p), n, STR(FIT), &t, e); }
PROBE(turn_start_options) { turnfit_turn *t = NULL; return turnfit_turn_start(g_reg, STR(CONV), C(p), n, &t, e); }
PROBE(apply_summary_id) { turnfit_string o = {0}; return turnfit_window_apply_summary(g_win, C(p), n, STR("s"), &o, e); }
PROBE(apply_summary_summary)
{
    turnfit_string o = {0};
    return turnfit_window_apply_summary(g_win, STR("sum-1"), C(p), n, &o, e);
}
PROBE(compact_policy) { turnfit_string o = {0}; return turnfit_window_compact(g_win, C(p), n, &o, e); }
PROBE(load_conversation) { return turnfit_window_load(g_win, C(p), n, e); }
PROBE(window_new_model) { turnfit_window *w = NULL; return turnfit_window_new(g_reg, C(p), n, NULL, 0, &w, e); }
PROBE(window_new_budget) { turnfit_window *w = NULL; return turnfit_window_new(g_reg, STR("gpt-4o"), C(p), n, &w, e); }
PROBE(preflight_input) { turnfit_string o = {0}; return turnfit_window_preflight(g_win, C(p), n, &o, e); }
PROBE(push_message) { size_t k; return turnfit_window_push(g_win, C(p), n, &k, e); }
PROBE(repair_result) { turnfit_string o = {0}; return turnfit_window_repair(g_win, C(p), n, &o, e); }
PROBE(window_turn_run_options)
{
    turnfit_string o = {0};
    return turnfit_window_turn_run(g_reg, g_win, C(p), n, NULL, NULL, &o, e);
}
PROBE(window_turn_start_options) { turnfit_turn *t = NULL; return turnfit_window_turn_start(g_reg, g_win, C(p), n, &t, e); }

static const char MSG[] = "{\"role\":\"user\",\"content\":\"Hi\"}";

static const struct param PARAMS[] = {
    {"turnfit_assemble", "request_json", TEXT, REQUEST, assemble_request},
    {"turnfit_breaker_allow", "key", NAME, "openai", breaker_allow_key},
    {"turnfit_breaker_new", "config_json", TEXT, "{}", breaker_new_config},
    {"turnfit_breaker_record_failure", "key", NAME, "openai", breaker_failure_key},
    {"turnfit_breaker_record_failure_state", "key", NAME, "openai", breaker_failure_state_key},
    {"turnfit_breaker_record_success", "key", NAME, "openai", breaker_success_key},
    {"turnfit_breaker_record_success_state", "key", NAME, "openai", breaker_success_state_key},
    {"turnfit_breaker_state", "key", NAME, "openai", breaker_state_key},
    {"turnfit_callstack_enter", "agent", NAME, "planner", callstack_enter_agent},
    {"turnfit_callstack_from_json", "json", TEXT, "{\"max_depth\":4,\"frames\":[]}", callstack_from_json_json},
    {"turnfit_fit", "conversation_json", TEXT, CONV, fit_conversation},
    {"turnfit_fit", "options_json", TEXT, FIT, fit_options},
    {"turnfit_handoff_filter", "conversation_json", TEXT, CONV, handoff_filter_conversation},
    {"turnfit_handoff_filter", "options_json", TEXT, "{}", handoff_filter_options},
    {"turnfit_handoff_render", "handoff_json", TEXT, HANDOFF, handoff_render_handoff},
    {"turnfit_handoff_render", "options_json", TEXT, "{}", handoff_render_options},
    {"turnfit_handoff_render_in", "handoff_json", TEXT, HANDOFF, handoff_render_in_handoff},
    {"turnfit_handoff_render_in", "options_json", TEXT, "{}", handoff_render_in_options},
    {"turnfit_handoff_validate", "handoff_json", TEXT, HANDOFF, handoff_validate_handoff},
    {"turnfit_recovery_backoff", "request_json", TEXT, "{\"attempt\":1}", backoff_request},
    {"turnfit_recovery_classify", "provider", NAME, "openai", classify_provider},
    {"turnfit_recovery_classify", "body", TEXT, "slow down", classify_body},
    {"turnfit_recovery_classify", "headers_json", TEXT, "{}", classify_headers},
    {"turnfit_recovery_classify_in", "provider", NAME, "openai", classify_in_provider},
    {"turnfit_recovery_classify_in", "body", TEXT, "slow down", classify_in_body},
    {"turnfit_recovery_classify_in", "headers_json", TEXT, "{}", classify_in_headers},
    {"turnfit_recovery_classify_in", "context_json", TEXT, "{\"agent_id\":\"narrator\"}", classify_in_context},
    {"turnfit_breaker_record_failure_in", "key", NAME, "openai", breaker_failure_in_key},
    {"turnfit_breaker_record_failure_in", "context_json", TEXT, "{\"agent_id\":\"narrator\"}", breaker_failure_in_context},
    {"turnfit_registry_lookup", "model", NAME, "gpt-4o", lookup_model},
    {"turnfit_registry_lookup", "fallback_encoding", NAME, "o200k_base", lookup_fallback},
    {"turnfit_registry_register", "json", TEXT, "{\"name\":\"m\",\"encoding\":\"o200k_base\"}", register_json},
    {"turnfit_registry_register_model_files", "spec_json", TEXT,
     "{\"name\":\"tiny-local\",\"tokenizer\":\"" TINY_FILE "\",\"context_window\":4096,"
     "\"chat_template\":\"{% for m in messages %}{{ m.content }}{% endfor %}\"}",
     register_model_files_spec},
    {"turnfit_registry_register_counter", "profile_json", TEXT, "{\"name\":\"m\",\"encoding\":\"o200k_base\"}",
     register_counter_profile},
    {"turnfit_skills_body", "name", NAME, "pdf-extract", skills_body_name},
    {"turnfit_skills_open", "root", TEXT, "/nonexistent", skills_open_root},
    {"turnfit_skills_open", "options_json", TEXT, "{}", skills_open_options},
    {"turnfit_skills_open_in", "root", TEXT, "/nonexistent", skills_open_in_root},
    {"turnfit_skills_open_in", "options_json", TEXT, "{}", skills_open_in_options},
    {"turnfit_skills_open_with_events", "root", TEXT, "/nonexistent", skills_events_root},
    {"turnfit_skills_open_with_events", "options_json", TEXT, "{}", skills_events_options},
    {"turnfit_skills_render_index", "options_json", TEXT, "{}", skills_index_options},
    {"turnfit_file_tokenizer_open", "path", TEXT, TINY_FILE, file_open_path},
    {"turnfit_file_tokenizer_open", "pattern", TEXT, "llama3", file_open_pattern},
    {"turnfit_file_tokenizer_from_bytes", "bytes", TEXT, "{}", file_bytes_bytes},
    {"turnfit_file_tokenizer_from_bytes", "name", NAME, "tiny.json", file_bytes_name},
    {"turnfit_file_tokenizer_from_bytes", "pattern", TEXT, "llama3", file_bytes_pattern},
    {"turnfit_file_tokenizer_count", "text", TEXT, "hello world", file_count_text},
    {"turnfit_file_tokenizer_encode", "text", TEXT, "hello world", file_encode_text},
    {"turnfit_file_tokenizer_decode", "ids", IDS, NULL, file_decode_ids},
    {"turnfit_tokenizer_count", "text", TEXT, "hello world", count_text},
    {"turnfit_tokenizer_count_until_limit", "text", TEXT, "hello world", count_until_text},
    {"turnfit_tokenizer_decode", "ids", IDS, NULL, decode_ids},
    {"turnfit_tokenizer_decode_bytes", "ids", IDS, NULL, decode_bytes_ids},
    {"turnfit_tokenizer_decode_with_offsets", "ids", IDS, NULL, decode_offsets_ids},
    {"turnfit_tokenizer_encode", "text", TEXT, "hello world", encode_text},
    {"turnfit_tokenizer_encode_bytes", "bytes", TEXT, "hello \xff", encode_bytes_bytes},
    {"turnfit_tokenizer_encode_special", "text", TEXT, "<|endoftext|>", encode_special_text},
    {"turnfit_tokenizer_encode_special", "policy_json", TEXT, "{}", encode_special_policy},
    {"turnfit_tokenizer_new", "encoding", NAME, "o200k_base", tokenizer_new_encoding},
    {"turnfit_tokenizer_new_for_model", "model", NAME, "gpt-4o", for_model_model},
    {"turnfit_tokenizer_new_for_model", "fallback_encoding", NAME, "o200k_base", for_model_fallback},
    {"turnfit_tokenizer_token_id", "bytes", TEXT, "hello", token_id_bytes},
    {"turnfit_tokenizer_truncate", "text", TEXT, "one two three four five", truncate_text},
    {"turnfit_tokenizer_truncate", "marker", TEXT, "[cut]", truncate_marker},
    {"turnfit_toolset_report", "request_json", TEXT, "{\"tools\":[]}", toolset_report_request},
    {"turnfit_toolset_select", "request_json", TEXT, SELECT, toolset_select_request},
    {"turnfit_toolset_select", "agent", NAME, "planner", toolset_select_agent},
    {"turnfit_tracer_end", "error", TEXT, "boom", tracer_end_error},
    {"turnfit_tracer_end_with", "end_json", TEXT, "{}", tracer_end_with_end},
    {"turnfit_tracer_new", "config_json", TEXT, "{}", tracer_new_config},
    {"turnfit_tracer_start", "tool", NAME, "search", tracer_start_tool},
    {"turnfit_tracer_start", "info_json", TEXT, "{}", tracer_start_info},
    {"turnfit_turn_resume", "summary", TEXT, "A summary.", turn_resume_summary},
    {"turnfit_turn_resume", "message", TEXT, "it failed", turn_resume_message},
    {"turnfit_turn_run", "conversation_json", TEXT, CONV, turn_run_conversation},
    {"turnfit_turn_run", "options_json", TEXT, FIT, turn_run_options},
    {"turnfit_turn_start", "conversation_json", TEXT, CONV, turn_start_conversation},
    {"turnfit_turn_start", "options_json", TEXT, FIT, turn_start_options},
    {"turnfit_window_apply_summary", "id", NAME, "sum-1", apply_summary_id},
    {"turnfit_window_apply_summary", "summary", TEXT, "A summary.", apply_summary_summary},
    {"turnfit_window_compact", "policy_json", TEXT, "{}", compact_policy},
    {"turnfit_window_load", "conversation_json", TEXT, CONV, load_conversation},
    {"turnfit_window_new", "model", NAME, "gpt-4o", window_new_model},
    {"turnfit_window_new", "budget_json", TEXT, "{}", window_new_budget},
    {"turnfit_window_preflight", "new_input_json", TEXT, MSG, preflight_input},
    {"turnfit_window_push", "message_json", TEXT, MSG, push_message},
    {"turnfit_window_repair", "synthetic_result", TEXT, "no result", repair_result},
    {"turnfit_window_turn_run", "options_json", TEXT, "{}", window_turn_run_options},
    {"turnfit_window_turn_start", "options_json", TEXT, "{}", window_turn_start_options},
};

static int g_passed, g_failed;

/* Two pages, the second PROT_NONE: returns the first byte of the second. */
static char *guarded(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    memset(mem, 'g', (size_t)page);
    if (mprotect(mem + page, (size_t)page, PROT_NONE) != 0) {
        perror("mprotect");
        exit(2);
    }
    return mem + page;
}

/* Ends a probe's child with `code` without the exit-time checks of a
 * sanitizer or valgrind (a probe's outputs are not freed: they would be
 * reported as leaks of the child): the child becomes a shell that exits. */
static void child_exit(int code)
{
    char cmd[16];
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "exit %d", code);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(code);
}

enum mode { EXACT, OVER, NAME_OVER };
static const char *const MODE[] = {"exact", "over", "name"};

/* Runs `probe` on (p, n) in a child. The child's exit code: 0 ok, 1 the call
 * took an over-long length (status OK), 2 its message quoted the buffer. */
static void run(const struct param *pr, enum mode m, const void *p, size_t n)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        turnfit_error *err = NULL;
        turnfit_status s = pr->probe(p, n, &err);
        g_message[0] = 0;
        if (err) {
            size_t len = 0;
            const char *msg = turnfit_error_message(err, &len);
            snprintf(g_message, sizeof g_message, "%.*s", (int)(len < 500 ? len : 500), msg);
        }
        if (m != EXACT && s == TURNFIT_STATUS_OK)
            child_exit(1);
        /* The 8 readable bytes are "gggggggg": the name probe's message must
         * quote none of them (it may not read them to build it). */
        if (m == NAME_OVER && strstr(g_message, "gggg"))
            child_exit(2);
        child_exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        g_passed++;
        return;
    }
    g_failed++;
    if (WIFSIGNALED(status))
        printf("FAIL %s(%s) %s: signal %d (read past its length)\n", pr->function, pr->parameter, MODE[m],
               WTERMSIG(status));
    else if (WEXITSTATUS(status) == 1)
        printf("FAIL %s(%s) %s: accepted a length over its limit\n", pr->function, pr->parameter, MODE[m]);
    else if (WEXITSTATUS(status) == 2)
        printf("FAIL %s(%s) %s: the message quotes the unread buffer\n", pr->function, pr->parameter, MODE[m]);
    else
        printf("FAIL %s(%s) %s: exit %d\n", pr->function, pr->parameter, MODE[m], WEXITSTATUS(status));
}

/* The host summarizer's reply: 8 readable bytes claiming 2^40. The turn must
 * fall back to the digest, not read them. */
static const char *g_reply;
static uint32_t lying_summarizer(void *user, const char *call, size_t call_len, const char **out, size_t *out_len)
{
    (void)user, (void)call, (void)call_len;
    *out = g_reply;
    *out_len = (size_t)1 << 40;
    return TURNFIT_SUMMARY_OK;
}

static void summarizer_reply_probe(char *end)
{
    g_reply = end - 8;
    /* An agent loop over its budget, so a span is summarized. */
    char conv[16384];
    size_t k = (size_t)snprintf(conv, sizeof conv, "[{\"role\":\"system\",\"content\":\"Agent.\"},"
                                                   "{\"role\":\"user\",\"content\":\"Read the files.\"}");
    for (int i = 0; i < 70 && k < sizeof conv - 400; i++)
        k += (size_t)snprintf(conv + k, sizeof conv - k,
                              ",{\"role\":\"assistant\",\"content\":\"Read file %d: lorem ipsum dolor sit amet "
                              "consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore.\"}",
                              i);
    snprintf(conv + k, sizeof conv - k, "]");
    static const char opts[] = "{\"model\":\"gpt-4o\",\"max_tokens\":1200,\"reserve_output\":100,"
                               "\"policy\":{\"strategy\":\"summarize\",\"summary_max_tokens\":64,"
                               "\"mask\":{\"enabled\":false}}}";
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        turnfit_string a = {0}, b = {0};
        turnfit_status s = turnfit_turn_run(g_reg, STR(conv), STR(opts), lying_summarizer, NULL, &a, &b, NULL);
        bool fell_back = s == TURNFIT_STATUS_OK && b.ptr && strstr(b.ptr, "\"source\":\"digest\"");
        if (!fell_back)
            printf("status %d, report %.300s\n", (int)s, b.ptr ? b.ptr : "(none)");
        fflush(stdout);
        child_exit(fell_back ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL turnfit_summarize_fn(out_text) over: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

static void must(turnfit_status s, const char *what)
{
    if (s != TURNFIT_STATUS_OK) {
        fprintf(stderr, "guard-pages: setting up %s failed (%d)\n", what, (int)s);
        exit(2);
    }
}

int main(void)
{
    must(turnfit_registry_new(&g_reg, NULL), "the registry");
    must(turnfit_tokenizer_new(STR("o200k_base"), 0, &g_tok, NULL), "the tokenizer");
    must(turnfit_file_tokenizer_open(STR(TINY_FILE), NULL, 0, 0, &g_ftok, NULL), "the file tokenizer");
    must(turnfit_window_new(g_reg, STR("gpt-4o"), NULL, 0, &g_win, NULL), "the window");
    must(turnfit_window_load(g_win, STR(CONV), NULL), "the window's conversation");
    must(turnfit_breaker_new(NULL, 0, &g_breaker, NULL), "the breaker");
    must(turnfit_tracer_new(NULL, 0, &g_tracer, NULL), "the tracer");
    must(turnfit_tracer_start(g_tracer, STR("search"), NULL, 0, 0, 0, &g_span, NULL), "a span");
    snprintf(g_root, sizeof g_root, "/tmp/turnfit-guard-XXXXXX");
    if (!mkdtemp(g_root)) {
        perror("mkdtemp");
        return 2;
    }
    must(turnfit_skills_open(STR(g_root), NULL, 0, &g_skills, NULL), "the skills");
    must(turnfit_callstack_new(8, &g_stack, NULL), "the call stack");
    must(turnfit_turn_start(g_reg, STR(CONV), STR(FIT), &g_turn, NULL), "the turn");

    char *end = guarded();
    size_t count = sizeof PARAMS / sizeof PARAMS[0];
    for (size_t i = 0; i < count; i++) {
        const struct param *pr = &PARAMS[i];
        if (pr->kind == IDS) {
            /* One id, flush against the guard page. */
            uint32_t *id = (uint32_t *)(void *)(end - sizeof(uint32_t));
            *id = 9906;
            run(pr, EXACT, id, 1);
            run(pr, OVER, end - 2 * sizeof(uint32_t), (size_t)1 << 38);
        } else {
            size_t n = strlen(pr->sample);
            memcpy(end - n, pr->sample, n);
            run(pr, EXACT, end - n, n);
            memset(end - 8, 'g', 8);
            run(pr, OVER, end - 8, (size_t)1 << 40);
            if (pr->kind == NAME)
                run(pr, NAME_OVER, end - 8, 300);
        }
    }
    summarizer_reply_probe(end);

    turnfit_turn_free(g_turn);
    turnfit_callstack_free(g_stack);
    turnfit_skills_free(g_skills);
    turnfit_tracer_free(g_tracer);
    turnfit_breaker_free(g_breaker);
    turnfit_window_free(g_win);
    turnfit_tokenizer_free(g_tok);
    turnfit_registry_free(g_reg);
    rmdir(g_root);
    printf("%zu pointer+length parameters probed\n", count);
    printf("guard-pages: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
