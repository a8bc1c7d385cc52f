import DICOMData
import FuzzSupport

// Input: one mode byte, then the bytes to read.
//   mode % 8 == 0   a Part 10 file (any transfer syntax its meta names, Deflated included)
//               1   a Part 10 file, header only (stop before Pixel Data, as a receiver sorting files)
//               2   a bare data set, Implicit VR Little Endian
//               3   a bare data set, Explicit VR Little Endian
//               4   a bare data set, Explicit VR Big Endian
//               5   a Deflated Explicit VR Little Endian data set: the bytes are the raw deflate stream,
//                   behind a minimal meta group naming that transfer syntax
//               6   a Part 10 file with a tiny inflate limit (4 KiB), so the limit itself is hit
//               7   a bare data set, Explicit VR Little Endian, read up to (0008,0000) only
//
// Invariants:
// - plain values are slices or byte-swapped copies of the input: their total never exceeds the input
//   size (or, deflated, the inflate limit);
// - an inflate never produces more than its limit;
// - a data set read in a writable transfer syntax writes out, reads back and writes out to the same
//   bytes (one round trip reaches the canonical form);
// - the renderings px-dump and px-find use (DICOM JSON, text dump) do not crash on whatever was read.

/// The inflate limit for the modes that do not test the limit itself: 64 times the largest input
/// libFuzzer is given (`-max_len`, 64 KiB in scripts/fuzz.sh), so a bomb is refused, not followed.
private let inflateLimit = 4 << 20
private let tinyInflateLimit = 4096

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDataSet(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let mode = input.first else { return 0 }
    let bytes = Array(input.dropFirst())

    switch mode % 8 {
    case 0: readFile(bytes, options: limited(.init(), inflateLimit), limit: inflateLimit)
    case 1: readFile(bytes, options: limited(.headerOnly, inflateLimit), limit: inflateLimit)
    case 2: readBare(bytes, .implicitVRLittleEndian)
    case 3: readBare(bytes, .explicitVRLittleEndian)
    case 4: readBare(bytes, .explicitVRBigEndian)
    case 5: readFile(deflatedFile(around: bytes), options: limited(.init(), inflateLimit), limit: inflateLimit)
    case 6: readFile(bytes, options: limited(.init(), tinyInflateLimit), limit: tinyInflateLimit)
    default: readBare(bytes, .explicitVRLittleEndian, stopBefore: Tag(0x0008, 0x0000))
    }
    return 0
}

private func limited(_ options: Part10File.ReadOptions, _ limit: Int) -> Part10File.ReadOptions {
    var options = options
    options.maximumInflatedSize = limit
    return options
}

private func readFile(_ bytes: [UInt8], options: Part10File.ReadOptions, limit: Int) {
    guard let file = try? Part10File(bytes: bytes, options: options) else { return }
    let bound = file.transferSyntax.isDeflated ? limit + bytes.count : bytes.count
    let total = valueBytes(file.meta) + valueBytes(file.dataSet)
    fuzzCheck(total <= bound, "\(total) value bytes from \(bytes.count) input bytes (bound \(bound))")
    render(file.dataSet)
    if file.transferSyntax.isWritable {
        checkRoundTrip(file.dataSet, file.transferSyntax)
    }
}

private func readBare(_ bytes: [UInt8], _ transferSyntax: TransferSyntax, stopBefore: Tag? = nil) {
    let options = DataSetReader.Options(stopBefore: stopBefore)
    guard let result = try? DataSetReader.read(bytes, transferSyntax: transferSyntax, options: options) else { return }
    fuzzCheck(result.endOffset <= bytes.count, "end offset \(result.endOffset) past \(bytes.count) bytes")
    let total = valueBytes(result.dataSet)
    fuzzCheck(total <= bytes.count, "\(total) value bytes from \(bytes.count) input bytes")
    render(result.dataSet)
    if transferSyntax.isWritable {
        checkRoundTrip(result.dataSet, transferSyntax)
    } else {
        // Big endian is read into little-endian memory; it must write as Explicit VR Little Endian.
        checkRoundTrip(result.dataSet, .explicitVRLittleEndian)
    }
}

/// `DICM`, a meta group with only (0002,0010) Deflated Explicit VR Little Endian, then `stream`.
private func deflatedFile(around stream: [UInt8]) -> [UInt8] {
    let uid = Array("1.2.840.10008.1.2.1.99".utf8)
    var bytes: [UInt8] = Array("DICM".utf8)
    bytes += [0x02, 0x00, 0x10, 0x00, UInt8(ascii: "U"), UInt8(ascii: "I"), UInt8(uid.count), 0x00]
    bytes += uid
    bytes += stream
    return bytes
}

/// The bytes held by plain values, fragments and offset tables, through every sequence.
private func valueBytes(_ dataSet: DataSet) -> Int {
    var total = 0
    for element in dataSet {
        switch element.value {
        case .bytes(let value): total += value.count
        case .sequence(let items): total += items.reduce(0) { $0 + valueBytes($1.dataSet) }
        case .fragments(let pixels): total += pixels.fragments.reduce(pixels.basicOffsetTable.count) { $0 + $1.count }
        }
    }
    return total
}

/// What px-dump and the JSON outputs do with a data set.
private func render(_ dataSet: DataSet) {
    _ = dataSet.dicomJSON().serialized()
    _ = dataSet.textDump()
    _ = dataSet.flatJSON()
}

/// Write, read back, write again: the two writes are the same bytes.
private func checkRoundTrip(_ dataSet: DataSet, _ transferSyntax: TransferSyntax) {
    let first: [UInt8]
    do {
        first = try DataSetWriter.encode(dataSet, transferSyntax: transferSyntax)
    } catch {
        fuzzCheck(false, "a data set read does not write in \(transferSyntax.uid): \(error)")
        return
    }
    let reread: DataSet
    do {
        reread = try DataSetReader.read(first, transferSyntax: transferSyntax).dataSet
    } catch {
        fuzzCheck(false, "a written data set does not read back in \(transferSyntax.uid): \(error)")
        return
    }
    let second = try? DataSetWriter.encode(reread, transferSyntax: transferSyntax)
    fuzzCheck(second == first, "write, read, write gives different bytes in \(transferSyntax.uid)")
}
