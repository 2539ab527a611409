// Hand-written part of the Swift module `Turnfit`: the helpers uniffi.toml's
// custom types call (token ids cross as little-endian bytes and become
// [UInt32]). No behaviour: everything else is generated (Turnfit.swift).
import Foundation

func turnfitIdsFromData(_ data: Data) -> [UInt32] {
    var ids = [UInt32](repeating: 0, count: data.count / 4)
    ids.withUnsafeMutableBytes { dst in _ = data.copyBytes(to: dst) }
    return ids.map { UInt32(littleEndian: $0) }
}

func turnfitIdsToData(_ ids: [UInt32]) -> Data {
    let le = ids.map { $0.littleEndian }
    return le.withUnsafeBytes { Data($0) }
}

public extension TurnfitError {
    /// The stable snake_case kind name, as in tests/vectors (`unknown_model`).
    var kind: String {
        switch self {
        case .InvalidArgument: return "invalid_argument"
        case .InvalidUtf8: return "invalid_utf8"
        case .UnknownEncoding: return "unknown_encoding"
        case .UnknownModel: return "unknown_model"
        case .UnknownToken: return "unknown_token"
        case .LimitExceeded: return "limit_exceeded"
        case .InvalidJson: return "invalid_json"
        case .InvalidYaml: return "invalid_yaml"
        case .DoesNotFit: return "does_not_fit"
        case .Io: return "io"
        case .UnsafePath: return "unsafe_path"
        case .CycleDetected: return "cycle_detected"
        case .DepthExceeded: return "depth_exceeded"
        case .Internal: return "internal"
        }
    }
}
