// Runs every conformance vector in tests/vectors/*.json through the Kotlin
// API (see tests/vectors/README.md). Used by VectorsTest (JUnit) and runnable
// on its own (`main`), it prints `vectors: N/N`. An op it does not know fails;
// nothing is skipped. Pending cases would be listed in PENDING with the
// reason; there are none.
package dev.turnfit

import com.google.gson.Gson
import com.google.gson.JsonArray
import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.JsonPrimitive
import java.io.File

object Vectors {
    /** name -> reason. Empty: every vector runs and must pass. */
    val PENDING: Map<String, String> = emptyMap()

    val repo: File = File(System.getProperty("turnfit.repo") ?: "../../..").canonicalFile
    private val gson = Gson()

    data class Outcome(val total: Int, val passed: Int, val failures: List<String>, val perFile: Map<String, Pair<Int, Int>>)

    fun files(): List<File> =
        File(repo, "tests/vectors").listFiles()!!
            .filter { it.name.endsWith(".json") && !it.name.endsWith(".cases.json") }
            .sortedBy { it.name }

    fun runAll(): Outcome {
        var total = 0
        var passed = 0
        val failures = mutableListOf<String>()
        val perFile = linkedMapOf<String, Pair<Int, Int>>()
        for (f in files()) {
            val doc = JsonParser.parseString(f.readText()).asJsonObject
            require(doc["format"].asInt == 1) { "${f.name}: format ${doc["format"]}" }
            var fp = 0
            var ft = 0
            for (v in doc["vectors"].asJsonArray) {
                val o = v.asJsonObject
                val name = o["name"].asString
                total++; ft++
                val pending = PENDING[name]
                val err = try {
                    check(o["op"].asString, o["input"].asJsonObject, o["expected"])
                } catch (e: Throwable) {
                    "threw $e"
                }
                if (err == null) {
                    passed++; fp++
                } else if (pending != null) {
                    failures += "PENDING $name: $pending"
                } else {
                    failures += "$name: $err"
                }
            }
            perFile[f.name] = fp to ft
        }
        return Outcome(total, passed, failures, perFile)
    }

    private fun err(e: TurnfitException): JsonElement = obj("error" to JsonPrimitive(e.kind))

    private fun obj(vararg kv: Pair<String, JsonElement>): JsonObject {
        val o = JsonObject()
        for ((k, v) in kv) o.add(k, v)
        return o
    }

    private fun parse(s: String): JsonElement = JsonParser.parseString(s)
    private fun str(e: JsonElement?): String? = if (e == null || e.isJsonNull) null else e.toString()
    private fun num(x: ULong): JsonPrimitive = JsonPrimitive(x.toLong())

    private inline fun catching(f: () -> JsonElement): JsonElement =
        try { f() } catch (e: TurnfitException) { err(e) }

    private val tokenizers = HashMap<Pair<String, String>, Tokenizer>()

    private fun tok(input: JsonObject): Tokenizer {
        val enc = input["encoding"].asString
        val special = input["special"]?.asString ?: "ordinary"
        return tokenizers.getOrPut(enc to special) {
            Tokenizer.fromName(enc, if (special == "recognize") SpecialTokens.RECOGNIZE else SpecialTokens.ORDINARY)
        }
    }

    private val fileTokenizers = HashMap<Pair<String, String>, FileTokenizer>()

    /** tests/vectors/file_tokenizer.json: tokenizers loaded from tests/vectors/files/. */
    private fun fileTok(input: JsonObject): FileTokenizer {
        val file = input["file"].asString
        val special = input["special"]?.asString ?: "ordinary"
        return fileTokenizers.getOrPut(file to special) {
            FileTokenizer.fromFile(
                File(repo, "tests/vectors/$file").path, null,
                if (special == "recognize") SpecialTokens.RECOGNIZE else SpecialTokens.ORDINARY,
            )
        }
    }

    /** null when the vector passes, else what differed. */
    fun check(op: String, input: JsonObject, expected: JsonElement): String? {
        if (op == "classify") {
            val req = input.deepCopy()
            req.remove("fixture")
            val got = catching { parse(classifyErrorJson(req.toString())) }
            val bad = expected.asJsonObject.entrySet().filter { (k, v) ->
                !(got.isJsonObject && got.asJsonObject[k] == v)
            }
            return if (bad.isEmpty()) null else "fields ${bad.map { it.key }} differ: expected $expected, got $got"
        }
        val got = run(op, input, expected)
        return if (got == expected) null else "expected $expected\n     got $got"
    }

    private fun run(op: String, input: JsonObject, expected: JsonElement): JsonElement = when (op) {
        "file_encode" -> {
            val t = fileTok(input)
            val text = input["text"].asString
            val arr = JsonArray()
            t.encode(text, input["add_special"]?.asBoolean ?: false).forEach { arr.add(it.toLong() and 0xffffffffL) }
            obj("ids" to arr, "count" to num(t.countTokens(text)))
        }
        "file_decode" -> catching {
            val ids = input["ids"].asJsonArray.map { it.asLong.toInt() }.toIntArray()
            obj("text" to JsonPrimitive(fileTok(input).decode(ids)))
        }
        "encode" -> {
            val t = tok(input)
            val text = input["text"].asString
            val ids = t.encode(text)
            val arr = JsonArray()
            ids.forEach { arr.add(it.toLong() and 0xffffffffL) }
            // The zero-copy path must agree with the String path.
            val utf8 = t.countTokensUtf8(text.toByteArray(Charsets.UTF_8))
            if (utf8 != t.countTokens(text)) obj("countTokensUtf8 differs" to num(utf8))
            else obj("ids" to arr, "count" to num(t.countTokens(text)))
        }
        "decode" -> catching {
            val ids = input["ids"].asJsonArray.map { it.asLong.toInt() }.toIntArray()
            val mode = when (input["mode"]?.asString) { "strict" -> DecodeMode.STRICT; "ignore" -> DecodeMode.IGNORE; else -> DecodeMode.REPLACE }
            obj("text" to JsonPrimitive(tok(input).decode(ids, mode)))
        }
        "count_until_limit" -> {
            val r = tok(input).countUntilLimit(input["text"].asString, input["limit"].asLong.toULong())
            if (r.exceeded) {
                val min = expected.asJsonObject["tokens_min"]?.asLong ?: 0
                if (r.tokens.toLong() < min) obj("exceeded" to JsonPrimitive(true), "tokens" to num(r.tokens))
                else obj("exceeded" to JsonPrimitive(true), "tokens_min" to expected.asJsonObject["tokens_min"])
            } else obj("tokens" to num(r.tokens), "exceeded" to JsonPrimitive(false))
        }
        "truncate" -> catching {
            val side = when (input["side"].asString) {
                "head" -> TruncateSide.HEAD
                "tail" -> TruncateSide.TAIL
                "both" -> TruncateSide.BOTH
                else -> error("bad side")
            }
            val marker = input["marker"]?.let { if (it.isJsonNull) null else it.asString }
            val r = tok(input).truncate(input["text"].asString, input["max_tokens"].asLong.toULong(), side, marker)
            obj(
                "text" to JsonPrimitive(r.text), "tokens" to num(r.tokens),
                "original_tokens" to num(r.originalTokens), "removed_tokens" to num(r.removedTokens),
                "truncated" to JsonPrimitive(r.truncated),
            )
        }
        "count_conversation" -> catching {
            obj("prompt_tokens" to num(countConversation(input["conversation"].toString(), model(input))))
        }
        "preflight" -> catching {
            ContextWindow(model(input), str(input["budget"])).use { w ->
                w.load(input["conversation"].toString())
                parse(w.preflightJson())
            }
        }
        "repair" -> catching { parse(repairConversation(input["conversation"].toString(), model(input))) }
        "fit" -> catching {
            val r = fit(input["conversation"].toString(), input["options"].toString())
            obj("conversation" to parse(r.conversation), "report" to parse(r.report))
        }
        "skills_list", "skills_body", "skills_index" -> catching {
            SkillSet.open(File(repo, input["root"].asString).path, str(input["options"])).use { s ->
                when (op) {
                    "skills_list" -> parse(s.listJson())
                    "skills_body" -> s.body(input["name"].asString).let {
                        obj("name" to JsonPrimitive(it.name), "text" to JsonPrimitive(it.text), "tokens" to num(it.tokens))
                    }
                    else -> parse(s.renderIndex(str(input["index_options"])))
                }
            }
        }
        "handoff_validate" -> catching { parse(handoffValidate(input["handoff"].toString())) }
        "handoff_render" -> catching { parse(handoffRender(input["handoff"].toString(), str(input["options"]))) }
        "handoff_filter" -> catching { parse(handoffFilter(input["conversation"].toString(), str(input["options"]))) }
        "assemble" -> catching { parse(assemble(tok(input), input["request"].toString())) }
        "backoff" -> catching {
            val d = backoff(input.toString())
            if (d.retry) obj("decision" to JsonPrimitive("retry"), "delay_ms" to num(d.delayMs!!))
            else obj("decision" to JsonPrimitive("give_up"), "reason" to JsonPrimitive(d.reason!!))
        }
        "breaker" -> CircuitBreaker(input["config"].toString()).use { b ->
            val results = JsonArray()
            for (e in input["ops"].asJsonArray) {
                val at = e.asJsonArray[1].asLong.toULong()
                when (val what = e.asJsonArray[0].asString) {
                    "allow" -> results.add(b.allow("k", at))
                    "success" -> results.add(stateName(b.recordSuccess("k", at)))
                    "failure" -> results.add(stateName(b.recordFailure("k", at)))
                    "state" -> results.add(stateName(b.state("k", at).state))
                    else -> error("unknown breaker op $what")
                }
            }
            obj("results" to results)
        }
        "callstack" -> catching {
            var s = CallStack(input["max_depth"].asLong.toULong())
            for (a in input["enter"].asJsonArray) {
                val next = try { s.enter(a.asString) } finally { s.close() }
                s = next
            }
            s.use { parse(it.toJson()) }
        }
        "trace" -> trace(input)
        "toolset" -> catching {
            val req = input["request"].toString()
            val agent = input["select"]?.let { if (it.isJsonNull) null else it.asString }
            if (agent != null) obj("selected" to parse(toolsetSelect(req, agent)))
            else {
                val r = parse(toolsetReport(req)).asJsonObject
                val agents = JsonObject()
                for (a in r["agents"].asJsonArray) agents.add(a.asJsonObject["agent"].asString, a.asJsonObject["tools"])
                obj("tool_count" to r["tool_count"], "agents" to agents)
            }
        }
        "model_lookup" -> catching {
            ModelRegistry().use { r ->
                val m = r.lookup(input["model"].asString, null)
                obj(
                    "family" to (m.family?.let { JsonPrimitive(it) } ?: JsonNull.INSTANCE),
                    "encoding" to JsonPrimitive(m.encoding.name.lowercase()),
                    "context_window" to (m.contextWindow?.let { num(it) } ?: JsonNull.INSTANCE),
                    "max_output_tokens" to (m.maxOutputTokens?.let { num(it) } ?: JsonNull.INSTANCE),
                    "exact" to JsonPrimitive(m.exact),
                    "source" to JsonPrimitive(m.source.name.lowercase()),
                )
            }
        }
        else -> error("unknown op $op")
    }

    private fun model(input: JsonObject) = input["model"]?.let { if (it.isJsonNull) null else it.asString } ?: "gpt-4o"

    private fun stateName(s: BreakerState) = when (s) {
        BreakerState.CLOSED -> "closed"
        BreakerState.OPEN -> "open"
        BreakerState.HALF_OPEN -> "half_open"
    }

    private fun trace(input: JsonObject): JsonElement = Tracer(input["config"].toString()).use { t ->
        val ids = mutableListOf<ULong?>()
        val interrupted = JsonArray()
        val eventErrors = JsonArray()
        input["events"].asJsonArray.forEachIndexed { i, ev ->
            val e = ev.asJsonArray
            try {
                when (val what = e[0].asString) {
                    "start" -> {
                        ids += null
                        ids[ids.size - 1] = t.start(e[1].asString, e[4].asLong.toULong(), str(e[2]), e[3].asLong.toULong())
                    }
                    "end" -> {
                        val n = e[1].asInt
                        val id = ids.getOrNull(n - 1) ?: ULong.MAX_VALUE
                        val outcome = when (e[2].asString) {
                            "success" -> SpanOutcome.SUCCESS
                            "failed" -> SpanOutcome.FAILED
                            "timeout" -> SpanOutcome.TIMEOUT
                            "cancelled" -> SpanOutcome.CANCELLED
                            else -> error("bad outcome")
                        }
                        val error = if (e[4].isJsonNull) null else e[4].asString
                        t.end(id, outcome, e[5].asLong.toULong(), e[3].asLong.toULong(), error)
                    }
                    "expire" -> {
                        val r = parse(t.expire(e[1].asLong.toULong())).asJsonObject
                        for (x in r["interrupted_results"].asJsonArray) interrupted.add(x.asJsonObject["tool_call_id"])
                    }
                    else -> error("unknown trace event $what")
                }
            } catch (x: TurnfitException) {
                eventErrors.add(JsonArray().apply { add(i); add(x.kind) })
            }
        }
        val export = parse(t.exportJson(0UL)).asJsonObject
        val tools = JsonObject()
        for (m in export["tools"].asJsonArray) {
            val mo = m.asJsonObject
            val v = JsonObject()
            for (k in listOf("count", "successes", "errors", "timeouts", "cancelled", "in_flight")) v.add(k, mo[k])
            val d = mo["duration_us"]
            if (d != null && !d.isJsonNull) for (k in listOf("min", "max", "p50", "p95", "p99")) v.add(k, d.asJsonObject[k])
            tools.add(mo["tool"].asString, v)
        }
        val recent = JsonArray()
        for (r in export["recent"].asJsonArray) {
            val ro = r.asJsonObject
            recent.add(JsonArray().apply { add(ro["tool"]); add(ro["outcome"]); add(ro["count"]) })
        }
        obj("tools" to tools, "recent" to recent, "interrupted" to interrupted, "event_errors" to eventErrors)
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val o = runAll()
        for ((f, p) in o.perFile) println("  ${f}: ${p.first}/${p.second}")
        o.failures.take(20).forEach { println("FAIL $it") }
        println("vectors: ${o.passed}/${o.total}")
        if (o.passed != o.total) kotlin.system.exitProcess(1)
    }
}
