/// A DICOM file in the Part 10 format: preamble, `DICM`, file meta information (group 0002, always
/// Explicit VR Little Endian) and the data set in its transfer syntax (PS3.10 §7.1).
public struct Part10File: Sendable {
    /// The file meta information elements (group 0002).
    public var meta: DataSet
    /// The data set that follows the meta information.
    public var dataSet: DataSet
    /// The transfer syntax the data set was read in (or is to be written in).
    public var transferSyntax: TransferSyntax
    /// The file had no preamble and `DICM` prefix (a bare data set, read with a guessed transfer syntax).
    public var hadNoPreamble: Bool = false
    /// The read stopped at ``ReadOptions/dataSet`` `stopBefore` (a header-only read that reached it),
    /// rather than at the end of the bytes.
    public var stoppedEarly: Bool = false
    /// Where the data set started in the bytes it was read from (see ``dataSetOffset(in:)``); 0 for a file
    /// made in memory.
    public var dataSetOffset: Int = 0

    /// The implementation class UID px writes into (0002,0012) and proposes on associations.
    public static let implementationClassUID = "2.25.152013755943437767370897010099568838985"
    /// The implementation version name px writes into (0002,0013) (at most 16 characters).
    public static let implementationVersionName = "PX_0.1"

    public init(meta: DataSet = DataSet(), dataSet: DataSet, transferSyntax: TransferSyntax) {
        self.meta = meta
        self.dataSet = dataSet
        self.transferSyntax = transferSyntax
    }

    /// How a file is read.
    public struct ReadOptions: Sendable {
        public var dataSet: DataSetReader.Options
        /// How far a deflated data set may inflate: its size, and its expansion over the compressed bytes.
        public var inflate: InflateLimits

        public init(dataSet: DataSetReader.Options = .init(), inflate: InflateLimits = InflateLimits()) {
            self.dataSet = dataSet
            self.inflate = inflate
        }

        /// Refuse deflated data sets that inflate beyond this many bytes (``InflateLimits/maximumSize``).
        public var maximumInflatedSize: Int {
            get { self.inflate.maximumSize }
            set { self.inflate.maximumSize = newValue }
        }

        /// Stop before Pixel Data: everything a receiver needs to sort a file.
        public static let headerOnly = ReadOptions(dataSet: .init(stopBefore: .pixelData))
    }

    /// Reads a file from its bytes.
    /// - Throws: ``DICOMDataError``.
    public init(bytes: [UInt8], options: ReadOptions = ReadOptions()) throws(DICOMDataError) {
        let located = try Self.locateDataSet(bytes)
        self.meta = located.meta
        self.hadNoPreamble = located.hadNoPreamble
        let metaEnd = located.dataSetOffset
        let transferSyntax = located.transferSyntax
        self.transferSyntax = transferSyntax
        self.dataSetOffset = metaEnd

        if transferSyntax.isDeflated {
            let inflated = try Inflate.inflate(bytes, range: metaEnd..<bytes.count, limits: options.inflate)
            let read = try DataSetReader.read(
                inflated, transferSyntax: .explicitVRLittleEndian, options: options.dataSet)
            self.dataSet = read.dataSet
            self.stoppedEarly = read.stoppedEarly
        } else {
            do {
                let read = try DataSetReader.read(
                    bytes, range: metaEnd..<bytes.count, transferSyntax: transferSyntax, options: options.dataSet)
                self.dataSet = read.dataSet
                self.stoppedEarly = read.stoppedEarly
            } catch
                where error.code == .invalidVR && error.offset == metaEnd + 4 && transferSyntax.isExplicitVR
                && !transferSyntax.isBigEndian
            {
                // The meta information says explicit VR but the very first element is implicit: a known
                // writer mistake. Read it as implicit, as pydicom does.
                // If that fails too, the explicit reading's error is the one to report.
                let explicitError = error
                do {
                    let read = try DataSetReader.read(
                        bytes, range: metaEnd..<bytes.count, transferSyntax: .implicitVRLittleEndian,
                        options: options.dataSet)
                    self.dataSet = read.dataSet
                    self.stoppedEarly = read.stoppedEarly
                } catch {
                    throw explicitError
                }
            }
        }
    }

    /// Where the data set of a file starts, and what the preamble and meta information say about it.
    struct LocatedDataSet {
        var meta: DataSet
        var dataSetOffset: Int
        var transferSyntax: TransferSyntax
        var hadNoPreamble: Bool
    }

    /// Finds the meta information and the data set's transfer syntax in the start of a file
    /// (`DICM` prefix, meta group, or a bare data set recognised from its first element).
    static func locateDataSet(_ bytes: [UInt8]) throws(DICOMDataError) -> LocatedDataSet {
        var foundMeta = DataSet()
        var hadNoPreamble = false
        let prefix = Self.dicmPrefixOffset(bytes)
        let metaEnd: Int
        let transferSyntax: TransferSyntax
        if let prefix {
            let start = prefix + 4
            let (meta, end) = try Self.readMeta(bytes, from: start)
            foundMeta = meta
            metaEnd = end
            if let ts = meta.string(.transferSyntaxUID), !ts.isEmpty {
                transferSyntax = TransferSyntax(uid: ts)
            } else if bytes.count - end >= 8 {
                // No Transfer Syntax UID in the meta information: explicit or implicit VR Little Endian,
                // recognised from the first element.
                transferSyntax =
                    VR(byte0: bytes[end + 4], byte1: bytes[end + 5]) != nil
                    ? .explicitVRLittleEndian : .implicitVRLittleEndian
            } else {
                throw .missingTransferSyntax()
            }
        } else {
            guard let guessed = Self.guessRawTransferSyntax(bytes) else {
                throw .notDICOM("no DICM prefix at byte 128 and no recognisable data set at byte 0")
            }
            // A bare data set may still start with a meta group (written without a preamble).
            if bytes.count >= 8, bytes[0] == 0x02, bytes[1] == 0x00, guessed.isExplicitVR, !guessed.isBigEndian {
                let (meta, end) = try Self.readMeta(bytes, from: 0)
                foundMeta = meta
                metaEnd = end
                transferSyntax = meta.string(.transferSyntaxUID).map { TransferSyntax(uid: $0) } ?? guessed
            } else {
                foundMeta = DataSet()
                metaEnd = 0
                transferSyntax = guessed
            }
            hadNoPreamble = true
        }
        return LocatedDataSet(
            meta: foundMeta, dataSetOffset: metaEnd, transferSyntax: transferSyntax, hadNoPreamble: hadNoPreamble)
    }

    /// The offset of `DICM` (128 in a conforming file), or nil.
    static func dicmPrefixOffset(_ bytes: [UInt8]) -> Int? {
        if bytes.count >= 132, bytes[128] == 0x44, bytes[129] == 0x49, bytes[130] == 0x43, bytes[131] == 0x4D {
            return 128
        }
        if bytes.count >= 4, bytes[0] == 0x44, bytes[1] == 0x49, bytes[2] == 0x43, bytes[3] == 0x4D {
            return 0
        }
        return nil
    }

    /// Where the data set starts in a file's first bytes: after the preamble, `DICM` and the file meta
    /// information (PS3.10 §7.1), or after a meta group that starts at byte 0 in a file without a preamble.
    /// The one place px computes it: the network layer sends a file's data set from this offset.
    ///
    /// - Parameter bytes: The file's start; enough of it to hold the meta information.
    /// - Throws: ``DICOMDataError`` when the meta information is malformed or runs past `bytes`.
    public static func dataSetOffset(in bytes: [UInt8]) throws(DICOMDataError) -> Int {
        try Self.metaEnd(bytes, from: Self.dicmPrefixOffset(bytes).map { $0 + 4 } ?? 0)
    }

    /// Reads the group 0002 elements that start at `start`; returns them and where the data set begins.
    static func readMeta(_ bytes: [UInt8], from start: Int) throws(DICOMDataError) -> (DataSet, Int) {
        let end = try Self.metaEnd(bytes, from: start)
        let meta = try DataSetReader.read(bytes, range: start..<end, transferSyntax: .explicitVRLittleEndian).dataSet
        return (meta, end)
    }

    /// The end of the group 0002 elements that start at `start` (Explicit VR Little Endian).
    static func metaEnd(_ bytes: [UInt8], from start: Int) throws(DICOMDataError) -> Int {
        // Walk element by element while the group is 0002, so that a wrong group length does no harm.
        var end = start
        while bytes.count - end >= 8, bytes[end] == 0x02, bytes[end + 1] == 0x00 {
            guard let vr = VR(byte0: bytes[end + 4], byte1: bytes[end + 5]) else {
                throw .invalidVR(
                    bytes[end + 4], bytes[end + 5], tag: Tag(2, UInt16(bytes[end + 2]) | UInt16(bytes[end + 3]) << 8),
                    at: end + 4)
            }
            var length: Int
            var header: Int
            if vr.hasLongExplicitLength {
                guard bytes.count - end >= 12 else {
                    throw .truncated(at: end, needed: 12, context: "a meta element header")
                }
                length =
                    Int(bytes[end + 8]) | Int(bytes[end + 9]) << 8 | Int(bytes[end + 10]) << 16 | Int(bytes[end + 11])
                    << 24
                header = 12
            } else {
                length = Int(bytes[end + 6]) | Int(bytes[end + 7]) << 8
                header = 8
            }
            guard bytes.count - end - header >= length else {
                let tag = Tag(2, UInt16(bytes[end + 2]) | UInt16(bytes[end + 3]) << 8)
                throw .lengthPastEnd(tag: tag, length: UInt32(length), at: end, available: bytes.count - end - header)
            }
            end += header + length
        }
        return end
    }

    /// Guesses the transfer syntax of a data set with no meta information from its first element.
    static func guessRawTransferSyntax(_ bytes: [UInt8]) -> TransferSyntax? {
        guard bytes.count >= 8 else { return nil }
        let littleGroup = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let bigGroup = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let plausible: Set<UInt16> = [0x0000, 0x0002, 0x0004, 0x0008, 0x0010]
        let explicit = VR(byte0: bytes[4], byte1: bytes[5]) != nil
        if plausible.contains(littleGroup) {
            return explicit ? .explicitVRLittleEndian : .implicitVRLittleEndian
        }
        if plausible.contains(bigGroup), explicit {
            return .explicitVRBigEndian
        }
        return nil
    }
}
