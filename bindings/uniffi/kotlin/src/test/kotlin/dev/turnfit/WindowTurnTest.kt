package dev.turnfit

import java.io.File
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue
import kotlinx.coroutines.runBlocking

/** ContextWindow.fitTurn / fitTurnBlocking: the stateful turn. */
class WindowTurnTest {
    private val history = File(Vectors.repo, "examples/data/agent-loop.json").readText()
    private val options = """{"policy":{"strategy":"summarize","mask":{"enabled":false}},"summarizer":{"timeout_ms":2000}}"""

    private fun window(): ContextWindow =
        ContextWindow("gpt-4o", """{"context_window":16000}""").also { it.load(history) }

    private fun report(json: String) = com.google.gson.JsonParser.parseString(json).asJsonObject

    @Test
    fun belowTheTriggerNothingChanges() = runBlocking<Unit> {
        ContextWindow("gpt-4o", """{"context_window":16000}""").use { w ->
            w.push("""{"role":"user","content":"hi"}""")
            val before = w.conversation()
            val r = report(w.fitTurn(options) { error("no summary is needed") })
            assertEquals(false, r["fired"].asBoolean)
            assertEquals(before, w.conversation())
        }
    }

    @Test
    fun overTheTriggerTheWindowTakesTheHostSummary() = runBlocking<Unit> {
        window().use { w ->
            val n = w.messageCount()
            val r = report(w.fitTurn(options) { "The agent read the failing tests." })
            assertEquals("host", r["summary"].asJsonObject["source"].asString)
            assertTrue(r["tokens_after"].asLong <= r["limit_tokens"].asLong)
            assertTrue(w.messageCount() < n)
            assertTrue(w.conversation().contains("The agent read the failing tests."))
        }
        window().use { w ->
            val r = report(w.fitTurnBlocking(options, Summarizer { throw IllegalStateException("down") }))
            assertEquals("error", r["summary"].asJsonObject["fallback"].asJsonObject["reason"].asString)
        }
    }

    @Test
    fun aWindowChangedMeanwhileGetsNothingApplied() = runBlocking<Unit> {
        window().use { w ->
            val n = w.messageCount()
            var pushed = false
            val e = assertFailsWith<TurnfitException.InvalidArgument> {
                w.fitTurn(options) {
                    if (!pushed) w.push("""{"role":"user","content":"one more thing"}""")
                    pushed = true
                    "summary"
                }
            }
            assertTrue(e.message!!.contains("the window changed during the turn"), e.message)
            assertEquals(n + 1u, w.messageCount())
        }
    }

    @Test
    fun optionsTheWindowHoldsAreRefused() = runBlocking<Unit> {
        window().use { w ->
            assertFailsWith<TurnfitException.InvalidArgument> { w.fitTurn("""{"max_tokens":100}""", null) }
            assertFailsWith<TurnfitException.InvalidArgument> { w.fitTurnBlocking("""{"model":"gpt-4o-mini"}""", null) }
        }
    }
}
