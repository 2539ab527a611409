// swift-tools-version:5.9
// examples/swift: the agent loop of examples/kotlin/AgentLoop.kt in Swift,
// over the `Ctxkit` package in bindings/uniffi/swift (generated sources,
// drift-checked by bindings/uniffi/test.sh). Where Swift exists:
//
//   cargo build -p ctxkit-uniffi --release
//   cd examples/swift && CTXKIT_LOCAL_BUILD=1 swift run
//
// There is no Swift compiler on the machines this was written on, so it has
// never been compiled; it uses only names the committed Ctxkit.swift declares.
import PackageDescription

let package = Package(
    name: "AgentLoop",
    platforms: [.macOS(.v11)],
    dependencies: [.package(path: "../../bindings/uniffi/swift")],
    targets: [
        .executableTarget(name: "AgentLoop", dependencies: [.product(name: "Ctxkit", package: "swift")]),
    ]
)
