// C++ ABI test harness for libturnfit: checks include/turnfit.h is usable from
// C++17 (extern "C" linkage via cbindgen's cpp_compat, enum types with a
// fixed uint32_t underlying type, plain-old-data structs) and exercises the
// library through a small RAII layer built on std::unique_ptr with custom
// deleters. Prints "cxx-abi: N passed, M failed" last; exits non-zero on any
// failure.
//
// Built with -std=c++17 -Wall -Wextra -Wpedantic -Werror under ASan+UBSan.

#include "turnfit.h"
#include "turnfit.h" // the include guard makes a second inclusion harmless

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------
// Compile-time checks: the header from C++.

static_assert(std::is_enum_v<turnfit_status>, "turnfit_status is a real enum in C++");
static_assert(std::is_same_v<std::underlying_type_t<turnfit_status>, uint32_t>, "fixed 32-bit status");
static_assert(std::is_same_v<std::underlying_type_t<turnfit_decode_mode>, uint32_t>, "fixed 32-bit mode");
static_assert(std::is_same_v<std::underlying_type_t<turnfit_truncate_side>, uint32_t>, "fixed 32-bit side");
static_assert(std::is_standard_layout_v<turnfit_string> && std::is_trivially_copyable_v<turnfit_string>,
              "turnfit_string is POD");
static_assert(std::is_standard_layout_v<turnfit_tokens> && std::is_trivially_copyable_v<turnfit_tokens>,
              "turnfit_tokens is POD");
static_assert(sizeof(turnfit_string) == 2 * sizeof(void *) && offsetof(turnfit_string, len) == sizeof(void *),
              "turnfit_string layout");
static_assert(sizeof(turnfit_tokens) == 2 * sizeof(void *) && offsetof(turnfit_tokens, len) == sizeof(void *),
              "turnfit_tokens layout");
static_assert(std::is_same_v<decltype(&turnfit_tokenizer_count),
                             turnfit_status (*)(const turnfit_tokenizer *, const char *, size_t, size_t *,
                                               turnfit_error **)>,
              "turnfit_tokenizer_count signature");
// Text is `const char *`, bytes `const uint8_t *`, results a `char` buffer.
static_assert(std::is_same_v<decltype(&turnfit_tokenizer_encode_bytes),
                             turnfit_status (*)(const turnfit_tokenizer *, const uint8_t *, size_t, turnfit_tokens *,
                                               turnfit_error **)>,
              "turnfit_tokenizer_encode_bytes signature");
static_assert(std::is_same_v<decltype(turnfit_string::ptr), char *>, "turnfit_string holds char");
// `const` on a handle only where the call reads it.
static_assert(std::is_same_v<decltype(&turnfit_window_push), turnfit_status (*)(turnfit_window *, const char *, size_t,
                                                                               size_t *, turnfit_error **)>,
              "turnfit_window_push takes a mutable window");
static_assert(std::is_same_v<decltype(&turnfit_breaker_state),
                             turnfit_status (*)(const turnfit_breaker *, const char *, size_t, uint64_t,
                                               turnfit_string *, turnfit_error **)>,
              "turnfit_breaker_state reads a const breaker");
static_assert(std::is_same_v<decltype(turnfit_status_name(0)), const char *>, "status name type");
static_assert(TURNFIT_STATUS_INTERNAL == 10 && TURNFIT_TRUNCATE_SIDE_BOTH == 2 && TURNFIT_DECODE_MODE_STRICT == 1,
              "enum values");

// The functions have C linkage: these names would not link if the header
// lacked extern "C" (the C++ compiler would mangle them). Taking every
// address here makes the linker resolve each one against libturnfit.
using AnyFn = void (*)();
static const AnyFn kEveryFunction[] = {
    reinterpret_cast<AnyFn>(&turnfit_error_code),
    reinterpret_cast<AnyFn>(&turnfit_error_message),
    reinterpret_cast<AnyFn>(&turnfit_error_free),
    reinterpret_cast<AnyFn>(&turnfit_registry_new),
    reinterpret_cast<AnyFn>(&turnfit_registry_free),
    reinterpret_cast<AnyFn>(&turnfit_registry_register),
    reinterpret_cast<AnyFn>(&turnfit_registry_lookup),
    reinterpret_cast<AnyFn>(&turnfit_registry_list),
    reinterpret_cast<AnyFn>(&turnfit_status_name),
    reinterpret_cast<AnyFn>(&turnfit_string_free),
    reinterpret_cast<AnyFn>(&turnfit_tokens_free),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_new),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_new_for_model),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_free),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_info),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_count),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_count_until_limit),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_encode),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_decode),
    reinterpret_cast<AnyFn>(&turnfit_tokenizer_truncate),
    reinterpret_cast<AnyFn>(&turnfit_version),
    reinterpret_cast<AnyFn>(&turnfit_abi_version),
};

// ---------------------------------------------------------------------------
// A small RAII layer.

namespace ck {

struct ErrorDeleter {
    void operator()(turnfit_error *e) const noexcept { turnfit_error_free(e); }
};
struct TokenizerDeleter {
    void operator()(turnfit_tokenizer *t) const noexcept { turnfit_tokenizer_free(t); }
};
struct RegistryDeleter {
    void operator()(turnfit_registry *r) const noexcept { turnfit_registry_free(r); }
};
// Owned strings and token arrays are value structs freed through a pointer;
// the RAII handle owns a heap copy of the struct.
struct StringDeleter {
    void operator()(turnfit_string *s) const noexcept {
        turnfit_string_free(s);
        delete s;
    }
};
struct TokensDeleter {
    void operator()(turnfit_tokens *t) const noexcept {
        turnfit_tokens_free(t);
        delete t;
    }
};

using ErrorPtr = std::unique_ptr<turnfit_error, ErrorDeleter>;
using TokenizerPtr = std::unique_ptr<turnfit_tokenizer, TokenizerDeleter>;
using RegistryPtr = std::unique_ptr<turnfit_registry, RegistryDeleter>;
using StringPtr = std::unique_ptr<turnfit_string, StringDeleter>;
using TokensPtr = std::unique_ptr<turnfit_tokens, TokensDeleter>;

class Error : public std::runtime_error {
  public:
    Error(turnfit_status code, const std::string &message) : std::runtime_error(message), code_(code) {}
    turnfit_status code() const noexcept { return code_; }

  private:
    turnfit_status code_;
};

// Takes ownership of `*errp` (which may be NULL) and throws on failure.
//
// It takes the address, not the value, of the caller's turnfit_error*: in
// `check(turnfit_f(..., &err), err)` C++ may read `err` before the call has
// written it (argument evaluation order is unspecified; GCC goes right to
// left), which silently leaks every error object. LeakSanitizer caught
// exactly that in an earlier version of this wrapper.
inline void check(turnfit_status status, turnfit_error **errp) {
    ErrorPtr err(*errp);
    *errp = nullptr;
    if (status == TURNFIT_STATUS_OK)
        return;
    size_t len = 0;
    const char *msg = turnfit_error_message(err.get(), &len);
    throw Error(status, msg ? std::string(msg, len) : std::string(turnfit_status_name(status)));
}

inline std::string to_string(const turnfit_string &s) {
    return std::string(reinterpret_cast<const char *>(s.ptr), s.len);
}

inline StringPtr new_string() { return StringPtr(new turnfit_string{nullptr, 0}); }
inline TokensPtr new_tokens() { return TokensPtr(new turnfit_tokens{nullptr, 0}); }

class Registry {
  public:
    Registry() {
        turnfit_registry *raw = nullptr;
        turnfit_error *err = nullptr;
        check(turnfit_registry_new(&raw, &err), &err);
        h_.reset(raw);
    }
    size_t register_json(std::string_view json) {
        size_t n = 0;
        turnfit_error *err = nullptr;
        check(turnfit_registry_register(h_.get(), json.data(), json.size(), &n, &err), &err);
        return n;
    }
    std::string lookup(std::string_view model, std::string_view fallback = {}) const {
        return lookup_in(h_.get(), model, fallback);
    }
    static std::string lookup_in(const turnfit_registry *r, std::string_view model, std::string_view fallback) {
        StringPtr s = new_string();
        turnfit_error *err = nullptr;
        check(turnfit_registry_lookup(r, model.data(), model.size(), fallback.data(), fallback.size(), s.get(), &err),
              &err);
        return to_string(*s);
    }
    std::string list() const {
        StringPtr s = new_string();
        turnfit_error *err = nullptr;
        check(turnfit_registry_list(h_.get(), s.get(), &err), &err);
        return to_string(*s);
    }
    const turnfit_registry *get() const noexcept { return h_.get(); }

  private:
    RegistryPtr h_;
};

struct Truncation {
    std::string text;
    size_t tokens;
    size_t removed;
};

class Tokenizer {
  public:
    static Tokenizer from_encoding(std::string_view encoding, uint32_t flags = 0) {
        turnfit_tokenizer *raw = nullptr;
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_new(encoding.data(), encoding.size(), flags, &raw, &err), &err);
        return Tokenizer(TokenizerPtr(raw));
    }
    static Tokenizer for_model(const Registry *registry, std::string_view model, std::string_view fallback = {},
                               uint32_t flags = 0) {
        turnfit_tokenizer *raw = nullptr;
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_new_for_model(registry ? registry->get() : nullptr, model.data(), model.size(),
                                             fallback.data(), fallback.size(), flags, &raw, &err),
              &err);
        return Tokenizer(TokenizerPtr(raw));
    }

    size_t count(std::string_view text) const {
        size_t n = 0;
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_count(h_.get(), text.data(), text.size(), &n, &err), &err);
        return n;
    }
    std::pair<size_t, bool> count_until_limit(std::string_view text, size_t limit) const {
        size_t n = 0;
        bool exceeded = false;
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_count_until_limit(h_.get(), text.data(), text.size(), limit, &n, &exceeded, &err),
              &err);
        return {n, exceeded};
    }
    std::vector<uint32_t> encode(std::string_view text) const {
        TokensPtr t = new_tokens();
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_encode(h_.get(), text.data(), text.size(), t.get(), &err), &err);
        return t->len ? std::vector<uint32_t>(t->ptr, t->ptr + t->len) : std::vector<uint32_t>();
    }
    std::string decode(const std::vector<uint32_t> &ids, turnfit_decode_mode mode = TURNFIT_DECODE_MODE_STRICT) const {
        StringPtr s = new_string();
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_decode(h_.get(), ids.empty() ? nullptr : ids.data(), ids.size(), mode, s.get(), &err),
              &err);
        return to_string(*s);
    }
    Truncation truncate(std::string_view text, size_t max_tokens, turnfit_truncate_side side,
                        std::string_view marker = {}) const {
        StringPtr s = new_string();
        Truncation r{{}, 0, 0};
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_truncate(h_.get(), text.data(), text.size(), max_tokens, side, marker.data(),
                                        marker.size(), s.get(), &r.tokens, &r.removed, &err),
              &err);
        r.text = to_string(*s);
        return r;
    }
    std::string info() const {
        StringPtr s = new_string();
        turnfit_error *err = nullptr;
        check(turnfit_tokenizer_info(h_.get(), s.get(), &err), &err);
        return to_string(*s);
    }
    const turnfit_tokenizer *get() const noexcept { return h_.get(); }

  private:
    explicit Tokenizer(TokenizerPtr h) : h_(std::move(h)) {}
    TokenizerPtr h_;
};

} // namespace ck

// ---------------------------------------------------------------------------
// Checks.

static int g_passed = 0;
static int g_failed = 0;

static bool check_at(int line, bool ok, const char *what) {
    if (ok) {
        g_passed++;
    } else {
        g_failed++;
        std::printf("FAIL harness.cpp:%d: expected true: %s\n", line, what);
        std::fflush(stdout);
    }
    return ok;
}

static bool check_eq_at(int line, size_t got, size_t want, const char *what) {
    if (got == want) {
        g_passed++;
        return true;
    }
    g_failed++;
    std::printf("FAIL harness.cpp:%d: %s: got %zu, expected %zu\n", line, what, got, want);
    std::fflush(stdout);
    return false;
}

static bool check_contains_at(int line, const std::string &hay, std::string_view needle, const char *what) {
    if (hay.find(needle) != std::string::npos) {
        g_passed++;
        return true;
    }
    g_failed++;
    std::printf("FAIL harness.cpp:%d: %s: \"%s\" does not contain \"%.*s\"\n", line, what, hay.c_str(),
                static_cast<int>(needle.size()), needle.data());
    std::fflush(stdout);
    return false;
}

#define CHECK(cond) check_at(__LINE__, (cond), #cond)
#define CHECK_EQ(got, want) check_eq_at(__LINE__, static_cast<size_t>(got), static_cast<size_t>(want), #got)
#define CHECK_CONTAINS(hay, needle) check_contains_at(__LINE__, (hay), (needle), #hay)

// Runs `body`, expecting a ck::Error with `want` whose message contains `needle`.
template <typename F>
static void expect_error_at(int line, F &&body, turnfit_status want, std::string_view needle, const char *what) {
    try {
        body();
        g_failed++;
        std::printf("FAIL harness.cpp:%d: %s: no error, expected %s\n", line, what, turnfit_status_name(want));
    } catch (const ck::Error &e) {
        if (e.code() == want) {
            g_passed++;
        } else {
            g_failed++;
            std::printf("FAIL harness.cpp:%d: %s: %s, expected %s (%s)\n", line, what, turnfit_status_name(e.code()),
                        turnfit_status_name(want), e.what());
        }
        check_contains_at(line, e.what(), needle, what);
    } catch (const std::exception &e) {
        g_failed++;
        std::printf("FAIL harness.cpp:%d: %s: unexpected exception %s\n", line, what, e.what());
    }
    std::fflush(stdout);
}
#define EXPECT_ERROR(body, want, needle) expect_error_at(__LINE__, [&] { body; }, (want), (needle), #body)

static const std::string_view kText =
    "Hello, 世界! Привет, мир. مرحبا بالعالم. 🎉👩\u200d👩\u200d👧 emoji and "
    "The quick brown fox jumps over the lazy dog, again and again, until the budget runs out.";

static void test_header_and_version() {
    for (AnyFn f : kEveryFunction)
        CHECK(f != nullptr);
    unsigned major = 0, minor = 0, patch = 0;
    CHECK(std::sscanf(turnfit_version(), "%u.%u.%u", &major, &minor, &patch) == 3);
    CHECK_EQ(major, TURNFIT_VERSION_MAJOR);
    CHECK_EQ(minor, TURNFIT_VERSION_MINOR);
    CHECK_EQ(patch, TURNFIT_VERSION_PATCH);
    CHECK_EQ(turnfit_abi_version(), TURNFIT_ABI_VERSION);
    CHECK(std::string_view(turnfit_status_name(TURNFIT_STATUS_UNKNOWN_MODEL)) == "TURNFIT_STATUS_UNKNOWN_MODEL");
    CHECK(std::string_view(turnfit_status_name(999)) == "TURNFIT_STATUS_UNRECOGNIZED");
    // A status returned by the C API is the C++ enum type.
    turnfit_status st = turnfit_error_code(nullptr);
    CHECK(st == TURNFIT_STATUS_NULL_ARGUMENT);
}

static void test_raii_basics() {
    // Deleters accept NULL, as *_free(NULL) is a no-op.
    { ck::TokenizerPtr none(nullptr); }
    { ck::ErrorPtr none(nullptr); }
    { ck::StringPtr empty = ck::new_string(); }
    { ck::TokensPtr empty = ck::new_tokens(); }

    auto cl = ck::Tokenizer::from_encoding("cl100k_base");
    CHECK_EQ(cl.count("hello world"), 2);
    CHECK_EQ(cl.count(""), 0);
    CHECK_EQ(cl.count(std::string_view()), 0); // (NULL, 0)
    CHECK(cl.count(std::string_view("a\0b", 3)) >= 2); // NUL bytes are text
    // Every shipped encoding (the C harness skips p50k_base to keep its
    // valgrind run short) round-trips, and "gpt2" has r50k_base's ranks under tiktoken's name.
    for (const char *enc : {"cl100k_base", "o200k_base", "p50k_base", "r50k_base", "gpt2"}) {
        auto t = ck::Tokenizer::from_encoding(enc);
        CHECK_EQ(t.count("hello world"), 2);
        CHECK(t.decode(t.encode(kText)) == kText);
    }
    CHECK_CONTAINS(ck::Tokenizer::from_encoding("gpt2").info(), "\"encoding\":\"gpt2\"");

    auto ids = cl.encode(kText);
    CHECK(!ids.empty());
    CHECK_EQ(ids.size(), cl.count(kText));
    CHECK(cl.decode(ids) == kText);
    CHECK(cl.encode("").empty());
    CHECK(cl.decode({}).empty());
    auto hw = cl.encode("hello world");
    if (CHECK_EQ(hw.size(), 2)) {
        CHECK_EQ(hw[0], 15339);
        CHECK_EQ(hw[1], 1917);
    }

    auto [n, exceeded] = cl.count_until_limit(kText, 3);
    CHECK(exceeded);
    CHECK(n > 3);
    auto [n2, exceeded2] = cl.count_until_limit(kText, ids.size());
    CHECK(!exceeded2);
    CHECK_EQ(n2, ids.size());

    // Special tokens only with the flag.
    auto sp = ck::Tokenizer::from_encoding("cl100k_base", TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL);
    CHECK_EQ(sp.count("<|endoftext|>"), 1);
    CHECK(cl.count("<|endoftext|>") > 1);
    CHECK_CONTAINS(sp.info(), "\"special_tokens\":\"recognize\"");

    // Truncation through the RAII layer.
    for (size_t max : {1u, 5u, 12u}) {
        auto head = cl.truncate(kText, max, TURNFIT_TRUNCATE_SIDE_HEAD);
        CHECK(head.tokens <= max);
        CHECK(cl.count(head.text) <= max);
        CHECK(kText.substr(0, head.text.size()) == head.text);
        auto tail = cl.truncate(kText, max, TURNFIT_TRUNCATE_SIDE_TAIL);
        CHECK(cl.count(tail.text) <= max);
        CHECK(kText.substr(kText.size() - tail.text.size()) == tail.text);
    }
    auto both = cl.truncate(kText, 16, TURNFIT_TRUNCATE_SIDE_BOTH, "<<{removed} cut>>");
    CHECK(cl.count(both.text) <= 16);
    CHECK_EQ(both.tokens, cl.count(both.text));
    CHECK_CONTAINS(both.text, "<<" + std::to_string(both.removed) + " cut>>");
    auto fits = cl.truncate("short", 100, TURNFIT_TRUNCATE_SIDE_BOTH);
    CHECK(fits.text == "short");
    CHECK_EQ(fits.removed, 0);

    // Tokenizer handles move; the moved-from one releases nothing twice.
    ck::Tokenizer moved = std::move(cl);
    CHECK_EQ(moved.count("hello world"), 2);
    CHECK(moved.get() != nullptr);
}

static void test_registry() {
    ck::Registry reg;
    CHECK_CONTAINS(reg.list(), "\"name\":\"gpt-4o*\"");
    CHECK_EQ(reg.register_json(R"({"name": "acme-*", "encoding": "o200k_base", "context_window": 32000,
                                   "max_output_tokens": 4096, "exact": false, "family": "acme"})"),
             1);
    std::string j = reg.lookup("acme-large");
    CHECK_CONTAINS(j, "\"source\":\"host\"");
    CHECK_CONTAINS(j, "\"matched\":\"acme-*\"");
    CHECK_CONTAINS(j, "\"context_window\":32000");
    CHECK_CONTAINS(reg.list(), "\"name\":\"acme-*\"");
    CHECK_CONTAINS(ck::Registry::lookup_in(nullptr, "gpt-4o", {}), "\"source\":\"builtin\"");

    auto acme = ck::Tokenizer::for_model(&reg, "acme-large");
    CHECK_EQ(acme.count("hello world"), 2);
    CHECK_CONTAINS(acme.info(), "\"encoding\":\"o200k_base\"");
    auto fb = ck::Tokenizer::for_model(nullptr, "gpt4o", "cl100k_base");
    CHECK_CONTAINS(fb.info(), "\"exact\":false");

    // Error paths: each throws a ck::Error carrying the status and message,
    // and the error object is released by ErrorPtr (LeakSanitizer checks).
    EXPECT_ERROR(ck::Tokenizer::from_encoding("cl100k"), TURNFIT_STATUS_UNKNOWN_ENCODING, "cl100k_base");
    EXPECT_ERROR(ck::Tokenizer::from_encoding("cl100k_base", 2), TURNFIT_STATUS_INVALID_ARGUMENT, "flag");
    EXPECT_ERROR(ck::Tokenizer::for_model(nullptr, "gpt4o"), TURNFIT_STATUS_UNKNOWN_MODEL, "gpt-4o");
    EXPECT_ERROR(ck::Registry::lookup_in(nullptr, "acme-large", {}), TURNFIT_STATUS_UNKNOWN_MODEL, "acme-large");
    EXPECT_ERROR(reg.register_json("{"), TURNFIT_STATUS_INVALID_JSON, "turnfit_registry_register");
    EXPECT_ERROR(acme.count(std::string_view("ab\xff", 3)), TURNFIT_STATUS_INVALID_UTF8, "byte offset 2");
    EXPECT_ERROR(acme.decode({10000000}), TURNFIT_STATUS_UNKNOWN_TOKEN, "10000000");
    EXPECT_ERROR(acme.truncate("a long enough text to need cutting, surely", 1, TURNFIT_TRUNCATE_SIDE_BOTH,
                               "<<{removed} cut>>"),
                 TURNFIT_STATUS_INVALID_ARGUMENT, "marker");
    auto r50 = ck::Tokenizer::from_encoding("r50k_base");
    auto nihon = r50.encode("日本");
    if (CHECK(nihon.size() >= 2)) {
        std::vector<uint32_t> prefix(nihon.begin(), nihon.begin() + 1);
        CHECK_CONTAINS(r50.decode(prefix, TURNFIT_DECODE_MODE_REPLACE), "\xef\xbf\xbd");
        EXPECT_ERROR(r50.decode(prefix, TURNFIT_DECODE_MODE_STRICT), TURNFIT_STATUS_INVALID_UTF8, "byte offset");
    }
}

static void test_threads() {
    auto tok = ck::Tokenizer::from_encoding("cl100k_base");
    const size_t want = tok.count(kText);
    const auto want_ids = tok.encode(kText);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 100; i++) {
                if (tok.count(kText) != want || tok.encode(kText) != want_ids || tok.decode(want_ids) != kText)
                    mismatches++;
            }
        });
    }
    for (auto &th : threads)
        th.join();
    CHECK_EQ(mismatches.load(), 0);
}

int main() {
    try {
        test_header_and_version();
        test_raii_basics();
        test_registry();
        test_threads();
    } catch (const ck::Error &e) {
        g_failed++;
        std::printf("FAIL harness.cpp: uncaught turnfit error %s: %s\n", turnfit_status_name(e.code()), e.what());
    } catch (const std::exception &e) {
        g_failed++;
        std::printf("FAIL harness.cpp: uncaught exception: %s\n", e.what());
    }
    std::printf("cxx-abi: %d passed, %d failed\n", g_passed, g_failed);
    std::fflush(stdout);
    return g_failed > 0 ? 1 : 0;
}
