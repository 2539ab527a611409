// The byte-level and special-token API (tokenBytes, tokenId, encodeBytes,
// decodeBytes, decode modes, decodeWithOffsets, encodeSpecial,
// specialTokenList) against tiktoken 0.14.0's own answers:
// tests/fixtures/tiktoken/bytes_oracle.json, the cases core, Python and Node
// run, here through Kotlin.
package dev.turnfit

import com.google.gson.Gson
import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.io.File
import kotlin.test.Test
import kotlin.test.assertContentEquals
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertTrue

class BytesTest {
    private val gson = Gson()

    private fun hex(b: ByteArray) = b.joinToString("") { "%02x".format(it) }
    private fun unhex(s: String) = ByteArray(s.length / 2) { s.substring(2 * it, 2 * it + 2).toInt(16).toByte() }
    private fun ids(e: JsonElement) = e.asJsonArray.map { it.asLong.toInt() }.toIntArray()
    private fun set(e: JsonElement): SpecialSet =
        if (e.isJsonPrimitive && e.asString == "all") SpecialSet.All else SpecialSet.Only(e.asJsonArray.map { it.asString })

    private fun run(t: Tokenizer, op: String, inp: JsonObject): Map<String, Any?> = try {
        when (op) {
            "special_tokens" -> {
                val tokens = linkedMapOf<String, Long>()
                for (e in t.specialTokenList()) tokens[e.token] = e.id.toLong()
                if (tokens.size < 100) mapOf("tokens" to tokens)
                else mapOf("count" to tokens.size.toLong(), "first" to tokens.entries.take(20).associate { it.key to it.value })
            }
            "token_bytes" -> mapOf("bytes" to hex(t.tokenBytes(inp["id"].asLong.toUInt())))
            "token_id" -> mapOf("id" to t.tokenId(unhex(inp["bytes"].asString)).toLong())
            "decode_bytes" -> mapOf("bytes" to hex(t.decodeBytes(ids(inp["ids"]))))
            "decode" -> mapOf("text" to t.decode(ids(inp["ids"]), DecodeMode.valueOf(inp["mode"].asString.uppercase())))
            "decode_with_offsets" -> t.decodeWithOffsets(ids(inp["ids"])).let { mapOf("text" to it.text, "offsets" to it.offsets.map { o -> o.toLong() }) }
            "encode_bytes" -> mapOf("ids" to t.encodeBytes(unhex(inp["bytes"].asString)).map { it.toUInt().toLong() })
            "encode_special" -> mapOf(
                "ids" to t.encodeSpecial(inp["text"].asString, set(inp["allowed_special"]), set(inp["disallowed_special"])).map { it.toUInt().toLong() },
            )
            else -> error("unknown op $op")
        }
    } catch (e: TurnfitException) {
        val m = Regex("disallowed special token '(.*)' at byte offset").find(e.message ?: "")
        if (e is TurnfitException.InvalidArgument && m != null) mapOf("error" to "disallowed", "token" to m.groupValues[1])
        else mapOf("error" to e.kind)
    }

    @Test
    fun everyTiktokenOracleCase() {
        val doc = JsonParser.parseString(File(Vectors.repo, "tests/fixtures/tiktoken/bytes_oracle.json").readText()).asJsonObject
        assertEquals("tiktoken 0.14.0 (OpenAI)", doc["oracle"].asString)
        val toks = hashMapOf<String, Tokenizer>()
        val failures = mutableListOf<String>()
        val cases = doc["cases"].asJsonArray
        for ((i, c) in cases.withIndex()) {
            val case = c.asJsonObject
            val enc = case["encoding"].asString
            val t = toks.getOrPut(enc) { Tokenizer.fromName(enc) }
            // Through JSON on both sides, so numbers and maps compare alike.
            val got = JsonParser.parseString(gson.toJson(run(t, case["op"].asString, case["input"].asJsonObject)))
            if (got != case["expected"]) failures += "case $i ${case["op"].asString} $enc: expected ${case["expected"]}, got $got"
        }
        toks.values.forEach { it.close() }
        println("byte oracle: ${cases.size() - failures.size}/${cases.size()}")
        assertEquals(emptyList(), failures.take(10))
        assertTrue(cases.size() > 4000)
    }

    @Test
    fun shapesDefaultsAndBadInput() {
        Tokenizer(Encoding.CL100K_BASE).use { t ->
            assertEquals(t.tokenId("hello".toByteArray()), t.encode("hello").single().toUInt())
            assertEquals(100257u, t.tokenId("<|endoftext|>".toByteArray()))
            assertTrue(t.isSpecialToken(100257u))
            assertFalse(t.isSpecialToken(0u))
            assertContentEquals(intArrayOf(100257), t.encodeSpecial("<|endoftext|>", SpecialSet.Only(listOf("<|endoftext|>")), SpecialSet.All))
            assertEquals(1UL, t.countTokensSpecial("<|endoftext|>", SpecialSet.All, SpecialSet.Only(emptyList())))
            val e = assertFailsWith<TurnfitException.InvalidArgument> { t.encodeSpecial("a<|endoftext|>", SpecialSet.Only(emptyList()), SpecialSet.All) }
            assertTrue(e.message!!.contains("at byte offset 1"), e.message)
            // Bytes that are not UTF-8: encodeBytes takes them; decode can drop them.
            val cut = byteArrayOf(0x68, 0xc3.toByte())
            assertEquals("h", t.decode(t.encodeBytes(cut), DecodeMode.IGNORE))
            assertFailsWith<TurnfitException.InvalidUtf8> { t.decodeWithOffsets(t.encodeBytes(cut)) }
            val d = t.decodeWithOffsets(t.encode("hello world"))
            assertEquals("hello world", d.text)
            assertEquals(listOf(0UL, 5UL), d.offsets)
            assertFailsWith<TurnfitException.UnknownToken> { t.tokenBytes(100256u) }
            assertFailsWith<TurnfitException.UnknownToken> { t.tokenBytes(UInt.MAX_VALUE) }
            assertFailsWith<TurnfitException.UnknownToken> { t.tokenId(byteArrayOf(0xff.toByte(), 0xfe.toByte())) }
            assertFailsWith<TurnfitException.LimitExceeded> { t.encodeSpecial("x", SpecialSet.Only(List(5000) { "y$it" }), SpecialSet.All) }
            // Lone surrogates are U+FFFD here too (the facade's lowering).
            assertContentEquals(t.encode("\uFFFD"), t.encodeSpecial("\uD800", SpecialSet.All, SpecialSet.All))
            assertEquals(SpecialToken("<|endoftext|>", 100257u), t.specialTokenList().first())
            assertContentEquals(byteArrayOf(0x21), t.tokenBytes(0u))
        }
    }
}
