// Runs where a Swift toolchain exists (`TURNFIT_LOCAL_BUILD=1 swift test` in
// bindings/uniffi/swift); bindings/uniffi/test.sh reports it as SKIPPED on
// machines without one. Covers the tokenizer vectors (N/N printed), the
// error enum and threads.
import Foundation
import XCTest
@testable import Turnfit

final class TurnfitTests: XCTestCase {
    let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../../../..").standardized

    func testCountsAndIds() throws {
        let t = try Tokenizer(encoding: .o200kBase)
        XCTAssertEqual(try t.countTokens(text: "Hello, world!"), 4)
        let ids: [UInt32] = try t.encode(text: "Hello, world!")
        XCTAssertEqual(ids, [13225, 11, 2375, 0])
        XCTAssertEqual(try t.decode(ids: ids), "Hello, world!")
    }

    func testErrors() throws {
        XCTAssertThrowsError(try Tokenizer.forModel(model: "gtp-4o")) { e in
            XCTAssertEqual((e as? TurnfitError)?.kind, "unknown_model")
        }
        let s = try CallStack(maxDepth: 5).enter(agent: "planner").enter(agent: "coder")
        XCTAssertThrowsError(try s.enter(agent: "planner")) { e in
            XCTAssertEqual((e as? TurnfitError)?.kind, "cycle_detected")
        }
    }

    /// Document 000's ErrorContext: echoed by classification, counted by the breakers.
    func testErrorContext() throws {
        let c = try classifyError(provider: "other", status: 0, body: "Rate limit exceeded", headersJson: nil,
                                  contextJson: #"{"agent_id": "narrator", "workflow_id": "wf-7"}"#)
        XCTAssertEqual(c.category, "rate_limited")
        XCTAssertEqual(c.agentId, "narrator")
        XCTAssertEqual(c.workflowId, "wf-7")
        XCTAssertThrowsError(try classifyError(provider: "openai", status: 500, body: "", headersJson: nil,
                                               contextJson: #"{"agent_id": ""}"#)) { e in
            XCTAssertEqual((e as? TurnfitError)?.kind, "invalid_argument")
        }
        let b = try CircuitBreaker(configJson: #"{"failure_threshold": 3}"#)
        _ = try b.recordFailureIn(key: "openai", nowMs: 0, contextJson: #"{"agent_id": "narrator", "workflow_id": "wf-7"}"#)
        _ = try b.recordFailureIn(key: "openai", nowMs: 1, contextJson: #"{"agent_id": "narrator"}"#)
        XCTAssertEqual(try b.recordFailureIn(key: "openai", nowMs: 2, contextJson: "{}"), .open)
        let n = b.failureCounts()
        XCTAssertEqual(n.byAgent, ["narrator": 2])
        XCTAssertEqual(n.byWorkflow, ["wf-7": 1])
    }

    func testThreads() throws {
        let t = try Tokenizer(encoding: .cl100kBase)
        let text = String(repeating: "lorem ipsum ", count: 100)
        let expected = try t.countTokens(text: text)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            for _ in 0..<100 { XCTAssertEqual(try? t.countTokens(text: text), expected) }
        }
    }

    /// fitTurn and ContextWindow.fitTurn (FitTurn.swift): an async summarizer
    /// writes the summary; one that throws falls back to the digest.
    func testTurns() async throws {
        let history = try String(contentsOf: repo.appendingPathComponent("examples/data/agent-loop.json"))
        let options = #"{"model":"gpt-4o","max_tokens":16000,"policy":{"strategy":"summarize","mask":{"enabled":false}}}"#
        let r = try await fitTurn(conversationJson: history, optionsJson: options) { _ in "The agent read the tests." }
        XCTAssertTrue(r.report.contains(#""source":"host""#))
        XCTAssertTrue(r.conversation.contains("The agent read the tests."))
        let w = try ContextWindow(model: "gpt-4o", budgetJson: #"{"context_window":16000}"#, registry: nil)
        try w.load(conversationJson: history)
        struct Down: Error {}
        let report = try await w.fitTurn(optionsJson: #"{"policy":{"strategy":"summarize"}}"#) { _ in throw Down() }
        XCTAssertTrue(report.contains(#""reason":"error""#))
        XCTAssertTrue(report.contains(#""changed":true"#))
    }

    func testTokenizerVectors() throws {
        let data = try Data(contentsOf: repo.appendingPathComponent("tests/vectors/tokenizer.json"))
        let doc = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let vectors = doc["vectors"] as! [[String: Any]]
        var passed = 0
        var failures: [String] = []
        for v in vectors {
            let name = v["name"] as! String, op = v["op"] as! String
            let input = v["input"] as! [String: Any], expected = v["expected"] as! [String: Any]
            let special: SpecialTokens = (input["special"] as? String) == "recognize" ? .recognize : .ordinary
            let t = try Tokenizer.fromName(name: input["encoding"] as! String, special: special)
            var ok = false
            do {
                switch op {
                case "encode":
                    let ids = try t.encode(text: input["text"] as! String)
                    ok = ids.map { Int($0) } == (expected["ids"] as! [Int])
                case "decode":
                    let mode: DecodeMode = (input["mode"] as? String) == "strict" ? .strict : .replace
                    let ids = (input["ids"] as! [Int]).map { UInt32($0) }
                    do { ok = try t.decode(ids: ids, mode: mode) == expected["text"] as? String }
                    catch let e as TurnfitError { ok = e.kind == expected["error"] as? String }
                case "count_until_limit":
                    let r = try t.countUntilLimit(text: input["text"] as! String, limit: UInt64(input["limit"] as! Int))
                    ok = r.exceeded ? Int(r.tokens) >= (expected["tokens_min"] as! Int)
                                    : Int(r.tokens) == (expected["tokens"] as! Int)
                case "truncate":
                    let side: TruncateSide = ["head": .head, "tail": .tail, "both": .both][input["side"] as! String]!
                    do {
                        let r = try t.truncate(text: input["text"] as! String, maxTokens: UInt64(input["max_tokens"] as! Int),
                                               side: side, marker: input["marker"] as? String)
                        ok = r.text == expected["text"] as? String && Int(r.tokens) == expected["tokens"] as? Int
                    } catch let e as TurnfitError { ok = e.kind == expected["error"] as? String }
                default:
                    failures.append("\(name): unknown op")
                    continue
                }
            }
            if ok { passed += 1 } else { failures.append(name) }
        }
        print("vectors: \(passed)/\(vectors.count) (tokenizer.json)")
        XCTAssertEqual(passed, vectors.count, failures.prefix(5).joined(separator: "\n"))
    }

    /// One token per 4 bytes of UTF-8 (issue 34's host counter).
    final class QuarterBytes: HostTokenCounter, @unchecked Sendable {
        func count(text: String) throws -> UInt64 { UInt64(text.utf8.count / 4) }
    }

    final class Failing: HostTokenCounter, @unchecked Sendable {
        func count(text: String) throws -> UInt64 { throw CounterError.Failed(reason: "no quota left") }
    }

    func testHostCounter() throws {
        let profile = #"{"name": "acme-host", "encoding": "cl100k_base", "context_window": 32000, "exact": false}"#
        let conversation = #"[{"role":"user","content":"The quick brown fox jumps over the lazy dog."}]"#
        let r = ModelRegistry()
        try r.registerWithCounter(profileJson: profile, counter: QuarterBytes())
        let w = try ContextWindow(model: "acme-host", registry: r)
        try w.load(conversationJson: conversation)
        XCTAssertFalse(try w.preflight().exact)
        try r.registerWithCounter(profileJson: profile, counter: Failing())
        XCTAssertThrowsError(try countConversation(conversationJson: conversation, model: "acme-host", registry: r)) { e in
            XCTAssertEqual((e as? TurnfitError)?.kind, "invalid_argument")
            XCTAssertTrue("\(e)".contains("failed: no quota left"))
        }
        XCTAssertThrowsError(try r.registerWithCounter(profileJson: "[\(profile)]", counter: QuarterBytes())) { e in
            XCTAssertEqual((e as? TurnfitError)?.kind, "invalid_json")
        }
    }
}
