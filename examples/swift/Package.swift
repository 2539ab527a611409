// swift-tools-version:5.9
// examples/swift: the agent loop of examples/kotlin/AgentLoop.kt in Swift,
// over the `Turnfit` package in bindings/uniffi/swift (generated sources,
// drift-checked by bindings/uniffi/test.sh). Where Swift exists:
//
//   cargo build -p turnfit-uniffi --release
//   cd examples/swift && TURNFIT_LOCAL_BUILD=1 swift run
//
// There is no Swift compiler on the machines this was written on, so it has
// never been compiled; it uses only names the committed Turnfit.swift declares.
import PackageDescription

let package = Package(
    name: "AgentLoop",
    platforms: [.macOS(.v11)],
    dependencies: [.package(path: "../../bindings/uniffi/swift")],
    targets: [
        .executableTarget(name: "AgentLoop", dependencies: [.product(name: "Turnfit", package: "swift")]),
    ]
)
