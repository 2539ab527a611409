// Hand-written part of the `Turnfit` package: one agent turn with the host's
// model summarizing, as an `async` function (the Kotlin facade's `fitTurn`).
// The native `Turn` is a state machine; this only drives it: each summarizer
// request runs under its `timeout_ms`, and its text or its failure goes back.
// Checked here by syntax only (no Swift compiler on the build machines); the
// package's tests run it where `swift test` can.
import Foundation

/// The host's model as a summarizer: gets the request as JSON
/// (`schemas/summarizer-call.json`: send `prompt` to `model`, reply with at
/// most `max_summary_tokens` tokens) and returns the summary. Throwing is
/// allowed: the deterministic digest stands in.
public typealias TurnfitSummarizer = @Sendable (String) async throws -> String

/// One agent turn: the request to send now (repaired, within the budget, in
/// the input's shape) and the turn report (`schemas/turn-report.json`), with
/// `summarizer` writing the summary when the policy summarizes. A summarizer
/// that throws, outlives its `timeout_ms` (it is cancelled), replies with
/// blank text or far too much never fails the turn: the digest stands in and
/// `report.summary.fallback.reason` says why. Throws `TurnfitError` only for
/// turnfit's own errors (`DoesNotFit`, bad JSON, an unknown model), and
/// `CancellationError` when the calling task is cancelled.
public func fitTurn(
    conversationJson: String,
    optionsJson: String,
    summarizer: TurnfitSummarizer?
) async throws -> FitResult {
    let turn = try Turn(conversationJson: conversationJson, optionsJson: optionsJson, registry: nil)
    return try await turnfitDrive(turn, summarizer)
}

public extension ContextWindow {
    /// One turn on this window, the stateful `fitTurn`: below the trigger it
    /// answers from the counts kept as messages were pushed (nothing changes,
    /// `fired: false`); over it, the window compacts with `summarizer` writing
    /// the summary and takes the result, so `conversation()` is then the
    /// request to send. Returns the turn report. `optionsJson` holds
    /// `policy`, `summarizer` and `trigger_messages`; the window's model and
    /// budget are its own (setting them throws, as does a window changed while
    /// the summarizer ran: nothing is applied then).
    func fitTurn(optionsJson: String = "{}", summarizer: TurnfitSummarizer?) async throws -> String {
        let turn = try Turn.onWindow(window: self, optionsJson: optionsJson, registry: nil)
        return try await turnfitDrive(turn, summarizer).report
    }
}

/// The summarizer did not reply within its request's `timeout_ms`.
private struct TurnfitSummaryTimedOut: Error {}

/// What one summarizer call came to.
private enum TurnfitReply {
    case text(String)
    case failed(SummaryFailure, String)
}

/// Runs `summarizer` on each of `turn`'s requests, then finishes it.
private func turnfitDrive(_ turn: Turn, _ summarizer: TurnfitSummarizer?) async throws -> FitResult {
    if let summarizer = summarizer {
        while let request = try turn.call() {
            let json = request.requestJson
            let ms = request.timeoutMs
            let reply: TurnfitReply
            do {
                reply = .text(try await turnfitWithin(ms) { try await summarizer(json) })
            } catch is TurnfitSummaryTimedOut {
                reply = .failed(.timeout, "no reply within \(ms) ms; cancelled")
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                reply = .failed(.error, "\(type(of: error)): \(error)")
            }
            switch reply {
            case .text(let text):
                try turn.resume(summary: text)
            case .failed(let reason, let message):
                try turn.fail(reason: reason, message: message)
            }
        }
    }
    return try turn.finish()
}

/// `body`'s result, or `TurnfitSummaryTimedOut` after `ms` milliseconds
/// (0: no limit); the loser is cancelled.
private func turnfitWithin(
    _ ms: UInt64,
    _ body: @escaping @Sendable () async throws -> String
) async throws -> String {
    if ms == 0 {
        return try await body()
    }
    let (product, overflow) = ms.multipliedReportingOverflow(by: 1_000_000)
    let nanoseconds = overflow ? UInt64.max : product
    return try await withThrowingTaskGroup(of: String.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: nanoseconds)
            throw TurnfitSummaryTimedOut()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else {
            throw TurnfitSummaryTimedOut()
        }
        return first
    }
}
