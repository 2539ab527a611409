// JVM benchmark of turnfit through its Kotlin binding, against jtokkit when its
// classes are on the classpath (built from its public source with plain javac;
// see docs/benchmarks.md for the exact commands). Warm-up loop, then
// best-of-N and median of timed runs. No JMH (not installable here).
//
//   java -cp ... BenchKt INPUT_DIR
import dev.turnfit.ContextWindow
import dev.turnfit.Encoding
import dev.turnfit.Tokenizer
import dev.turnfit.countTokens
import java.io.File

fun timeNs(runs: Int, f: () -> Unit): LongArray = LongArray(runs) {
    val t0 = System.nanoTime(); f(); System.nanoTime() - t0
}

fun stats(xs: LongArray): Pair<Double, Double> {
    val s = xs.sorted()
    return s.first() / 1e6 to s[s.size / 2] / 1e6
}

/** jtokkit through reflection, so this file compiles without it. */
class Jtokkit(encodingName: String) {
    private val enc: Any
    private val countOrdinary: java.lang.reflect.Method
    init {
        val registry = Class.forName("com.knuddels.jtokkit.Encodings").getMethod("newDefaultEncodingRegistry").invoke(null)
        val type = Class.forName("com.knuddels.jtokkit.api.EncodingType")
        val et = type.enumConstants.first { it.toString() == encodingName.uppercase() }
        // Through the public interfaces: the implementing classes are not public.
        enc = Class.forName("com.knuddels.jtokkit.api.EncodingRegistry").getMethod("getEncoding", type).invoke(registry, et)
        countOrdinary = Class.forName("com.knuddels.jtokkit.api.Encoding").getMethod("countTokensOrdinary", String::class.java)
    }
    fun count(s: String): Int = countOrdinary.invoke(enc, s) as Int
}

fun main(args: Array<String>) {
    val dir = File(args.getOrElse(0) { "bench/inputs" })
    val runs = 15
    val haveJ = try { Class.forName("com.knuddels.jtokkit.Encodings"); true } catch (e: ClassNotFoundException) { false }
    println("turnfit ${dev.turnfit.version()} (Kotlin/JNA)${if (haveJ) " vs jtokkit" else " (jtokkit not on the classpath)"}; best / median of $runs runs after warm-up")

    // Load time: first tokenizer of an encoding in this process, plus one count.
    var t0 = System.nanoTime()
    val t = Tokenizer(Encoding.O200K_BASE)
    t.countTokens("warm")
    println("load o200k_base: turnfit %.1f ms".format((System.nanoTime() - t0) / 1e6))
    var j: Jtokkit? = null
    if (haveJ) {
        t0 = System.nanoTime()
        j = Jtokkit("o200k_base")
        j.count("warm")
        println("load o200k_base: jtokkit %.1f ms".format((System.nanoTime() - t0) / 1e6))
    }

    val inputs = listOf("prose.txt", "code.txt", "multilingual.txt").map { it to File(dir, it).readText() } +
        listOf("1M x \"a\"" to "a".repeat(1_000_000))
    println("| input | turnfit best / median ms | MB/s | jtokkit best / median ms | ratio (median) |")
    println("|---|---|---|---|---|")
    for ((name, text) in inputs) {
        val expected = t.countTokens(text)
        repeat(5) { t.countTokens(text) }
        val (cb, cm) = stats(timeNs(runs) { t.countTokens(text) })
        val mb = text.toByteArray().size / 1e6
        var jcol = "-"
        var ratio = "-"
        if (j != null) {
            val jn = j.count(text)
            if (jn.toULong() != expected) println("  note: jtokkit counts $jn, turnfit $expected on $name")
            repeat(5) { j.count(text) }
            val (jb, jm) = stats(timeNs(if (name.startsWith("1M")) 3 else runs) { j.count(text) })
            jcol = "%.2f / %.2f".format(jb, jm)
            ratio = "%.1fx".format(jm / cm)
        }
        println("| $name | %.2f / %.2f | %.0f | $jcol | $ratio |".format(cb, cm, mb / (cm / 1e3)))
    }

    // 1 KiB per call: per-call overhead of the JNA crossing.
    val prose = inputs[0].second
    val kib = prose.substring(0, 1024)
    val calls = 20_000
    repeat(calls) { t.countTokens(kib) }
    val (pb, pm) = stats(timeNs(7) { repeat(calls) { t.countTokens(kib) } })
    println("1 KiB per call: turnfit best %.2f µs, median %.2f µs per call".format(pb * 1e3 / calls, pm * 1e3 / calls))
    repeat(calls) { t.countTokens("") }
    val (eb, em) = stats(timeNs(7) { repeat(calls) { t.countTokens("") } })
    println("empty string per call (FFI overhead alone): best %.2f µs, median %.2f µs".format(eb * 1e3 / calls, em * 1e3 / calls))
    // uniffi's generated method (JNA Structures per call), for comparison.
    repeat(calls / 10) { t.countTokensUniffi(kib) }
    val (ub, um) = stats(timeNs(7) { repeat(calls / 10) { t.countTokensUniffi(kib) } })
    println("1 KiB per call through uniffi's generated method: best %.2f µs, median %.2f µs".format(ub * 1e4 / calls, um * 1e4 / calls))
    if (j != null) {
        repeat(calls) { j.count(kib) }
        val (jb, jm) = stats(timeNs(7) { repeat(calls) { j.count(kib) } })
        println("1 KiB per call: jtokkit best %.2f µs, median %.2f µs per call".format(jb * 1e3 / calls, jm * 1e3 / calls))
    }

    // Ids: IntArray (custom type) on 1 MiB of prose.
    repeat(3) { t.encode(prose) }
    val (ib, im) = stats(timeNs(runs) { t.encode(prose) })
    println("encode 1 MiB prose to IntArray: best %.2f ms, median %.2f ms".format(ib, im))

    // ContextWindow.push (cached counts) vs a memory that recounts every message on every add.
    val msg = { i: Int -> """{"role": "user", "content": "message $i: ${"some words of a chat message ".repeat(4)}"}""" }
    println("| messages in window | push, µs per message (turnfit ContextWindow) | recount-all memory, µs per add |")
    println("|---|---|---|")
    for (n in listOf(100, 1_000, 10_000)) {
        val w = ContextWindow("gpt-4o", """{"context_window": 100000000}""")
        for (i in 0 until n) w.push(msg(i))
        val extra = 200
        val t1 = System.nanoTime()
        for (i in 0 until extra) w.push(msg(n + i))
        val pushUs = (System.nanoTime() - t1) / 1e3 / extra
        w.close()
        // Recount-every-message memory (LangChain4j's token window style), with turnfit's counter.
        val history = ArrayList<String>()
        for (i in 0 until n) history += msg(i)
        val adds = if (n >= 10_000) 3 else 20
        val t2 = System.nanoTime()
        for (i in 0 until adds) {
            history += msg(n + i)
            var total = 0UL
            for (m in history) total += t.countTokens(m)
        }
        val recountUs = (System.nanoTime() - t2) / 1e3 / adds
        println("| $n | %.1f | %.0f |".format(pushUs, recountUs))
    }
    t.close()
}
