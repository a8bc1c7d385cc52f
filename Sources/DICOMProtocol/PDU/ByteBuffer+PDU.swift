import NIOCore

/// Checked readers and length-backfilling writers for PDU and item fields (PS3.8 §9.3.1).
///
/// All PDU fields are big-endian. Readers throw ``PDUError`` instead of returning `nil`, so codecs can
/// use plain `try` and never force-unwrap.
extension ByteBuffer {
    mutating func readPDUInteger<T: FixedWidthInteger>(_ what: @autoclosure () -> String, as: T.Type = T.self) throws
        -> T
    {
        guard let value = self.readInteger(endianness: .big, as: T.self) else {
            throw PDUError.truncated(what(), needed: MemoryLayout<T>.size, available: self.readableBytes)
        }
        return value
    }

    /// Skips `count` reserved bytes without validating them (PS3.8: reserved fields "shall not be tested").
    mutating func skipReserved(_ count: Int, in what: @autoclosure () -> String) throws {
        guard self.readableBytes >= count else {
            throw PDUError.truncated(what(), needed: count, available: self.readableBytes)
        }
        self.moveReaderIndex(forwardBy: count)
    }

    /// Reads a zero-copy slice of `length` bytes, throwing if it runs past the end.
    mutating func readPDUSlice(length: Int, _ what: @autoclosure () -> String) throws -> ByteBuffer {
        guard length <= self.readableBytes, let slice = self.readSlice(length: length) else {
            throw PDUError.lengthExceedsParent(what(), length: length, available: self.readableBytes)
        }
        return slice
    }

    /// Reads `length` bytes as ASCII/ISO 646 text, dropping trailing NUL padding that some peers add.
    ///
    /// - Throws: ``PDUError/invalidParameterValue(_:value:)`` for a byte above 0x7F: AE titles, UIDs and the
    ///   implementation version name are ISO 646 text (PS3.8 §9.3.2, PS3.7 §D.3.3.2), and a lossy decoding
    ///   would re-encode as other bytes than were received.
    mutating func readPDUString(length: Int, _ what: @autoclosure () -> String) throws -> String {
        var slice = try self.readPDUSlice(length: length, what())
        while slice.readableBytes > 0, slice.getInteger(at: slice.writerIndex - 1, as: UInt8.self) == 0 {
            slice.moveWriterIndex(to: slice.writerIndex - 1)
        }
        guard !slice.readableBytesView.contains(where: { $0 >= 0x80 }) else {
            throw PDUError.invalidParameterValue(what(), value: "with bytes outside ISO 646")
        }
        return slice.readString(length: slice.readableBytes) ?? ""
    }

    /// Reads a 16-byte AE title field and trims its leading and trailing spaces (PS3.8 §9.3.2).
    mutating func readAETitle(_ what: @autoclosure () -> String) throws -> String {
        let raw = try self.readPDUString(length: 16, what())
        return raw.trimmingSpaces()
    }

    /// Writes an AE title space-padded (or truncated) to exactly 16 bytes (PS3.8 §9.3.2).
    mutating func writeAETitle(_ title: String) {
        var bytes = Array(title.utf8.prefix(16))
        bytes.append(contentsOf: repeatElement(0x20, count: 16 - bytes.count))
        self.writeBytes(bytes)
    }

    /// Writes an item header (`type`, reserved byte, u16 length), runs `body`, then backfills the length.
    ///
    /// - Throws: ``PDUError/valueTooLong(_:length:maximum:)`` if the body exceeds 65535 bytes.
    mutating func writeItem(
        type: UInt8,
        reserved: UInt8 = 0,
        _ what: @autoclosure () -> String,
        body: (inout ByteBuffer) throws -> Void
    ) throws {
        self.writeInteger(type)
        self.writeInteger(reserved)
        let lengthIndex = self.writerIndex
        self.writeInteger(UInt16(0), endianness: .big)
        let start = self.writerIndex
        try body(&self)
        let length = self.writerIndex - start
        guard length <= Int(UInt16.max) else {
            throw PDUError.valueTooLong(what(), length: length, maximum: Int(UInt16.max))
        }
        self.setInteger(UInt16(length), at: lengthIndex, endianness: .big)
    }

    /// Writes an item whose whole body is ASCII text (UID items 0x10, 0x30, 0x40, 0x52, 0x55).
    mutating func writeTextItem(type: UInt8, _ text: String, _ what: @autoclosure () -> String) throws {
        try self.writeItem(type: type, what()) { $0.writeString(text) }
    }

    /// Writes a u16 length-prefixed string, as used inside sub-items 0x54, 0x56, 0x57, 0x58.
    mutating func writeU16PrefixedBytes(_ bytes: ByteBuffer, _ what: @autoclosure () -> String) throws {
        guard bytes.readableBytes <= Int(UInt16.max) else {
            throw PDUError.valueTooLong(what(), length: bytes.readableBytes, maximum: Int(UInt16.max))
        }
        self.writeInteger(UInt16(bytes.readableBytes), endianness: .big)
        self.writeImmutableBuffer(bytes)
    }

    /// Writes a u16 length-prefixed ASCII string.
    mutating func writeU16PrefixedString(_ text: String, _ what: @autoclosure () -> String) throws {
        let count = text.utf8.count
        guard count <= Int(UInt16.max) else {
            throw PDUError.valueTooLong(what(), length: count, maximum: Int(UInt16.max))
        }
        self.writeInteger(UInt16(count), endianness: .big)
        self.writeString(text)
    }

    /// Reads a u16 length and that many bytes as a zero-copy slice.
    mutating func readU16PrefixedSlice(_ what: @autoclosure () -> String) throws -> ByteBuffer {
        let length = try self.readPDUInteger(what(), as: UInt16.self)
        return try self.readPDUSlice(length: Int(length), what())
    }

    /// Reads a u16 length and that many bytes as text.
    mutating func readU16PrefixedString(_ what: @autoclosure () -> String) throws -> String {
        let length = try self.readPDUInteger(what(), as: UInt16.self)
        return try self.readPDUString(length: Int(length), what())
    }

    /// Reads an item header (type, reserved, u16 length) and returns the type and a slice of the item body.
    mutating func readItem(in parent: @autoclosure () -> String) throws -> (
        type: UInt8, reserved: UInt8, body: ByteBuffer
    ) {
        guard self.readableBytes >= 4 else {
            throw PDUError.truncated("item header in \(parent())", needed: 4, available: self.readableBytes)
        }
        let type = try self.readPDUInteger("item type", as: UInt8.self)
        let reserved = try self.readPDUInteger("item header", as: UInt8.self)
        let length = try self.readPDUInteger("item length", as: UInt16.self)
        let body = try self.readPDUSlice(length: Int(length), "item 0x\(String(type, radix: 16)) in \(parent())")
        return (type, reserved, body)
    }
}

extension String {
    /// The string without leading and trailing spaces (0x20), as AE titles are compared (PS3.5 §6.2).
    func trimmingSpaces() -> String {
        let scalars = self.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }),
            let last = scalars.lastIndex(where: { $0 != " " })
        else { return "" }
        return String(scalars[first...last])
    }
}
