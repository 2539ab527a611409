package dev.turnfit

import java.io.File
import kotlin.test.Test
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

/** Multi-scale windows (issue 53), reached through the budget JSON: compact folds the tiers. */
class MultiScaleTest {
    private val tiers = """{"immediate_tokens": 1500, "session_tokens": 300, "historical_tokens": 400}"""

    @Test
    fun compactFoldsARealTrajectory() {
        // A real trajectory (tests/fixtures/trajectories/PROVENANCE.md).
        val conv = File(Vectors.repo, "tests/fixtures/trajectories/tau-bench-airline-task0.openai.json").readText()
        ContextWindow("gpt-4o", """{"context_window": 8000, "reserved_output": 1000, "multi_scale": $tiers}""").use { w ->
            w.load(conv)
            val out = com.google.gson.JsonParser.parseString(w.compact(null)).asJsonObject
            assertEquals("done", out["status"].asString)
            val t = out["report"].asJsonObject["tiers"].asJsonObject
            assertTrue(t["messages_folded"].asInt > 0, t.toString())
            assertTrue(t["immediate_tokens"].asInt <= 1500 && t["session_tokens"].asInt <= 300, t.toString())
            assertContains(w.preflightJson(null), "\"tiers\"")
        }
    }

    @Test
    fun aZeroTierIsRefusedByName() {
        val bad = """{"immediate_tokens": 0, "session_tokens": 300, "historical_tokens": 400}"""
        val e = assertFailsWith<TurnfitException.InvalidArgument> {
            ContextWindow("gpt-4o", """{"context_window": 8000, "multi_scale": $bad}""").close()
        }
        assertContains(e.message!!, "multi_scale.immediate_tokens is 0")
    }
}
