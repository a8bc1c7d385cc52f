/// Stops the process with `message` when an invariant does not hold, so that libFuzzer records the
/// input as a crash (`crash-<sha1>`) and prints the message.
///
/// A fuzz target's invariants go beyond "does not crash": a decoded value re-encodes to bytes that
/// decode to the same value, nothing grows beyond a bound relative to the input, and so on.
@inline(__always)
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError("fuzz invariant failed: \(message())", file: file, line: line)
    }
}

/// The fuzzer's input as an array (the decoders under test take arrays or ByteBuffers).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A small deterministic source of choices drawn from the input's own bytes, so that one input
/// always takes the same path (libFuzzer needs reproducible runs).
public struct FuzzChoices {
    private var bytes: ArraySlice<UInt8>

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    /// The next byte, or 0 once the choices are used up.
    public mutating func next() -> UInt8 {
        guard let first = self.bytes.first else { return 0 }
        self.bytes = self.bytes.dropFirst()
        return first
    }
}
