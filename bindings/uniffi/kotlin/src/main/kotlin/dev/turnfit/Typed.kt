// Typed entry points: the calls that take or return JSON text, with the
// options and reports as the data classes generated from schemas/ into
// `dev.turnfit.types` (SchemaTypes.kt), read and written by Gson
// (`TurnfitJson.gson`). The JSON-text calls stay; these only convert.
//
// A separate file from Facade.kt on purpose: only this file (class TypedKt)
// and dev.turnfit.types refer to Gson, so a host that never calls a typed
// entry point needs no Gson jar at run time.
package dev.turnfit

import dev.turnfit.types.AssembleRequest
import dev.turnfit.types.AssembleResult
import dev.turnfit.types.Changes
import dev.turnfit.types.Classification
import dev.turnfit.types.CompactOutcome
import dev.turnfit.types.CompactReport
import dev.turnfit.types.TurnfitJson
import dev.turnfit.types.Event
import dev.turnfit.types.FilterOptions
import dev.turnfit.types.FilterResult
import dev.turnfit.types.FitOptions
import dev.turnfit.types.FitReport
import dev.turnfit.types.Handoff
import dev.turnfit.types.Issues
import dev.turnfit.types.Listing
import dev.turnfit.types.Policy
import dev.turnfit.types.RenderOptions
import dev.turnfit.types.RenderResult
import dev.turnfit.types.TraceExport
import dev.turnfit.types.Overdue
import dev.turnfit.types.Budget
import dev.turnfit.types.Preflight as PreflightReport

private fun json(value: Any?): String? = value?.let { TurnfitJson.encode(it) }

/** [fit]'s result with the report typed; the conversation stays JSON text in the input's shape. */
data class FitTyped(val conversation: String, val report: FitReport)

/** [fit] with typed options and report; [registry] as [fit]'s (null: the built-in table). */
fun fitTyped(conversationJson: String, options: FitOptions, registry: ModelRegistry? = null): FitTyped {
    val r = fit(conversationJson, TurnfitJson.encode(options), registry)
    return FitTyped(r.conversation, TurnfitJson.decode(r.report))
}

/** A window for [model] with a typed [budget] (null: the model's window and the defaults). */
fun contextWindowTyped(model: String, budget: Budget? = null, registry: ModelRegistry? = null): ContextWindow =
    ContextWindow(model, json(budget), registry)

/** [ContextWindow.preflightJson] as the schema type (every field of docs/formats.md, "Preflight"). */
fun ContextWindow.preflightReport(newInputJson: String? = null): PreflightReport = TurnfitJson.decode(preflightJson(newInputJson))

/** [ContextWindow.validate] typed: the structural issues (empty when none). */
fun ContextWindow.validateTyped(): Issues = TurnfitJson.decode(validate())

/** [ContextWindow.repair] typed: the changes made. */
fun ContextWindow.repairTyped(syntheticResult: String? = null): Changes = TurnfitJson.decode(repair(syntheticResult))

/** [ContextWindow.compact] with a typed [policy] (null: recency to the window's target) and outcome. */
fun ContextWindow.compactTyped(policy: Policy? = null): CompactOutcome = TurnfitJson.decode(compact(json(policy)))

/** [ContextWindow.applySummary] typed. */
fun ContextWindow.applySummaryTyped(id: String, summary: String): CompactReport = TurnfitJson.decode(applySummary(id, summary))

/** [SkillSet.listJson] typed. */
fun SkillSet.listTyped(): Listing = TurnfitJson.decode(listJson())

/** [handoffValidate] typed: the handoff with defaults filled in. */
fun handoffValidateTyped(handoffJson: String): Handoff = TurnfitJson.decode(handoffValidate(handoffJson))

/** [handoffRender] typed. */
fun handoffRenderTyped(handoff: Handoff, options: RenderOptions? = null, registry: ModelRegistry? = null): RenderResult =
    TurnfitJson.decode(handoffRender(TurnfitJson.encode(handoff), json(options), registry))

/** [handoffFilter] typed (the conversation stays JSON text). */
fun handoffFilterTyped(conversationJson: String, options: FilterOptions? = null): FilterResult =
    TurnfitJson.decode(handoffFilter(conversationJson, json(options)))

/** [classifyErrorJson] typed (the request stays JSON text: its body is provider-shaped). */
fun classifyErrorTyped(requestJson: String): Classification = TurnfitJson.decode(classifyErrorJson(requestJson))

/** [assemble] with a typed request and result. */
fun assembleTyped(tokenizer: Tokenizer, request: AssembleRequest): AssembleResult =
    TurnfitJson.decode(assemble(tokenizer, TurnfitJson.encode(request)))

/** [Tracer.exportJson] typed. */
fun Tracer.exportTyped(nowUs: ULong): TraceExport = TurnfitJson.decode(exportJson(nowUs))

/** [Tracer.overdue] typed. */
fun Tracer.overdueTyped(nowUs: ULong): Overdue = TurnfitJson.decode(overdue(nowUs))

/** An event payload (what an [EventListener] receives) as the schema type. */
fun decodeEvent(payloadJson: String): Event = TurnfitJson.decode(payloadJson)

/**
 * An [EventListener] handing each event to [f] as the schema type. What [f]
 * throws is dropped, as for any listener (bindings/uniffi/README.md, "Events").
 */
fun typedEventListener(f: (Event) -> Unit): EventListener = object : EventListener {
    override fun onEvent(kind: String, payloadJson: String) = f(decodeEvent(payloadJson))
}
