package dev.turnfit

import java.io.File
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking

/** fitTurn / fitTurnBlocking: whatever the summarizer does, the turn fits. */
class TurnTest {
    private val history = File(Vectors.repo, "examples/data/agent-loop.json").readText()
    private val options =
        """{"model":"gpt-4o","max_tokens":16000,"policy":{"strategy":"summarize","mask":{"enabled":false}},"summarizer":{"timeout_ms":200}}"""

    /** Checks the turn fits and was summarized; returns (source, fallback reason or null). */
    private fun outcome(r: FitResult): Pair<String, String?> {
        val rep = com.google.gson.JsonParser.parseString(r.report).asJsonObject
        assertTrue(rep["tokens_after"].asLong <= rep["limit_tokens"].asLong, r.report.take(300))
        assertTrue(rep["fired"].asBoolean)
        val s = rep["summary"].asJsonObject
        val fb = s["fallback"]
        return s["source"].asString to (if (fb == null || fb.isJsonNull) null else fb.asJsonObject["reason"].asString)
    }

    @Test
    fun suspendSummarizerSucceeds() = runBlocking<Unit> {
        var calls = 0
        val r = fitTurn(history, options) { req ->
            calls++
            assertTrue(req.contains("\"prompt\":"))
            delay(1)
            "The agent explored the repository."
        }
        assertEquals("host" to null, outcome(r))
        assertTrue(calls >= 1)
        assertTrue(r.conversation.contains("The agent explored the repository."))
    }

    @Test
    fun suspendSummarizerThrows() = runBlocking<Unit> {
        val r = fitTurn(history, options) { throw IllegalStateException("rate limited") }
        assertEquals("digest" to "error", outcome(r))
        assertTrue(r.report.contains("rate limited"))
    }

    @Test
    fun suspendSummarizerHangsPastItsTimeout() = runBlocking<Unit> {
        assertEquals("digest" to "timeout", outcome(fitTurn(history, options) { delay(10_000); "too late" }))
        assertEquals("digest" to "timeout", outcome(fitTurn(history, options) { awaitCancellation() }))
    }

    @Test
    fun blankAndOversizedReplies() = runBlocking<Unit> {
        assertEquals("digest" to "empty", outcome(fitTurn(history, options) { "  \n " }))
        assertEquals("digest" to "oversized", outcome(fitTurn(history, options) { "word ".repeat(200_000) }))
    }

    @Test
    fun noSummarizer() = runBlocking<Unit> {
        assertEquals("digest" to "no_summarizer", outcome(fitTurn(history, options, null)))
    }

    @Test
    fun blockingSummarizer() {
        assertEquals("host" to null, outcome(fitTurnBlocking(history, options, Summarizer { "A short summary." })))
        assertEquals("digest" to "error", outcome(fitTurnBlocking(history, options, Summarizer { throw RuntimeException("down") })))
        assertEquals("digest" to "timeout", outcome(fitTurnBlocking(history, options, Summarizer { Thread.sleep(10_000); "late" })))
        assertEquals("digest" to "empty", outcome(fitTurnBlocking(history, options, Summarizer { "" })))
        assertEquals("digest" to "oversized", outcome(fitTurnBlocking(history, options, Summarizer { "word ".repeat(200_000) })))
    }

    @Test
    fun turnfitErrorsAreThrown() = runBlocking<Unit> {
        assertFailsWith<TurnfitException.UnknownModel> {
            fitTurn(history, """{"model":"gtp-4o","max_tokens":16000}""") { "x" }
        }
        assertFailsWith<TurnfitException.DoesNotFit> {
            fitTurnBlocking(history, """{"model":"gpt-4o","max_tokens":50}""", Summarizer { "x" })
        }
        Turn("""[{"role":"user","content":"hi"}]""", """{"model":"gpt-4o","max_tokens":100}""").use { t ->
            assertNull(t.call())
            assertFailsWith<TurnfitException.InvalidArgument> { t.resume("x") }
            t.finish()
            assertFailsWith<TurnfitException.InvalidArgument> { t.finish() }
        }
    }
}
