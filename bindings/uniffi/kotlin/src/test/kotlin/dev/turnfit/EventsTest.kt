// Events through the uniffi callback interface (EventListener): what
// arrives, on which thread, when, and what a throwing listener does.
package dev.turnfit

import com.google.gson.JsonParser
import dev.turnfit.types.Event
import java.io.File
import java.nio.file.Files
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertIs
import kotlin.test.assertTrue

/** Records (kind, payload, thread) of every event. */
class Recorder : EventListener {
    val seen = java.util.Collections.synchronizedList(mutableListOf<Triple<String, String, Thread>>())
    override fun onEvent(kind: String, payloadJson: String) {
        seen += Triple(kind, payloadJson, Thread.currentThread())
    }
    val kinds: List<String> get() = synchronized(seen) { seen.map { it.first } }
}

private fun user(words: Int) = """{"role":"user","content":"${"word ".repeat(words)}"}"""

class EventsTest {
    private val session = File(Vectors.repo, "examples/data/coding-session.json").readText()

    @Test
    fun budgetCrossedArrivesOnTheCallersThreadBeforeTheCallReturns() {
        ContextWindow("gpt-4o", """{"context_window": 1000, "reserved_output": 100}""").use { w ->
            val r = Recorder()
            w.setEventListener(r)
            w.push(user(100))
            assertEquals(emptyList(), r.kinds, "fits: nothing crossed")
            w.push(user(650))
            assertEquals(listOf("budget_crossed"), r.kinds, "delivered before push returned")
            val (_, payload, thread) = r.seen[0]
            assertEquals(Thread.currentThread(), thread)
            val o = JsonParser.parseString(payload).asJsonObject
            assertEquals("push", o["operation"].asString)
            assertEquals("fits", o["from"].asString)
            assertEquals("should_compact", o["to"].asString)
            val e = assertIs<Event.BudgetCrossed>(decodeEvent(payload))
            assertEquals(1000L, e.limit)
            w.pop()
            assertEquals(1, r.seen.size, "going down is not an event")
        }
    }

    @Test
    fun compactionArrivesAndMatchesTheReport() {
        ContextWindow("gpt-4o", """{"context_window": 2000, "reserved_output": 200}""").use { w ->
            val got = mutableListOf<Event>()
            w.setEventListener(typedEventListener { got += it })
            w.load(session)
            assertTrue(got.size == 1 && got[0] is Event.BudgetCrossed, "load crossed the budget: $got")
            val report = assertIs<dev.turnfit.types.CompactOutcome.Done>(w.compactTyped()).report
            val c = assertIs<Event.Compacted>(got.last())
            assertEquals(report.tokensBefore to report.tokensAfter, c.tokensBefore to c.tokensAfter)
            assertEquals(dev.turnfit.types.Strategy.RECENCY, c.strategy)
        }
    }

    @Test
    fun theListenerMayCallTheWindowBack() {
        ContextWindow("gpt-4o", """{"context_window": 1000, "reserved_output": 100}""").use { w ->
            val verdicts = mutableListOf<Verdict>()
            w.setEventListener(eventListener { _, _ -> verdicts += w.preflight().verdict })
            w.push(user(700))
            assertEquals(listOf(Verdict.SHOULD_COMPACT), verdicts, "no deadlock: the window is unlocked")
        }
    }

    @Test
    fun aThrowingListenerIsDroppedAndTheCallCompletes() {
        ContextWindow("gpt-4o", """{"context_window": 1000, "reserved_output": 100}""").use { w ->
            var calls = 0
            w.setEventListener(eventListener { _, _ -> calls++; throw IllegalStateException("listener bug") })
            val n = w.push(user(1200)) // fits -> overflow: one event, which throws
            assertTrue(n > 1000uL, "the push returned its count")
            assertEquals(1, calls)
            w.push(user(1))
            assertEquals(2uL, w.messageCount(), "the window carries on")
            assertEquals(Verdict.OVERFLOW, w.preflight().verdict)
        }
        CircuitBreaker("""{"failure_threshold": 1}""").use { b ->
            b.setEventListener(eventListener { _, _ -> throw RuntimeException("listener bug") })
            assertEquals(BreakerState.OPEN, b.recordFailure("api", 0uL), "the state change stands")
            assertEquals(BreakerState.OPEN, b.state("api", 1uL).state)
        }
    }

    @Test
    fun breakerStateChangesArrive() {
        CircuitBreaker("""{"failure_threshold": 2, "cool_down_ms": 100}""").use { b ->
            val r = Recorder()
            b.setEventListener(r)
            b.recordFailure("api", 0uL)
            assertEquals(emptyList(), r.kinds)
            b.recordFailure("api", 1uL)
            assertEquals(listOf("breaker_state_changed"), r.kinds)
            val e = assertIs<Event.BreakerStateChanged>(decodeEvent(r.seen[0].second))
            assertEquals("api" to 1L, e.key to e.atMs)
            assertEquals(dev.turnfit.types.BreakerState.CLOSED to dev.turnfit.types.BreakerState.OPEN, e.from to e.to)
            assertEquals(Thread.currentThread(), r.seen[0].third)
            b.setEventListener(null)
            b.recordSuccess("api", 500uL)
            assertEquals(1, r.seen.size, "cleared: nothing more")
        }
    }

    @Test
    fun tracerOverdueSpansArrive() {
        Tracer(null).use { t ->
            val r = Recorder()
            t.setEventListener(r)
            t.start("search", 0uL, """{"timeout_ms": 1}""", 0uL)
            t.overdue(5_000uL)
            assertEquals(listOf("span_overdue"), r.kinds)
            assertIs<Event.SpanOverdue>(decodeEvent(r.seen[0].second))
        }
    }

    @Test
    fun skippedSkillFilesArrive() {
        val root = Files.createTempDirectory("turnfit-skills").toFile()
        try {
            File(root, "good").mkdirs()
            File(root, "good/SKILL.md").writeText("---\nname: good\ndescription: A skill.\n---\nBody.\n")
            File(root, "no-skill-here").mkdirs() // a folder without SKILL.md: skipped
            val r = Recorder()
            SkillSet.openWithListener(root.path, r).use { s ->
                val ignored = JsonParser.parseString(s.listJson()).asJsonObject["ignored"].asJsonArray
                assertEquals(ignored.size(), r.seen.size, "one event per ignored entry: ${r.kinds} vs $ignored")
                assertTrue(r.seen.isNotEmpty(), "no-skill-here was skipped: $ignored")
                assertTrue(r.kinds.all { it == "skill_skipped" })
            }
        } finally {
            root.deleteRecursively()
        }
    }

    @Test
    fun aSharedWindowDeliversEachEventToTheThreadWhoseCallRaisedIt() {
        // 8 threads push into one window; the one push that crosses the
        // trigger gets the event, on its own thread, inside its own call.
        ContextWindow("gpt-4o", """{"context_window": 90000, "reserved_output": 1000}""").use { w ->
            val inCall = ThreadLocal.withInitial { false }
            val arrivals = java.util.Collections.synchronizedList(mutableListOf<Pair<String, Boolean>>())
            w.setEventListener(eventListener { kind, _ -> arrivals += kind to inCall.get() })
            val pool = java.util.concurrent.Executors.newFixedThreadPool(8)
            try {
                (1..8).map {
                    pool.submit {
                        repeat(5) {
                            inCall.set(true)
                            try { w.push(user(2000)) } finally { inCall.set(false) }
                        }
                    }
                }.forEach { it.get() }
            } finally {
                pool.shutdown()
            }
            assertEquals(40uL, w.messageCount())
            assertEquals(Verdict.SHOULD_COMPACT, w.preflight().verdict)
            assertEquals(listOf("budget_crossed" to true), arrivals.toList(), "one crossing, delivered inside the pushing call")
        }
    }

    @Test
    fun noEventsAfterClose() {
        val r = Recorder()
        val w = ContextWindow("gpt-4o", """{"context_window": 1000, "reserved_output": 100}""")
        w.setEventListener(r)
        w.push(user(700))
        assertEquals(1, r.seen.size)
        w.close()
        runCatching { w.push(user(700)) }.also { assertTrue(it.isFailure, "a closed window refuses calls") }
        System.gc()
        assertEquals(1, r.seen.size, "nothing after close")
    }
}
