// Hand-written part of `dev.turnfit`: one agent turn with the host's model
// summarizing (core `turnfit::turn`). The native [Turn] is a state machine;
// these functions only drive it: run the host's summarizer on each request
// under the request's timeout, and hand its text or its failure back.
package dev.turnfit

import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout

/**
 * The host's model as a summarizer, for Java and blocking Kotlin: gets the
 * request as JSON (`schemas/summarizer-call.json`: send `prompt` to `model`,
 * reply with at most `max_summary_tokens` tokens) and returns the summary.
 * Throwing is allowed: the digest stands in.
 */
fun interface Summarizer {
    fun summarize(requestJson: String): String
}

/**
 * One agent turn: the request to send now (repaired, within the budget, in
 * the input's shape) and the turn report (`schemas/turn-report.json`), with
 * [summarizer] writing the summary when the policy summarizes. Each request
 * runs under [withTimeout] for its `timeout_ms` (options
 * `summarizer.timeout_ms`, default 120000). A summarizer that throws, times
 * out, replies with blank text or far too much never fails the turn: the
 * deterministic digest stands in and `report.summary.fallback.reason` says
 * why. Throws [TurnfitException] only for turnfit's own errors (`DoesNotFit`
 * when the system prompt, tools, task, newest user message and pins alone
 * exceed the budget; bad JSON; an unknown model). Cancelling the calling
 * coroutine cancels the summarizer and the turn.
 */
suspend fun fitTurn(
    conversationJson: String,
    optionsJson: String,
    summarizer: (suspend (requestJson: String) -> String)?,
): FitResult {
    val turn = withContext(Dispatchers.Default) { Turn(scrubSurrogates(conversationJson), scrubSurrogates(optionsJson)) }
    return drive(turn, summarizer)
}

/**
 * One turn on this window, the stateful [fitTurn]: below the trigger it
 * answers from the counts kept as messages were pushed (nothing recounted,
 * nothing changed, `fired: false`); over it, the window compacts with
 * [summarizer] writing the summary and takes the result, so
 * [ContextWindow.conversation] is then the request to send. Returns the
 * turn report (`schemas/turn-report.json`). [optionsJson] holds `policy`,
 * `summarizer` and `trigger_messages`; the window's model and budget are its
 * own (setting them throws `InvalidArgument`, as does a window changed while
 * the summarizer ran: nothing is applied then).
 */
suspend fun ContextWindow.fitTurn(
    optionsJson: String = "{}",
    summarizer: (suspend (requestJson: String) -> String)?,
): String {
    val window = this
    val turn = withContext(Dispatchers.Default) { Turn.onWindow(window, scrubSurrogates(optionsJson)) }
    return drive(turn, summarizer).report
}

/** Runs [summarizer] on each of [turn]'s requests, then finishes it. */
private suspend fun drive(turn: Turn, summarizer: (suspend (requestJson: String) -> String)?): FitResult {
    return turn.use { t ->
        while (summarizer != null) {
            val request = t.call() ?: break
            val ms = request.timeoutMs.toLong()
            val text = try {
                if (ms > 0) withTimeout(ms) { summarizer(request.requestJson) } else summarizer(request.requestJson)
            } catch (e: TimeoutCancellationException) {
                t.fail(SummaryFailure.TIMEOUT, "no reply within $ms ms; cancelled")
                continue
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                t.fail(SummaryFailure.ERROR, describe(e))
                continue
            }
            t.resume(scrubSurrogates(text))
        }
        withContext(Dispatchers.Default) { t.finish() }
    }
}

/**
 * [fitTurn] for Java and blocking code: each request runs on [executor] (by
 * default a daemon thread of a pool made for this turn) and is waited for
 * with `Future.get(timeout_ms)`; a summarizer still running then is
 * interrupted (`Future.cancel(true)`) and the digest stands in.
 */
@JvmOverloads
fun fitTurnBlocking(
    conversationJson: String,
    optionsJson: String,
    summarizer: Summarizer?,
    executor: ExecutorService? = null,
): FitResult {
    return withPool(executor, summarizer) { pool ->
        driveBlocking(Turn(scrubSurrogates(conversationJson), scrubSurrogates(optionsJson)), summarizer, pool)
    }
}

/** [ContextWindow.fitTurn] for Java and blocking code, as [fitTurnBlocking]; returns the turn report. */
@JvmOverloads
fun ContextWindow.fitTurnBlocking(
    optionsJson: String,
    summarizer: Summarizer?,
    executor: ExecutorService? = null,
): String {
    val window = this
    return withPool(executor, summarizer) { pool ->
        driveBlocking(Turn.onWindow(window, scrubSurrogates(optionsJson)), summarizer, pool).report
    }
}

/** [f] with [executor], or a daemon pool made for the call (and shut down after) when there is a summarizer. */
private inline fun <T> withPool(executor: ExecutorService?, summarizer: Summarizer?, f: (ExecutorService?) -> T): T {
    val own = if (executor == null && summarizer != null) {
        Executors.newCachedThreadPool { r -> Thread(r, "turnfit-summarizer").apply { isDaemon = true } }
    } else null
    try {
        return f(executor ?: own)
    } finally {
        own?.shutdownNow()
    }
}

/** Runs [summarizer] on [pool] for each of [turn]'s requests, then finishes it. */
private fun driveBlocking(turn: Turn, summarizer: Summarizer?, pool: ExecutorService?): FitResult {
    turn.use { t ->
        while (summarizer != null && pool != null) {
            val request = t.call() ?: break
            val ms = request.timeoutMs.toLong()
            val future = pool.submit<String> { summarizer.summarize(request.requestJson) }
            val text = try {
                if (ms > 0) future.get(ms, TimeUnit.MILLISECONDS) else future.get()
            } catch (e: TimeoutException) {
                future.cancel(true)
                t.fail(SummaryFailure.TIMEOUT, "no reply within $ms ms; interrupted")
                continue
            } catch (e: ExecutionException) {
                t.fail(SummaryFailure.ERROR, describe(e.cause ?: e))
                continue
            } catch (e: InterruptedException) {
                future.cancel(true)
                Thread.currentThread().interrupt()
                throw e
            }
            if (text == null) {
                t.fail(SummaryFailure.NOT_TEXT, "the summarizer returned null")
            } else {
                t.resume(scrubSurrogates(text))
            }
        }
        return t.finish()
    }
}

private fun describe(e: Throwable): String = "${e.javaClass.simpleName}: ${e.message ?: ""}"
