// Runs where a Swift toolchain exists (`TURNFIT_LOCAL_BUILD=1 swift test`);
// here it is only syntax-checked (bindings/uniffi/swift/syntax_check.py).
// The schema types (SchemaTypes.swift) against real reports, and events
// through the EventListener protocol.
import Foundation
import XCTest
@testable import Turnfit

/// Records every event with the thread it arrived on.
final class Recorder: EventListener, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var seen: [(kind: String, json: String, main: Bool)] = []

    func onEvent(kind: String, payloadJson: String) throws {
        lock.lock()
        defer { lock.unlock() }
        seen.append((kind, payloadJson, Thread.isMainThread))
    }
}

/// A listener that always throws: the binding drops what it throws.
final class Thrower: EventListener, @unchecked Sendable {
    struct Boom: Error {}
    func onEvent(kind: String, payloadJson: String) throws {
        throw Boom()
    }
}

final class TypesAndEventsTests: XCTestCase {
    let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../../../..").standardized

    func session() throws -> String {
        try String(contentsOf: repo.appendingPathComponent("examples/data/coding-session.json"), encoding: .utf8)
    }

    /// Decodes and re-encodes `text` as `T`; the two JSON values must be equal.
    func roundTrip<T: Codable>(_ type: T.Type, _ text: String) throws -> T {
        let value = try JSONDecoder().decode(T.self, from: Data(text.utf8))
        let again = try JSONEncoder().encode(value)
        let a = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
        let b = try JSONSerialization.jsonObject(with: again) as? NSDictionary
        XCTAssertEqual(a, b, "\(T.self) did not round-trip")
        return value
    }

    func testFitReportDecodes() throws {
        let r = try fit(conversationJson: try session(), optionsJson: #"{"model": "gpt-4o", "max_tokens": 1500}"#)
        let report = try roundTrip(TurnfitTypes.FitReport.self, r.report)
        XCTAssertLessThanOrEqual(report.tokensAfter, 1500)
    }

    func testCompactOutcomeIsATaggedUnion() throws {
        let w = try ContextWindow(model: "gpt-4o", budgetJson: #"{"context_window": 2000, "reserved_output": 200}"#)
        try w.load(conversationJson: try session())
        let outcome = try roundTrip(TurnfitTypes.CompactOutcome.self, try w.compact(policyJson: #"{"strategy": "summarize"}"#))
        guard case .needsSummary(let pending) = outcome else { return XCTFail("expected needs_summary: \(outcome)") }
        XCTAssertFalse(pending.request.id.isEmpty)
    }

    func testWindowAndBreakerEvents() throws {
        let w = try ContextWindow(model: "gpt-4o", budgetJson: #"{"context_window": 1000, "reserved_output": 100}"#)
        let r = Recorder()
        try w.setEventListener(listener: r)
        _ = try w.push(messageJson: #"{"role": "user", "content": ""# + String(repeating: "word ", count: 700) + #""}"#)
        XCTAssertEqual(r.seen.map { $0.kind }, ["budget_crossed"])
        let event = try JSONDecoder().decode(TurnfitTypes.Event.self, from: Data(r.seen[0].json.utf8))
        guard case .budgetCrossed(let b) = event else { return XCTFail("\(event)") }
        XCTAssertEqual(b.limit, 1000)

        let breaker = try CircuitBreaker(configJson: #"{"failure_threshold": 1}"#)
        breaker.setEventListener(listener: Thrower())
        XCTAssertEqual(try breaker.recordFailure(key: "api", nowMs: 0), .open, "a throwing listener is dropped")
    }
}
