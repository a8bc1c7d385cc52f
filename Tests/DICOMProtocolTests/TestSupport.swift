import NIOCore

/// Builds a ByteBuffer from a hex string; whitespace is ignored. Test-only.
func buffer(hex: String) -> ByteBuffer {
    let digits = hex.filter { !$0.isWhitespace }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16) ?? 0xEE)
        index = next
    }
    return ByteBuffer(bytes: bytes)
}

/// Hex rendering of a buffer's readable bytes, for readable failures.
func hex(_ buffer: ByteBuffer) -> String {
    buffer.readableBytesView.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// ByteBuffer from an ASCII string.
func ascii(_ text: String) -> ByteBuffer {
    ByteBuffer(string: text)
}

/// Real A-ASSOCIATE-RQ sent by DCMTK 3.6.7 `echoscu -aet ECHOSCU -aec ANY-SCP`
/// (shared/reference/dcmtk-outputs/96-dcmtk-echoscu-associate-rq-bytes.txt).
let dcmtkEchoAssociateRQ =
    "0100000000cd00010000414e592d5343502020202020202020204543484f5343552020202020202020200000000000000000"
    + "00000000000000000000000000000000000000000000000010000015312e322e3834302e31303030382e332e312e312e3120"
    + "00002e0100ff0030000011312e322e3834302e31303030382e312e3140000011312e322e3834302e31303030382e312e3250"
    + "00003a51000004000040005200001b312e322e3237362e302e373233303031302e332e302e332e362e375500000f4f464649"
    + "535f44434d544b5f333637"
