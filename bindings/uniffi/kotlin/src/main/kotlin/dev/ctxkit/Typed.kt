// Typed entry points: the calls that take or return JSON text, with the
// options and reports as the data classes generated from schemas/ into
// `dev.ctxkit.types` (SchemaTypes.kt), read and written by Gson
// (`CtxkitJson.gson`). The JSON-text calls stay; these only convert.
//
// A separate file from Facade.kt on purpose: only this file (class TypedKt)
// and dev.ctxkit.types refer to Gson, so a host that never calls a typed
// entry point needs no Gson jar at run time.
package dev.ctxkit

import dev.ctxkit.types.AssembleRequest
import dev.ctxkit.types.AssembleResult
import dev.ctxkit.types.Changes
import dev.ctxkit.types.Classification
import dev.ctxkit.types.CompactOutcome
import dev.ctxkit.types.CompactReport
import dev.ctxkit.types.CtxkitJson
import dev.ctxkit.types.Event
import dev.ctxkit.types.FilterOptions
import dev.ctxkit.types.FilterResult
import dev.ctxkit.types.FitOptions
import dev.ctxkit.types.FitReport
import dev.ctxkit.types.Handoff
import dev.ctxkit.types.Issues
import dev.ctxkit.types.Listing
import dev.ctxkit.types.Policy
import dev.ctxkit.types.RenderOptions
import dev.ctxkit.types.RenderResult
import dev.ctxkit.types.TraceExport
import dev.ctxkit.types.Overdue
import dev.ctxkit.types.Budget
import dev.ctxkit.types.Preflight as PreflightReport

private fun json(value: Any?): String? = value?.let { CtxkitJson.encode(it) }

/** [fit]'s result with the report typed; the conversation stays JSON text in the input's shape. */
data class FitTyped(val conversation: String, val report: FitReport)

/** [fit] with typed options and report. */
fun fitTyped(conversationJson: String, options: FitOptions): FitTyped {
    val r = fit(conversationJson, CtxkitJson.encode(options))
    return FitTyped(r.conversation, CtxkitJson.decode(r.report))
}

/** A window for [model] with a typed [budget] (null: the model's window and the defaults). */
fun contextWindowTyped(model: String, budget: Budget? = null, registry: ModelRegistry? = null): ContextWindow =
    ContextWindow(model, json(budget), registry)

/** [ContextWindow.preflightJson] as the schema type (every field of docs/formats.md, "Preflight"). */
fun ContextWindow.preflightReport(newInputJson: String? = null): PreflightReport = CtxkitJson.decode(preflightJson(newInputJson))

/** [ContextWindow.validate] typed: the structural issues (empty when none). */
fun ContextWindow.validateTyped(): Issues = CtxkitJson.decode(validate())

/** [ContextWindow.repair] typed: the changes made. */
fun ContextWindow.repairTyped(syntheticResult: String? = null): Changes = CtxkitJson.decode(repair(syntheticResult))

/** [ContextWindow.compact] with a typed [policy] (null: recency to the window's target) and outcome. */
fun ContextWindow.compactTyped(policy: Policy? = null): CompactOutcome = CtxkitJson.decode(compact(json(policy)))

/** [ContextWindow.applySummary] typed. */
fun ContextWindow.applySummaryTyped(id: String, summary: String): CompactReport = CtxkitJson.decode(applySummary(id, summary))

/** [SkillSet.listJson] typed. */
fun SkillSet.listTyped(): Listing = CtxkitJson.decode(listJson())

/** [handoffValidate] typed: the handoff with defaults filled in. */
fun handoffValidateTyped(handoffJson: String): Handoff = CtxkitJson.decode(handoffValidate(handoffJson))

/** [handoffRender] typed. */
fun handoffRenderTyped(handoff: Handoff, options: RenderOptions? = null): RenderResult =
    CtxkitJson.decode(handoffRender(CtxkitJson.encode(handoff), json(options)))

/** [handoffFilter] typed (the conversation stays JSON text). */
fun handoffFilterTyped(conversationJson: String, options: FilterOptions? = null): FilterResult =
    CtxkitJson.decode(handoffFilter(conversationJson, json(options)))

/** [classifyErrorJson] typed (the request stays JSON text: its body is provider-shaped). */
fun classifyErrorTyped(requestJson: String): Classification = CtxkitJson.decode(classifyErrorJson(requestJson))

/** [assemble] with a typed request and result. */
fun assembleTyped(tokenizer: Tokenizer, request: AssembleRequest): AssembleResult =
    CtxkitJson.decode(assemble(tokenizer, CtxkitJson.encode(request)))

/** [Tracer.exportJson] typed. */
fun Tracer.exportTyped(nowUs: ULong): TraceExport = CtxkitJson.decode(exportJson(nowUs))

/** [Tracer.overdue] typed. */
fun Tracer.overdueTyped(nowUs: ULong): Overdue = CtxkitJson.decode(overdue(nowUs))

/** An event payload (what an [EventListener] receives) as the schema type. */
fun decodeEvent(payloadJson: String): Event = CtxkitJson.decode(payloadJson)

/**
 * An [EventListener] handing each event to [f] as the schema type. What [f]
 * throws is dropped, as for any listener (bindings/uniffi/README.md, "Events").
 */
fun typedEventListener(f: (Event) -> Unit): EventListener = object : EventListener {
    override fun onEvent(kind: String, payloadJson: String) = f(decodeEvent(payloadJson))
}
