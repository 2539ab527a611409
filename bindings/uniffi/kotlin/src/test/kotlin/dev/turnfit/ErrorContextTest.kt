package dev.turnfit

import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull

/** Document 000's ErrorContext: echoed by classification, counted by the breakers. */
class ErrorContextTest {
    @Test
    fun classificationEchoesTheContext() {
        val c = classifyError("other", 0u, "Rate limit exceeded", null,
            """{"agent_id": "narrator", "workflow_id": "wf-7", "metadata": {"turn": 3}}""")
        assertEquals("rate_limited", c.category)
        assertEquals("narrator", c.agentId)
        assertEquals("wf-7", c.workflowId)
        assertEquals("""{"turn":3}""", c.metadataJson)
        val plain = classifyError("other", 0u, "Rate limit exceeded")
        assertNull(plain.agentId)
        assertNull(plain.metadataJson)
        assertFailsWith<TurnfitException.InvalidArgument> {
            classifyError("openai", 500u, "", null, """{"agent_id": ""}""")
        }
    }

    @Test
    fun breakersCountFailuresPerAgentAndWorkflow() {
        CircuitBreaker("""{"failure_threshold": 3}""").use { b ->
            b.recordFailureIn("openai", 0uL, """{"agent_id": "narrator", "workflow_id": "wf-7"}""")
            b.recordFailureIn("openai", 1uL, """{"agent_id": "narrator"}""")
            assertEquals(BreakerState.OPEN, b.recordFailureIn("openai", 2uL, "{}"))
            val n = b.failureCounts()
            assertEquals(mapOf("narrator" to 2uL), n.byAgent)
            assertEquals(mapOf("wf-7" to 1uL), n.byWorkflow)
            assertEquals(0uL, n.unattributed)
            assertFailsWith<TurnfitException.InvalidJson> { b.recordFailureIn("openai", 3uL, """{"agent": "x"}""") }
        }
    }
}
