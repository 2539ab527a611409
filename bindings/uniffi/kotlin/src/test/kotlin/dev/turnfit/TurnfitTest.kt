package dev.turnfit

import java.io.File
import java.nio.ByteBuffer
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.test.Test
import kotlin.test.assertContentEquals
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking

class VectorsTest {
    @Test
    fun everyConformanceVector() {
        val o = Vectors.runAll()
        for ((f, p) in o.perFile) println("  $f: ${p.first}/${p.second}")
        o.failures.take(20).forEach { println("FAIL $it") }
        println("vectors: ${o.passed}/${o.total}")
        assertTrue(o.total > 1500, "only ${o.total} vectors found")
        assertEquals(o.total, o.passed, o.failures.take(5).joinToString("\n"))
    }
}

class TokenizerTest {
    @Test
    fun countsEncodesDecodes() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            assertEquals(4UL, t.countTokens("Hello, world!"))
            val ids: IntArray = t.encode("Hello, world!")
            assertContentEquals(intArrayOf(13225, 11, 2375, 0), ids)
            assertEquals("Hello, world!", t.decode(ids))
            assertEquals("o200k_base", t.info().encodingName)
            assertEquals(Encoding.O200K_BASE, t.info().encoding)
        }
    }

    @Test
    fun forModelAndRegistry() {
        Tokenizer.forModel("gpt-4o").use { t ->
            val m = t.info().model!!
            assertEquals(Encoding.O200K_BASE, m.encoding)
            assertTrue(m.exact)
        }
        ModelRegistry().use { r ->
            assertEquals(1UL, r.register("""{"name": "acme-*", "encoding": "cl100k_base", "context_window": 32000, "exact": false}"""))
            assertEquals(Encoding.CL100K_BASE, r.lookup("acme-7b").encoding)
            Tokenizer.forModel("acme-7b", registry = r).use { assertEquals(Encoding.CL100K_BASE, it.info().encoding) }
            // Registrations are local to their registry.
            assertFailsWith<TurnfitException.UnknownModel> { Tokenizer.forModel("acme-7b") }
        }
        Tokenizer.forModel("no-such-model", fallback = Encoding.CL100K_BASE).use { assertFalse(it.info().model!!.exact) }
    }

    @Test
    fun utf8BytesPathIsZeroCopyAndChecked() {
        Tokenizer(Encoding.CL100K_BASE).use { t ->
            val text = "naïve café ".repeat(100)
            val bytes = text.toByteArray(Charsets.UTF_8)
            val direct = ByteBuffer.allocateDirect(bytes.size).put(bytes).flip()
            assertEquals(t.countTokens(text), t.countTokensUtf8(direct))
            assertEquals(t.countTokens(text), t.countTokensUtf8(bytes))
            assertContentEquals(t.encode(text), t.encodeUtf8(ByteBuffer.allocateDirect(bytes.size).put(bytes).flip()))
            val e = assertFailsWith<TurnfitException.InvalidUtf8> {
                t.countTokensUtf8(byteArrayOf('a'.code.toByte(), 0xff.toByte()))
            }
            assertContains(e.message!!, "offset 1")
            // A heap buffer is refused by uniffi (it cannot be read in place).
            assertFailsWith<IllegalArgumentException> { t.countTokensUtf8(ByteBuffer.wrap(bytes)) }
        }
    }

    @Test
    fun loneSurrogatesBecomeReplacementCharacters() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            for ((lone, fixed) in listOf(
                "a\uD800b" to "a\uFFFDb",
                "end\uD83D" to "end\uFFFD",
                "\uDC00start" to "\uFFFDstart",
                "x\uDE00\uD83D" to "x\uFFFD\uFFFD",
            )) {
                assertEquals(t.countTokens(fixed), t.countTokens(lone), lone)
                assertContentEquals(t.encode(fixed), t.encode(lone))
                assertEquals(fixed, t.decode(t.encode(lone)))
            }
            // A valid pair is untouched.
            assertEquals("\uD83D\uDE00", t.decode(t.encode("\uD83D\uDE00")))
            val clean = "plain text"
            assertTrue(scrubSurrogates(clean) === clean)
        }
    }

    @Test
    fun countUntilLimitAndTruncate() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            val r = t.countUntilLimit("a ".repeat(1000), 5UL)
            assertTrue(r.exceeded)
            assertTrue(r.tokens > 5UL)
            assertTrue(t.isWithinTokenLimit("hi", 5UL))
            val cut = t.truncate("word ".repeat(100), 20UL, TruncateSide.BOTH)
            assertTrue(cut.truncated)
            assertTrue(cut.tokens <= 20UL)
            assertEquals(cut.tokens, t.countTokens(cut.text))
        }
    }

    @Test
    fun closedObjectsRefuseCalls() {
        val t = Tokenizer(Encoding.CL100K_BASE)
        t.use { assertEquals(2UL, it.countTokens("hello world")) }
        assertFailsWith<IllegalStateException> { t.countTokens("again") }
        t.close() // a second close is harmless
    }
}

class ErrorsTest {
    private inline fun <reified E : TurnfitException> kind(expected: String, f: () -> Unit): E {
        val e = assertFailsWith<E> { f() }
        assertEquals(expected, e.kind)
        assertTrue(e.message!!.isNotBlank())
        return e
    }

    @Test
    fun oneExceptionClassPerKindWithTheCoreMessage() {
        val t = Tokenizer(Encoding.O200K_BASE)
        kind<TurnfitException.InvalidArgument>("invalid_argument") { t.truncate("word ".repeat(50), 0UL, TruncateSide.BOTH) }
        kind<TurnfitException.InvalidUtf8>("invalid_utf8") { t.decode(intArrayOf(128), DecodeMode.STRICT) }
        val enc = kind<TurnfitException.UnknownEncoding>("unknown_encoding") { Tokenizer.fromName("o200k_bse") }
        assertContains(enc.message!!, "o200k_base")
        val model = kind<TurnfitException.UnknownModel>("unknown_model") { Tokenizer.forModel("gtp-4o") }
        assertContains(model.message!!, "gpt-4o")
        kind<TurnfitException.UnknownToken>("unknown_token") { t.decode(intArrayOf(10_000_000)) }
        kind<TurnfitException.LimitExceeded>("limit_exceeded") { CallStack(2_000_000UL) }
        kind<TurnfitException.InvalidJson>("invalid_json") { ContextWindow("gpt-4o").use { it.load("[{") } }
        // The first does_not_fit case of the window vectors.
        val dnf = com.google.gson.JsonParser.parseString(File(Vectors.repo, "tests/vectors/window.json").readText())
            .asJsonObject["vectors"].asJsonArray.map { it.asJsonObject }
            .first { it["op"].asString == "fit" && it["expected"].asJsonObject["error"]?.asString == "does_not_fit" }["input"].asJsonObject
        val tooBig = kind<TurnfitException.DoesNotFit>("does_not_fit") { fit(dnf["conversation"].toString(), dnf["options"].toString()) }
        assertTrue(tooBig.message!!.any { it.isDigit() }, "the message gives the figures: ${tooBig.message}")
        kind<TurnfitException.Io>("io") { SkillSet.open("/nonexistent/turnfit-skills") }
        val skills = SkillSet.open(File(Vectors.repo, "examples/data/skills").path)
        kind<TurnfitException.UnsafePath>("unsafe_path") { skills.body("../etc") }
        val s = CallStack(5UL).enter("planner").enter("coder")
        val cycle = kind<TurnfitException.CycleDetected>("cycle_detected") { s.enter("planner") }
        assertContains(cycle.message!!, "planner -> coder -> planner")
        kind<TurnfitException.DepthExceeded>("depth_exceeded") { CallStack(1UL).enter("a").enter("b") }
        // `internal` (a broken invariant in core) has no input that reaches it;
        // a panic is covered below.
        t.close(); skills.close(); s.close()
    }

    @Test
    fun aPanicSurfacesAsInternalExceptionAndTheProcessGoesOn() {
        val e = assertFailsWith<InternalException> { panicForTesting("boom from the test") }
        assertContains(e.message!!, "boom from the test")
        Tokenizer(Encoding.O200K_BASE).use { assertEquals(1UL, it.countTokens("after")) }
    }

    @Test
    fun sealedHierarchy() {
        val e: TurnfitException = assertFailsWith<TurnfitException> { Tokenizer.fromName("nope") }
        assertTrue(e is TurnfitException.UnknownEncoding)
    }
}

class ConcurrencyTest {
    private val texts = (0 until 64).map { i -> "thread text $i: " + "lorem ipsum dolor sit amet, ".repeat(i * 7 + 1) + "日本語 $i" }

    @Test
    fun sixteenThreadsShareOneTokenizer() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            val expected = texts.map { t.countTokens(it) }
            val pool = Executors.newFixedThreadPool(16)
            val futures = (0 until 16).map { th ->
                pool.submit<Int> {
                    var ok = 0
                    repeat(200) { k ->
                        val i = (th * 31 + k) % texts.size
                        if (t.countTokens(texts[i]) == expected[i]) ok++
                    }
                    ok
                }
            }
            val ok = futures.sumOf { it.get() }
            pool.shutdown()
            assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS))
            assertEquals(16 * 200, ok)
        }
    }

    @Test
    fun sharedWindowAndBreakerAcrossThreads() {
        ContextWindow("gpt-4o").use { w ->
            CircuitBreaker().use { b ->
                val pool = Executors.newFixedThreadPool(16)
                (0 until 16).map { th ->
                    pool.submit {
                        repeat(50) { k ->
                            w.push("""{"role": "user", "content": "message $th/$k"}""")
                            b.allow("provider", 1000UL)
                        }
                    }
                }.forEach { it.get() }
                pool.shutdown()
                assertEquals(800UL, w.messageCount())
            }
        }
    }

    @Test
    fun coroutinesOnDispatchersDefault() = runBlocking {
        Tokenizer(Encoding.CL100K_BASE).use { t ->
            val expected = texts.map { t.countTokens(it) }
            val got = texts.map { s -> async(Dispatchers.Default) { t.countTokensAsync(s) } }.awaitAll()
            assertEquals(expected, got)
            val ids = t.encodeAsync(texts[3])
            assertEquals(expected[3], ids.size.toULong())
        }
    }
}

class LifetimeTest {
    private fun rssKb(): Long =
        File("/proc/self/status").readLines().first { it.startsWith("VmRSS:") }.split(Regex("\\s+"))[1].toLong()

    @Test
    fun createCloseLoopHasBoundedMemory() {
        fun round(n: Int) = repeat(n) {
            Tokenizer(Encoding.O200K_BASE).use { it.countTokens("x") }
            ContextWindow("gpt-4o").use { it.push("""{"role": "user", "content": "hi"}""") }
        }
        // 30k rounds first: the JVM heap (capped with -Xmx by test.sh) grows
        // to its plateau by then; what grows after that is native memory.
        round(30_000)
        System.gc()
        val warm = rssKb()
        round(50_000)
        System.gc()
        val mid = rssKb()
        round(50_000)
        System.gc()
        val end = rssKb()
        println("RSS after 30k warm-up ${warm / 1024} MiB, after 50k more ${mid / 1024} MiB, after 100k more ${end / 1024} MiB")
        // A leak grows with every round; a heap settling does not keep growing
        // over the second 50k rounds.
        assertTrue(end - mid < 32 * 1024, "RSS grew by ${(end - mid) / 1024} MiB over the last 50k create/close rounds")
    }
}

class TracerTest {
    @Test
    fun endWithTokensCategoryAndMetadata() {
        Tracer(null).use { tr ->
            val a = tr.start("search", 1000UL, """{"tool_call_id":"c1"}""", 10UL)
            tr.endWith(a, SpanOutcome.SUCCESS, 2000UL, """{"output_bytes":30,"input_tokens":120,"output_tokens":40,"metadata":{"model":"gpt-4o"}}""")
            val b = tr.start("search", 3000UL)
            tr.endWith(b, SpanOutcome.FAILED, 4000UL, """{"error":"HTTP 429","error_category":"rate_limited","input_tokens":5}""")
            val c = tr.start("search", 5000UL)
            tr.endWith(c, SpanOutcome.SUCCESS, 6000UL)
            val m = com.google.gson.JsonParser.parseString(tr.exportJson(6500UL)).asJsonObject["tools"].asJsonArray[0].asJsonObject
            assertEquals(125, m["input_tokens"].asInt)
            assertEquals(40, m["output_tokens"].asInt)
            assertEquals(1, m["error_categories"].asJsonObject["rate_limited"].asInt)
            // Refused over a cap or malformed; the span stays open.
            val d = tr.start("search", 7000UL)
            assertFailsWith<TurnfitException.InvalidArgument> { tr.endWith(d, SpanOutcome.FAILED, 8000UL, """{"error_category":"Rate Limited"}""") }
            val many = (0..16).joinToString(",", "{\"metadata\":{", "}}") { "\"k$it\":$it" }
            assertFailsWith<TurnfitException.LimitExceeded> { tr.endWith(d, SpanOutcome.FAILED, 8000UL, many) }
            assertFailsWith<TurnfitException.InvalidJson> { tr.endWith(d, SpanOutcome.FAILED, 8000UL, """{"tokens":3}""") }
            assertFailsWith<TurnfitException.InvalidJson> { tr.endWith(d, SpanOutcome.FAILED, 8000UL, "{") }
            tr.endWith(d, SpanOutcome.TIMEOUT, 9000UL, "{}")
            assertFailsWith<TurnfitException.InvalidArgument> { tr.endWith(d, SpanOutcome.SUCCESS, 9500UL) }
        }
    }
}

class WindowTest {
    @Test
    fun agentLoopPieces() {
        ContextWindow("gpt-4o", """{"context_window": 2000, "reserved_output": 200}""").use { w ->
            w.load("""[{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "fix the bug"}]""")
            val before = w.preflight()
            assertEquals(Verdict.FITS, before.verdict)
            for (i in 0 until 12) {
                w.push("""{"role": "assistant", "content": null, "tool_calls": [{"id": "c$i", "type": "function", "function": {"name": "run", "arguments": "{}"}}]}""")
                w.push("""{"role": "tool", "tool_call_id": "c$i", "content": "${"log line ".repeat(60)}"}""")
            }
            w.push("""{"role": "user", "content": "Now write the fix."}""")
            val p = w.preflight()
            assertTrue(p.verdict != Verdict.FITS, "verdict ${p.verdict}")
            val out = w.compact("""{"strategy": "summarize"}""")
            assertContains(out, "needs_summary")
            val id = com.google.gson.JsonParser.parseString(out).asJsonObject["request"].asJsonObject["id"].asString
            val report = w.applySummary(id, "Ran the tool 12 times; the log repeats.")
            assertContains(report, "tokens_after")
            assertEquals(Verdict.FITS, w.preflight().verdict)
            assertEquals("[]", w.validate())
        }
    }
}
