package dev.turnfit

import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNotEquals
import kotlin.test.assertTrue

/** ModelRegistry.registerWithCounter: a model counted by the host's own function (issue 34). */
class HostCounterTest {
    private val profile = """{"name": "acme-host", "encoding": "cl100k_base", "context_window": 32000, "exact": false}"""
    private val text = "The quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over the lazy dog."
    private val conversation = """[{"role":"system","content":"$text"},{"role":"user","content":"$text"}]"""

    /** One token per 4 bytes of UTF-8, counting its calls. */
    private class QuarterBytes : HostTokenCounter {
        val calls = AtomicInteger()
        override fun count(text: String): ULong {
            calls.incrementAndGet()
            return (text.toByteArray(Charsets.UTF_8).size / 4).toULong()
        }
    }

    private fun report(json: String) = com.google.gson.JsonParser.parseString(json).asJsonObject

    @Test
    fun skillsAndHandoffsLookModelsUpInTheRegistry() {
        val dir = java.nio.file.Files.createTempDirectory("turnfit-skills")
        dir.resolve("greet.md").toFile().writeText("---\nname: greet\ndescription: Says hello.\n---\nSay hello.\n")
        val handoff = "{\"version\":\"1.0\",\"task_summary\":\"t\",\"key_outputs\":[]," +
            "\"metadata\":{\"from_agent\":\"a\",\"to_agent\":\"b\",\"created_at\":\"2026-03-01T12:00:00Z\"}}"
        val options = """{"model": "acme-plain"}"""
        ModelRegistry().use { r ->
            r.register(profile.replace("acme-host", "acme-plain"))
            // Without the registry the model is unknown; with it, both work.
            assertFailsWith<TurnfitException.UnknownModel> { SkillSet.open(dir.toString(), options) }
            assertFailsWith<TurnfitException.UnknownModel> { handoffRender(handoff, options) }
            SkillSet.open(dir.toString(), options, r).use { s -> assertTrue(s.listJson().contains("\"greet\"")) }
            assertTrue(report(handoffRender(handoff, options, r))["text"].asString.isNotEmpty())
        }
    }

    @Test
    fun windowsFitAndCountingUseTheCounter() {
        val counter = QuarterBytes()
        ModelRegistry().use { r ->
            r.registerWithCounter(profile, counter)
            assertEquals(ModelSource.HOST, r.lookup("acme-host").source)
            // The same profile without a counter: the encoding's counts.
            ModelRegistry().use { plain ->
                plain.register(profile.replace("acme-host", "acme-plain"))
                val viaEncoding = countConversation(conversation, "acme-plain", plain)
                val viaCounter = countConversation(conversation, "acme-host", r)
                assertNotEquals(viaEncoding, viaCounter)
            }
            assertTrue(counter.calls.get() > 0, "countConversation called the counter")

            ContextWindow("acme-host", registry = r).use { w ->
                val before = counter.calls.get()
                w.load(conversation)
                val p = w.preflight("""{"role":"user","content":"$text"}""")
                assertFalse(p.exact)
                // The text's quarter-bytes plus the model's framing of one message.
                val quarter = text.toByteArray().size.toULong() / 4UL
                assertTrue(p.newInput >= quarter && p.newInput <= quarter + 8UL, "new input ${p.newInput}, text $quarter")
                assertTrue(counter.calls.get() > before, "the window called the counter")
            }

            val before = counter.calls.get()
            val fitted = fit(conversation, """{"model": "acme-host", "max_tokens": 20000}""", r)
            assertFalse(report(fitted.report)["exact"].asBoolean)
            assertTrue(counter.calls.get() > before, "fit called the counter")
            // Without the registry, fit does not know the model.
            assertFailsWith<TurnfitException.UnknownModel> { fit(conversation, """{"model": "acme-host", "max_tokens": 20000}""") }
        }
    }

    @Test
    fun aThrowingCounterIsInvalidArgumentNamingTheModel() {
        ModelRegistry().use { r ->
            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = throw CounterException.Failed("no quota left")
            })
            val e = assertFailsWith<TurnfitException.InvalidArgument> { countConversation(conversation, "acme-host", r) }
            assertTrue("'acme-host'" in e.message!! && "failed: no quota left" in e.message!!, e.message)

            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = throw IllegalStateException("tokenizer offline")
            })
            val e2 = assertFailsWith<TurnfitException.InvalidArgument> {
                ContextWindow("acme-host", registry = r).use { it.push("""{"role":"user","content":"hi"}""") }
            }
            assertTrue("'acme-host'" in e2.message!! && "tokenizer offline" in e2.message!!, e2.message)
        }
    }

    @Test
    fun anAbsurdCountIsRefused() {
        ModelRegistry().use { r ->
            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = text.toByteArray().size.toULong() + 65UL
            })
            val e = assertFailsWith<TurnfitException.InvalidArgument> { countConversation(conversation, "acme-host", r) }
            assertTrue("'acme-host'" in e.message!! && "at most the bytes plus 64" in e.message!!, e.message)
            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = ULong.MAX_VALUE
            })
            assertFailsWith<TurnfitException.InvalidArgument> { countConversation(conversation, "acme-host", r) }
        }
    }

    @Test
    fun aCounterCallingBackIntoTurnfitIsRefused() {
        ModelRegistry().use { r ->
            // Counting again for the same model from inside the counter: the core's re-entry check.
            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = countConversation(conversation, "acme-host", r)
            })
            val e = assertFailsWith<TurnfitException.InvalidArgument> { countConversation(conversation, "acme-host", r) }
            assertTrue("re-entered" in e.message!!, e.message)

            // Calling the window it counts for: refused instead of waiting on its lock forever.
            var window: ContextWindow? = null
            r.registerWithCounter(profile, object : HostTokenCounter {
                override fun count(text: String): ULong = window!!.push("""{"role":"user","content":"again"}""")
            })
            ContextWindow("acme-host", registry = r).use { w ->
                window = w
                val e2 = assertFailsWith<TurnfitException.InvalidArgument> { w.push("""{"role":"user","content":"hi"}""") }
                assertTrue("from inside a host counter" in e2.message!!, e2.message)
                assertEquals(0UL, w.messageCount())
            }
        }
    }

    /**
     * messageCount and setEventListener from inside the counter of the window's own push: both
     * took the window's lock without the check, and waited on the push forever. Preemptive
     * timeout, so that a regression fails instead of hanging the suite.
     */
    @Test
    fun aCounterReadingTheWindowItCountsForIsRefusedNotADeadlock() {
        val reaches = listOf<(ContextWindow) -> Unit>({ it.messageCount() }, { it.setEventListener(null) })
        for ((i, reach) in reaches.withIndex()) {
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60)) {
                ModelRegistry().use { r ->
                    var window: ContextWindow? = null
                    r.registerWithCounter(profile, object : HostTokenCounter {
                        override fun count(text: String): ULong {
                            reach(window!!)
                            return 1UL
                        }
                    })
                    ContextWindow("acme-host", registry = r).use { w ->
                        window = w
                        val e = assertFailsWith<TurnfitException.InvalidArgument>("reach $i") {
                            w.push("""{"role":"user","content":"hi"}""")
                        }
                        assertTrue("was called from inside a host counter" in e.message!!, e.message)
                        assertEquals(0UL, w.messageCount())
                    }
                }
            }
        }
    }

    @Test
    fun anArrayProfileIsRefused() {
        ModelRegistry().use { r ->
            assertFailsWith<TurnfitException.InvalidJson> { r.registerWithCounter("[$profile]", QuarterBytes()) }
            assertFailsWith<TurnfitException.UnknownModel> { r.lookup("acme-host") }
        }
    }
}
