// swift-tools-version:5.9
// The Swift package `Turnfit`: generated bindings (Sources/Turnfit/Turnfit.swift,
// drift-checked by bindings/uniffi/test.sh) over the Rust library.
//
// Two ways to get the native library:
// - default: a prebuilt XCFramework (binary target) built by the release
//   recipe in bindings/uniffi/README.md;
// - TURNFIT_LOCAL_BUILD=1: link the library cargo built in this checkout
//   (`cargo build -p turnfit-uniffi --release`), for development on macOS or
//   Linux: `TURNFIT_LOCAL_BUILD=1 swift test`.
import Foundation
import PackageDescription

let local = ProcessInfo.processInfo.environment["TURNFIT_LOCAL_BUILD"] != nil
let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..").standardized.path

let ffi: Target = local
    ? .systemLibrary(name: "TurnfitFFI", path: "Sources/TurnfitFFI")
    : .binaryTarget(name: "TurnfitFFI", path: "TurnfitFFI.xcframework")

let package = Package(
    name: "Turnfit",
    platforms: [.iOS(.v13), .macOS(.v11)],
    products: [.library(name: "Turnfit", targets: ["Turnfit"])],
    targets: [
        ffi,
        .target(
            name: "Turnfit",
            dependencies: ["TurnfitFFI"],
            linkerSettings: local
                ? [.unsafeFlags(["-L\(repo)/target/release", "-L\(repo)/target/debug", "-lturnfit_uniffi"])]
                : []
        ),
        .testTarget(name: "TurnfitTests", dependencies: ["Turnfit"]),
    ]
)
