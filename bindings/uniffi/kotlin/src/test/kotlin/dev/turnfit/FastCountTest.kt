// countTokens / countTokensUtf8(ByteArray) go through Facade.kt's direct JNA
// call (src/fast.rs); these check it against uniffi's generated method and
// that failures still raise the core's exception.
package dev.turnfit

import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

class FastCountTest {
    private val texts = listOf(
        "", "Hello, world!", "<|endoftext|> is plain text here", "héllo 世界 🎉 \u0000 tab\tend",
        "lone \uD800 high and \uDC00 low", "a".repeat(100_000), "The quick brown fox. ".repeat(500),
    )

    @Test
    fun sameCountAsTheUniffiMethod() {
        for (enc in listOf(Encoding.O200K_BASE, Encoding.CL100K_BASE, Encoding.R50K_BASE)) {
            Tokenizer(enc).use { t ->
                for (s in texts) assertEquals(t.countTokensUniffi(s), t.countTokens(s), "$enc: ${s.take(40)}")
            }
        }
    }

    @Test
    fun loneSurrogatesCountAsReplacementCharacter() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            assertEquals(t.countTokens("a\uFFFDb"), t.countTokens("a\uD800b"))
        }
    }

    @Test
    fun bytesPathAndInvalidUtf8() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            assertEquals(t.countTokens("héllo"), t.countTokensUtf8("héllo".toByteArray()))
            assertEquals(0UL, t.countTokensUtf8(ByteArray(0)))
            val e = assertFailsWith<TurnfitException.InvalidUtf8> { t.countTokensUtf8(byteArrayOf(0x61, 0xff.toByte(), 0x62)) }
            assertTrue(e.message!!.contains("1"), e.message)
        }
    }

    @Test
    fun closedTokenizerThrows() {
        val t = Tokenizer(Encoding.O200K_BASE)
        t.close()
        assertFailsWith<IllegalStateException> { t.countTokens("x") }
        assertFailsWith<IllegalStateException> { t.countTokensUtf8(byteArrayOf(0x61)) }
    }

    @Test
    fun sharedAcrossThreads() {
        Tokenizer(Encoding.O200K_BASE).use { t ->
            val want = t.countTokensUniffi(texts[6])
            val threads = List(8) { Thread { repeat(200) { assertEquals(want, t.countTokens(texts[6])) } } }
            val errors = java.util.concurrent.ConcurrentLinkedQueue<Throwable>()
            threads.forEach { it.setUncaughtExceptionHandler { _, e -> errors += e }; it.start() }
            threads.forEach { it.join() }
            assertTrue(errors.isEmpty(), errors.toString())
        }
    }
}
