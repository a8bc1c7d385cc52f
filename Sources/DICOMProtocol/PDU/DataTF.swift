import NIOCore

/// The P-DATA-TF PDU, type 0x04 (PS3.8 §9.3.5): one or more PDV items.
public struct DataTF: PDUMessage {
    public static var pduType: PDUType { .dataTF }

    /// The presentation data values, in order.
    public var pdvs: [PDV]

    /// Creates a P-DATA-TF.
    public init(pdvs: [PDV]) {
        self.pdvs = pdvs
    }

    /// Creates a P-DATA-TF with a single PDV.
    public init(_ pdv: PDV) {
        self.pdvs = [pdv]
    }

    /// Decodes the PDV items; each fragment is a zero-copy slice of `buffer`.
    ///
    /// - Throws: ``PDUError`` if a PDV is malformed or there is none.
    public init(body buffer: inout ByteBuffer) throws {
        self.pdvs = []
        while buffer.readableBytes > 0 {
            self.pdvs.append(try PDV(from: &buffer))
        }
        guard !self.pdvs.isEmpty else {
            throw PDUError.missingItem("presentation data value item", in: "P-DATA-TF")
        }
    }

    public func encodeBody(into buffer: inout ByteBuffer) throws {
        for pdv in self.pdvs {
            try pdv.encode(into: &buffer)
        }
    }
}
