// The Kotlin types generated from schemas/ (dev.turnfit.types, Gson) against
// every JSON shape of tests/vectors that has a schema (the table below is
// scripts/schemas/check_examples.py's OPS), and the typed entry points
// (Typed.kt) against the JSON-text calls they wrap.
package dev.turnfit

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.reflect.TypeToken
import dev.turnfit.types.CompactOutcome
import dev.turnfit.types.TurnfitJson
import dev.turnfit.types.FitOptions
import dev.turnfit.types.Policy
import dev.turnfit.types.Strategy
import dev.turnfit.types.Verdict as SchemaVerdict
import java.io.File
import java.lang.reflect.Type
import java.math.BigDecimal
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertIs
import kotlin.test.assertTrue

private inline fun <reified T> typeOf(): Type = object : TypeToken<T>() {}.type

/**
 * The JSON value [e] with every null object member removed and every number
 * as a normalized BigDecimal string: the equality the round trip is held to.
 * Gson omits null members on output, so `"x": null` and a missing `x` both
 * decode to a null property and re-encode as missing; `1` and `1.0` of a
 * `number` field are the same Double. Anything else must come back exactly.
 */
fun canonical(e: JsonElement): Any? = when {
    e.isJsonNull -> null
    e.isJsonObject -> e.asJsonObject.entrySet().filter { !it.value.isJsonNull }.associate { it.key to canonical(it.value) }.toSortedMap()
    e.isJsonArray -> e.asJsonArray.map { canonical(it) }
    e.asJsonPrimitive.isNumber -> BigDecimal(e.asString).stripTrailingZeros().toPlainString()
    else -> e.asJsonPrimitive.toString()
}

/** Decodes [doc] as [type], re-encodes it; null when the value is unchanged, else the difference. */
fun roundTrip(doc: JsonElement, type: Type): String? {
    val decoded: Any = TurnfitJson.gson.fromJson(doc, type) ?: return "decoded to null"
    val again = TurnfitJson.gson.toJsonTree(decoded)
    return if (canonical(again) == canonical(doc)) null else "re-encoded as $again\n       was $doc"
}

class SchemaTypesTest {
    // op -> (where in the vector, Kotlin type). "input.x" / "expected" / "expected.x".
    private val ops: Map<String, List<Pair<String, Type>>> = mapOf(
        "count_conversation" to listOf("input.conversation" to typeOf<dev.turnfit.types.Conversation>()),
        "preflight" to listOf(
            "input.conversation" to typeOf<dev.turnfit.types.Conversation>(),
            "input.budget" to typeOf<dev.turnfit.types.Budget>(),
            "expected" to typeOf<dev.turnfit.types.Preflight>(),
        ),
        "repair" to listOf(
            "expected.changes" to typeOf<dev.turnfit.types.Changes>(),
            "expected.issues" to typeOf<dev.turnfit.types.Issues>(),
        ),
        "fit" to listOf(
            "input.options" to typeOf<dev.turnfit.types.FitOptions>(),
            "expected.report" to typeOf<dev.turnfit.types.FitReport>(),
        ),
        "handoff_validate" to listOf("expected" to typeOf<dev.turnfit.types.Handoff>()),
        "handoff_render" to listOf(
            "input.options" to typeOf<dev.turnfit.types.RenderOptions>(),
            "expected" to typeOf<dev.turnfit.types.RenderResult>(),
        ),
        "handoff_filter" to listOf(
            "input.options" to typeOf<dev.turnfit.types.FilterOptions>(),
            "expected" to typeOf<dev.turnfit.types.FilterResult>(),
        ),
        "skills_list" to listOf("input.options" to typeOf<dev.turnfit.types.OpenOptions>(), "expected" to typeOf<dev.turnfit.types.Listing>()),
        "skills_body" to listOf("input.options" to typeOf<dev.turnfit.types.OpenOptions>(), "expected" to typeOf<dev.turnfit.types.SkillBody>()),
        "skills_index" to listOf(
            "input.options" to typeOf<dev.turnfit.types.OpenOptions>(),
            "input.index_options" to typeOf<dev.turnfit.types.IndexOptions>(),
            "expected" to typeOf<dev.turnfit.types.IndexResult>(),
        ),
        "classify" to listOf("input.headers" to typeOf<dev.turnfit.types.ClassifyHeaders>(), "expected" to typeOf<dev.turnfit.types.Classification>()),
        "backoff" to listOf("input" to typeOf<dev.turnfit.types.BackoffRequest>(), "expected" to typeOf<dev.turnfit.types.RetryDecision>()),
        "breaker" to listOf("input.config" to typeOf<dev.turnfit.types.BreakerConfig>()),
        "callstack" to listOf("expected" to typeOf<dev.turnfit.types.CallStackJson>()),
        "trace" to listOf("input.config" to typeOf<dev.turnfit.types.TracerConfig>()),
        "toolset" to listOf("input.request" to typeOf<dev.turnfit.types.ToolsetRequest>()),
        "model_lookup" to listOf("expected" to typeOf<dev.turnfit.types.ModelInfo>()),
        "assemble" to listOf(
            "input.request" to typeOf<dev.turnfit.types.AssembleRequest>(),
            "expected" to typeOf<dev.turnfit.types.AssembleResult>(),
        ),
    )
    private val noShape = setOf(
        "encode", "decode", "count_until_limit", "truncate", "count", "encode_special",
        "decode_with_offsets", "token_bytes", "encode_bytes", "special_tokens",
        // Tokenizers from a file: text in, ids or text out, no JSON shape.
        "file_encode", "file_decode",
    )

    /**
     * Documents the Kotlin types cannot hold, by vector name and where, with
     * the reason. Each must fail to decode (a JsonSyntaxException, never a
     * wrong value), so the list cannot hide a document that would pass.
     */
    private val unrepresentable = mapOf(
        "backoff/seed-max input" to "seed is u64::MAX; the types hold integers as Long (up to 2^63-1)",
    )

    private fun pick(case: JsonObject, where: String): JsonElement? {
        var v: JsonElement = case
        for (part in where.split(".")) {
            if (!v.isJsonObject || !v.asJsonObject.has(part)) return null
            v = v.asJsonObject[part]
        }
        return if (v.isJsonNull) null else v
    }

    @Test
    fun everyVectorShapeRoundTripsThroughItsType() {
        var n = 0
        val byType = sortedMapOf<String, Int>()
        val failures = mutableListOf<String>()
        for (f in Vectors.files()) {
            for (v in JsonParser.parseString(f.readText()).asJsonObject["vectors"].asJsonArray) {
                val case = v.asJsonObject
                val op = case["op"].asString
                if (op in noShape) continue
                val shapes = ops[op] ?: error("${f.name} ${case["name"]}: op $op has no entry (add its shapes or list it in noShape)")
                val expected = case["expected"]
                if (expected.isJsonObject && expected.asJsonObject.has("error")) continue
                for ((where, type) in shapes) {
                    var doc = pick(case, where) ?: continue
                    // A classify expectation lists only some fields (the runner
                    // compares those): round-trip the binding's full output for
                    // the same request instead, once it agrees with them.
                    if (op == "classify" && where == "expected") {
                        val req = case["input"].asJsonObject.deepCopy().also { it.remove("fixture") }
                        val full = JsonParser.parseString(classifyErrorJson(req.toString())).asJsonObject
                        for ((k, x) in doc.asJsonObject.entrySet()) assertEquals(x, full[k], "${case["name"]}: $k")
                        doc = full
                    }
                    val known = unrepresentable["${case["name"].asString} $where"]
                    if (known != null) {
                        val e = runCatching { roundTrip(doc, type) }.exceptionOrNull()
                        if (e !is com.google.gson.JsonSyntaxException) failures += "${case["name"]} $where: listed as unrepresentable ($known) but decoding gave ${e ?: "no error"}"
                        else println("  not representable, refused as expected: ${case["name"].asString} $where: $known (${e.message})")
                        continue
                    }
                    val err = try { roundTrip(doc, type) } catch (e: Exception) { "threw $e" }
                    if (err != null) failures += "${f.name} ${case["name"]} $where as ${type.typeName}: $err"
                    n++
                    byType.merge(type.typeName.substringAfterLast('.'), 1, Int::plus)
                }
            }
        }
        println("schema types: $n vector documents decoded and re-encoded unchanged ($byType)")
        failures.take(10).forEach { println("FAIL $it") }
        assertTrue(n > 400, "only $n documents")
        assertEquals(emptyList(), failures.take(5))
    }

    @Test
    fun theRoundTripCanFail() {
        // A key the type does not have is lost, a wrong type throws, an
        // unknown tag throws: the check above is not vacuous.
        val report = JsonParser.parseString("""{"tokens_before": 1, "no_such_field": 2}""")
        assertTrue(roundTrip(report, typeOf<dev.turnfit.types.CompactReport>())!!.contains("re-encoded"))
        assertFailsWith<com.google.gson.JsonSyntaxException> {
            roundTrip(JsonParser.parseString("""{"tokens_before": "many"}"""), typeOf<dev.turnfit.types.CompactReport>())
        }
        assertFailsWith<com.google.gson.JsonParseException> {
            roundTrip(JsonParser.parseString("""{"status": "maybe"}"""), typeOf<CompactOutcome>())
        }
        // An integer past Long is refused, from text and from a tree alike.
        val huge = """{"tokens_before": 18446744073709551615}"""
        assertFailsWith<com.google.gson.JsonSyntaxException> { TurnfitJson.decode<dev.turnfit.types.CompactReport>(huge) }
        assertFailsWith<com.google.gson.JsonSyntaxException> { roundTrip(JsonParser.parseString(huge), typeOf<dev.turnfit.types.CompactReport>()) }
    }
}

class TypedTest {
    private val repo = Vectors.repo
    private val session = File(repo, "examples/data/coding-session.json").readText()

    @Test
    fun windowReportsMatchTheirJsonText() {
        contextWindowTyped("gpt-4o", dev.turnfit.types.Budget(contextWindow = 2000, reservedOutput = 200)).use { w ->
            w.load(session)
            val p = w.preflightReport()
            assertEquals(canonical(JsonParser.parseString(w.preflightJson())), canonical(TurnfitJson.gson.toJsonTree(p)))
            assertEquals(w.preflight().promptTokens.toLong(), p.promptTokens)
            assertEquals(SchemaVerdict.OVERFLOW, p.verdict)
            assertEquals(emptyList(), w.validateTyped())
            val outcome = w.compactTyped(Policy(strategy = Strategy.RECENCY))
            val done = assertIs<CompactOutcome.Done>(outcome)
            assertTrue(done.report.tokensAfter < done.report.tokensBefore)
        }
    }

    @Test
    fun summarizeIsTheOtherVariant() {
        ContextWindow("gpt-4o", """{"context_window": 2000, "reserved_output": 200}""").use { w ->
            w.load(session)
            val pending = assertIs<CompactOutcome.NeedsSummary>(w.compactTyped(Policy(strategy = Strategy.SUMMARIZE)))
            val report = w.applySummaryTyped(pending.request.id, "The user and the agent fixed the tests.")
            assertTrue(report.tokensAfter < report.tokensBefore)
        }
    }

    @Test
    fun fitTypedTakesARegistry() {
        val opts = FitOptions(model = "acme-typed", maxTokens = 1500)
        assertFailsWith<TurnfitException.UnknownModel> { fitTyped(session, opts) }
        ModelRegistry().use { r ->
            r.register("""{"name": "acme-typed", "encoding": "o200k_base", "context_window": 8000, "exact": false}""")
            val typed = fitTyped(session, opts, r)
            val text = fit(session, """{"model": "acme-typed", "max_tokens": 1500}""", r)
            assertEquals(text.conversation, typed.conversation)
            assertTrue(typed.report.tokensAfter <= 1500)
        }
    }

    @Test
    fun fitTypedAgreesWithFit() {
        val opts = FitOptions(model = "gpt-4o", maxTokens = 1500)
        val typed = fitTyped(session, opts)
        val text = fit(session, """{"model": "gpt-4o", "max_tokens": 1500}""")
        assertEquals(text.conversation, typed.conversation)
        assertEquals(canonical(JsonParser.parseString(text.report)), canonical(TurnfitJson.gson.toJsonTree(typed.report)))
        assertTrue(typed.report.tokensAfter <= 1500)
    }
}
