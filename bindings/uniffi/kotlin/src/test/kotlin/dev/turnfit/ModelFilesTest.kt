package dev.turnfit

import java.io.File
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

/**
 * ModelRegistry.registerModelFiles: a model known by its own files (issue 50),
 * on the tiny byte-level fixture with a chat template. Its fits report the
 * template's count (exact), equal to the fixture tokenizer's count of the
 * rendered prompt, and are within the limit; bad files fail by kind.
 */
class ModelFilesTest {
    private val tiny = File(Vectors.repo, "tests/vectors/files/tiny-byte-level.tokenizer.json").path
    private val template =
        "{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"

    private fun spec(name: String) = com.google.gson.JsonObject().apply {
        addProperty("name", name)
        addProperty("tokenizer", tiny)
        addProperty("chat_template", template)
        addProperty("context_window", 2000)
    }.toString()

    private fun chat(): List<Pair<String, String>> =
        listOf("system" to "Be brief.") + (0 until 60).flatMap { i ->
            listOf("user" to "question $i about the weather in a city", "assistant" to "answer $i: it is sunny there today")
        }

    private fun json(messages: List<Pair<String, String>>): String = com.google.gson.JsonArray().apply {
        for ((role, content) in messages) add(com.google.gson.JsonObject().apply { addProperty("role", role); addProperty("content", content) })
    }.toString()

    private fun rendered(json: String): String =
        com.google.gson.JsonParser.parseString(json).asJsonArray.joinToString("") {
            val m = it.asJsonObject
            "${m["role"].asString}:${m["content"].asString}<|end|>"
        } + "assistant:"

    @Test
    fun aModelFromItsFilesIsExactInFit() {
        ModelRegistry().use { r ->
            val info = r.registerModelFiles(spec("tiny-kt-files"))
            assertEquals(ModelSource.HOST, info.source)
            assertTrue(info.exact)
            FileTokenizer.fromFile(tiny, null, SpecialTokens.RECOGNIZE).use { tok ->
                val conversation = json(chat())
                val result = fit(conversation, """{"model": "tiny-kt-files", "max_tokens": 800}""", r)
                val report = com.google.gson.JsonParser.parseString(result.report).asJsonObject
                assertTrue(report["exact"].asBoolean)
                assertEquals(tok.countTokens(rendered(conversation)).toInt(), report["tokens_before"].asInt)
                assertEquals(tok.countTokens(rendered(result.conversation)).toInt(), report["tokens_after"].asInt)
                assertTrue(report["tokens_after"].asInt <= report["limit_tokens"].asInt)
            }
        }
    }

    @Test
    fun badModelFilesFailByKind() {
        ModelRegistry().use { r ->
            assertFailsWith<TurnfitException.Io> {
                r.registerModelFiles("""{"name": "m", "tokenizer": "/nonexistent/tokenizer.json", "context_window": 100}""")
            }
            assertFailsWith<TurnfitException.InvalidArgument> { r.registerModelFiles(spec("gpt-4o")) }
            assertFailsWith<TurnfitException.InvalidJson> { r.registerModelFiles("""{"name": "m", "tokenizer": "$tiny"}""") }
        }
    }
}
