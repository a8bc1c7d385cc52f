import PXCore

/// An incremental reader of a top-level JSON array of objects (RFC 8259 §5), the form of a QIDO-RS
/// answer (PS3.18 §F.2): bytes go in as they arrive, and each complete object comes out as its own
/// bytes, for ``DICOMData/JSONParser`` to parse alone.
///
/// Memory is bounded whatever the server sends: only the object being read is kept, and an object
/// larger than ``maximumObjectBytes`` is an error. The reader follows strings (with their escapes) and
/// nesting to find where each object ends; the object's own syntax is left to the parser.
public struct JSONArrayReader: Sendable {
    private enum State: Sendable {
        /// Before `[`.
        case start
        /// After `[`: an object or `]`.
        case firstElement
        /// After `,`: an object.
        case element
        /// Inside an object.
        case object
        /// After an object: `,` or `]`.
        case afterElement
        /// After `]`: only white space.
        case end
    }

    private var state = State.start
    private var current: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// The largest object accepted.
    public let maximumObjectBytes: Int
    /// Objects read so far.
    public private(set) var count = 0
    /// Whether the array's closing `]` was read.
    public var isComplete: Bool { state == .end }

    public init(maximumObjectBytes: Int = 4 << 20) {
        self.maximumObjectBytes = maximumObjectBytes
    }

    /// Consumes `bytes`, handing each object they complete to `onObject`.
    /// - Throws: ``PXError/invalidResponse(_:)`` for an answer that is not an array of objects, or an
    ///   object larger than ``maximumObjectBytes``; what `onObject` throws.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onObject: ([UInt8]) throws -> Void) throws {
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            switch state {
            case .object:
                // The bulk of an answer: copy runs of bytes without structure in one go.
                var j = i
                while j < n {
                    let c = bytes[j]
                    if inString {
                        if escaped {
                            escaped = false
                        } else if c == UInt8(ascii: "\\") {
                            escaped = true
                        } else if c == UInt8(ascii: "\"") {
                            inString = false
                        }
                    } else if c == UInt8(ascii: "\"") {
                        inString = true
                    } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                        depth += 1
                    } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 {
                            j += 1
                            break
                        }
                    }
                    j += 1
                }
                guard current.count + (j - i) <= maximumObjectBytes else {
                    throw PXError.invalidResponse(
                        "a QIDO-RS match larger than \(maximumObjectBytes) bytes (PS3.18 §F.2)")
                }
                current.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<j]))
                i = j
                if depth == 0 {
                    count += 1
                    state = .afterElement
                    try onObject(current)
                    current.removeAll(keepingCapacity: true)
                }
                continue
            case _ where Self.isSpace(b):
                break
            case .start:
                guard b == UInt8(ascii: "[") else {
                    throw PXError.invalidResponse("QIDO-RS answer is not a JSON array")
                }
                state = .firstElement
            case .firstElement where b == UInt8(ascii: "]"):
                state = .end
            case .firstElement, .element:
                guard b == UInt8(ascii: "{") else {
                    throw PXError.invalidResponse("QIDO-RS answer holds a JSON value that is not an object")
                }
                state = .object
                depth = 0
                inString = false
                escaped = false
                continue  // the object state copies the `{`
            case .afterElement:
                if b == UInt8(ascii: ",") {
                    state = .element
                } else if b == UInt8(ascii: "]") {
                    state = .end
                } else {
                    throw PXError.invalidResponse("QIDO-RS answer: expected , or ] after a match")
                }
            case .end:
                throw PXError.invalidResponse("QIDO-RS answer: data after the JSON array")
            }
            i += 1
        }
    }

    /// The end of the answer.
    /// - Throws: ``PXError/invalidResponse(_:)`` when the array is not closed (an empty answer is an
    ///   empty array).
    public func finish() throws(PXError) {
        switch state {
        case .start, .end: return
        default: throw .invalidResponse("the QIDO-RS answer ended inside its JSON array")
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
}
