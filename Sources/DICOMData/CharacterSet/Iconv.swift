import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An iconv conversion descriptor that may cross isolation domains.
///
/// A descriptor keeps conversion state, so it is never used by two threads at once: it is
/// either owned by one table builder for its whole life or checked out of an ``IconvPool``.
struct IconvDescriptor: @unchecked Sendable {
    let raw: iconv_t
}

/// Result of converting a buffer with ``IconvPool/convert(_:stopOnError:)``.
enum IconvOutcome {
    /// All input converted; invalid input was replaced with U+FFFD if `stopOnError` was false.
    case converted([UInt8])
    /// `stopOnError` was true and the input held a sequence the conversion cannot map.
    case failed
}

/// A small pool of iconv descriptors for one conversion direction.
///
/// `iconv_t` is not thread-safe, and `iconv_open` loads a gconv module the first time and
/// allocates a conversion state each time, so callers check a descriptor
/// out, use it alone, reset its shift state and put it back. The lock is held only for the
/// checkout and the return, never during a conversion, so concurrent decoders don't serialise.
final class IconvPool: Sendable {
    let fromCode: String
    let toCode: String
    private let idle = Mutex<[IconvDescriptor]>([])
    /// At most this many idle descriptors are kept; extra ones are closed on return.
    private let maximumIdle = 4

    init(from fromCode: String, to toCode: String) {
        self.fromCode = fromCode
        self.toCode = toCode
    }

    deinit {
        idle.withLock { descriptors in
            for d in descriptors { _ = iconv_close(d.raw) }
            descriptors.removeAll()
        }
    }

    /// Whether this iconv build knows both encodings.
    var isAvailable: Bool {
        guard let d = checkOut() else { return false }
        checkIn(d)
        return true
    }

    private func checkOut() -> IconvDescriptor? {
        if let d = idle.withLock({ $0.popLast() }) { return d }
        return IconvPool.open(from: fromCode, to: toCode)
    }

    private func checkIn(_ d: IconvDescriptor) {
        // Return to the initial shift state before anyone else uses it.
        _ = iconv(d.raw, nil, nil, nil, nil)
        let keep = idle.withLock { descriptors -> Bool in
            guard descriptors.count < maximumIdle else { return false }
            descriptors.append(d)
            return true
        }
        if !keep { _ = iconv_close(d.raw) }
    }

    /// Opens a descriptor, or nil when iconv doesn't know one of the names.
    static func open(from fromCode: String, to toCode: String) -> IconvDescriptor? {
        guard let cd = iconv_open(toCode, fromCode) else { return nil }
        if cd == iconv_t(bitPattern: -1) { return nil }
        return IconvDescriptor(raw: cd)
    }

    /// Converts `input` as a whole.
    ///
    /// When `stopOnError` is false an invalid or unmappable input byte becomes `replacement` in the output
    /// and conversion resumes at the next byte; a truncated sequence at the end becomes one replacement.
    /// Returns nil when no descriptor can be opened.
    func convert(_ input: UnsafeBufferPointer<UInt8>, stopOnError: Bool, replacement: [UInt8] = [0xEF, 0xBF, 0xBD])
        -> IconvOutcome?
    {
        guard let d = checkOut() else { return nil }
        defer { checkIn(d) }
        return IconvPool.convert(input, with: d, stopOnError: stopOnError, replacement: replacement)
    }

    /// Converts with a descriptor the caller owns.
    static func convert(
        _ input: UnsafeBufferPointer<UInt8>, with d: IconvDescriptor, stopOnError: Bool,
        replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
    ) -> IconvOutcome {
        guard let base = input.baseAddress, input.count > 0 else { return .converted([]) }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2 + 16)
        var chunk = [UInt8](repeating: 0, count: max(64, input.count * 4))
        var position = 0
        while position < input.count {
            var inPtr: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: base + position)
                .assumingMemoryBound(to: CChar.self)
            var inLeft = input.count - position
            let (result, error, produced) = chunk.withUnsafeMutableBytes { raw -> (Int, Int32, Int) in
                var outPtr: UnsafeMutablePointer<CChar>? = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
                var outLeft = raw.count
                let r = iconv(d.raw, &inPtr, &inLeft, &outPtr, &outLeft)
                let e = r == -1 ? errno : 0
                return (r, e, raw.count - outLeft)
            }
            output.append(contentsOf: chunk[0..<produced])
            position = input.count - inLeft
            if result != -1 { break }
            switch error {
            case E2BIG:
                continue
            case EILSEQ:
                if stopOnError { return .failed }
                output.append(contentsOf: replacement)
                position += 1
                _ = iconv(d.raw, nil, nil, nil, nil)
            default:  // EINVAL: incomplete sequence at the end of the input
                if stopOnError { return .failed }
                output.append(contentsOf: replacement)
                position = input.count
            }
        }
        // Flush any pending shift sequence (stateful target encodings).
        chunk.withUnsafeMutableBytes { raw in
            var outPtr: UnsafeMutablePointer<CChar>? = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
            var outLeft = raw.count
            _ = iconv(d.raw, nil, nil, &outPtr, &outLeft)
            output.append(contentsOf: raw.prefix(raw.count - outLeft))
        }
        return .converted(output)
    }
}
