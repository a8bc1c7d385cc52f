import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the identity of a file already in the tree: what ``InstancePlacer`` compares before it calls a
/// file at the final name a duplicate.
enum StoredInstance {
    /// The most of a file read to find its SOP Instance UID, and the most a deflated one may inflate to:
    /// the UID comes early in the data set (PS3.5 §7.1: elements ascend by tag), so this bounds the
    /// memory a hostile file at a final name can cost.
    static let readLimit = 4 << 20

    /// The SOP Instance UID (0008,0018) in the data set of the open file `descriptor` of `size` bytes,
    /// as ``DICOMData/DataSet/uid(_:)`` gives it; `nil` when the file is not DICOM, has none, or it lies
    /// past ``readLimit``.
    static func sopInstanceUID(descriptor: Int32, size: Int) -> [UInt8]? {
        let options = Part10File.ReadOptions(
            dataSet: .init(stopBefore: Tag(0x0008, 0x0019)), inflate: InflateLimits(maximumSize: readLimit))
        let limit = min(size, readLimit)
        var bytes: [UInt8] = []
        var wanted = min(limit, 16 * 1024)
        while true {
            guard read(descriptor, into: &bytes, upTo: wanted) else { return nil }
            let isWholeFile = bytes.count >= size
            do {
                let file = try Part10File(bytes: bytes, options: options)
                guard file.stoppedEarly || isWholeFile else {
                    // Ended at an element boundary before (0008,0019): the UID may come later.
                    if wanted >= limit { return nil }
                    wanted = min(limit, wanted * 4)
                    continue
                }
                return file.dataSet.uid(.sopInstanceUID)
            } catch {
                if isWholeFile || wanted >= limit { return nil }
                wanted = min(limit, wanted * 4)
            }
        }
    }

    /// Appends to `bytes` until it holds `count` bytes or the file ends; false on a read error.
    private static func read(_ descriptor: Int32, into bytes: inout [UInt8], upTo count: Int) -> Bool {
        let start = bytes.count
        guard count > start else { return true }
        bytes.append(contentsOf: repeatElement(0, count: count - start))
        let filled = bytes.withUnsafeMutableBytes { buffer -> Int? in
            do {
                return try POSIX.readFully(
                    descriptor, into: buffer.baseAddress! + start, count: count - start, at: start)
            } catch {
                return nil
            }
        }
        bytes.removeLast(count - start - (filled ?? 0))
        return filled != nil
    }
}

extension DataSet {
    /// The value of a UID element (VR UI) as stored, without its padding (trailing NUL or spaces,
    /// PS3.5 §9.1): the whole value, not only the first of several, and not decoded, so two different
    /// values never compare equal. `nil` when the element is absent.
    public func uid(_ tag: Tag) -> [UInt8]? {
        self[tag].map { Self.trimmingUIDPadding($0.bytes) }
    }

    /// `bytes` without trailing NUL and space bytes.
    static func trimmingUIDPadding(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out = Array(bytes)
        while let last = out.last, last == 0 || last == 0x20 { out.removeLast() }
        return out
    }
}
