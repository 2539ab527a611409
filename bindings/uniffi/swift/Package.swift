// swift-tools-version:5.9
// The Swift package `Ctxkit`: generated bindings (Sources/Ctxkit/Ctxkit.swift,
// drift-checked by bindings/uniffi/test.sh) over the Rust library.
//
// Two ways to get the native library:
// - default: a prebuilt XCFramework (binary target) built by the release
//   recipe in bindings/uniffi/README.md;
// - CTXKIT_LOCAL_BUILD=1: link the library cargo built in this checkout
//   (`cargo build -p ctxkit-uniffi --release`), for development on macOS or
//   Linux: `CTXKIT_LOCAL_BUILD=1 swift test`.
import Foundation
import PackageDescription

let local = ProcessInfo.processInfo.environment["CTXKIT_LOCAL_BUILD"] != nil
let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..").standardized.path

let ffi: Target = local
    ? .systemLibrary(name: "CtxkitFFI", path: "Sources/CtxkitFFI")
    : .binaryTarget(name: "CtxkitFFI", path: "CtxkitFFI.xcframework")

let package = Package(
    name: "Ctxkit",
    platforms: [.iOS(.v13), .macOS(.v11)],
    products: [.library(name: "Ctxkit", targets: ["Ctxkit"])],
    targets: [
        ffi,
        .target(
            name: "Ctxkit",
            dependencies: ["CtxkitFFI"],
            linkerSettings: local
                ? [.unsafeFlags(["-L\(repo)/target/release", "-L\(repo)/target/debug", "-lctxkit_uniffi"])]
                : []
        ),
        .testTarget(name: "CtxkitTests", dependencies: ["Ctxkit"]),
    ]
)
