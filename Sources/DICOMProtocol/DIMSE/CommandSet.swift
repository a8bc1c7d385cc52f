import NIOCore

/// A DIMSE command set: the group 0000 elements of one message, encoded in Implicit VR Little Endian with
/// Command Group Length (0000,0000) first (PS3.7 §6.3.1, §9.3, §E.1).
///
/// A small dedicated codec rather than the general data set reader: command sets are flat, short and only
/// use US, UL, UI, AE, LO and AT values, whose VRs are implied by the element number (PS3.7 Annex E).
public struct CommandSet: Sendable, Hashable {
    /// One element's value.
    public enum Value: Sendable, Hashable {
        /// US.
        case uint16(UInt16)
        /// UL.
        case uint32(UInt32)
        /// UI, AE or LO, without padding.
        case string(String)
        /// AT: one or more tags.
        case tags([UInt32])
        /// An element this codec does not interpret, as its value bytes.
        case bytes(ByteBuffer)
    }

    /// Element numbers of group 0000 (PS3.7 Annex E, Table E.1-1).
    public enum Element {
        public static let commandGroupLength: UInt16 = 0x0000
        public static let affectedSOPClassUID: UInt16 = 0x0002
        public static let requestedSOPClassUID: UInt16 = 0x0003
        public static let commandField: UInt16 = 0x0100
        public static let messageID: UInt16 = 0x0110
        public static let messageIDBeingRespondedTo: UInt16 = 0x0120
        public static let moveDestination: UInt16 = 0x0600
        public static let priority: UInt16 = 0x0700
        public static let commandDataSetType: UInt16 = 0x0800
        public static let status: UInt16 = 0x0900
        public static let offendingElement: UInt16 = 0x0901
        public static let errorComment: UInt16 = 0x0902
        public static let errorID: UInt16 = 0x0903
        public static let affectedSOPInstanceUID: UInt16 = 0x1000
        public static let requestedSOPInstanceUID: UInt16 = 0x1001
        public static let numberOfRemainingSuboperations: UInt16 = 0x1020
        public static let numberOfCompletedSuboperations: UInt16 = 0x1021
        public static let numberOfFailedSuboperations: UInt16 = 0x1022
        public static let numberOfWarningSuboperations: UInt16 = 0x1023
        public static let moveOriginatorApplicationEntityTitle: UInt16 = 0x1030
        public static let moveOriginatorMessageID: UInt16 = 0x1031
    }

    /// Command Data Set Type (0000,0800) meaning "no data set" (PS3.7 §9.3).
    public static let noDataSet: UInt16 = 0x0101
    /// The value this implementation writes when a data set follows (any value but 0x0101 means one does).
    public static let dataSetPresent: UInt16 = 0x0001

    private enum ValueKind { case us, ul, ui, ae, lo, at, other }

    private static func kind(of element: UInt16) -> ValueKind {
        switch element {
        case 0x0000: return .ul
        case 0x0002, 0x0003, 0x1000, 0x1001: return .ui
        case 0x0600, 0x1030: return .ae
        case 0x0902: return .lo
        case 0x0901, 0x1005: return .at
        case 0x0100, 0x0110, 0x0120, 0x0700, 0x0800, 0x0900, 0x0903, 0x1002, 0x1008, 0x1020...0x1023, 0x1031:
            return .us
        default: return .other
        }
    }

    /// The elements by element number (group 0000), without Command Group Length.
    public private(set) var elements: [UInt16: Value]

    /// An empty command set.
    public init() {
        self.elements = [:]
    }

    public subscript(element: UInt16) -> Value? {
        get { self.elements[element] }
        set {
            guard element != Element.commandGroupLength else { return }
            self.elements[element] = newValue
        }
    }

    /// The US value of an element.
    public func uint16(_ element: UInt16) -> UInt16? {
        if case .uint16(let value) = self.elements[element] { return value }
        return nil
    }

    /// The string value of a UI, AE or LO element.
    public func string(_ element: UInt16) -> String? {
        if case .string(let value) = self.elements[element] { return value }
        return nil
    }

    /// The first tag of an AT element.
    public func tag(_ element: UInt16) -> UInt32? {
        if case .tags(let value) = self.elements[element] { return value.first }
        return nil
    }

    /// Command Field (0000,0100).
    public var commandField: DIMSECommandField? {
        self.uint16(Element.commandField).map(DIMSECommandField.init(rawValue:))
    }

    /// Whether Command Data Set Type (0000,0800) announces a data set.
    public var hasDataSet: Bool {
        guard let type = self.uint16(Element.commandDataSetType) else { return false }
        return type != Self.noDataSet
    }

    // MARK: - Decoding

    /// Decodes a command set (Implicit VR Little Endian, group 0000 only).
    ///
    /// - Throws: ``DIMSEError`` when an element is truncated, outside group 0000, or has a malformed value.
    public init(decoding bytes: ByteBuffer) throws {
        var buffer = bytes
        self.elements = [:]
        while buffer.readableBytes > 0 {
            guard
                let group = buffer.readInteger(endianness: .little, as: UInt16.self),
                let element = buffer.readInteger(endianness: .little, as: UInt16.self),
                let length = buffer.readInteger(endianness: .little, as: UInt32.self)
            else {
                throw DIMSEError.malformedCommandSet("truncated element header")
            }
            guard group == 0x0000 else {
                throw DIMSEError.malformedCommandSet(
                    "element (\(Self.hex(group)),\(Self.hex(element))) outside group 0000")
            }
            guard length != 0xFFFF_FFFF, let value = buffer.readSlice(length: Int(length)) else {
                throw DIMSEError.malformedCommandSet(
                    "element (0000,\(Self.hex(element))) length \(length) past the end")
            }
            switch Self.kind(of: element) {
            case .ul:
                // Command Group Length is recomputed on encode; accept and drop it.
                continue
            case .us:
                guard value.readableBytes == 2,
                    let v = value.getInteger(at: value.readerIndex, endianness: .little, as: UInt16.self)
                else {
                    throw DIMSEError.malformedCommandSet("US element (0000,\(Self.hex(element))) has length \(length)")
                }
                self.elements[element] = .uint16(v)
            case .ui, .ae, .lo:
                let text = value.getString(at: value.readerIndex, length: value.readableBytes) ?? ""
                self.elements[element] = .string(Self.trim(text))
            case .at:
                guard value.readableBytes % 4 == 0 else {
                    throw DIMSEError.malformedCommandSet("AT element (0000,\(Self.hex(element))) has length \(length)")
                }
                var tags: [UInt32] = []
                var reader = value
                while let g = reader.readInteger(endianness: .little, as: UInt16.self),
                    let e = reader.readInteger(endianness: .little, as: UInt16.self)
                {
                    tags.append(UInt32(g) << 16 | UInt32(e))
                }
                self.elements[element] = .tags(tags)
            case .other:
                self.elements[element] = .bytes(value)
            }
        }
    }

    // MARK: - Encoding

    /// Encodes the command set with a correct Command Group Length first (PS3.7 §E.1).
    public func encode(into buffer: inout ByteBuffer) {
        let lengthIndex = buffer.writerIndex + 8
        buffer.writeInteger(UInt16(0), endianness: .little)
        buffer.writeInteger(UInt16(0), endianness: .little)
        buffer.writeInteger(UInt32(4), endianness: .little)
        buffer.writeInteger(UInt32(0), endianness: .little)
        let start = buffer.writerIndex
        for element in self.elements.keys.sorted() {
            guard let value = self.elements[element] else { continue }
            buffer.writeInteger(UInt16(0), endianness: .little)
            buffer.writeInteger(element, endianness: .little)
            switch value {
            case .uint16(let v):
                buffer.writeInteger(UInt32(2), endianness: .little)
                buffer.writeInteger(v, endianness: .little)
            case .uint32(let v):
                buffer.writeInteger(UInt32(4), endianness: .little)
                buffer.writeInteger(v, endianness: .little)
            case .string(let text):
                let count = text.utf8.count
                let padded = count + (count & 1)
                buffer.writeInteger(UInt32(padded), endianness: .little)
                buffer.writeString(text)
                if count & 1 == 1 {
                    buffer.writeInteger(Self.kind(of: element) == .ui ? UInt8(0) : UInt8(0x20))
                }
            case .tags(let tags):
                buffer.writeInteger(UInt32(tags.count * 4), endianness: .little)
                for tag in tags {
                    buffer.writeInteger(UInt16(truncatingIfNeeded: tag >> 16), endianness: .little)
                    buffer.writeInteger(UInt16(truncatingIfNeeded: tag), endianness: .little)
                }
            case .bytes(let bytes):
                buffer.writeInteger(UInt32(bytes.readableBytes), endianness: .little)
                buffer.writeImmutableBuffer(bytes)
            }
        }
        buffer.setInteger(UInt32(buffer.writerIndex - start), at: lengthIndex, endianness: .little)
    }

    /// The encoded command set as a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 256)
        self.encode(into: &buffer)
        return buffer
    }

    private static func trim(_ text: String) -> String {
        var scalars = Substring(text)
        while let last = scalars.last, last == " " || last == "\0" { scalars.removeLast() }
        while let first = scalars.first, first == " " { scalars.removeFirst() }
        return String(scalars)
    }

    private static func hex(_ value: UInt16) -> String {
        let s = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - s.count) + s
    }
}
