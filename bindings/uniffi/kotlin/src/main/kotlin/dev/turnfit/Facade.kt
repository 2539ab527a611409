// Hand-written part of the Kotlin package `dev.turnfit`: the helpers that
// uniffi.toml's custom types call, and small idiomatic additions over the
// generated bindings (turnfit.kt). No behaviour: everything calls the core.
package dev.turnfit

import com.sun.jna.Native
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.atomic.AtomicLong
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/**
 * [s] with every lone surrogate replaced by U+FFFD, the way tiktoken (and
 * turnfit's Node and Python bindings) treat them, so the same text counts the
 * same everywhere. uniffi's own String lowering throws on lone surrogates.
 * Returns [s] itself when it has none (the common case: one scan, no copy).
 */
fun scrubSurrogates(s: String): String {
    var i = 0
    val n = s.length
    while (i < n) {
        val c = s[i]
        if (c.isSurrogate()) {
            if (c.isHighSurrogate() && i + 1 < n && s[i + 1].isLowSurrogate()) {
                i += 2
                continue
            }
            return replaceLoneSurrogates(s, i)
        }
        i++
    }
    return s
}

private fun replaceLoneSurrogates(s: String, from: Int): String {
    val b = StringBuilder(s.length)
    b.append(s, 0, from)
    var i = from
    val n = s.length
    while (i < n) {
        val c = s[i]
        if (c.isHighSurrogate() && i + 1 < n && s[i + 1].isLowSurrogate()) {
            b.append(c).append(s[i + 1])
            i += 2
            continue
        }
        b.append(if (c.isSurrogate()) '\uFFFD' else c)
        i++
    }
    return b.toString()
}

/** Token ids from the little-endian bytes they cross the FFI as. */
fun idsFromBytes(bytes: ByteArray): IntArray {
    val ib = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer()
    val out = IntArray(ib.remaining())
    ib.get(out)
    return out
}

/** Token ids to the little-endian bytes they cross the FFI as. */
fun idsToBytes(ids: IntArray): ByteArray {
    val bb = ByteBuffer.allocate(ids.size * 4).order(ByteOrder.LITTLE_ENDIAN)
    bb.asIntBuffer().put(ids)
    return bb.array()
}

/** The stable snake_case kind name of this error, as in tests/vectors (`unknown_model`). */
val TurnfitException.kind: String
    get() = when (this) {
        is TurnfitException.InvalidArgument -> "invalid_argument"
        is TurnfitException.InvalidUtf8 -> "invalid_utf8"
        is TurnfitException.UnknownEncoding -> "unknown_encoding"
        is TurnfitException.UnknownModel -> "unknown_model"
        is TurnfitException.UnknownToken -> "unknown_token"
        is TurnfitException.LimitExceeded -> "limit_exceeded"
        is TurnfitException.InvalidJson -> "invalid_json"
        is TurnfitException.InvalidYaml -> "invalid_yaml"
        is TurnfitException.DoesNotFit -> "does_not_fit"
        is TurnfitException.Io -> "io"
        is TurnfitException.UnsafePath -> "unsafe_path"
        is TurnfitException.CycleDetected -> "cycle_detected"
        is TurnfitException.DepthExceeded -> "depth_exceeded"
        is TurnfitException.Internal -> "internal"
    }

/**
 * The number of tokens of [text] (lone surrogates count as U+FFFD).
 *
 * One JNA direct call with primitive arguments (src/fast.rs): uniffi's own
 * path allocates several JNA Structures per call, which cost 50-100 µs on a
 * loaded machine (docs/benchmarks.md). On any failure the call is repeated
 * through uniffi ([Tokenizer.countTokensUniffi]) so the [TurnfitException]
 * carries the core's message.
 */
fun Tokenizer.countTokens(text: String): ULong {
    val bytes = scrubSurrogates(text).toByteArray(Charsets.UTF_8)
    val n = FastCount.count(this, bytes)
    return if (n >= 0) n.toULong() else countTokensUniffi(text)
}

/**
 * Counts UTF-8 [bytes] (invalid UTF-8 is [TurnfitException.InvalidUtf8] with
 * the offset), through the same direct call as [countTokens].
 */
fun Tokenizer.countTokensUtf8(bytes: ByteArray): ULong {
    val n = FastCount.count(this, bytes)
    if (n >= 0) return n.toULong()
    val direct = ByteBuffer.allocateDirect(bytes.size)
    direct.put(bytes).flip()
    return countTokensUtf8(direct)
}

/**
 * The direct-mapped fast path and what it needs of the generated class: its
 * raw handle and call counter (private there), read by reflection once per
 * field, so a concurrent close() cannot free the Rust object mid-call, the
 * same protocol as the generated callWithHandle, without its handle clone.
 */
private object FastCount {
    init {
        val lib = System.getProperty("uniffi.component.turnfit.libraryOverride") ?: "turnfit_uniffi"
        Native.register(FastCount::class.java, lib)
    }

    external fun turnfit_uniffi_fast_count_tokens(handle: Long, bytes: ByteArray, len: Long): Long

    private fun field(name: String) = Tokenizer::class.java.getDeclaredField(name).apply { isAccessible = true }
    private val handle = field("handle")
    private val callCounter = field("callCounter")
    private val cleanable = field("cleanable")

    /** The count, or a negative status (src/fast.rs) to retry through uniffi. */
    fun count(t: Tokenizer, bytes: ByteArray): Long {
        val counter = callCounter.get(t) as AtomicLong
        do {
            val c = counter.get()
            check(c != 0L) { "Tokenizer object has already been destroyed" }
            check(c != Long.MAX_VALUE) { "Tokenizer call counter would overflow" }
        } while (!counter.compareAndSet(c, c + 1L))
        try {
            return turnfit_uniffi_fast_count_tokens(handle.getLong(t), bytes, bytes.size.toLong())
        } finally {
            if (counter.decrementAndGet() == 0L) (cleanable.get(t) as UniffiCleaner.Cleanable?)?.clean()
        }
    }
}

/** Whether [text] has at most [limit] tokens (stops counting past the limit). */
fun Tokenizer.isWithinTokenLimit(text: String, limit: ULong): Boolean = !countUntilLimit(text, limit).exceeded

// Suspending variants of the calls that can take more than a millisecond on
// large input: they run on Dispatchers.Default, so a coroutine on the main or
// an IO dispatcher never blocks on tokenization.

/** [Tokenizer.countTokens] on [Dispatchers.Default]. */
suspend fun Tokenizer.countTokensAsync(text: String): ULong = withContext(Dispatchers.Default) { countTokens(text) }

/** [Tokenizer.encode] on [Dispatchers.Default]. */
suspend fun Tokenizer.encodeAsync(text: String): IntArray = withContext(Dispatchers.Default) { encode(text) }

/** [fit] on [Dispatchers.Default] (a host counter in [registry] runs there). */
suspend fun fitAsync(conversationJson: String, optionsJson: String, registry: ModelRegistry? = null): FitResult =
    withContext(Dispatchers.Default) { fit(conversationJson, optionsJson, registry) }

/** [ContextWindow.compact] on [Dispatchers.Default]. */
suspend fun ContextWindow.compactAsync(policyJson: String? = null): String =
    withContext(Dispatchers.Default) { compact(policyJson) }

/** [ContextWindow.load] on [Dispatchers.Default]. */
suspend fun ContextWindow.loadAsync(conversationJson: String) = withContext(Dispatchers.Default) { load(conversationJson) }

/**
 * An [EventListener] from a lambda receiving each event's kind (`compacted`,
 * ...) and its payload as JSON text: `window.setEventListener(eventListener
 * { kind, json -> log.info("$kind $json") })`. Called on the thread of the
 * call that raised the event, before that call returns. An exception [f]
 * throws is caught at the boundary and dropped (the call completes and the
 * call's other events are still delivered); a [java.lang.Error] is not caught
 * by uniffi and goes to JNA's callback exception handler.
 */
fun eventListener(f: (kind: String, payloadJson: String) -> Unit): EventListener = object : EventListener {
    override fun onEvent(kind: String, payloadJson: String) = f(kind, payloadJson)
}
